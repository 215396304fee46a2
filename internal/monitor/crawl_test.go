package monitor_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/crawljob"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/monitor"
	"github.com/firegate/firegate/internal/queue"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/testenv"
)

// TestCrawlTarget checks a crawl target twice: the check starts a crawl
// job (the crawl runner's, on the same queue), waits for it without
// holding a worker, and compares its pages; a page no longer linked is
// reported removed, a newly linked one new.
func TestCrawlTarget(t *testing.T) {
	for _, kind := range []string{"postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			testCrawlTarget(t, kind)
		})
	}
}

func testCrawlTarget(t *testing.T, kind string) {
	ctx := t.Context()
	st := openStore(t, kind)
	log := testenv.Logger(t)
	fetcher := fetch.New(fetch.Options{AllowPrivate: true}, log)
	engine := scrape.New(scrape.Config{Fetcher: fetcher, Log: log})
	crawls := crawljob.NewRunner(crawljob.RunnerConfig{Jobs: st, Scraper: engine, Fetcher: fetcher,
		Mapper: crawl.NewMapper(fetcher, crawl.MapperOptions{}, log), TTL: time.Hour, Log: log})
	spy := &crawlSpy{Crawler: crawls}
	runner := monitor.NewRunner(monitor.RunnerConfig{Store: st, Scraper: engine, Crawler: spy, Jobs: st,
		CrawlPoll: 50 * time.Millisecond, Log: log,
		TeamConcurrency: func(context.Context, string) (int, error) { return 3, nil }})
	workers := river.NewWorkers()
	crawls.Register(workers)
	runner.Register(workers)
	q, err := queue.Open(ctx, st, workers, queue.Options{Workers: 4}, log)
	if err != nil {
		t.Fatal(err)
	}
	crawls.Bind(q)
	runner.Bind(q)
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = q.Stop(sctx)
	})
	team, _ := st.CreateTeam(ctx, "crawler")
	svc := monitor.NewService(st, q, nil)
	h := &harness{st: st, svc: svc, runner: runner, team: team}

	s := newSite(t)
	s.set("/", `<a href="/a">a</a> <a href="/b">b</a> <a href="/c">c</a>`)
	s.set("/a", "<p>alpha one</p>")
	s.set("/b", "<p>beta</p>")
	s.set("/c", "<p>gamma</p>")

	o := crawljob.JobOptions{Scrape: scrape.Options{Formats: []scrape.Format{{Type: scrape.FormatMarkdown}}, Timeout: 10 * time.Second},
		MaxConcurrency: 5, Rules: crawl.CrawlRules{DeduplicateSimilarURLs: true}, Sitemap: crawl.SitemapSkip}
	echo, _ := json.Marshal(map[string]any{"type": "crawl", "id": "site", "url": s.url("/")})
	target := monitor.Target{Type: monitor.TargetCrawl, ID: "site", URL: s.url("/"), Limit: 20, Crawl: &o, Scrape: o.Scrape, Echo: echo}
	sched, _ := monitor.ParseSchedule("", "daily", "UTC")
	mon, err := svc.Create(ctx, team.ID, monitor.Input{Name: "crawl", Schedule: sched, RetentionDays: 1,
		Config: monitor.Config{Targets: []monitor.Target{target}}})
	if err != nil {
		t.Fatal(err)
	}
	if mon.EstimatedCreditsPerMonth != 30*20 {
		t.Errorf("estimate %d, want 600 (limit 20, daily)", mon.EstimatedCreditsPerMonth)
	}
	first, err := svc.Run(ctx, team.ID, mon.ID)
	if err != nil {
		t.Fatal(err)
	}
	d1 := h.waitCheck(t, mon.ID, first.ID)
	if d1.Status != store.CheckCompleted || d1.Summary != (monitor.Summary{TotalPages: 4, New: 4}) {
		t.Fatalf("first check: %s %+v %s", d1.Status, d1.Summary, d1.TargetResults)
	}
	// The crawl takes the team's concurrency limit, and its own
	// maxConcurrency is capped by it, as the crawl route does.
	if team, maxc := spy.limits(); team != 3 || maxc != 3 {
		t.Errorf("crawl started with teamConcurrency %d, maxConcurrency %d; want 3, 3", team, maxc)
	}
	var tr []struct{ TargetID, Type, CrawlID string }
	if err := json.Unmarshal(d1.TargetResults, &tr); err != nil || len(tr) != 1 || tr[0].CrawlID == "" || tr[0].Type != "crawl" {
		t.Errorf("target results %s", d1.TargetResults)
	}

	s.set("/", `<a href="/a">a</a> <a href="/b">b</a> <a href="/d">d</a>`)
	s.set("/a", "<p>alpha two</p>")
	s.set("/d", "<p>delta</p>")
	second, err := svc.Run(ctx, team.ID, mon.ID)
	if err != nil {
		t.Fatal(err)
	}
	d2 := h.waitCheck(t, mon.ID, second.ID)
	if d2.Summary != (monitor.Summary{TotalPages: 5, Same: 1, Changed: 2, New: 1, Removed: 1}) {
		t.Errorf("second check: %s %+v", d2.Status, d2.Summary)
	}
	p := pagesByURL(d2)
	want := map[string]string{s.url("/"): "changed", s.url("/a"): "changed", s.url("/b"): "same", s.url("/c"): "removed", s.url("/d"): "new"}
	for u, st := range want {
		if p[u].Status != st {
			t.Errorf("%s: %s, want %s", u, p[u].Status, st)
		}
	}
	if c := p[s.url("/c")]; c.PreviousScrapeID == nil || c.CurrentScrapeID != nil {
		t.Errorf("removed page scrape ids: %+v", c)
	}
}

// crawlSpy records the options of the crawls a check starts.
type crawlSpy struct {
	monitor.Crawler
	mu         sync.Mutex
	team, maxc int
}

func (c *crawlSpy) StartCrawl(ctx context.Context, j store.Job, o crawljob.JobOptions) error {
	c.mu.Lock()
	c.team, c.maxc = o.TeamConcurrency, o.MaxConcurrency
	c.mu.Unlock()
	return c.Crawler.StartCrawl(ctx, j, o)
}

func (c *crawlSpy) limits() (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.team, c.maxc
}
