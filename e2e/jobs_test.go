package e2e

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/firegate/firegate/internal/crawl/testsite"
	"github.com/firegate/firegate/internal/testenv"
	"github.com/firegate/firegate/internal/webhook"
)

// delivery is one webhook request the receiver got.
type delivery struct {
	path      string
	body      []byte
	signature string
	event     map[string]any
}

// hookReceiver records webhook deliveries.
type hookReceiver struct {
	mu         sync.Mutex
	deliveries []delivery
	arrived    chan struct{} // closed (and dropped) when a delivery arrives
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	d := delivery{path: r.URL.Path, body: body, signature: r.Header.Get("X-Firecrawl-Signature")}
	_ = json.Unmarshal(body, &d.event)
	h.mu.Lock()
	h.deliveries = append(h.deliveries, d)
	if h.arrived != nil {
		close(h.arrived)
		h.arrived = nil
	}
	h.mu.Unlock()
}

// wait returns the deliveries to path once n of type last have arrived,
// or what has arrived after timeout; woken by each delivery.
func (h *hookReceiver) wait(path, last string, n int, timeout time.Duration) []delivery {
	expired := time.After(timeout)
	for {
		h.mu.Lock()
		var got []delivery
		seen := 0
		for _, d := range h.deliveries {
			if d.path == path {
				got = append(got, d)
				if d.event["type"] == last {
					seen++
				}
			}
		}
		if h.arrived == nil {
			h.arrived = make(chan struct{})
		}
		arrived := h.arrived
		h.mu.Unlock()
		if seen >= n {
			return got
		}
		select {
		case <-arrived:
		case <-expired:
			return got
		}
	}
}

var signatureRE = regexp.MustCompile(`^sha256=[0-9a-f]{64}$`)

// checkSignatures checks each delivery's X-Firecrawl-Signature against an
// HMAC-SHA256 of the raw body computed here, and with webhook.Verify.
func checkSignatures(t *testing.T, secret string, ds []delivery) {
	t.Helper()
	for i, d := range ds {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write(d.body)
		want := "sha256=" + hex.EncodeToString(m.Sum(nil))
		if !signatureRE.MatchString(d.signature) || d.signature != want || !webhook.Verify(secret, d.body, d.signature) {
			t.Errorf("%s delivery %d (%v): signature %q, want %q", d.path, i, d.event["type"], d.signature, want)
		}
	}
}

// readOut decodes a JSON file the SDK tests left in dir.
func readOut(t *testing.T, dir, name string, v any) bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if err != nil {
		t.Errorf("the SDK test left no %s.json: %v", name, err)
		return false
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s.json: %v", name, err)
	}
	return true
}

// identities maps URLs of the site to its Identity terms, sorted.
func identities(s *testsite.Site, sp testsite.Spec, urls []string) []string {
	out := make([]string, len(urls))
	for i, u := range urls {
		out[i] = s.Identity(sp, u)
	}
	slices.Sort(out)
	return out
}

