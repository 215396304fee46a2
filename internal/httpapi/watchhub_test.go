package httpapi

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"

	"github.com/firegate/firegate/internal/crawl/testsite"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/testenv"
)

// countingJobs counts the Job reads of the server.
type countingJobs struct {
	store.JobStore
	jobReads atomic.Int64
}

func (c *countingJobs) Job(ctx context.Context, id string) (store.Job, error) {
	c.jobReads.Add(1)
	return c.JobStore.Job(ctx, id)
}

func TestWatchersDefaultCap(t *testing.T) {
	t.Parallel()
	s := New(Deps{Scraper: &fakeScraper{}, Auth: fakeAuth{}, Log: slog.New(slog.DiscardHandler)})
	if DefaultMaxWatchers != 1000 || s.watchers.maxPerTeam != 1000 {
		t.Errorf("default watcher cap %d (const %d), want 1000", s.watchers.maxPerTeam, DefaultMaxWatchers)
	}
}

// TestWatchersCappedPerTeam opens watchers of one team up to a lowered cap
// over real WebSockets: the next is closed with 1013 and a reason naming
// the limit, another team is not counted against it, a closed watcher
// frees its place, and the admitted watchers still stream the whole crawl.
func TestWatchersCappedPerTeam(t *testing.T) {
	t.Parallel()
	g := newGatedSite(t, testsite.Options{Pages: 30})
	f := newJobsFixture(t, "sqlite", fxOptions{maxWatchers: 3})
	defer g.open()
	id := f.start(t, "/v2/crawl", `{"url":"`+g.url+`/","sitemap":"skip","limit":6}`)
	path := "/v2/crawl/" + id
	f.waitStatus(t, path, "the home page", func(m map[string]any) bool { return m["completed"] == float64(1) })

	var open []*wsWatch
	for range 3 {
		w := dialWatch(t, f.base, path, fxKeyOne)
		if m, _, ok := w.next(); !ok {
			t.Fatal("an admitted watcher was closed")
		} else {
			catchupOf(t, m)
		}
		open = append(open, w)
	}
	refused := func() websocket.CloseError {
		msgs, closed := dialWatch(t, f.base, path, fxKeyOne).rest()
		if len(msgs) != 0 {
			t.Errorf("refused watcher got %v", msgs)
		}
		return closed
	}
	if closed := refused(); closed.Code != websocket.StatusTryAgainLater || !strings.Contains(closed.Reason, "Too many watchers") || !strings.Contains(closed.Reason, "3") {
		t.Errorf("watcher over the cap: close %d %q, want 1013 naming the limit", closed.Code, closed.Reason)
	}
	// Another team has places of its own (and is then refused the job).
	if _, closed := dialWatch(t, f.base, path, fxKeyTwo).rest(); closed.Code != closeForbidden {
		t.Errorf("another team: close %d %q, want 3003", closed.Code, closed.Reason)
	}
	// Closing one frees a place.
	open[0].c.Close(websocket.StatusNormalClosure, "")
	open = open[1:]
	var again *wsWatch
	testenv.Eventually(t, time.Minute, func() bool {
		w := dialWatch(t, f.base, path, fxKeyOne)
		m, _, ok := w.next()
		if !ok {
			return false
		}
		catchupOf(t, m)
		again = w
		return true
	}, "still waiting for a freed watcher place")
	open = append(open, again)

	g.open()
	for i, w := range open {
		msgs, closed := w.rest()
		if closed.Code != websocket.StatusNormalClosure || len(msgs) == 0 || msgs[len(msgs)-1]["type"] != "done" {
			t.Fatalf("watcher %d: close %d, last of %d messages %v", i, closed.Code, len(msgs), msgs)
		}
		want := f.docURLs(t, id)
		got := append([]string{g.url + "/"}, documentsOf(t, msgs[:len(msgs)-1])...)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("watcher %d documents (-crawl +watched)\n%s", i, diff)
		}
	}
}

