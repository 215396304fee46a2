package migrations

import (
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestLoadEmbedded(t *testing.T) {
	t.Parallel()
	for _, d := range []Dialect{Postgres, SQLite} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ms, err := Load(d)
			if err != nil {
				t.Fatalf("Load(%s): %v", d, err)
			}
			if len(ms) == 0 || ms[0].Version != 1 || ms[0].Name != "init" {
				t.Fatalf("Load(%s) = %+v, want first migration 0001_init", d, ms)
			}
		})
	}
}

func TestDialectsHaveSameVersions(t *testing.T) {
	t.Parallel()
	pg, err := Load(Postgres)
	if err != nil {
		t.Fatal(err)
	}
	lite, err := Load(SQLite)
	if err != nil {
		t.Fatal(err)
	}
	names := func(ms []Migration) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Name)
		}
		return out
	}
	if diff := cmp.Diff(names(pg), names(lite)); diff != "" {
		t.Errorf("postgres and sqlite migrations differ (-postgres +sqlite):\n%s", diff)
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	tests := []struct {
		name    string
		files   fstest.MapFS
		want    []Migration
		wantErr bool
	}{
		{
			name: "sorted",
			files: fstest.MapFS{
				"d/0002_two.up.sql":   file("UP2"),
				"d/0002_two.down.sql": file("DOWN2"),
				"d/0001_one.up.sql":   file("UP1"),
				"d/0001_one.down.sql": file("DOWN1"),
			},
			want: []Migration{
				{Version: 1, Name: "one", Up: "UP1", Down: "DOWN1"},
				{Version: 2, Name: "two", Up: "UP2", Down: "DOWN2"},
			},
		},
		{
			name:    "missing down",
			files:   fstest.MapFS{"d/0001_one.up.sql": file("UP1")},
			wantErr: true,
		},
		{
			name: "no version 1",
			files: fstest.MapFS{
				"d/0002_two.up.sql":   file("UP2"),
				"d/0002_two.down.sql": file("DOWN2"),
			},
			wantErr: true,
		},
		{
			name: "gap",
			files: fstest.MapFS{
				"d/0001_one.up.sql":     file("UP1"),
				"d/0001_one.down.sql":   file("DOWN1"),
				"d/0003_three.up.sql":   file("UP3"),
				"d/0003_three.down.sql": file("DOWN3"),
			},
			want: []Migration{{Version: 1, Name: "one", Up: "UP1", Down: "DOWN1"}, {Version: 3, Name: "three", Up: "UP3", Down: "DOWN3"}},
		},
		{
			name: "name mismatch",
			files: fstest.MapFS{
				"d/0001_one.up.sql":   file("UP1"),
				"d/0001_uno.down.sql": file("DOWN1"),
			},
			wantErr: true,
		},
		{
			name:    "bad name",
			files:   fstest.MapFS{"d/1_one.up.sql": file("UP1")},
			wantErr: true,
		},
		{
			name:    "no direction",
			files:   fstest.MapFS{"d/0001_one.sql": file("UP1")},
			wantErr: true,
		},
		{
			name:    "not sql",
			files:   fstest.MapFS{"d/README.md": file("x")},
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := load(tt.files, "d")
			if (err != nil) != tt.wantErr {
				t.Fatalf("load() error = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("load() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
