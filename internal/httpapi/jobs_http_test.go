package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/firegate/firegate/internal/auth"
	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/crawl/testsite"
	"github.com/firegate/firegate/internal/crawljob"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/llm"
	"github.com/firegate/firegate/internal/queue"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/teststore"
	"github.com/firegate/firegate/internal/testenv"
	"github.com/firegate/firegate/internal/threat"
	"github.com/firegate/firegate/internal/webhook"
)

// Keys of the two teams of the job tests.
const (
	keyA = "fc-team-a"
	keyB = "fc-team-b"
)

// teamAuth maps keyA and keyB to two stored teams.
type teamAuth map[string]auth.Team

func (a teamAuth) Authenticate(_ context.Context, key string) (auth.Team, error) {
	if t, ok := a[key]; ok {
		return t, nil
	}
	return auth.Team{}, auth.ErrInvalidKey
}

// newTeamAuth creates the teams of keyA and keyB in st.
func newTeamAuth(t *testing.T, st store.Store) teamAuth {
	t.Helper()
	teams := teamAuth{}
	for key, name := range map[string]string{keyA: "a", keyB: "b"} {
		team, err := st.CreateTeam(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		teams[key] = auth.Team{ID: team.ID, Name: name}
	}
	return teams
}

// startQueue opens a River queue with n workers on st for the jobs a
// runner registers, binds the runner to it, starts it and stops it when
// the test ends.
func startQueue(t *testing.T, st store.Store, n int, log *slog.Logger, register func(*river.Workers), bind func(*queue.Queue)) {
	t.Helper()
	workers := river.NewWorkers()
	register(workers)
	q, err := queue.Open(t.Context(), st, workers, queue.Options{Workers: n}, log)
	if err != nil {
		t.Fatal(err)
	}
	bind(q)
	if err := q.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), 10*time.Second)
		defer cancel()
		_ = q.Stop(ctx)
	})
}

type jobsStore interface {
	store.Store
	store.JobStore
}

// jobAPI is a Server with real jobs (store, River queue, plain HTTP
// engine) behind a real HTTP listener.
type jobAPI struct {
	url   string
	st    jobsStore
	teams teamAuth
}

func newJobAPI(t *testing.T, kind string) *jobAPI {
	t.Helper()
	return newJobAPIWith(t, kind, false)
}

// newJobAPIWith is newJobAPI, with a real credit ledger over the store
// when billed (teams stay unlimited until given credits).
func newJobAPIWith(t *testing.T, kind string, billed bool) *jobAPI {
	t.Helper()
	return newJobAPIConfig(t, kind, jobAPIConfig{billed: billed})
}

// jobAPIConfig are the optional parts of a job API under test.
type jobAPIConfig struct {
	billed   bool        // a real credit ledger over the store
	model    *llm.Client // the language model of the engine and the API
	searcher Searcher    // POST /v2/search and extract's enableWebSearch
	webhooks *webhook.Sender
	threat   *threat.Checker // the server's, engine's and runner's blocklist
	activity bool            // the store keeps the team activity
}

// newJobAPIConfig is newJobAPI with c's parts.
func newJobAPIConfig(t *testing.T, kind string, c jobAPIConfig) *jobAPI {
	t.Helper()
	billed := c.billed
	var st jobsStore
	if kind == "sqlite" {
		st = teststore.SQLite(t)
	} else {
		st = teststore.Postgres(t)
	}
	log := testenv.Logger(t)
	fetcher := fetch.New(fetch.Options{AllowPrivate: true}, log)
	sc := scrape.Config{Fetcher: fetcher, Threat: c.threat, Log: log}
	var model Model // nil interfaces without a model
	if c.model != nil {
		sc.LLM, model = c.model, c.model
	}
	engine := scrape.New(sc)
	mapper := crawl.NewMapper(fetcher, crawl.MapperOptions{}, log)
	rc := crawljob.RunnerConfig{Jobs: st, Scraper: engine, Fetcher: fetcher,
		Mapper: mapper, Webhooks: c.webhooks, Threat: c.threat, Log: log}
	var ledger Ledger // a nil interface without billing
	if billed {
		l := billing.NewLedger(st, log)
		rc.Ledger, ledger = l, l
	}
	runner := crawljob.NewRunner(rc)
	startQueue(t, st, 8, log, runner.Register, func(q *queue.Queue) { runner.Bind(q) })
	teams := newTeamAuth(t, st)
	d := Deps{Scraper: engine, Auth: teams, Jobs: runner, JobStore: st, Ledger: ledger, Log: log,
		Model: model, Mapper: mapper, Searcher: c.searcher, Threat: c.threat}
	if c.activity {
		d.Activity = st.(store.ActivityStore)
	}
	s := New(d)
	s.SetReady(true)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &jobAPI{url: srv.URL, st: st, teams: teams}
}

