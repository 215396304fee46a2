package crawl

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/testenv"
)

// resource is one response of a test site.
type resource struct {
	status   int
	ctype    string
	body     []byte
	location string                                       // redirect target
	encoding string                                       // Content-Encoding of body ("gzip")
	serve    func(w http.ResponseWriter, r *http.Request) // custom handler
}

// web is a set of virtual hosts served by one httptest server: the request
// line carries the path, the X-Vhost header the host. A key ending in "*"
// matches every request with that prefix. It records the requests it got.
type web struct {
	mu   sync.Mutex
	res  map[string]resource // "host/path?query" -> resource
	hits []string
	hdrs []http.Header
	srv  *httptest.Server
}

func newWeb(t testing.TB, res map[string]resource) *web {
	t.Helper()
	w := &web{res: res}
	w.srv = httptest.NewServer(http.HandlerFunc(w.serve))
	t.Cleanup(w.srv.Close)
	return w
}

func (w *web) serve(rw http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("X-Vhost") + r.URL.RequestURI()
	w.mu.Lock()
	w.hits = append(w.hits, key)
	w.hdrs = append(w.hdrs, r.Header.Clone())
	res, ok := w.res[key]
	if !ok {
		for k, r := range w.res {
			if p, wild := strings.CutSuffix(k, "*"); wild && strings.HasPrefix(key, p) {
				res, ok = r, true
			}
		}
	}
	w.mu.Unlock()
	switch {
	case !ok:
		http.NotFound(rw, r)
	case res.serve != nil:
		res.serve(rw, r)
	case res.location != "":
		http.Redirect(rw, r, res.location, max(res.status, http.StatusMovedPermanently))
	default:
		if res.ctype != "" {
			rw.Header().Set("Content-Type", res.ctype)
		}
		if res.encoding != "" {
			rw.Header().Set("Content-Encoding", res.encoding)
		}
		rw.WriteHeader(max(res.status, http.StatusOK))
		rw.Write(res.body)
	}
}

func (w *web) requests() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.hits...)
}

// vfetcher resolves every host to the web's server: the real fetch.Client
// does the HTTP (decoding, caps), redirects are followed here so they can
// cross virtual hosts.
type vfetcher struct {
	w *web
	c *fetch.Client
}

func (v *vfetcher) Do(ctx context.Context, req fetch.Request) (*fetch.Response, error) {
	cur := req.URL
	for range 10 {
		u, err := url.Parse(cur)
		if err != nil {
			return nil, err
		}
		h := map[string]string{"X-Vhost": strings.ToLower(u.Host)}
		for k, val := range req.Headers {
			h[k] = val
		}
		r := req
		r.URL, r.Headers = v.w.srv.URL+u.RequestURI(), h
		resp, err := v.c.Do(ctx, r)
		if err != nil {
			return nil, err
		}
		if loc := resp.Header.Get("Location"); resp.StatusCode/100 == 3 && loc != "" {
			next, err := u.Parse(loc)
			if err != nil {
				return nil, err
			}
			cur = next.String()
			continue
		}
		resp.RequestURL, resp.URL = req.URL, cur
		return resp, nil
	}
	return nil, fetch.ErrTooManyRedirects
}

func newMapper(t testing.TB, w *web, opts MapperOptions) *Mapper {
	t.Helper()
	return newMapperCap(t, w, opts, 1<<20)
}

// newMapperCap is newMapper with a fetch body cap of maxBody bytes.
func newMapperCap(t testing.TB, w *web, opts MapperOptions, maxBody int64) *Mapper {
	t.Helper()
	c := fetch.New(fetch.Options{AllowPrivate: true, MaxRedirects: -1, MaxBodyBytes: maxBody}, nil)
	t.Cleanup(c.CloseIdleConnections)
	return NewMapper(&vfetcher{w: w, c: c}, opts, testenv.Logger(t))
}

