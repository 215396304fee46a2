package browser

import (
	"fmt"
	"net"
	"net/url"
	"sync"

	"github.com/firegate/firegate/internal/proxypool"
)

// Outbound proxies (Request.Proxy).
//
// Chrome reaches the network only through the guarded proxy; a render
// through an outbound proxy stays behind it. Each outbound proxy gets a
// route of the guarded proxy, a listener of its own (netguard's AddRoute)
// whose every connection is checked against the network policy, then
// handed to the outbound proxy by name. Chrome takes one proxy per browser
// context, so a render through an outbound proxy runs in a context whose
// proxy is that route (slot.route): the page, its sub-resources, workers,
// WebSockets, everything of the context goes through it, and the outbound
// proxy's credentials stay in the server (Chrome never sees them).

// routes maps the outbound proxies used so far to their route's URL as
// Chrome reaches it. A pool is a fixed list: it stays small.
type routes struct {
	mu sync.Mutex
	m  map[*proxypool.Proxy]string
}

// route returns the URL of px's route, opening it on first use; "" for
// px nil (the guarded proxy's main listener).
func (p *Pool) route(px *proxypool.Proxy) (string, error) {
	if px == nil {
		return "", nil
	}
	p.mu.Lock()
	guard := p.proxy
	p.mu.Unlock()
	if guard == nil {
		return "", fmt.Errorf("browser: an outbound proxy needs the guarded proxy (a remote Chrome needs BROWSER_PROXY_URL): %w", ErrUnavailable)
	}
	p.routes.mu.Lock()
	defer p.routes.mu.Unlock()
	if u, ok := p.routes.m[px]; ok {
		return u, nil
	}
	host := "127.0.0.1"
	if p.opts.ProxyListen != "" {
		if h, _, err := net.SplitHostPort(p.opts.ProxyListen); err == nil {
			host = h
		}
	}
	addr, err := guard.AddRoute(net.JoinHostPort(host, "0"), px)
	if err != nil {
		return "", fmt.Errorf("browser: route to %s: %w: %w", px, ErrUnavailable, err)
	}
	_, port, _ := net.SplitHostPort(addr)
	// As Chrome reaches it: the host of BROWSER_PROXY_URL, else the
	// listen address (loopback when it listens on every address).
	reach := host
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		reach = "127.0.0.1"
	}
	if p.opts.ProxyURL != "" {
		if u, err := url.Parse(p.opts.ProxyURL); err == nil {
			reach = u.Hostname()
		}
	}
	u := "http://" + net.JoinHostPort(reach, port)
	if p.routes.m == nil {
		p.routes.m = map[*proxypool.Proxy]string{}
	}
	p.routes.m[px] = u
	p.log.Info("browser route to an outbound proxy", "proxy", px, "listen", addr)
	return u, nil
}

// forgetRoutes drops the routes when the guarded proxy closes.
func (p *Pool) forgetRoutes() {
	p.routes.mu.Lock()
	defer p.routes.mu.Unlock()
	clear(p.routes.m)
}
