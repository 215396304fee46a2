package search

import (
	"net"
	"net/url"
	"slices"
	"strings"
)

// NormalizeURL is the key results are de-duplicated by: scheme, "www.",
// default port, fragment, a trailing slash, utm_* tracking parameters and
// the order of query parameters do not matter; the host is lower-cased.
// It returns "" for a string that is not an absolute http(s) URL.
func NormalizeURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return ""
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	host = strings.TrimPrefix(host, "www.")
	if p := u.Port(); p != "" && p != "80" && p != "443" {
		host = net.JoinHostPort(host, p)
	}
	path := strings.TrimRight(u.EscapedPath(), "/")
	q := u.Query()
	for k := range q {
		if strings.HasPrefix(strings.ToLower(k), "utm_") {
			delete(q, k)
		}
	}
	key := host + path
	if len(q) > 0 {
		key += "?" + q.Encode() // Encode sorts by key
	}
	return key
}

// hostOf is the lower-cased host of an absolute http(s) URL, "" otherwise.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return ""
	}
	return strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
}

// onDomain reports whether host is domain or one of its subdomains
// (domain may carry a "www." or "*." prefix, which is ignored).
func onDomain(host, domain string) bool {
	d := strings.ToLower(strings.TrimSuffix(domain, "."))
	d = strings.TrimPrefix(d, "*.")
	d = strings.TrimPrefix(d, "www.")
	host = strings.TrimPrefix(host, "www.")
	return d != "" && (host == d || strings.HasSuffix(host, "."+d))
}

// researchSites are the hosts of the research category.
var researchSites = []string{ //nolint:gochecknoglobals // constant list
	"arxiv.org", "scholar.google.com", "pubmed.ncbi.nlm.nih.gov", "ncbi.nlm.nih.gov", "researchgate.net",
	"nature.com", "science.org", "ieee.org", "acm.org", "springer.com", "sciencedirect.com",
	"wiley.com", "plos.org", "biorxiv.org", "medrxiv.org", "semanticscholar.org",
}

// categoryOf is the first of categories that rawURL matches, or "".
func categoryOf(rawURL string, categories []string) string {
	host := hostOf(rawURL)
	for _, c := range categories {
		switch c {
		case CategoryGitHub:
			if onDomain(host, "github.com") {
				return c
			}
		case CategoryResearch:
			if slices.ContainsFunc(researchSites, func(d string) bool { return onDomain(host, d) }) {
				return c
			}
		case CategoryPDF:
			if u, err := url.Parse(rawURL); err == nil && strings.HasSuffix(strings.ToLower(u.Path), ".pdf") {
				return c
			}
		}
	}
	return ""
}

// QueryText is q's text with the search operators that express its
// categories and domain lists, for backends whose upstream engines read
// them (site:, -site:, filetype:). Results are filtered by domain
// afterwards whatever the engines did with them.
func QueryText(q Query) string {
	var b strings.Builder
	b.WriteString(q.Text)
	var cats []string
	if q.Source == SourceWeb {
		for _, c := range q.Categories {
			switch c {
			case CategoryGitHub:
				cats = append(cats, "site:github.com")
			case CategoryResearch:
				for _, s := range researchSites {
					cats = append(cats, "site:"+s)
				}
			case CategoryPDF:
				cats = append(cats, "filetype:pdf")
			}
		}
	}
	group := func(terms []string) {
		switch len(terms) {
		case 0:
		case 1:
			b.WriteString(" " + terms[0])
		default:
			b.WriteString(" (" + strings.Join(terms, " OR ") + ")")
		}
	}
	group(cats)
	var sites []string
	for _, d := range q.IncludeDomains {
		sites = append(sites, "site:"+strings.TrimPrefix(d, "*."))
	}
	group(sites)
	for _, d := range q.ExcludeDomains {
		b.WriteString(" -site:" + strings.TrimPrefix(d, "*."))
	}
	return b.String()
}
