// Package testsite serves a generated, deterministic web site for crawl
// and map tests and benchmarks, and knows which URLs a crawl of it must
// find under given options.
//
// The site, for Options.Pages = N (default 300), has exactly N distinct
// pages answering 200, all HTML, all with absolute-path links:
//
//   - / links to every section and to the traps below, to twin spellings
//     (/index.html, /blog, /blog/index.html, /about/), query duplicates
//     (/about?utm_source=home, /products/?utm_source=x), a fragment link,
//     mailto:, javascript: and tel: links, three assets (/assets/style.css,
//     /assets/app.js, /assets/logo.png) and two links to the external
//     origin (its bare home page and its /about);
//   - /about, /orphan (listed in a sitemap, linked from nowhere),
//     /blog/hidden (likewise, under /blog/);
//   - /blog/ with pages /blog/page/2, /blog/page/3 ... of 20 posts each and
//     posts /blog/post-1 ... (each linking the next);
//   - /docs/ with sections /docs/s1/, subsections /docs/s1/t1/ and leaves
//     /docs/s1/t1/p1 ... (3 subsections of 8 leaves per section);
//   - /products/ linking every /products/item-N and the sort twins
//     /products/?page=1&sort=asc and /products/?sort=asc&page=1;
//   - /deep/1 → /deep/2 → ... → /deep/10, to test depth;
//   - /private/ and /private/secret, disallowed by robots.txt;
//   - /slow, answered after Options.SlowDelay.
//
// Besides those pages: /error answers 500 (no links), /loop-a and /loop-b
// redirect to each other forever, /robots.txt disallows /private/ for
// every agent (and everything for BadBot) and names /sitemap.xml, a
// sitemap index of /sitemap-blog.xml (blog pages) and the gzipped
// /sitemap-docs.xml.gz (docs pages and /orphan). Any spelling of a page
// (trailing slash added or removed, index.html, index.htm or index.php
// appended to a directory, any query) serves it with 200. Anything else is
// 404. Absolute URLs (sitemaps, robots.txt) use the origin of the request.
//
// Expect computes what a crawl must find; Identity maps the URLs a crawl
// reports onto the same terms.
package testsite

