package testenv

import (
	"fmt"
	"strings"
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

// recordingTB is a testing.TB that keeps what is logged and the cleanups.
type recordingTB struct {
	testing.TB
	logs     []string
	cleanups []func()
}

func (r *recordingTB) Log(args ...any)  { r.logs = append(r.logs, fmt.Sprint(args...)) }
func (r *recordingTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

func TestLogger(t *testing.T) {
	t.Parallel()
	rec := &recordingTB{TB: t}
	log := Logger(rec)
	log.Debug("hello", "key", "value")
	if len(rec.logs) != 1 || !strings.Contains(rec.logs[0], "level=DEBUG") || !strings.Contains(rec.logs[0], "msg=hello key=value") ||
		strings.HasSuffix(rec.logs[0], "\n") {
		t.Fatalf("logged %q; want one debug line with the message and attributes", rec.logs)
	}
	// After the test ends (its cleanups ran) the logger writes nowhere:
	// a goroutine logging late must not call t.Log.
	for _, f := range rec.cleanups {
		f()
	}
	log.Info("late")
	if len(rec.logs) != 1 {
		t.Errorf("logged after cleanup: %q", rec.logs)
	}
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
