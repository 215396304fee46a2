package httpapi

import (
	"context"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/firegate/firegate/internal/crawl/testsite"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/testenv"
)

// Tests of POST /v2/batch/scrape and the batch job routes against real
// components; the fixture is in crawl_test.go.

// refusedURL is a URL on a local port nothing listens on.
func refusedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/gone"
}

func TestBatchRequestValidation(t *testing.T) {
	_, target := serveSite(t, testsite.Options{Pages: 30})
	f := newJobsFixture(t, "sqlite", fxOptions{})
	good := `"` + target + `/about"`
	const unrecognized = "Unrecognized key in body -- please review the v2 API documentation for request body changes"
	for _, tc := range []struct {
		name   string
		key    string
		body   string
		status int
		code   string
		msg    string
		paths  []string
	}{
		{name: "urls missing", body: `{"formats":["markdown"]}`, status: 400, code: "BAD_REQUEST", paths: []string{"urls"}},
		{name: "urls empty", body: `{"urls":[]}`, status: 400, code: "BAD_REQUEST", paths: []string{"urls"}},
		{name: "urls empty, lenient", body: `{"urls":[],"ignoreInvalidURLs":true}`, status: 400, code: "BAD_REQUEST", paths: []string{"urls"}},
		{name: "urls a string", body: `{"urls":` + good + `}`, status: 400, code: "BAD_REQUEST", paths: []string{"urls"}},
		{name: "urls null", body: `{"urls":null}`, status: 400, code: "BAD_REQUEST", paths: []string{"urls"}},
		{name: "url item a number", body: `{"urls":[` + good + `,5]}`, status: 400, code: "BAD_REQUEST", paths: []string{"urls.1"}},
		{name: "url item a number, lenient", body: `{"urls":[5],"ignoreInvalidURLs":true}`, status: 400, code: "BAD_REQUEST", paths: []string{"urls.0"}},
		// The reference's quirk: strict unless ignoreInvalidURLs is literally true.
		{name: "one bad URL, omitted", body: `{"urls":[` + good + `,"not a url"]}`, status: 400, code: "BAD_REQUEST", msg: "Invalid URL", paths: []string{"urls.1"}},
		{name: "bad URLs, false", body: `{"urls":["ftp://example.com/x",` + good + `,"nope"],"ignoreInvalidURLs":false}`, status: 400,
			code: "BAD_REQUEST", msg: "Invalid URL", paths: []string{"urls.0", "urls.2"}},
		{name: "no valid URL, lenient", body: `{"urls":["not a url","ftp://example.com/"],"ignoreInvalidURLs":true}`, status: 400,
			code: "BAD_REQUEST", msg: "No valid URLs provided", paths: []string{"urls"}},
		{name: "ignoreInvalidURLs a string", body: `{"urls":[` + good + `],"ignoreInvalidURLs":"true"}`, status: 400, code: "BAD_REQUEST",
			paths: []string{"ignoreInvalidURLs"}},
		// Keys: the scrape options are top level; crawl's keys are not batch keys.
		{name: "unknown key", body: `{"urls":[` + good + `],"bogus":1}`, status: 400, code: "BAD_REQUEST", msg: unrecognized, paths: []string{"bogus"}},
		{name: "url key", body: `{"urls":[` + good + `],"url":` + good + `}`, status: 400, code: "BAD_REQUEST", msg: unrecognized, paths: []string{"url"}},
		{name: "scrapeOptions key", body: `{"urls":[` + good + `],"scrapeOptions":{}}`, status: 400, code: "BAD_REQUEST", msg: unrecognized,
			paths: []string{"scrapeOptions"}},
		{name: "crawl key", body: `{"urls":[` + good + `],"limit":5}`, status: 400, code: "BAD_REQUEST", msg: unrecognized, paths: []string{"limit"}},
		{name: "bad format", body: `{"urls":[` + good + `],"formats":["nope"]}`, status: 400, code: "BAD_REQUEST",
			msg: unknownFormat([]any{"formats", 0}, "nope")},
		{name: "timeout too small", body: `{"urls":[` + good + `],"timeout":10}`, status: 400, code: "BAD_REQUEST", paths: []string{"timeout"}},
		{name: "maxConcurrency 0", body: `{"urls":[` + good + `],"maxConcurrency":0}`, status: 400, code: "BAD_REQUEST", paths: []string{"maxConcurrency"}},
		{name: "appendToId not a UUID", body: `{"urls":[` + good + `],"appendToId":"nope"}`, status: 400, code: "BAD_REQUEST",
			msg: "appendToId must be a UUID", paths: []string{"appendToId"}},
		{name: "appendToId a number", body: `{"urls":[` + good + `],"appendToId":5}`, status: 400, code: "BAD_REQUEST", paths: []string{"appendToId"}},
		{name: "appendToId unknown", body: `{"urls":[` + good + `],"appendToId":"` + unknownJobID + `"}`, status: 404, code: "NOT_FOUND", msg: "Job not found"},
		{name: "webhook bad", body: `{"urls":[` + good + `],"webhook":{"url":"mailto:x@example.com"}}`, status: 400, code: "BAD_REQUEST",
			msg: "webhook.url: must be an absolute http or https URL", paths: []string{"webhook"}},
		{name: "zdr without the team flag", body: `{"urls":[` + good + `],"zeroDataRetention":true}`, status: 403, code: "ZDR_NOT_ENABLED"},
		{name: "malformed JSON", body: `{"urls":[`, status: 400, code: "BAD_REQUEST_INVALID_JSON", msg: "Bad request, malformed JSON"},
		// Accepted bodies.
		{name: "zdr with the team flag", key: fxKeyZDR, body: `{"urls":[` + good + `],"zeroDataRetention":true}`, status: 200},
		{name: "webhook and options", body: `{"urls":[` + good + `],"formats":["markdown","links"],"onlyMainContent":false,` +
			`"maxConcurrency":3,"webhook":"https://hooks.example.com/b","origin":"test"}`, status: 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := tc.key
			if key == "" {
				key = fxKeyOne
			}
			code, m := f.send(t, http.MethodPost, "/v2/batch/scrape", key, tc.body)
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
			if msg != "" && m["error"] != msg {
				t.Errorf("error %q, want %q", m["error"], msg)
			}
			if tc.paths != nil {
				if diff := cmp.Diff(tc.paths, fieldPaths(m)); diff != "" {
					t.Errorf("details paths (-want +got)\n%s\n%v", diff, m["details"])
				}
			}
		})
	}
}

