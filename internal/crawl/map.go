// Package crawl discovers the URLs of a site: the crawl rules (scope,
// patterns, dedupe keys), robots.txt, sitemaps, links and the map; the
// jobs that crawl with them are package crawljob's.
//
// Mapper lists a site quickly
// from its sitemaps (found through robots.txt and /sitemap.xml, index files
// and gzip included, streamed within a per-map budget) and from the links
// of its start page, filtered, deduplicated and optionally ranked against a
// search phrase.
package crawl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/html"

	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/logsafe"
	"github.com/firegate/firegate/internal/pagemeta"
	"github.com/firegate/firegate/internal/pause"
	"github.com/firegate/firegate/internal/proxypool"
)

// Limits and defaults of a map.
const (
	// DefaultLimit is the number of links returned when MapOptions.Limit
	// is zero.
	DefaultLimit = 5000
	// MaxLimit is the largest accepted MapOptions.Limit.
	MaxLimit = 100000
	// DefaultSitemapTotalBytes is the default MaxSitemapTotalBytes: the
	// decompressed sitemap bytes one map or crawl reads in all.
	DefaultSitemapTotalBytes = 64 << 20
	// DefaultSitemapTotalURLs is the default MaxSitemapTotalURLs: the
	// sitemap entries one map or crawl reads in all.
	DefaultSitemapTotalURLs = 500000
	// DefaultLinkBytes is the default MaxLinkBytes: the size of the links
	// one map gathers.
	DefaultLinkBytes = 32 << 20

	defaultMaxSitemaps     = 100
	defaultMaxSitemapDepth = 3
	defaultMaxSitemapBytes = 50 << 20 // the sitemap protocol's own cap, uncompressed
	defaultMaxSitemapURLs  = 50000    // per sitemap file, also the protocol's cap
	defaultMaxCandidates   = MaxLimit
	defaultRequestTimeout  = 15 * time.Second
	defaultMapTimeout      = 60 * time.Second
	defaultConcurrency     = 4
	maxTitleLen            = 300
)

// Fetcher performs one GET; *fetch.Client implements it. It must follow
// redirects, report the final URL in Response.URL and cap the body size.
type Fetcher interface {
	Do(ctx context.Context, req fetch.Request) (*fetch.Response, error)
}

// MapperOptions bound the work of every map. Zero fields take defaults.
type MapperOptions struct {
	// MaxSitemaps caps the sitemap files fetched per map (default 100).
	MaxSitemaps int
	// MaxSitemapDepth caps the nesting of sitemap index files: sitemaps
	// named by robots.txt or /sitemap.xml are depth 0 (default 3).
	MaxSitemapDepth int
	// MaxSitemapBytes caps the decompressed size of one sitemap (default
	// 50 MiB); the fetcher's body cap bounds the transferred bytes.
	MaxSitemapBytes int64
	// MaxSitemapURLs caps the URLs read from one sitemap (default 50000).
	MaxSitemapURLs int
	// MaxSitemapTotalBytes is the budget of decompressed sitemap bytes of
	// one map, all sitemaps together (default DefaultSitemapTotalBytes).
	// Sitemaps are parsed as a stream, so this bounds the work of a map,
	// not its memory; once spent, the map stops reading sitemaps and
	// answers with the links found so far, with a warning.
	MaxSitemapTotalBytes int64
	// MaxSitemapTotalURLs is the budget of sitemap entries (page URLs and
	// child sitemaps) of one map, all sitemaps together (default
	// DefaultSitemapTotalURLs); spending it ends the map like
	// MaxSitemapTotalBytes.
	MaxSitemapTotalURLs int
	// MaxCandidates caps the distinct URLs gathered before ranking when a
	// search phrase is given (default 100000).
	MaxCandidates int
	// MaxLinkBytes caps the total length of the URLs, titles and
	// descriptions one map gathers (default DefaultLinkBytes): what a map
	// holds in memory and answers, whatever Limit and the URL lengths.
	// Reaching it ends the map like a spent sitemap budget.
	MaxLinkBytes int
	// RequestTimeout bounds each outbound request (default 15 s).
	RequestTimeout time.Duration
	// DefaultTimeout bounds a map whose MapOptions.Timeout is zero
	// (default 60 s).
	DefaultTimeout time.Duration
	// Proxies carry the start page's fetch (the basic pool, as a scrape
	// with proxy basic); robots.txt and sitemaps go direct. Empty: direct.
	Proxies proxypool.Pools
	// Concurrency is the number of sitemaps fetched at once (default 4).
	Concurrency int
}

