package crawl

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/proxypool"
	"github.com/firegate/firegate/internal/proxypool/proxytest"
	"github.com/firegate/firegate/internal/testenv"
)

// TestMapStartPageThroughProxy: with PROXY_URLS, a map's start page goes
// through a proxy of the requested country while robots.txt and the
// sitemaps go direct; a country no proxy has gets any proxy and a
// warning naming it.
func TestMapStartPageThroughProxy(t *testing.T) {
	t.Parallel()
	var site *httptest.Server
	site = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<html><head><title>Home</title></head><body><a href="/a">A</a> via ` + r.Header.Get("Via") + `</body></html>`))
		case "/robots.txt":
			w.Write([]byte("Sitemap: " + site.URL + "/sitemap.xml\n"))
		case "/sitemap.xml":
			w.Header().Set("Content-Type", "application/xml")
			w.Write([]byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>` + site.URL + `/b</loc></url></urlset>`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	de := proxytest.NewHTTP(t, proxytest.Options{Name: "de"})
	pool, err := proxypool.Parse("DE=http://"+de.Addr(), proxypool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := fetch.New(fetch.Options{AllowPrivate: true}, nil)
	t.Cleanup(c.CloseIdleConnections)
	m := NewMapper(c, MapperOptions{Proxies: proxypool.Pools{Basic: pool}}, testenv.Logger(t))

	res, err := m.Map(t.Context(), MapOptions{URL: site.URL + "/", Country: "DE"})
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, l := range res.Links {
		urls = append(urls, strings.TrimPrefix(l.URL, site.URL))
	}
	if got := strings.Join(urls, " "); !strings.Contains(got, "/a") || !strings.Contains(got, "/b") {
		t.Errorf("links %q, want the start page's /a and the sitemap's /b", got)
	}
	if n := de.Passed(); n != 1 || res.Warning != "" {
		t.Errorf("%d requests through the proxy (want 1: the start page only), warning %q", n, res.Warning)
	}

	res, err = m.Map(t.Context(), MapOptions{URL: site.URL + "/", Country: "FR", Sitemap: SitemapSkip})
	if err != nil {
		t.Fatal(err)
	}
	if n := de.Passed(); n != 2 || !strings.Contains(res.Warning, "FR") {
		t.Errorf("country without a proxy: %d requests through the proxy (want 2), warning %q", n, res.Warning)
	}
}
