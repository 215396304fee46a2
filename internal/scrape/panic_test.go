package scrape

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/fetch"
)

// panicFetcher stands for a parser bug a hostile page finds: it panics
// the way an index out of range in one would.
type panicFetcher struct{}

func (panicFetcher) Do(context.Context, fetch.Request) (*fetch.Response, error) {
	var rows []int
	_ = rows[3] // index out of range
	return nil, nil
}

// A panic inside a scrape fails that scrape, and only it: search and
// monitors run scrapes on goroutines of their own, where an unrecovered
// panic ends the whole process (and this test binary with it).
func TestScrapePanicBecomesError(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	e := New(Config{Fetcher: panicFetcher{}, Log: slog.New(slog.NewJSONHandler(&lockedWriter{&mu, &logs}, nil))})
	var wg sync.WaitGroup
	errs := make([]error, 4)
	docs := make([]*Document, 4)
	for i := range errs {
		wg.Go(func() {
			docs[i], errs[i] = e.Scrape(context.Background(), Options{
				URL: "https://user:secret@example.com/page", Formats: []Format{{Type: FormatMarkdown}}, Timeout: time.Minute,
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		var pe *PanicError
		if !errors.As(err, &pe) || docs[i] != nil || !strings.Contains(err.Error(), "index out of range") {
			t.Fatalf("scrape %d: doc %v, err %v; want a *PanicError and no document", i, docs[i], err)
		}
	}
	mu.Lock()
	out := logs.String()
	mu.Unlock()
	if strings.Count(out, `"msg":"scrape panicked"`) != 4 || !strings.Contains(out, "panicFetcher") || strings.Contains(out, "secret") {
		t.Fatalf("want four 'scrape panicked' lines with the stack and no credentials, got:\n%.2000s", out)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