func htmlRes(body string) resource {
	return resource{ctype: "text/html; charset=utf-8", body: []byte(body)}
}

func xmlRes(body string) resource {
	return resource{ctype: "application/xml", body: []byte(body)}
}

func gz(t testing.TB, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	return b.Bytes()
}

func urlset(urls ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">`)
	for _, u := range urls {
		fmt.Fprintf(&b, "<url><loc>%s</loc><lastmod>2026-01-01</lastmod></url>\n", u)
	}
	b.WriteString(`</urlset>`)
	return b.String()
}

func sitemapIndex(urls ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, u := range urls {
		fmt.Fprintf(&b, "<sitemap><loc>%s</loc></sitemap>\n", u)
	}
	b.WriteString(`</sitemapindex>`)
	return b.String()
}

// exampleSite is a small site on example.com with a subdomain, www twins,
// query strings, external links, robots.txt naming a sitemap index whose
// children are one plain and one gzipped sitemap.
func exampleSite(t *testing.T) map[string]resource {
	return map[string]resource{
		"example.com/": htmlRes(`<html><head><title>Example Home</title><meta name="description" content="The home page"></head><body>
			<a href="/about">About  us</a>
			<a href="/blog/">Blog</a>
			<a href="https://blog.example.com/post">A post</a>
			<a href="https://other.org/x">Elsewhere</a>
			<a href="/search?q=1">Search one</a>
			<a href="/search?q=2">Search two</a>
			<a href="/about/">About again</a>
			<a href="http://www.example.com/contact"><img alt="x" src="c.png"></a>
			<a href="mailto:hi@example.com">Mail</a>
			<a href="#top">Top</a>
			<a href="/about#team" title="Team">  </a>
			<a href="javascript:void(0)">JS</a>
		</body></html>`),
		"example.com/robots.txt": {ctype: "text/plain", body: []byte("User-agent: *\nDisallow: /private\n\nSitemap: https://example.com/sitemap_index.xml # main\n")},
		"example.com/sitemap_index.xml": xmlRes(sitemapIndex(
			"https://example.com/sitemaps/pages.xml",
			"https://example.com/sitemaps/posts.xml.gz",
		)),
		"example.com/sitemaps/pages.xml": xmlRes(urlset(
			"https://example.com/pricing",
			"https://example.com/about",
			"https://www.example.com/docs/",
			"https://stranger.net/nope",
		)),
		"example.com/sitemaps/posts.xml.gz": {ctype: "application/x-gzip", body: gz(t, urlset(
			"https://example.com/posts/1",
			"https://example.com/posts/2?ref=feed",
		))},
	}
}

func urls(links []Link) []string {
	out := make([]string, len(links))
	for i, l := range links {
		out[i] = l.URL
	}
	return out
}

