package browser

import (
	"fmt"
	"net"
	"net/url"

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

// route returns the URL of px's route as Chrome reaches it, opening the
// route on first use (the guarded proxy keeps one per outbound proxy);
// "" for px nil (the guarded proxy's main listener).
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
	host := "127.0.0.1"
	if p.opts.ProxyListen != "" {
		if h, _, err := net.SplitHostPort(p.opts.ProxyListen); err == nil {
			host = h
		}
	}
	addr, err := guard.Route(host, px)
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
	return "http://" + net.JoinHostPort(reach, port), nil
}
