// Package proxypool holds the operator's outbound proxies (PROXY_URLS, the
// basic pool, and ENHANCED_PROXY_URLS, the enhanced pool) and chooses one
// for each request: round robin among the proxies of the wanted country,
// skipping those that failed to connect in the last minute, or the same
// proxy for every request of one sticky key (a crawl's host) while it works.
//
// A Proxy never shows its credentials: String, GoString, LogValue and
// MarshalText give the masked form, so that a proxy can be logged, wrapped
// in an error or put in a response without leaking them. Only the
// transports that talk to the proxy read the credentials (URL, Dialer).
package proxypool

import (
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// FailureWindow is how long a proxy that failed to connect is skipped.
const FailureWindow = time.Minute

// Proxy is one configured proxy. It is safe for concurrent use.
type Proxy struct {
	country string   // upper-case ISO 3166-1 alpha-2, or ""
	u       *url.URL // scheme, user info, host:port
	masked  string
	now     func() time.Time
	// failedAt is the UnixNano of the last failure to connect, 0 = none.
	failedAt atomic.Int64
}

// Country is the proxy's country code, "" when the entry named none.
func (p *Proxy) Country() string { return p.country }

// Scheme is http, https or socks5.
func (p *Proxy) Scheme() string { return p.u.Scheme }

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.u.Host }

// URL returns the proxy's URL with its credentials, for a transport that
// connects to it. Never log it: log the Proxy itself.
func (p *Proxy) URL() *url.URL {
	u := *p.u
	if p.u.User != nil {
		uu := *p.u.User
		u.User = &uu
	}
	return &u
}

// String is the masked form: "DE=http://***@10.0.0.5:3128".
func (p *Proxy) String() string { return p.masked }

// GoString is the masked form too, for %#v.
func (p *Proxy) GoString() string { return p.masked }

// LogValue logs the masked form.
func (p *Proxy) LogValue() slog.Value { return slog.StringValue(p.masked) }

// MarshalText encodes the masked form.
func (p *Proxy) MarshalText() ([]byte, error) { return []byte(p.masked), nil }

// Failed records that connecting to the proxy failed (the proxy did not
// answer, refused the handshake or the credentials): Pick skips it for
// FailureWindow. A failure of the target behind the proxy is not the
// proxy's.
func (p *Proxy) Failed() { p.failedAt.Store(p.now().UnixNano()) }

// healthy reports whether the proxy did not fail in the last FailureWindow.
func (p *Proxy) healthy(now time.Time) bool {
	at := p.failedAt.Load()
	return at == 0 || now.Sub(time.Unix(0, at)) >= FailureWindow
}

// Pool is one pool of proxies. The nil *Pool and an empty one hold no
// proxy: requests go direct. It is safe for concurrent use.
type Pool struct {
	proxies []*Proxy
	next    atomic.Uint64
	now     func() time.Time
}

// Options configures Parse.
type Options struct {
	// Now is the clock of the failure window; nil means time.Now.
	Now func() time.Time
}

// Parse reads a comma-separated list of entries
// [CC=]scheme://[user:pass@]host:port, scheme http, https or socks5 and CC
// an upper-case ISO 3166-1 alpha-2 country code. Empty entries are
// skipped; an empty list is an empty pool. A malformed entry is an error
// naming it with its credentials masked.
func Parse(list string, opts Options) (*Pool, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	pool := &Pool{now: now}
	n := 0
	for entry := range strings.SplitSeq(list, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		n++
		p, err := parseEntry(entry)
		if err != nil {
			return nil, fmt.Errorf("entry %d (%s): %w", n, Mask(entry), err)
		}
		p.now = now
		pool.proxies = append(pool.proxies, p)
	}
	return pool, nil
}