func TestMapSitemapsAndLinks(t *testing.T) {
	t.Parallel()
	w := newWeb(t, exampleSite(t))
	m := newMapper(t, w, MapperOptions{})
	res, err := m.Map(t.Context(), MapOptions{URL: "https://example.com"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Link{
		{URL: "https://example.com/", Title: "Example Home", Description: "The home page"},
		{URL: "https://example.com/about", Title: "About us"},
		{URL: "https://example.com/blog/", Title: "Blog"},
		{URL: "https://blog.example.com/post", Title: "A post"},
		{URL: "https://example.com/search", Title: "Search one"},
		{URL: "http://www.example.com/contact"},
		{URL: "https://example.com/pricing"},
		{URL: "https://www.example.com/docs/"},
		{URL: "https://example.com/posts/1"},
		{URL: "https://example.com/posts/2"},
	}
	if diff := cmp.Diff(want, res.Links); diff != "" {
		t.Errorf("links (-want +got)\n%s", diff)
	}
	if res.Warning != "" {
		t.Errorf("warning %q from the root", res.Warning)
	}
}

func TestMapOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		o    MapOptions
		want []string
	}{
		{"sitemap skip", MapOptions{Sitemap: SitemapSkip}, []string{
			"https://example.com/", "https://example.com/about", "https://example.com/blog/", "https://blog.example.com/post",
			"https://example.com/search", "http://www.example.com/contact"}},
		{"sitemap only", MapOptions{Sitemap: SitemapOnly}, []string{
			"https://example.com/pricing", "https://example.com/about", "https://www.example.com/docs/",
			"https://example.com/posts/1", "https://example.com/posts/2"}},
		{"sitemap only honours limit", MapOptions{Sitemap: SitemapOnly, Limit: 2}, []string{
			"https://example.com/pricing", "https://example.com/about"}},
		{"limit", MapOptions{Limit: 3}, []string{
			"https://example.com/", "https://example.com/about", "https://example.com/blog/"}},
		{"exclude subdomains keeps www", MapOptions{Sitemap: SitemapSkip, ExcludeSubdomains: true}, []string{
			"https://example.com/", "https://example.com/about", "https://example.com/blog/",
			"https://example.com/search", "http://www.example.com/contact"}},
		{"keep query parameters", MapOptions{Sitemap: SitemapSkip, KeepQueryParameters: true, ExcludeSubdomains: true}, []string{
			"https://example.com/", "https://example.com/about", "https://example.com/blog/",
			"https://example.com/search?q=1", "https://example.com/search?q=2", "http://www.example.com/contact"}},
		{"keep similar urls", MapOptions{Sitemap: SitemapSkip, KeepSimilarURLs: true, ExcludeSubdomains: true}, []string{
			"https://example.com/", "https://example.com/about", "https://example.com/blog/",
			"https://example.com/search", "https://example.com/about/", "http://www.example.com/contact"}},
		{"allow external links", MapOptions{Sitemap: SitemapSkip, AllowExternalLinks: true}, []string{
			"https://example.com/", "https://example.com/about", "https://example.com/blog/", "https://blog.example.com/post",
			"https://other.org/x", "https://example.com/search", "http://www.example.com/contact"}},
		{"include and exclude paths", MapOptions{IncludePaths: []string{"^/posts/", "^/about$"}, ExcludePaths: []string{"/2$"}}, []string{
			"https://example.com/about", "https://example.com/posts/1"}},
		{"regex on full url", MapOptions{IncludePaths: []string{`^https://blog\.`}, RegexOnFullURL: true}, []string{
			"https://blog.example.com/post"}},
		{"skip page links", MapOptions{SkipPageLinks: true}, []string{
			"https://example.com/", "https://example.com/pricing", "https://example.com/about", "https://www.example.com/docs/",
			"https://example.com/posts/1", "https://example.com/posts/2"}},
		{"search ranks matches first", MapOptions{Search: "posts", Limit: 3}, []string{
			"https://example.com/posts/1", "https://example.com/posts/2", "https://example.com/"}},
		{"search on titles", MapOptions{Search: "about us", Sitemap: SitemapSkip, Limit: 2}, []string{
			"https://example.com/about", "https://example.com/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWeb(t, exampleSite(t))
			m := newMapper(t, w, MapperOptions{})
			tc.o.URL = "https://example.com/"
			res, err := m.Map(t.Context(), tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, urls(res.Links)); diff != "" {
				t.Errorf("links (-want +got)\n%s", diff)
			}
			if tc.o.Sitemap == SitemapSkip {
				for _, h := range w.requests() {
					if strings.Contains(h, "robots") || strings.Contains(h, "sitemap") {
						t.Errorf("sitemap skip fetched %s", h)
					}
				}
			}
		})
	}
}