func TestBatchStartResponses(t *testing.T) {
	_, target := serveSite(t, testsite.Options{Pages: 30})
	f := newJobsFixture(t, "sqlite", fxOptions{})
	// Strict mode: no invalidURLs key.
	_, m := f.send(t, http.MethodPost, "/v2/batch/scrape", fxKeyOne, `{"urls":["`+target+`/about"]}`)
	id, _ := m["id"].(string)
	if diff := cmp.Diff(map[string]any{"success": true, "id": id, "url": f.base + "/v2/batch/scrape/" + id}, m); diff != "" {
		t.Errorf("strict (-want +got)\n%s", diff)
	}
	// Lenient mode always lists them, even when there are none.
	_, m = f.send(t, http.MethodPost, "/v2/batch/scrape", fxKeyOne, `{"urls":["`+target+`/about"],"ignoreInvalidURLs":true}`)
	id, _ = m["id"].(string)
	want := map[string]any{"success": true, "id": id, "url": f.base + "/v2/batch/scrape/" + id, "invalidURLs": []any{}}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("lenient, all valid (-want +got)\n%s", diff)
	}
	// A scheme-less URL is fetched over http.
	host := strings.TrimPrefix(target, "http://")
	id = f.start(t, "/v2/batch/scrape", `{"urls":["`+host+`/about"]}`)
	st := f.waitDone(t, "/v2/batch/scrape/"+id)
	if got := sourceURLs(t, dataOf(t, st)); len(got) != 1 || got[0] != target+"/about" {
		t.Errorf("scheme-less URL scraped as %v", got)
	}
}

