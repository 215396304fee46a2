// Package proxytest runs forward proxies on loopback for tests: an HTTP
// proxy (CONNECT tunnels and requests in absolute form) and a SOCKS5 proxy,
// each with optional credentials, counting what passes through them and
// recording the targets asked for (as named: a proxy resolves names
// itself).
package proxytest

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Proxy is a running test proxy.
type Proxy struct {
	// Name is put in the Via header of the requests it forwards in
	// absolute form ("1.1 <Name>").
	Name string
	ln   net.Listener
	user string
	pass string

	mu       sync.Mutex
	targets  []string // host:port of every tunnel or forwarded request
	tunnels  int
	forwards int
	denied   int // requests refused for their credentials
	conns    map[net.Conn]bool
}

// Options configures a test proxy.
type Options struct {
	// Name goes in Via; empty means "proxytest".
	Name string
	// User and Pass, when User is set, are the credentials the proxy
	// requires.
	User, Pass string
}

func listen(tb testing.TB, opts Options) *Proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	name := opts.Name
	if name == "" {
		name = "proxytest"
	}
	p := &Proxy{Name: name, ln: ln, user: opts.User, pass: opts.Pass, conns: map[net.Conn]bool{}}
	tb.Cleanup(p.Close)
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops the proxy and every tunnel through it.
func (p *Proxy) Close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

func (p *Proxy) track(c net.Conn, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		p.conns[c] = true
	} else {
		delete(p.conns, c)
	}
}

// Targets returns the targets asked for so far, in order.
func (p *Proxy) Targets() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.targets...)
}

// Tunnels counts CONNECT tunnels (SOCKS5 connections for a SOCKS5 proxy)
// opened to a target.
func (p *Proxy) Tunnels() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tunnels
}

// Forwards counts requests forwarded in absolute form.
func (p *Proxy) Forwards() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.forwards
}

// Passed counts what reached a target through the proxy.
func (p *Proxy) Passed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tunnels + p.forwards
}

// Denied counts requests refused for missing or wrong credentials.
func (p *Proxy) Denied() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.denied
}

// NewHTTP starts an HTTP proxy: CONNECT tunnels to any host:port and GET
// (or any method) in absolute form, forwarded with a Via header.
func NewHTTP(tb testing.TB, opts Options) *Proxy {
	p := listen(tb, opts)
	tr := &http.Transport{Proxy: nil, DisableCompression: true}
	tb.Cleanup(tr.CloseIdleConnections)
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL = r.In.URL
			r.Out.Host = r.In.Host
			r.Out.Header.Del("Proxy-Authorization")
			r.Out.Header.Add("Via", "1.1 "+p.Name)
		},
		Transport: tr,
		ErrorLog:  log.New(io.Discard, "", 0),
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.authorized(r.Header.Get("Proxy-Authorization")) {
			p.mu.Lock()
			p.denied++
			p.mu.Unlock()
			w.Header().Set("Proxy-Authenticate", `Basic realm="proxytest"`)
			http.Error(w, "proxy credentials required", http.StatusProxyAuthRequired)
			return
		}
		if r.Method == http.MethodConnect {
			p.tunnel(w, r)
			return
		}
		if !r.URL.IsAbs() {
			http.Error(w, "not a proxy request", http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.forwards++
		p.targets = append(p.targets, r.URL.Host)
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(p.ln) }()
	tb.Cleanup(func() { srv.Close() })
	return p
}

func (p *Proxy) authorized(h string) bool {
	if p.user == "" {
		return true
	}
	return h == "Basic "+base64.StdEncoding.EncodeToString([]byte(p.user+":"+p.pass))
}

func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	up, err := net.DialTimeout("tcp", r.Host, 10*time.Second)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	p.mu.Lock()
	p.tunnels++
	p.targets = append(p.targets, r.Host)
	p.mu.Unlock()
	w.WriteHeader(http.StatusOK)
	c, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		up.Close()
		return
	}
	if n := buf.Reader.Buffered(); n > 0 {
		b, _ := buf.Reader.Peek(n)
		_, _ = up.Write(b)
	}
	p.pipe(c, up)
}

// pipe copies both ways until either side closes.
func (p *Proxy) pipe(a, b net.Conn) {
	p.track(a, true)
	p.track(b, true)
	defer p.track(a, false)
	defer p.track(b, false)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(a, b); done <- struct{}{} }()
	go func() { _, _ = io.Copy(b, a); done <- struct{}{} }()
	<-done
	a.Close()
	b.Close()
	<-done
}

// NewSOCKS5 starts a SOCKS5 proxy (RFC 1928) serving CONNECT, with
// user/password authentication (RFC 1929) when opts.User is set.
func NewSOCKS5(tb testing.TB, opts Options) *Proxy {
	p := listen(tb, opts)
	go func() {
		for {
			c, err := p.ln.Accept()
			if err != nil {
				return
			}
			go p.serveSOCKS(c)
		}
	}()
	return p
}

func (p *Proxy) serveSOCKS(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	var hdr [2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil || hdr[0] != 5 {
		return
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return
	}
	want := byte(0)
	if p.user != "" {
		want = 2
	}
	ok := false
	for _, m := range methods {
		ok = ok || m == want
	}
	if !ok {
		_, _ = c.Write([]byte{5, 0xff})
		p.mu.Lock()
		p.denied++
		p.mu.Unlock()
		return
	}
	_, _ = c.Write([]byte{5, want})
	if want == 2 {
		user, pass, ok := readUserPass(br)
		if !ok || user != p.user || pass != p.pass {
			_, _ = c.Write([]byte{1, 1})
			p.mu.Lock()
			p.denied++
			p.mu.Unlock()
			return
		}
		_, _ = c.Write([]byte{1, 0})
	}
	var req [4]byte
	if _, err := io.ReadFull(br, req[:]); err != nil || req[1] != 1 {
		return
	}
	var host string
	switch req[3] {
	case 1, 4:
		ip := make([]byte, 4)
		if req[3] == 4 {
			ip = make([]byte, 16)
		}
		if _, err := io.ReadFull(br, ip); err != nil {
			return
		}
		host = net.IP(ip).String()
	case 3:
		l, err := br.ReadByte()
		if err != nil {
			return
		}
		name := make([]byte, l)
		if _, err := io.ReadFull(br, name); err != nil {
			return
		}
		host = string(name)
	default:
		return
	}
	var port [2]byte
	if _, err := io.ReadFull(br, port[:]); err != nil {
		return
	}
	target := net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(port[:]))))
	up, err := net.DialTimeout("tcp", target, 10*time.Second)
	if err != nil {
		_, _ = c.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0})
		return
	}
	p.mu.Lock()
	p.tunnels++
	p.targets = append(p.targets, target)
	p.mu.Unlock()
	_, _ = c.Write([]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0})
	_ = c.SetDeadline(time.Time{})
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		_, _ = up.Write(b)
	}
	p.pipe(c, up)
}

func readUserPass(br *bufio.Reader) (user, pass string, ok bool) {
	ver, err := br.ReadByte()
	if err != nil || ver != 1 {
		return "", "", false
	}
	read := func() (string, bool) {
		l, err := br.ReadByte()
		if err != nil {
			return "", false
		}
		b := make([]byte, l)
		if _, err := io.ReadFull(br, b); err != nil {
			return "", false
		}
		return string(b), true
	}
	u, ok1 := read()
	pw, ok2 := read()
	return u, pw, ok1 && ok2
}
