package crawl

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/firegate/firegate/internal/exprlimit"
	"github.com/firegate/firegate/internal/urlnorm"
)

// CrawlRules are the crawler options of POST /v2/crawl that decide which
// discovered URLs a crawl follows and which of them count as one page.
// Unlike MapOptions, the zero value is not the API default everywhere:
// DeduplicateSimilarURLs defaults to true in the API, so the caller sets it.
type CrawlRules struct {
	// IncludePaths and ExcludePaths are regular expressions (RE2 syntax)
	// matched against the URL path, or against the full URL with
	// RegexOnFullURL. A URL must match one include pattern (when any) and
	// no exclude pattern.
	IncludePaths, ExcludePaths []string
	RegexOnFullURL             bool
	// MaxDiscoveryDepth, when set, is the largest link distance followed:
	// the start URL and sitemap URLs are depth 0, each link hop adds 1.
	MaxDiscoveryDepth *int
	// CrawlEntireDomain turns off the start-path scope (see Rules.Allow).
	CrawlEntireDomain bool
	// AllowSubdomains follows links to other hosts of the start URL's
	// registrable domain (public-suffix aware).
	AllowSubdomains bool
	// AllowExternalLinks follows links to other sites, one hop only.
	AllowExternalLinks bool
	// DeduplicateSimilarURLs makes Key treat www/non-www, http/https, a
	// trailing slash and a trailing index.html, index.htm or index.php as
	// the same URL.
	DeduplicateSimilarURLs bool
	// IgnoreQueryParameters makes Key drop the query string.
	IgnoreQueryParameters bool
}

// Reasons reported by Rules.Allow for a rejected link.
const (
	ReasonInvalidURL   = "INVALID_URL"        // no host, or user info in the URL
	ReasonScheme       = "UNSUPPORTED_SCHEME" // not http or https
	ReasonDepth        = "MAX_DEPTH"          // deeper than maxDiscoveryDepth
	ReasonFileType     = "FILE_TYPE"          // an asset, archive or media file, not a page
	ReasonSubdomain    = "SUBDOMAIN"          // another host of the same site, allowSubdomains off
	ReasonExternal     = "EXTERNAL_DOMAIN"    // another site, allowExternalLinks off
	ReasonExternalLink = "EXTERNAL_LINK"      // the bare home page of another site
	ReasonExternalHop  = "EXTERNAL_HOP"       // another site, linked from an external page
	ReasonStartPath    = "OUTSIDE_START_PATH" // not under the start path, crawlEntireDomain off
	ReasonExclude      = "EXCLUDE_PATHS"      // matched an excludePaths pattern
	ReasonInclude      = "INCLUDE_PATHS"      // matched no includePaths pattern
)

// ErrStartNotIncluded means the start URL itself does not match any
// includePaths pattern.
var ErrStartNotIncluded = errors.New("crawl: start url does not match includePaths")

// PatternError is an includePaths or excludePaths entry that does not
// compile. Its message is the regular expression compiler's alone, which
// the API reports as the error text; it matches ErrInvalidOptions and
// unwraps to the compiler's error.
type PatternError struct {
	Field   string // "includePaths" or "excludePaths"
	Pattern string
	Err     error
}

// Error returns the compiler's message.
func (e *PatternError) Error() string { return e.Err.Error() }

// Unwrap returns ErrInvalidOptions and the compiler's error.
func (e *PatternError) Unwrap() []error { return []error{ErrInvalidOptions, e.Err} }

// Rules applies CrawlRules to the URLs a crawl discovers. It is immutable
// and safe for concurrent use.
type Rules struct {
	c        CrawlRules
	pat      patterns
	start    *url.URL
	site     site
	scopeDir string // required path prefix ("" = none), ends in "/"
	scopeEq  string // a path equal to it is in scope too
}

// NewRules compiles r for a crawl starting at start, an absolute http(s)
// URL. The start URL is normalised (see Normalize). A pattern that does not
// compile yields a *PatternError; a bad start URL an error wrapping
// ErrInvalidOptions.
func NewRules(start string, r CrawlRules) (*Rules, error) {
	u, err := url.Parse(strings.TrimSpace(start))
	if err != nil || (!strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https")) || u.Host == "" {
		return nil, fmt.Errorf("%w: start url %q is not an absolute http(s) url", ErrInvalidOptions, start)
	}
	pat, err := compilePatterns(r.IncludePaths, r.ExcludePaths, r.RegexOnFullURL)
	if err != nil {
		return nil, err
	}
	rules := &Rules{c: r, pat: pat}
	rules.anchor(u)
	return rules, nil
}

// Rebase returns a copy of the rules anchored on final, the URL the start
// URL redirected to: host and start-path rules then follow final.
func (r *Rules) Rebase(final *url.URL) *Rules {
	c := *r
	c.anchor(final)
	return &c
}

