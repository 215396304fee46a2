package browser

import (
	"bytes"
	"encoding/json"
	"html"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/firegate/firegate/internal/testenv"
)

// viewportPage writes what the page sees of its viewport and screen.
const viewportPage = `<html><body><pre id="probe"></pre><script>
document.getElementById('probe').textContent = JSON.stringify({
  w: innerWidth, h: innerHeight, sw: screen.width, sh: screen.height,
  wide: matchMedia('(min-width: 1900px)').matches, vw: visualViewport.width, vh: visualViewport.height,
  visible: document.visibilityState,
});
</script></body></html>`

// A render that nothing looks at lays out in the full viewport while
// Chrome paints only the tab's tiny window; a render with a screenshot
// paints the viewport, and the tab is small again for the next render.
func TestRenderOffscreenKeepsLayout(t *testing.T) {
	t.Parallel()
	p := New(Options{ChromePath: testenv.ChromePath(t), MaxTabs: 1, AllowPrivate: true}, testenv.Logger(t))
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	s := newSite(t, map[string]string{"/": viewportPage}, nil)
	ctx := testCtx(t, 60*time.Second)
	render := func(req Request) (map[string]any, *Result) {
		t.Helper()
		req.URL = s.URL + "/"
		res, err := p.Render(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		p.closing.Wait()
		_, rest, _ := strings.Cut(res.HTML, `<pre id="probe">`)
		body, _, _ := strings.Cut(rest, "</pre>")
		var got map[string]any
		if err := json.Unmarshal([]byte(html.UnescapeString(body)), &got); err != nil {
			t.Fatalf("probe output %q: %v", body, err)
		}
		return got, res
	}
	// window returns the size of the idle tab's window: what Chrome
	// paints when the viewport is not made visible.
	window := func() (int64, int64) {
		t.Helper()
		p.mu.Lock()
		inst := p.inst
		p.mu.Unlock()
		inst.slots.mu.Lock()
		var tb *tab
		if all := inst.slots.all; len(all) == 1 && len(all[0].idle) == 1 {
			tb = all[0].idle[0]
		}
		inst.slots.mu.Unlock()
		if tb == nil {
			t.Fatal("no idle tab after the render")
		}
		b := chromedp.FromContext(inst.ctx).Browser
		w, err := cdp.Call(ctx, b, browser.GetWindowForTarget, browser.GetWindowForTargetParams{TargetID: tb.id})
		if err != nil {
			t.Fatal(err)
		}
		return w.Bounds.Width, w.Bounds.Height
	}
	want := map[string]any{"w": float64(desktopWidth), "h": float64(desktopHeight), "sw": float64(desktopWidth),
		"sh": float64(desktopHeight), "wide": true, "vw": float64(desktopWidth), "vh": float64(desktopHeight), "visible": "visible"}
	check := func(what string, got map[string]any) {
		t.Helper()
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: page saw %s = %v, want %v (all: %v)", what, k, got[k], v, got)
			}
		}
	}
	got, _ := render(Request{})
	check("offscreen render", got)
	if w, h := window(); w > offscreenWindow || h > offscreenWindow {
		t.Errorf("tab window %dx%d after an offscreen render, want at most %dpx", w, h, offscreenWindow)
	}
	got, res := render(Request{Screenshot: &Screenshot{}})
	check("render with a screenshot", got)
	cfg, _, err := image.DecodeConfig(bytes.NewReader(res.Screenshot))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Width != desktopWidth || cfg.Height != desktopHeight {
		t.Errorf("screenshot %dx%d, want %dx%d", cfg.Width, cfg.Height, desktopWidth, desktopHeight)
	}
	if w, h := window(); w > offscreenWindow || h > offscreenWindow {
		t.Errorf("tab window %dx%d after a screenshot render, want at most %dpx", w, h, offscreenWindow)
	}
	got, _ = render(Request{})
	check("offscreen render after a screenshot", got)
}
