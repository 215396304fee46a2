package interact

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/browser"
	"github.com/firegate/firegate/internal/testenv"
)

// cdpSession creates a session of team, connects a raw client to its
// DevTools proxy and attaches it to the session's page; it returns the
// client, the page's DevTools session and the session's endpoint.
func cdpSession(t *testing.T, ctx context.Context, m *Manager) (*rawCDP, string, browser.DevTools) {
	t.Helper()
	rec, err := m.Create(ctx, CreateParams{TeamID: team, TTL: time.Minute, ActivityTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = m.Delete(context.WithoutCancel(ctx), team, rec.ID) })
	tok, _ := m.CDPToken(rec.ID)
	cs := cdpServer(t, m)
	c := dialCDP(t, ctx, "ws"+strings.TrimPrefix(cs.URL, "http")+"/cdp/"+rec.ID+"?token="+tok)
	dt, err := m.live[rec.ID].sess.DevTools()
	if err != nil {
		t.Fatal(err)
	}
	var at struct {
		SessionID string `json:"sessionId"`
	}
	c.ok(ctx, "", "Target.attachToTarget", map[string]any{"targetId": dt.TargetID, "flatten": true}, &at)
	return c, at.SessionID, dt
}

// TestCDPCookiesStayInTheContext: the Storage cookie commands on a page
// session, which Chrome runs on its default browser context (shared by
// every team) when they name none, act on the session's context: a
// cookie the client sets is not in the default context, the default
// context's cookies are not read, and clearing leaves them.
func TestCDPCookiesStayInTheContext(t *testing.T) {
	m := New(Config{Store: testStore(t), Browser: testPool(t), Log: testenv.Logger(t)})
	ctx := ctxFor(t, 60*time.Second)
	c, sid, dt := cdpSession(t, ctx, m)

	// The default context, straight from Chrome, holds another team's
	// cookie.
	direct := dialCDP(t, ctx, dt.URL)
	direct.ok(ctx, "", "Storage.setCookies", map[string]any{"cookies": []map[string]any{
		{"name": "other", "value": "team", "domain": "example.com", "path": "/"}}}, nil)
	t.Cleanup(func() {
		direct.ok(context.WithoutCancel(ctx), "", "Storage.clearCookies", nil, nil)
	})
	defaultCookies := func() []string {
		var res struct {
			Cookies []struct {
				Name string `json:"name"`
			} `json:"cookies"`
		}
		direct.ok(ctx, "", "Storage.getCookies", nil, &res)
		var names []string
		for _, ck := range res.Cookies {
			names = append(names, ck.Name)
		}
		return names
	}

	c.ok(ctx, sid, "Storage.setCookies", map[string]any{"cookies": []map[string]any{
		{"name": "mine", "value": "1", "domain": "example.com", "path": "/"}}}, nil)
	var got struct {
		Cookies []struct {
			Name string `json:"name"`
		} `json:"cookies"`
	}
	c.ok(ctx, sid, "Storage.getCookies", nil, &got)
	if b, _ := json.Marshal(got.Cookies); len(got.Cookies) != 1 || got.Cookies[0].Name != "mine" {
		t.Errorf("Storage.getCookies on the page session = %s, want the session's cookie only", b)
	}
	if names := defaultCookies(); len(names) != 1 || names[0] != "other" {
		t.Errorf("the default context's cookies = %v, want [other]", names)
	}
	c.ok(ctx, sid, "Storage.clearCookies", nil, nil)
	if names := defaultCookies(); len(names) != 1 || names[0] != "other" {
		t.Errorf("after Storage.clearCookies on the page session the default context holds %v, want [other]", names)
	}
	c.ok(ctx, sid, "Storage.getCookies", nil, &got)
	if len(got.Cookies) != 0 {
		t.Errorf("the session's cookies after clearing: %v", got.Cookies)
	}
	// The Network domain's cookie commands act on the page's own context.
	c.ok(ctx, sid, "Network.setCookie", map[string]any{"name": "net", "value": "1", "domain": "example.com", "path": "/"}, nil)
	c.ok(ctx, sid, "Network.getAllCookies", nil, &got)
	if len(got.Cookies) != 1 || got.Cookies[0].Name != "net" {
		t.Errorf("Network.getAllCookies on the page session = %v, want [net]", got.Cookies)
	}
	c.ok(ctx, sid, "Network.clearBrowserCookies", nil, nil)
	if names := defaultCookies(); len(names) != 1 || names[0] != "other" {
		t.Errorf("after Network.clearBrowserCookies on the page session the default context holds %v, want [other]", names)
	}
}