// anchor sets the start URL and what derives from it.
func (r *Rules) anchor(u *url.URL) {
	r.start = urlnorm.Normalize(u)
	r.site = siteOf(r.start)
	r.scopeDir, r.scopeEq = "", ""
	if !r.c.CrawlEntireDomain {
		r.scopeDir, r.scopeEq = startScope(r.start.Path)
	}
}

// Start returns the normalised start URL.
func (r *Rules) Start() *url.URL {
	u := *r.start
	return &u
}

// Options returns the rules the crawl was configured with.
func (r *Rules) Options() CrawlRules { return r.c }

// Key returns the dedupe key of u: two URLs with one key are one page. The
// fragment is dropped, the host lower-cased and a default port dropped.
// With DeduplicateSimilarURLs, www/non-www, http/https, a trailing slash
// and a trailing index.html, index.htm or index.php do not count. With
// IgnoreQueryParameters the query is dropped, otherwise its parameters are
// sorted. The key is not a URL.
func (r *Rules) Key(u *url.URL) string {
	return dedupeKey(u, r.c.DeduplicateSimilarURLs, r.c.IgnoreQueryParameters)
}

// IsExternal reports whether u is outside the crawled site: neither the
// start host (or its www twin) nor, with AllowSubdomains, another host of
// its registrable domain. Links found on an external page are passed to
// Allow with fromExternal set.
func (r *Rules) IsExternal(u *url.URL) bool {
	switch r.site.classify(u) {
	case sameHost:
		return false
	case sameDomain:
		return !r.c.AllowSubdomains
	}
	return true
}

// AllowStart checks the start URL against includePaths, which it must
// match like any other URL. excludePaths, the start-path scope and the
// file-type rule do not apply to it: the caller asked for that page.
func (r *Rules) AllowStart() error {
	if !r.pat.included(r.start) {
		return fmt.Errorf("%w: %s", ErrStartNotIncluded, r.start)
	}
	return nil
}

// Allow decides whether the crawl follows link, found at depth (the start
// URL and sitemap URLs are depth 0, each hop adds 1) on a page that is
// external when fromExternal is set. When it does not, reason is one of the
// Reason constants. Checks, in order:
//
//   - the URL is absolute http or https, without user info;
//   - depth is at most MaxDiscoveryDepth (when set);
//   - the path does not end in an asset, media or archive extension (PDF
//     and office documents are pages);
//   - the host is the start host or its www twin, or with AllowSubdomains
//     any host of the same registrable domain, on the start URL's port
//     (80 and 443 count as one, so http/https twins match); with
//     AllowExternalLinks
//     other hosts are followed one hop: not from an external page, and not
//     their bare home page (path "/" and no query);
//   - without CrawlEntireDomain, URLs of the crawled site must be under the
//     start path (external links are exempt). A start path ending in "/"
//     is a directory: start /blog/ admits /blog, /blog/ and /blog/...; a
//     start path without one names a directory too: start /blog admits
//     /blog, /blog/ and /blog/..., but not /blog-archive or /blogging. A
//     start path ending in index.html, index.htm or index.php stands for
//     its directory. The site root admits every path;
//   - no excludePaths pattern and, when any, one includePaths pattern
//     matches the path (the full URL with RegexOnFullURL).
func (r *Rules) Allow(link *url.URL, depth int, fromExternal bool) (ok bool, reason string) {
	if link == nil || link.Host == "" || link.User != nil {
		return false, ReasonInvalidURL
	}
	if s := strings.ToLower(link.Scheme); s != "http" && s != "https" {
		return false, ReasonScheme
	}
	if r.c.MaxDiscoveryDepth != nil && depth > *r.c.MaxDiscoveryDepth {
		return false, ReasonDepth
	}
	if skippedFile(link.Path) {
		return false, ReasonFileType
	}
	external := false
	switch r.site.classify(link) {
	case sameHost:
	case sameDomain:
		if !r.c.AllowSubdomains {
			if !r.c.AllowExternalLinks {
				return false, ReasonSubdomain
			}
			external = true
		}
	default:
		if !r.c.AllowExternalLinks {
			return false, ReasonExternal
		}
		external = true
	}
	if external {
		if fromExternal {
			return false, ReasonExternalHop
		}
		if (link.Path == "" || link.Path == "/") && link.RawQuery == "" {
			return false, ReasonExternalLink
		}
	} else if r.scopeDir != "" && link.Path != r.scopeEq && !strings.HasPrefix(link.Path, r.scopeDir) {
		return false, ReasonStartPath
	}
	return r.pat.check(link)
}

// startScope returns the directory a start path confines a crawl to and
// the one path outside it that is admitted too ("" for the site root).
func startScope(p string) (dir, eq string) {
	if i := strings.LastIndexByte(p, '/'); i >= 0 && isIndexFile(p[i+1:]) {
		p = p[:i+1]
	}
	if p == "" || p == "/" {
		return "", ""
	}
	if strings.HasSuffix(p, "/") {
		return p, strings.TrimSuffix(p, "/")
	}
	return p + "/", p
}