// TestJavaScriptSDKJobs runs the SDK's crawl, batch scrape, map and watcher
// (jobs.test.mjs: WebSocket path; watcher-poll.test.mjs: polling path)
// against the built server, then checks what the SDK saw against the test
// site's model, and the webhooks the server sent to a local receiver.
func TestJavaScriptSDKJobs(t *testing.T) {
	node := sdkNode(t, "@mendable/firecrawl-js")
	site := testsite.New(testsite.Options{Pages: 60})
	siteSrv := httptest.NewServer(site)
	t.Cleanup(siteSrv.Close)
	slow := testsite.New(testsite.Options{Pages: 60, LinkDelay: 500 * time.Millisecond})
	slowSrv := httptest.NewServer(slow)
	t.Cleanup(slowSrv.Close)
	hooks := &hookReceiver{}
	hookSrv := httptest.NewServer(hooks)
	t.Cleanup(hookSrv.Close)
	const secret = "e2e-secret"
	srv := startServer(t, "WEBHOOK_SECRET="+secret)

	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 75*time.Second)
	defer cancel()
	// --experimental-websocket gives Node 20 the global WebSocket the SDK
	// looks for (later versions have it anyway); watcher-poll.test.mjs
	// removes it again for itself.
	cmd := exec.CommandContext(ctx, node, "--experimental-websocket", "--no-warnings", "--test", "--test-reporter=spec",
		"jobs.test.mjs", "watcher-poll.test.mjs")
	cmd.Dir = "sdk"
	cmd.Env = append(os.Environ(), "API_URL="+srv.url, "API_KEY="+testKey,
		"SITE_URL="+siteSrv.URL, "SLOW_URL="+slowSrv.URL, "HOOK_URL="+hookSrv.URL, "OUT_DIR="+out)
	started := time.Now()
	nodeOut, err := cmd.CombinedOutput()
	t.Logf("node --test (%v):\n%s", time.Since(started).Round(time.Millisecond), nodeOut)
	if err != nil {
		t.Errorf("SDK jobs test failed: %v", err)
	}

	t.Run("crawl documents match the site", func(t *testing.T) {
		var limited struct {
			ID      string   `json:"id"`
			Sources []string `json:"sources"`
			Errors  []string `json:"errors"`
		}
		if readOut(t, out, "crawl-limit", &limited) {
			sp := testsite.Spec{Sitemap: "skip"}
			want := site.Expect(sp)
			got := identities(site, sp, limited.Sources)
			if len(got) != len(slices.Compact(slices.Clone(got))) {
				t.Errorf("limit 25: twin spellings of a page both crawled: %v", got)
			}
			for _, p := range got {
				if _, ok := slices.BinarySearch(want.Pages, p); !ok {
					t.Errorf("limit 25: %s is not a page the crawl may find", p)
				}
			}
			for _, p := range identities(site, sp, limited.Errors) {
				if !slices.Contains(want.Failed, p) {
					t.Errorf("limit 25: error for %s, which does not fail", p)
				}
			}
		}
		var all struct {
			Sources          []string `json:"sources"`
			Errors           []string `json:"errors"`
			RobotsBlocked    []string `json:"robotsBlocked"`
			NextWhileRunning bool     `json:"nextWhileRunning"`
		}
		if readOut(t, out, "crawl-all", &all) {
			sp := testsite.Spec{}
			want := site.Expect(sp)
			if diff := cmp.Diff(want.Pages, identities(site, sp, all.Sources)); diff != "" {
				t.Errorf("default crawl documents (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want.Failed, identities(site, sp, all.Errors)); diff != "" {
				t.Errorf("default crawl errors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want.RobotsBlocked, identities(site, sp, all.RobotsBlocked)); diff != "" {
				t.Errorf("default crawl robotsBlocked (-want +got):\n%s", diff)
			}
			t.Logf("a status read while the crawl ran had a next link: %v", all.NextWhileRunning)
		}
		var m struct {
			Links []string `json:"links"`
		}
		if readOut(t, out, "map", &m) {
			// A map reads the sitemaps and the start page's links.
			sp := testsite.Spec{IgnoreQueryParameters: true}
			want := []string{"/"}
			for _, l := range append(site.Links("/"), site.SitemapPages()...) {
				if strings.HasPrefix(l, "/") {
					want = append(want, site.Identity(sp, l))
				}
			}
			slices.Sort(want)
			want = slices.Compact(want)
			if diff := cmp.Diff(want, identities(site, sp, m.Links)); diff != "" {
				t.Errorf("map links (-want +got):\n%s\nlinks: %v", diff, m.Links)
			}
		}
	})

	t.Run("cancelled jobs stop fetching", func(t *testing.T) {
		// A page in flight at the cancel ends.
		testenv.Eventually(t, 10*time.Second, func() bool { return slow.InFlight() == 0 }, "the slow site still serving a request")
		before := slow.TotalHits()
		// An absence over time: the cancelled jobs' pages, queued, would
		// reach the site within a second (a page takes 500 ms).
		time.Sleep(time.Second)
		if after := slow.TotalHits(); after != before {
			t.Errorf("the slow site got %d requests in the second after its crawl and batch were cancelled", after-before)
		}
	})

	t.Run("crawl webhook", func(t *testing.T) {
		var limited struct {
			ID      string   `json:"id"`
			Sources []string `json:"sources"`
			Errors  []string `json:"errors"`
		}
		if !readOut(t, out, "crawl-limit", &limited) {
			return
		}
		ds := hooks.wait("/crawl", "crawl.completed", 1, 15*time.Second)
		checkSignatures(t, secret, ds)
		var types []string
		var pageSources, failedSources []string
		ids := map[string]bool{}
		for i, d := range ds {
			ev := d.event
			typ, _ := ev["type"].(string)
			types = append(types, typ)
			if ev["id"] != limited.ID {
				t.Errorf("event %d (%s): id %v, want the crawl's %s", i, typ, ev["id"], limited.ID)
			}
			if diff := cmp.Diff(map[string]any{"run": "sdk", "n": 7.0}, ev["metadata"]); diff != "" {
				t.Errorf("event %d (%s) metadata (-want +got):\n%s", i, typ, diff)
			}
			wid, _ := ev["webhookId"].(string)
			if wid == "" || ids[wid] {
				t.Errorf("event %d (%s): webhookId %q empty or reused", i, typ, wid)
			}
			ids[wid] = true
			data, _ := ev["data"].([]any)
			if typ != "crawl.page" {
				if ev["success"] != true || len(data) != 0 {
					t.Errorf("event %d (%s): success %v, %d data", i, typ, ev["success"], len(data))
				}
				continue
			}
			if len(data) != 1 {
				t.Errorf("page event %d: %d documents", i, len(data))
				continue
			}
			doc, _ := data[0].(map[string]any)
			md, _ := doc["metadata"].(map[string]any)
			src, _ := md["sourceURL"].(string)
			if ev["success"] == true {
				pageSources = append(pageSources, src)
				if s, _ := doc["markdown"].(string); s == "" {
					t.Errorf("page event %d (%s) has no markdown", i, src)
				}
			} else {
				failedSources = append(failedSources, src)
				if s, _ := ev["error"].(string); s == "" {
					t.Errorf("failed page event %d (%s) has no error", i, src)
				}
			}
		}
		if len(types) < 2 || types[0] != "crawl.started" || types[len(types)-1] != "crawl.completed" ||
			slices.Index(types[1:], "crawl.started") >= 0 || slices.Index(types, "crawl.completed") != len(types)-1 {
			t.Errorf("event order %s; want started, pages, completed", strings.Join(types, " "))
		}
		slices.Sort(pageSources)
		slices.Sort(failedSources)
		slices.Sort(limited.Sources)
		slices.Sort(limited.Errors)
		if diff := cmp.Diff(limited.Sources, pageSources); diff != "" {
			t.Errorf("successful crawl.page events vs the crawl's documents (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(limited.Errors, failedSources); diff != "" {
			t.Errorf("failed crawl.page events vs the crawl's errors (-want +got):\n%s", diff)
		}
	})

	t.Run("batch webhook filtered to completed", func(t *testing.T) {
		var batch struct {
			ID string `json:"id"`
		}
		if !readOut(t, out, "batch", &batch) {
			return
		}
		// Any other event would have been queued before completed, which
		// is delayed a second to land after them (crawljob's notify).
		ds := hooks.wait("/batch", "batch_scrape.completed", 1, 10*time.Second)
		checkSignatures(t, secret, ds)
		if len(ds) != 1 {
			types := make([]any, len(ds))
			for i, d := range ds {
				types[i] = d.event["type"]
			}
			t.Fatalf("batch webhook: %d deliveries %v, want only batch_scrape.completed", len(ds), types)
		}
		ev := ds[0].event
		if ev["type"] != "batch_scrape.completed" || ev["id"] != batch.ID || ev["success"] != true {
			t.Errorf("batch webhook event %v", ev)
		}
		if diff := cmp.Diff(map[string]any{"run": "batch"}, ev["metadata"]); diff != "" {
			t.Errorf("batch webhook metadata (-want +got):\n%s", diff)
		}
	})

	t.Run("server side", func(t *testing.T) {
		// The watchers' upgrades, seen by the server.
		upgrades := 0
		for _, line := range strings.Split(srv.logs.String(), "\n") {
			if strings.Contains(line, "status=101") {
				upgrades++
			}
		}
		if upgrades < 2 {
			t.Errorf("%d WebSocket upgrades in the server log, want the crawl and the batch watcher's", upgrades)
		}
		resp, err := http.Get(srv.url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		metrics, _ := io.ReadAll(resp.Body)
		for _, want := range []string{`firegate_job_pages_total{kind="crawl",state="done"}`, `firegate_job_pages_total{kind="batch",state="done"}`,
			`firegate_credits_charged_total{kind="crawl"}`, "firegate_queue_depth "} {
			if !strings.Contains(string(metrics), want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
	})
}
