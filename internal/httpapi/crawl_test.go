package httpapi

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/firegate/firegate/internal/auth"
	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/crawl/testsite"
	"github.com/firegate/firegate/internal/crawljob"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/queue"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/teststore"
	"github.com/firegate/firegate/internal/testenv"
	"github.com/firegate/firegate/internal/threat"
)

// This file tests the crawl routes over real HTTP against real components:
// a store (Postgres or SQLite), the River queue, the crawl Runner and the
// scrape engine with the plain HTTP fetcher, crawling generated sites
// served by httptest. It also holds the fixture batch_test.go and
// watch_test.go share.

// Keys of the teams of the job fixture.
const (
	fxKeyOne = "fc-fixture-one" // a plain team
	fxKeyTwo = "fc-fixture-two" // another plain team
	fxKeyZDR = "fc-fixture-zdr" // a team allowed zero data retention
)

// fxStores are the stores the cheap job tests run on.
var fxStores = []string{"postgres", "sqlite"}

// isoMillis is the time format of the job routes (createdAt, expiresAt, ...).
const isoMillis = "2006-01-02T15:04:05.000Z"

// fxStore is what the fixture needs of a store.
type fxStore interface {
	store.Store
	store.JobStore
}

// fxAuth maps the fixture's keys to its teams.
type fxAuth map[string]auth.Team

func (a fxAuth) Authenticate(_ context.Context, key string) (auth.Team, error) {
	if t, ok := a[key]; ok {
		return t, nil
	}
	return auth.Team{}, auth.ErrInvalidKey
}

// jobsFixture is a Server with real jobs behind a real HTTP listener.
type jobsFixture struct {
	srv    *Server
	base   string // the listener's URL
	st     fxStore
	runner *crawljob.Runner
	teams  fxAuth
}

// fxOptions tune newJobsFixture.
type fxOptions struct {
	publicURL string // Deps.PublicURL
	// wrapJobs, when set, wraps the store the Runner uses (the Server
	// reads the store itself).
	wrapJobs func(store.JobStore) store.JobStore
	// wrapServerJobs, when set, wraps the store the Server reads jobs from.
	wrapServerJobs func(store.JobStore) store.JobStore
	maxWatchers    int // Deps.MaxWatchers
	authFailures   int // Deps.AuthFailureLimit
	// threat is the server's and the engine's threat blocklist.
	threat *threat.Checker
	// changeTracking gives the engine the store's previous scrapes and
	// the runner its crawl memory.
	changeTracking bool
	// wrapScraper, when set, wraps the scraper the Runner uses.
	wrapScraper func(crawljob.Scraper) crawljob.Scraper
}