// call sends a request and decodes the JSON answer.
func (a *jobAPI) call(t *testing.T, method, path, key, body string, header ...string) (int, map[string]any) {
	t.Helper()
	url := path
	if !strings.HasPrefix(path, "http") {
		url = a.url + path
	}
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s %s: not JSON: %q", method, path, raw)
	}
	return resp.StatusCode, m
}

// start posts a job and returns its id.
func (a *jobAPI) start(t *testing.T, path, body string) string {
	t.Helper()
	code, m := a.call(t, http.MethodPost, path, keyA, body)
	if code != 200 || m["success"] != true {
		t.Fatalf("POST %s: %d %v", path, code, m)
	}
	id, _ := m["id"].(string)
	if m["url"] != a.url+path+"/"+id {
		t.Errorf("url = %v, want %s", m["url"], a.url+path+"/"+id)
	}
	return id
}

// wait polls a job's status until it is not scraping.
func (a *jobAPI) wait(t *testing.T, path string) map[string]any {
	t.Helper()
	var m map[string]any
	testenv.Eventually(t, 60*time.Second, func() bool {
		var code int
		if code, m = a.call(t, http.MethodGet, path, keyA, ""); code != 200 {
			t.Fatalf("GET %s: %d %v", path, code, m)
		}
		return m["status"] != "scraping"
	}, "%s still scraping", path)
	return m
}

func site(t *testing.T, o testsite.Options) (*testsite.Site, string) {
	s := testsite.New(o)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv.URL
}

func TestCrawlStatusPaging(t *testing.T) {
	_, target := site(t, testsite.Options{Pages: 40})
	for _, kind := range []string{"postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			api := newJobAPI(t, kind)
			id := api.start(t, "/v2/crawl", `{"url":"`+target+`/","limit":30,"sitemap":"skip","scrapeOptions":{"formats":["markdown","links"]}}`)
			final := api.wait(t, "/v2/crawl/"+id)
			if final["status"] != "completed" || final["success"] != true {
				t.Fatalf("final %v", final)
			}
			for _, k := range []string{"total", "completed", "creditsUsed", "expiresAt", "createdAt", "completedAt", "duration", "data"} {
				if _, ok := final[k]; !ok {
					t.Errorf("status lacks %s", k)
				}
			}
			if final["total"] != float64(30) {
				t.Errorf("total %v, want 30 (the limit)", final["total"])
			}
			// Walk the pages 7 documents at a time.
			seen := map[string]bool{}
			next := "/v2/crawl/" + id + "?limit=7"
			pages := 0
			for next != "" {
				code, m := api.call(t, http.MethodGet, next, keyA, "")
				if code != 200 {
					t.Fatalf("GET %s: %d", next, code)
				}
				data, _ := m["data"].([]any)
				if len(data) > 7 {
					t.Fatalf("page of %d documents, limit 7", len(data))
				}
				for _, d := range data {
					doc := d.(map[string]any)
					src := doc["metadata"].(map[string]any)["sourceURL"].(string)
					if seen[src] {
						t.Errorf("%s on two pages", src)
					}
					seen[src] = true
					if doc["markdown"] == nil || doc["links"] == nil {
						t.Errorf("%s lacks markdown or links", src)
					}
				}
				next, _ = m["next"].(string)
				if pages++; pages > 20 {
					t.Fatal("next never ends")
				}
			}
			docs, _ := api.st.Documents(t.Context(), id, 0, 1000)
			if len(seen) != len(docs) || len(docs) == 0 {
				t.Errorf("paged %d documents, job has %d", len(seen), len(docs))
			}
		})
	}
}

