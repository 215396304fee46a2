package testenv

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

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

// recordingTB is a testing.TB that keeps what is logged, the errors and
// the cleanups.
type recordingTB struct {
	testing.TB
	logs     []string
	errors   []string
	cleanups []func()
}

func (r *recordingTB) Log(args ...any)  { r.logs = append(r.logs, fmt.Sprint(args...)) }
func (r *recordingTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

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

func TestLogBookCheckHidden(t *testing.T) {
	log, book := NewLogBook(t)
	const id = "0b4f8a52-6c1e-4d8e-9a51-3f2b7c9d0e11"
	log.Error("unknown error", "error_id", id, "err", InternalError("ledger"))
	if got := book.ErrorOf(id); !strings.Contains(got, "ledger: devtools ws://10.1.2.3:9222") {
		t.Errorf("ErrorOf = %q", got)
	}
	leaks := []string{"10.1.2.3", "store:"}
	good := "Search failed: An unexpected error occurred. Please contact support, error id " + id
	rec := &recordingTB{TB: t}
	if got := book.CheckHidden(rec, "good", good, "Search failed: ", leaks, "10.1.2.3:5432"); got != id || len(rec.errors) != 0 {
		t.Errorf("CheckHidden(good) = %q, errors %q", got, rec.errors)
	}
	for _, c := range []struct{ name, msg, prefix, logged, want string }{
		{"leak", good + " (store: down)", "", "10.1.2.3", `shows "store:"`},
		{"prefix", good, "Crawl failed: ", "10.1.2.3", "want it to start"},
		{"no id", "Search failed: store: dial tcp 10.1.2.3:5432", "", "10.1.2.3", "names no error id"},
		{"other id", strings.Replace(good, "0b4f", "1b4f", 1), "", "10.1.2.3", "logged with \"\""},
		{"logged without", good, "", "10.9.9.9", "want the full error"},
	} {
		rec := &recordingTB{TB: t}
		book.CheckHidden(rec, c.name, c.msg, c.prefix, leaks, c.logged)
		if !strings.Contains(strings.Join(rec.errors, "\n"), c.want) {
			t.Errorf("%s: errors %q, want one with %q", c.name, rec.errors, c.want)
		}
	}
	if got := InternalError("").Error(); got != "scrape: browser: devtools ws://10.1.2.3:9222/devtools/browser: store: dial tcp 10.1.2.3:5432: connect: connection refused" {
		t.Errorf("InternalError(\"\") = %q", got)
	}
}

// fatalTB records Fatalf and ends the goroutine it is called on.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestEventually(t *testing.T) {
	t.Parallel()
	n := 0
	Eventually(t, time.Second, func() bool { n++; return n == 5 }, "n reaches 5")
	if n != 5 {
		t.Errorf("cond called %d times, want 5", n)
	}
	start := time.Now()
	if WaitFor(30*time.Millisecond, func() bool { return false }) {
		t.Error("WaitFor of a false condition held")
	}
	if d := time.Since(start); d < 30*time.Millisecond || d > time.Second {
		t.Errorf("WaitFor of a false condition took %v, want about 30ms", d)
	}
	f := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Eventually(f, 10*time.Millisecond, func() bool { return false }, "the %s", "thing")
	}()
	<-done
	if !strings.Contains(f.msg, "the thing") {
		t.Errorf("failure message %q, want it to name the thing", f.msg)
	}
}