func TestBatchScrapeLifecycle(t *testing.T) {
	_, target := serveSite(t, testsite.Options{Pages: 30})
	for _, kind := range fxStores {
		t.Run(kind, func(t *testing.T) {
			f := newJobsFixture(t, kind, fxOptions{})
			refused := refusedURL(t)
			valid := []string{target + "/about", target + "/blog/post-1", target + testsite.PathError, refused}
			code, m := f.send(t, http.MethodPost, "/v2/batch/scrape", fxKeyOne, `{"urls":["`+valid[0]+`","not a url","`+valid[1]+
				`","ftp://example.com/x","`+valid[2]+`","`+valid[3]+`","`+valid[0]+`"],"ignoreInvalidURLs":true,"formats":["markdown","html"]}`)
			if code != 200 {
				t.Fatalf("start: %d %v", code, m)
			}
			id, _ := m["id"].(string)
			want := map[string]any{"success": true, "id": id, "url": f.base + "/v2/batch/scrape/" + id,
				"invalidURLs": []any{"not a url", "ftp://example.com/x"}}
			if diff := cmp.Diff(want, m); diff != "" {
				t.Errorf("start response (-want +got)\n%s", diff)
			}
			path := "/v2/batch/scrape/" + id
			st := f.waitDone(t, path)
			checkStatusShape(t, st)
			if _, ok := st["warning"]; ok {
				t.Errorf("a batch has no crawl warning: %v", st["warning"])
			}
			// The repeated URL is scraped once; the refused one fails; the 500
			// page is a document (a batch reports what the page answered).
			if st["status"] != "completed" || st["success"] != true || st["total"] != float64(4) || st["completed"] != float64(4) ||
				st["creditsUsed"] != float64(3) {
				t.Errorf("final status %v", st)
			}
			data := dataOf(t, st)
			got := sourceURLs(t, data)
			sort.Strings(got)
			wantDocs := []string{valid[0], valid[1], valid[2]}
			sort.Strings(wantDocs)
			if diff := cmp.Diff(wantDocs, got); diff != "" {
				t.Errorf("documents (-want +got)\n%s", diff)
			}
			for _, d := range data {
				doc, _ := d.(map[string]any)
				md, _ := doc["metadata"].(map[string]any)
				if doc["markdown"] == nil || doc["html"] == nil {
					t.Errorf("%s lacks a requested format", md["sourceURL"])
				}
				wantCode := float64(200)
				if md["sourceURL"] == valid[2] {
					wantCode = 500
				}
				if md["statusCode"] != wantCode {
					t.Errorf("%s: statusCode %v, want %v", md["sourceURL"], md["statusCode"], wantCode)
				}
			}
			errs := f.status(t, path+"/errors", fxKeyOne)
			items, _ := errs["errors"].([]any)
			if len(items) != 1 {
				t.Fatalf("errors %v, want the refused URL", errs)
			}
			item, _ := items[0].(map[string]any)
			if item["url"] != refused || item["code"] == "" || item["error"] == "" || item["id"] == "" || item["timestamp"] == nil {
				t.Errorf("error item %v", item)
			}
			if diff := cmp.Diff([]any{}, errs["robotsBlocked"]); diff != "" {
				t.Errorf("robotsBlocked (-want +got)\n%s", diff)
			}
			// Paging uses the batch path.
			page := f.status(t, path+"?limit=2", fxKeyOne)
			if len(dataOf(t, page)) != 2 || page["next"] != f.base+path+"?skip=2&limit=2" {
				t.Errorf("first page: %d documents, next %v", len(dataOf(t, page)), page["next"])
			}
			page = f.status(t, path+"?skip=2&limit=2", fxKeyOne)
			if len(dataOf(t, page)) != 1 || page["next"] != nil {
				t.Errorf("last page: %d documents, next %v", len(dataOf(t, page)), page["next"])
			}
		})
	}
}

