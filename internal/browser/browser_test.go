package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/firegate/firegate/internal/actions"
	"github.com/firegate/firegate/internal/netguard"
	"github.com/firegate/firegate/internal/testenv"
)

// The package's tests share one Pool (one Chrome); each test gets its own
// tabs and its own httptest server on 127.0.0.1.
var (
	sharedOnce sync.Once
	sharedPool *Pool
)

// testAdHost is added to the block list; Chrome resolves *.localhost to
// loopback by itself.
const testAdHost = "ads.localhost"

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedPool != nil {
		if err := sharedPool.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "close pool:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// testPool returns the shared Pool, skipping the test without Chrome.
func testPool(tb testing.TB) *Pool {
	tb.Helper()
	path := testenv.ChromePath(tb)
	sharedOnce.Do(func() {
		log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		sharedPool = New(Options{
			ChromePath:   path,
			MaxTabs:      8,
			AllowPrivate: true,
			AdHosts:      append(parseHosts(defaultAdHosts), testAdHost),
		}, log)
	})
	return sharedPool
}

// testCtx returns a ctx bounded for one browser test.
func testCtx(tb testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(tb.Context(), d)
	tb.Cleanup(cancel)
	return ctx
}

// site serves pages (path -> HTML) and records the requests it got.
type site struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
	reqs map[string]*http.Request
}

func newSite(tb testing.TB, pages map[string]string, extra map[string]http.HandlerFunc) *site {
	return newSiteOn(tb, nil, pages, extra)
}

// newSiteOn is newSite on a listener of the caller's (nil: 127.0.0.1:0).
func newSiteOn(tb testing.TB, ln net.Listener, pages map[string]string, extra map[string]http.HandlerFunc) *site {
	s := &site{hits: map[string]int{}, reqs: map[string]*http.Request{}}
	mux := http.NewServeMux()
	for path, body := range pages {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		})
	}
	for path, h := range extra {
		mux.HandleFunc(path, h)
	}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.reqs[r.URL.Path] = r.Clone(context.WithoutCancel(r.Context()))
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	if ln != nil {
		s.Server.Listener.Close()
		s.Server.Listener = ln
	}
	s.Server.Start()
	tb.Cleanup(s.Close)
	return s
}

func (s *site) hit(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func (s *site) request(path string) *http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reqs[path]
}

func TestRenderTextAfterTimer(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, map[string]string{"/": `<html><head><title>T</title></head><body><div id="out">loading</div>
<script>setTimeout(() => { document.getElementById('out').textContent = 'LATE TEXT'; }, 500);</script></body></html>`}, nil)
	start := time.Now()
	res, err := p.Render(testCtx(t, 20*time.Second), Request{URL: s.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rendered in %v", time.Since(start))
	if !strings.Contains(res.HTML, "LATE TEXT") {
		t.Errorf("HTML lacks the late text:\n%s", res.HTML)
	}
	if res.StatusCode != 200 || !strings.HasPrefix(res.ContentType, "text/html") {
		t.Errorf("status %d, content type %q", res.StatusCode, res.ContentType)
	}
}

// pageTargets counts the open page targets and browser contexts.
func pageTargets(t *testing.T, p *Pool) (pages, all int) {
	t.Helper()
	p.mu.Lock()
	inst := p.inst
	p.mu.Unlock()
	if inst == nil {
		return 0, 0
	}
	infos, err := chromedp.Targets(inst.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if in.Type == "page" {
			pages++
		}
	}
	return pages, len(infos)
}

func TestRenderStatusHeadersRedirect(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, map[string]string{
		"/final": `<html><body><p id="ua"></p><script>document.getElementById('ua').textContent = navigator.userAgent;</script></body></html>`,
	}, map[string]http.HandlerFunc{
		"/missing": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("X-Page", "missing")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, "<html><body><h1>Not here</h1></body></html>")
		},
		"/start": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/hop", http.StatusFound)
		},
		"/hop": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/final", http.StatusMovedPermanently)
		},
	})
	ctx := testCtx(t, 30*time.Second)

	t.Run("404", func(t *testing.T) {
		res, err := p.Render(ctx, Request{URL: s.URL + "/missing"})
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusNotFound || res.Header.Get("X-Page") != "missing" || !strings.Contains(res.HTML, "Not here") {
			t.Errorf("status %d, X-Page %q, html %q", res.StatusCode, res.Header.Get("X-Page"), res.HTML)
		}
	})
	t.Run("redirect and headers", func(t *testing.T) {
		res, err := p.Render(ctx, Request{URL: s.URL + "/start", Headers: map[string]string{
			"X-Firegate-Test": "yes", "User-Agent": "FiregateTest/1.0",
		}})
		if err != nil {
			t.Fatal(err)
		}
		if res.URL != s.URL+"/final" || res.StatusCode != 200 {
			t.Errorf("final URL %q status %d, want %q 200", res.URL, res.StatusCode, s.URL+"/final")
		}
		for _, path := range []string{"/start", "/hop", "/final"} {
			r := s.request(path)
			if r == nil || r.Header.Get("X-Firegate-Test") != "yes" || r.UserAgent() != "FiregateTest/1.0" {
				t.Errorf("%s: request headers %v", path, r)
			}
		}
		if !strings.Contains(res.HTML, ">FiregateTest/1.0<") {
			t.Errorf("navigator.userAgent not overridden: %s", res.HTML)
		}
	})
}

