package netguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// BlockedHeader marks a response the proxy wrote itself because the target
// could not be reached; its value is the reason (Reason*).
const BlockedHeader = "X-Firegate-Refused"

// ProxyOptions configures a Proxy.
type ProxyOptions struct {
	// MaxTunnels bounds the CONNECT tunnels and upgraded connections open
	// at once; zero means 4096. More wait for ctx, then fail with 503.
	MaxTunnels int
	// IdleTimeout closes a tunnel with no traffic either way for this
	// long; zero means 2 minutes.
	IdleTimeout time.Duration
	// DialTimeout bounds one dial; zero means 30 s.
	DialTimeout time.Duration
	// OnRefuse, when set, hears of every target that could not be
	// reached: the requested host name and the reason (Reason*).
	OnRefuse func(host, reason string)
}

// Proxy is a forward HTTP proxy whose every outgoing connection passes the
// Policy: CONNECT tunnels (HTTPS, secure WebSockets, any TCP Chrome
// tunnels) and plain HTTP requests in absolute form, WebSocket upgrades
// included. Chrome is started with it as its only way out, so names are
// resolved only here and a refused address never sees a connection.
type Proxy struct {
	dialer *Dialer
	opts   ProxyOptions
	log    *slog.Logger
	direct *route // connections of the main listener
	slots  chan struct{}

	mu     sync.Mutex
	conns  map[net.Conn]struct{} // hijacked connections, closed on Close
	ln     net.Listener
	srv    *http.Server
	routes []*route // AddRoute's, each with a server of its own

	// routeMu serialises Route, so that an upstream gets one route.
	routeMu sync.Mutex
	byUp    map[Upstream]string // Route's routes: upstream -> listener address
}

// route is one way out of the proxy: how tunnels dial and how plain-HTTP
// requests are sent.
type route struct {
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	tr   *http.Transport
	rp   *httputil.ReverseProxy
	srv  *http.Server // AddRoute's listener; nil for the main one
}

// NewProxy returns a Proxy dialling through policy. A nil log discards.
func NewProxy(policy *Policy, opts ProxyOptions, log *slog.Logger) *Proxy {
	if opts.MaxTunnels <= 0 {
		opts.MaxTunnels = 4096
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = 2 * time.Minute
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = 30 * time.Second
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Proxy{
		dialer: &Dialer{Policy: policy, Timeout: opts.DialTimeout},
		opts:   opts,
		log:    log,
		slots:  make(chan struct{}, opts.MaxTunnels),
		conns:  map[net.Conn]struct{}{},
	}
	p.direct = p.newRoute(p.dialer.DialContext, nil)
	return p
}

// newRoute returns a route whose tunnels and plain-HTTP requests dial
// with dial; proxy, when set, sends plain-HTTP requests to another proxy
// in absolute form instead (http.Transport.Proxy), dialling it with dial.
func (p *Proxy) newRoute(dial func(ctx context.Context, network, addr string) (net.Conn, error), proxy func(*http.Request) (*url.URL, error)) *route {
	rt := &route{dial: dial}
	rt.tr = &http.Transport{
		Proxy:                  proxy,
		DialContext:            dial,
		MaxIdleConns:           256,
		MaxIdleConnsPerHost:    16,
		IdleConnTimeout:        30 * time.Second,
		ResponseHeaderTimeout:  p.opts.IdleTimeout,
		MaxResponseHeaderBytes: 1 << 20,
		DisableCompression:     true, // pass Chrome's Accept-Encoding and the body as they are
	}
	rt.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			// The request is in absolute form: its URL is the target.
			r.Out.URL = r.In.URL
			r.Out.Host = r.In.Host
		},
		Transport:     rt.tr,
		FlushInterval: -1,
		ErrorLog:      slog.NewLogLogger(p.log.Handler(), slog.LevelDebug),
		ErrorHandler:  p.proxyError,
	}
	return rt
}

// Upstream is another proxy a route's connections go through (see
// AddRoute).
type Upstream interface {
	// DialContext opens a tunnel to addr (host:port, a name unresolved)
	// through the upstream. An error whose ProxyFailure method returns
	// true is a failure of the upstream itself (ReasonProxy).
	DialContext(ctx context.Context, network, addr string) (net.Conn, error)
}

// Forwarder is an Upstream that also takes plain-HTTP requests in
// absolute form, as HTTP proxies do (some carry CONNECT only to port 443).
type Forwarder interface {
	Upstream
	// ForwardURL is the upstream's URL for http.Transport.Proxy, with its
	// credentials; nil tunnels plain HTTP too.
	ForwardURL() *url.URL
	// DialProxy connects to the upstream itself.
	DialProxy(ctx context.Context, network, addr string) (net.Conn, error)
	// Failed hears that the upstream refused the credentials (407).
	Failed()
}

