// Package fetch is the plain-HTTP scrape engine: it GETs a page with
// browser-like headers, follows redirects, decodes compressed bodies, caps
// the body size and refuses non-public targets at dial time (after DNS, on
// every hop), mapping failures to a small set of sentinel errors.
//
// A Client is safe for concurrent use and shares its connection pools across
// requests; create one per process.
package fetch

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/publicsuffix"

	"github.com/firegate/firegate/internal/logsafe"
	"github.com/firegate/firegate/internal/netguard"
	"github.com/firegate/firegate/internal/proxypool"
)

const (
	// DefaultMaxBodyBytes is the response cap used when Options.MaxBodyBytes
	// is zero.
	DefaultMaxBodyBytes = 10 << 20
	// DefaultMaxRedirects is the redirect limit used when
	// Options.MaxRedirects is zero.
	DefaultMaxRedirects = 10
	// DefaultUserAgent is a current desktop Chrome user agent.
	DefaultUserAgent = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36"
	// DefaultMobileUserAgent is a current Android Chrome user agent.
	DefaultMobileUserAgent = "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Mobile Safari/537.36"
	// DefaultAcceptLanguage is sent when Request.AcceptLanguage is empty.
	DefaultAcceptLanguage = "en-US,en;q=0.9"

	defaultAccept  = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8"
	acceptEncoding = "gzip, deflate, br"
)

// Options configures a Client. The zero value is usable: private targets
// refused, 10 MiB body cap, 10 redirects, Chrome user agents.
type Options struct {
	// Policy decides which addresses may be dialled, at dial time after
	// its own lookup, on every redirect hop; refusals are ErrBlocked. Nil
	// means one built from AllowPrivate.
	Policy *netguard.Policy
	// AllowPrivate, when Policy is nil, admits every address (tests and
	// local use); false refuses what is not globally reachable.
	AllowPrivate bool
	// MaxBodyBytes caps the decoded body; larger bodies are truncated and
	// Response.Truncated is set. Zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxRedirects limits followed redirects. Zero means
	// DefaultMaxRedirects; negative disables following (the 3xx response is
	// returned as is).
	MaxRedirects int
	// UserAgent is the desktop user agent; empty means DefaultUserAgent.
	UserAgent string
	// MobileUserAgent is used for Request.Mobile; empty means
	// DefaultMobileUserAgent.
	MobileUserAgent string
}

// Client performs plain-HTTP fetches. It is safe for concurrent use.
type Client struct {
	opts   Options
	log    *slog.Logger
	dialer *netguard.Dialer
	verify *http.Transport // certificate verification on
	skip   *http.Transport // certificate verification off
	pools  *pools
	// proxied holds the transports of the proxies requests asked for.
	proxied proxied
	// chrome holds the Chrome-like transports (Request.Chrome).
	chrome chromeClients
}