func TestRenderDefaultUserAgentNotHeadless(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, map[string]string{"/": `<html><body>ok</body></html>`}, nil)
	if _, err := p.Render(testCtx(t, 20*time.Second), Request{URL: s.URL + "/"}); err != nil {
		t.Fatal(err)
	}
	if ua := s.request("/").UserAgent(); strings.Contains(ua, "Headless") || !strings.Contains(ua, "Chrome/") {
		t.Errorf("User-Agent %q", ua)
	}
}

// probePage writes what the page sees into #probe as JSON.
const probePage = `<html><head><meta name="viewport" content="width=device-width, initial-scale=1"></head><body><pre id="probe"></pre><script>
document.getElementById('probe').textContent = JSON.stringify({
  width: innerWidth, touch: navigator.maxTouchPoints, ua: navigator.userAgent,
  tz: Intl.DateTimeFormat().resolvedOptions().timeZone, lang: navigator.language,
  langs: navigator.languages, locale: Intl.NumberFormat().resolvedOptions().locale,
});
</script></body></html>`

// probe renders probePage with req and decodes what the page saw.
func probe(t *testing.T, req Request) (map[string]any, *site) {
	t.Helper()
	p := testPool(t)
	s := newSite(t, map[string]string{"/": probePage}, nil)
	req.URL = s.URL + "/"
	res, err := p.Render(testCtx(t, 20*time.Second), req)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(res.HTML, `<pre id="probe">`)
	body, _, _ := strings.Cut(rest, "</pre>")
	var got map[string]any
	if err := json.Unmarshal([]byte(html.UnescapeString(body)), &got); err != nil {
		t.Fatalf("probe output %q: %v", body, err)
	}
	return got, s
}

func TestRenderMobile(t *testing.T) {
	t.Parallel()
	got, _ := probe(t, Request{Mobile: true})
	if got["width"] != float64(mobileWidth) || got["touch"].(float64) < 1 || !strings.Contains(got["ua"].(string), "Mobile") {
		t.Errorf("mobile page saw %v", got)
	}
	got, _ = probe(t, Request{})
	if got["width"] != float64(desktopWidth) || strings.Contains(got["ua"].(string), "Mobile") {
		t.Errorf("desktop page saw %v", got)
	}
}

func TestRenderTimezoneAndLanguage(t *testing.T) {
	t.Parallel()
	got, s := probe(t, Request{Languages: []string{"de-DE", "en"}, Timezone: "Asia/Tokyo"})
	if got["tz"] != "Asia/Tokyo" || got["lang"] != "de-DE" || got["locale"] != "de-DE" {
		t.Errorf("page saw %v", got)
	}
	if al := s.request("/").Header.Get("Accept-Language"); al != "de-DE,en;q=0.9" {
		t.Errorf("Accept-Language %q", al)
	}
}