// SitemapMode says how sitemaps are used.
type SitemapMode string

// Sitemap modes of MapOptions.Sitemap.
const (
	SitemapInclude SitemapMode = "include" // sitemaps and start-page links
	SitemapSkip    SitemapMode = "skip"    // start-page links only
	SitemapOnly    SitemapMode = "only"    // sitemap URLs only
)

// MapOptions describe one map. The zero value of every field is the API
// default, so MapOptions{URL: u} maps u as POST /v2/map would by default.
type MapOptions struct {
	// CheckHop, when set, is asked about the URL of every page and
	// sitemap fetch of the map and about each of its redirect hops
	// (threat protection); a refused URL or hop fails that fetch.
	CheckHop func(u *url.URL) error `json:"-"`
	// URL is the absolute http(s) start URL.
	URL string
	// Search, when not blank, moves the links whose URL, title or
	// description contain its words to the front, best matches first.
	Search string
	// Sitemap is include (""), skip or only.
	Sitemap SitemapMode
	// ExcludeSubdomains keeps only the start host (www. ignored); by
	// default every host of the same registrable domain is kept.
	ExcludeSubdomains bool
	// KeepQueryParameters keeps query strings; by default they are dropped
	// and the URLs that then coincide are listed once.
	KeepQueryParameters bool
	// Limit is the maximum number of links, 1..MaxLimit; 0 = DefaultLimit.
	Limit int
	// Timeout bounds the whole map; 0 = MapperOptions.DefaultTimeout.
	// Exceeding it fails the map with ErrTimeout.
	Timeout time.Duration
	// IncludePaths and ExcludePaths are regular expressions (RE2 syntax)
	// matched against the URL path, or the full URL with RegexOnFullURL.
	// A link must match one include pattern (when any) and no exclude
	// pattern.
	IncludePaths, ExcludePaths []string
	RegexOnFullURL             bool
	// AllowExternalLinks keeps start-page links to other sites and turns
	// off the path filter.
	AllowExternalLinks bool
	// NoPathFilter keeps links outside the start URL's path; by default,
	// when the start URL has a path other than "/", only links under it
	// are kept.
	NoPathFilter bool
	// KeepSimilarURLs dedupes exact URLs only; by default www/non-www,
	// http/https, trailing-slash and trailing index.html/.htm/.php variants
	// count as one URL, and query parameters in another order too.
	KeepSimilarURLs bool
	// SkipPageLinks lists no links of the start page (maxDiscoveryDepth 0):
	// only the start URL and sitemap URLs.
	SkipPageLinks bool
	// Delay is a pause between outbound requests, which then run one at a
	// time.
	Delay time.Duration
	// Headers are sent with every request (see fetch.Request.Headers).
	Headers map[string]string
	// Languages build the Accept-Language header, first preferred.
	Languages []string
	// Country, when set (the request named location.country), picks a
	// proxy of that country for the start page; with none in the pool,
	// any proxy, with a warning naming the country.
	Country string
	// Accept, when set, is one more test every link must pass (after
	// normalisation and the other filters). A crawl passes its rules, so
	// that the links it cannot use do not fill the map's Limit.
	Accept func(*url.URL) bool
}