func TestCrawlRoutesErrorsCancelActive(t *testing.T) {
	_, target := site(t, testsite.Options{Pages: 40})
	_, slow := site(t, testsite.Options{Pages: 200, LinkDelay: 150 * time.Millisecond})
	api := newJobAPI(t, "postgres")
	id := api.start(t, "/v2/crawl", `{"url":"`+target+`/","sitemap":"skip"}`)
	api.wait(t, "/v2/crawl/"+id)

	code, m := api.call(t, http.MethodGet, "/v2/crawl/"+id+"/errors", keyA, "")
	if code != 200 {
		t.Fatalf("errors: %d %v", code, m)
	}
	errs, _ := m["errors"].([]any)
	blocked, _ := m["robotsBlocked"].([]any)
	if len(errs) != 2 || len(blocked) == 0 {
		t.Errorf("errors %v robotsBlocked %v: want the 500 page and the redirect loop, and /private/", errs, blocked)
	}
	for _, e := range errs {
		item := e.(map[string]any)
		for _, k := range []string{"id", "timestamp", "url", "code", "error"} {
			if item[k] == nil || item[k] == "" {
				t.Errorf("error item lacks %s: %v", k, item)
			}
		}
	}
	if _, ok := m["success"]; ok {
		t.Error("errors body has a success key; the reference's has none")
	}

	code, m = api.call(t, http.MethodDelete, "/v2/crawl/"+id, keyA, "")
	if code != 409 || m["error"] != "Crawl is already completed" {
		t.Errorf("cancel completed: %d %v", code, m)
	}
	code, m = api.call(t, http.MethodGet, "/v2/crawl/"+id, keyB, "")
	if code != 404 || m["error"] != "Job not found" {
		t.Errorf("other team: %d %v", code, m)
	}
	code, m = api.call(t, http.MethodGet, "/v2/crawl/not-a-uuid", keyA, "")
	if code != 400 || m["error"] != "Invalid job ID format. Job ID must be a valid UUID." {
		t.Errorf("bad id: %d %v", code, m)
	}
	code, _ = api.call(t, http.MethodGet, "/v2/batch/scrape/"+id, keyA, "")
	if code != 404 {
		t.Errorf("crawl id on the batch route: %d", code)
	}
	code, m = api.call(t, http.MethodGet, "/v2/crawl/"+id+"?skip=-1", keyA, "")
	if code != 400 {
		t.Errorf("skip=-1: %d %v", code, m)
	}

	running := api.start(t, "/v2/crawl", `{"url":"`+slow+`/","sitemap":"skip"}`)
	code, m = api.call(t, http.MethodGet, "/v2/crawl/active", keyA, "")
	crawls, _ := m["crawls"].([]any)
	if code != 200 || m["success"] != true || len(crawls) != 1 {
		t.Fatalf("active: %d %v", code, m)
	}
	c := crawls[0].(map[string]any)
	if c["id"] != running || c["url"] != slow+"/" || c["teamId"] == nil || c["created_at"] == nil {
		t.Errorf("active item %v", c)
	}
	if opts, _ := c["options"].(map[string]any); opts["scrapeOptions"] == nil || opts["sitemap"] != "skip" {
		t.Errorf("active options %v", c["options"])
	}
	if _, m = api.call(t, http.MethodGet, "/v2/crawl/ongoing", keyB, ""); len(m["crawls"].([]any)) != 0 {
		t.Errorf("team B sees team A's crawls: %v", m)
	}
	code, m = api.call(t, http.MethodDelete, "/v2/crawl/"+running, keyA, "")
	if code != 200 || m["status"] != "cancelled" {
		t.Fatalf("cancel: %d %v", code, m)
	}
	if _, ok := m["success"]; ok {
		t.Error("cancel body has a success key; the reference's has none")
	}
	if _, m = api.call(t, http.MethodGet, "/v2/crawl/"+running, keyA, ""); m["status"] != "cancelled" {
		t.Errorf("status after cancel %v", m["status"])
	}
	if _, m = api.call(t, http.MethodGet, "/v2/crawl/active", keyA, ""); len(m["crawls"].([]any)) != 0 {
		t.Errorf("cancelled crawl still active: %v", m)
	}
}