func TestRenderBlockAds(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	var s *site
	s = newSite(t, nil, map[string]http.HandlerFunc{
		"/": func(w http.ResponseWriter, r *http.Request) {
			port := strings.TrimPrefix(s.URL, "http://127.0.0.1:")
			fmt.Fprintf(w, `<html><body><p>content</p>
<div id="onetrust-banner-sdk">We use cookies</div>
<script src="http://%s:%s/ad.js"></script>
<img src="http://pixel.%s:%s/pixel.gif">
</body></html>`, testAdHost, port, testAdHost, port)
		},
		"/ad.js":     func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "window.adLoaded = true;") },
		"/pixel.gif": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) },
	})
	ctx := testCtx(t, 30*time.Second)
	banner := actions.Action{Type: actions.TypeExecuteJavascript, Script: `getComputedStyle(document.getElementById('onetrust-banner-sdk')).display`}

	res, err := p.Render(ctx, Request{URL: s.URL + "/", BlockAds: true, Actions: []actions.Action{banner, {Type: actions.TypeScrape}}})
	if err != nil {
		t.Fatal(err)
	}
	// The hiding is not in the page's HTML: rawHtml and a scrape action's
	// html hold no injected style (or script) of ours.
	for name, h := range map[string]string{"HTML": res.HTML, "actions.scrapes[0].html": res.Actions.Scrapes[0].HTML} {
		if strings.Contains(h, "<style") || strings.Contains(h, "CybotCookiebotDialog") || strings.Count(h, "<script") != 1 {
			t.Errorf("%s carries injected markup: %s", name, h)
		}
	}
	if n := s.hit("/ad.js") + s.hit("/pixel.gif"); n != 0 {
		t.Errorf("ad host requested %d times with blockAds", n)
	}
	if v := res.Actions.JavascriptReturns[0].Value; v != "none" {
		t.Errorf("cookie banner display %v, want none", v)
	}

	// Control: without blocking the same page does reach the ad host.
	res, err = p.Render(ctx, Request{URL: s.URL + "/", Actions: []actions.Action{banner}})
	if err != nil {
		t.Fatal(err)
	}
	if s.hit("/ad.js") == 0 || s.hit("/pixel.gif") == 0 {
		t.Errorf("control render did not request the ad host: %v", s.hits)
	}
	if v := res.Actions.JavascriptReturns[0].Value; v == "none" {
		t.Errorf("cookie banner hidden without blockAds")
	}
}

func TestRenderTLS(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<html><body>secret page</body></html>")
	}))
	t.Cleanup(s.Close)
	ctx := testCtx(t, 30*time.Second)
	if _, err := p.Render(ctx, Request{URL: s.URL + "/"}); !errors.Is(err, ErrTLS) || !errors.Is(err, ErrNavigation) {
		t.Errorf("self-signed without skip: err %v, want ErrTLS", err)
	}
	res, err := p.Render(ctx, Request{URL: s.URL + "/", SkipTLSVerify: true})
	if err != nil || !strings.Contains(res.HTML, "secret page") {
		t.Errorf("with skip: %v", err)
	}
	// The setting belongs to that render's tab only.
	if _, err := p.Render(ctx, Request{URL: s.URL + "/"}); !errors.Is(err, ErrTLS) {
		t.Errorf("without skip after a render with skip: err %v, want ErrTLS", err)
	}
}

func TestRenderErrors(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, map[string]string{"/slow": `<html><body><img src="/hang.png">slow</body></html>`}, map[string]http.HandlerFunc{
		"/hang.png": func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(20 * time.Second):
			}
		},
	})
	t.Run("dns", func(t *testing.T) {
		_, err := p.Render(testCtx(t, 20*time.Second), Request{URL: "http://no-such-host.invalid/"})
		if !errors.Is(err, ErrDNS) || !errors.Is(err, ErrNavigation) {
			t.Errorf("err %v, want ErrDNS", err)
		}
	})
	t.Run("connection refused", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		_, err = p.Render(testCtx(t, 20*time.Second), Request{URL: "http://" + addr + "/"})
		if !errors.Is(err, ErrNavigation) || errors.Is(err, ErrDNS) || !strings.Contains(err.Error(), "ERR_CONNECTION_REFUSED") {
			t.Errorf("err %v, want ErrNavigation with ERR_CONNECTION_REFUSED", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
		defer cancel()
		_, err := p.Render(ctx, Request{URL: s.URL + "/slow", WaitFor: 5 * time.Second})
		if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err %v, want ErrTimeout", err)
		}
	})
	t.Run("hanging subresource does not fail the page", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 4*time.Second)
		defer cancel()
		res, err := p.Render(ctx, Request{URL: s.URL + "/slow"})
		if err != nil || !strings.Contains(res.HTML, "slow") {
			t.Errorf("err %v", err)
		}
	})
	t.Run("bad url", func(t *testing.T) {
		if _, err := p.Render(t.Context(), Request{URL: "file:///etc/passwd"}); !errors.Is(err, ErrNavigation) {
			t.Errorf("err %v", err)
		}
	})
}