// upstreamAuth turns an upstream's 407 answer to a forwarded request into
// a failure of the upstream (ReasonProxy): the browser must not see the
// challenge, which was the upstream's, not the target's.
type upstreamAuth struct {
	tr http.RoundTripper
	f  Forwarder
}

func (u upstreamAuth) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := u.tr.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusProxyAuthRequired {
		resp.Body.Close()
		u.f.Failed()
		return nil, errUpstreamAuth
	}
	return resp, err
}

// errUpstreamAuth is an upstream refusing the credentials.
const errUpstreamAuth = upstreamError("the upstream proxy refused the credentials (407)")

type upstreamError string

func (e upstreamError) Error() string { return string(e) }

// ProxyFailure marks the upstream's failure (Reason).
func (upstreamError) ProxyFailure() bool { return true }

// AddRoute starts another listener of the proxy, on listen ("host:0" for
// a free port), whose connections go through up: every target is checked
// against the policy first (resolved here, refused unless admitted:
// Policy.CheckTarget), then handed to up by name. The listener's port is
// reserved in the policy, so no target reaches it. It returns the
// listener's address; Close stops it.
func (p *Proxy) AddRoute(listen string, up Upstream) (string, error) {
	policy := p.dialer.Policy
	check := func(ctx context.Context, addr string) error {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return fmt.Errorf("netguard: %q: %w", addr, err)
		}
		return policy.CheckTarget(ctx, host, portOf(port, 0))
	}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if err := check(ctx, addr); err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(ctx, p.opts.DialTimeout)
		defer cancel()
		return up.DialContext(ctx, network, addr)
	}
	rt := p.newRoute(dial, nil)
	if f, ok := up.(Forwarder); ok {
		if fu := f.ForwardURL(); fu != nil {
			rt.tr.DialContext = f.DialProxy
			rt.tr.Proxy = func(r *http.Request) (*url.URL, error) {
				if err := check(r.Context(), net.JoinHostPort(r.URL.Hostname(), strconv.Itoa(int(portOf(r.URL.Port(), 80))))); err != nil {
					return nil, err
				}
				return fu, nil
			}
			rt.rp.Transport = upstreamAuth{tr: rt.tr, f: f}
		}
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return "", fmt.Errorf("netguard: proxy route listen: %w", err)
	}
	if ta, ok := ln.Addr().(*net.TCPAddr); ok {
		policy.Reserve(uint16(ta.Port))
	}
	rt.srv = &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p.serve(rt, w, r) }),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(p.log.Handler(), slog.LevelDebug),
	}
	p.mu.Lock()
	p.routes = append(p.routes, rt)
	p.mu.Unlock()
	go func() { _ = rt.srv.Serve(ln) }()
	return ln.Addr().String(), nil
}

// Route is AddRoute opened once per upstream: the address of up's route,
// listening on host (a free port), the one opened by an earlier call for
// the same up when there was one. Upstreams are compared as interface
// values (the same *proxypool.Proxy is the same upstream); a pool is a
// fixed list, so the routes stay few. Close drops them.
func (p *Proxy) Route(host string, up Upstream) (string, error) {
	p.routeMu.Lock()
	defer p.routeMu.Unlock()
	if addr, ok := p.byUp[up]; ok {
		return addr, nil
	}
	addr, err := p.AddRoute(net.JoinHostPort(host, "0"), up)
	if err != nil {
		return "", err
	}
	if p.byUp == nil {
		p.byUp = map[Upstream]string{}
	}
	p.byUp[up] = addr
	p.log.Info("netguard: route to an outbound proxy", "upstream", up, "listen", addr)
	return addr, nil
}

// Start listens on addr ("127.0.0.1:0" for a free loopback port) and serves
// until Close. It returns the proxy's address.
func (p *Proxy) Start(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("netguard: proxy listen: %w", err)
	}
	srv := &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(p.log.Handler(), slog.LevelDebug),
	}
	p.mu.Lock()
	p.ln, p.srv = ln, srv
	p.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
	return ln.Addr().String(), nil
}

// Close stops the listener and closes every open connection and tunnel.
func (p *Proxy) Close() error {
	p.routeMu.Lock()
	clear(p.byUp)
	p.routeMu.Unlock()
	p.mu.Lock()
	srv := p.srv
	for c := range p.conns {
		c.Close()
	}
	routes := p.routes
	p.routes = nil
	p.mu.Unlock()
	p.direct.tr.CloseIdleConnections()
	for _, rt := range routes {
		rt.srv.Close()
		rt.tr.CloseIdleConnections()
	}
	if srv != nil {
		return srv.Close()
	}
	return nil
}

// ServeHTTP handles one proxy request of the main listener.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) { p.serve(p.direct, w, r) }