func TestCrawlValidation(t *testing.T) {
	api := newJobAPI(t, "sqlite")
	cases := []struct {
		body, code, msg string
		status          int
	}{
		{`{"url":"https://example.com","delay":61}`, "BAD_REQUEST", "The delay parameter is measured in seconds and cannot exceed 60 seconds.", 400},
		{`{"url":"https://example.com","includePaths":["("]}`, "BAD_REQUEST", "", 400},
		{`{"url":"https://example.com","limit":0}`, "BAD_REQUEST", "", 400},
		{`{"url":"https://example.com","sitemap":"sometimes"}`, "BAD_REQUEST", "", 400},
		{`{"url":"https://example.com","bogus":1}`, "BAD_REQUEST", "", 400},
		{`{"url":"https://example.com","scrapeOptions":{"formats":["nope"]}}`, "BAD_REQUEST", "", 400},
		{`{"url":"https://example.com","webhook":{"url":"ftp://x"}}`, "BAD_REQUEST", "", 400},
		{`{"url":"https://example.com","prompt":"only the blog"}`, "CRAWL_PROMPT_NOT_SUPPORTED", "", 400},
		{`{"limit":5}`, "BAD_REQUEST", "", 400},
		{`{"url":"https://example.com","zeroDataRetention":true}`, "ZDR_NOT_ENABLED", "", 403},
	}
	for _, c := range cases {
		code, m := api.call(t, http.MethodPost, "/v2/crawl", keyA, c.body)
		if code != c.status || m["code"] != c.code || (c.msg != "" && m["error"] != c.msg) {
			t.Errorf("%s: %d %v", c.body, code, m)
		}
	}
	code, m := api.call(t, http.MethodPost, "/v2/crawl", keyA, `{"url":"https://example.com","includePaths":["("]}`)
	if code != 400 || !strings.Contains(m["error"].(string), "missing closing )") {
		t.Errorf("bad regex should answer the compiler's message: %v", m)
	}
	code, m = api.call(t, http.MethodPost, "/v2/crawl/params-preview", keyA, `{"url":"https://example.com","prompt":"x"}`)
	if code != 501 || m["code"] != "CRAWL_PROMPT_NOT_SUPPORTED" {
		t.Errorf("params-preview: %d %v", code, m)
	}
}

