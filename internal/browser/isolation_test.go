package browser

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/firegate/firegate/internal/actions"
	"github.com/firegate/firegate/internal/netguard"
	"github.com/firegate/firegate/internal/netguard/netguardtest"
	"github.com/firegate/firegate/internal/testenv"
)

// canary is a TCP listener that must never see a connection.
type canary struct {
	ln    net.Listener
	conns atomic.Int64
}

func newCanary(t *testing.T, addr string) *canary {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c := &canary{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.conns.Add(1)
			conn.Close()
		}
	}()
	return c
}

func (c *canary) port() string { return strconv.Itoa(c.ln.Addr().(*net.TCPAddr).Port) }

// ownAddr returns a non-loopback address of this machine, or "".
func ownAddr(t *testing.T) string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() {
			return ipn.IP.String()
		}
	}
	return ""
}

// guardedPool is a Pool with the network policy on, admitting only the
// address and port of the test's page server (which plays a public site).
func guardedPool(t *testing.T, allowed netip.AddrPort, resolver *net.Resolver) *Pool {
	t.Helper()
	policy, err := netguard.New(netguard.Options{
		Resolver: resolver,
		Permit:   func(ap netip.AddrPort) bool { return ap == allowed },
	})
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{ChromePath: testenv.ChromePath(t), MaxTabs: 2, Policy: policy}, testenv.Logger(t))
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	return p
}

// TestCanariesSeeNoConnection scrapes pages that point every kind of
// request at listeners on loopback and on the machine's own address, with
// waits, actions and screenshots: none of them sees even a TCP connect.
func TestCanariesSeeNoConnection(t *testing.T) {
	t.Parallel()
	loop := newCanary(t, "127.0.0.1:0")
	targets := []string{"http://127.0.0.1:" + loop.port(), "http://localhost:" + loop.port(), "http://app.localhost:" + loop.port()}
	canaries := []*canary{loop}
	if c6, err := net.Listen("tcp", "[::1]:0"); err == nil {
		c6.Close()
		six := newCanary(t, "[::1]:0")
		canaries = append(canaries, six)
		targets = append(targets, "http://[::1]:"+six.port(), "http://[::ffff:127.0.0.1]:"+loop.port())
	}
	if own := ownAddr(t); own != "" {
		oc := newCanary(t, net.JoinHostPort(own, "0"))
		canaries = append(canaries, oc)
		targets = append(targets, "http://"+net.JoinHostPort(own, oc.port()))
	} else {
		t.Log("no non-loopback address on this machine: its canary is skipped")
	}

	var pageBody strings.Builder
	for i, u := range targets {
		fmt.Fprintf(&pageBody, `<img src="%[1]s/img%[2]d.png"><link rel="preconnect" href="%[1]s"><link rel="dns-prefetch" href="%[1]s">
<link rel="prefetch" href="%[1]s/prefetch"><link rel="stylesheet" href="%[1]s/s.css"><iframe src="%[1]s/frame"></iframe>
<script src="%[1]s/x.js"></script>
<script>
fetch(%[1]q + '/fetch').catch(() => {});
try { new WebSocket(%[3]q + '/ws'); } catch (e) {}
try { navigator.sendBeacon(%[1]q + '/beacon', 'x'); } catch (e) {}
try { new EventSource(%[1]q + '/events'); } catch (e) {}
try { new Worker(URL.createObjectURL(new Blob(['fetch(' + JSON.stringify(%[1]q + '/worker') + ').catch(()=>{})']))); } catch (e) {}
</script>
`, u, i, strings.Replace(u, "http://", "ws://", 1))
	}
	first := targets[0]
	page := newSite(t, map[string]string{
		"/": `<html><head><title>hostile</title><meta http-equiv="refresh" content="0.5; url=` + first + `/refresh"></head><body><p id="t">public page</p>` +
			pageBody.String() +
			`<script>navigator.serviceWorker && navigator.serviceWorker.register('/sw.js').catch(() => {});
setTimeout(() => { location.assign(` + strconv.Quote(first+"/assign") + `); }, 300);</script></body></html>`,
	}, map[string]http.HandlerFunc{
		"/sw.js": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/javascript")
			fmt.Fprintf(w, `self.addEventListener('install', e => { e.waitUntil(Promise.all(%s.map(u => fetch(u + '/sw').catch(() => {})))); });`, jsArray(targets))
		},
		"/redirect": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, first+"/redirected", http.StatusFound)
		},
	})
	pageAddr := netip.MustParseAddrPort(page.Listener.Addr().String())
	p := guardedPool(t, pageAddr, nil)
	ctx := testCtx(t, 90*time.Second)

	reqs := []Request{
		{URL: page.URL + "/", WaitFor: 1500 * time.Millisecond},
		{URL: page.URL + "/", Screenshot: &Screenshot{FullPage: true}, Actions: []actions.Action{
			{Type: actions.TypeWait, Milliseconds: 500},
			{Type: actions.TypeExecuteJavascript, Script: "fetch(" + strconv.Quote(first+"/action") + ").catch(()=>{})"},
			{Type: actions.TypeScreenshot},
			{Type: actions.TypeWait, Milliseconds: 500},
		}},
		{URL: page.URL + "/", WaitFor: 200 * time.Millisecond, Screenshot: &Screenshot{}},
	}
	for _, req := range reqs {
		// The page may navigate itself away to a refused address; either
		// outcome is fine as long as nothing connects.
		if _, err := p.Render(ctx, req); err != nil && !errors.Is(err, ErrBlocked) {
			t.Logf("render: %v", err)
		}
	}
	if _, err := p.Render(ctx, Request{URL: page.URL + "/redirect"}); !errors.Is(err, ErrBlocked) {
		t.Errorf("redirect to loopback: %v, want ErrBlocked", err)
	}
	for _, u := range targets {
		if _, err := p.Render(ctx, Request{URL: u + "/direct"}); !errors.Is(err, ErrBlocked) {
			t.Errorf("render %s: %v, want ErrBlocked", u, err)
		}
	}
	// An absence over time: a connection Chrome would make for a page
	// that went on after its render reaches a canary within this window.
	time.Sleep(300 * time.Millisecond)
	for _, c := range canaries {
		if n := c.conns.Load(); n != 0 {
			t.Errorf("canary %s saw %d connections", c.ln.Addr(), n)
		}
	}
	if page.hit("/") == 0 {
		t.Error("the page itself was never loaded")
	}
}