// New returns a Client with shared keep-alive pools. A nil log discards.
func New(opts Options, log *slog.Logger) *Client {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxRedirects == 0 {
		opts.MaxRedirects = DefaultMaxRedirects
	}
	if opts.UserAgent == "" {
		opts.UserAgent = DefaultUserAgent
	}
	if opts.MobileUserAgent == "" {
		opts.MobileUserAgent = DefaultMobileUserAgent
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	policy := opts.Policy
	if policy == nil {
		policy, _ = netguard.New(netguard.Options{AllowAll: opts.AllowPrivate}) // no Allow entries: cannot fail
	}
	c := &Client{opts: opts, log: log, dialer: &netguard.Dialer{Policy: policy, Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}, pools: newPools()}
	c.verify = c.newTransport(false)
	c.skip = c.newTransport(true)
	return c
}

func (c *Client) newTransport(skipVerify bool) *http.Transport {
	return &http.Transport{
		Proxy:       nil, // a proxy would defeat the dial-time address check
		DialContext: c.dialer.DialFunc(ErrBlocked),
		TLSClientConfig: &tls.Config{
			InsecureSkipVerify: skipVerify, //nolint:gosec // per-request opt-in (skipTlsVerification)
		},
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           1024,
		MaxIdleConnsPerHost:    256,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    20 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 1 << 20,
		DisableCompression:     true, // we send Accept-Encoding and decode ourselves
	}
}

// CloseIdleConnections closes idle keep-alive connections of both
// transports; call it on shutdown.
func (c *Client) CloseIdleConnections() {
	c.verify.CloseIdleConnections()
	c.skip.CloseIdleConnections()
	c.closeProxied()
	c.closeChrome()
}

// Request describes one fetch.
type Request struct {
	// URL is the absolute http or https URL to GET.
	URL string
	// Headers are sent on the first request and on every redirect hop to
	// the same host name; a User-Agent, Accept-Language or Cookie entry
	// overrides the defaults. Only the User-Agent override follows
	// redirects to other hosts. A Host entry is ignored.
	Headers map[string]string
	// Mobile selects the mobile user agent.
	Mobile bool
	// AcceptLanguage is the Accept-Language value built by the caller from
	// location.languages (with the AcceptLanguage func); empty means
	// DefaultAcceptLanguage.
	AcceptLanguage string
	// SkipTLSVerify disables certificate verification.
	SkipTLSVerify bool
	// CheckHop, when set, is asked about every redirect hop before it is
	// followed; its error ends the fetch (wrapped, unclassified).
	CheckHop func(u *url.URL) error
	// Proxy, when set, carries the request and its redirects (see
	// proxied.go); nil connects directly.
	Proxy *proxypool.Proxy
	// Chrome sends the request as Chromium does: its TLS ClientHello,
	// HTTP/2 settings and header set and order (see chrome.go).
	Chrome bool
}

// Response is a fetched page. Non-2xx statuses are normal responses.
type Response struct {
	// RequestURL is the URL as requested; URL is the final URL after
	// redirects.
	RequestURL, URL string
	// StatusCode is the final HTTP status.
	StatusCode int
	// Header is the final response's header. When the body was decoded,
	// Content-Encoding and Content-Length are removed.
	Header http.Header
	// ContentType is the media type without parameters, lower-case; when
	// the server sent none it is sniffed from the body.
	ContentType string
	// Body holds the decoded bytes as served (after Content-Encoding
	// removal), at most Options.MaxBodyBytes.
	Body []byte
	// Truncated reports that the body was cut at the cap (or that a
	// compressed stream ended early).
	Truncated bool
}

// prepare builds the request of req and the client that sends it and
// follows its redirects. every holds headers sent on the first request and
// on every hop, whatever its host (they replace the defaults).
func (c *Client) prepare(ctx context.Context, req Request, every http.Header) (*http.Client, *http.Request, error) {
	u, err := url.Parse(req.URL)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrInvalidURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, nil, fmt.Errorf("%w: %q is not an absolute http(s) url", ErrInvalidURL, req.URL)
	}
	full, base := c.headers(req)
	for k, v := range every {
		full[k], base[k] = v, v
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrInvalidURL, err)
	}
	hreq.Header = full.Clone() // the client may add cookies to it
	var tr http.RoundTripper = c.verify
	switch {
	case req.Chrome:
		ct, err := c.chromeTransport(req.Proxy, req.SkipTLSVerify)
		if err != nil {
			return nil, nil, err
		}
		tr = ct
	case req.Proxy != nil:
		tr = c.proxyTransport(req.Proxy, req.SkipTLSVerify)
	case req.SkipTLSVerify:
		tr = c.skip
	}
	// A per-request jar lets cookie-setting redirect chains (consent and
	// session bounces) complete, without sharing state between requests.
	jar, err := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
	if err != nil {
		return nil, nil, fmt.Errorf("fetch: cookie jar: %w", err)
	}
	origHost := strings.ToLower(u.Hostname())
	hc := &http.Client{
		Transport: tr,
		Jar:       jar,
		CheckRedirect: func(r *http.Request, via []*http.Request) error {
			if c.opts.MaxRedirects < 0 {
				return http.ErrUseLastResponse
			}
			if len(via) > c.opts.MaxRedirects {
				return fmt.Errorf("%w: stopped after %d", ErrTooManyRedirects, c.opts.MaxRedirects)
			}
			if r.URL.Scheme != "http" && r.URL.Scheme != "https" {
				return fmt.Errorf("%w: redirect to scheme %q", ErrBlocked, r.URL.Scheme)
			}
			if req.CheckHop != nil {
				if err := req.CheckHop(r.URL); err != nil {
					return err
				}
			}
			ref := r.Header.Get("Referer")
			if strings.ToLower(r.URL.Hostname()) == origHost {
				r.Header = full.Clone()
			} else {
				r.Header = base.Clone()
			}
			if ref != "" {
				r.Header.Set("Referer", ref)
			}
			return nil
		},
	}
	return hc, hreq, nil
}