func TestBatchRoutes(t *testing.T) {
	_, target := site(t, testsite.Options{Pages: 40})
	api := newJobAPI(t, "postgres")
	code, m := api.call(t, http.MethodPost, "/v2/batch/scrape", keyA, `{"urls":["`+target+`/about","not a url"]}`)
	if code != 400 {
		t.Errorf("strict URLs: %d %v", code, m)
	}
	code, m = api.call(t, http.MethodPost, "/v2/batch/scrape", keyA, `{"urls":["not a url"],"ignoreInvalidURLs":true}`)
	if code != 400 || m["error"] != "No valid URLs provided" {
		t.Errorf("no valid URLs: %d %v", code, m)
	}
	code, m = api.call(t, http.MethodPost, "/v2/batch/scrape", keyA, `{"urls":["`+target+`/"],"zeroDataRetention":true}`)
	if code != 403 || m["code"] != "ZDR_NOT_ENABLED" {
		t.Errorf("zero data retention without the team flag: %d %v", code, m)
	}
	code, m = api.call(t, http.MethodPost, "/v2/batch/scrape", keyA, `{"urls":[]}`)
	if code != 400 {
		t.Errorf("empty urls: %d %v", code, m)
	}
	code, m = api.call(t, http.MethodPost, "/v2/batch/scrape", keyA,
		`{"urls":["`+target+`/about","not a url","`+target+`/blog/post-1"],"ignoreInvalidURLs":true,"formats":["markdown"]}`)
	if code != 200 || m["success"] != true {
		t.Fatalf("lenient batch: %d %v", code, m)
	}
	if inv, _ := m["invalidURLs"].([]any); len(inv) != 1 || inv[0] != "not a url" {
		t.Errorf("invalidURLs %v", m["invalidURLs"])
	}
	id := m["id"].(string)
	st := api.wait(t, "/v2/batch/scrape/"+id)
	if st["status"] != "completed" || st["total"] != float64(2) || len(st["data"].([]any)) != 2 {
		t.Fatalf("batch status %v", st)
	}

	// appendToId adds URLs to the batch, which runs again.
	code, m = api.call(t, http.MethodPost, "/v2/batch/scrape", keyA, `{"urls":["`+target+`/docs/"],"appendToId":"`+id+`"}`)
	if code != 200 || m["id"] != id {
		t.Fatalf("append: %d %v", code, m)
	}
	st = api.wait(t, "/v2/batch/scrape/"+id)
	if st["total"] != float64(3) || len(st["data"].([]any)) != 3 {
		t.Errorf("after append: %v", st)
	}
	code, m = api.call(t, http.MethodPost, "/v2/batch/scrape", keyA, `{"urls":["`+target+`/"],"appendToId":"01a20000-0000-7000-8000-000000000000"}`)
	if code != 404 || m["error"] != "Job not found" {
		t.Errorf("append to unknown: %d %v", code, m)
	}
	code, _ = api.call(t, http.MethodPost, "/v2/batch/scrape", keyB, `{"urls":["`+target+`/"],"appendToId":"`+id+`"}`)
	if code != 404 {
		t.Errorf("append to another team's batch: %d", code)
	}

	// Idempotency keys: once per team, and only UUIDs.
	key := "0b6a4e2e-4b0e-4f53-9a53-5c0f2b0b6a4e"
	body := `{"urls":["` + target + `/about"]}`
	if code, m = api.call(t, http.MethodPost, "/v2/batch/scrape", keyA, body, "x-idempotency-key", key); code != 200 {
		t.Fatalf("first use of key: %d %v", code, m)
	}
	if code, m = api.call(t, http.MethodPost, "/v2/batch/scrape", keyA, body, "x-idempotency-key", key); code != 409 || m["error"] != "Idempotency key already used" {
		t.Errorf("reused key: %d %v", code, m)
	}
	if code, m = api.call(t, http.MethodPost, "/v2/batch/scrape", keyA, body, "x-idempotency-key", "nope"); code != 409 {
		t.Errorf("non-UUID key: %d %v", code, m)
	}
	if code, _ = api.call(t, http.MethodGet, "/v2/crawl/"+id, keyA, ""); code != 404 {
		t.Errorf("batch id on the crawl route: %d", code)
	}
	code, m = api.call(t, http.MethodGet, "/v2/batch/scrape/"+id+"/errors", keyA, "")
	if code != 200 || m["errors"] == nil || m["robotsBlocked"] == nil {
		t.Errorf("batch errors: %d %v", code, m)
	}
}

// watch dials the watcher of path with key as the subprotocol and collects
// messages until the server closes.
func watch(t *testing.T, api *jobAPI, path, key string) ([]map[string]any, websocket.StatusCode, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(api.url, "http")+path,
		&websocket.DialOptions{Subprotocols: []string{key}})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.CloseNow()
	proto := resp.Header.Get("Sec-WebSocket-Protocol")
	c.SetReadLimit(64 << 20)
	var msgs []map[string]any
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				return msgs, ce.Code, proto
			}
			t.Fatalf("read: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
}

