package testsite_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/crawl/testsite"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/testenv"
	"github.com/firegate/firegate/internal/urlnorm"
)

func serve(t *testing.T, s *testsite.Site) string {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL
}

func newFetcher(t *testing.T) *fetch.Client {
	t.Helper()
	c := fetch.New(fetch.Options{AllowPrivate: true}, nil)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func get(t *testing.T, rawURL string) (*http.Response, []byte) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestShape(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, testsite.MinPages, 31, 57, 300, 1000, 5000} {
		s := testsite.New(testsite.Options{Pages: n})
		all := s.AllPages()
		if want := max(n, testsite.MinPages); len(all) != want {
			t.Errorf("Pages=%d: %d pages, want %d", n, len(all), want)
		}
		// Every page but the two sitemap-only ones is linked from "/".
		var unlinked []string
		linked := s.Pages()
		for _, p := range all {
			if _, found := slices.BinarySearch(linked, p); !found {
				unlinked = append(unlinked, p)
			}
		}
		if diff := cmp.Diff([]string{testsite.PathBlogHidden, testsite.PathOrphan}, unlinked); diff != "" {
			t.Errorf("Pages=%d: unlinked pages (-want +got):\n%s", n, diff)
		}
		for _, p := range s.SitemapPages() {
			if !slices.Contains(all, p) {
				t.Errorf("Pages=%d: sitemap lists %s, not a page", n, p)
			}
		}
	}
}

func TestDepth(t *testing.T) {
	t.Parallel()
	s := testsite.New(testsite.Options{})
	tests := map[string]int{
		"/":                        0,
		"/index.html":              0,
		testsite.PathAbout:         1,
		"/about/":                  1,
		"/blog":                    1,
		"/blog/index.php":          1,
		"/products/?utm_source=x":  1,
		testsite.PathSecret:        2,
		"/blog/post-1":             2,
		"/blog/post-21":            3, // on /blog/page/2
		"/docs/s1/t1/p1":           4,
		"/deep/3":                  3,
		testsite.PathDeepest:       testsite.DeepLevels,
		testsite.PathOrphan:        -1,
		testsite.PathError:         1,
		testsite.PathLoopB:         -1,
		"/no/such/page":            -1,
		testsite.PathSitemapDocs:   -1,
		"/docs/s1/t1/p1?x=1#frag2": 4,
	}
	for p, want := range tests {
		if got := s.Depth(p); got != want {
			t.Errorf("Depth(%q) = %d, want %d", p, got, want)
		}
	}
	for _, p := range s.Pages() {
		if s.Depth(p) < 0 {
			t.Errorf("Depth(%q) < 0 for a linked page", p)
		}
	}
}

func TestServe(t *testing.T) {
	t.Parallel()
	s := testsite.New(testsite.Options{SlowDelay: -1})
	base := serve(t, s)
	tests := []struct {
		path     string
		status   int
		ctype    string
		location string
	}{
		{"/", 200, "text/html; charset=utf-8", ""},
		{"/index.html", 200, "text/html; charset=utf-8", ""},
		{"/blog", 200, "text/html; charset=utf-8", ""},
		{"/about/?utm_source=y", 200, "text/html; charset=utf-8", ""},
		{testsite.PathError, 500, "text/html; charset=utf-8", ""},
		{testsite.PathLoopA, 302, "", testsite.PathLoopB},
		{testsite.PathLoopB, 302, "", testsite.PathLoopA},
		{testsite.PathSecret, 200, "text/html; charset=utf-8", ""},
		{"/assets/logo.png", 200, "image/png", ""},
		{"/assets/style.css", 200, "text/css", ""},
		{"/nope", 404, "text/plain; charset=utf-8", ""},
		{"/about/index.html", 404, "text/plain; charset=utf-8", ""},
	}
	for _, tt := range tests {
		resp, _ := get(t, base+tt.path)
		if resp.StatusCode != tt.status {
			t.Errorf("GET %s: status %d, want %d", tt.path, resp.StatusCode, tt.status)
		}
		if tt.ctype != "" && resp.Header.Get("Content-Type") != tt.ctype {
			t.Errorf("GET %s: Content-Type %q, want %q", tt.path, resp.Header.Get("Content-Type"), tt.ctype)
		}
		if loc := resp.Header.Get("Location"); loc != tt.location {
			t.Errorf("GET %s: Location %q, want %q", tt.path, loc, tt.location)
		}
	}
	_, a := get(t, base+"/blog/")
	_, b := get(t, base+"/blog/index.html?utm_source=z")
	if !bytes.Equal(a, b) {
		t.Error("/blog/ and /blog/index.html?utm_source=z differ")
	}
	if got := s.Hits("/blog/index.html"); got != 1 {
		t.Errorf("Hits(/blog/index.html) = %d, want 1", got)
	}

	resp, robots := get(t, base+testsite.PathRobots)
	if resp.StatusCode != 200 || !strings.Contains(string(robots), "Disallow: /private/") ||
		!strings.Contains(string(robots), "Sitemap: "+base+testsite.PathSitemap) {
		t.Errorf("robots.txt:\n%s", robots)
	}
	_, gz := get(t, base+testsite.PathSitemapDocs)
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatalf("sitemap-docs is not gzip: %v", err)
	}
	xml, err := io.ReadAll(zr)
	if err != nil || !strings.Contains(string(xml), "<loc>"+base+testsite.PathOrphan+"</loc>") {
		t.Errorf("sitemap-docs (%v):\n%s", err, xml)
	}
}

