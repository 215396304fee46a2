package httpapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/search"
	"github.com/firegate/firegate/internal/search/searxngtest"
)

// BenchmarkSearch measures one POST /v2/search against a scripted SearXNG
// on loopback: 10 web results, without scraping and with every result
// scraped (markdown) from a local site.
//
//	go test ./internal/httpapi -run '^$' -bench BenchmarkSearch -benchtime 200x
func BenchmarkSearch(b *testing.B) {
	site := searchSite(b)
	results := make([]searxngtest.Result, 10)
	for i := range results {
		path := "/lamp"
		if i%2 == 1 {
			path = "/keeper"
		}
		results[i] = searxngtest.Result{URL: fmt.Sprintf("%s%s?n=%d", site.URL, path, i), Title: "r", Content: "c", Score: float64(10 - i)}
	}
	for _, tc := range []struct{ name, body string }{
		{"results", `{"query":"q"}`},
		{"scrape10", `{"query":"q","scrapeOptions":{"formats":["markdown"],"maxAge":0,"storeInCache":false}}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := setupSearchB(b, func(q url.Values) searxngtest.Answer {
				if q.Get("pageno") != "1" {
					return searxngtest.Answer{}
				}
				return searxngtest.Answer{Results: results}
			})
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/v2/search", strings.NewReader(tc.body))
				req.Header.Set("Authorization", "Bearer "+goodKey)
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}

// setupSearchB is a server with the real engine (loopback targets
// allowed) and the real SearXNG backend over a scripted engine; nothing
// is logged, teams are unlimited (fakeAuth).
func setupSearchB(b *testing.B, answer func(url.Values) searxngtest.Answer) *Server {
	b.Helper()
	log := slog.New(slog.DiscardHandler)
	fc := fetch.New(fetch.Options{AllowPrivate: true}, log)
	b.Cleanup(fc.CloseIdleConnections)
	eng := searxngtest.New(b, answer)
	backend, err := search.NewSearXNG(search.SearXNGOptions{Endpoint: eng.URL, Timeout: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	s := New(Deps{Scraper: scrape.New(scrape.Config{Fetcher: fc, Log: log}), Auth: fakeAuth{},
		Searcher: search.New(backend, search.Options{}, log), Log: log})
	s.SetReady(true)
	return s
}
