package crawljob_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/crawl/testsite"
	"github.com/firegate/firegate/internal/crawljob"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/queue"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/teststore"
	"github.com/firegate/firegate/internal/testenv"
	"github.com/firegate/firegate/internal/webhook"
)

// jobStore is what the harness needs of a store.
type jobStore interface {
	store.Store
	store.JobStore
}

// harness runs crawls on a real store and queue in this process.
type harness struct {
	st     jobStore
	team   store.Team
	runner *crawljob.Runner
	q      *queue.Queue
}

type harnessOptions struct {
	workers  int
	webhooks *webhook.Sender
	scraper  crawljob.Scraper // default: a plain HTTP engine
	// liveness, when set, makes the queue heartbeat and recover dead
	// workers' jobs with the given timing.
	liveness  queue.Liveness
	deadAfter time.Duration
	// deferStart leaves the queue stopped: the test starts h.q itself.
	deferStart bool
	// log is the runner's logger (default: the test's).
	log *slog.Logger
}

// stores are the databases every job test runs on.
var stores = []string{"postgres", "sqlite"}

func openStore(t testing.TB, kind string) jobStore {
	if kind == "sqlite" {
		return teststore.SQLite(t)
	}
	return teststore.Postgres(t)
}

func newHarness(t testing.TB, st jobStore, o harnessOptions) *harness {
	t.Helper()
	log := o.log
	if log == nil {
		log = testenv.Logger(t)
	}
	fetcher := fetch.New(fetch.Options{AllowPrivate: true}, log)
	if o.scraper == nil {
		o.scraper = scrape.New(scrape.Config{Fetcher: fetcher, Log: log})
	}
	if o.workers == 0 {
		o.workers = 16
	}
	runner := crawljob.NewRunner(crawljob.RunnerConfig{Jobs: st, Scraper: o.scraper,
		Mapper: crawl.NewMapper(fetcher, crawl.MapperOptions{}, log), Fetcher: fetcher, Webhooks: o.webhooks, Log: log})
	workers := river.NewWorkers()
	runner.Register(workers)
	opts := queue.Options{Workers: o.workers, Liveness: o.liveness, DeadAfter: o.deadAfter}
	if o.deadAfter > 0 {
		opts.HeartbeatEvery = o.deadAfter / 10
	}
	q, err := queue.Open(t.Context(), st, workers, opts, log)
	if err != nil {
		t.Fatal(err)
	}
	runner.Bind(q)
	if !o.deferStart {
		if err := q.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = q.Stop(ctx)
	})
	team, err := st.TeamByName(t.Context(), "crawl-test")
	if err != nil {
		team, err = st.CreateTeam(t.Context(), "crawl-test")
		if err != nil {
			t.Fatal(err)
		}
	}
	return &harness{st: st, team: team, runner: runner, q: q}
}

// defaultOptions are the API defaults of a crawl.
func defaultOptions() crawljob.JobOptions {
	return crawljob.JobOptions{
		Scrape: scrape.Options{Formats: []scrape.Format{{Type: scrape.FormatMarkdown}}, OnlyMainContent: true,
			Timeout: 30 * time.Second, Parsers: []scrape.Parser{{Type: "pdf", Mode: "auto"}}},
		Rules: crawl.CrawlRules{DeduplicateSimilarURLs: true},
	}
}