func TestDelays(t *testing.T) {
	t.Parallel()
	base := serve(t, testsite.New(testsite.Options{SlowDelay: 150 * time.Millisecond, LinkDelay: 50 * time.Millisecond}))
	for _, tt := range []struct {
		path string
		min  time.Duration
		max  time.Duration
	}{
		{testsite.PathSlow, 200 * time.Millisecond, 2 * time.Second},
		{testsite.PathAbout, 50 * time.Millisecond, 150 * time.Millisecond},
		{testsite.PathRobots, 0, 40 * time.Millisecond},
	} {
		start := time.Now()
		get(t, base+tt.path)
		if d := time.Since(start); d < tt.min || d > tt.max {
			t.Errorf("GET %s took %v, want %v..%v", tt.path, d, tt.min, tt.max)
		}
	}
}

func TestMaxInFlight(t *testing.T) {
	t.Parallel()
	s := testsite.New(testsite.Options{LinkDelay: 100 * time.Millisecond})
	base := serve(t, s)
	done := make(chan struct{})
	for range 3 {
		go func() {
			defer func() { done <- struct{}{} }()
			resp, err := http.Get(base + "/about")
			if err == nil {
				resp.Body.Close()
			}
		}()
	}
	for range 3 {
		<-done
	}
	if got := s.MaxInFlight(); got != 3 {
		t.Errorf("MaxInFlight() = %d, want 3", got)
	}
	s.ResetStats()
	if s.TotalHits() != 0 || s.MaxInFlight() != 0 || s.Hits("/about") != 0 {
		t.Error("ResetStats left counts")
	}
}

