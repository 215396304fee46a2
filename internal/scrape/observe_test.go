package scrape

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/firegate/firegate/internal/cache"
	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/testenv"
)

// recorder is an Observer that keeps what it was told.
type recorder struct {
	mu      sync.Mutex
	scrapes []string // "engine/outcome"
	cache   []bool
}

func (r *recorder) ObserveScrape(engine, outcome string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d <= 0 {
		engine += "(no duration)"
	}
	r.scrapes = append(r.scrapes, engine+"/"+outcome)
}

func (r *recorder) ObserveCache(hit bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cache = append(r.cache, hit)
}

func TestObserver(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	rec := &recorder{}
	log := testenv.Logger(t)
	e := New(Config{Fetcher: fetch.New(fetch.Options{AllowPrivate: true}, log), Cache: cache.NewMemory(1 << 20), Metrics: rec, Log: log})
	ctx := context.Background()

	cached := defaults(s.URL+"/article", FormatMarkdown)
	cached.MaxAge, cached.StoreInCache = time.Hour, true
	for range 2 { // a miss, then a hit
		if _, err := e.Scrape(ctx, cached); err != nil {
			t.Fatal(err)
		}
	}
	_, pdfErr := e.Scrape(ctx, defaults(s.URL+"/doc.pdf", FormatMarkdown))
	if pdfErr == nil {
		t.Fatal("fake pdf parsed")
	}
	if _, err := e.Scrape(ctx, defaults("http://no-such-host.invalid/", FormatMarkdown)); err == nil {
		t.Fatal("unresolvable host scraped")
	}
	onlyCache := defaults(s.URL+"/text", FormatMarkdown)
	onlyCache.MinAge = new(time.Duration)
	if _, err := e.Scrape(ctx, onlyCache); !errors.Is(err, ErrNoCachedData) {
		t.Fatalf("minAge without an entry: %v", err)
	}
	unsupported := defaults(s.URL+"/article", FormatMarkdown)
	unsupported.Actions = []Action{{Type: "wait"}}
	if _, err := e.Scrape(ctx, unsupported); err == nil {
		t.Fatal("actions without a browser accepted")
	}

	// The rejected request (no browser for actions) is not a scrape.
	want := []string{"fetch/success", "cache/success", "pdf/" + Outcome(pdfErr), "fetch/dns", "cache/cache_miss"}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if diff := cmp.Diff(want, rec.scrapes); diff != "" {
		t.Errorf("scrapes (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff([]bool{false, true, false}, rec.cache); diff != "" {
		t.Errorf("cache reads (-want +got)\n%s", diff)
	}
}

func TestOutcome(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, "success"},
		{fmt.Errorf("%w after 3s", ErrTimeout), "timeout"},
		{context.DeadlineExceeded, "timeout"},
		{&errcode.Failure{Kind: ErrDNSResolution, Msg: "m", Cause: errors.New("lookup")}, "dns"},
		{&errcode.Failure{Kind: ErrSSL, Msg: "m", Cause: errors.New("x509")}, "tls"},
		{&errcode.Failure{Kind: ErrBlockedTarget, Msg: "m", Cause: errors.New("dial")}, "blocked"},
		{fmt.Errorf("%w: refused", ErrSite), "site"},
		{fmt.Errorf("%w: image/png", ErrUnsupportedFile), "unsupported"},
		{fmt.Errorf("%w: click", ErrAction), "action"},
		{ErrLockdownCacheMiss, "cache_miss"},
		{context.Canceled, "canceled"},
		{errors.New("boom"), "error"},
	} {
		if got := Outcome(tc.err); got != tc.want {
			t.Errorf("Outcome(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
