package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/llm"
	"github.com/firegate/firegate/internal/llm/llmtest"
	"github.com/firegate/firegate/internal/search"
	"github.com/firegate/firegate/internal/search/searxngtest"
	"github.com/firegate/firegate/internal/testenv"
)

// TestThreatCrawlRobots: a crawl's robots.txt and sitemap fetches pass
// threat protection like its pages. The blacklisted name (localhost, the
// same server) is never asked for anything: not the robots.txt of a page
// linked there, not a sitemap robots.txt names there, not the target of
// a robots.txt redirect from another allowed host (127.0.0.2). The
// allowed pages are crawled and the blocked page is in /errors.
func TestThreatCrawlRobots(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var blockedHits []string // requests that reached the server as localhost
	record := func(r *http.Request) {
		if strings.HasPrefix(r.Host, "localhost") {
			mu.Lock()
			blockedHits = append(blockedHits, r.URL.Path)
			mu.Unlock()
		}
	}
	page := func(w http.ResponseWriter, title, body string) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><head><title>%s</title></head><body><main><h1>%s</h1>%s</main></body></html>", title, title, body)
	}
	var port, other string // this server's port; the other host's base URL
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		record(r)
		page(w, "Home", fmt.Sprintf(`<p><a href="/about">About</a> <a href="http://localhost:%s/hidden">Elsewhere</a> <a href="%s/guide">Guide</a></p>`, port, other))
	})
	mux.HandleFunc("/about", func(w http.ResponseWriter, r *http.Request) { record(r); page(w, "About", "<p>About us.</p>") })
	mux.HandleFunc("/hidden", func(w http.ResponseWriter, r *http.Request) { record(r); page(w, "Hidden", "<p>Hidden.</p>") })
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		record(r)
		fmt.Fprintf(w, "User-agent: *\nAllow: /\nSitemap: http://localhost:%s/sitemap.xml\n", port)
	})
	mux.HandleFunc("/sitemap.xml", func(w http.ResponseWriter, r *http.Request) {
		record(r)
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<urlset><url><loc>http://localhost:%s/hidden</loc></url></urlset>`, port)
	})
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)
	_, port, _ = strings.Cut(strings.TrimPrefix(site.URL, "http://"), ":")

	// The other host: its robots.txt redirects to the blacklisted name.
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no second loopback address: %v", err)
	}
	omux := http.NewServeMux()
	omux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost:"+port+"/robots.txt", http.StatusFound)
	})
	omux.HandleFunc("/guide", func(w http.ResponseWriter, r *http.Request) { page(w, "Guide", "<p>A guide.</p>") })
	otherSrv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: omux}}
	otherSrv.Start()
	t.Cleanup(otherSrv.Close)
	other = otherSrv.URL

	f := newJobsFixture(t, "sqlite", fxOptions{})
	id := f.start(t, "/v2/crawl", `{"url":"`+site.URL+`/","allowExternalLinks":true,"limit":10,"scrapeOptions":{"threatProtection":{"blacklist":["localhost"]}}}`)
	if st := f.waitDone(t, "/v2/crawl/"+id); st["status"] != "completed" {
		t.Fatalf("status %v", st)
	}
	urls := f.docURLs(t, id)
	slices.Sort(urls)
	want := []string{site.URL + "/", site.URL + "/about", other + "/guide"}
	if !slices.Equal(urls, want) {
		t.Errorf("crawled %v, want %v", urls, want)
	}
	_, errs := f.send(t, http.MethodGet, "/v2/crawl/"+id+"/errors", fxKeyOne, "")
	list, _ := errs["errors"].([]any)
	if len(list) != 1 || !strings.Contains(fmt.Sprint(list), "unsafe_domain_blocked") {
		t.Errorf("errors: %v", errs)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(blockedHits) > 0 {
		t.Errorf("the blacklisted host was asked for %v", blockedHits)
	}
}