func TestRenderGuardBlocksPrivateTargets(t *testing.T) {
	t.Parallel()
	path := testenv.ChromePath(t)
	private := newSite(t, map[string]string{"/": `<html><body>private</body></html>`, "/x.png": ""}, nil)
	public := newSite(t, nil, map[string]http.HandlerFunc{
		"/": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `<html><body><p>public page</p><img src="%[1]s/x.png">
<script>fetch(%[2]q).catch(() => {});</script></body></html>`, private.URL, strings.Replace(private.URL, "127.0.0.1", "localhost", 1)+"/api")
		},
		"/to-private": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, private.URL+"/", http.StatusFound)
		},
	})
	// This test needs a pool without AllowPrivate; the permit hook admits
	// the "public" server, which also listens on loopback.
	profiles := filepath.Join(t.TempDir(), "data", "chrome") // created on start
	publicPort := public.Listener.Addr().(*net.TCPAddr).Port
	policy, err := netguard.New(netguard.Options{Permit: func(ap netip.AddrPort) bool { return int(ap.Port()) == publicPort }})
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{ChromePath: path, MaxTabs: 2, UserDataDir: profiles, Policy: policy}, testenv.Logger(t))
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
		if left, _ := os.ReadDir(profiles); len(left) != 0 {
			t.Errorf("profile dirs left after Close: %v", left)
		}
	})
	ctx := testCtx(t, 40*time.Second)

	res, err := p.Render(ctx, Request{URL: public.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.HTML, "public page") {
		t.Errorf("html %q", res.HTML)
	}
	if n := private.hit("/x.png") + private.hit("/api"); n != 0 {
		t.Errorf("private server got %d subresource requests", n)
	}
	for _, u := range []string{private.URL + "/", public.URL + "/to-private", "http://localhost:1/", "http://169.254.169.254/latest/meta-data/"} {
		if _, err := p.Render(ctx, Request{URL: u}); !errors.Is(err, ErrBlocked) {
			t.Errorf("%s: err %v, want ErrBlocked", u, err)
		}
	}
	if n := private.hit("/"); n != 0 {
		t.Errorf("private page requested %d times", n)
	}
}

// TestRenderRecoversAfterChromeKilled is not parallel: it kills the shared
// Chrome while no other test uses it.
func TestRenderRecoversAfterChromeKilled(t *testing.T) {
	p := testPool(t)
	s := newSite(t, map[string]string{"/": `<html><body>alive</body></html>`}, nil)
	ctx := testCtx(t, 60*time.Second)
	if _, err := p.Render(ctx, Request{URL: s.URL + "/"}); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	proc := chromedp.FromContext(p.inst.ctx).Browser.Process()
	p.mu.Unlock()
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	res, err := p.Render(ctx, Request{URL: s.URL + "/"})
	if err != nil {
		t.Fatalf("render after kill: %v", err)
	}
	if !strings.Contains(res.HTML, "alive") {
		t.Errorf("html %q", res.HTML)
	}
	p.mu.Lock()
	newProc := chromedp.FromContext(p.inst.ctx).Browser.Process()
	p.mu.Unlock()
	if newProc.Pid == proc.Pid {
		t.Errorf("same Chrome pid %d after kill", proc.Pid)
	}
}

// TestRenderLeavesNoTargets is not parallel, so that it can count targets.
func TestRenderLeavesNoTargets(t *testing.T) {
	p := testPool(t)
	n := 200
	if testing.Short() {
		n = 20
	}
	s := newSite(t, map[string]string{"/": `<html><body><p>page</p><script>fetch('/data')</script></body></html>`, "/data": "{}"}, nil)
	ctx := testCtx(t, 3*time.Minute)
	if _, err := p.Render(ctx, Request{URL: s.URL + "/"}); err != nil {
		t.Fatal(err)
	}
	p.closing.Wait()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			req := Request{URL: s.URL + "/", BlockAds: i%2 == 0, Mobile: i%3 == 0}
			if i%5 == 0 {
				req.Actions = []actions.Action{{Type: actions.TypeScrape}}
			}
			if _, err := p.Render(ctx, req); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	p.closing.Wait()
	p.mu.Lock()
	inst := p.inst
	p.mu.Unlock()
	// The first tab of the browser, and per slot its idle tabs.
	inst.slots.mu.Lock()
	slots, want := len(inst.slots.all), 1
	for _, s := range inst.slots.all {
		want += len(s.idle)
		if len(s.idle) != len(s.tabs) {
			t.Errorf("slot has %d idle tabs but %d open", len(s.idle), len(s.tabs))
		}
	}
	inst.slots.mu.Unlock()
	pages, all, contexts := quietTargets(t, p, want)
	if pages != want || contexts != slots || slots > inst.slots.max {
		t.Errorf("after %d renders: %d page targets (want %d), %d browser contexts for %d slots (max %d), %d targets in all",
			n, pages, want, contexts, slots, inst.slots.max, all)
	}
}