func jsArray(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ",") + "]"
}

// TestRebindingRefused: a name answering the page server's address and a
// loopback canary in turn. Chrome never resolves it: the proxy does, once
// per connection, and dials what it checked. A name that does not resolve
// fails the render.
func TestRebindingRefused(t *testing.T) {
	t.Parallel()
	// The "public" page on 127.0.0.2 and the canary on 127.0.0.1, one port.
	var page *site
	var loop *canary
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.2:0")
		if err != nil {
			t.Fatal(err)
		}
		port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		c, err := net.Listen("tcp", "127.0.0.1:"+port)
		if err != nil {
			ln.Close()
			continue
		}
		c.Close()
		page = newSiteOn(t, ln, map[string]string{"/": `<html><body><p>rebound public page</p><img src="/a.png"><script>fetch('/api').catch(()=>{})</script></body></html>`}, nil)
		// Every request takes a new connection, so a new lookup.
		page.Config.SetKeepAlivesEnabled(false)
		loop = newCanary(t, "127.0.0.1:"+port)
		break
	}
	if page == nil {
		t.Fatal("no port free on both loopback addresses")
	}
	dns := netguardtest.NewDNS(t)
	dns.Answer("rebind.test", netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.1"))
	pageAddr := netip.MustParseAddrPort(page.Listener.Addr().String())
	p := guardedPool(t, pageAddr, dns.Resolver())
	ctx := testCtx(t, 90*time.Second)
	target := "http://rebind.test:" + loop.port() + "/"
	ok := 0
	for range 6 {
		res, err := p.Render(ctx, Request{URL: target, WaitFor: 200 * time.Millisecond})
		switch {
		case err == nil && strings.Contains(res.HTML, "rebound public page"):
			ok++
		case errors.Is(err, ErrBlocked):
		default:
			t.Errorf("render: %v", err)
		}
	}
	// The rebound answers were seen, and refused, by the proxy.
	if f, seen := p.refused.lookup("rebind.test"); ok == 0 || !seen || f.reason != netguard.ReasonBlocked {
		t.Errorf("%d renders succeeded; refusal of the rebound name: %v %v", ok, f, seen)
	}
	// A name that only answers the loopback address is refused outright.
	dns.Answer("rebound.test", netip.MustParseAddr("127.0.0.1"))
	if _, err := p.Render(ctx, Request{URL: "http://rebound.test:" + loop.port() + "/"}); !errors.Is(err, ErrBlocked) {
		t.Errorf("name answering loopback: %v, want ErrBlocked", err)
	}
	if _, err := p.Render(ctx, Request{URL: "http://nxdomain.test:" + loop.port() + "/"}); !errors.Is(err, ErrDNS) {
		t.Errorf("unresolvable name: %v, want ErrDNS", err)
	}
	// An absence over time, as above: the window for a late connection.
	time.Sleep(200 * time.Millisecond)
	if n := loop.conns.Load(); n != 0 {
		t.Errorf("the loopback canary saw %d connections", n)
	}
	if dns.Lookups("rebind.test") == 0 {
		t.Error("the test resolver was never asked: Chrome resolved the name itself")
	}
}

