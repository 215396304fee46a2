package crawl_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/crawl/testsite"
	"github.com/firegate/firegate/internal/fetch"
)

// BenchmarkMap maps a local 500-page site (sitemap index, gzip child,
// start-page links) through the Mapper.
func BenchmarkMap(b *testing.B) {
	site := testsite.New(testsite.Options{Pages: 500})
	srv := httptest.NewServer(site)
	b.Cleanup(srv.Close)
	m := crawl.NewMapper(fetch.New(fetch.Options{AllowPrivate: true}, nil), crawl.MapperOptions{}, nil)
	b.ResetTimer()
	for range b.N {
		res, err := m.Map(context.Background(), crawl.MapOptions{URL: srv.URL + "/"})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Links) < 100 {
			b.Fatalf("%d links", len(res.Links))
		}
	}
}
