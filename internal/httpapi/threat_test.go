package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/search/searxngtest"
	"github.com/firegate/firegate/internal/testenv"
	"github.com/firegate/firegate/internal/threat"
)

// blocklist writes an operator blocklist in hosts-file form and returns
// its checker.
func blocklist(t *testing.T, hosts ...string) *threat.Checker {
	t.Helper()
	var b strings.Builder
	b.WriteString("# operator list\n127.0.0.1 localhost\n")
	for _, h := range hosts {
		fmt.Fprintf(&b, "0.0.0.0 %s\n", h)
	}
	path := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := threat.New(threat.Options{BlocklistFile: path, Log: testenv.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func wantBlocked(t *testing.T, what string, status int, got map[string]any, mention string) {
	t.Helper()
	msg, _ := got["error"].(string)
	if status != http.StatusForbidden || got["success"] != false || got["code"] != "unsafe_domain_blocked" || !strings.Contains(msg, mention) {
		t.Errorf("%s: %d %v, want 403 unsafe_domain_blocked mentioning %q", what, status, got, mention)
	}
}

func TestThreatScrapeAndMap(t *testing.T) {
	t.Parallel()
	site := mapSite(t)
	b := setupBilled(t, LimitDefaults{})
	log := testenv.Logger(t)
	checker := blocklist(t, "malware-drop.example")
	b.srv.threat = checker
	fc := fetch.New(fetch.Options{AllowPrivate: true}, log)
	t.Cleanup(fc.CloseIdleConnections)
	b.srv.scraper = scrape.New(scrape.Config{Fetcher: fc, Threat: checker, Log: log})
	b.srv.mapper = realMapper(t, true)
	ctx := context.Background()
	if _, err := b.st.SetCredits(ctx, b.team.ID, 100); err != nil {
		t.Fatal(err)
	}
	post := func(path, body string) (int, map[string]any) {
		rec, got := do(t, b.srv, http.MethodPost, path, b.key, body)
		return rec.Code, got
	}
	balance := func() int64 {
		bal, err := b.st.CreditBalance(ctx, b.team.ID)
		if err != nil {
			t.Fatal(err)
		}
		return bal.Remaining
	}

	// The operator's list applies without any threatProtection.
	code, got := post("/v2/scrape", `{"url":"https://shop.malware-drop.example/login"}`)
	wantBlocked(t, "scrape, operator list", code, got, "malware-drop.example")
	code, got = post("/v2/scrape", `{"url":"`+site.URL+`/","threatProtection":{"blacklist":["127.0.0.1"]}}`)
	wantBlocked(t, "scrape, blacklist", code, got, "127.0.0.1")
	code, got = post("/v2/scrape", `{"url":"`+site.URL+`/","threatProtection":{"mode":"off"}}`)
	if code != http.StatusForbidden || got["code"] != "FORBIDDEN" {
		t.Errorf("mode off under an enforced list: %d %v", code, got)
	}
	if bal := balance(); bal != 100 {
		t.Errorf("refused requests were charged: balance %d", bal)
	}
	// Allowed with a scan: 1 + 2 credits.
	code, got = post("/v2/scrape", `{"url":"`+site.URL+`/","threatProtection":{"blockedTlds":["zip"]}}`)
	if code != http.StatusOK {
		t.Fatalf("allowed scrape: %d %v", code, got)
	}
	if bal := balance(); bal != 97 {
		t.Errorf("balance after a scanned scrape = %d, want 97", bal)
	}

	code, got = post("/v2/map", `{"url":"`+site.URL+`","threatProtection":{"blacklist":["127.0.0.1"]}}`)
	wantBlocked(t, "map", code, got, "127.0.0.1")
	// The home page links to other.example.org: left out when blacklisted.
	code, got = post("/v2/map", `{"url":"`+site.URL+`","allowExternalLinks":true}`)
	if code != 200 || !strings.Contains(fmt.Sprint(got["links"]), "other.example.org") {
		t.Fatalf("map without threat protection: %d %v", code, got)
	}
	code, got = post("/v2/map", `{"url":"`+site.URL+`","allowExternalLinks":true,"threatProtection":{"blacklist":["other.example.org"]}}`)
	if code != 200 || strings.Contains(fmt.Sprint(got["links"]), "other.example.org") || !strings.Contains(fmt.Sprint(got["links"]), "/pricing") {
		t.Errorf("map with other.example.org blacklisted: %d %v", code, got)
	}
	if bal := balance(); bal != 97-1-3 {
		t.Errorf("balance after two maps, one scanned = %d, want %d", bal, 97-1-3)
	}
}

func TestThreatSearch(t *testing.T) {
	t.Parallel()
	site := searchSite(t)
	f := setupSearch(t, true, func(q url.Values) searxngtest.Answer {
		return searxngtest.Answer{Results: []searxngtest.Result{
			{URL: site.URL + "/lamp", Title: "Lamp", Score: 3},
			{URL: "https://login.malware-drop.example/", Title: "Free lamps", Score: 2},
			{URL: "https://lamps.example.zip/", Title: "Lamp archive", Score: 1},
		}}
	})
	f.srv.threat = blocklist(t, "malware-drop.example")
	if _, err := f.st.SetCredits(context.Background(), f.team.ID, 100); err != nil {
		t.Fatal(err)
	}
	urls := func(got map[string]any) string {
		data, _ := got["data"].(map[string]any)
		return fmt.Sprint(data["web"])
	}
	code, got := f.post(t, `{"query":"lamp"}`)
	if code != 200 || strings.Contains(urls(got), "malware-drop") || !strings.Contains(urls(got), "lamps.example.zip") {
		t.Fatalf("operator list: %d %v", code, got)
	}
	code, got = f.post(t, `{"query":"lamp","threatProtection":{"blockedTlds":["zip"]}}`)
	if code != 200 || strings.Contains(urls(got), ".zip") || !strings.Contains(urls(got), "/lamp") {
		t.Fatalf("blocked TLD: %d %v", code, got)
	}
	// 2 for the results, 2 per scanned result.
	if got["creditsUsed"] != float64(2+2*1) {
		t.Errorf("creditsUsed = %v, want 4", got["creditsUsed"])
	}
	// In scrapeOptions: the results are filtered and scraped with it.
	code, got = f.post(t, `{"query":"lamp","scrapeOptions":{"formats":["markdown"],"threatProtection":{"blacklist":["*.example.zip"]}}}`)
	if code != 200 || strings.Contains(urls(got), ".zip") || !strings.Contains(urls(got), "forty years") {
		t.Fatalf("scrapeOptions: %d %v", code, got)
	}
}

func TestThreatCrawlAndBatch(t *testing.T) {
	t.Parallel()
	site := searchSite(t)
	f := newJobsFixture(t, "sqlite", fxOptions{threat: blocklist(t, "malware-drop.example")})
	code, got := f.send(t, http.MethodPost, "/v2/crawl", fxKeyOne, `{"url":"https://malware-drop.example/"}`)
	wantBlocked(t, "crawl", code, got, "malware-drop.example")
	code, got = f.send(t, http.MethodPost, "/v2/crawl", fxKeyOne, `{"url":"`+site.URL+`/lamp","scrapeOptions":{"threatProtection":{"blacklist":["127.0.0.1"]}}}`)
	wantBlocked(t, "crawl, scrapeOptions blacklist", code, got, "127.0.0.1")
	code, got = f.send(t, http.MethodPost, "/v2/batch/scrape", fxKeyOne,
		`{"urls":["`+site.URL+`/lamp","https://cdn.malware-drop.example/x"]}`)
	wantBlocked(t, "batch", code, got, "cdn.malware-drop.example")
	code, got = f.send(t, http.MethodPost, "/v2/batch/scrape", fxKeyOne,
		`{"urls":["`+site.URL+`/lamp"],"threatProtection":{"blacklist":["127.0.0.1"]}}`)
	wantBlocked(t, "batch, blacklist", code, got, "127.0.0.1")
	// Allowed ones start.
	f.start(t, "/v2/batch/scrape", `{"urls":["`+site.URL+`/lamp"],"threatProtection":{"blacklist":["evil.example"]}}`)
}

// TestThreatCrawlSitemap: a crawl's sitemap lists pages on a blacklisted
// host (the same server under the name localhost) and on the operator's
// blocklist: they are never fetched and are reported in /errors as
// unsafe_domain_blocked; the allowed pages are crawled.
func TestThreatCrawlSitemap(t *testing.T) {
	t.Parallel()
	var private atomic.Int64
	mux := http.NewServeMux()
	var base string
	page := func(title string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, "<html><head><title>%s</title></head><body><main><h1>%s</h1><p>Text of %s.</p></main></body></html>", title, title, title)
		}
	}
	mux.HandleFunc("/{$}", page("Home"))
	mux.HandleFunc("/public", page("Public"))
	mux.HandleFunc("/private", func(w http.ResponseWriter, r *http.Request) { private.Add(1); page("Private")(w, r) })
	// A second sitemap, named in robots.txt, redirects to the blacklisted
	// name: the redirect is not followed.
	var moved atomic.Int64
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "User-agent: *\nAllow: /\nSitemap: %s/moved.xml\nSitemap: %s/sitemap.xml\n", base, base)
	})
	mux.HandleFunc("/moved.xml", func(w http.ResponseWriter, r *http.Request) {
		_, port, _ := strings.Cut(r.Host, ":")
		http.Redirect(w, r, "http://localhost:"+port+"/real.xml", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/real.xml", func(w http.ResponseWriter, r *http.Request) {
		moved.Add(1)
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<urlset><url><loc>%s/hidden</loc></url></urlset>`, base)
	})
	mux.HandleFunc("/hidden", page("Hidden"))
	mux.HandleFunc("/sitemap.xml", func(w http.ResponseWriter, r *http.Request) {
		_, port, _ := strings.Cut(r.Host, ":")
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<urlset><url><loc>%s/public</loc></url><url><loc>http://localhost:%s/private</loc></url><url><loc>https://cdn.malware-drop.example/x</loc></url></urlset>`, base, port)
	})
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)
	base = site.URL
	f := newJobsFixture(t, "sqlite", fxOptions{threat: blocklist(t, "malware-drop.example")})
	id := f.start(t, "/v2/crawl", `{"url":"`+site.URL+`/","allowExternalLinks":true,"limit":10,"scrapeOptions":{"threatProtection":{"blacklist":["localhost"]}}}`)
	st := f.waitDone(t, "/v2/crawl/"+id)
	if st["status"] != "completed" {
		t.Fatalf("status %v", st)
	}
	urls := fmt.Sprint(f.docURLs(t, id))
	if !strings.Contains(urls, site.URL+"/public") || strings.Contains(urls, "private") || strings.Contains(urls, "malware") {
		t.Errorf("crawled %s", urls)
	}
	code, errs := f.send(t, http.MethodGet, "/v2/crawl/"+id+"/errors", fxKeyOne, "")
	list, _ := errs["errors"].([]any)
	blocked := map[string]bool{}
	for _, e := range list {
		m, _ := e.(map[string]any)
		if m["code"] == "unsafe_domain_blocked" {
			blocked[fmt.Sprint(m["url"])] = true
		}
	}
	_, port, _ := strings.Cut(strings.TrimPrefix(site.URL, "http://"), ":")
	if code != 200 || len(list) != 2 || !blocked["http://localhost:"+port+"/private"] || !blocked["https://cdn.malware-drop.example/x"] {
		t.Errorf("errors: %d %v", code, errs)
	}
	if private.Load() != 0 || moved.Load() != 0 || strings.Contains(urls, "hidden") {
		t.Errorf("the blacklisted host was fetched %d times (pages) and %d times (sitemap)", private.Load(), moved.Load())
	}
}