func TestWatcher(t *testing.T) {
	_, target := site(t, testsite.Options{Pages: 40, LinkDelay: 10 * time.Millisecond})
	for _, kind := range []string{"postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			api := newJobAPI(t, kind)
			id := api.start(t, "/v2/crawl", `{"url":"`+target+`/","limit":25,"sitemap":"skip"}`)
			msgs, code, proto := watch(t, api, "/v2/crawl/"+id, keyA)
			if code != websocket.StatusNormalClosure {
				t.Errorf("close code %d, want 1000", code)
			}
			if proto != keyA {
				t.Errorf("accepted subprotocol %q, want the key echoed", proto)
			}
			if len(msgs) < 2 || msgs[0]["type"] != "catchup" || msgs[len(msgs)-1]["type"] != "done" {
				t.Fatalf("messages: first %v, last %v", msgs[0]["type"], msgs[len(msgs)-1]["type"])
			}
			got := map[string]bool{}
			catchup := msgs[0]["data"].(map[string]any)
			for _, d := range catchup["data"].([]any) {
				got[d.(map[string]any)["metadata"].(map[string]any)["sourceURL"].(string)] = true
			}
			for _, m := range msgs[1 : len(msgs)-1] {
				if m["type"] != "document" {
					t.Errorf("unexpected message %v", m["type"])
					continue
				}
				src := m["data"].(map[string]any)["metadata"].(map[string]any)["sourceURL"].(string)
				if got[src] {
					t.Errorf("%s sent twice", src)
				}
				got[src] = true
			}
			docs, _ := api.st.Documents(t.Context(), id, 0, 1000)
			if len(got) != len(docs) {
				t.Errorf("watcher sent %d documents, the crawl has %d", len(got), len(docs))
			}
			// A finished job: catchup with everything, then done.
			msgs, code, _ = watch(t, api, "/v2/crawl/"+id, keyA)
			if code != websocket.StatusNormalClosure || len(msgs) != 2 || len(msgs[0]["data"].(map[string]any)["data"].([]any)) != len(docs) {
				t.Errorf("watching a finished crawl: code %d, %d messages", code, len(msgs))
			}
			if _, code, _ = watch(t, api, "/v2/crawl/"+id, "fc-wrong"); code != 3000 {
				t.Errorf("bad key: close %d, want 3000", code)
			}
			if _, code, _ = watch(t, api, "/v2/crawl/"+id, keyB); code != 3003 {
				t.Errorf("other team: close %d, want 3003", code)
			}
			if _, code, _ = watch(t, api, "/v2/crawl/01a20000-0000-7000-8000-000000000000", keyA); code != websocket.StatusPolicyViolation {
				t.Errorf("unknown job: close %d, want 1008", code)
			}
		})
	}
}

func TestJobRoutesNotImplementedWithoutJobs(t *testing.T) {
	t.Parallel()
	s, _ := setup(t, &fakeScraper{})
	for _, p := range []string{"/v2/crawl", "/v2/batch/scrape"} {
		rec, m := do(t, s, http.MethodPost, p, goodKey, `{}`)
		if rec.Code != 501 || m["code"] != "NOT_IMPLEMENTED" {
			t.Errorf("%s: %d %v", p, rec.Code, m)
		}
	}
}

func TestCrawlWarnings(t *testing.T) {
	_, target := site(t, testsite.Options{Pages: 40})
	api := newJobAPI(t, "sqlite")
	// A start page whose links all lie outside its path: one result.
	id := api.start(t, "/v2/crawl", `{"url":"`+target+`/about","sitemap":"skip"}`)
	st := api.wait(t, "/v2/crawl/"+id)
	if w, _ := st["warning"].(string); !strings.HasPrefix(w, "Only 1 result(s) found.") || !strings.Contains(w, target+"/") {
		t.Errorf("warning %q", w)
	}
	// A crawl robots.txt limited says so.
	id = api.start(t, "/v2/crawl", `{"url":"`+target+`/","sitemap":"skip","limit":200}`)
	st = api.wait(t, "/v2/crawl/"+id)
	if w, _ := st["warning"].(string); !strings.Contains(w, "robots.txt") {
		t.Errorf("warning %q", w)
	}
}

