// Package consoletest drives the web console in a real headless Chromium
// for tests: sign in, click, type, and wait for what the page shows.
package consoletest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/firegate/firegate/internal/testenv"
)

// watchCSP records the page's Content-Security-Policy violations in
// window.__csp, from before any of its own scripts run.
const watchCSP = `window.__csp = []; document.addEventListener('securitypolicyviolation',
	(e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));`

// Browser is one Chromium with one tab.
type Browser struct {
	t   testing.TB
	ctx context.Context
}

// New starts Chromium (testenv.ChromePath: skipped without one, failed
// under REQUIRE_INTEGRATION=1); it is closed when the test ends. Every
// action is bounded by timeout in all.
func New(t testing.TB, timeout time.Duration) *Browser {
	t.Helper()
	path := testenv.ChromePath(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", "new"), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-extensions", true),
		chromedp.WindowSize(1280, 900),
	}
	base, cancelTime := context.WithTimeout(context.Background(), timeout)
	actx, cancelAlloc := chromedp.NewExecAllocator(base, opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc(); cancelTime() })
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: watchCSP}); err != nil {
		t.Fatalf("consoletest: start chromium: %v", err)
	}
	return &Browser{t: t, ctx: ctx}
}

func (b *Browser) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("consoletest: %s: %v\npage: %s", what, err, b.snapshot())
	}
}

// snapshot is the page's visible text, for failure messages.
func (b *Browser) snapshot() string {
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ''`))
	if err != nil {
		return "(unavailable)"
	}
	return s
}

// Open loads url and waits for the page's body.
func (b *Browser) Open(url string) {
	b.t.Helper()
	b.run("open "+url, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("body")))
}

// Reload reloads the page.
func (b *Browser) Reload() {
	b.t.Helper()
	b.run("reload", chromedp.Reload(), chromedp.WaitReady(chromedp.CSS("body")))
}

// Type sets the value of the input sel to text, as typing would (with an
// input event).
func (b *Browser) Type(sel, text string) {
	b.t.Helper()
	args, _ := json.Marshal([]string{sel, text}) // cannot fail: strings
	b.run("type into "+sel, chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool](`((sel, v) => { const n = document.querySelector(sel); n.value = v;
			n.dispatchEvent(new Event('input', { bubbles: true })); return true; })(...`+string(args)+`)`)(ctx, t)
		return err
	}))
}

// Click clicks the visible element sel.
func (b *Browser) Click(sel string) {
	b.t.Helper()
	b.run("click "+sel, chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel)))
}

// Eval evaluates the script expr in b's page and returns its value.
func Eval[T any](b *Browser, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("consoletest: evaluate %s: %v\npage: %s", expr, err, b.snapshot())
	}
	return v
}

// Do runs actions in b's page.
func (b *Browser) Do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	b.run("actions", actions...)
}

// WaitText waits (up to a minute) until the element sel is shown and its
// text contains want, and returns the text.
func (b *Browser) WaitText(sel, want string) string {
	b.t.Helper()
	return b.WaitTextFor(sel, want, time.Minute)
}

// textOf is a page function: the text of the element matching the
// selector, or null while there is none or it is hidden.
const textOf = `(sel) => { const n = document.querySelector(sel); return n && !n.closest('[hidden]') ? n.textContent : null; }`

// WaitTextFor is WaitText with its own bound.
func (b *Browser) WaitTextFor(sel, want string, d time.Duration) string {
	b.t.Helper()
	got, err := chromedp.Run(b.ctx, chromedp.PollFunction[string](`(sel, want) => { const t = (`+textOf+`)(sel); return t !== null && t.includes(want) ? t : false; }`,
		chromedp.WithPollingArgs(sel, want), chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(d)))
	if err != nil {
		ctx, cancel := context.WithTimeout(b.ctx, time.Second)
		defer cancel()
		last, _ := chromedp.Run(ctx, chromedp.Evaluate[*string](fmt.Sprintf(`(%s)(%q)`, textOf, sel)))
		shown := "nothing"
		if last != nil {
			shown = fmt.Sprintf("%q", *last)
		}
		b.t.Fatalf("consoletest: wait for %q in %s: %v (it shows %s)\npage: %s", want, sel, err, shown, b.snapshot())
	}
	return got
}

// Wait waits (up to d) until the page expression expr is truthy and
// returns its value.
func Wait[T any](b *Browser, expr string, d time.Duration) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Poll[T](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(d)))
	if err != nil {
		b.t.Fatalf("consoletest: wait for %s: %v\npage: %s", expr, err, b.snapshot())
	}
	return v
}

// SignIn fills the sign-in form with an API key and, when not empty, the
// operator key, and submits it.
func (b *Browser) SignIn(key, admin string) {
	b.t.Helper()
	b.Type("#signin-key", key)
	if admin != "" {
		b.Click("#signin-operator summary")
		b.Type("#signin-admin", admin)
	}
	b.Click("#signin-form button[type=submit]")
}

// NoCSPViolations fails the test if the page broke its
// Content-Security-Policy (an inline script or style, another origin).
func (b *Browser) NoCSPViolations() {
	b.t.Helper()
	if v := Eval[[]string](b, `window.__csp || []`); len(v) > 0 {
		b.t.Errorf("consoletest: Content-Security-Policy violations: %s", strings.Join(v, "; "))
	}
}

// Screenshot saves a PNG of the page to path (for looking at it while
// writing a test).
func (b *Browser) Screenshot(path string) {
	b.t.Helper()
	buf, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("consoletest: screenshot: %v", err)
	}
	if err := writeFile(path, buf); err != nil {
		b.t.Fatal(err)
	}
}

func writeFile(path string, b []byte) error { return os.WriteFile(path, b, 0o644) }