// start begins a crawl of start with o and limit.
func (h *harness) start(t testing.TB, start string, o crawljob.JobOptions, limit int) string {
	t.Helper()
	id := crawljob.NewJobID()
	err := h.runner.StartCrawl(t.Context(), store.Job{ID: id, TeamID: h.team.ID, URL: start, Limit: limit}, o)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// wait polls the job until it leaves scraping.
func (h *harness) wait(t testing.TB, id string, timeout time.Duration) store.Job {
	t.Helper()
	var j store.Job
	done := testenv.WaitFor(testenv.Patient(timeout), func() bool {
		var err error
		if j, err = h.st.Job(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		return j.Status != store.JobScraping
	})
	if !done {
		t.Fatalf("job still scraping after %v: %d/%d done", testenv.Patient(timeout), j.Completed, j.Total)
	}
	return j
}

// docURLs are the source URLs of the job's documents.
func (h *harness) docURLs(t testing.TB, id string) []string {
	t.Helper()
	docs, err := h.st.Documents(t.Context(), id, 0, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range docs {
		var doc struct {
			Metadata struct {
				SourceURL string `json:"sourceURL"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(d, &doc); err != nil {
			t.Fatal(err)
		}
		out = append(out, doc.Metadata.SourceURL)
	}
	return out
}

// identities maps URLs onto the site's Identity terms, sorted, and fails on
// duplicates.
func identities(t *testing.T, site *testsite.Site, sp testsite.Spec, urls []string) []string {
	t.Helper()
	out := make([]string, 0, len(urls))
	seen := map[string]bool{}
	for _, u := range urls {
		id := site.Identity(sp, u)
		if seen[id] {
			t.Errorf("%s (%s) scraped twice", id, u)
		}
		seen[id] = true
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func intp(n int) *int { return &n }

func TestCrawlFindsExactlyTheExpectedPages(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 120, SlowDelay: 50 * time.Millisecond})
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)

	cases := []struct {
		name  string
		spec  testsite.Spec
		apply func(o *crawljob.JobOptions)
	}{
		{name: "defaults", spec: testsite.Spec{}},
		{name: "sitemap skip", spec: testsite.Spec{Sitemap: "skip"},
			apply: func(o *crawljob.JobOptions) { o.Sitemap = crawl.SitemapSkip }},
		{name: "sitemap only", spec: testsite.Spec{Sitemap: "only"},
			apply: func(o *crawljob.JobOptions) { o.Sitemap = crawl.SitemapOnly }},
		{name: "ignore robots", spec: testsite.Spec{IgnoreRobotsTxt: true},
			apply: func(o *crawljob.JobOptions) { o.IgnoreRobots = true }},
		{name: "ignore query", spec: testsite.Spec{IgnoreQueryParameters: true},
			apply: func(o *crawljob.JobOptions) { o.Rules.IgnoreQueryParameters = true }},
		{name: "depth 1 no sitemap", spec: testsite.Spec{MaxDiscoveryDepth: intp(1), Sitemap: "skip"},
			apply: func(o *crawljob.JobOptions) { o.Rules.MaxDiscoveryDepth = intp(1); o.Sitemap = crawl.SitemapSkip }},
		{name: "under docs", spec: testsite.Spec{Start: "/docs/", Filter: testsite.Under("/docs/")}},
		{name: "exclude blog", spec: testsite.Spec{Sitemap: "skip", Filter: func(pq string) bool {
			return !slices.Contains([]string{"/blog", "/blog/"}, pq) && !hasPrefix(pq, "/blog/")
		}}, apply: func(o *crawljob.JobOptions) {
			o.Sitemap = crawl.SitemapSkip
			o.Rules.ExcludePaths = []string{"^/blog(/|$)"}
		}},
	}
	for _, kind := range stores {
		t.Run(kind, func(t *testing.T) {
			h := newHarness(t, openStore(t, kind), harnessOptions{})
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					o := defaultOptions()
					if c.apply != nil {
						c.apply(&o)
					}
					start := srv.URL + c.spec.Start
					if c.spec.Start == "" {
						start = srv.URL + "/"
					}
					id := h.start(t, start, o, 10000)
					j := h.wait(t, id, 60*time.Second)
					if j.Status != store.JobCompleted {
						t.Fatalf("status %s (%s)", j.Status, j.Error)
					}
					want := site.Expect(c.spec)
					got := identities(t, site, c.spec, h.docURLs(t, id))
					if !slices.Equal(got, want.Pages) {
						t.Errorf("pages differ:\n missing %v\n extra   %v", diff(want.Pages, got), diff(got, want.Pages))
					}
					errs, err := h.st.JobErrors(t.Context(), id)
					if err != nil {
						t.Fatal(err)
					}
					var failed []string
					for _, e := range errs {
						failed = append(failed, site.Identity(c.spec, e.URL))
					}
					sort.Strings(failed)
					if !slices.Equal(failed, want.Failed) {
						t.Errorf("failed = %v, want %v", failed, want.Failed)
					}
					blocked, err := h.st.RobotsBlocked(t.Context(), id)
					if err != nil {
						t.Fatal(err)
					}
					if got := identities(t, site, c.spec, blocked); !slices.Equal(got, want.RobotsBlocked) {
						t.Errorf("robots blocked = %v, want %v", got, want.RobotsBlocked)
					}
					if j.Total != len(want.Pages)+len(want.Failed) || j.Completed != j.Total || j.Documents != len(want.Pages) {
						t.Errorf("counters total %d completed %d documents %d; want %d pages + %d failed",
							j.Total, j.Completed, j.Documents, len(want.Pages), len(want.Failed))
					}
				})
			}
		})
	}
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// diff lists the items of a not in b.
func diff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func TestCrawlLimitIsExact(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 200})
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	for _, kind := range stores {
		t.Run(kind, func(t *testing.T) {
			h := newHarness(t, openStore(t, kind), harnessOptions{})
			o := defaultOptions()
			o.Sitemap = crawl.SitemapSkip
			id := h.start(t, srv.URL+"/", o, 25)
			j := h.wait(t, id, 60*time.Second)
			docs := h.docURLs(t, id)
			errs, _ := h.st.JobErrors(t.Context(), id)
			if j.Total != 25 || len(docs)+len(errs) != 25 {
				t.Errorf("total %d, %d documents + %d errors; want exactly 25", j.Total, len(docs), len(errs))
			}
			identities(t, site, testsite.Spec{}, docs)
		})
	}
}

func TestCrawlCancelStopsPromptly(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 300, LinkDelay: 100 * time.Millisecond})
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	for _, kind := range stores {
		t.Run(kind, func(t *testing.T) {
			h := newHarness(t, openStore(t, kind), harnessOptions{workers: 4})
			o := defaultOptions()
			id := h.start(t, srv.URL+"/", o, 10000)
			testenv.Eventually(t, 30*time.Second, func() bool {
				j, err := h.st.Job(t.Context(), id)
				if err != nil {
					t.Fatal(err)
				}
				return j.Documents >= 5
			}, "the crawl stored no 5 documents")
			if err := h.runner.Cancel(t.Context(), h.team.ID, id); err != nil {
				t.Fatal(err)
			}
			if err := h.runner.Cancel(t.Context(), "someone-else", id); err == nil {
				t.Error("another team cancelled the crawl")
			}
			hits := site.TotalHits()
			// The cancelled crawl's queued pages are taken and dropped
			// without a fetch: the queue drains.
			depth := -1
			if !testenv.WaitFor(testenv.Patient(30*time.Second), func() bool {
				var err error
				if depth, err = h.q.Depth(t.Context()); err != nil {
					t.Fatal(err)
				}
				return depth == 0
			}) {
				t.Fatalf("%d jobs still queued %v after the cancel", depth, testenv.Patient(30*time.Second))
			}
			// Stopping the queue waits for the pages in flight; only those
			// (one a worker) may have reached the site after the cancel.
			stopCtx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			if err := h.q.Stop(stopCtx); err != nil {
				t.Fatal(err)
			}
			if after := site.TotalHits(); after-hits > 4 {
				t.Errorf("site got %d requests after the cancel; want at most the 4 in flight", after-hits)
			}
			j, _ := h.st.Job(t.Context(), id)
			if j.Status != store.JobCancelled {
				t.Errorf("status %s, want cancelled", j.Status)
			}
			if j.Documents >= 250 {
				t.Errorf("%d documents: the cancel did not stop the crawl", j.Documents)
			}
		})
	}
}

// recorder receives webhooks.
type recorder struct {
	mu      sync.Mutex
	events  []map[string]any
	sigs    []bool
	secret  string
	arrived chan struct{} // closed (and dropped) when an event arrives
}

// until waits, woken by each event that arrives, until cond holds over the
// events so far, and returns them; after timeout (Patient's) it returns
// what came, for the caller to judge.
func (rc *recorder) until(timeout time.Duration, cond func(evs []map[string]any) bool) []map[string]any {
	expired := time.After(testenv.Patient(timeout))
	for {
		rc.mu.Lock()
		evs := slices.Clone(rc.events)
		if rc.arrived == nil {
			rc.arrived = make(chan struct{})
		}
		arrived := rc.arrived
		rc.mu.Unlock()
		if cond(evs) {
			return evs
		}
		select {
		case <-arrived:
		case <-expired:
			return evs
		}
	}
}

// count is a condition of until: at least n events.
func count(n int) func([]map[string]any) bool {
	return func(evs []map[string]any) bool { return len(evs) >= n }
}

// typed is a condition of until: an event of type typ.
func typed(typ string) func([]map[string]any) bool {
	return func(evs []map[string]any) bool {
		return slices.ContainsFunc(evs, func(ev map[string]any) bool { return ev["type"] == typ })
	}
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body []byte
	buf := make([]byte, 1<<20)
	for {
		n, err := r.Body.Read(buf)
		body = append(body, buf[:n]...)
		if err != nil {
			break
		}
	}
	var ev map[string]any
	_ = json.Unmarshal(body, &ev)
	rc.mu.Lock()
	rc.events = append(rc.events, ev)
	rc.sigs = append(rc.sigs, webhook.Verify(rc.secret, body, r.Header.Get(webhook.SignatureHeader)))
	if rc.arrived != nil {
		close(rc.arrived)
		rc.arrived = nil
	}
	rc.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func TestBatchWebhooksArriveSignedInOrder(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 40})
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	rec := &recorder{secret: "s3cret"}
	hook := httptest.NewServer(rec)
	t.Cleanup(hook.Close)
	for _, kind := range stores {
		t.Run(kind, func(t *testing.T) {
			rec.mu.Lock()
			rec.events, rec.sigs = nil, nil
			rec.mu.Unlock()
			sender := webhook.NewSender(webhook.Options{Secret: rec.secret, AllowPrivate: true}, testenv.Logger(t))
			h := newHarness(t, openStore(t, kind), harnessOptions{webhooks: sender})
			o := defaultOptions()
			o.Webhook = &webhook.Spec{URL: hook.URL, Metadata: map[string]any{"run": "t1"}}
			urls := []string{srv.URL + "/about", srv.URL + "/blog/post-1", srv.URL + testsite.PathLoopA, srv.URL + "/docs/"}
			id := crawljob.NewJobID()
			if err := h.runner.StartBatch(t.Context(), store.Job{ID: id, TeamID: h.team.ID}, o, urls); err != nil {
				t.Fatal(err)
			}
			j := h.wait(t, id, 30*time.Second)
			if j.Status != store.JobCompleted || j.Documents != 3 || j.Total != 4 {
				t.Fatalf("job %+v", j)
			}
			rec.until(15*time.Second, count(6))
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.events) != 6 {
				t.Fatalf("%d webhook events, want 6 (started, 4 pages, completed): %v", len(rec.events), rec.events)
			}
			types := map[string]int{}
			for i, ev := range rec.events {
				types[ev["type"].(string)]++
				if !rec.sigs[i] {
					t.Errorf("event %d: bad signature", i)
				}
				if ev["id"] != id {
					t.Errorf("event %d: id %v", i, ev["id"])
				}
				if md, _ := ev["metadata"].(map[string]any); md["run"] != "t1" {
					t.Errorf("event %d: metadata %v", i, ev["metadata"])
				}
			}
			if rec.events[0]["type"] != "batch_scrape.started" || rec.events[5]["type"] != "batch_scrape.completed" {
				t.Errorf("order: first %v, last %v", rec.events[0]["type"], rec.events[5]["type"])
			}
			if types["batch_scrape.page"] != 4 {
				t.Errorf("page events %d, want 4", types["batch_scrape.page"])
			}
			failedPages := 0
			for _, ev := range rec.events {
				if ev["type"] == "batch_scrape.page" && ev["success"] == false {
					failedPages++
				}
			}
			if failedPages != 1 {
				t.Errorf("failed page events %d, want 1 (the redirect loop)", failedPages)
			}
		})
	}
}

// politeSite serves robots.txt with a Crawl-delay and six linked pages,
// recording when each page request arrives and how many run at once.
type politeSite struct {
	mu       sync.Mutex
	arrivals []time.Time
	inFlight int
	maxSeen  int
}

func (p *politeSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		w.Write([]byte("User-agent: *\nCrawl-delay: 0.2\n"))
		return
	}
	if r.URL.Path != "/" && !hasPrefix(r.URL.Path, "/p") {
		http.NotFound(w, r)
		return
	}
	p.mu.Lock()
	p.arrivals = append(p.arrivals, time.Now())
	p.inFlight++
	p.maxSeen = max(p.maxSeen, p.inFlight)
	p.mu.Unlock()
	// A page takes 10 ms, so that requests sent at once would overlap
	// here (maxSeen); the spacing of arrivals, a duration (Crawl-delay),
	// is what the test checks.
	time.Sleep(10 * time.Millisecond)
	p.mu.Lock()
	p.inFlight--
	p.mu.Unlock()
	w.Header().Set("Content-Type", "text/html")
	w.Write([]byte(`<html><body><h1>Page</h1><p>Some words for the page body here.</p>
<a href="/p1">1</a><a href="/p2">2</a><a href="/p3">3</a><a href="/p4">4</a><a href="/p5">5</a></body></html>`))
}

func TestCrawlPoliteness(t *testing.T) {
	h := newHarness(t, openStore(t, "sqlite"), harnessOptions{})
	t.Run("robots crawl-delay", func(t *testing.T) {
		ps := &politeSite{}
		srv := httptest.NewServer(ps)
		t.Cleanup(srv.Close)
		o := defaultOptions()
		o.Sitemap = crawl.SitemapSkip
		j := h.wait(t, h.start(t, srv.URL+"/", o, 100), 30*time.Second)
		if j.Documents != 6 {
			t.Fatalf("%d documents, want 6", j.Documents)
		}
		ps.mu.Lock()
		defer ps.mu.Unlock()
		if ps.maxSeen != 1 {
			t.Errorf("%d requests at once under a Crawl-delay", ps.maxSeen)
		}
		for i := 1; i < len(ps.arrivals); i++ {
			if gap := ps.arrivals[i].Sub(ps.arrivals[i-1]); gap < 190*time.Millisecond {
				t.Errorf("request %d came %v after the previous one; Crawl-delay is 200ms", i, gap)
			}
		}
	})
	t.Run("maxConcurrency", func(t *testing.T) {
		site := testsite.New(testsite.Options{Pages: 60, LinkDelay: 30 * time.Millisecond})
		srv := httptest.NewServer(site)
		t.Cleanup(srv.Close)
		o := defaultOptions()
		o.Sitemap = crawl.SitemapSkip
		o.MaxConcurrency = 2
		site.ResetStats()
		j := h.wait(t, h.start(t, srv.URL+"/", o, 40), 60*time.Second)
		if j.Total != 40 {
			t.Fatalf("total %d", j.Total)
		}
		if n := site.MaxInFlight(); n > 2 || n < 1 {
			t.Errorf("%d pages at once, maxConcurrency 2", n)
		}
	})
}

func TestCrawlExternalLinksOneHop(t *testing.T) {
	other := testsite.New(testsite.Options{Pages: 30})
	otherSrv := httptest.NewServer(other)
	t.Cleanup(otherSrv.Close)
	site := testsite.New(testsite.Options{Pages: 60, External: otherSrv.URL})
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	h := newHarness(t, openStore(t, "postgres"), harnessOptions{})
	o := defaultOptions()
	o.Sitemap = crawl.SitemapSkip
	o.Rules.AllowExternalLinks = true
	j := h.wait(t, h.start(t, srv.URL+"/", o, 10000), 60*time.Second)
	if j.Status != store.JobCompleted {
		t.Fatalf("status %s", j.Status)
	}
	spec := testsite.Spec{Sitemap: "skip", AllowExternalLinks: true}
	want := site.Expect(spec)
	var internal, external []string
	for _, u := range h.docURLs(t, j.ID) {
		if hasPrefix(u, otherSrv.URL) {
			external = append(external, u)
		} else {
			internal = append(internal, u)
		}
	}
	sort.Strings(external)
	if !slices.Equal(external, want.External) {
		t.Errorf("external pages %v, want %v (one hop, no bare home page)", external, want.External)
	}
	if got := identities(t, site, spec, internal); !slices.Equal(got, want.Pages) {
		t.Errorf("internal pages differ: missing %v extra %v", diff(want.Pages, got), diff(got, want.Pages))
	}
	if other.Hits("/") != 0 {
		t.Errorf("the external site's bare home page was fetched")
	}
}

func TestReconcileQueuesALostKickoff(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 40})
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	h := newHarness(t, openStore(t, "postgres"), harnessOptions{})
	o := defaultOptions()
	o.Sitemap = crawl.SitemapSkip
	opts, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	// A crawl stored three minutes ago whose kickoff never reached the
	// queue (its process died in between).
	id := crawljob.NewJobID()
	created := time.Now().Add(-3 * time.Minute).UTC()
	_, err = h.st.CreateJob(t.Context(), store.Job{ID: id, TeamID: h.team.ID, Kind: store.JobCrawl, URL: srv.URL + "/",
		Limit: 10, Options: opts, CreatedAt: created, ExpiresAt: created.Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.runner.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	j := h.wait(t, id, 30*time.Second)
	if j.Status != store.JobCompleted || j.Total != 10 {
		t.Errorf("after reconcile: status %s, total %d", j.Status, j.Total)
	}
}