func TestCrawlFailedForm(t *testing.T) {
	dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusBadGateway)
	}))
	t.Cleanup(dead.Close)
	api := newJobAPI(t, "sqlite")
	id := api.start(t, "/v2/crawl", `{"url":"`+dead.URL+`/","sitemap":"skip"}`)
	st := api.wait(t, "/v2/crawl/"+id)
	if st["status"] != "failed" || st["success"] != false || st["error"] == "" || st["total"] != float64(0) ||
		st["completed"] != float64(0) || len(st["data"].([]any)) != 0 || st["expiresAt"] == nil {
		t.Errorf("failed form %v", st)
	}
}

// TestCrawlLimitClampedToCredits checks that a crawl whose limit exceeds the
// team's credits runs with the credits as its limit and says so: a warning
// naming both numbers in the start response and in the status.
func TestCrawlLimitClampedToCredits(t *testing.T) {
	_, target := site(t, testsite.Options{Pages: 40})
	api := newJobAPIWith(t, "sqlite", true)
	if _, err := api.st.SetCredits(t.Context(), api.teams[keyA].ID, 5); err != nil {
		t.Fatal(err)
	}
	code, m := api.call(t, http.MethodPost, "/v2/crawl", keyA, `{"url":"`+target+`/","limit":30,"sitemap":"skip"}`)
	w, _ := m["warning"].(string)
	if code != 200 || m["success"] != true || !strings.Contains(w, "from 30 to 5 pages") || !strings.Contains(w, "5 credits remaining") {
		t.Fatalf("start: %d %v", code, m)
	}
	id, _ := m["id"].(string)
	st := api.wait(t, "/v2/crawl/"+id)
	if st["total"] != float64(5) {
		t.Errorf("total %v, want 5 (the credits)", st["total"])
	}
	if w, _ := st["warning"].(string); !strings.Contains(w, "from 30 to 5 pages") {
		t.Errorf("status warning %q", w)
	}

	// Within the credits: no warning, here or in the status.
	if _, err := api.st.SetCredits(t.Context(), api.teams[keyA].ID, 100); err != nil {
		t.Fatal(err)
	}
	code, m = api.call(t, http.MethodPost, "/v2/crawl", keyA, `{"url":"`+target+`/","limit":3,"sitemap":"skip"}`)
	if _, has := m["warning"]; code != 200 || has {
		t.Fatalf("start within credits: %d %v", code, m)
	}
	id, _ = m["id"].(string)
	st = api.wait(t, "/v2/crawl/"+id)
	if w, _ := st["warning"].(string); strings.Contains(w, "lowered") || st["total"] != float64(3) {
		t.Errorf("status within credits: total %v, warning %q", st["total"], w)
	}
}