import (
	"compress/gzip"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults and fixed shape of the site.
const (
	// DefaultPages is the page count when Options.Pages is zero.
	DefaultPages = 300
	// MinPages is the smallest page count; smaller requests are raised.
	MinPages = 30
	// DefaultSlowDelay is the delay of PathSlow when Options.SlowDelay is
	// zero.
	DefaultSlowDelay = 300 * time.Millisecond
	// DefaultExternal is the external origin when Options.External is
	// empty; it never resolves.
	DefaultExternal = "http://external.invalid"
	// DeepLevels is the length of the /deep/N chain.
	DeepLevels = 10
	// PostsPerPage is the number of posts per blog listing page.
	PostsPerPage = 20
)

// Paths of the site's special pages and files.
const (
	PathHome       = "/"
	PathAbout      = "/about"
	PathBlog       = "/blog/"
	PathDocs       = "/docs/"
	PathProducts   = "/products/"
	PathSlow       = "/slow"           // answers after Options.SlowDelay
	PathError      = "/error"          // answers 500
	PathLoopA      = "/loop-a"         // redirects to PathLoopB
	PathLoopB      = "/loop-b"         // redirects to PathLoopA
	PathPrivate    = "/private/"       // disallowed by robots.txt; links PathSecret
	PathSecret     = "/private/secret" // disallowed by robots.txt
	PathOrphan     = "/orphan"         // in a sitemap, not linked
	PathBlogHidden = "/blog/hidden"    // in a sitemap, not linked
	PathDeepest    = "/deep/10"        // end of the /deep/N chain, depth DeepLevels

	PathRobots      = "/robots.txt"
	PathSitemap     = "/sitemap.xml" // index of the two below
	PathSitemapBlog = "/sitemap-blog.xml"
	PathSitemapDocs = "/sitemap-docs.xml.gz" // gzip file, no Content-Encoding

	// RobotsDisallow is the path prefix robots.txt disallows for every
	// agent.
	RobotsDisallow = "/private/"
	// BadBot is a user agent robots.txt disallows everything for.
	BadBot = "BadBot"
)

// Options shape a Site.
type Options struct {
	// Pages is the number of distinct pages answering 200 (default
	// DefaultPages, at least MinPages).
	Pages int
	// SlowDelay is how long PathSlow takes: 0 = DefaultSlowDelay,
	// negative = no delay.
	SlowDelay time.Duration
	// External is the origin ("http://127.0.0.1:8081") of the other site
	// the home page links to (its "/" and "/about"); DefaultExternal when
	// empty, which never resolves (though a lookup may take the
	// resolver's time). Tests that follow external links serve another
	// Site and pass its origin.
	External string
	// LinkDelay delays every page (not robots.txt, sitemaps or assets), for
	// I/O-bound benchmarks.
	LinkDelay time.Duration
}

// page is one page of the site.
type page struct {
	path     string // canonical spelling
	title    string
	links    []string // hrefs in page order
	status   int      // 200, 500, or 302 for the loop
	location string   // redirect target
	sitemap  string   // PathSitemapBlog, PathSitemapDocs or ""
	slow     bool
}

// Site is the generated site; it is an http.Handler, safe for concurrent
// use, and records the requests it gets.
type Site struct {
	opts  Options
	pages map[string]*page
	order []string       // canonical paths in generation order
	depth map[string]int // link distance from "/" of linked pages
	ext   string

	mu          sync.Mutex
	hits        map[string]int
	total       int
	inFlight    int
	maxInFlight int
}

// New generates a site.
func New(opts Options) *Site {
	if opts.Pages == 0 {
		opts.Pages = DefaultPages
	}
	opts.Pages = max(opts.Pages, MinPages)
	if opts.SlowDelay == 0 {
		opts.SlowDelay = DefaultSlowDelay
	}
	ext := strings.TrimRight(opts.External, "/")
	if ext == "" {
		ext = DefaultExternal
	}
	s := &Site{opts: opts, pages: make(map[string]*page), ext: ext, hits: make(map[string]int)}
	s.generate()
	s.depth = s.linkDepths()
	return s
}

func (s *Site) add(p *page) *page {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	s.pages[p.path] = p
	s.order = append(s.order, p.path)
	return p
}

// fixedPages is the number of 200 pages outside blog, docs and products
// beyond their index pages: /, /about, /blog/, /docs/, /products/, /slow,
// /private/, /private/secret, /orphan, /blog/hidden and the deep chain.
const fixedPages = 10 + DeepLevels

// generate builds the page graph.
func (s *Site) generate() {
	rest := s.opts.Pages - fixedPages
	nProducts := max(rest/5, 1)
	rest -= nProducts
	blogBudget := rest / 2
	// Posts plus extra listing pages must fit the blog budget.
	nPosts := blogBudget
	for nPosts > 0 && nPosts+listingPages(nPosts)-1 > blogBudget {
		nPosts--
	}
	docsBudget := rest - nPosts - (listingPages(nPosts) - 1)

	s.add(&page{path: PathHome, title: "Home", links: []string{
		PathAbout, PathAbout + "/", PathAbout + "?utm_source=home", PathAbout + "#team", "#top",
		PathBlog, "/blog", "/blog/index.html", "/index.html",
		PathDocs, PathProducts, PathProducts + "?utm_source=x",
		PathSlow, PathError, PathLoopA, PathPrivate, "/deep/1",
		"/assets/style.css", "/assets/app.js", "/assets/logo.png",
		s.ext + "/", s.ext + "/about",
		"mailto:hello@example.com", "javascript:void(0)", "tel:+15550100",
	}})
	s.add(&page{path: PathAbout, title: "About", links: []string{PathHome, PathBlog}})
	s.add(&page{path: PathSlow, title: "Slow page", links: []string{PathHome}, slow: true})
	s.add(&page{path: PathError, title: "Server error", status: http.StatusInternalServerError})
	s.add(&page{path: PathLoopA, status: http.StatusFound, location: PathLoopB})
	s.add(&page{path: PathLoopB, status: http.StatusFound, location: PathLoopA})
	s.add(&page{path: PathPrivate, title: "Private", links: []string{PathSecret, PathHome}})
	s.add(&page{path: PathSecret, title: "Secret", links: []string{PathHome}})
	s.add(&page{path: PathOrphan, title: "Orphan", links: []string{PathHome}, sitemap: PathSitemapDocs})
	for i := 1; i <= DeepLevels; i++ {
		links := []string{PathHome}
		if i < DeepLevels {
			links = append(links, fmt.Sprintf("/deep/%d", i+1))
		}
		s.add(&page{path: fmt.Sprintf("/deep/%d", i), title: fmt.Sprintf("Deep %d", i), links: links})
	}

	// Blog: listing pages of PostsPerPage posts, each post linking the next.
	nListings := listingPages(nPosts)
	for l := 1; l <= nListings; l++ {
		p := &page{path: listingPath(l), title: fmt.Sprintf("Blog, page %d", l), sitemap: PathSitemapBlog}
		if l > 1 {
			p.sitemap = ""
			p.links = append(p.links, listingPath(l-1))
		}
		for i := (l-1)*PostsPerPage + 1; i <= min(l*PostsPerPage, nPosts); i++ {
			p.links = append(p.links, postPath(i))
		}
		if l < nListings {
			p.links = append(p.links, listingPath(l+1))
		}
		p.links = append(p.links, PathHome)
		s.add(p)
	}
	for i := 1; i <= nPosts; i++ {
		links := []string{PathBlog}
		if i < nPosts {
			links = append(links, postPath(i+1))
		}
		s.add(&page{path: postPath(i), title: fmt.Sprintf("Post %d", i), links: links, sitemap: PathSitemapBlog})
	}
	s.add(&page{path: PathBlogHidden, title: "Hidden post", links: []string{PathBlog}, sitemap: PathSitemapBlog})

	// Docs: sections of 3 subsections of 8 leaves, until the budget is spent.
	docs := s.add(&page{path: PathDocs, title: "Docs", links: []string{PathHome}, sitemap: PathSitemapDocs})
	left := docsBudget
	for sec := 1; left > 0; sec++ {
		sp := fmt.Sprintf("/docs/s%d/", sec)
		section := s.add(&page{path: sp, title: fmt.Sprintf("Docs section %d", sec), links: []string{PathDocs}, sitemap: PathSitemapDocs})
		docs.links = append(docs.links, sp)
		left--
		for sub := 1; sub <= 3 && left > 0; sub++ {
			tp := fmt.Sprintf("%st%d/", sp, sub)
			subsection := s.add(&page{path: tp, title: fmt.Sprintf("Docs %d.%d", sec, sub), links: []string{sp}, sitemap: PathSitemapDocs})
			section.links = append(section.links, tp)
			left--
			for leaf := 1; leaf <= 8 && left > 0; leaf++ {
				lp := fmt.Sprintf("%sp%d", tp, leaf)
				subsection.links = append(subsection.links, lp)
				s.add(&page{path: lp, title: fmt.Sprintf("Docs %d.%d.%d", sec, sub, leaf), links: []string{tp}, sitemap: PathSitemapDocs})
				left--
			}
		}
	}
	// Each leaf links the next one of its subsection.
	for _, p := range s.order {
		if next := nextLeaf(p); next != "" && s.pages[next] != nil {
			s.pages[p].links = append(s.pages[p].links, next)
		}
	}

	products := s.add(&page{path: PathProducts, title: "Products", links: []string{
		PathHome, PathProducts + "?page=1&sort=asc", PathProducts + "?sort=asc&page=1",
	}})
	for i := 1; i <= nProducts; i++ {
		ip := fmt.Sprintf("/products/item-%d", i)
		products.links = append(products.links, ip)
		s.add(&page{path: ip, title: fmt.Sprintf("Product %d", i), links: []string{PathProducts}})
	}
}

func listingPages(posts int) int { return max(1, (posts+PostsPerPage-1)/PostsPerPage) }

func listingPath(l int) string {
	if l == 1 {
		return PathBlog
	}
	return fmt.Sprintf("/blog/page/%d", l)
}

func postPath(i int) string { return fmt.Sprintf("/blog/post-%d", i) }

// nextLeaf returns the path of the docs leaf after p ("" when p is none).
func nextLeaf(p string) string {
	i := strings.LastIndex(p, "/p")
	if !strings.HasPrefix(p, "/docs/") || i < 0 {
		return ""
	}
	n, err := strconv.Atoi(p[i+2:])
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s/p%d", p[:i], n+1)
}

// lookup returns the page a path spells, or nil.
func (s *Site) lookup(p string) *page {
	if pg := s.pages[p]; pg != nil {
		return pg
	}
	if i := strings.LastIndexByte(p, '/'); i >= 0 && isIndexFile(p[i+1:]) {
		if pg := s.pages[p[:i+1]]; pg != nil {
			return pg
		}
		return nil
	}
	if strings.HasSuffix(p, "/") {
		if pg := s.pages[strings.TrimSuffix(p, "/")]; pg != nil {
			return pg
		}
		return nil
	}
	return s.pages[p+"/"]
}

func isIndexFile(seg string) bool {
	switch strings.ToLower(seg) {
	case "index.html", "index.htm", "index.php":
		return true
	}
	return false
}

// internal resolves an href found on the site to an internal path and
// query; ok is false for external, non-http and asset links.
func (s *Site) internal(href string) (pathQuery string, ok bool) {
	if !strings.HasPrefix(href, "/") || strings.HasPrefix(href, "//") || strings.HasPrefix(href, "/assets/") {
		return "", false
	}
	href, _, _ = strings.Cut(href, "#")
	return href, true
}

// external reports whether href is an absolute link to the external
// origin that is not its bare home page.
func (s *Site) external(href string) bool {
	rest, ok := strings.CutPrefix(href, s.ext)
	return ok && rest != "" && rest != "/"
}

// linkDepths is the BFS link distance from "/" of every page linked from
// it, robots.txt ignored.
func (s *Site) linkDepths() map[string]int {
	d := map[string]int{PathHome: 0}
	queue := []string{PathHome}
	for len(queue) > 0 {
		p := s.pages[queue[0]]
		queue = queue[1:]
		if p.status != http.StatusOK {
			continue
		}
		for _, href := range p.links {
			pq, ok := s.internal(href)
			if !ok {
				continue
			}
			path, _, _ := strings.Cut(pq, "?")
			t := s.lookup(path)
			if t == nil {
				continue
			}
			if _, seen := d[t.path]; !seen {
				d[t.path] = d[p.path] + 1
				queue = append(queue, t.path)
			}
		}
	}
	return d
}

// Pages returns the canonical paths of the pages answering 200 that links
// from "/" reach (robots.txt ignored), sorted. Orphans are not included.
func (s *Site) Pages() []string {
	var out []string
	for p := range s.depth {
		if s.pages[p].status == http.StatusOK {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// AllPages returns the canonical paths of every page answering 200,
// orphans included: Options.Pages of them, sorted.
func (s *Site) AllPages() []string {
	var out []string
	for _, p := range s.order {
		if s.pages[p].status == http.StatusOK {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// PagesUnder returns the paths of Pages that start with prefix.
func (s *Site) PagesUnder(prefix string) []string {
	var out []string
	for _, p := range s.Pages() {
		if strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	return out
}

// SitemapPages returns the canonical paths the sitemaps list, sorted.
func (s *Site) SitemapPages() []string {
	var out []string
	for _, p := range s.order {
		if s.pages[p].sitemap != "" {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// Depth returns the link distance from "/" of the page that path (any
// spelling, query ignored) names, or -1 when no link leads to it or it is
// not a page.
func (s *Site) Depth(path string) int {
	path, _, _ = strings.Cut(path, "?")
	if p := s.lookup(path); p != nil {
		if d, ok := s.depth[p.path]; ok {
			return d
		}
	}
	return -1
}

// Links returns the hrefs of the page that path names, in page order.
func (s *Site) Links(path string) []string {
	if p := s.lookup(path); p != nil {
		return slices.Clone(p.links)
	}
	return nil
}

// Disallowed reports whether robots.txt disallows path for every agent
// but BadBot (which is disallowed everything).
func Disallowed(path string) bool { return strings.HasPrefix(path, RobotsDisallow) }

// ExternalOrigin returns the origin external links point to.
func (s *Site) ExternalOrigin() string { return s.ext }

// Hits returns how many requests had path (exactly, any query).
func (s *Site) Hits(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// TotalHits returns the number of requests served.
func (s *Site) TotalHits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// InFlight returns the number of requests being served now.
func (s *Site) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight
}

// MaxInFlight returns the largest number of requests served at once.
func (s *Site) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight
}

// ResetStats clears the counts of Hits, TotalHits and MaxInFlight.
func (s *Site) ResetStats() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hits = make(map[string]int)
	s.total, s.maxInFlight = 0, 0
}

// ServeHTTP serves the site.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	s.total++
	s.inFlight++
	s.maxInFlight = max(s.maxInFlight, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()

	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	origin := "http://" + r.Host
	if r.TLS != nil {
		origin = "https://" + r.Host
	}
	switch r.URL.Path {
	case PathRobots:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "# testsite\nUser-agent: %s\nDisallow: /\n\nUser-agent: *\nDisallow: %s\n\nSitemap: %s%s\n",
			BadBot, RobotsDisallow, origin, PathSitemap)
		return
	case PathSitemap:
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
			`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+"\n"+
			"<sitemap><loc>%s%s</loc></sitemap>\n<sitemap><loc>%s%s</loc></sitemap>\n</sitemapindex>\n",
			origin, PathSitemapBlog, origin, PathSitemapDocs)
		return
	case PathSitemapBlog:
		w.Header().Set("Content-Type", "application/xml")
		s.writeURLSet(w, origin, PathSitemapBlog)
		return
	case PathSitemapDocs:
		w.Header().Set("Content-Type", "application/gzip")
		zw := gzip.NewWriter(w)
		s.writeURLSet(zw, origin, PathSitemapDocs)
		_ = zw.Close()
		return
	case "/assets/style.css":
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprint(w, "body{font-family:sans-serif}\n")
		return
	case "/assets/app.js":
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, "console.log('testsite');\n")
		return
	case "/assets/logo.png":
		w.Header().Set("Content-Type", "image/png")
		_, _ = io.WriteString(w, pngPixel)
		return
	}

	p := s.lookup(r.URL.Path)
	if p == nil {
		http.NotFound(w, r)
		return
	}
	delay := s.opts.LinkDelay
	if p.slow && s.opts.SlowDelay > 0 {
		delay += s.opts.SlowDelay
	}
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-r.Context().Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	if p.location != "" {
		http.Redirect(w, r, p.location, p.status)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(p.status)
	s.writePage(w, p)
}

// writeURLSet writes the urlset of one sitemap file.
func (s *Site) writeURLSet(w io.Writer, origin, sitemap string) {
	fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+"\n")
	for _, p := range s.order {
		if s.pages[p].sitemap == sitemap {
			fmt.Fprintf(w, "<url><loc>%s%s</loc><lastmod>2024-01-01</lastmod></url>\n", origin, p)
		}
	}
	fmt.Fprint(w, "</urlset>\n")
}

// writePage writes a page's HTML.
func (s *Site) writePage(w http.ResponseWriter, p *page) {
	title := p.title
	if title == "" {
		title = http.StatusText(p.status)
	}
	t := html.EscapeString(title)
	fmt.Fprintf(w, `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>%s</title>
<meta name="description" content="The %s page of the test site.">
<link rel="stylesheet" href="/assets/style.css"></head>
<body id="top"><h1>%s</h1>
<p>This is the %s page of a generated test site. It has a little text so that its markdown is not empty.</p>
<ul>
`, t, t, t, t)
	for _, href := range p.links {
		fmt.Fprintf(w, "<li><a href=\"%s\">%s</a></li>\n", html.EscapeString(href), html.EscapeString(linkText(href)))
	}
	fmt.Fprint(w, "</ul>\n<script src=\"/assets/app.js\"></script>\n</body></html>\n")
}

// linkText is the anchor text of a link.
func linkText(href string) string {
	if u, err := url.Parse(href); err == nil && u.Path != "" && u.Path != "/" {
		return strings.Trim(u.Path, "/")
	}
	return href
}

// pngPixel is a 1x1 transparent PNG.
const pngPixel = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89" +
	"\x00\x00\x00\rIDATx\x9cc\x00\x01\x00\x00\x05\x00\x01\r\n-\xb4\x00\x00\x00\x00IEND\xaeB`\x82"