// TestThreatExtract: POST /v2/extract takes threatProtection. A listed or
// blocklisted URL is 403 unsafe_domain_blocked before anything runs, mode
// off under an enforced blocklist is 403 FORBIDDEN; a glob's map and the
// web search leave blocked hosts out, a page redirecting to one fails at
// the hop, and the blacklisted name is never asked for anything. Each
// page scanned costs 2 credits on top of its tokens.
func TestThreatExtract(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var blockedHits []string
	var port string
	page := func(w http.ResponseWriter, r *http.Request, title string) {
		if strings.HasPrefix(r.Host, "localhost") {
			mu.Lock()
			blockedHits = append(blockedHits, r.URL.Path)
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><head><title>%s</title></head><body><main><h1>%s</h1><p>Text of %s.</p></main></body></html>", title, title, title)
	}
	mux := http.NewServeMux()
	var base string
	for _, p := range []string{"a", "b", "c", "d", "e"} {
		mux.HandleFunc("/"+p, func(w http.ResponseWriter, r *http.Request) { page(w, r, "Page "+p) })
	}
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) { page(w, r, "Home") })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost:"+port+"/c", http.StatusFound)
	})
	mux.HandleFunc("/sitemap.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<urlset><url><loc>%[1]s/a</loc></url><url><loc>http://localhost:%[2]s/b</loc></url><url><loc>%[1]s/moved</loc></url></urlset>`, base, port)
	})
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)
	base = site.URL
	_, port, _ = strings.Cut(strings.TrimPrefix(site.URL, "http://"), ":")

	engine := searxngtest.New(t, func(q url.Values) searxngtest.Answer {
		return searxngtest.Answer{Results: []searxngtest.Result{
			{URL: base + "/d", Title: "D", Content: "c", Score: 2},
			{URL: "http://localhost:" + port + "/e", Title: "E", Content: "c", Score: 1},
		}}
	})
	model := llmtest.NewReplying(t, func(w http.ResponseWriter, r llmtest.Request) {
		llmtest.Write(w, `{"title":"x"}`, &llmtest.Usage{PromptTokens: 290, CompletionTokens: 10})
	})
	log := testenv.Logger(t)
	client, err := llm.New(llm.Options{BaseURL: model.BaseURL, Model: "scripted", Log: log})
	if err != nil {
		t.Fatal(err)
	}
	api := newJobAPIConfig(t, "sqlite", jobAPIConfig{model: client, threat: blocklist(t, "malware-drop.example"),
		searcher: search.New(mustSearXNG(t, engine.URL), search.Options{}, log)})
	const schema = `"schema":{"type":"object","properties":{"title":{"type":"string"}}}`

	code, m := api.call(t, http.MethodPost, "/v2/extract", keyA, `{"urls":["`+base+`/a","http://localhost:`+port+`/b"],`+schema+`,"threatProtection":{"blacklist":["localhost"]}}`)
	wantBlocked(t, "extract, blacklist", code, m, "localhost")
	code, m = api.call(t, http.MethodPost, "/v2/extract", keyA, `{"urls":["https://cdn.malware-drop.example/x"],`+schema+`}`)
	wantBlocked(t, "extract, operator list", code, m, "malware-drop.example")
	code, m = api.call(t, http.MethodPost, "/v2/extract", keyA, `{"urls":["`+base+`/a"],`+schema+`,"threatProtection":{"mode":"off"}}`)
	if code != http.StatusForbidden || m["code"] != "FORBIDDEN" {
		t.Errorf("mode off under an enforced blocklist: %d %v", code, m)
	}
	code, m = api.call(t, http.MethodPost, "/v2/extract", keyA, `{"urls":["`+base+`/a"],`+schema+`,"threatProtection":{"blacklist":7}}`)
	if code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(m["details"]), "blacklist") {
		t.Errorf("a bad threatProtection: %d %v", code, m)
	}

	code, m = api.call(t, http.MethodPost, "/v2/extract", keyA, `{"urls":["`+base+`/*"],"prompt":"Titles?","enableWebSearch":true,`+schema+`,"threatProtection":{"blacklist":["localhost"]}}`)
	if code != 200 {
		t.Fatalf("POST /v2/extract: %d %v", code, m)
	}
	id := m["id"].(string)
	var st map[string]any
	testenv.Eventually(t, time.Minute, func() bool {
		_, st = api.call(t, http.MethodGet, "/v2/extract/"+id, keyA, "")
		return st["status"] != "processing"
	}, "still waiting for the extract")
	if st["status"] != "completed" {
		t.Fatalf("extract: %v", st)
	}
	_, batch := api.call(t, http.MethodGet, "/v2/batch/scrape/"+id, keyA, "")
	var got []string
	data, _ := batch["data"].([]any)
	for _, d := range data {
		doc, _ := d.(map[string]any)
		meta, _ := doc["metadata"].(map[string]any)
		got = append(got, strings.TrimPrefix(fmt.Sprint(meta["sourceURL"]), base))
		if meta["creditsUsed"] != 22.0 {
			t.Errorf("%v: creditsUsed %v, want 20 for the tokens and 2 for the scan", meta["sourceURL"], meta["creditsUsed"])
		}
	}
	slices.Sort(got)
	// The glob's start page once (it names the site without a slash; its
	// map lists it with one).
	if want := []string{"", "/a", "/d"}; !slices.Equal(got, want) {
		t.Errorf("pages extracted %q, want %q", got, want)
	}
	_, errs := api.call(t, http.MethodGet, "/v2/batch/scrape/"+id+"/errors", keyA, "")
	if list, _ := errs["errors"].([]any); len(list) != 1 || !strings.Contains(fmt.Sprint(list), "unsafe_domain_blocked") || !strings.Contains(fmt.Sprint(list), "/moved") {
		t.Errorf("errors: %v", errs)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(blockedHits) > 0 {
		t.Errorf("the blacklisted host was asked for %v", blockedHits)
	}
}

// TestThreatAgentURLs: POST /v2/agent checks its urls against its
// threatProtection before the run starts.
func TestThreatAgentURLs(t *testing.T) {
	t.Parallel()
	a := newAgentAPI(t, "sqlite", agentModel(new(string)))
	code, m := a.call(t, http.MethodPost, "/v2/agent", keyA,
		`{"prompt":"Find the name","urls":["https://shop.example/","https://cdn.evil.example/x"],"threatProtection":{"blacklist":["*.evil.example"]}}`)
	wantBlocked(t, "agent urls", code, m, "cdn.evil.example")
	code, m = a.call(t, http.MethodPost, "/v2/agent", keyA,
		`{"prompt":"Find the name","urls":["https://shop.example/"],"threatProtection":{"blacklist":["*.evil.example"]}}`)
	if code != 200 {
		t.Errorf("allowed agent: %d %v", code, m)
	}
}