// TestV1Crawl runs a crawl through the v1 routes on real jobs: the v1
// options are translated, the status pages link to /v1, and cancel and
// errors answer as on /v2.
func TestV1Crawl(t *testing.T) {
	_, target := site(t, testsite.Options{Pages: 40})
	api := newJobAPI(t, "sqlite")
	id := api.start(t, "/v1/crawl", `{"url":"`+target+`/","limit":6,"ignoreSitemap":true,"allowBackwardLinks":false,
		"scrapeOptions":{"formats":["markdown","links"],"parsePDF":false}}`)
	final := api.wait(t, "/v1/crawl/"+id)
	if final["status"] != "completed" || final["success"] != true || final["total"] != float64(6) {
		t.Fatalf("final %v", final)
	}
	seen := 0
	for next := "/v1/crawl/" + id + "?limit=4"; next != ""; {
		code, m := api.call(t, http.MethodGet, next, keyA, "")
		if code != 200 {
			t.Fatalf("GET %s: %d %v", next, code, m)
		}
		data, _ := m["data"].([]any)
		for _, d := range data {
			doc := d.(map[string]any)
			if md, _ := doc["markdown"].(string); md == "" || doc["links"] == nil {
				t.Errorf("document without markdown or links: %v", doc)
			}
		}
		seen += len(data)
		next, _ = m["next"].(string)
		if next != "" && !strings.HasPrefix(next, api.url+"/v1/crawl/"+id+"?skip=") {
			t.Fatalf("next %q does not stay on /v1", next)
		}
	}
	if seen != 6 {
		t.Errorf("paged through %d documents, want 6", seen)
	}
	if code, m := api.call(t, http.MethodGet, "/v1/crawl/"+id+"/errors", keyA, ""); code != 200 || m["errors"] == nil {
		t.Errorf("errors: %d %v", code, m)
	}
	if code, m := api.call(t, http.MethodGet, "/v1/crawl/active", keyA, ""); code != 200 || m["success"] != true || m["crawls"] == nil {
		t.Errorf("active: %d %v", code, m)
	}
	if code, m := api.call(t, http.MethodDelete, "/v1/crawl/"+id, keyA, ""); code != http.StatusConflict {
		t.Errorf("cancel a completed crawl: %d %v", code, m)
	}

	// maxDepth 0 (read as maxDiscoveryDepth): the start page alone.
	id = api.start(t, "/v1/crawl", `{"url":"`+target+`/","maxDepth":0,"ignoreSitemap":true}`)
	if final := api.wait(t, "/v1/crawl/"+id); final["total"] != float64(1) {
		t.Errorf("maxDepth 0: total %v", final["total"])
	}
	// v1 scrape options are validated as v2's, naming the field.
	code, m := api.call(t, http.MethodPost, "/v1/crawl", keyA, `{"url":"`+target+`/","scrapeOptions":{"formats":["pdf"]}}`)
	if code != 400 || !strings.Contains(fmt.Sprint(m["details"]), "scrapeOptions formats 0") {
		t.Errorf("bad scrapeOptions: %d %v", code, m)
	}
}

// TestV1BatchScrape runs a batch scrape through the v1 routes on real
// jobs, with v1 scrape options beside the URLs.
func TestV1BatchScrape(t *testing.T) {
	_, target := site(t, testsite.Options{Pages: 10})
	api := newJobAPI(t, "sqlite")
	id := api.start(t, "/v1/batch/scrape", `{"urls":["`+target+`/","`+target+`/about","not a url"],
		"formats":["markdown","links"],"parsePDF":false,"ignoreInvalidURLs":true}`)
	final := api.wait(t, "/v1/batch/scrape/"+id)
	if final["status"] != "completed" || final["total"] != float64(2) {
		t.Fatalf("final %v", final)
	}
	// The 1.x SDK polls a batch at /v1/crawl/{id}.
	if code, m := api.call(t, http.MethodGet, "/v1/crawl/"+id, keyA, ""); code != 200 || m["total"] != float64(2) {
		t.Errorf("batch status at /v1/crawl: %d %v", code, m)
	}
	if code, m := api.call(t, http.MethodGet, "/v1/crawl/"+uuid.NewString(), keyA, ""); code != 404 {
		t.Errorf("unknown job at /v1/crawl: %d %v", code, m)
	}
	data, _ := final["data"].([]any)
	if len(data) != 2 {
		t.Fatalf("%d documents, want 2", len(data))
	}
	for _, d := range data {
		doc := d.(map[string]any)
		if md, _ := doc["markdown"].(string); md == "" || doc["links"] == nil {
			t.Errorf("document without markdown or links: %v", doc)
		}
	}
	if code, m := api.call(t, http.MethodGet, "/v1/batch/scrape/"+id+"/errors", keyA, ""); code != 200 || m["errors"] == nil {
		t.Errorf("errors: %d %v", code, m)
	}
	code, m := api.call(t, http.MethodPost, "/v1/batch/scrape", keyA, `{"urls":["`+target+`/"],"formats":["screenshot@fullPage","pdf"]}`)
	if code != 400 || !strings.Contains(fmt.Sprint(m["details"]), "formats 1") {
		t.Errorf("bad format: %d %v", code, m)
	}
}
