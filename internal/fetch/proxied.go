package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"github.com/firegate/firegate/internal/netguard"
	"github.com/firegate/firegate/internal/proxypool"
)

// Requests through a proxy (Request.Proxy).
//
// A proxy resolves names itself, so the dial-time address check cannot
// run: before a request (and every redirect hop) is handed to the proxy,
// its host is resolved here and refused unless the policy admits it
// (netguard.Policy.CheckTarget). The proxy itself is dialled without the
// policy: the operator configured it. HTTPS targets, and every target of
// a SOCKS5 proxy, go through a tunnel (CONNECT or SOCKS5 CONNECT);
// plain-HTTP targets of an http(s) proxy are forwarded in absolute form,
// which proxies that allow CONNECT only to port 443 still carry.

// proxyKey selects the transports of one proxy.
type proxyKey struct {
	proxy      *proxypool.Proxy
	skipVerify bool
}

// proxied holds the transports of the proxies used so far; a pool is a
// fixed list, so it stays small.
type proxied struct {
	mu sync.Mutex
	m  map[proxyKey]*proxyTransport
}

// transport returns the round tripper of a proxy.
func (c *Client) proxyTransport(p *proxypool.Proxy, skipVerify bool) *proxyTransport {
	c.proxied.mu.Lock()
	defer c.proxied.mu.Unlock()
	k := proxyKey{p, skipVerify}
	if t := c.proxied.m[k]; t != nil {
		return t
	}
	if c.proxied.m == nil {
		c.proxied.m = map[proxyKey]*proxyTransport{}
	}
	t := &proxyTransport{proxy: p, tunnel: c.newTransport(skipVerify)}
	t.tunnel.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if err := c.checkTarget(ctx, addr); err != nil {
			return nil, err
		}
		return p.DialContext(ctx, network, addr)
	}
	if p.Scheme() != "socks5" {
		t.forward = c.newTransport(skipVerify)
		pu := p.URL()
		t.forward.Proxy = func(r *http.Request) (*url.URL, error) {
			if err := c.checkTarget(r.Context(), canonicalAddr(r.URL)); err != nil {
				return nil, err
			}
			return pu, nil
		}
		t.forward.DialContext = p.DialProxy // here only the proxy is dialled
	}
	c.proxied.m[k] = t
	return t
}

// closeProxied closes the idle connections of every proxy transport.
func (c *Client) closeProxied() {
	c.proxied.mu.Lock()
	defer c.proxied.mu.Unlock()
	for _, t := range c.proxied.m {
		t.tunnel.CloseIdleConnections()
		if t.forward != nil {
			t.forward.CloseIdleConnections()
		}
	}
}

// checkTarget refuses a target (host:port) the policy does not admit,
// resolving its name here before a proxy gets it.
func (c *Client) checkTarget(ctx context.Context, addr string) error {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: %q: %w", ErrInvalidURL, addr, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return fmt.Errorf("%w: bad port in %q", ErrInvalidURL, addr)
	}
	if err := c.dialer.Policy.CheckTarget(ctx, host, uint16(port)); err != nil {
		if errors.Is(err, netguard.ErrBlocked) {
			return fmt.Errorf("%w: %w", ErrBlocked, err)
		}
		return err
	}
	return nil
}

// canonicalAddr is a URL's host:port, the port defaulted by scheme.
func canonicalAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// proxyTransport sends a request through one proxy: plain HTTP forwarded
// in absolute form (forward), the rest through a tunnel.
type proxyTransport struct {
	proxy   *proxypool.Proxy
	tunnel  *http.Transport
	forward *http.Transport // nil for a SOCKS5 proxy
}

// RoundTrip implements http.RoundTripper. A 407 answer to a forwarded
// request is the proxy refusing its credentials: an error, and the
// proxy is marked failed.
func (t *proxyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme != "http" || t.forward == nil {
		return t.tunnel.RoundTrip(r)
	}
	resp, err := t.forward.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusProxyAuthRequired {
		resp.Body.Close()
		t.proxy.Failed()
		return nil, &proxypool.ProxyError{Proxy: t.proxy, Err: errors.New("credentials refused (407)")}
	}
	return resp, err
}
