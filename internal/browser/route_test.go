package browser

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/websocket"

	"github.com/firegate/firegate/internal/netguard"
	"github.com/firegate/firegate/internal/proxypool"
	"github.com/firegate/firegate/internal/proxypool/proxytest"
	"github.com/firegate/firegate/internal/testenv"
)

// viaSite serves a page whose script loads a script, calls an API and
// talks over a WebSocket, recording the Via header of every request.
type viaSite struct {
	*site
	mu  sync.Mutex
	via map[string][]string // path -> Via values
}

func newViaSite(t *testing.T) *viaSite {
	v := &viaSite{via: map[string][]string{}}
	record := func(r *http.Request) {
		v.mu.Lock()
		v.via[r.URL.Path] = append(v.via[r.URL.Path], r.Header.Get("Via"))
		v.mu.Unlock()
	}
	ws := websocket.Handler(func(c *websocket.Conn) {
		var msg string
		if websocket.Message.Receive(c, &msg) == nil {
			_ = websocket.Message.Send(c, "echo:"+msg)
		}
	})
	v.site = newSite(t, nil, map[string]http.HandlerFunc{
		"/": func(w http.ResponseWriter, r *http.Request) {
			record(r)
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><body><p id="out">page</p><p id="ws">no ws</p><script src="/app.js"></script></body></html>`)
		},
		"/app.js": func(w http.ResponseWriter, r *http.Request) {
			record(r)
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, `fetch('/api').then(r => r.text()).then(t => { document.getElementById('out').textContent = t; });
const s = new WebSocket('ws://' + location.host + '/ws');
s.onopen = () => s.send('hi');
s.onmessage = e => { document.getElementById('ws').textContent = e.data; };`)
		},
		"/api": func(w http.ResponseWriter, r *http.Request) {
			record(r)
			fmt.Fprint(w, "api answered")
		},
		"/ws": func(w http.ResponseWriter, r *http.Request) {
			record(r)
			ws.ServeHTTP(w, r)
		},
	})
	return v
}

func (v *viaSite) vias(path string) []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.via[path]...)
}

func TestRenderThroughOutboundProxies(t *testing.T) {
	t.Parallel()
	path := testenv.ChromePath(t)
	s := newViaSite(t)
	other := newSite(t, map[string]string{"/": "<html><body>other</body></html>"}, nil)
	sitePort := s.Listener.Addr().(*net.TCPAddr).Port
	// Only the site is admitted (an operator's ALLOW_TARGETS): other's
	// loopback port is refused like any private address.
	policy, err := netguard.New(netguard.Options{Permit: func(ap netip.AddrPort) bool { return int(ap.Port()) == sitePort }})
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{ChromePath: path, MaxTabs: 2, Policy: policy}, testenv.Logger(t))
	t.Cleanup(func() { _ = p.Close() })
	httpUp := proxytest.NewHTTP(t, proxytest.Options{Name: "upstream", User: "alice", Pass: "hunter2"})
	socksUp := proxytest.NewSOCKS5(t, proxytest.Options{User: "bob", Pass: "s3cret"})
	pool, err := proxypool.Parse("http://alice:hunter2@"+httpUp.Addr()+",socks5://bob:s3cret@"+socksUp.Addr(), proxypool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	viaHTTP, viaSOCKS := pool.Proxies()[0], pool.Proxies()[1]
	ctx := testCtx(t, 60*time.Second)
	render := func(px *proxypool.Proxy) *Result {
		t.Helper()
		res, err := p.Render(ctx, Request{URL: s.URL + "/", Proxy: px, WaitFor: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.HTML, "api answered") || !strings.Contains(res.HTML, "echo:hi") {
			t.Errorf("the page's script, API call or WebSocket did not complete: %s", res.HTML)
		}
		return res
	}

	// Through the HTTP proxy: plain HTTP forwarded (Via on the page and
	// each sub-resource), the WebSocket tunnelled by CONNECT.
	render(viaHTTP)
	for _, path := range []string{"/", "/app.js", "/api"} {
		if v := s.vias(path); len(v) != 1 || v[0] != "1.1 upstream" {
			t.Errorf("%s reached the site with Via %q, want once through the upstream", path, v)
		}
	}
	if httpUp.Forwards() != 3 || httpUp.Tunnels() != 1 {
		t.Errorf("upstream: %d forwarded, %d tunnels; want 3 and the WebSocket's", httpUp.Forwards(), httpUp.Tunnels())
	}

	// Through the SOCKS5 proxy: every connection is a tunnel.
	render(viaSOCKS)
	if socksUp.Tunnels() == 0 {
		t.Errorf("nothing went through the SOCKS5 proxy")
	}
	for _, target := range socksUp.Targets() {
		if !strings.HasSuffix(target, fmt.Sprintf(":%d", sitePort)) {
			t.Errorf("SOCKS5 proxy asked for %s", target)
		}
	}
	// Direct (no proxy): neither sees anything more.
	before := httpUp.Passed() + socksUp.Passed()
	render(nil)
	if after := httpUp.Passed() + socksUp.Passed(); after != before {
		t.Errorf("a render without a proxy went through one (%d -> %d)", before, after)
	}
	if v := s.vias("/"); len(v) != 3 || v[2] != "" {
		t.Errorf("the direct render's page came with Via %q", v)
	}
	// The policy holds behind the outbound proxy: refused before it.
	before = httpUp.Passed()
	_, err = p.Render(ctx, Request{URL: other.URL + "/", Proxy: viaHTTP})
	if !errors.Is(err, ErrBlocked) {
		t.Errorf("a refused target through the proxy: %v, want ErrBlocked", err)
	}
	if httpUp.Passed() != before || other.hit("/") != 0 {
		t.Errorf("a refused target reached the upstream proxy (%d -> %d) or the site (%d)", before, httpUp.Passed(), other.hit("/"))
	}
	if httpUp.Denied()+socksUp.Denied() != 0 {
		t.Errorf("the upstreams refused the credentials %d times", httpUp.Denied()+socksUp.Denied())
	}
}

func TestRenderProxyFailureIsErrProxy(t *testing.T) {
	t.Parallel()
	path := testenv.ChromePath(t)
	s := newSite(t, map[string]string{"/": "<html><body>x</body></html>"}, nil)
	p := New(Options{ChromePath: path, MaxTabs: 2, AllowPrivate: true}, testenv.Logger(t))
	t.Cleanup(func() { _ = p.Close() })
	up := proxytest.NewHTTP(t, proxytest.Options{User: "alice", Pass: "right"})
	pool, err := proxypool.Parse("http://alice:wrong@"+up.Addr(), proxypool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 30*time.Second)
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<html><body>secure</body></html>")
	}))
	t.Cleanup(secure.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	deadPool, _ := proxypool.Parse(dead, proxypool.Options{})
	for _, tc := range []struct {
		name string
		url  string
		px   *proxypool.Proxy
	}{
		{"credentials refused, forwarded", s.URL + "/", pool.Proxies()[0]},
		{"credentials refused, tunnelled", secure.URL + "/", pool.Proxies()[0]},
		{"proxy down, forwarded", s.URL + "/", deadPool.Proxies()[0]},
		{"proxy down, tunnelled", secure.URL + "/", deadPool.Proxies()[0]},
	} {
		_, err = p.Render(ctx, Request{URL: tc.url, Proxy: tc.px, SkipTLSVerify: true})
		if !errors.Is(err, ErrProxy) {
			t.Errorf("%s: %v, want ErrProxy", tc.name, err)
		}
		if err != nil && (strings.Contains(err.Error(), "wrong") || strings.Contains(err.Error(), "alice")) {
			t.Errorf("%s: credentials shown: %v", tc.name, err)
		}
	}
	if s.hit("/") != 0 {
		t.Errorf("the page was reached")
	}
	// An HTTPS page through a working proxy is tunnelled.
	good, _ := proxypool.Parse("http://alice:right@"+up.Addr(), proxypool.Options{})
	res, err := p.Render(ctx, Request{URL: secure.URL + "/", Proxy: good.Proxies()[0], SkipTLSVerify: true})
	if err != nil || !strings.Contains(res.HTML, "secure") {
		t.Fatalf("https through the proxy: %v", err)
	}
	if up.Tunnels() == 0 {
		t.Errorf("the https page did not go through the proxy's tunnel")
	}
}
