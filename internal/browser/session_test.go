package browser

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/firegate/firegate/internal/actions"
	"github.com/firegate/firegate/internal/netguard"
	"github.com/firegate/firegate/internal/testenv"
)

// TestSession drives a session through navigation, actions and evaluation,
// checks that two sessions of one team share no state, that the guard
// refuses what the policy refuses and that closing leaves no target.
func TestSession(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, map[string]string{
		"/form": `<html><head><title>Form</title></head><body>
<input id="q"><button id="go" onclick="document.getElementById('out').textContent = 'hello ' + document.getElementById('q').value">Go</button>
<p id="out"></p><script>document.cookie = 'sess=1; max-age=3600';</script></body></html>`,
		"/other": `<html><body><p id="c"></p><script>document.getElementById('c').textContent = 'cookie=' + document.cookie;</script></body></html>`,
	}, map[string]http.HandlerFunc{
		"/status": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(404); fmt.Fprint(w, "<p>nope</p>") },
	})
	ctx := testCtx(t, 60*time.Second)

	a, err := p.OpenSession(ctx, SessionOptions{Team: "team-a"})
	if err != nil {
		t.Fatal(err)
	}
	status, err := a.Goto(ctx, s.URL+"/form")
	if err != nil || status != 200 {
		t.Fatalf("Goto = %d, %v", status, err)
	}
	if _, err := a.Do(ctx, actions.Action{Type: actions.TypeClick, Selector: "#q"}, actions.Action{Type: actions.TypeWrite, Text: "world"},
		actions.Action{Type: actions.TypeClick, Selector: "#go"}); err != nil {
		t.Fatal(err)
	}
	v, err := a.Evaluate(ctx, "document.getElementById('out').textContent + '|' + document.title")
	if err != nil || v.Value != "hello world|Form" {
		t.Fatalf("Evaluate = %+v, %v", v, err)
	}
	if _, err := a.Do(ctx, actions.Action{Type: actions.TypeClick, Selector: "#missing"}); err == nil {
		t.Error("click on a missing element: no error")
	}
	// The page stays where it is between calls.
	doc, err := a.Content(ctx)
	if err != nil || !strings.Contains(doc.HTML, "hello world") || doc.URL != s.URL+"/form" {
		t.Errorf("Content = %q %q, %v", doc.URL, doc.HTML, err)
	}
	if st, err := a.Goto(ctx, s.URL+"/status"); err != nil || st != 404 {
		t.Errorf("Goto /status = %d, %v; want 404", st, err)
	}
	shot, err := a.Screenshot(ctx, false)
	if err != nil || len(shot) < 8 || string(shot[1:4]) != "PNG" {
		t.Errorf("Screenshot: %d bytes, %v", len(shot), err)
	}
	if _, err := a.Goto(ctx, "file:///etc/passwd"); !errors.Is(err, ErrNavigation) {
		t.Errorf("Goto file: err %v, want ErrNavigation", err)
	}

	// A second session of the same team does not see the first's cookie;
	// the first still does.
	b, err := p.OpenSession(ctx, SessionOptions{Team: "team-a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Goto(ctx, s.URL+"/other"); err != nil {
		t.Fatal(err)
	}
	if v, _ := b.Evaluate(ctx, "document.getElementById('c').textContent"); v.Value != "cookie=" {
		t.Errorf("second session saw %v", v.Value)
	}
	if _, err := a.Goto(ctx, s.URL+"/other"); err != nil {
		t.Fatal(err)
	}
	if v, _ := a.Evaluate(ctx, "document.getElementById('c').textContent"); v.Value != "cookie=sess=1" {
		t.Errorf("first session saw %v", v.Value)
	}

	st, err := a.Close(ctx, true)
	if err != nil || st == nil || len(st.Cookies) != 1 || st.Cookies[0].Name != "sess" {
		t.Errorf("Close(save) = %+v, %v; want the sess cookie", st, err)
	}
	if _, err := a.Evaluate(ctx, "1"); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("Evaluate after Close: %v, want ErrSessionClosed", err)
	}
	select {
	case <-a.Done():
	default:
		t.Error("Done not closed after Close")
	}
	if _, err := b.Close(ctx, false); err != nil {
		t.Error(err)
	}
	// Neither session's tab nor browser context is left.
	br := chromedp.FromContext(a.inst.ctx).Browser
	infos, err := cdp.Call(ctx, br, target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos.TargetInfos {
		if in.TargetID == a.tb.id || in.TargetID == b.tb.id || in.BrowserContextID == a.sl.id || in.BrowserContextID == b.sl.id {
			t.Errorf("target left after Close: %+v", in)
		}
	}
	bcs, err := cdp.Call(ctx, br, target.GetBrowserContexts, cdp.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range bcs.BrowserContextIDs {
		if id == a.sl.id || id == b.sl.id {
			t.Errorf("browser context %s left after Close", id)
		}
	}
}

// TestSessionLoadsState: a profile's state is in the session's first page.
func TestSessionLoadsState(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, map[string]string{"/": `<html><body><p id="c"></p><script>document.getElementById('c').textContent = document.cookie + '|' + localStorage.getItem('k');</script></body></html>`}, nil)
	ctx := testCtx(t, 30*time.Second)
	origin := s.URL
	sess, err := p.OpenSession(ctx, SessionOptions{Team: "t", State: &State{
		Cookies:      []Cookie{{Name: "a", Value: "1", Domain: "127.0.0.1", Path: "/"}},
		LocalStorage: map[string]map[string]string{origin: {"k": "v"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(ctx, false)
	if _, err := sess.Goto(ctx, s.URL+"/"); err != nil {
		t.Fatal(err)
	}
	if v, _ := sess.Evaluate(ctx, "document.getElementById('c').textContent"); v.Value != "a=1|v" {
		t.Errorf("page saw %v, want a=1|v", v.Value)
	}
}

// TestSessionCloseAbortsOperation: Close ends a wait in progress at once.
func TestSessionCloseAbortsOperation(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	ctx := testCtx(t, 30*time.Second)
	sess, err := p.OpenSession(ctx, SessionOptions{Team: "t"})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := sess.Do(ctx, actions.Action{Type: actions.TypeWait, Selector: "#never"})
		errc <- err
	}()
	// Let the wait start: the session is held while it runs.
	testenv.Eventually(t, 10*time.Second, func() bool {
		if sess.mu.TryLock() {
			sess.mu.Unlock()
			return false
		}
		return true
	}, "wait did not start")
	start := time.Now()
	if _, err := sess.Close(ctx, false); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, ErrSessionClosed) {
		t.Errorf("wait ended with %v, want ErrSessionClosed", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
}

// TestSessionLiveView: a screencast streams JPEG frames to one viewer,
// clicks at page coordinates reach the page, and keys are typed.
func TestSessionLiveView(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, map[string]string{"/": `<html><body style="margin:0"><button id="b" style="width:200px;height:100px" onclick="document.getElementById('n').textContent = +document.getElementById('n').textContent + 1">+</button><p id="n">0</p><input id="q"></body></html>`}, nil)
	ctx := testCtx(t, 30*time.Second)
	sess, err := p.OpenSession(ctx, SessionOptions{Team: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(ctx, false)
	if _, err := sess.Goto(ctx, s.URL+"/"); err != nil {
		t.Fatal(err)
	}
	vctx, stopView := context.WithCancel(ctx)
	frames, err := sess.Screencast(vctx, 800, 600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Screencast(ctx, 800, 600); !errors.Is(err, ErrViewerBusy) {
		t.Errorf("second viewer: %v, want ErrViewerBusy", err)
	}
	if err := sess.Click(ctx, 100, 50); err != nil {
		t.Fatal(err)
	}
	if v, _ := sess.Evaluate(ctx, "document.getElementById('n').textContent"); v.Value != "1" {
		t.Errorf("after a click on the button: %v", v.Value)
	}
	select {
	case f, ok := <-frames:
		if !ok || len(f.JPEG) < 100 || f.JPEG[0] != 0xFF || f.JPEG[1] != 0xD8 {
			t.Fatalf("frame: ok %v, %d bytes", ok, len(f.JPEG))
		}
	case <-ctx.Done():
		t.Fatal("no frame")
	}
	if _, err := sess.Do(ctx, actions.Action{Type: actions.TypeClick, Selector: "#q"}); err != nil {
		t.Fatal(err)
	}
	if err := sess.Key(ctx, "abc", ""); err != nil {
		t.Fatal(err)
	}
	if err := sess.Key(ctx, "", "Backspace"); err != nil {
		t.Fatal(err)
	}
	if v, _ := sess.Evaluate(ctx, "document.getElementById('q').value"); v.Value != "ab" {
		t.Errorf("typed %v, want ab", v.Value)
	}
	stopView()
	for range frames { // closed once the viewer is gone
	}
	// The next viewer may start.
	again, err := sess.Screencast(ctx, 800, 600)
	if err != nil {
		t.Fatalf("viewer after the first left: %v", err)
	}
	if _, err := sess.Close(ctx, false); err != nil {
		t.Fatal(err)
	}
	for range again { // closed with the session
	}
}

// TestSessionGuard: a session's navigations and its page's requests pass
// the network policy, like a render's.
func TestSessionGuard(t *testing.T) {
	t.Parallel()
	path := testenv.ChromePath(t)
	private := newSite(t, map[string]string{"/": `<html><body>private</body></html>`, "/api": `{}`}, nil)
	public := newSite(t, map[string]string{"/": `<html><body><p>public page</p></body></html>`}, nil)
	publicPort := public.Listener.Addr().(*net.TCPAddr).Port
	policy, err := netguard.New(netguard.Options{Permit: func(ap netip.AddrPort) bool { return int(ap.Port()) == publicPort }})
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{ChromePath: path, MaxTabs: 1, Policy: policy}, testenv.Logger(t))
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	ctx := testCtx(t, 40*time.Second)
	sess, err := p.OpenSession(ctx, SessionOptions{Team: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(ctx, false)
	for _, u := range []string{private.URL + "/", "http://localhost:1/", "http://169.254.169.254/latest/meta-data/"} {
		if _, err := sess.Goto(ctx, u); !errors.Is(err, ErrBlocked) {
			t.Errorf("Goto %s: %v, want ErrBlocked", u, err)
		}
	}
	if _, err := sess.Goto(ctx, public.URL+"/"); err != nil {
		t.Fatal(err)
	}
	v, err := sess.Evaluate(ctx, fmt.Sprintf(`fetch(%q, {mode: 'no-cors'}).then(() => 'reached', (e) => 'refused')`, private.URL+"/api"))
	if err != nil || v.Value != "refused" {
		t.Errorf("fetch to a private address from the page: %v, %v", v.Value, err)
	}
	if n := private.hit("/") + private.hit("/api"); n != 0 {
		t.Errorf("the private server got %d requests", n)
	}
}
