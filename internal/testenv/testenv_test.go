package testenv

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "no password", in: "postgres://postgres@127.0.0.1:5432/test", want: "postgres://postgres@127.0.0.1:5432/test"},
		{name: "password", in: "postgres://u:secret@h/db", want: "postgres://u:xxxxx@h/db"},
		{name: "no userinfo", in: "redis://127.0.0.1:6379/0", want: "redis://127.0.0.1:6379/0"},
		{name: "not a url", in: "host=x password=y", want: "host=x password=y"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, redact(tt.in)); diff != "" {
				t.Errorf("redact(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestLogger(t *testing.T) {
	t.Parallel()
	log := Logger(t)
	log.Info("hello", "key", "value")
}

func TestPostgresURL(t *testing.T) {
	t.Parallel()
	if url := PostgresURL(t); url == "" {
		t.Error("PostgresURL returned empty URL")
	}
}

func TestRedisURL(t *testing.T) {
	t.Parallel()
	if url := RedisURL(t); url == "" {
		t.Error("RedisURL returned empty URL")
	}
}

func TestChromePath(t *testing.T) {
	t.Parallel()
	if p := ChromePath(t); p == "" {
		t.Error("ChromePath returned empty path")
	}
}