func TestBatchAppendToID(t *testing.T) {
	_, target := serveSite(t, testsite.Options{Pages: 30})
	f := newJobsFixture(t, "postgres", fxOptions{})
	id := f.start(t, "/v2/batch/scrape", `{"urls":["`+target+`/about","`+target+`/blog/post-1"]}`)
	path := "/v2/batch/scrape/" + id
	first := f.waitDone(t, path)
	if first["total"] != float64(2) || len(dataOf(t, first)) != 2 {
		t.Fatalf("first run %v", first)
	}
	firstDocs := sourceURLs(t, dataOf(t, first))

	// Appending reopens the batch; the new documents follow the old ones.
	code, m := f.send(t, http.MethodPost, "/v2/batch/scrape", fxKeyOne,
		`{"urls":["`+target+`/docs/","bad url","`+target+`/blog/post-2"],"appendToId":"`+id+`","ignoreInvalidURLs":true}`)
	want := map[string]any{"success": true, "id": id, "url": f.base + path, "invalidURLs": []any{"bad url"}}
	if diff := cmp.Diff(want, m); code != 200 || diff != "" {
		t.Fatalf("append: %d (-want +got)\n%s", code, diff)
	}
	second := f.waitStatus(t, path, "the appended URLs", func(m map[string]any) bool {
		return m["status"] == "completed" && m["completed"] == float64(4)
	})
	checkStatusShape(t, second)
	docs := sourceURLs(t, dataOf(t, second))
	if second["total"] != float64(4) || len(docs) != 4 || second["creditsUsed"] != float64(4) {
		t.Fatalf("after append %v", second)
	}
	if diff := cmp.Diff(firstDocs, docs[:2]); diff != "" {
		t.Errorf("the first documents moved (-before +after)\n%s", diff)
	}
	appended := docs[2:]
	sort.Strings(appended)
	if diff := cmp.Diff([]string{target + "/blog/post-2", target + "/docs/"}, appended); diff != "" {
		t.Errorf("appended documents (-want +got)\n%s", diff)
	}
	if !parseISO(t, "completedAt", second["completedAt"]).After(parseISO(t, "completedAt", first["completedAt"])) {
		t.Errorf("completedAt %v not after the first completion %v", second["completedAt"], first["completedAt"])
	}

	// URLs the batch already has add nothing, and leave it completed.
	code, m = f.send(t, http.MethodPost, "/v2/batch/scrape", fxKeyOne, `{"urls":["`+target+`/about"],"appendToId":"`+id+`"}`)
	if code != 200 || m["id"] != id {
		t.Fatalf("append a known URL: %d %v", code, m)
	}
	if st := f.status(t, path, fxKeyOne); st["status"] != "completed" || st["total"] != float64(4) || len(dataOf(t, st)) != 4 {
		t.Errorf("after appending a known URL: status %v total %v, %d documents", st["status"], st["total"], len(dataOf(t, st)))
	}

	// Jobs that are not this team's batches.
	crawlID := f.start(t, "/v2/crawl", `{"url":"`+target+`/","limit":1}`)
	for _, tc := range []struct{ name, key, id string }{
		{"unknown", fxKeyOne, unknownJobID},
		{"another team's batch", fxKeyTwo, id},
		{"a crawl", fxKeyOne, crawlID},
	} {
		code, m := f.send(t, http.MethodPost, "/v2/batch/scrape", tc.key, `{"urls":["`+target+`/"],"appendToId":"`+tc.id+`"}`)
		if code != 404 || m["error"] != "Job not found" || m["success"] != false {
			t.Errorf("append to %s: %d %v", tc.name, code, m)
		}
	}
	if st := f.status(t, path, fxKeyOne); st["total"] != float64(4) {
		t.Errorf("a refused append changed the batch: total %v", st["total"])
	}
}

func TestBatchAppendWhileRunning(t *testing.T) {
	g := newGatedSite(t, testsite.Options{Pages: 30})
	f := newJobsFixture(t, "sqlite", fxOptions{})
	defer g.open()
	id := f.start(t, "/v2/batch/scrape", `{"urls":["`+g.url+`/about","`+g.url+`/blog/"]}`)
	path := "/v2/batch/scrape/" + id
	testenv.Eventually(t, time.Minute, func() bool { return g.arrivals() == 2 }, "still waiting for both pages at the gate")
	code, m := f.send(t, http.MethodPost, "/v2/batch/scrape", fxKeyOne, `{"urls":["`+g.url+`/docs/"],"appendToId":"`+id+`"}`)
	if code != 200 || m["id"] != id {
		t.Fatalf("append: %d %v", code, m)
	}
	st := f.status(t, path, fxKeyOne)
	if st["status"] != "scraping" || st["total"] != float64(3) || st["completed"] != float64(0) {
		t.Errorf("running batch after append: %v", st)
	}
	g.open()
	st = f.waitDone(t, path)
	got := sourceURLs(t, dataOf(t, st))
	sort.Strings(got)
	if diff := cmp.Diff([]string{g.url + "/about", g.url + "/blog/", g.url + "/docs/"}, got); diff != "" || st["status"] != "completed" {
		t.Errorf("status %v; documents (-want +got)\n%s", st["status"], diff)
	}
}

// statusHook is a JobStore that calls before ahead of every SetJobStatus.
type statusHook struct {
	store.JobStore
	before func(id string, status string)
}

func (h *statusHook) SetJobStatus(ctx context.Context, id string, from []string, status, errMsg string) (bool, error) {
	h.before(id, status)
	return h.JobStore.SetJobStatus(ctx, id, from, status, errMsg)
}