// quietTargets waits for closing tabs, then counts page targets, all
// targets and browser contexts; with want >= 0 it polls until the page
// count is want.
func quietTargets(t *testing.T, p *Pool, want int) (pages, all, contexts int) {
	t.Helper()
	p.closing.Wait()
	p.mu.Lock()
	inst := p.inst
	p.mu.Unlock()
	testenv.WaitFor(5*time.Second, func() bool {
		pages, all = pageTargets(t, p)
		return want < 0 || pages == want
	})
	b := chromedp.FromContext(inst.ctx).Browser
	bcs, err := cdp.Call(t.Context(), b, target.GetBrowserContexts, cdp.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	return pages, all, len(bcs.BrowserContextIDs)
}

// TestRenderIsolation: what one render stores (cookies, local storage,
// session storage, IndexedDB) is gone in the next, which reuses the slot.
func TestRenderIsolation(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, map[string]string{"/": `<html><body><pre id="seen"></pre><script>
const seen = {cookie: document.cookie, local: localStorage.getItem('k'), session: sessionStorage.getItem('k')};
document.cookie = 'k=v; max-age=3600';
localStorage.setItem('k', 'v');
sessionStorage.setItem('k', 'v');
document.getElementById('seen').textContent = JSON.stringify(seen);
</script></body></html>`}, map[string]http.HandlerFunc{
		"/set-cookie": func(w http.ResponseWriter, r *http.Request) {
			http.SetCookie(w, &http.Cookie{Name: "server", Value: "1", MaxAge: 3600, Path: "/"})
			fmt.Fprint(w, "<html><body>set</body></html>")
		},
	})
	ctx := testCtx(t, 30*time.Second)
	for i := range 4 {
		res, err := p.Render(ctx, Request{URL: s.URL + "/"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.HTML, `{"cookie":"","local":null,"session":null}`) {
			t.Errorf("render %d saw state: %s", i, res.HTML)
		}
		if _, err := p.Render(ctx, Request{URL: s.URL + "/set-cookie"}); err != nil {
			t.Fatal(err)
		}
		p.closing.Wait() // let the slot come back, so the next render reuses it
	}
	if r := s.request("/"); r.Header.Get("Cookie") != "" {
		t.Errorf("cookie sent: %q", r.Header.Get("Cookie"))
	}
}

// TestRenderTabReuse renders through a pool of one tab, so that every
// render gets the slot of the one before: a plain render keeps the tab, and
// the next one sees none of what the last render set on it (emulation,
// headers, scripts, history, window name); a page that wrote session storage
// gets its tab replaced. It starts a Chrome of its own for that.
func TestRenderTabReuse(t *testing.T) {
	t.Parallel()
	p := New(Options{ChromePath: testenv.ChromePath(t), MaxTabs: 1, AllowPrivate: true}, testenv.Logger(t))
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	s := newSite(t, map[string]string{
		"/": `<html><body><div id="onetrust-banner-sdk">banner</div><pre id="probe"></pre><script>
document.getElementById('probe').textContent = JSON.stringify({
  touch: navigator.maxTouchPoints, tz: Intl.DateTimeFormat().resolvedOptions().timeZone, lang: navigator.language,
  history: history.length, name: window.name, session: sessionStorage.getItem('k'),
  banner: getComputedStyle(document.getElementById('onetrust-banner-sdk')).display,
});
window.name = 'seen';
</script></body></html>`,
		"/session": `<html><body><script>sessionStorage.setItem('k', 'v')</script></body></html>`,
	}, nil)
	ctx := testCtx(t, 60*time.Second)
	render := func(req Request) (string, target.ID) {
		t.Helper()
		res, err := p.Render(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		p.closing.Wait()
		p.mu.Lock()
		inst := p.inst
		p.mu.Unlock()
		var id target.ID
		inst.slots.mu.Lock()
		if all := inst.slots.all; len(all) == 1 && len(all[0].idle) == 1 {
			id = all[0].idle[0].t.TargetID
		}
		inst.slots.mu.Unlock()
		_, rest, _ := strings.Cut(res.HTML, `<pre id="probe">`)
		body, _, _ := strings.Cut(rest, "</pre>")
		return html.UnescapeString(body), id
	}
	plain := Request{URL: s.URL + "/"}
	want, first := render(plain)
	if !strings.Contains(want, `"session":null`) || !strings.Contains(want, `"name":""`) {
		t.Fatalf("first render saw %s", want)
	}
	got, id := render(Request{URL: s.URL + "/", Mobile: true, Timezone: "Asia/Tokyo", Languages: []string{"de-DE"},
		BlockAds: true, Headers: map[string]string{"X-Caller": "one"}})
	if got == want || id != first {
		t.Errorf("emulated render saw %s in tab %s (first tab %s)", got, id, first)
	}
	if got, id = render(plain); got != want || id != first {
		t.Errorf("render after an emulated one saw %s in tab %s, want %s in tab %s", got, id, want, first)
	}
	if h := s.request("/").Header.Get("X-Caller"); h != "" {
		t.Errorf("header of the last render sent again: %q", h)
	}
	if _, id = render(Request{URL: s.URL + "/session"}); id == first {
		t.Errorf("tab %s kept after the page wrote session storage", id)
	}
	if got, _ = render(plain); got != want {
		t.Errorf("render after session storage saw %s, want %s", got, want)
	}
}

func TestRenderProfileState(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, map[string]string{
		"/set": `<html><body><script>
document.cookie = 'js=1; max-age=3600';
localStorage.setItem('theme', 'dark');
sessionStorage.setItem('tab', 'one');
</script>set</body></html>`,
		"/get": `<html><body><pre id="seen"></pre><script>
document.getElementById('seen').textContent = JSON.stringify({cookie: document.cookie,
  local: localStorage.getItem('theme'), session: sessionStorage.getItem('tab')});
</script></body></html>`,
	}, map[string]http.HandlerFunc{
		"/login": func(w http.ResponseWriter, r *http.Request) {
			http.SetCookie(w, &http.Cookie{Name: "sid", Value: "abc", MaxAge: 3600, Path: "/", HttpOnly: true})
			http.Redirect(w, r, "/set", http.StatusFound)
		},
	})
	ctx := testCtx(t, 30*time.Second)
	res, err := p.Render(ctx, Request{URL: s.URL + "/login", SaveState: true})
	if err != nil {
		t.Fatal(err)
	}
	st := res.State
	if st == nil || len(st.Cookies) != 2 || st.LocalStorage[s.URL]["theme"] != "dark" || st.SessionStorage[s.URL]["tab"] != "one" {
		t.Fatalf("saved state %+v", st)
	}
	blob, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var loaded State
	if err := json.Unmarshal(blob, &loaded); err != nil {
		t.Fatal(err)
	}

	res, err = p.Render(ctx, Request{URL: s.URL + "/get", State: &loaded})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.HTML, `{"cookie":"js=1","local":"dark","session":"one"}`) {
		t.Errorf("page with loaded state saw %s", res.HTML)
	}
	if c := s.request("/get").Header.Get("Cookie"); !strings.Contains(c, "sid=abc") {
		t.Errorf("cookie header %q", c)
	}
	res, err = p.Render(ctx, Request{URL: s.URL + "/get"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.HTML, `{"cookie":"","local":null,"session":null}`) {
		t.Errorf("page without state saw %s", res.HTML)
	}
}

// TestRenderRemoteChrome starts a Chrome of its own with a DevTools port
// and renders through it with RemoteURL; Close leaves it running and clean.
func TestRenderRemoteChrome(t *testing.T) {
	t.Parallel()
	wsURL, _, cmd := startRemoteChrome(t)
	p := New(Options{RemoteURL: wsURL, AllowPrivate: true, MaxTabs: 2}, testenv.Logger(t))
	if err := p.Available(); err != nil {
		t.Fatal(err)
	}
	s := newSite(t, map[string]string{"/": `<html><body>remote ok</body></html>`}, nil)
	ctx := testCtx(t, 30*time.Second)
	for range 3 {
		res, err := p.Render(ctx, Request{URL: s.URL + "/"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.HTML, "remote ok") {
			t.Errorf("html %q", res.HTML)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("remote Chrome stopped by Close: %v", err)
	}
	// A new client sees only the remote's own first tab.
	p2 := New(Options{RemoteURL: wsURL, AllowPrivate: true}, testenv.Logger(t))
	t.Cleanup(func() { _ = p2.Close() })
	inst, err := p2.instance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	infos, err := chromedp.Targets(inst.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var pages int
	for _, in := range infos {
		if in.Type == "page" {
			pages++
		}
	}
	bcs, err := cdp.Call(ctx, chromedp.FromContext(inst.ctx).Browser, target.GetBrowserContexts, cdp.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	// The remote's about:blank tab and the tab of p2's own root context.
	if pages != 2 || len(bcs.BrowserContextIDs) != 0 {
		t.Errorf("remote Chrome has %d pages and %d browser contexts after Close", pages, len(bcs.BrowserContextIDs))
	}
}

// startRemoteChrome starts a Chrome of the test's own with a DevTools
// port and returns its browser endpoint, its port and its command.
func startRemoteChrome(t *testing.T) (string, string, *exec.Cmd) {
	t.Helper()
	path := testenv.ChromePath(t)
	dir := t.TempDir()
	args := append(chromeFlagNames(), "--remote-debugging-port=0", "--user-data-dir="+dir, "about:blank")
	cmd := exec.Command(path, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // to kill its children too
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	var lines []string
	testenv.Eventually(t, 10*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort"))
		lines = strings.Split(strings.TrimSpace(string(b)), "\n")
		return err == nil && len(lines) == 2
	}, "remote Chrome did not write DevToolsActivePort")
	return "ws://127.0.0.1:" + lines[0] + lines[1], lines[0], cmd
}

// chromeFlagNames renders chromeFlags as command-line arguments for a
// Chrome started by hand.
func chromeFlagNames() []string {
	return []string{"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"}
}

func TestRenderNoSharedHTTPCache(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	var n atomic.Int64
	s := newSite(t, nil, map[string]http.HandlerFunc{
		"/": func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/" {
				http.NotFound(w, r) // favicon
				return
			}
			w.Header().Set("Cache-Control", "private, max-age=600")
			fmt.Fprintf(w, "<html><body>copy %d</body></html>", n.Add(1))
		},
	})
	ctx := testCtx(t, 30*time.Second)
	for i := 1; i <= 3; i++ {
		res, err := p.Render(ctx, Request{URL: s.URL + "/"})
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("copy %d", i); !strings.Contains(res.HTML, want) {
			t.Errorf("render %d: %q, want %q (served from a cache)", i, res.HTML, want)
		}
		p.closing.Wait()
	}
}

// A page that never goes quiet (a ticking DOM and a request that never
// ends) is captured when the smart wait's budget runs out, not failed.
func TestRenderBusyPageIsCapturedAtBudget(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, map[string]string{"/": `<html><body><p id="tick">0</p><script>
let i = 0; setInterval(() => { document.getElementById('tick').textContent = ++i; }, 50);
fetch('/hang');
</script></body></html>`}, map[string]http.HandlerFunc{
		"/hang": func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
	})
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Second)
	defer cancel()
	start := time.Now()
	res, err := p.Render(ctx, Request{URL: s.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 1500*time.Millisecond || el > 3500*time.Millisecond {
		t.Errorf("render took %v, want about half the 4s timeout", el)
	}
	if strings.Contains(res.HTML, `<p id="tick">0</p>`) {
		t.Errorf("page captured before its script ran: %s", res.HTML)
	}
}

// A page whose long poll never ends, but that is otherwise still, is
// captured about relaxedAfter after load rather than at the budget.
func TestRenderLongPollPage(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, map[string]string{"/": `<html><body><p id="d">waiting</p><script>
fetch('/data').then(r => r.text()).then(t => { document.getElementById('d').textContent = t; });
fetch('/poll');
</script></body></html>`}, map[string]http.HandlerFunc{
		"/data": func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "loaded data") },
		"/poll": func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
	})
	start := time.Now()
	res, err := p.Render(testCtx(t, 30*time.Second), Request{URL: s.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > relaxedAfter+2*time.Second {
		t.Errorf("render took %v", el)
	}
	if !strings.Contains(res.HTML, "loaded data") {
		t.Errorf("html %s", res.HTML)
	}
}