// serve handles one proxy request through rt.
func (p *Proxy) serve(rt *route, w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.tunnel(rt, w, r)
		return
	}
	if !r.URL.IsAbs() || (r.URL.Scheme != "http" && r.URL.Scheme != "ws") {
		http.Error(w, "this proxy only forwards absolute http URLs and CONNECT", http.StatusBadRequest)
		return
	}
	if r.URL.Scheme == "ws" {
		r.URL.Scheme = "http"
	}
	if err := p.dialer.Policy.CheckHost(r.URL.Hostname(), portOf(r.URL.Port(), 80)); err != nil {
		p.refuse(w, r.URL.Hostname(), err)
		return
	}
	if isUpgrade(r) {
		if !p.take(r.Context()) {
			http.Error(w, "too many connections", http.StatusServiceUnavailable)
			return
		}
		defer p.release()
	}
	rt.rp.ServeHTTP(w, r)
}

func isUpgrade(r *http.Request) bool { return r.Header.Get("Upgrade") != "" }

// proxyError answers a request the transport could not complete.
func (p *Proxy) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	p.refuse(w, r.URL.Hostname(), err)
}

// Reasons a target could not be reached, in the RefusedHeader of the
// proxy's own answers and given to OnRefuse.
const (
	ReasonBlocked     = "blocked"     // the policy refused the address
	ReasonDNS         = "dns"         // the name did not resolve
	ReasonRefused     = "refused"     // the connection was refused
	ReasonTimeout     = "timeout"     // connecting timed out
	ReasonUnreachable = "unreachable" // any other failure to connect
	ReasonProxy       = "proxy"       // a route's upstream proxy failed
)

// Reason classifies an error of the proxy's dialer.
func Reason(err error) string {
	var dnsErr *net.DNSError
	var pf interface{ ProxyFailure() bool }
	switch {
	case errors.Is(err, ErrBlocked):
		return ReasonBlocked
	case errors.As(err, &pf) && pf.ProxyFailure():
		return ReasonProxy
	case errors.As(err, &dnsErr):
		return ReasonDNS
	case errors.Is(err, syscall.ECONNREFUSED):
		return ReasonRefused
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return ReasonTimeout
	}
	return ReasonUnreachable
}

// refuse writes the answer to a target that could not be reached, marked
// with the reason so that the browser can name it.
func (p *Proxy) refuse(w http.ResponseWriter, host string, err error) {
	reason := Reason(err)
	w.Header().Set(BlockedHeader, reason)
	status := http.StatusBadGateway
	if reason == ReasonBlocked {
		status = http.StatusForbidden
	}
	http.Error(w, "firegate proxy: "+reason, status)
	if p.opts.OnRefuse != nil {
		p.opts.OnRefuse(host, reason)
	}
	p.log.Debug("proxy refused", "host", host, "reason", reason, "err", err)
}

// portOf parses a URL port, or returns def.
func portOf(s string, def uint16) uint16 {
	if n, err := strconv.ParseUint(s, 10, 16); err == nil {
		return uint16(n)
	}
	return def
}

// take reserves a tunnel slot, waiting for ctx.
func (p *Proxy) take(ctx context.Context) bool {
	select {
	case p.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (p *Proxy) release() { <-p.slots }

// tunnel serves CONNECT: dial through the route (the policy), then copy
// both ways.
func (p *Proxy) tunnel(rt *route, w http.ResponseWriter, r *http.Request) {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		http.Error(w, "CONNECT needs host:port", http.StatusBadRequest)
		return
	}
	if !p.take(r.Context()) {
		http.Error(w, "too many connections", http.StatusServiceUnavailable)
		return
	}
	defer p.release()
	up, err := rt.dial(r.Context(), "tcp", r.Host)
	if err != nil {
		p.refuse(w, host, err)
		return
	}
	defer up.Close()
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "hijacking not supported", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
	client, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	defer client.Close()
	p.track(client)
	defer p.untrack(client)
	// Bytes Chrome sent after the CONNECT line are already buffered.
	if n := buf.Reader.Buffered(); n > 0 {
		b, _ := buf.Reader.Peek(n)
		if _, err := up.Write(b); err != nil {
			return
		}
	}
	p.pipe(client, up)
}

// track records a hijacked connection, so that Close ends it.
func (p *Proxy) track(c net.Conn) {
	p.mu.Lock()
	p.conns[c] = struct{}{}
	p.mu.Unlock()
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// pipe copies a and b into each other until either side ends or no byte
// moves for the idle timeout.
func (p *Proxy) pipe(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			_ = src.SetReadDeadline(time.Now().Add(p.opts.IdleTimeout))
			n, err := src.Read(buf)
			if n > 0 {
				_ = dst.SetWriteDeadline(time.Now().Add(p.opts.IdleTimeout))
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		if tc, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	// One side ended: give the other a moment to drain, then close both.
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
	}
	a.Close()
	b.Close()
}

var _ io.Closer = (*Proxy)(nil)