func TestBatchAppendRacingCompletion(t *testing.T) {
	_, target := serveSite(t, testsite.Options{Pages: 30})
	// The append lands after the batch's last page finished but before the
	// batch is marked completed: its URL must still be scraped.
	var (
		f        *jobsFixture
		once     sync.Once
		appended = make(chan string, 1)
	)
	hook := func(id, status string) {
		if status != store.JobCompleted {
			return
		}
		once.Do(func() {
			body := `{"urls":["` + target + `/blog/"],"appendToId":"` + id + `"}`
			req, _ := http.NewRequest(http.MethodPost, f.base+"/v2/batch/scrape", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+fxKeyOne)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				appended <- err.Error()
				return
			}
			resp.Body.Close()
			appended <- resp.Status
		})
	}
	f = newJobsFixture(t, "sqlite", fxOptions{wrapJobs: func(js store.JobStore) store.JobStore {
		return &statusHook{JobStore: js, before: hook}
	}})
	id := f.start(t, "/v2/batch/scrape", `{"urls":["`+target+`/about"]}`)
	path := "/v2/batch/scrape/" + id
	if got := <-appended; got != "200 OK" {
		t.Fatalf("append: %s", got)
	}
	st := f.waitStatus(t, path, "the appended page", func(m map[string]any) bool {
		return m["completed"] == float64(2) && m["status"] == "completed"
	})
	got := sourceURLs(t, dataOf(t, st))
	sort.Strings(got)
	if diff := cmp.Diff([]string{target + "/about", target + "/blog/"}, got); diff != "" || st["status"] != "completed" || st["total"] != float64(2) {
		t.Errorf("status %v total %v; documents (-want +got)\n%s", st["status"], st["total"], diff)
	}
}

func TestBatchIdempotencyKey(t *testing.T) {
	_, target := serveSite(t, testsite.Options{Pages: 30})
	f := newJobsFixture(t, "sqlite", fxOptions{})
	const key = "0b6a4e2e-4b0e-4f53-9a53-5c0f2b0b6a4e"
	body := `{"urls":["` + target + `/about"]}`
	used := map[string]any{"success": false, "code": "IDEMPOTENCY_KEY_USED", "error": "Idempotency key already used"}
	if code, m := f.send(t, http.MethodPost, "/v2/batch/scrape", fxKeyOne, body, "x-idempotency-key", key); code != 200 {
		t.Fatalf("first use: %d %v", code, m)
	}
	for _, tc := range []struct{ name, path, key, body, idem string }{
		{"same request", "/v2/batch/scrape", fxKeyOne, body, key},
		{"another body", "/v2/batch/scrape", fxKeyOne, `{"urls":["` + target + `/blog/"]}`, key},
		{"a crawl", "/v2/crawl", fxKeyOne, `{"url":"` + target + `/","limit":1}`, key},
		{"not a UUID", "/v2/batch/scrape", fxKeyOne, body, "not-a-uuid"},
		{"not a UUID on a crawl", "/v2/crawl", fxKeyOne, `{"url":"` + target + `/","limit":1}`, "12345"},
	} {
		code, m := f.send(t, http.MethodPost, tc.path, tc.key, tc.body, "x-idempotency-key", tc.idem)
		if diff := cmp.Diff(used, m); code != 409 || diff != "" {
			t.Errorf("%s: %d (-want +got)\n%s", tc.name, code, diff)
		}
	}
	// Keys are per team.
	if code, m := f.send(t, http.MethodPost, "/v2/batch/scrape", fxKeyTwo, body, "x-idempotency-key", key); code != 200 {
		t.Errorf("another team's first use: %d %v", code, m)
	}
	// A crawl's key is used up the same way.
	const crawlKey = "5d9c1a2e-8a51-4c8e-a0c1-6b0f1e7d2c3b"
	crawlBody := `{"url":"` + target + `/","limit":1}`
	if code, m := f.send(t, http.MethodPost, "/v2/crawl", fxKeyOne, crawlBody, "x-idempotency-key", crawlKey); code != 200 {
		t.Fatalf("crawl first use: %d %v", code, m)
	}
	if code, m := f.send(t, http.MethodPost, "/v2/crawl", fxKeyOne, crawlBody, "x-idempotency-key", crawlKey); code != 409 || m["error"] != "Idempotency key already used" {
		t.Errorf("crawl reuse: %d %v", code, m)
	}
}

