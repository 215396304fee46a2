package testenv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// LogBook keeps the JSON records a logger writes, for tests of what was
// logged: above all, which error an error id shown to a client was logged
// with.
type LogBook struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// NewLogBook is a logger writing to the test's log (as Logger) and, as
// JSON, to the returned book.
func NewLogBook(tb testing.TB) (*slog.Logger, *LogBook) {
	b := &LogBook{}
	return slog.New(slog.NewMultiHandler(Logger(tb).Handler(), slog.NewJSONHandler(b, nil))), b
}

func (b *LogBook) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is every record so far, one JSON object a line.
func (b *LogBook) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// ErrorOf is the err attribute of the record logged with error_id id, ""
// when there is none.
func (b *LogBook) ErrorOf(id string) string {
	for line := range strings.SplitSeq(b.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["error_id"] == id {
			s, _ := rec["err"].(string)
			return s
		}
	}
	return ""
}

var errorIDRe = regexp.MustCompile(`error id ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$`)

// CheckHidden checks msg, what a client is shown for an internal error
// (where names it in failures): it starts with prefix, contains none of
// leaks, ends naming an error id, and that id was logged with an error
// containing logged. It returns the id, "" when msg names none.
func (b *LogBook) CheckHidden(tb testing.TB, where, msg, prefix string, leaks []string, logged string) string {
	tb.Helper()
	for _, leak := range leaks {
		if strings.Contains(msg, leak) {
			tb.Errorf("%s: %q shows %q", where, msg, leak)
		}
	}
	if !strings.HasPrefix(msg, prefix) {
		tb.Errorf("%s: %q, want it to start %q", where, msg, prefix)
	}
	m := errorIDRe.FindStringSubmatch(msg)
	if m == nil {
		tb.Errorf("%s: %q names no error id", where, msg)
		return ""
	}
	if got := b.ErrorOf(m[1]); !strings.Contains(got, logged) {
		tb.Errorf("%s: error id %s logged with %q; want the full error, with %q", where, m[1], got, logged)
	}
	return m[1]
}

// InternalError is an error worded as a failing browser or store words
// it, none of which a client may see: package prefixes (scrape:, browser:,
// store:), a DevTools address (10.1.2.3:9222), a database's
// (10.1.2.3:5432). what, unless "", names the part that failed.
func InternalError(what string) error {
	if what != "" {
		what += ": "
	}
	return fmt.Errorf("scrape: browser: %sdevtools ws://10.1.2.3:9222/devtools/browser: %w", what,
		errors.New("store: dial tcp 10.1.2.3:5432: connect: connection refused"))
}