func parseEntry(entry string) (*Proxy, error) {
	country := ""
	rest := entry
	// A country prefix stands before the scheme ("=" may occur in a
	// password, after it).
	scheme := strings.Index(entry, "://")
	if eq := strings.IndexByte(entry, '='); eq >= 0 && (scheme < 0 || eq < scheme) {
		country, rest = entry[:eq], entry[eq+1:]
		if !countryCode(country) {
			return nil, fmt.Errorf("country %q is not an upper-case ISO 3166-1 alpha-2 code like DE", country)
		}
	}
	if !strings.Contains(rest, "://") {
		return nil, errors.New("not a scheme://host:port URL")
	}
	u, err := url.Parse(rest)
	if err != nil {
		// url's errors quote the whole URL, credentials included.
		return nil, errors.New("not a valid URL")
	}
	switch u.Scheme {
	case "http", "https", "socks5":
	default:
		return nil, fmt.Errorf("scheme %q is not http, https or socks5", u.Scheme)
	}
	if u.Opaque != "" || u.Host == "" {
		return nil, errors.New("no host")
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return nil, errors.New("a proxy URL has no path, query or fragment")
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil || host == "" {
		return nil, errors.New("host:port needs a port")
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return nil, fmt.Errorf("port %q is not a port number", port)
	}
	if u.User != nil && u.User.Username() == "" {
		if _, ok := u.User.Password(); ok {
			return nil, errors.New("a password without a user name")
		}
		u.User = nil
	}
	clean := &url.URL{Scheme: u.Scheme, User: u.User, Host: u.Host}
	p := &Proxy{country: country, u: clean}
	p.masked = maskURL(clean)
	if country != "" {
		p.masked = country + "=" + p.masked
	}
	return p, nil
}

// countryCode reports whether s is two upper-case ASCII letters.
func countryCode(s string) bool {
	return len(s) == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z'
}

// maskURL writes scheme://host:port, with "***@" where credentials are.
func maskURL(u *url.URL) string {
	if u.User == nil {
		return u.Scheme + "://" + u.Host
	}
	return u.Scheme + "://***@" + u.Host
}

// Mask returns a proxy entry with whatever stands between "://" and the
// last "@" of the authority replaced by "***", whether or not it parses.
func Mask(entry string) string {
	i := strings.Index(entry, "://")
	if i < 0 {
		// No authority to find: hide everything after an "@".
		if at := strings.LastIndexByte(entry, '@'); at >= 0 {
			return "***@" + entry[at+1:]
		}
		return entry
	}
	rest := entry[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndexByte(rest[:end], '@')
	if at < 0 {
		return entry
	}
	return entry[:i+3] + "***@" + rest[at+1:]
}

// Len is the number of proxies; 0 for a nil pool.
func (pl *Pool) Len() int {
	if pl == nil {
		return 0
	}
	return len(pl.proxies)
}

// Proxies returns the pool's proxies in configured order.
func (pl *Pool) Proxies() []*Proxy {
	if pl == nil {
		return nil
	}
	return append([]*Proxy(nil), pl.proxies...)
}

// Choice says what a request wants of a proxy.
type Choice struct {
	// Country, when set, prefers proxies of that country code.
	Country string
	// Sticky, when set, picks the same proxy for every request with this
	// key while that proxy works (a crawl sets it to its id and the
	// page's host); "" is round robin.
	Sticky string
}

// Pick returns a proxy for one request, or nil when the pool is empty.
// The candidates are the proxies of c.Country, or all proxies when none is
// of that country (or none was asked for); matched reports that the
// proxy is of c.Country. Among the candidates, those that failed to
// connect in the last FailureWindow are skipped unless all did.
func (pl *Pool) Pick(c Choice) (p *Proxy, matched bool) {
	if pl.Len() == 0 {
		return nil, false
	}
	cands := pl.proxies
	if c.Country != "" {
		var of []*Proxy
		for _, p := range pl.proxies {
			if p.country == c.Country {
				of = append(of, p)
			}
		}
		if len(of) > 0 {
			cands, matched = of, true
		}
	}
	now := pl.now()
	if c.Sticky != "" {
		// The key's own proxy, or the next working one after it: the
		// choice moves only while that proxy fails.
		h := fnv.New64a()
		h.Write([]byte(c.Sticky))
		start := int(h.Sum64() % uint64(len(cands)))
		for i := range cands {
			if p := cands[(start+i)%len(cands)]; p.healthy(now) {
				return p, matched
			}
		}
		return cands[start], matched
	}
	var ok []*Proxy
	for _, p := range cands {
		if p.healthy(now) {
			ok = append(ok, p)
		}
	}
	if len(ok) == 0 {
		ok = cands
	}
	n := pl.next.Add(1) - 1
	return ok[n%uint64(len(ok))], matched
}

// Tiers of the proxy option.
const (
	Basic    = "basic"
	Enhanced = "enhanced"
)

// Pools are the basic and the enhanced pool.
type Pools struct {
	Basic, Enhanced *Pool
}

// Configured reports whether any proxy is configured.
func (ps Pools) Configured() bool { return ps.Basic.Len()+ps.Enhanced.Len() > 0 }

// Route is the way out of one attempt: its tier, its proxy (nil = direct)
// and the warnings the answer carries about the choice.
type Route struct {
	Tier     string
	Proxy    *Proxy
	Warnings []string
}

// Route chooses the proxy of one attempt of tier (Basic or Enhanced).
// Basic uses the basic pool, or goes direct when it is empty; Enhanced
// uses the enhanced pool, or (with a warning) the basic pool, then
// direct. When country is set (the request named location.country) and
// no proxy of it is in the pool used, any proxy is used, with a warning
// naming the country; c.Country alone is a silent preference.
func (ps Pools) Route(tier string, c Choice, country bool) Route {
	r := Route{Tier: tier}
	pool := ps.Basic
	if tier == Enhanced {
		pool = ps.Enhanced
		if pool.Len() == 0 {
			pool = ps.Basic
			if pool.Len() > 0 {
				r.Warnings = append(r.Warnings, "No enhanced proxies are configured (ENHANCED_PROXY_URLS); the request went through a basic proxy.")
			} else {
				r.Warnings = append(r.Warnings, "No enhanced proxies are configured (ENHANCED_PROXY_URLS); the request left from this server's own address.")
			}
		}
	}
	p, matched := pool.Pick(c)
	r.Proxy = p
	if country && c.Country != "" && !matched {
		if p != nil {
			r.Warnings = append(r.Warnings, fmt.Sprintf("No proxy of country %s is configured; the request went through a proxy of another country.", c.Country))
		} else {
			r.Warnings = append(r.Warnings, fmt.Sprintf("No proxy of country %s is configured; the request left from this server's own address.", c.Country))
		}
	}
	return r
}