func TestMapHeadersAndLanguages(t *testing.T) {
	t.Parallel()
	w := newWeb(t, exampleSite(t))
	m := newMapper(t, w, MapperOptions{})
	_, err := m.Map(t.Context(), MapOptions{URL: "https://example.com/", Headers: map[string]string{"X-Token": "abc"},
		Languages: []string{"de-DE", "en"}})
	if err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.hdrs) < 4 {
		t.Fatalf("only %d requests", len(w.hdrs))
	}
	for i, h := range w.hdrs {
		if h.Get("X-Token") != "abc" || h.Get("Accept-Language") != "de-DE,en;q=0.9" {
			t.Errorf("request %s: X-Token %q, Accept-Language %q", w.hits[i], h.Get("X-Token"), h.Get("Accept-Language"))
		}
	}
}

func TestMapFollowsRedirects(t *testing.T) {
	t.Parallel()
	w := newWeb(t, map[string]resource{
		"old.example.org/docs": {location: "https://www.new-site.net/docs/"},
		"www.new-site.net/docs/": htmlRes(`<a href="intro">Intro</a> <a href="/docs/api/">API</a> <a href="/pricing">Pricing</a>
			<a href="https://old.example.org/docs/legacy">Legacy</a>`),
		"www.new-site.net/robots.txt":  {ctype: "text/plain", body: []byte("Sitemap: /sm.txt\n")},
		"www.new-site.net/sm.txt":      {ctype: "text/plain", body: []byte("https://new-site.net/docs/faq\nnot a url\nhttps://new-site.net/about\n")},
		"www.new-site.net/sitemap.xml": xmlRes(urlset("https://www.new-site.net/docs/intro/")),
	})
	m := newMapper(t, w, MapperOptions{})
	res, err := m.Map(t.Context(), MapOptions{URL: "https://old.example.org/docs"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"https://www.new-site.net/docs/", "https://www.new-site.net/docs/intro", "https://www.new-site.net/docs/api/",
		"https://new-site.net/docs/faq"}
	if diff := cmp.Diff(want, urls(res.Links)); diff != "" {
		t.Errorf("links (-want +got)\n%s", diff)
	}

	// Without the path filter the whole site shows.
	res, err = m.Map(t.Context(), MapOptions{URL: "https://old.example.org/docs", NoPathFilter: true, Sitemap: SitemapSkip})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"https://www.new-site.net/docs/", "https://www.new-site.net/docs/intro", "https://www.new-site.net/docs/api/",
		"https://www.new-site.net/pricing"}
	if diff := cmp.Diff(want, urls(res.Links)); diff != "" {
		t.Errorf("no path filter: links (-want +got)\n%s", diff)
	}
}

func TestMapWarning(t *testing.T) {
	t.Parallel()
	w := newWeb(t, map[string]resource{
		"example.com/deep/page": htmlRes(`<a href="/elsewhere">x</a>`),
		"example.com/":          htmlRes(`<a href="/deep/page">x</a>`),
	})
	m := newMapper(t, w, MapperOptions{})
	for _, tc := range []struct {
		name, url string
		limit     int
		want      string
	}{
		{"non-root", "https://example.com/deep/page", 0,
			"Only 1 result(s) found. Mapping from the site root may find more; try the base domain: https://example.com"},
		{"limit 1", "https://example.com/deep/page", 1, ""},
		{"root", "https://example.com/", 0, ""},
	} {
		res, err := m.Map(t.Context(), MapOptions{URL: tc.url, Limit: tc.limit})
		if err != nil {
			t.Fatal(err)
		}
		if res.Warning != tc.want {
			t.Errorf("%s: warning %q, want %q", tc.name, res.Warning, tc.want)
		}
	}
}