// The existing Mapper finds the sitemap index through robots.txt and reads
// both sitemaps, the gzipped one included.
func TestMapperReadsSitemaps(t *testing.T) {
	t.Parallel()
	s := testsite.New(testsite.Options{})
	base := serve(t, s)
	m := crawl.NewMapper(newFetcher(t), crawl.MapperOptions{}, testenv.Logger(t))
	res, err := m.Map(t.Context(), crawl.MapOptions{URL: base + "/", Sitemap: crawl.SitemapOnly, KeepSimilarURLs: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range res.Links {
		got = append(got, strings.TrimPrefix(l.URL, base))
	}
	slices.Sort(got)
	if diff := cmp.Diff(s.SitemapPages(), got); diff != "" {
		t.Errorf("mapped sitemap URLs (-want +got):\n%s", diff)
	}
}

// crawlOracle is a minimal sequential crawler built on crawl.Rules and
// crawl.Robots; Expect must agree with what it finds over HTTP.
func crawlOracle(t *testing.T, s *testsite.Site, base string, sp testsite.Spec, c crawl.CrawlRules) (testsite.Expected, *crawl.Rules) {
	t.Helper()
	start := sp.Start
	if start == "" {
		start = "/"
	}
	rules, err := crawl.NewRules(base+start, c)
	if err != nil {
		t.Fatal(err)
	}
	f := newFetcher(t)
	robots, err := crawl.FetchRobots(t.Context(), f, rules.Start(), "")
	if err != nil {
		t.Fatal(err)
	}
	type item struct {
		u     *url.URL
		depth int
	}
	queue := []item{{rules.Start(), 0}}
	if sp.Sitemap != "skip" {
		m := crawl.NewMapper(f, crawl.MapperOptions{}, testenv.Logger(t))
		res, err := m.Map(t.Context(), crawl.MapOptions{URL: base + "/", Sitemap: crawl.SitemapOnly,
			KeepSimilarURLs: true, KeepQueryParameters: true, NoPathFilter: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range res.Links {
			u, _ := url.Parse(l.URL)
			queue = append(queue, item{u, 0})
		}
	}
	var e testsite.Expected
	seen := make(map[string]bool)
	id := func(u *url.URL) string { return s.Identity(sp, u.String()) }
	for i := 0; i < len(queue); i++ {
		it := queue[i]
		if i > 0 {
			if ok, _ := rules.Allow(it.u, it.depth, false); !ok {
				continue
			}
		}
		key := rules.Key(it.u)
		if seen[key] {
			continue
		}
		seen[key] = true
		if rules.IsExternal(it.u) {
			e.External = append(e.External, it.u.String())
			continue
		}
		if !sp.IgnoreRobotsTxt && !robots.Allowed(it.u) {
			e.RobotsBlocked = append(e.RobotsBlocked, id(it.u))
			continue
		}
		resp, err := f.Do(t.Context(), fetch.Request{URL: urlnorm.Normalize(it.u).String()})
		if err != nil || resp.StatusCode != http.StatusOK {
			e.Failed = append(e.Failed, id(it.u))
			continue
		}
		e.Pages = append(e.Pages, id(it.u))
		if sp.Sitemap == "only" {
			continue
		}
		final, _ := url.Parse(resp.URL)
		for _, href := range hrefs(t, resp.Body) {
			if u, err := final.Parse(href); err == nil {
				queue = append(queue, item{u, it.depth + 1})
			}
		}
	}
	for _, l := range [][]string{e.Pages, e.Failed, e.RobotsBlocked, e.External} {
		slices.Sort(l)
	}
	return e, rules
}

func hrefs(t *testing.T, body []byte) []string {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "a" {
			for _, a := range n.Attr {
				if a.Key == "href" {
					out = append(out, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out
}

func intp(n int) *int { return &n }

// Expect agrees with a real crawl over HTTP under every option.
func TestExpectMatchesACrawl(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		sp   testsite.Spec
		c    crawl.CrawlRules // besides what sp implies
	}{
		{"defaults", testsite.Spec{}, crawl.CrawlRules{}},
		{"keep similar urls", testsite.Spec{KeepSimilarURLs: true}, crawl.CrawlRules{}},
		{"ignore query parameters", testsite.Spec{IgnoreQueryParameters: true}, crawl.CrawlRules{}},
		{"ignore robots", testsite.Spec{IgnoreRobotsTxt: true}, crawl.CrawlRules{}},
		{"depth 2, no sitemap", testsite.Spec{MaxDiscoveryDepth: intp(2), Sitemap: "skip"}, crawl.CrawlRules{}},
		{"depth 0", testsite.Spec{MaxDiscoveryDepth: intp(0)}, crawl.CrawlRules{}},
		{"depth 1 with sitemap", testsite.Spec{MaxDiscoveryDepth: intp(1)}, crawl.CrawlRules{}},
		{"sitemap only", testsite.Spec{Sitemap: "only"}, crawl.CrawlRules{}},
		{"blog directory", testsite.Spec{Start: "/blog/"}, crawl.CrawlRules{}},
		{"blog without slash, no sitemap", testsite.Spec{Start: "/blog", Sitemap: "skip"}, crawl.CrawlRules{}},
		{"blog, entire domain", testsite.Spec{Start: "/blog/", Sitemap: "skip", MaxDiscoveryDepth: intp(2)}, crawl.CrawlRules{CrawlEntireDomain: true}},
		{"include and exclude", testsite.Spec{Start: "/docs/"}, crawl.CrawlRules{
			IncludePaths: []string{`^/docs/(s1/.*)?$`}, ExcludePaths: []string{`/p[2-8]$`}}},
		{"external links", testsite.Spec{AllowExternalLinks: true, Sitemap: "skip", MaxDiscoveryDepth: intp(1)}, crawl.CrawlRules{AllowExternalLinks: true}},
	}
	s := testsite.New(testsite.Options{SlowDelay: -1})
	base := serve(t, s)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := tt.c
			c.MaxDiscoveryDepth = tt.sp.MaxDiscoveryDepth
			c.DeduplicateSimilarURLs = !tt.sp.KeepSimilarURLs
			c.IgnoreQueryParameters = tt.sp.IgnoreQueryParameters
			got, rules := crawlOracle(t, s, base, tt.sp, c)
			sp := tt.sp
			sp.Filter = func(pq string) bool {
				u, err := url.Parse(base + pq)
				if err != nil {
					return false
				}
				ok, _ := rules.Allow(u, 0, false)
				return ok
			}
			want := s.Expect(sp)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("crawl vs Expect (-want +got):\n%s", diff)
			}
			t.Logf("pages %d failed %v blocked %v external %v", len(want.Pages), want.Failed, want.RobotsBlocked, want.External)
			if len(want.Pages) == 0 {
				t.Error("no pages expected")
			}
		})
	}
}

// A few Expect results spelled out, so that the oracle itself is pinned.
func TestExpectValues(t *testing.T) {
	t.Parallel()
	s := testsite.New(testsite.Options{})
	def := s.Expect(testsite.Spec{})
	if diff := cmp.Diff([]string{testsite.PathError, testsite.PathLoopA}, def.Failed); diff != "" {
		t.Errorf("Failed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{testsite.PathPrivate}, def.RobotsBlocked); diff != "" {
		t.Errorf("RobotsBlocked (-want +got):\n%s", diff)
	}
	// Defaults: every page but the disallowed two, plus the query variants.
	var want []string
	for _, p := range s.AllPages() {
		if !testsite.Disallowed(p) {
			want = append(want, p)
		}
	}
	want = append(want, "/about?utm_source=home", "/products/?page=1&sort=asc", "/products/?utm_source=x")
	slices.Sort(want)
	if diff := cmp.Diff(want, def.Pages); diff != "" {
		t.Errorf("default Pages (-want +got):\n%s", diff)
	}

	noQuery := s.Expect(testsite.Spec{IgnoreQueryParameters: true, IgnoreRobotsTxt: true})
	if diff := cmp.Diff(s.AllPages(), noQuery.Pages); diff != "" {
		t.Errorf("IgnoreQueryParameters+IgnoreRobotsTxt Pages (-want +got):\n%s", diff)
	}

	twins := s.Expect(testsite.Spec{KeepSimilarURLs: true, IgnoreQueryParameters: true, Sitemap: "skip", MaxDiscoveryDepth: intp(1)})
	for _, p := range []string{"/", "/index.html", "/blog", "/blog/", "/blog/index.html", "/about", "/about/"} {
		if !slices.Contains(twins.Pages, p) {
			t.Errorf("KeepSimilarURLs: %s missing from %v", p, twins.Pages)
		}
	}

	only := s.Expect(testsite.Spec{Sitemap: "only"})
	if diff := cmp.Diff(append([]string{"/"}, s.SitemapPages()...), only.Pages, cmp.Transformer("sort", func(in []string) []string {
		out := slices.Clone(in)
		slices.Sort(out)
		return out
	})); diff != "" {
		t.Errorf("sitemap only (-want +got):\n%s", diff)
	}

	depth := s.Expect(testsite.Spec{Sitemap: "skip", MaxDiscoveryDepth: intp(3), Filter: testsite.Under("/deep/")})
	if diff := cmp.Diff([]string{"/", "/deep/1", "/deep/2", "/deep/3"}, depth.Pages); diff != "" {
		t.Errorf("deep chain to depth 3 (-want +got):\n%s", diff)
	}

	ext := s.Expect(testsite.Spec{AllowExternalLinks: true})
	if diff := cmp.Diff([]string{testsite.DefaultExternal + "/about"}, ext.External); diff != "" {
		t.Errorf("External (-want +got):\n%s", diff)
	}
}

func TestIdentity(t *testing.T) {
	t.Parallel()
	s := testsite.New(testsite.Options{})
	tests := []struct {
		sp   testsite.Spec
		raw  string
		want string
	}{
		{testsite.Spec{}, "http://127.0.0.1:1/blog", "/blog/"},
		{testsite.Spec{}, "/blog/index.html#x", "/blog/"},
		{testsite.Spec{}, "/about/?b=1&a=2", "/about?a=2&b=1"},
		{testsite.Spec{}, "https://host", "/"},
		{testsite.Spec{IgnoreQueryParameters: true}, "/about/?b=1", "/about"},
		{testsite.Spec{KeepSimilarURLs: true}, "/blog/index.html?b=1&a=2", "/blog/index.html?a=2&b=1"},
		{testsite.Spec{}, "/unknown/", "/unknown/"},
	}
	for _, tt := range tests {
		if got := s.Identity(tt.sp, tt.raw); got != tt.want {
			t.Errorf("Identity(%+v, %q) = %q, want %q", tt.sp, tt.raw, got, tt.want)
		}
	}
}

func TestUnder(t *testing.T) {
	t.Parallel()
	f := testsite.Under("/blog/")
	for pq, want := range map[string]bool{
		"/blog/": true, "/blog": true, "/blog/post-1": true, "/blog?x=1": true, "/blog-x": false, "/": false,
	} {
		if got := f(pq); got != want {
			t.Errorf("Under(/blog/)(%q) = %v, want %v", pq, got, want)
		}
	}
}
