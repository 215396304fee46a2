package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
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