// TestWatchersShareOnePoller holds 20 watchers on one running crawl: the
// server keeps one feed of the job for all of them, and polls it.
func TestWatchersShareOnePoller(t *testing.T) {
	t.Parallel()
	g := newGatedSite(t, testsite.Options{Pages: 30})
	var counter *countingJobs
	f := newJobsFixture(t, "sqlite", fxOptions{wrapServerJobs: func(js store.JobStore) store.JobStore {
		counter = &countingJobs{JobStore: js}
		return counter
	}})
	defer g.open()
	id := f.start(t, "/v2/crawl", `{"url":"`+g.url+`/","sitemap":"skip","limit":4}`)
	path := "/v2/crawl/" + id
	f.waitStatus(t, path, "the home page", func(m map[string]any) bool { return m["completed"] == float64(1) })
	var ws []*wsWatch
	for range 20 {
		w := dialWatch(t, f.base, path, fxKeyOne)
		if m, _, ok := w.next(); !ok {
			t.Fatal("watcher closed")
		} else {
			catchupOf(t, m)
		}
		ws = append(ws, w)
	}
	// A watcher joins the feed after its catch-up message.
	hub := f.srv.watchers
	feeds, subs := 0, 0
	testenv.WaitFor(10*time.Second, func() bool {
		hub.mu.Lock()
		defer hub.mu.Unlock()
		feeds, subs = len(hub.feeds), 0
		for _, feed := range hub.feeds {
			subs += len(feed.subs)
		}
		return subs >= 20
	})
	if feeds != 1 || subs != 20 {
		t.Errorf("%d feeds with %d watchers in all, want one feed of the 20", feeds, subs)
	}
	before := counter.jobReads.Load()
	testenv.Eventually(t, 10*time.Second, func() bool { return counter.jobReads.Load() > before },
		"no job read: the watchers are not polled")
	g.open()
	for i, w := range ws {
		msgs, closed := w.rest()
		if closed.Code != websocket.StatusNormalClosure || len(msgs) == 0 || msgs[len(msgs)-1]["type"] != "done" {
			t.Fatalf("watcher %d: close %d, %d messages", i, closed.Code, len(msgs))
		}
		if n := len(documentsOf(t, msgs[:len(msgs)-1])); n != 3 {
			t.Errorf("watcher %d streamed %d documents, want 3", i, n)
		}
	}
}

// hubJobs is one running job without documents; it counts its reads.
type hubJobs struct {
	store.JobStore
	reads atomic.Int64
}

func (j *hubJobs) Job(ctx context.Context, id string) (store.Job, error) {
	j.reads.Add(1)
	return store.Job{ID: id, Status: store.JobScraping}, nil
}

func (j *hubJobs) Documents(ctx context.Context, id string, skip, limit int) ([][]byte, error) {
	return nil, nil
}

// TestWatchHubPollsOncePerInterval runs the hub on synctest's clock: 20
// watchers of one job cost one read of it per poll interval (a poller per
// watcher would read it 20 times), each watcher gets every poll, and the
// poller stops once the last watcher has left.
func TestWatchHubPollsOncePerInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		jobs := &hubJobs{}
		hub := newWatchHub(jobs, watchPoll, 0)
		var subs []*watchSub
		var leave []func()
		for range 20 {
			sub, done := hub.subscribe("job", 0)
			subs, leave = append(subs, sub), append(leave, done)
		}
		// Four poll intervals pass on the bubble's clock (no real wait).
		time.Sleep(4 * watchPoll)
		synctest.Wait()
		if n := jobs.reads.Load(); n != 4 {
			t.Errorf("%d job reads over 4 poll intervals with 20 watchers, want 4", n)
		}
		for i, sub := range subs {
			if n := len(sub.take()); n != 4 {
				t.Errorf("watcher %d got %d polls, want 4", i, n)
			}
		}
		for _, done := range leave {
			done()
		}
		// One more poll interval on the bubble's clock.
		time.Sleep(watchPoll)
		synctest.Wait()
		hub.mu.Lock()
		feeds := len(hub.feeds)
		hub.mu.Unlock()
		if feeds != 0 {
			t.Errorf("%d feeds after the last watcher left, want 0", feeds)
		}
	})
}

// TestThousandAndFirstWatcherRefused holds the default 1000 watchers of
// one team open on a running crawl and checks that the 1,001st is closed
// with 1013.
func TestThousandAndFirstWatcherRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 1001 WebSockets")
	}
	t.Parallel()
	g := newGatedSite(t, testsite.Options{Pages: 30})
	f := newJobsFixture(t, "sqlite", fxOptions{})
	defer g.open()
	id := f.start(t, "/v2/crawl", `{"url":"`+g.url+`/","sitemap":"skip","limit":3}`)
	path := "/v2/crawl/" + id
	f.waitStatus(t, path, "the home page", func(m map[string]any) bool { return m["completed"] == float64(1) })
	for i := range DefaultMaxWatchers {
		w := dialWatch(t, f.base, path, fxKeyOne)
		if m, closed, ok := w.next(); !ok || m["type"] != "catchup" {
			t.Fatalf("watcher %d: %v, close %d %q", i+1, m["type"], closed.Code, closed.Reason)
		}
	}
	msgs, closed := dialWatch(t, f.base, path, fxKeyOne).rest()
	if closed.Code != websocket.StatusTryAgainLater || len(msgs) != 0 || !strings.Contains(closed.Reason, "1000") {
		t.Errorf("watcher 1001: close %d %q after %d messages, want 1013 naming 1000", closed.Code, closed.Reason, len(msgs))
	}
}
