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
	rp     *httputil.ReverseProxy
	tr     *http.Transport
	slots  chan struct{}

	mu    sync.Mutex
	conns map[net.Conn]struct{} // hijacked connections, closed on Close
	ln    net.Listener
	srv   *http.Server
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
	p.tr = &http.Transport{
		Proxy:                  nil,
		DialContext:            p.dialer.DialContext,
		MaxIdleConns:           256,
		MaxIdleConnsPerHost:    16,
		IdleConnTimeout:        30 * time.Second,
		ResponseHeaderTimeout:  opts.IdleTimeout,
		MaxResponseHeaderBytes: 1 << 20,
		DisableCompression:     true, // pass Chrome's Accept-Encoding and the body as they are
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			// The request is in absolute form: its URL is the target.
			r.Out.URL = r.In.URL
			r.Out.Host = r.In.Host
		},
		Transport:     p.tr,
		FlushInterval: -1,
		ErrorLog:      slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		ErrorHandler:  p.proxyError,
	}
	return p
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
	p.mu.Lock()
	srv := p.srv
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.tr.CloseIdleConnections()
	if srv != nil {
		return srv.Close()
	}
	return nil
}

// ServeHTTP handles one proxy request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
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
	p.rp.ServeHTTP(w, r)
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
)

// Reason classifies an error of the proxy's dialer.
func Reason(err error) string {
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, ErrBlocked):
		return ReasonBlocked
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

// tunnel serves CONNECT: dial through the policy, then copy both ways.
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
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
	up, err := p.dialer.DialContext(r.Context(), "tcp", r.Host)
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