// Do GETs req.URL. The deadline comes from ctx and covers the whole
// exchange, including reading the body. Errors wrap one of ErrDNS,
// ErrTimeout, ErrTLS, ErrBlocked, ErrTooManyRedirects, ErrConnection,
// ErrProxy or ErrInvalidURL (or context.Canceled when ctx was cancelled).
func (c *Client) Do(ctx context.Context, req Request) (*Response, error) {
	hc, hreq, err := c.prepare(ctx, req, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(hreq)
	if err != nil {
		err = classify(ctx, err)
		c.log.DebugContext(ctx, "fetch failed", "url", logsafe.URL(req.URL), "error", err)
		return nil, err
	}
	defer resp.Body.Close()

	body, truncated, decoded, err := c.readBody(resp, c.opts.MaxBodyBytes)
	if err != nil {
		err = classify(ctx, err)
		c.log.DebugContext(ctx, "fetch body failed", "url", logsafe.URL(req.URL), "error", err)
		return nil, err
	}
	if decoded {
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
	}
	return &Response{
		RequestURL:  req.URL,
		URL:         resp.Request.URL.String(),
		StatusCode:  resp.StatusCode,
		Header:      resp.Header,
		ContentType: mediaType(resp.Header.Get("Content-Type"), body),
		Body:        body,
		Truncated:   truncated,
	}, nil
}

// headers builds the header sets for same-host hops (full: defaults plus
// the caller's headers) and other hosts (base: defaults plus the caller's
// User-Agent).
func (c *Client) headers(req Request) (full, base http.Header) {
	ua := c.opts.UserAgent
	if req.Mobile {
		ua = c.opts.MobileUserAgent
	}
	for k, v := range req.Headers {
		if strings.EqualFold(strings.TrimSpace(k), "User-Agent") {
			ua = v // the client hints must match it
		}
	}
	lang := req.AcceptLanguage
	if lang == "" {
		lang = DefaultAcceptLanguage
	}
	base = http.Header{
		"User-Agent":                {ua},
		"Accept":                    {defaultAccept},
		"Accept-Language":           {lang},
		"Accept-Encoding":           {acceptEncoding},
		"Upgrade-Insecure-Requests": {"1"},
	}
	if req.Chrome {
		chromeHeaders(base, ua)
	}
	if len(req.Headers) == 0 {
		return base, base
	}
	full = base.Clone()
	for k, v := range req.Headers {
		ck := http.CanonicalHeaderKey(strings.TrimSpace(k))
		switch ck {
		case "", "Host":
			continue
		case "User-Agent":
			base[ck] = []string{v}
		}
		full[ck] = []string{v}
	}
	return full, base
}

// mediaType returns the lower-case media type of a Content-Type value, or
// the sniffed type of body when the header is empty.
func mediaType(ct string, body []byte) string {
	if strings.TrimSpace(ct) == "" {
		ct = http.DetectContentType(body)
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		return mt
	}
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}