// TestCDPBoundsWindowsAndViewports: a window over cdpMaxPixels is refused
// (a side given alone counts with the window's other one), and so is a
// device-metrics override whose viewport, the window's where it gives 0,
// times the scale factor squared is over it; an override of 0 x 0 within
// the bound keeps the window's size of that moment, so that growing the
// window later leaves the screenshot within the bound.
func TestCDPBoundsWindowsAndViewports(t *testing.T) {
	m := New(Config{Store: testStore(t), Browser: testPool(t), Log: testenv.Logger(t)})
	ctx := ctxFor(t, 60*time.Second)
	c, sid, dt := cdpSession(t, ctx, m)
	var win struct {
		WindowID int64 `json:"windowId"`
	}
	c.ok(ctx, "", "Browser.getWindowForTarget", map[string]any{"targetId": dt.TargetID}, &win)
	bounds := func(b map[string]any) map[string]any { return map[string]any{"windowId": win.WindowID, "bounds": b} }
	metrics := func(w, h int, scale float64) map[string]any {
		return map[string]any{"width": w, "height": h, "deviceScaleFactor": scale, "mobile": false}
	}

	c.refused(ctx, "", "Browser.setWindowBounds", bounds(map[string]any{"width": 4500, "height": 4500}))
	c.ok(ctx, "", "Browser.setWindowBounds", bounds(map[string]any{"width": 4500}), nil)
	c.refused(ctx, "", "Browser.setWindowBounds", bounds(map[string]any{"height": 4500}))
	c.ok(ctx, "", "Browser.setWindowBounds", bounds(map[string]any{"width": 3000, "height": 3000}), nil)
	c.refused(ctx, sid, "Emulation.setDeviceMetricsOverride", metrics(0, 0, 2))
	c.refused(ctx, sid, "Emulation.setDeviceMetricsOverride", metrics(0, 2000, 2))
	c.refused(ctx, sid, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 3000, "height": 3000, "deviceScaleFactor": 1, "mobile": false, "scale": 2})

	c.ok(ctx, "", "Browser.setWindowBounds", bounds(map[string]any{"width": 1000, "height": 800}), nil)
	c.ok(ctx, sid, "Emulation.setDeviceMetricsOverride", metrics(0, 0, 2), nil)
	c.ok(ctx, "", "Browser.setWindowBounds", bounds(map[string]any{"width": 3500, "height": 3500}), nil)
	var shot struct {
		Data []byte `json:"data"`
	}
	c.ok(ctx, sid, "Page.captureScreenshot", map[string]any{"format": "png"}, &shot)
	cfg, err := png.DecodeConfig(bytes.NewReader(shot.Data))
	if err != nil {
		t.Fatal(err)
	}
	if px := cfg.Width * cfg.Height; px > cdpMaxPixels || cfg.Width != 2000 {
		t.Errorf("screenshot of %dx%d (%d pixels) after the window grew, want the 1000-wide window at scale 2 within %d", cfg.Width, cfg.Height, px, cdpMaxPixels)
	}
}

// TestCDPPopupsCounted: pages that a client's page opens with
// window.open count against cdpMaxPages like those the client creates:
// a page opening 30 windows leaves the context with at most cdpMaxPages,
// and the client is told of each one closed.
func TestCDPPopupsCounted(t *testing.T) {
	m := New(Config{Store: testStore(t), Browser: testPool(t), Log: testenv.Logger(t)})
	ctx := ctxFor(t, 60*time.Second)
	c, _, _ := cdpSession(t, ctx, m)
	c.ok(ctx, "", "Target.setDiscoverTargets", map[string]any{"discover": true}, nil)
	const popups = 30
	c.ok(ctx, "", "Target.createTarget", map[string]any{
		"url": "data:text/html,<script>for (let i = 0; i < " + fmt.Sprint(popups) + "; i++) window.open('about:blank', 'w' + i)</script>"}, nil)
	pages := func() (created, live int) {
		alive := map[string]bool{}
		for _, ev := range c.events {
			var p struct {
				TargetID   string `json:"targetId"`
				TargetInfo struct {
					TargetID string `json:"targetId"`
					Type     string `json:"type"`
				} `json:"targetInfo"`
			}
			_ = json.Unmarshal(ev.Params, &p)
			switch {
			case ev.Method == "Target.targetCreated" && p.TargetInfo.Type == "page":
				created++
				alive[p.TargetInfo.TargetID] = true
			case ev.Method == "Target.targetDestroyed":
				delete(alive, p.TargetID)
			}
		}
		return created, len(alive)
	}
	c.wait(ctx, "the popups to open", func() bool {
		created, _ := pages()
		return created >= popups+2 // the session's page, the client's, its popups
	})
	wctx, cancel := context.WithTimeout(ctx, testenv.Patient(15*time.Second))
	defer cancel()
	c.wait(wctx, "the context to be back within the cap", func() bool {
		_, live := pages()
		return live <= cdpMaxPages
	})
	var tgs struct {
		TargetInfos []struct {
			Type string `json:"type"`
		} `json:"targetInfos"`
	}
	c.ok(ctx, "", "Target.getTargets", nil, &tgs)
	n := 0
	for _, ti := range tgs.TargetInfos {
		if ti.Type == "page" {
			n++
		}
	}
	if n > cdpMaxPages {
		t.Errorf("the session's context has %d pages, cap %d", n, cdpMaxPages)
	}
	c.refused(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"})
}