// TestNoStateAcrossTeams: HTTP credentials and cookies of one team's render
// are not seen by another team's render of the same site.
func TestNoStateAcrossTeams(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, nil, map[string]http.HandlerFunc{
		"/private/": func(w http.ResponseWriter, r *http.Request) {
			user, pass, ok := r.BasicAuth()
			if !ok || user != "user" || pass != "pass" {
				w.Header().Set("WWW-Authenticate", `Basic realm="private"`)
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprint(w, "<html><body>denied</body></html>")
				return
			}
			fmt.Fprint(w, "<html><body>team B private page</body></html>")
		},
		"/set": func(w http.ResponseWriter, r *http.Request) {
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "team-b-secret", Path: "/", Expires: time.Now().Add(time.Hour)})
			fmt.Fprint(w, "<html><body>set</body></html>")
		},
		"/show": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "<html><body><pre id=c>cookie=[%s]</pre></body></html>", r.Header.Get("Cookie"))
		},
	})
	ctx := testCtx(t, 60*time.Second)
	withCreds := strings.Replace(s.URL, "http://", "http://user:pass@", 1) + "/private/"
	res, err := p.Render(ctx, Request{URL: withCreds, Team: "team-b"})
	if err != nil || !strings.Contains(res.HTML, "team B private page") {
		t.Fatalf("team B with credentials: %v %q", err, res.HTML)
	}
	if _, err := p.Render(ctx, Request{URL: s.URL + "/set", Team: "team-b"}); err != nil {
		t.Fatal(err)
	}
	for _, team := range []string{"team-a", "team-b"} {
		// Credentials are never kept by Chrome, for any team.
		res, err := p.Render(ctx, Request{URL: s.URL + "/private/", Team: team})
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusUnauthorized || strings.Contains(res.HTML, "private page") {
			t.Errorf("%s without credentials: status %d, html %q", team, res.StatusCode, res.HTML)
		}
	}
	res, err = p.Render(ctx, Request{URL: s.URL + "/show", Team: "team-a"})
	if err != nil {
		t.Fatal(err)
	}
	if got := between(res.HTML, "cookie=[", "]"); got != "" {
		t.Errorf("team A's render sent cookies %q", got)
	}
}

func between(s, a, b string) string {
	_, rest, _ := strings.Cut(s, a)
	out, _, _ := strings.Cut(rest, b)
	return out
}

