package crawljob_test

import (
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/crawl/testsite"
	"github.com/firegate/firegate/internal/store"
)

// BenchmarkCrawl crawls a local 1,000-page static site with the plain HTTP
// engine, on each database, and reports pages per second and the heap in
// use after the crawl.
func BenchmarkCrawl(b *testing.B) {
	pages := 1000
	if n, err := strconv.Atoi(os.Getenv("CRAWL_BENCH_PAGES")); err == nil && n > 0 {
		pages = n // e.g. 4000, to see that memory does not grow with the site
	}
	site := testsite.New(testsite.Options{Pages: pages})
	srv := httptest.NewServer(site)
	b.Cleanup(srv.Close)
	for _, kind := range stores {
		b.Run(kind, func(b *testing.B) {
			h := newHarness(b, openStore(b, kind), harnessOptions{workers: 32})
			var pages int
			start := time.Now()
			for range b.N {
				o := defaultOptions()
				o.IgnoreRobots = true
				id := h.start(b, srv.URL+"/", o, 10000)
				j := h.wait(b, id, 5*time.Minute)
				if j.Status != store.JobCompleted {
					b.Fatalf("status %s", j.Status)
				}
				pages += j.Documents
			}
			elapsed := time.Since(start)
			b.ReportMetric(float64(pages)/elapsed.Seconds(), "pages/s")
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
		})
	}
}