// Link is one mapped URL.
type Link struct {
	URL         string `json:"url"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// MapResult is the outcome of a map.
type MapResult struct {
	// Links are the URLs found, deduplicated, at most Limit.
	Links []Link
	// Warning is set when at most one link was found from a start URL
	// below the site root, or when the sitemap budget ran out.
	Warning string
	// BudgetSpent reports that the map stopped early because its sitemap
	// budget (MaxSitemapTotalBytes, MaxSitemapTotalURLs) or its link budget
	// (MaxLinkBytes) ran out; Warning then says so.
	BudgetSpent bool
}

// Mapper lists the URLs of sites. It is safe for concurrent use.
type Mapper struct {
	f    Fetcher
	opts MapperOptions
	log  *slog.Logger
}

// NewMapper returns a Mapper fetching through f. A nil log discards.
func NewMapper(f Fetcher, opts MapperOptions, log *slog.Logger) *Mapper {
	if opts.MaxSitemaps <= 0 {
		opts.MaxSitemaps = defaultMaxSitemaps
	}
	if opts.MaxSitemapDepth <= 0 {
		opts.MaxSitemapDepth = defaultMaxSitemapDepth
	}
	if opts.MaxSitemapBytes <= 0 {
		opts.MaxSitemapBytes = defaultMaxSitemapBytes
	}
	if opts.MaxSitemapURLs <= 0 {
		opts.MaxSitemapURLs = defaultMaxSitemapURLs
	}
	if opts.MaxSitemapTotalBytes <= 0 {
		opts.MaxSitemapTotalBytes = DefaultSitemapTotalBytes
	}
	if opts.MaxSitemapTotalURLs <= 0 {
		opts.MaxSitemapTotalURLs = DefaultSitemapTotalURLs
	}
	if opts.MaxLinkBytes <= 0 {
		opts.MaxLinkBytes = DefaultLinkBytes
	}
	if opts.MaxCandidates <= 0 {
		opts.MaxCandidates = defaultMaxCandidates
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = defaultRequestTimeout
	}
	if opts.DefaultTimeout <= 0 {
		opts.DefaultTimeout = defaultMapTimeout
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = defaultConcurrency
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Mapper{f: f, opts: opts, log: log}
}

// run is the state of one map.
type run struct {
	m       *Mapper
	o       MapOptions
	lang    string
	lastReq time.Time
}

// Map lists the URLs of the site of o.URL. Errors wrap ErrTimeout,
// ErrBlocked, ErrUnreachable, ErrInvalidOptions, or the context's error
// when ctx was cancelled.
func (m *Mapper) Map(ctx context.Context, o MapOptions) (MapResult, error) {
	start, err := url.Parse(o.URL)
	if err != nil || (start.Scheme != "http" && start.Scheme != "https") || start.Host == "" {
		return MapResult{}, fmt.Errorf("%w: start url %q is not an absolute http(s) url", ErrInvalidOptions, o.URL)
	}
	f, err := newFilter(o)
	if err != nil {
		return MapResult{}, err
	}
	if o.Limit <= 0 {
		o.Limit = DefaultLimit
	}
	o.Limit = min(o.Limit, MaxLimit)
	switch o.Sitemap {
	case "":
		o.Sitemap = SitemapInclude
	case SitemapInclude, SitemapSkip, SitemapOnly:
	default:
		return MapResult{}, fmt.Errorf("%w: sitemap mode %q", ErrInvalidOptions, o.Sitemap)
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = m.opts.DefaultTimeout
	}
	mctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	r := &run{m: m, o: o, lang: fetch.AcceptLanguage(o.Languages)}
	res, err := r.do(mctx, start, f)
	if cerr := mctx.Err(); cerr != nil {
		// Whatever failed, a spent budget is the reason.
		if perr := ctx.Err(); perr != nil && !errors.Is(perr, context.DeadlineExceeded) {
			return MapResult{}, fmt.Errorf("crawl: map: %w", perr)
		}
		return MapResult{}, fmt.Errorf("%w after %v", ErrTimeout, timeout)
	}
	if err != nil {
		return MapResult{}, err
	}
	return res, nil
}

// do runs the map under ctx (which carries the map's deadline).
func (r *run) do(ctx context.Context, start *url.URL, f *filter) (MapResult, error) {
	o := r.o
	capacity := o.Limit
	if strings.TrimSpace(o.Search) != "" {
		capacity = max(o.Limit, r.m.opts.MaxCandidates)
	}

	// The start page: its final URL (after redirects) anchors every host
	// and path rule; its links are candidates unless sitemap is only.
	route := r.m.opts.Proxies.Route(proxypool.Basic, proxypool.Choice{Country: o.Country}, o.Country != "")
	page, pageErr := r.startPage(ctx, start.String(), route.Proxy)
	if pageErr != nil {
		if errors.Is(pageErr, fetch.ErrBlocked) {
			return MapResult{}, fmt.Errorf("%w: %w", ErrBlocked, pageErr)
		}
		if ctx.Err() != nil {
			return MapResult{}, pageErr
		}
		r.m.log.DebugContext(ctx, "map start page failed", "url", logsafe.URL(o.URL), "err", pageErr)
	}
	base := start
	if page.final != nil {
		base = page.final
	}
	f.setBase(base)
	c := newCollector(f, capacity, r.m.opts.MaxLinkBytes, !o.KeepSimilarURLs)

	if o.Sitemap != SitemapOnly && page.ok {
		c.add(base.String(), page.title, page.description)
		if !o.SkipPageLinks {
			for _, l := range page.links {
				if !c.add(l.URL, l.Title, "") {
					break
				}
			}
		}
	}
	spent := false
	if o.Sitemap != SitemapSkip && !c.full() {
		spent = r.sitemaps(ctx, base, c)
	}
	if ctx.Err() != nil {
		return MapResult{}, ctx.Err()
	}
	if pageErr != nil && len(c.links) == 0 {
		return MapResult{}, fmt.Errorf("%w: %w", ErrUnreachable, pageErr)
	}

	links := c.links
	if strings.TrimSpace(o.Search) != "" {
		links = rank(links, o.Search)
	}
	if len(links) > o.Limit {
		links = links[:o.Limit]
	}
	res := MapResult{Links: links, BudgetSpent: spent || c.overflow}
	if res.Links == nil {
		res.Links = []Link{}
	}
	warnings := route.Warnings
	if len(links) <= 1 && o.Limit != 1 && base.Path != "" && base.Path != "/" {
		warnings = append(warnings, fmt.Sprintf("Only %d result(s) found. Mapping from the site root may find more; try the base domain: %s://%s",
			len(links), base.Scheme, base.Host))
	}
	if spent {
		warnings = append(warnings, fmt.Sprintf("The site's sitemaps are larger than this server reads for one request (%d MiB decompressed or %d URLs); the links listed are those found within that budget.",
			r.m.opts.MaxSitemapTotalBytes>>20, r.m.opts.MaxSitemapTotalURLs))
	}
	if c.overflow {
		warnings = append(warnings, fmt.Sprintf("The links found are more than this server answers for one request (%d MiB of URLs); the first %d are listed.",
			r.m.opts.MaxLinkBytes>>20, len(links)))
	}
	res.Warning = strings.Join(warnings, " ")
	return res, nil
}

// startPage is what the start page contributed.
type startPage struct {
	final              *url.URL // after redirects; nil when the fetch failed
	ok                 bool     // fetched with a status below 400
	title, description string
	links              []Link
}

// startPage fetches the start URL and extracts its title, description and
// links with their anchor text.
func (r *run) startPage(ctx context.Context, u string, proxy *proxypool.Proxy) (startPage, error) {
	resp, err := r.get(ctx, u, proxy)
	if err != nil {
		return startPage{}, fmt.Errorf("crawl: start page: %w", err)
	}
	var p startPage
	if fu, err := url.Parse(resp.URL); err == nil && fu.Host != "" {
		p.final = fu
	} else if fu, err := url.Parse(u); err == nil {
		p.final = fu
	}
	if resp.StatusCode >= 400 {
		return p, nil
	}
	p.ok = true
	if !strings.Contains(resp.ContentType, "html") {
		return p, nil
	}
	doc, err := html.Parse(bytes.NewReader(resp.Body))
	if err != nil {
		return p, nil
	}
	pbase := pagemeta.BaseURL(doc, p.final)
	meta := pagemeta.Metadata(doc, pbase)
	p.title, _ = meta["title"].(string)
	p.description, _ = meta["description"].(string)
	p.links = anchors(doc, pbase)
	return p, nil
}

// get performs one request bounded by the per-request timeout, honouring
// the delay between requests, through proxy (nil: direct).
func (r *run) get(ctx context.Context, u string, proxy *proxypool.Proxy) (*fetch.Response, error) {
	if r.o.Delay > 0 && !r.lastReq.IsZero() {
		if wait := r.o.Delay - time.Since(r.lastReq); wait > 0 {
			if err := pause.For(ctx, wait); err != nil {
				return nil, fmt.Errorf("crawl: delay: %w", err)
			}
		}
	}
	if r.o.Delay > 0 {
		defer func() { r.lastReq = time.Now() }()
	}
	if r.o.CheckHop != nil {
		// A sitemap named by robots.txt or an index may be on another
		// host: it is checked like a redirect hop before it is fetched.
		if pu, err := url.Parse(u); err == nil {
			if err := r.o.CheckHop(pu); err != nil {
				return nil, err
			}
		}
	}
	rctx, cancel := context.WithTimeout(ctx, r.m.opts.RequestTimeout)
	defer cancel()
	return r.m.f.Do(rctx, fetch.Request{URL: u, Headers: r.o.Headers, AcceptLanguage: r.lang, CheckHop: r.o.CheckHop, Proxy: proxy})
}

// filter decides which URLs belong in the result, and normalises them.
type filter struct {
	o        MapOptions
	pat      patterns
	base     *url.URL
	baseHost string // lower case, without "www."
	baseReg  string // registrable domain, "" for IPs and single labels
	prefix   string // required path prefix, "" for none
}

func newFilter(o MapOptions) (*filter, error) {
	pat, err := compilePatterns(o.IncludePaths, o.ExcludePaths, o.RegexOnFullURL)
	if err != nil {
		return nil, err // a *PatternError, matching ErrInvalidOptions
	}
	return &filter{o: o, pat: pat}, nil
}

// setBase anchors the host and path rules on the start page's final URL.
func (f *filter) setBase(base *url.URL) {
	f.base = base
	f.baseHost = stripWWW(strings.ToLower(base.Hostname()))
	f.baseReg = registrable(f.baseHost)
	if !f.o.NoPathFilter && !f.o.AllowExternalLinks && base.Path != "" && base.Path != "/" {
		f.prefix = base.Path
	}
}

// accept normalises u (in place) and reports whether it belongs in the
// result.
func (f *filter) accept(u *url.URL) bool {
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return false
	}
	u.Host = strings.ToLower(u.Host)
	u.Fragment, u.RawFragment = "", ""
	if !f.o.KeepQueryParameters {
		u.RawQuery, u.ForceQuery = "", false
	}
	if u.Path == "" {
		u.Path, u.RawPath = "/", ""
	}
	host := stripWWW(u.Hostname())
	if host != f.baseHost {
		sameDomain := !f.o.ExcludeSubdomains && f.baseReg != "" && registrable(host) == f.baseReg
		if !sameDomain && !f.o.AllowExternalLinks {
			return false
		}
	}
	if f.prefix != "" && !strings.HasPrefix(u.Path, f.prefix) {
		return false
	}
	if ok, _ := f.pat.check(u); !ok {
		return false
	}
	if f.o.Accept != nil && !f.o.Accept(u) {
		return false
	}
	return true
}

// collector gathers accepted links in discovery order without duplicates,
// at most cap of them and maxBytes of their text.
type collector struct {
	f        *filter
	cap      int
	maxBytes int
	bytes    int  // of the links' URLs, titles and descriptions
	overflow bool // a link was refused for maxBytes
	similar  bool
	seeds    [2]maphash.Seed
	seen     map[linkKey]int // dedupe key -> index in links
	links    []Link
}

// linkKey is a 128-bit hash of a dedupe key: a map of up to MaxLimit URLs
// of up to 8 KiB then costs a few MB instead of a copy of every URL.
type linkKey [2]uint64

func newCollector(f *filter, capacity, maxBytes int, similar bool) *collector {
	return &collector{f: f, cap: capacity, maxBytes: maxBytes, similar: similar,
		seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, seen: make(map[linkKey]int)}
}

// full reports that no more links are wanted.
func (c *collector) full() bool { return len(c.links) >= c.cap || c.overflow }

// add offers one URL; it reports false once the collector is full.
func (c *collector) add(raw, title, description string) bool {
	if c.full() {
		return false
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return true
	}
	return c.addURL(u, title, description)
}

// addURL is add for a parsed URL, which it may modify.
func (c *collector) addURL(u *url.URL, title, description string) bool {
	if c.full() {
		return false
	}
	if !c.f.accept(u) {
		return true
	}
	s := u.String()
	ks := s
	if c.similar {
		ks = dedupeKey(u, true, false)
	}
	key := linkKey{maphash.String(c.seeds[0], ks), maphash.String(c.seeds[1], ks)}
	if i, dup := c.seen[key]; dup {
		// Keep the first spelling, but take a title it lacked.
		if c.links[i].Title == "" && title != "" {
			c.links[i].Title = title
			c.bytes += len(title)
		}
		if c.links[i].Description == "" && description != "" {
			c.links[i].Description = description
			c.bytes += len(description)
		}
		return true
	}
	size := len(s) + len(title) + len(description)
	if c.bytes+size > c.maxBytes {
		c.overflow = true
		return false
	}
	c.bytes += size
	c.seen[key] = len(c.links)
	c.links = append(c.links, Link{URL: s, Title: title, Description: description})
	return !c.full()
}

// stripWWW removes a leading "www." label.
func stripWWW(host string) string {
	return strings.TrimPrefix(host, "www.")
}