func TestMapTimeout(t *testing.T) {
	t.Parallel()
	slow := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}
	w := newWeb(t, map[string]resource{
		"example.com/":            htmlRes(`<a href="/a">a</a>`),
		"example.com/robots.txt":  {serve: slow},
		"slow.example.com/":       {serve: slow},
		"example.com/sitemap.xml": {serve: slow},
	})
	m := newMapper(t, w, MapperOptions{})
	for _, u := range []string{"https://slow.example.com/", "https://example.com/"} {
		start := time.Now()
		_, err := m.Map(t.Context(), MapOptions{URL: u, Timeout: 200 * time.Millisecond})
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("%s: err %v, want ErrTimeout", u, err)
		}
		if d := time.Since(start); d > testenv.Patient(2*time.Second) {
			t.Errorf("%s: took %v", u, d)
		}
	}

	// A slow sitemap request is cut by the per-request timeout; the map
	// still succeeds.
	m = newMapper(t, w, MapperOptions{RequestTimeout: 100 * time.Millisecond})
	res, err := m.Map(t.Context(), MapOptions{URL: "https://example.com/"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"https://example.com/", "https://example.com/a"}, urls(res.Links)); diff != "" {
		t.Errorf("links (-want +got)\n%s", diff)
	}

	// A cancelled caller is not a timeout.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := m.Map(ctx, MapOptions{URL: "https://example.com/"}); !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestMapSitemapBombs(t *testing.T) {
	t.Parallel()
	// An endless gzipped urlset: the fetch cap bounds the transfer, the
	// decompressed cap and the per-sitemap URL cap bound the parse.
	endless := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-gzip")
		zw := gzip.NewWriter(w)
		zw.Write([]byte(`<?xml version="1.0"?><urlset>`))
		for i := 0; ; i++ {
			if _, err := fmt.Fprintf(zw, "<url><loc>https://example.com/p%d</loc></url>", i); err != nil {
				return
			}
			if r.Context().Err() != nil {
				return
			}
		}
	}
	// An endless tree of sitemap indexes, ten children each.
	tree := func(w http.ResponseWriter, r *http.Request) {
		var kids []string
		for i := range 10 {
			kids = append(kids, fmt.Sprintf("https://example.com%s-%d.xml", strings.TrimSuffix(r.URL.Path, ".xml"), i))
		}
		w.Header().Set("Content-Type", "application/xml")
		w.Write([]byte(sitemapIndex(kids...)))
	}
	res := map[string]resource{
		"example.com/":            htmlRes(`<a href="/a">a</a>`),
		"example.com/robots.txt":  {ctype: "text/plain", body: []byte("Sitemap: https://example.com/bomb.xml.gz\nSitemap: https://example.com/tree.xml\n")},
		"example.com/bomb.xml.gz": {serve: endless},
		"example.com/tree*":       {serve: tree},
	}
	w := newWeb(t, res)
	m := newMapperCap(t, w, MapperOptions{MaxSitemaps: 15, MaxSitemapDepth: 2, MaxSitemapBytes: 8 << 20, MaxSitemapURLs: 20000}, 128<<10)
	start := time.Now()
	out, err := m.Map(t.Context(), MapOptions{URL: "https://example.com/", Limit: MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > testenv.Patient(10*time.Second) {
		t.Errorf("took %v", d)
	}
	// start page, /a, then at most 20000 bomb URLs.
	if n := len(out.Links); n < 1000 || n > 20002 {
		t.Errorf("%d links", n)
	}
	trees := 0
	for _, h := range w.requests() {
		if strings.HasPrefix(h, "example.com/tree") {
			trees++
		}
	}
	// 15 sitemaps in all: the bomb, /sitemap.xml and 13 tree files (the
	// root, its 10 children, 2 of the 100 grandchildren).
	if trees != 13 {
		t.Errorf("fetched %d tree sitemaps, want 13", trees)
	}
}

func TestMapSitemapDepth(t *testing.T) {
	t.Parallel()
	w := newWeb(t, map[string]resource{
		"example.com/":            htmlRes(``),
		"example.com/sitemap.xml": xmlRes(sitemapIndex("https://example.com/l1.xml")),
		"example.com/l1.xml":      xmlRes(sitemapIndex("https://example.com/l2.xml")),
		"example.com/l2.xml":      xmlRes(sitemapIndex("https://example.com/l3.xml")),
		"example.com/l3.xml":      xmlRes(urlset("https://example.com/deep")),
	})
	for _, tc := range []struct {
		depth int
		want  []string
	}{
		{2, []string{"https://example.com/"}},
		{3, []string{"https://example.com/", "https://example.com/deep"}},
	} {
		m := newMapper(t, w, MapperOptions{MaxSitemapDepth: tc.depth})
		res, err := m.Map(t.Context(), MapOptions{URL: "https://example.com/"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, urls(res.Links)); diff != "" {
			t.Errorf("depth %d: (-want +got)\n%s", tc.depth, diff)
		}
	}
}

func TestMapDelay(t *testing.T) {
	t.Parallel()
	w := newWeb(t, exampleSite(t))
	m := newMapper(t, w, MapperOptions{})
	start := time.Now()
	res, err := m.Map(t.Context(), MapOptions{URL: "https://example.com/", Delay: 60 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// page, robots, index, two sitemaps, sitemap.xml: five pauses.
	if n := len(w.requests()); n != 6 {
		t.Errorf("%d requests: %v", n, w.requests())
	}
	if d := time.Since(start); d < 5*60*time.Millisecond {
		t.Errorf("took only %v", d)
	}
	if len(res.Links) != 10 {
		t.Errorf("%d links", len(res.Links))
	}
}

// TestMapRealFetch runs the real fetch.Client against a loopback site:
// robots.txt, a gzip-encoded sitemap, a redirect, and a link to another
// host name (localhost) that is external.
func TestMapRealFetch(t *testing.T) {
	t.Parallel()
	var srvURL string
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		http.Redirect(w, r, "/home", http.StatusFound)
	})
	mux.HandleFunc("/home", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<title>Home</title><a href="/home/a">A</a><a href="%s/home/b">B</a>`, strings.Replace(srvURL, "127.0.0.1", "localhost", 1))
	})
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "Sitemap: %s/sm.xml\n", srvURL)
	})
	mux.HandleFunc("/sm.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(gz(t, urlset(srvURL+"/home/c", srvURL+"/other")))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	srvURL = srv.URL

	c := fetch.New(fetch.Options{AllowPrivate: true}, nil)
	m := NewMapper(c, MapperOptions{}, testenv.Logger(t))
	res, err := m.Map(t.Context(), MapOptions{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	want := []Link{{URL: srv.URL + "/home", Title: "Home"}, {URL: srv.URL + "/home/a", Title: "A"}, {URL: srv.URL + "/home/c"}}
	if diff := cmp.Diff(want, res.Links); diff != "" {
		t.Errorf("links (-want +got)\n%s", diff)
	}

	// The SSRF guard: loopback refused.
	guarded := NewMapper(fetch.New(fetch.Options{}, nil), MapperOptions{}, nil)
	if _, err := guarded.Map(t.Context(), MapOptions{URL: srv.URL}); !errors.Is(err, ErrBlocked) {
		t.Errorf("guarded: %v, want ErrBlocked", err)
	}

	// Nothing listening: unreachable.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	if _, err := m.Map(t.Context(), MapOptions{URL: deadURL}); !errors.Is(err, ErrUnreachable) {
		t.Errorf("dead: %v, want ErrUnreachable", err)
	}
}

func TestMapInvalidOptions(t *testing.T) {
	t.Parallel()
	m := NewMapper(fetch.New(fetch.Options{}, nil), MapperOptions{}, nil)
	for _, o := range []MapOptions{
		{URL: "ftp://example.com/"},
		{URL: "/relative"},
		{URL: "https://example.com/", IncludePaths: []string{"("}},
		{URL: "https://example.com/", ExcludePaths: []string{"[z-a]"}},
		{URL: "https://example.com/", Sitemap: "sometimes"},
	} {
		if _, err := m.Map(t.Context(), o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%+v: %v, want ErrInvalidOptions", o, err)
		}
	}
}

func TestParseSitemap(t *testing.T) {
	t.Parallel()
	base, _ := url.Parse("https://example.com/sm.xml")
	for _, tc := range []struct {
		name, in      string
		pages, childs []string
	}{
		{"urlset with images and entities", `<urlset xmlns:image="x"><url><loc> https://example.com/a?x=1&amp;y=2 </loc><image:image><image:loc>https://example.com/i.png</image:loc></image:image></url></urlset>`,
			[]string{"https://example.com/a?x=1&y=2"}, nil},
		{"index", `<sitemapindex><sitemap><loc>/b.xml</loc></sitemap></sitemapindex>`, nil, []string{"https://example.com/b.xml"}},
		{"latin1 and truncated", `<?xml version="1.0" encoding="ISO-8859-1"?><urlset><url><loc>https://example.com/c</loc></url><url><loc>https://exa`,
			[]string{"https://example.com/c"}, nil},
		{"text", "\ufeffhttps://example.com/t1\n\nftp://x/y\nhttps://example.com/t2\n", []string{"https://example.com/t1", "https://example.com/t2"}, nil},
		{"cap", urlset("https://example.com/1", "https://example.com/2", "https://example.com/3"), []string{"https://example.com/1", "https://example.com/2"}, nil},
	} {
		var pages, children []string
		parseSitemap(strings.NewReader(tc.in), base, 2, func(u *url.URL, child bool) bool {
			if child {
				children = append(children, u.String())
			} else {
				pages = append(pages, u.String())
			}
			return true
		})
		if diff := cmp.Diff(tc.pages, pages); diff != "" {
			t.Errorf("%s: pages (-want +got)\n%s", tc.name, diff)
		}
		if diff := cmp.Diff(tc.childs, children); diff != "" {
			t.Errorf("%s: children (-want +got)\n%s", tc.name, diff)
		}
	}
}

func TestRank(t *testing.T) {
	t.Parallel()
	links := []Link{{URL: "https://e.com/"}, {URL: "https://e.com/x", Title: "Pricing plans"}, {URL: "https://e.com/pricing"},
		{URL: "https://e.com/pricing-plans"}}
	got := urls(rank(links, "Pricing Plans"))
	want := []string{"https://e.com/pricing-plans", "https://e.com/x", "https://e.com/pricing", "https://e.com/"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestSitemapReaderCapsDecompression(t *testing.T) {
	t.Parallel()
	m := NewMapper(nil, MapperOptions{MaxSitemapBytes: 1 << 20}, nil)
	bomb := gz(t, strings.Repeat(" ", 32<<20)) // 32 MiB of spaces, ~32 KiB compressed
	for _, tc := range []struct {
		name   string
		budget int64
		want   int64
		spent  bool
	}{
		{"file cap", 8 << 20, 1 << 20, false},
		{"request budget", 300 << 10, 300 << 10, true},
	} {
		b := &sitemapBudget{bytes: tc.budget}
		rd, err := m.sitemapReader(t.Context(), bomb, b)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, rd)
		if n != tc.want || b.spent != tc.spent || b.bytes != tc.budget-tc.want {
			t.Errorf("%s: read %d decompressed bytes (spent %v, %d left), want %d (spent %v)", tc.name, n, b.spent, b.bytes, tc.want, tc.spent)
		}
	}
	// A budget that ends with the file is not spent.
	b := &sitemapBudget{bytes: 5}
	rd, _ := m.sitemapReader(t.Context(), []byte("hello"), b)
	if data, _ := io.ReadAll(rd); string(data) != "hello" || b.spent {
		t.Errorf("exact budget: read %q, spent %v", data, b.spent)
	}
	// A done context ends the read.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	rd, _ = m.sitemapReader(ctx, bomb, &sitemapBudget{bytes: 8 << 20})
	if n, err := io.Copy(io.Discard, rd); n != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: read %d, %v", n, err)
	}
}