// TestHeadersOnlyToTarget: custom headers, cookies given in headers and URL
// credentials go to the target's host, not to a third-party image.
func TestHeadersOnlyToTarget(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	var mu sync.Mutex
	var third *http.Request
	thirdParty := newSite(t, nil, map[string]http.HandlerFunc{
		"/pixel.png": func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			third = r.Clone(r.Context())
			mu.Unlock()
			w.Header().Set("Content-Type", "image/gif")
			w.Write([]byte("GIF89a"))
		},
	})
	// The third party is another host name for loopback.
	thirdURL := strings.Replace(thirdParty.URL, "127.0.0.1", "localhost", 1)
	s := newSite(t, map[string]string{
		"/": `<html><body><p>target</p><img src="` + thirdURL + `/pixel.png"><img src="/own.png"></body></html>`,
	}, map[string]http.HandlerFunc{"/own.png": func(w http.ResponseWriter, r *http.Request) {}})
	target := strings.Replace(s.URL, "http://", "http://u:pw@", 1) + "/"
	// A screenshot, so that images are loaded.
	_, err := p.Render(testCtx(t, 30*time.Second), Request{URL: target, Team: "t", Screenshot: &Screenshot{}, Headers: map[string]string{
		"X-Custom": "secret-header", "Cookie": "sid=secret-cookie; theme=dark",
	}})
	if err != nil {
		t.Fatal(err)
	}
	main := s.request("/")
	own := s.request("/own.png")
	wantAuth := "Basic " + base64.StdEncoding.EncodeToString([]byte("u:pw"))
	for name, r := range map[string]*http.Request{"page": main, "own image": own} {
		if r == nil {
			t.Fatalf("%s not requested", name)
		}
		if r.Header.Get("X-Custom") != "secret-header" || r.Header.Get("Authorization") != wantAuth ||
			!strings.Contains(r.Header.Get("Cookie"), "sid=secret-cookie") {
			t.Errorf("%s request headers %v", name, r.Header)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if third == nil {
		t.Fatal("the third-party image was not requested")
	}
	for _, h := range []string{"X-Custom", "Authorization", "Cookie"} {
		if v := third.Header.Get(h); v != "" {
			t.Errorf("third-party request carried %s: %q", h, v)
		}
	}
}

// TestWebSocketThroughProxy: a page's WebSocket to an allowed host works
// through the guarded proxy (the upgrade is carried both ways).
func TestWebSocketThroughProxy(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, map[string]string{
		"/": `<html><body><p id="out">waiting</p><script>
const ws = new WebSocket("ws://" + location.host + "/ws");
ws.onmessage = (e) => { document.getElementById("out").textContent = "ws:" + e.data; ws.send("bye"); };
</script></body></html>`,
	}, map[string]http.HandlerFunc{
		"/ws": func(w http.ResponseWriter, r *http.Request) {
			c, err := websocket.Accept(w, r, nil)
			if err != nil {
				return
			}
			defer c.CloseNow()
			_ = c.Write(r.Context(), websocket.MessageText, []byte("hello over the proxy"))
			_, _, _ = c.Read(r.Context())
		},
	})
	res, err := p.Render(testCtx(t, 30*time.Second), Request{URL: s.URL + "/", WaitFor: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.HTML, "ws:hello over the proxy") {
		t.Errorf("page did not get the WebSocket message: %q", between(res.HTML, `<p id="out">`, "</p>"))
	}
}

// TestMediaSkippedWithoutScreenshot: images, fonts and media are not
// downloaded when nothing will show them, and are with a screenshot.
func TestMediaSkippedWithoutScreenshot(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, map[string]string{
		"/": `<html><head><style>@font-face{font-family:F;src:url(/f.woff2)} body{font-family:F}</style></head>
<body><p>text</p><img src="/pic.png"><video src="/v.mp4" autoplay muted></video><script>fetch('/data')</script></body></html>`,
	}, map[string]http.HandlerFunc{"/data": func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "{}") }})
	ctx := testCtx(t, 30*time.Second)
	if _, err := p.Render(ctx, Request{URL: s.URL + "/", WaitFor: 300 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if n := s.hit("/pic.png") + s.hit("/f.woff2") + s.hit("/v.mp4"); n != 0 || s.hit("/data") != 1 {
		t.Errorf("without a screenshot: %d media requests, %d data requests", n, s.hit("/data"))
	}
	if _, err := p.Render(ctx, Request{URL: s.URL + "/", Screenshot: &Screenshot{}}); err != nil {
		t.Fatal(err)
	}
	if s.hit("/pic.png") != 1 {
		t.Errorf("with a screenshot the image was requested %d times", s.hit("/pic.png"))
	}
}

// TestWaitForFromNavigation: waitFor counts from the navigation, the smart
// wait included, and still catches content a long timer (one the smart
// wait does not follow) adds before it ends.
func TestWaitForFromNavigation(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, map[string]string{"/": `<html><body><p id="t">early</p><script>
setTimeout(() => { document.getElementById('t').textContent = 'late text'; }, 3200);</script></body></html>`}, nil)
	ctx := testCtx(t, 30*time.Second)
	res, err := p.Render(ctx, Request{URL: s.URL + "/"})
	if err != nil || !strings.Contains(res.HTML, "early") {
		t.Fatalf("without waitFor: %v", err)
	}
	res, err = p.Render(ctx, Request{URL: s.URL + "/", WaitFor: 3600 * time.Millisecond})
	if err != nil || !strings.Contains(res.HTML, "late text") {
		t.Fatalf("with waitFor: %v %q", err, between(res.HTML, `<p id="t">`, "</p>"))
	}
}

