package testsite

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// Spec describes a crawl of the site in the terms of POST /v2/crawl. The
// zero value is a crawl from "/" with the API defaults: sitemap included,
// robots.txt obeyed, similar URLs deduplicated, query strings kept, no
// depth limit, no external links.
type Spec struct {
	// Start is the path (and query) the crawl starts from; "" means "/".
	// The start page is always fetched: Filter does not apply to it.
	Start string
	// MaxDiscoveryDepth limits the link distance: the start URL and the
	// sitemap URLs are depth 0, every link hop adds 1.
	MaxDiscoveryDepth *int
	// Sitemap is "include" (or ""), "skip" or "only" (the start URL and the
	// sitemap URLs, no links followed).
	Sitemap string
	// IgnoreRobotsTxt fetches what robots.txt disallows.
	IgnoreRobotsTxt bool
	// KeepSimilarURLs is deduplicateSimilarURLs=false: twin spellings
	// (trailing slash, index.html) count as distinct pages.
	KeepSimilarURLs bool
	// IgnoreQueryParameters makes URLs that differ in their query one page.
	IgnoreQueryParameters bool
	// AllowExternalLinks follows the home page's link to the external
	// origin's /about (one hop; its bare home page is skipped). Filter
	// does not apply to external links.
	AllowExternalLinks bool
	// Filter, when set, decides which discovered internal URLs (path and
	// query as linked, fragment dropped, e.g. "/blog?x=1") the crawl
	// follows: the start-path scope, includePaths and excludePaths. A URL
	// it rejects is neither fetched nor counted as seen, so another
	// spelling of the same page may still pass.
	Filter func(pathQuery string) bool
}

// Expected is what a crawl described by a Spec must report, in Identity
// terms, each list sorted.
type Expected struct {
	// Pages are the pages fetched with status 200: the crawl's documents.
	Pages []string
	// Failed are the URLs fetched that fail: PathError (500) and
	// PathLoopA (a redirect loop; no link leads to PathLoopB).
	Failed []string
	// RobotsBlocked are the URLs discovered but not fetched because
	// robots.txt disallows them.
	RobotsBlocked []string
	// External are the absolute external URLs the crawl fetches.
	External []string
}

// Under returns a Spec.Filter keeping the paths under dir, a path ending
// in "/", and dir without its slash: the scope of a crawl started at dir
// without crawlEntireDomain.
func Under(dir string) func(string) bool {
	eq := strings.TrimSuffix(dir, "/")
	return func(pq string) bool {
		p, _, _ := strings.Cut(pq, "?")
		return p == eq || strings.HasPrefix(p, dir)
	}
}

// Identity maps a URL of the site (a full URL, whose scheme and host are
// ignored, or a path with an optional query) to the form Expect reports
// it in under sp: the fragment dropped; the query dropped with
// IgnoreQueryParameters, else its parameters sorted; and, unless
// KeepSimilarURLs, the path replaced by the canonical path of the page it
// spells (so "/blog", "/blog/index.html" and "/blog/" are all "/blog/").
func (s *Site) Identity(sp Spec, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	p := u.Path
	if p == "" {
		p = "/"
	}
	if !sp.KeepSimilarURLs {
		if pg := s.lookup(p); pg != nil {
			p = pg.path
		}
	}
	if !sp.IgnoreQueryParameters {
		if q := sortedQuery(u.RawQuery); q != "" {
			p += "?" + q
		}
	}
	return p
}

// sortedQuery sorts the parameters of a raw query, dropping empty ones.
func sortedQuery(raw string) string {
	var kept []string
	for _, s := range strings.Split(raw, "&") {
		if s != "" {
			kept = append(kept, s)
		}
	}
	sort.Strings(kept)
	return strings.Join(kept, "&")
}

// Expect returns what a crawl described by sp must find. It walks the
// site's links breadth first, so each URL is judged at its smallest link
// distance, and a URL rejected by Filter or the depth limit is not marked
// as seen. Crawl limits are not modelled.
func (s *Site) Expect(sp Spec) Expected {
	type item struct {
		pq    string
		depth int
	}
	start := sp.Start
	if start == "" {
		start = PathHome
	}
	queue := []item{{start, 0}}
	if sp.Sitemap != "skip" {
		for _, p := range s.SitemapPages() {
			queue = append(queue, item{p, 0})
		}
	}
	var e Expected
	seen := make(map[string]bool)
	seenExt := make(map[string]bool)
	for i := 0; i < len(queue); i++ {
		it := queue[i]
		id := s.Identity(sp, it.pq)
		if seen[id] || (i > 0 && sp.Filter != nil && !sp.Filter(it.pq)) {
			continue
		}
		seen[id] = true
		path, _, _ := strings.Cut(it.pq, "?")
		if !sp.IgnoreRobotsTxt && Disallowed(path) {
			e.RobotsBlocked = append(e.RobotsBlocked, id)
			continue
		}
		pg := s.lookup(path)
		if pg == nil {
			continue
		}
		if pg.status != http.StatusOK {
			e.Failed = append(e.Failed, id)
			continue
		}
		e.Pages = append(e.Pages, id)
		if sp.Sitemap == "only" {
			continue
		}
		next := it.depth + 1
		if sp.MaxDiscoveryDepth != nil && next > *sp.MaxDiscoveryDepth {
			continue
		}
		for _, href := range pg.links {
			if pq, ok := s.internal(href); ok {
				queue = append(queue, item{pq, next})
			} else if sp.AllowExternalLinks && s.external(href) && !seenExt[href] {
				seenExt[href] = true
				e.External = append(e.External, href)
			}
		}
	}
	for _, l := range [][]string{e.Pages, e.Failed, e.RobotsBlocked, e.External} {
		sort.Strings(l)
	}
	return e
}