func TestBatchJobRoutes(t *testing.T) {
	g := newGatedSite(t, testsite.Options{Pages: 30})
	_, target := serveSite(t, testsite.Options{Pages: 30})
	f := newJobsFixture(t, "postgres", fxOptions{})
	defer g.open()

	// Cancel a running batch: one page at a time, one at the gate.
	urls := []string{"/about", "/blog/", "/docs/", "/products/", "/deep/1", "/deep/2"}
	list := make([]string, len(urls))
	for i, u := range urls {
		list[i] = `"` + g.url + u + `"`
	}
	id := f.start(t, "/v2/batch/scrape", `{"urls":[`+strings.Join(list, ",")+`],"maxConcurrency":1}`)
	path := "/v2/batch/scrape/" + id
	testenv.Eventually(t, time.Minute, func() bool { return g.arrivals() == 1 }, "still waiting for a page at the gate")
	code, m := f.send(t, http.MethodDelete, path, fxKeyOne, "")
	if diff := cmp.Diff(map[string]any{"status": "cancelled"}, m); code != 200 || diff != "" {
		t.Fatalf("cancel: %d (-want +got)\n%s", code, diff)
	}
	if st := f.status(t, path, fxKeyOne); st["status"] != "cancelled" || st["completedAt"] == nil {
		t.Errorf("status after cancel %v", st)
	}
	g.open()
	testenv.Eventually(t, time.Minute, func() bool { return f.activePageJobs(t) == 0 }, "still waiting for the queue to drain")
	if n := g.arrivals(); n != 1 {
		t.Errorf("%d page requests, want only the one in flight at the cancel", n)
	}
	st := f.status(t, path, fxKeyOne)
	if st["status"] != "cancelled" || len(dataOf(t, st)) != 1 || st["total"] != float64(len(urls)) {
		t.Errorf("after the queue drained: %v", st)
	}

	// Cancel a completed batch.
	done := f.start(t, "/v2/batch/scrape", `{"urls":["`+target+`/about"]}`)
	f.waitDone(t, "/v2/batch/scrape/"+done)
	code, m = f.send(t, http.MethodDelete, "/v2/batch/scrape/"+done, fxKeyOne, "")
	if code != 409 || m["error"] != "Crawl is already completed" {
		t.Errorf("cancel completed batch: %d %v", code, m)
	}

	// Batch ids on crawl routes and crawl ids on batch routes are unknown.
	crawlID := f.start(t, "/v2/crawl", `{"url":"`+target+`/","limit":1}`)
	f.waitDone(t, "/v2/crawl/"+crawlID)
	for _, r := range []struct{ method, path string }{
		{http.MethodGet, "/v2/crawl/" + done},
		{http.MethodDelete, "/v2/crawl/" + done},
		{http.MethodGet, "/v2/crawl/" + done + "/errors"},
		{http.MethodGet, "/v2/batch/scrape/" + crawlID},
		{http.MethodDelete, "/v2/batch/scrape/" + crawlID},
		{http.MethodGet, "/v2/batch/scrape/" + crawlID + "/errors"},
		{http.MethodGet, "/v2/batch/scrape/" + done + "/errors"},
	} {
		code, m := f.send(t, r.method, r.path, fxKeyOne, "")
		wantCode := 404
		if r.path == "/v2/batch/scrape/"+done+"/errors" {
			wantCode = 200
		}
		if code != wantCode || (wantCode == 404 && m["error"] != "Job not found") {
			t.Errorf("%s %s: %d %v", r.method, r.path, code, m)
		}
	}
	// Another team's batch, and malformed ids.
	for _, r := range []struct{ method, path string }{
		{http.MethodGet, path}, {http.MethodDelete, path}, {http.MethodGet, path + "/errors"},
	} {
		if code, m := f.send(t, r.method, r.path, fxKeyTwo, ""); code != 404 || m["error"] != "Job not found" {
			t.Errorf("team two %s %s: %d %v", r.method, r.path, code, m)
		}
	}
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		code, m := f.send(t, method, "/v2/batch/scrape/not-a-uuid", fxKeyOne, "")
		if code != 400 || m["error"] != "Invalid job ID format. Job ID must be a valid UUID." {
			t.Errorf("%s malformed id: %d %v", method, code, m)
		}
	}
	// The reference does not check the id on the batch errors route: an id
	// that is not a UUID is simply not found.
	if code, m := f.send(t, http.MethodGet, "/v2/batch/scrape/not-a-uuid/errors", fxKeyOne, ""); code != 404 || m["error"] != "Job not found" {
		t.Errorf("batch errors, malformed id: %d %v", code, m)
	}
}