// isIndexFile reports whether a last path segment is a directory index.
func isIndexFile(seg string) bool {
	switch strings.ToLower(seg) {
	case "index.html", "index.htm", "index.php":
		return true
	}
	return false
}

// skippedFile reports whether a path names a file that is not a page:
// style sheets, scripts, images, fonts, audio, video, archives and
// executables.
func skippedFile(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".css", ".js", ".mjs", ".map",
		".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif", ".svg", ".ico", ".bmp", ".tif", ".tiff",
		".woff", ".woff2", ".ttf", ".otf", ".eot",
		".mp3", ".m4a", ".wav", ".ogg", ".flac", ".mp4", ".m4v", ".webm", ".avi", ".mov", ".mkv", ".wmv",
		".zip", ".gz", ".tgz", ".tar", ".rar", ".7z", ".bz2", ".xz",
		".exe", ".dmg", ".msi", ".apk", ".iso", ".bin", ".deb", ".rpm":
		return true
	}
	return false
}

// patterns are compiled includePaths and excludePaths.
type patterns struct {
	include, exclude []*regexp.Regexp
	fullURL          bool
}

// compilePatterns compiles include and exclude within exprlimit's bounds;
// a bad one yields a *PatternError.
func compilePatterns(include, exclude []string, fullURL bool) (patterns, error) {
	p := patterns{fullURL: fullURL}
	var i int
	var err error
	if p.include, i, err = exprlimit.Regexps(include); err != nil {
		return patterns{}, &PatternError{Field: "includePaths", Pattern: include[i], Err: err}
	}
	if p.exclude, i, err = exprlimit.Regexps(exclude); err != nil {
		return patterns{}, &PatternError{Field: "excludePaths", Pattern: exclude[i], Err: err}
	}
	return p, nil
}

// target is the string the patterns are matched against.
func (p patterns) target(u *url.URL) string {
	if p.fullURL {
		return u.String()
	}
	return u.Path
}

// check applies both lists to u.
func (p patterns) check(u *url.URL) (bool, string) {
	t := p.target(u)
	for _, re := range p.exclude {
		if re.MatchString(t) {
			return false, ReasonExclude
		}
	}
	if !p.matchInclude(t) {
		return false, ReasonInclude
	}
	return true, ""
}

// included reports whether u passes the include list.
func (p patterns) included(u *url.URL) bool { return p.matchInclude(p.target(u)) }

func (p patterns) matchInclude(t string) bool {
	if len(p.include) == 0 {
		return true
	}
	for _, re := range p.include {
		if re.MatchString(t) {
			return true
		}
	}
	return false
}

// hostClass is how a URL's host relates to the start host.
type hostClass int

const (
	otherSite  hostClass = iota
	sameHost             // the start host or its www twin
	sameDomain           // another host of the start host's registrable domain
)

// site identifies the start host.
type site struct {
	host string // lower case, without "www."
	port string // "" for a default port
	reg  string // registrable domain, "" for IPs and single labels
}

func siteOf(u *url.URL) site {
	h := stripWWW(strings.ToLower(u.Hostname()))
	return site{host: h, port: sitePort(u), reg: registrable(h)}
}

// sitePort is u's port with 80 and 443 (either scheme's default) as "", so
// that http and https twins are one site.
func sitePort(u *url.URL) string {
	p := u.Port()
	if p == "80" || p == "443" {
		return ""
	}
	return p
}

// classify relates u's host to the site's; a port other than the site's
// (80 and 443 aside) makes another site.
func (s site) classify(u *url.URL) hostClass {
	if sitePort(u) != s.port {
		return otherSite
	}
	h := stripWWW(strings.ToLower(u.Hostname()))
	if h == s.host {
		return sameHost
	}
	if s.reg != "" && registrable(h) == s.reg {
		return sameDomain
	}
	return otherSite
}

// dedupeKey is Rules.Key for the given options.
func dedupeKey(u *url.URL, similar, dropQuery bool) string {
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if port == urlnorm.DefaultPort(scheme) {
		port = ""
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	var b strings.Builder
	if similar {
		host = stripWWW(host)
		if port == "80" || port == "443" {
			port = ""
		}
		if i := strings.LastIndexByte(p, '/'); i >= 0 && isIndexFile(p[i+1:]) {
			p = p[:i+1]
		}
		p = strings.TrimRight(p, "/")
	} else {
		b.WriteString(scheme)
		b.WriteString("://")
	}
	b.WriteString(urlnorm.JoinHost(host, port))
	b.WriteString(p)
	if !dropQuery {
		if q := sortedQuery(u.RawQuery); q != "" {
			b.WriteByte('?')
			b.WriteString(q)
		}
	}
	return b.String()
}

// sortedQuery returns the parameters of a raw query sorted, as written
// (no re-encoding), empty ones dropped.
func sortedQuery(raw string) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(raw, "&")
	kept := parts[:0]
	for _, s := range parts {
		if s != "" {
			kept = append(kept, s)
		}
	}
	sort.Strings(kept)
	return strings.Join(kept, "&")
}