// newJobsFixture builds the fixture on a fresh store of kind ("postgres" or
// "sqlite"); everything stops when the test ends.
func newJobsFixture(t *testing.T, kind string, o fxOptions) *jobsFixture {
	t.Helper()
	var st fxStore
	if kind == "sqlite" {
		st = teststore.SQLite(t)
	} else {
		st = teststore.Postgres(t)
	}
	log := testenv.Logger(t)
	fetcher := fetch.New(fetch.Options{AllowPrivate: true}, log)
	ec := scrape.Config{Fetcher: fetcher, Threat: o.threat, Log: log}
	if o.changeTracking {
		ec.Changes = changeStore{st}
	}
	engine := scrape.New(ec)
	var jobs store.JobStore = st
	if o.wrapJobs != nil {
		jobs = o.wrapJobs(st)
	}
	var jobScraper crawljob.Scraper = engine
	if o.wrapScraper != nil {
		jobScraper = o.wrapScraper(engine)
	}
	rc := crawljob.RunnerConfig{Jobs: jobs, Scraper: jobScraper, Fetcher: fetcher, Threat: o.threat,
		Mapper: crawl.NewMapper(fetcher, crawl.MapperOptions{}, log), Log: log}
	if o.changeTracking {
		rc.Memory = st.(crawljob.Memory)
	}
	runner := crawljob.NewRunner(rc)
	startQueue(t, st, 8, log, runner.Register, func(q *queue.Queue) { runner.Bind(q) })
	teams := fxAuth{}
	for key, name := range map[string]string{fxKeyOne: "one", fxKeyTwo: "two", fxKeyZDR: "zdr"} {
		team, err := st.CreateTeam(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		teams[key] = auth.Team{ID: team.ID, Name: name, Limits: store.TeamLimits{ZeroDataRetention: key == fxKeyZDR}}
	}
	var serverJobs store.JobStore = st
	if o.wrapServerJobs != nil {
		serverJobs = o.wrapServerJobs(st)
	}
	s := New(Deps{Scraper: engine, Auth: teams, Jobs: runner, JobStore: serverJobs, PublicURL: o.publicURL,
		MaxWatchers: o.maxWatchers, AuthFailureLimit: o.authFailures, Threat: o.threat, Log: log})
	s.SetReady(true)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &jobsFixture{srv: s, base: srv.URL, st: st, runner: runner, teams: teams}
}

// send makes a request with key as the bearer token (none when empty) and
// header name/value pairs, and returns the status and the decoded JSON
// object. path may be absolute (a next URL).
func (f *jobsFixture) send(t *testing.T, method, path, key, body string, header ...string) (int, map[string]any) {
	t.Helper()
	u := path
	if !strings.HasPrefix(path, "http") {
		u = f.base + path
	}
	req, err := http.NewRequestWithContext(t.Context(), method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s %s: %d, body not a JSON object: %q", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, m
}

// start posts a job for team one and returns its id, checking the start
// response: exactly success, id (a UUIDv7) and url.
func (f *jobsFixture) start(t *testing.T, path, body string) string {
	t.Helper()
	return f.startAs(t, fxKeyOne, path, body)
}

func (f *jobsFixture) startAs(t *testing.T, key, path, body string) string {
	t.Helper()
	code, m := f.send(t, http.MethodPost, path, key, body)
	if code != http.StatusOK {
		t.Fatalf("POST %s %s: %d %v", path, body, code, m)
	}
	id, _ := m["id"].(string)
	if u, err := uuid.Parse(id); err != nil || u.Version() != 7 {
		t.Errorf("id %q is not a UUIDv7", id)
	}
	want := map[string]any{"success": true, "id": id, "url": f.base + path + "/" + id}
	if strings.HasSuffix(path, "/batch/scrape") {
		if inv, ok := m["invalidURLs"]; ok {
			want["invalidURLs"] = inv // checked by the batch tests
		}
	}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("POST %s response (-want +got)\n%s", path, diff)
	}
	return id
}

// status reads a job's status, which must answer 200.
func (f *jobsFixture) status(t *testing.T, path, key string) map[string]any {
	t.Helper()
	code, m := f.send(t, http.MethodGet, path, key, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %v", path, code, m)
	}
	return m
}

// waitStatus polls a job's status (as team one) until cond holds, for at
// most a minute, and returns that status.
func (f *jobsFixture) waitStatus(t *testing.T, path, what string, cond func(map[string]any) bool) map[string]any {
	t.Helper()
	var m map[string]any
	testenv.Eventually(t, time.Minute, func() bool {
		m = f.status(t, path, fxKeyOne)
		return cond(m)
	}, "still waiting for %s", what)
	return m
}

// waitDone waits until the job at path left scraping.
func (f *jobsFixture) waitDone(t *testing.T, path string) map[string]any {
	t.Helper()
	return f.waitStatus(t, path, path+" to finish", func(m map[string]any) bool { return m["status"] != "scraping" })
}

// activePageJobs counts the queue's page jobs not yet finished (waiting,
// snoozed or running), reading River's table in the store's database.
func (f *jobsFixture) activePageJobs(t *testing.T) int {
	t.Helper()
	const q = `SELECT count(*) FROM river_job WHERE kind = 'page'
		AND state IN ('available', 'scheduled', 'retryable', 'running', 'pending')`
	var n int
	var err error
	switch s := f.st.(type) {
	case interface{ Pool() *pgxpool.Pool }:
		err = s.Pool().QueryRow(t.Context(), q).Scan(&n)
	case interface{ WriteDB() *sql.DB }:
		err = s.WriteDB().QueryRowContext(t.Context(), q).Scan(&n)
	default:
		t.Fatalf("no database behind %T", f.st)
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// docURLs are the sourceURLs of a job's documents in the store, in finish
// order.
func (f *jobsFixture) docURLs(t *testing.T, id string) []string {
	t.Helper()
	docs, err := f.st.Documents(t.Context(), id, 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(docs))
	for i, d := range docs {
		var doc struct {
			Metadata struct {
				SourceURL string `json:"sourceURL"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(d, &doc); err != nil {
			t.Fatal(err)
		}
		out[i] = doc.Metadata.SourceURL
	}
	return out
}

// waitFor polls cond every 20ms for at most a minute.

// serveSite serves a generated site (its /slow page without delay unless
// o says otherwise) and returns it with its URL.
func serveSite(t *testing.T, o testsite.Options) (*testsite.Site, string) {
	t.Helper()
	if o.SlowDelay == 0 {
		o.SlowDelay = -1
	}
	s := testsite.New(o)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv.URL
}

// gatedSite serves a generated site whose pages, except the home page and
// robots.txt, wait until the gate opens: a crawl of it stays running, with
// its home page done, for as long as a test needs.
type gatedSite struct {
	site *testsite.Site
	url  string
	gate chan struct{}
	once sync.Once

	mu      sync.Mutex
	arrived []string // paths that reached the gate, in order
}

// newGatedSite serves a gated site. Tests defer open, so that the queue's
// workers are not left waiting when the test ends.
func newGatedSite(t *testing.T, o testsite.Options) *gatedSite {
	t.Helper()
	if o.SlowDelay == 0 {
		o.SlowDelay = -1
	}
	g := &gatedSite{site: testsite.New(o), gate: make(chan struct{})}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	t.Cleanup(g.open) // runs before srv.Close
	g.url = srv.URL
	return g
}

func (g *gatedSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" && r.URL.Path != "/robots.txt" {
		g.mu.Lock()
		g.arrived = append(g.arrived, r.URL.Path)
		g.mu.Unlock()
		select {
		case <-g.gate:
		case <-r.Context().Done():
			return
		}
	}
	g.site.ServeHTTP(w, r)
}

// open lets every waiting and future request through.
func (g *gatedSite) open() { g.once.Do(func() { close(g.gate) }) }

// arrivals is how many page requests reached the gate so far.
func (g *gatedSite) arrivals() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.arrived)
}

// sourceURLOf is a document's metadata.sourceURL.
func sourceURLOf(t *testing.T, doc any) string {
	t.Helper()
	d, _ := doc.(map[string]any)
	md, _ := d["metadata"].(map[string]any)
	s, ok := md["sourceURL"].(string)
	if !ok {
		t.Fatalf("document without metadata.sourceURL: %v", doc)
	}
	return s
}

// dataOf is the data array of a status body.
func dataOf(t *testing.T, m map[string]any) []any {
	t.Helper()
	d, ok := m["data"].([]any)
	if !ok {
		t.Fatalf("status without a data array: %v", m)
	}
	return d
}

// sourceURLs are the sourceURLs of documents, in order.
func sourceURLs(t *testing.T, docs []any) []string {
	t.Helper()
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = sourceURLOf(t, d)
	}
	return out
}

// identitiesOf maps crawled URLs onto the site's Identity terms, sorted.
func identitiesOf(s *testsite.Site, sp testsite.Spec, urls []string) []string {
	out := make([]string, len(urls))
	for i, u := range urls {
		out[i] = s.Identity(sp, u)
	}
	sort.Strings(out)
	return out
}

// parseISO parses a timestamp of the job routes.
func parseISO(t *testing.T, field string, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	ts, err := time.Parse(isoMillis, s)
	if err != nil {
		t.Fatalf("%s = %v, not an ISO timestamp with milliseconds: %v", field, v, err)
	}
	return ts
}

// keysOf are the keys of m, sorted.
func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// fieldPaths are the paths of an error's details, each joined with dots.
func fieldPaths(m map[string]any) []string {
	details, _ := m["details"].([]any)
	var out []string
	for _, d := range details {
		item, _ := d.(map[string]any)
		path, _ := item["path"].([]any)
		parts := make([]string, len(path))
		for i, p := range path {
			parts[i] = fmt.Sprint(p)
		}
		out = append(out, strings.Join(parts, "."))
	}
	return out
}

// unknownJobID is a well-formed id no job has.
const unknownJobID = "01a20000-0000-7000-8000-000000000000"

func TestCrawlRequestValidation(t *testing.T) {
	_, target := serveSite(t, testsite.Options{Pages: 30})
	f := newJobsFixture(t, "sqlite", fxOptions{})
	//lint:ignore SA1000 invalid on purpose: the test wants the compiler's message
	_, regexErr := regexp.Compile("(")
	//lint:ignore SA1000 invalid on purpose
	_, bracketErr := regexp.Compile("[a-")
	ok := func(extra string) string {
		return `{"url":"` + target + `/","sitemap":"skip","limit":1` + extra + `}`
	}
	for _, tc := range []struct {
		name   string
		key    string // default team one
		body   string
		status int
		code   string
		msg    string   // exact error; "" = "Bad Request" for 400 BAD_REQUEST, unchecked otherwise
		paths  []string // exact details paths, when set
	}{
		// url
		{name: "url missing", body: `{"limit":5}`, status: 400, code: "BAD_REQUEST", msg: msgURLMissing, paths: []string{"url"}},
		{name: "url not a string", body: `{"url":5}`, status: 400, code: "BAD_REQUEST", msg: "Invalid URL: url must be a string, not number", paths: []string{"url"}},
		{name: "url ftp", body: `{"url":"ftp://example.com/"}`, status: 400, code: "BAD_REQUEST", msg: malformedURL("ftp://example.com/"), paths: []string{"url"}},
		{name: "url no tld", body: `{"url":"not a url"}`, status: 400, code: "BAD_REQUEST", msg: malformedURL("not a url"), paths: []string{"url"}},
		// limit
		{name: "limit 0", body: ok(`,"limit":0`), status: 400, code: "BAD_REQUEST", paths: []string{"limit"}},
		{name: "limit negative", body: ok(`,"limit":-5`), status: 400, code: "BAD_REQUEST", paths: []string{"limit"}},
		{name: "limit fraction", body: ok(`,"limit":2.5`), status: 400, code: "BAD_REQUEST", paths: []string{"limit"}},
		{name: "limit string", body: ok(`,"limit":"10"`), status: 400, code: "BAD_REQUEST", paths: []string{"limit"}},
		{name: "limit huge", body: ok(`,"limit":1e12`), status: 400, code: "BAD_REQUEST", paths: []string{"limit"}},
		{name: "limit null is absent", body: ok(`,"limit":null`), status: 200},
		// maxDiscoveryDepth
		{name: "depth negative", body: ok(`,"maxDiscoveryDepth":-1`), status: 400, code: "BAD_REQUEST", paths: []string{"maxDiscoveryDepth"}},
		{name: "depth string", body: ok(`,"maxDiscoveryDepth":"2"`), status: 400, code: "BAD_REQUEST", paths: []string{"maxDiscoveryDepth"}},
		{name: "depth fraction", body: ok(`,"maxDiscoveryDepth":1.5`), status: 400, code: "BAD_REQUEST", paths: []string{"maxDiscoveryDepth"}},
		{name: "depth 0", body: ok(`,"maxDiscoveryDepth":0`), status: 200},
		// delay
		{name: "delay 61", body: ok(`,"delay":61`), status: 400, code: "BAD_REQUEST",
			msg: "The delay parameter is measured in seconds and cannot exceed 60 seconds.", paths: []string{"delay"}},
		{name: "delay 60.5", body: ok(`,"delay":60.5`), status: 400, code: "BAD_REQUEST",
			msg: "The delay parameter is measured in seconds and cannot exceed 60 seconds.", paths: []string{"delay"}},
		{name: "delay 0", body: ok(`,"delay":0`), status: 400, code: "BAD_REQUEST", paths: []string{"delay"}},
		{name: "delay negative", body: ok(`,"delay":-1`), status: 400, code: "BAD_REQUEST", paths: []string{"delay"}},
		{name: "delay string", body: ok(`,"delay":"1"`), status: 400, code: "BAD_REQUEST", paths: []string{"delay"}},
		{name: "delay fraction", body: ok(`,"delay":0.01`), status: 200},
		// sitemap
		{name: "sitemap unknown", body: ok(`,"sitemap":"sometimes"`), status: 400, code: "BAD_REQUEST", paths: []string{"sitemap"}},
		{name: "sitemap not a string", body: ok(`,"sitemap":true`), status: 400, code: "BAD_REQUEST", paths: []string{"sitemap"}},
		{name: "sitemap only", body: `{"url":"` + target + `/about","sitemap":"only","limit":1}`, status: 200},
		{name: "sitemap include", body: `{"url":"` + target + `/about","sitemap":"include","limit":1}`, status: 200},
		// includePaths, excludePaths
		{name: "includePaths bad regex", body: ok(`,"includePaths":["("]`), status: 400, code: "BAD_REQUEST",
			msg: "Invalid regular expression in includePaths: " + regexErr.Error(), paths: []string{"includePaths.0"}},
		{name: "excludePaths bad regex", body: ok(`,"excludePaths":["^/ok","[a-"]`), status: 400, code: "BAD_REQUEST",
			msg: "Invalid regular expression in excludePaths: " + bracketErr.Error(), paths: []string{"excludePaths.1"}},
		{name: "includePaths too large a program", body: ok(`,"includePaths":["^/ok","(.*a){1000}"]`), status: 400, code: "BAD_REQUEST",
			msg:   "Invalid regular expression in includePaths: the regular expressions compile to more than 5000 instructions together: use simpler ones",
			paths: []string{"includePaths.1"}},
		{name: "scrapeOptions includeTags nested too deep", body: ok(`,"scrapeOptions":{"includeTags":["` + strings.Repeat(":not(", 40) + "a" + strings.Repeat(")", 40) + `"]}`),
			status: 400, code: "BAD_REQUEST", paths: []string{"scrapeOptions.includeTags.0"}},
		{name: "includePaths not an array", body: ok(`,"includePaths":"^/blog"`), status: 400, code: "BAD_REQUEST", paths: []string{"includePaths"}},
		{name: "includePaths item not a string", body: ok(`,"includePaths":[5]`), status: 400, code: "BAD_REQUEST", paths: []string{"includePaths.0"}},
		{name: "paths valid", body: ok(`,"includePaths":[".*"],"excludePaths":["^/private"],"regexOnFullURL":true`), status: 200},
		// booleans and numbers
		{name: "regexOnFullURL string", body: ok(`,"regexOnFullURL":"yes"`), status: 400, code: "BAD_REQUEST", paths: []string{"regexOnFullURL"}},
		{name: "crawlEntireDomain number", body: ok(`,"crawlEntireDomain":1`), status: 400, code: "BAD_REQUEST", paths: []string{"crawlEntireDomain"}},
		{name: "allowSubdomains string", body: ok(`,"allowSubdomains":"true"`), status: 400, code: "BAD_REQUEST", paths: []string{"allowSubdomains"}},
		{name: "allowExternalLinks string", body: ok(`,"allowExternalLinks":"no"`), status: 400, code: "BAD_REQUEST", paths: []string{"allowExternalLinks"}},
		{name: "ignoreRobotsTxt string", body: ok(`,"ignoreRobotsTxt":"no"`), status: 400, code: "BAD_REQUEST", paths: []string{"ignoreRobotsTxt"}},
		{name: "robotsUserAgent number", body: ok(`,"robotsUserAgent":5`), status: 400, code: "BAD_REQUEST", paths: []string{"robotsUserAgent"}},
		{name: "deduplicateSimilarURLs string", body: ok(`,"deduplicateSimilarURLs":"no"`), status: 400, code: "BAD_REQUEST", paths: []string{"deduplicateSimilarURLs"}},
		{name: "ignoreQueryParameters string", body: ok(`,"ignoreQueryParameters":"no"`), status: 400, code: "BAD_REQUEST", paths: []string{"ignoreQueryParameters"}},
		{name: "maxConcurrency 0", body: ok(`,"maxConcurrency":0`), status: 400, code: "BAD_REQUEST", paths: []string{"maxConcurrency"}},
		{name: "origin number", body: ok(`,"origin":5`), status: 400, code: "BAD_REQUEST", paths: []string{"origin"}},
		{name: "every crawler option", body: ok(`,"crawlEntireDomain":true,"allowSubdomains":true,"allowExternalLinks":false,` +
			`"ignoreRobotsTxt":true,"robotsUserAgent":"FiregateTest","deduplicateSimilarURLs":false,"ignoreQueryParameters":true,` +
			`"maxConcurrency":2,"origin":"test","integration":"_test"`), status: 200},
		// unknown keys
		{name: "unknown key", body: ok(`,"bogus":1`), status: 400, code: "BAD_REQUEST",
			msg: "Unrecognized key in body -- please review the v2 API documentation for request body changes", paths: []string{"bogus"}},
		{name: "v1 maxDepth", body: ok(`,"maxDepth":2`), status: 400, code: "BAD_REQUEST",
			msg: "Unrecognized key in body -- please review the v2 API documentation for request body changes", paths: []string{"maxDepth"}},
		{name: "v1 ignoreSitemap", body: ok(`,"ignoreSitemap":true`), status: 400, code: "BAD_REQUEST",
			msg: "Unrecognized key in body -- please review the v2 API documentation for request body changes", paths: []string{"ignoreSitemap"}},
		{name: "top-level scrape option", body: ok(`,"formats":["markdown"]`), status: 400, code: "BAD_REQUEST",
			msg: "Unrecognized key in body -- please review the v2 API documentation for request body changes", paths: []string{"formats"}},
		// scrapeOptions
		{name: "scrapeOptions not an object", body: ok(`,"scrapeOptions":"markdown"`), status: 400, code: "BAD_REQUEST", paths: []string{"scrapeOptions"}},
		{name: "scrapeOptions unknown key", body: ok(`,"scrapeOptions":{"bogus":1}`), status: 400, code: "BAD_REQUEST",
			msg: "Unrecognized key in body -- please review the v2 API documentation for request body changes", paths: []string{"scrapeOptions.bogus"}},
		{name: "scrapeOptions url", body: ok(`,"scrapeOptions":{"url":"https://example.com"}`), status: 400, code: "BAD_REQUEST",
			msg: "Unrecognized key in body -- please review the v2 API documentation for request body changes", paths: []string{"scrapeOptions.url"}},
		{name: "scrapeOptions bad format", body: ok(`,"scrapeOptions":{"formats":["nope"]}`), status: 400, code: "BAD_REQUEST",
			msg: unknownFormat([]any{"scrapeOptions", "formats", 0}, "nope")},
		{name: "scrapeOptions timeout too small", body: ok(`,"scrapeOptions":{"timeout":500}`), status: 400, code: "BAD_REQUEST", paths: []string{"scrapeOptions.timeout"}},
		{name: "scrapeOptions waitFor over half the timeout", body: ok(`,"scrapeOptions":{"waitFor":40000,"timeout":60000}`), status: 400,
			code: "BAD_REQUEST", msg: "waitFor must not exceed half of timeout"},
		{name: "scrapeOptions onlyMainContent string", body: ok(`,"scrapeOptions":{"onlyMainContent":"yes"}`), status: 400, code: "BAD_REQUEST",
			paths: []string{"scrapeOptions.onlyMainContent"}},
		{name: "scrapeOptions valid", body: ok(`,"scrapeOptions":{"formats":["markdown","html","links"],"onlyMainContent":false,"timeout":15000}`), status: 200},
		// webhook
		{name: "webhook string", body: ok(`,"webhook":"https://hooks.example.com/crawl"`), status: 200},
		{name: "webhook object", body: ok(`,"webhook":{"url":"https://hooks.example.com/crawl","headers":{"X-Test":"1"},` +
			`"metadata":{"run":"7"},"events":["started","page","crawl.completed"]}`), status: 200},
		{name: "webhook ftp", body: ok(`,"webhook":"ftp://hooks.example.com/"`), status: 400, code: "BAD_REQUEST",
			msg: "webhook.url: must be an absolute http or https URL", paths: []string{"webhook"}},
		{name: "webhook number", body: ok(`,"webhook":5`), status: 400, code: "BAD_REQUEST",
			msg: "webhook: must be a URL string or an object", paths: []string{"webhook"}},
		{name: "webhook without url", body: ok(`,"webhook":{"headers":{"X":"1"}}`), status: 400, code: "BAD_REQUEST",
			msg: "webhook.url: is required", paths: []string{"webhook"}},
		{name: "webhook unknown event", body: ok(`,"webhook":{"url":"https://hooks.example.com/","events":["exploded"]}`), status: 400,
			code: "BAD_REQUEST", paths: []string{"webhook"}},
		{name: "webhook unknown key", body: ok(`,"webhook":{"url":"https://hooks.example.com/","secret":"x"}`), status: 400,
			code: "BAD_REQUEST", msg: `webhook: unrecognized key "secret"`, paths: []string{"webhook"}},
		// prompt
		{name: "prompt", body: ok(`,"prompt":"only the blog posts"`), status: 400, code: "CRAWL_PROMPT_NOT_SUPPORTED", paths: []string{"prompt"}},
		{name: "prompt too long", body: ok(`,"prompt":"` + strings.Repeat("p", 10001) + `"`), status: 400, code: "BAD_REQUEST", paths: []string{"prompt"}},
		{name: "prompt not a string", body: ok(`,"prompt":5`), status: 400, code: "BAD_REQUEST", paths: []string{"prompt"}},
		// zero data retention
		{name: "zdr without the team flag", body: ok(`,"zeroDataRetention":true`), status: 403, code: "ZDR_NOT_ENABLED"},
		{name: "zdr in scrapeOptions without the team flag", body: ok(`,"scrapeOptions":{"zeroDataRetention":true}`), status: 403, code: "ZDR_NOT_ENABLED"},
		{name: "zdr with the team flag", key: fxKeyZDR, body: ok(`,"zeroDataRetention":true`), status: 200},
		{name: "zdr not a boolean", body: ok(`,"zeroDataRetention":"yes"`), status: 400, code: "BAD_REQUEST", paths: []string{"zeroDataRetention"}},
		// body
		{name: "malformed JSON", body: `{"url":`, status: 400, code: "BAD_REQUEST_INVALID_JSON", msg: "Bad request, malformed JSON"},
		{name: "array body", body: `[]`, status: 400, code: "BAD_REQUEST_INVALID_JSON", msg: "Bad request, malformed JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := tc.key
			if key == "" {
				key = fxKeyOne
			}
			code, m := f.send(t, http.MethodPost, "/v2/crawl", key, tc.body)
			if code != tc.status {
				t.Fatalf("status %d, want %d: %v", code, tc.status, m)
			}
			if code == http.StatusOK {
				if m["success"] != true || m["id"] == nil {
					t.Errorf("start response %v", m)
				}
				return
			}
			if m["success"] != false || m["code"] != tc.code {
				t.Errorf("got %v, want code %s", m, tc.code)
			}
			msg := tc.msg
			if msg == "" && tc.code == "BAD_REQUEST" {
				msg = firstFieldMessage(m) // no contract message: the first failing field
			}
			if tc.name == "webhook unknown event" {
				msg = `webhook.events[0]: unknown event "exploded"`
				if s, _ := m["error"].(string); !strings.HasPrefix(s, msg) {
					t.Errorf("error %q, want it to start with %q", s, msg)
				}
			} else if msg != "" && m["error"] != msg {
				t.Errorf("error %q, want %q", m["error"], msg)
			}
			if tc.paths != nil {
				if diff := cmp.Diff(tc.paths, fieldPaths(m)); diff != "" {
					t.Errorf("details paths (-want +got)\n%s\n%v", diff, m["details"])
				}
			}
		})
	}
	// The prompt answer says what to do instead.
	_, m := f.send(t, http.MethodPost, "/v2/crawl", fxKeyOne, ok(`,"prompt":"blog"`))
	if msg, _ := m["error"].(string); !strings.Contains(msg, "prompt") || !strings.Contains(msg, "includePaths") {
		t.Errorf("prompt error %q does not explain itself", msg)
	}
	// params-preview needs an LLM too.
	code, m := f.send(t, http.MethodPost, "/v2/crawl/params-preview", fxKeyOne, `{"url":"`+target+`/","prompt":"blog"}`)
	if code != http.StatusNotImplemented || m["code"] != "CRAWL_PROMPT_NOT_SUPPORTED" || m["success"] != false {
		t.Errorf("params-preview: %d %v", code, m)
	}
	// Requests without a valid key never reach validation.
	for key, msg := range map[string]string{"": errKeyMissing.Message, "fc-nope": "Unauthorized: Invalid token"} {
		if code, m := f.send(t, http.MethodPost, "/v2/crawl", key, ok("")); code != 401 || m["error"] != msg {
			t.Errorf("key %q: %d %v", key, code, m)
		}
	}
}

// statusKeys are the keys every status body has.
var statusKeys = []string{"completed", "createdAt", "creditsUsed", "data", "duration", "expiresAt", "status", "success", "total"}

// checkStatusShape checks the keys of a status body: statusKeys, plus
// completedAt exactly when the job is terminal, plus error exactly when it
// failed, plus optionally next and warning.
func checkStatusShape(t *testing.T, m map[string]any) {
	t.Helper()
	want := slices.Clone(statusKeys)
	if m["status"] != "scraping" {
		want = append(want, "completedAt")
	}
	if m["status"] == "failed" {
		want = append(want, "error")
	}
	for _, k := range []string{"next", "warning"} {
		if _, ok := m[k]; ok {
			want = append(want, k)
		}
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, keysOf(m)); diff != "" {
		t.Errorf("status keys (-want +got)\n%s", diff)
	}
	created := parseISO(t, "createdAt", m["createdAt"])
	expires := parseISO(t, "expiresAt", m["expiresAt"])
	if d := expires.Sub(created); d < 24*time.Hour-time.Millisecond || d > 24*time.Hour+time.Millisecond {
		t.Errorf("expiresAt - createdAt = %v, want 24h", d)
	}
	duration, ok := m["duration"].(float64)
	if !ok || duration < 0 {
		t.Errorf("duration %v", m["duration"])
	}
	if m["completedAt"] != nil && m["status"] != "failed" { // the failed form has duration 0
		completed := parseISO(t, "completedAt", m["completedAt"])
		want := completed.Sub(created).Seconds()
		if completed.Before(created) || math.Abs(duration-want) > 0.002 {
			t.Errorf("duration %v, completedAt - createdAt %v", duration, want)
		}
	}
	total, _ := m["total"].(float64)
	done, _ := m["completed"].(float64)
	if done > total {
		t.Errorf("completed %v > total %v", done, total)
	}
}

func TestCrawlStatusAndPaging(t *testing.T) {
	site, target := serveSite(t, testsite.Options{Pages: 40})
	spec := testsite.Spec{Sitemap: "skip"}
	want := site.Expect(spec)
	for _, kind := range fxStores {
		t.Run(kind, func(t *testing.T) {
			f := newJobsFixture(t, kind, fxOptions{})
			id := f.start(t, "/v2/crawl", `{"url":"`+target+`/","sitemap":"skip","scrapeOptions":{"formats":["markdown"]}}`)
			path := "/v2/crawl/" + id
			final := f.waitDone(t, path)
			checkStatusShape(t, final)
			if final["status"] != "completed" || final["success"] != true {
				t.Fatalf("final status %v", final)
			}
			data := dataOf(t, final)
			got := sourceURLs(t, data)
			if diff := cmp.Diff(want.Pages, identitiesOf(site, spec, got)); diff != "" {
				t.Errorf("documents (-want +got)\n%s", diff)
			}
			// Every claimed URL finished: the pages and the failures; robots.txt
			// blocked ones are never claimed.
			n := len(want.Pages)
			if final["total"] != float64(n+len(want.Failed)) || final["completed"] != final["total"] {
				t.Errorf("total %v completed %v, want %d", final["total"], final["completed"], n+len(want.Failed))
			}
			if final["creditsUsed"] != float64(n) {
				t.Errorf("creditsUsed %v, want %d (one per document)", final["creditsUsed"], n)
			}
			if _, ok := final["next"]; ok {
				t.Errorf("next %v on a completed job whose documents fit one page", final["next"])
			}
			if diff := cmp.Diff(f.docURLs(t, id), got); diff != "" {
				t.Errorf("documents are not in finish order (-store +status)\n%s", diff)
			}
			for _, d := range data {
				if md, _ := d.(map[string]any)["markdown"].(string); md == "" {
					t.Errorf("%s has no markdown", sourceURLOf(t, d))
				}
			}
			// The documents, 7 at a time.
			var paged []string
			next := path + "?limit=7"
			for i := 0; next != ""; i++ {
				if i > n {
					t.Fatal("next never ends")
				}
				m := f.status(t, next, fxKeyOne)
				page := sourceURLs(t, dataOf(t, m))
				paged = append(paged, page...)
				if len(paged) < n {
					if len(page) != 7 {
						t.Errorf("page %d has %d documents, want 7", i, len(page))
					}
					wantNext := f.base + path + "?skip=" + strconv.Itoa(len(paged)) + "&limit=7"
					if m["next"] != wantNext {
						t.Errorf("next %v, want %s", m["next"], wantNext)
					}
				} else if _, ok := m["next"]; ok {
					t.Errorf("next %v after the last document", m["next"])
				}
				next, _ = m["next"].(string)
			}
			if diff := cmp.Diff(got, paged); diff != "" {
				t.Errorf("paged documents differ from the full list (-full +paged)\n%s", diff)
			}
			// skip alone, and skip at or past the end.
			m := f.status(t, path+"?skip=5", fxKeyOne)
			if diff := cmp.Diff(got[5:], sourceURLs(t, dataOf(t, m))); diff != "" {
				t.Errorf("skip=5 (-want +got)\n%s", diff)
			}
			for _, skip := range []int{n, n + 100} {
				m := f.status(t, path+"?skip="+strconv.Itoa(skip), fxKeyOne)
				if len(dataOf(t, m)) != 0 || m["next"] != nil || m["status"] != "completed" {
					t.Errorf("skip=%d: %v documents, next %v", skip, len(dataOf(t, m)), m["next"])
				}
			}
			// Bad paging parameters.
			for _, q := range []string{"skip=-1", "skip=abc", "skip=1.5", "limit=0", "limit=-3", "limit=x", "skip=2&limit=0"} {
				code, m := f.send(t, http.MethodGet, path+"?"+q, fxKeyOne, "")
				if code != 400 || m["success"] != false || m["code"] != "BAD_REQUEST" {
					t.Errorf("?%s: %d %v", q, code, m)
				}
			}
			// Ids: malformed, unknown, another team's.
			for _, route := range []struct{ method, suffix string }{
				{http.MethodGet, ""}, {http.MethodDelete, ""}, {http.MethodGet, "/errors"},
			} {
				code, m := f.send(t, route.method, "/v2/crawl/not-a-uuid"+route.suffix, fxKeyOne, "")
				if code != 400 || m["error"] != "Invalid job ID format. Job ID must be a valid UUID." || m["success"] != false {
					t.Errorf("%s malformed id%s: %d %v", route.method, route.suffix, code, m)
				}
				code, m = f.send(t, route.method, "/v2/crawl/"+unknownJobID+route.suffix, fxKeyOne, "")
				if code != 404 || m["error"] != "Job not found" || m["success"] != false {
					t.Errorf("%s unknown id%s: %d %v", route.method, route.suffix, code, m)
				}
				code, m = f.send(t, route.method, path+route.suffix, fxKeyTwo, "")
				if code != 404 || m["error"] != "Job not found" {
					t.Errorf("%s another team's job%s: %d %v", route.method, route.suffix, code, m)
				}
			}
			if m := f.status(t, path, fxKeyOne); m["status"] != "completed" {
				t.Errorf("another team's DELETE changed the job: %v", m["status"])
			}
		})
	}
}

func TestCrawlStartURLUsesPublicURL(t *testing.T) {
	_, target := serveSite(t, testsite.Options{Pages: 30})
	f := newJobsFixture(t, "sqlite", fxOptions{publicURL: "https://api.firegate.test/"})
	code, m := f.send(t, http.MethodPost, "/v2/crawl", fxKeyOne, `{"url":"`+target+`/","limit":1}`)
	id, _ := m["id"].(string)
	if code != 200 || m["url"] != "https://api.firegate.test/v2/crawl/"+id {
		t.Fatalf("start: %d %v", code, m)
	}
	f.waitDone(t, "/v2/crawl/"+id)
	// next links use it too.
	code, m = f.send(t, http.MethodPost, "/v2/crawl", fxKeyOne, `{"url":"`+target+`/","limit":3,"sitemap":"skip"}`)
	if code != 200 {
		t.Fatalf("start: %d %v", code, m)
	}
	id, _ = m["id"].(string)
	f.waitDone(t, "/v2/crawl/"+id)
	st := f.status(t, "/v2/crawl/"+id+"?limit=1", fxKeyOne)
	if st["next"] != "https://api.firegate.test/v2/crawl/"+id+"?skip=1&limit=1" {
		t.Errorf("next %v", st["next"])
	}
}

func TestCrawlRunningStatus(t *testing.T) {
	g := newGatedSite(t, testsite.Options{Pages: 30})
	f := newJobsFixture(t, "postgres", fxOptions{})
	defer g.open()
	id := f.start(t, "/v2/crawl", `{"url":"`+g.url+`/","sitemap":"skip","limit":10}`)
	path := "/v2/crawl/" + id
	// The home page is done; every other page waits at the gate.
	st := f.waitStatus(t, path, "the home page", func(m map[string]any) bool { return m["completed"] == float64(1) })
	checkStatusShape(t, st)
	if st["status"] != "scraping" || st["success"] != true || st["total"] != float64(10) || st["creditsUsed"] != float64(1) {
		t.Errorf("running status %v", st)
	}
	if got := sourceURLs(t, dataOf(t, st)); len(got) != 1 || got[0] != g.url+"/" {
		t.Errorf("documents %v, want the home page", got)
	}
	if st["next"] != f.base+path+"?skip=1" {
		t.Errorf("next %v while running, want the page after the document", st["next"])
	}
	if m := f.status(t, path+"?limit=1", fxKeyOne); m["next"] != f.base+path+"?skip=1&limit=1" {
		t.Errorf("next %v with limit=1", m["next"])
	}
	d1, _ := st["duration"].(float64)
	// The duration grows with the clock: time itself is what is checked.
	time.Sleep(30 * time.Millisecond)
	if d2, _ := f.status(t, path, fxKeyOne)["duration"].(float64); d2 <= d1 {
		t.Errorf("duration %v then %v: it does not grow while running", d1, d2)
	}
	g.open()
	final := f.waitDone(t, path)
	checkStatusShape(t, final)
	if final["status"] != "completed" || final["total"] != float64(10) || final["completed"] != float64(10) {
		t.Errorf("final %v", final)
	}
}

func TestCrawlCancel(t *testing.T) {
	g := newGatedSite(t, testsite.Options{Pages: 40})
	f := newJobsFixture(t, "postgres", fxOptions{})
	defer g.open()
	// Two pages at a time: two wait at the gate, the others wait for a slot.
	// (Without the failing pages, so that every page in flight gives a
	// document, and no redirect adds a request.)
	id := f.start(t, "/v2/crawl", `{"url":"`+g.url+`/","sitemap":"skip","maxConcurrency":2,"excludePaths":["^/error","^/loop"]}`)
	path := "/v2/crawl/" + id
	f.waitStatus(t, path, "the home page", func(m map[string]any) bool { return m["completed"] == float64(1) })
	testenv.Eventually(t, time.Minute, func() bool { return g.arrivals() == 2 }, "still waiting for two pages at the gate")

	code, m := f.send(t, http.MethodDelete, path, fxKeyOne, "")
	if code != 200 {
		t.Fatalf("cancel: %d %v", code, m)
	}
	if diff := cmp.Diff(map[string]any{"status": "cancelled"}, m); diff != "" {
		t.Errorf("cancel body (-want +got)\n%s", diff)
	}
	atCancel := g.arrivals()
	st := f.status(t, path, fxKeyOne)
	checkStatusShape(t, st)
	if st["status"] != "cancelled" || st["success"] != true || st["completedAt"] == nil {
		t.Errorf("status after cancel %v", st)
	}
	// Cancelling again is fine.
	if code, m := f.send(t, http.MethodDelete, path, fxKeyOne, ""); code != 200 || m["status"] != "cancelled" {
		t.Errorf("second cancel: %d %v", code, m)
	}
	// The two pages in flight finish; no page starts after the cancel.
	g.open()
	testenv.Eventually(t, time.Minute, func() bool { return f.activePageJobs(t) == 0 }, "still waiting for the queue to drain")
	if n := g.arrivals(); n != atCancel {
		t.Errorf("%d page requests after the cancel; want none", n-atCancel)
	}
	st = f.status(t, path, fxKeyOne)
	if st["status"] != "cancelled" || len(dataOf(t, st)) != 3 {
		t.Errorf("after the queue drained: status %v, %d documents, want cancelled and 3 (home + 2 in flight)",
			st["status"], len(dataOf(t, st)))
	}
	if _, ok := st["next"]; ok {
		t.Errorf("next %v on a cancelled job with nothing more", st["next"])
	}
}

func TestCrawlCancelFinishedJobs(t *testing.T) {
	_, target := serveSite(t, testsite.Options{Pages: 30})
	f := newJobsFixture(t, "sqlite", fxOptions{})
	id := f.start(t, "/v2/crawl", `{"url":"`+target+`/","limit":3,"sitemap":"skip"}`)
	f.waitDone(t, "/v2/crawl/"+id)
	want := map[string]any{"success": false, "code": "CONFLICT", "error": "Crawl is already completed"}
	code, m := f.send(t, http.MethodDelete, "/v2/crawl/"+id, fxKeyOne, "")
	if diff := cmp.Diff(want, m); code != 409 || diff != "" {
		t.Errorf("cancel completed: %d (-want +got)\n%s", code, diff)
	}
	if st := f.status(t, "/v2/crawl/"+id, fxKeyOne); st["status"] != "completed" {
		t.Errorf("status %v after a refused cancel", st["status"])
	}
	// A failed crawl is finished too.
	failed := crawljob.NewJobID()
	team := f.teams[fxKeyOne]
	now := time.Now().UTC()
	if _, err := f.st.CreateJob(t.Context(), store.Job{ID: failed, TeamID: team.ID, Kind: store.JobCrawl, URL: target + "/",
		Options: []byte(`{}`), CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.SetJobStatus(t.Context(), failed, []string{store.JobScraping}, store.JobFailed, "The start page answered HTTP 502."); err != nil {
		t.Fatal(err)
	}
	code, m = f.send(t, http.MethodDelete, "/v2/crawl/"+failed, fxKeyOne, "")
	if diff := cmp.Diff(want, m); code != 409 || diff != "" {
		t.Errorf("cancel failed: %d (-want +got)\n%s", code, diff)
	}
	// The failed form of the status.
	st := f.status(t, "/v2/crawl/"+failed, fxKeyOne)
	checkStatusShape(t, st)
	if st["success"] != false || st["status"] != "failed" || st["error"] == nil || st["total"] != float64(0) ||
		st["completed"] != float64(0) || st["duration"] != float64(0) || len(dataOf(t, st)) != 0 {
		t.Errorf("failed form %v", st)
	}
}

func TestCrawlExpiredJob(t *testing.T) {
	f := newJobsFixture(t, "sqlite", fxOptions{})
	id := crawljob.NewJobID()
	if _, err := f.st.CreateJob(t.Context(), store.Job{ID: id, TeamID: f.teams[fxKeyOne].ID, Kind: store.JobCrawl,
		URL: "https://example.com/", Options: []byte(`{}`), CreatedAt: time.Now().Add(-25 * time.Hour),
		ExpiresAt: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/v2/crawl/" + id, "/v2/crawl/" + id + "/errors"} {
		code, m := f.send(t, http.MethodGet, p, fxKeyOne, "")
		if code != 404 || m["error"] != "Job expired" || m["success"] != false {
			t.Errorf("%s: %d %v", p, code, m)
		}
	}
}

func TestCrawlErrorsRoute(t *testing.T) {
	site, target := serveSite(t, testsite.Options{Pages: 40})
	spec := testsite.Spec{Sitemap: "skip"}
	want := site.Expect(spec)
	if len(want.Failed) == 0 || len(want.RobotsBlocked) == 0 {
		t.Fatalf("the site should have failing and robots-blocked pages: %+v", want)
	}
	for _, kind := range fxStores {
		t.Run(kind, func(t *testing.T) {
			f := newJobsFixture(t, kind, fxOptions{})
			id := f.start(t, "/v2/crawl", `{"url":"`+target+`/","sitemap":"skip"}`)
			st := f.waitDone(t, "/v2/crawl/"+id)
			if w, _ := st["warning"].(string); !strings.Contains(w, "robots.txt") {
				t.Errorf("warning %q does not mention robots.txt", w)
			}
			m := f.status(t, "/v2/crawl/"+id+"/errors", fxKeyOne)
			if diff := cmp.Diff([]string{"errors", "robotsBlocked"}, keysOf(m)); diff != "" {
				t.Errorf("errors body keys (-want +got)\n%s", diff)
			}
			items, _ := m["errors"].([]any)
			var failed []string
			created := parseISO(t, "createdAt", st["createdAt"])
			for _, it := range items {
				e, _ := it.(map[string]any)
				if diff := cmp.Diff([]string{"code", "error", "id", "timestamp", "url"}, keysOf(e)); diff != "" {
					t.Errorf("error item keys (-want +got)\n%s", diff)
				}
				if _, err := uuid.Parse(fmt.Sprint(e["id"])); err != nil {
					t.Errorf("error id %v is not a UUID", e["id"])
				}
				if ts := parseISO(t, "timestamp", e["timestamp"]); ts.Before(created) {
					t.Errorf("error timestamp %v before the crawl began", ts)
				}
				if e["code"] == "" || e["error"] == "" {
					t.Errorf("error item without code or message: %v", e)
				}
				u := fmt.Sprint(e["url"])
				failed = append(failed, u)
				if site.Identity(spec, u) == testsite.PathError {
					if e["code"] != "SCRAPE_SITE_ERROR" || !strings.Contains(fmt.Sprint(e["error"]), "500") {
						t.Errorf("the 500 page: %v", e)
					}
				}
			}
			if diff := cmp.Diff(want.Failed, identitiesOf(site, spec, failed)); diff != "" {
				t.Errorf("failed URLs (-want +got)\n%s", diff)
			}
			blocked, _ := m["robotsBlocked"].([]any)
			var blockedURLs []string
			for _, b := range blocked {
				s := fmt.Sprint(b)
				if !strings.HasPrefix(s, target+"/") {
					t.Errorf("robotsBlocked item %q is not an absolute URL of the site", s)
				}
				blockedURLs = append(blockedURLs, s)
			}
			if diff := cmp.Diff(want.RobotsBlocked, identitiesOf(site, spec, blockedURLs)); diff != "" {
				t.Errorf("robotsBlocked (-want +got)\n%s", diff)
			}
			// The failures are not among the documents.
			for _, u := range sourceURLs(t, dataOf(t, st)) {
				if slices.Contains(failed, u) {
					t.Errorf("%s is both a document and an error", u)
				}
			}
		})
	}
}

func TestCrawlErrorsRouteRobots(t *testing.T) {
	_, target := serveSite(t, testsite.Options{Pages: 30})
	f := newJobsFixture(t, "sqlite", fxOptions{})
	// A start URL robots.txt disallows: nothing fetched, the URL blocked.
	id := f.start(t, "/v2/crawl", `{"url":"`+target+testsite.PathPrivate+`","sitemap":"skip"}`)
	st := f.waitDone(t, "/v2/crawl/"+id)
	if st["status"] != "completed" || len(dataOf(t, st)) != 0 || st["total"] != float64(0) {
		t.Errorf("crawl of a disallowed start URL: %v", st)
	}
	m := f.status(t, "/v2/crawl/"+id+"/errors", fxKeyOne)
	want := map[string]any{"errors": []any{}, "robotsBlocked": []any{target + testsite.PathPrivate}}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("errors (-want +got)\n%s", diff)
	}
	// ignoreRobotsTxt crawls it: the page and the one it links under it.
	id = f.start(t, "/v2/crawl", `{"url":"`+target+testsite.PathPrivate+`","sitemap":"skip","ignoreRobotsTxt":true}`)
	st = f.waitDone(t, "/v2/crawl/"+id)
	got := sourceURLs(t, dataOf(t, st))
	sort.Strings(got)
	if diff := cmp.Diff([]string{target + testsite.PathPrivate, target + testsite.PathSecret}, got); diff != "" {
		t.Errorf("documents (-want +got)\n%s", diff)
	}
	m = f.status(t, "/v2/crawl/"+id+"/errors", fxKeyOne)
	if diff := cmp.Diff(map[string]any{"errors": []any{}, "robotsBlocked": []any{}}, m); diff != "" {
		t.Errorf("errors (-want +got)\n%s", diff)
	}
}

func TestActiveCrawls(t *testing.T) {
	g := newGatedSite(t, testsite.Options{Pages: 30})
	_, fast := serveSite(t, testsite.Options{Pages: 30})
	f := newJobsFixture(t, "postgres", fxOptions{})
	defer g.open()
	active := func(key, route string) []any {
		t.Helper()
		m := f.status(t, "/v2/crawl/"+route, key)
		if diff := cmp.Diff([]string{"crawls", "success"}, keysOf(m)); diff != "" || m["success"] != true {
			t.Fatalf("%s body %v", route, m)
		}
		crawls, ok := m["crawls"].([]any)
		if !ok {
			t.Fatalf("%s: crawls %v is not an array", route, m["crawls"])
		}
		return crawls
	}
	if got := active(fxKeyOne, "active"); len(got) != 0 {
		t.Fatalf("active before any crawl: %v", got)
	}
	id := f.start(t, "/v2/crawl", `{"url":"`+g.url+`/","sitemap":"skip","limit":50,"excludePaths":["^/docs/"],`+
		`"maxDiscoveryDepth":4,"maxConcurrency":2,"delay":0.5,"allowSubdomains":true,`+
		`"scrapeOptions":{"formats":["markdown","links"],"onlyMainContent":false,"timeout":20000}}`)
	st := f.status(t, "/v2/crawl/"+id, fxKeyOne)
	// A batch is not a crawl.
	batch := f.start(t, "/v2/batch/scrape", `{"urls":["`+g.url+`/about"]}`)
	// A small crawl that completes disappears.
	done := f.start(t, "/v2/crawl", `{"url":"`+fast+`/","limit":2,"sitemap":"skip"}`)
	f.waitDone(t, "/v2/crawl/"+done)

	crawls := active(fxKeyOne, "active")
	if len(crawls) != 1 {
		t.Fatalf("active crawls %v, want the running one only", crawls)
	}
	if diff := cmp.Diff(crawls, active(fxKeyOne, "ongoing")); diff != "" {
		t.Errorf("ongoing differs from active (-active +ongoing)\n%s", diff)
	}
	c, _ := crawls[0].(map[string]any)
	options, _ := c["options"].(map[string]any)
	wantItem := map[string]any{"id": id, "teamId": f.teams[fxKeyOne].ID, "url": g.url + "/", "created_at": st["createdAt"], "options": options}
	if diff := cmp.Diff(wantItem, c); diff != "" {
		t.Errorf("active item (-want +got)\n%s", diff)
	}
	wantOptions := map[string]any{
		"includePaths": []any{}, "excludePaths": []any{"^/docs/"}, "regexOnFullURL": false, "limit": float64(50),
		"sitemap": "skip", "crawlEntireDomain": false, "allowSubdomains": true, "allowExternalLinks": false,
		"ignoreRobotsTxt": false, "deduplicateSimilarURLs": true, "ignoreQueryParameters": false,
		"maxDiscoveryDepth": float64(4), "delay": 0.5, "maxConcurrency": float64(2),
	}
	so, _ := options["scrapeOptions"].(map[string]any)
	delete(options, "scrapeOptions")
	if diff := cmp.Diff(wantOptions, options); diff != "" {
		t.Errorf("active options (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff([]any{"markdown", "links"}, so["formats"]); diff != "" || so["onlyMainContent"] != false || so["timeout"] != float64(20000) {
		t.Errorf("active scrapeOptions %v", so)
	}
	if got := active(fxKeyTwo, "active"); len(got) != 0 {
		t.Errorf("team two sees team one's crawls: %v", got)
	}
	// Cancelled crawls disappear too.
	if code, m := f.send(t, http.MethodDelete, "/v2/crawl/"+id, fxKeyOne, ""); code != 200 {
		t.Fatalf("cancel: %d %v", code, m)
	}
	if got := active(fxKeyOne, "active"); len(got) != 0 {
		t.Errorf("active after the cancel: %v", got)
	}
	if code, _ := f.send(t, http.MethodDelete, "/v2/batch/scrape/"+batch, fxKeyOne, ""); code != 200 {
		t.Errorf("cancel batch: %d", code)
	}
	// /active needs a key like every route.
	if code, _ := f.send(t, http.MethodGet, "/v2/crawl/active", "", ""); code != 401 {
		t.Errorf("active without a key: %d", code)
	}
}

func TestJobRoutesAnswer501WithoutJobs(t *testing.T) {
	t.Parallel()
	log := testenv.Logger(t)
	for _, tc := range []struct {
		name string
		deps Deps
	}{
		{"no jobs, no job store", Deps{}},
		{"a job store but no jobs", Deps{JobStore: teststore.SQLite(t)}},
		{"jobs but no job store", Deps{Jobs: crawljob.NewRunner(crawljob.RunnerConfig{Log: log})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := tc.deps
			d.Scraper, d.Auth, d.Log = &fakeScraper{}, fakeAuth{}, log
			s := New(d)
			s.SetReady(true)
			for _, r := range []struct{ method, path, body string }{
				{http.MethodPost, "/v2/crawl", `{"url":"https://example.com"}`},
				{http.MethodPost, "/v2/crawl/params-preview", `{"url":"https://example.com","prompt":"x"}`},
				{http.MethodGet, "/v2/crawl/active", ""},
				{http.MethodGet, "/v2/crawl/ongoing", ""},
				{http.MethodGet, "/v2/crawl/" + unknownJobID, ""},
				{http.MethodDelete, "/v2/crawl/" + unknownJobID, ""},
				{http.MethodGet, "/v2/crawl/" + unknownJobID + "/errors", ""},
				{http.MethodPost, "/v2/batch/scrape", `{"urls":["https://example.com"]}`},
				{http.MethodGet, "/v2/batch/scrape/" + unknownJobID, ""},
				{http.MethodDelete, "/v2/batch/scrape/" + unknownJobID, ""},
				{http.MethodGet, "/v2/batch/scrape/" + unknownJobID + "/errors", ""},
			} {
				rec, m := do(t, s, r.method, r.path, goodKey, r.body)
				if rec.Code != http.StatusNotImplemented || m["code"] != "NOT_IMPLEMENTED" || m["success"] != false {
					t.Errorf("%s %s: %d %v", r.method, r.path, rec.Code, m)
				}
				if rec, _ := do(t, s, r.method, r.path, "", r.body); rec.Code != http.StatusUnauthorized {
					t.Errorf("%s %s without a key: %d", r.method, r.path, rec.Code)
				}
			}
		})
	}
}
