package crawljob_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestCrawlKickoffReadsSitemapsWithinLimit: a crawl's kickoff reads
// sitemaps only until it has its limit of seeds that pass the crawl's
// rules, not the 30 sitemaps the site names; URLs the rules refuse do not
// count.
func TestCrawlKickoffReadsSitemapsWithinLimit(t *testing.T) {
	t.Parallel()
	var fetches atomic.Int64
	mux := http.NewServeMux()
	var base string
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		for i := range 30 {
			fmt.Fprintf(w, "Sitemap: %s/s.xml?copy=%d\n", base, i)
		}
	})
	mux.HandleFunc("/s.xml", func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		copyN := r.URL.Query().Get("copy")
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprint(w, `<urlset>`)
		for j := range 20 {
			// Half the entries are outside the start path /docs/.
			fmt.Fprintf(w, "<url><loc>%s/other/%s-%d</loc></url><url><loc>%s/docs/%s-%d</loc></url>", base, copyN, j, base, copyN, j)
		}
		fmt.Fprint(w, `</urlset>`)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<title>%s</title><p>page %s</p>", r.URL.Path, r.URL.Path)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	base = srv.URL

	for _, kind := range stores {
		t.Run(kind, func(t *testing.T) {
			fetches.Store(0)
			h := newHarness(t, openStore(t, kind), harnessOptions{})
			o := defaultOptions()
			id := h.start(t, srv.URL+"/docs/", o, 25)
			j := h.wait(t, id, 60*time.Second)
			docs := h.docURLs(t, id)
			if j.Completed != 25 || len(docs) != 25 {
				t.Fatalf("completed %d, %d documents, want 25", j.Completed, len(docs))
			}
			for _, d := range docs {
				if !strings.HasPrefix(d, srv.URL+"/docs/") {
					t.Errorf("document %s outside the start path", d)
				}
			}
			// 24 seeds besides the start page: the /docs/ half of two
			// sitemaps, with at most four more fetched ahead.
			if n := fetches.Load(); n < 2 || n > 6 {
				t.Errorf("%d sitemap fetches, want 2 to 6", n)
			}
			if !slices.Contains(docs, srv.URL+"/docs/1-3") {
				t.Errorf("the second sitemap's fourth /docs/ entry is missing: %v", docs)
			}
		})
	}
}