// TestDevToolsPortUnreachable: with every private address admitted, a page
// on loopback renders, but the local Chrome's own DevTools port (opened for
// interact's cdpUrl) is refused to a render, as a page or as a
// sub-resource, and answers nothing about the browser.
func TestDevToolsPortUnreachable(t *testing.T) {
	t.Parallel()
	p := New(Options{ChromePath: testenv.ChromePath(t), MaxTabs: 1, AllowPrivate: true, DevTools: true}, testenv.Logger(t))
	t.Cleanup(func() { _ = p.Close() })
	ctx := testCtx(t, 60*time.Second)
	s := newSite(t, map[string]string{"/": `<html><body><p id="x">loopback page</p></body></html>`}, nil)
	res, err := p.Render(ctx, Request{URL: s.URL + "/"})
	if err != nil || !strings.Contains(res.HTML, "loopback page") {
		t.Fatalf("loopback page with private targets admitted: %v", err)
	}
	p.mu.Lock()
	ws := p.inst.devtools
	p.mu.Unlock()
	u, err := url.Parse(ws)
	if err != nil || u.Port() == "" {
		t.Fatalf("no DevTools URL: %q", ws)
	}
	res, err = p.Render(ctx, Request{URL: "http://127.0.0.1:" + u.Port() + "/json/version"})
	if err == nil && (strings.Contains(res.HTML, "webSocketDebuggerUrl") || strings.Contains(res.HTML, "Browser")) {
		t.Fatalf("the DevTools port answered a render: %s", res.HTML)
	}
	if err == nil {
		t.Errorf("render of the DevTools port: no error (status %d)", res.StatusCode)
	}
	// As a sub-resource of an admitted page: the fetch fails.
	s2 := newSite(t, map[string]string{"/": `<html><body><pre id="out">waiting</pre><script>
fetch('http://127.0.0.1:` + u.Port() + `/json/version').then(r => r.text()).then(t => { document.getElementById('out').textContent = 'got ' + t; },
  e => { document.getElementById('out').textContent = 'refused'; });
</script></body></html>`}, nil)
	res, err = p.Render(ctx, Request{URL: s2.URL + "/", WaitFor: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.HTML, "webSocketDebuggerUrl") || !strings.Contains(res.HTML, "refused") {
		t.Errorf("page's fetch of the DevTools port: %s", res.HTML)
	}
}
