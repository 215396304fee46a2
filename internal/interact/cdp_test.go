package interact

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/firegate/firegate/internal/browser"
	"github.com/firegate/firegate/internal/testenv"
)

const otherTeam = "0195e0a0-0000-7000-8000-000000000002"

// cdpServer serves the DevTools connections of m's sessions at
// /cdp/{id}?token=.
func cdpServer(t testing.TB, m *Manager) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Path, "/cdp/")
		switch err := m.ServeCDP(w, r, id, r.URL.Query().Get("token")); {
		case errors.Is(err, ErrNotFound):
			http.Error(w, "not found", http.StatusNotFound)
		case errors.Is(err, ErrCDPBusy):
			http.Error(w, "busy", http.StatusTooManyRequests)
		case err != nil:
			http.Error(w, err.Error(), http.StatusBadGateway)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// rawCDP is a DevTools client that keeps every message it receives.
type rawCDP struct {
	t    *testing.T
	c    *websocket.Conn
	next int64

	mu     sync.Mutex
	all    []json.RawMessage
	events []cdpMessage
	resp   map[int64]cdpMessage
	wake   chan struct{}
	closed error
}

func dialCDP(t *testing.T, ctx context.Context, url string) *rawCDP {
	t.Helper()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	c.SetReadLimit(64 << 20)
	r := &rawCDP{t: t, c: c, resp: map[int64]cdpMessage{}, wake: make(chan struct{}, 1)}
	go func() {
		for {
			_, data, err := c.Read(context.WithoutCancel(ctx))
			r.mu.Lock()
			if err != nil {
				r.closed = err
				r.mu.Unlock()
				r.signal()
				return
			}
			r.all = append(r.all, data)
			var m cdpMessage
			if json.Unmarshal(data, &m) == nil {
				if m.ID != nil {
					r.resp[*m.ID] = m
				} else {
					r.events = append(r.events, m)
				}
			}
			r.mu.Unlock()
			r.signal()
		}
	}()
	t.Cleanup(func() { c.CloseNow() })
	return r
}

func (r *rawCDP) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// wait polls cond (with r.mu held) until it holds or ctx ends.
func (r *rawCDP) wait(ctx context.Context, what string, cond func() bool) {
	r.t.Helper()
	for {
		r.mu.Lock()
		ok, closed := cond(), r.closed
		r.mu.Unlock()
		if ok {
			return
		}
		if closed != nil {
			r.t.Fatalf("waiting for %s: connection closed: %v", what, closed)
		}
		select {
		case <-r.wake:
		case <-ctx.Done():
			r.t.Fatalf("waiting for %s: %v", what, ctx.Err())
		}
	}
}

// call sends a command and returns its answer.
func (r *rawCDP) call(ctx context.Context, sessionID, method string, params any) cdpMessage {
	r.t.Helper()
	r.next++
	id := r.next
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if sessionID != "" {
		msg["sessionId"] = sessionID
	}
	b, _ := json.Marshal(msg)
	if err := r.c.Write(ctx, websocket.MessageText, b); err != nil {
		r.t.Fatalf("send %s: %v", method, err)
	}
	var m cdpMessage
	r.wait(ctx, "answer to "+method, func() bool {
		var ok bool
		m, ok = r.resp[id]
		return ok
	})
	return m
}

// ok calls and fails the test on an error answer.
func (r *rawCDP) ok(ctx context.Context, sessionID, method string, params any, res any) {
	r.t.Helper()
	m := r.call(ctx, sessionID, method, params)
	if m.Error != nil {
		r.t.Fatalf("%s: %s", method, m.Error.Message)
	}
	if res != nil {
		if err := json.Unmarshal(m.Result, res); err != nil {
			r.t.Fatalf("%s result %s: %v", method, m.Result, err)
		}
	}
}

// refused calls and fails the test unless the proxy refused the command.
func (r *rawCDP) refused(ctx context.Context, sessionID, method string, params any) {
	r.t.Helper()
	m := r.call(ctx, sessionID, method, params)
	if m.Error == nil || !strings.Contains(m.Error.Message, "firegate:") {
		r.t.Errorf("%s %v: answered %s %+v, want the proxy's refusal", method, params, m.Result, m.Error)
	}
}

// attachedEvents returns the sessions the client was told of, by target.
func (r *rawCDP) attached() map[string]string {
	out := map[string]string{}
	for _, ev := range r.events {
		if ev.Method != "Target.attachedToTarget" || ev.SessionID != "" {
			continue
		}
		var p struct {
			SessionID  string `json:"sessionId"`
			TargetInfo struct {
				TargetID string `json:"targetId"`
			} `json:"targetInfo"`
		}
		_ = json.Unmarshal(ev.Params, &p)
		out[p.TargetInfo.TargetID] = p.SessionID
	}
	return out
}

// TestCDPConfinesToSession drives the DevTools proxy with raw protocol
// messages against Chromium: a client of one team's session sees and
// drives only that session's context; what reaches other contexts, the
// browser itself or the server's files is refused; events of another
// session never reach it; the connection closes when the session ends.
func TestCDPConfinesToSession(t *testing.T) {
	srv := site(t)
	m := New(Config{Store: testStore(t), Browser: testPool(t), Log: testenv.Logger(t)})
	ctx := ctxFor(t, 90*time.Second)
	recA, err := m.Create(ctx, CreateParams{TeamID: team, TTL: time.Minute, ActivityTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	recB, err := m.Create(ctx, CreateParams{TeamID: otherTeam, TTL: time.Minute, ActivityTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	a, b := m.live[recA.ID], m.live[recB.ID]
	if _, err := a.sess.Goto(ctx, srv.URL+"/"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.sess.Goto(ctx, srv.URL+"/form"); err != nil {
		t.Fatal(err)
	}
	dtA, err := a.sess.DevTools()
	if err != nil {
		t.Fatal(err)
	}
	dtB, err := b.sess.DevTools()
	if err != nil {
		t.Fatal(err)
	}
	tokA, ok := m.CDPToken(recA.ID)
	if !ok || len(tokA) != 64 {
		t.Fatalf("token of A: %q %v", tokA, ok)
	}
	cs := cdpServer(t, m)
	wsURL := "ws" + strings.TrimPrefix(cs.URL, "http") + "/cdp/"

	// A wrong token, another session's token, none: 404 before any upgrade.
	tokB, _ := m.CDPToken(recB.ID)
	for _, u := range []string{wsURL + recA.ID + "?token=" + strings.Repeat("0", 64), wsURL + recA.ID + "?token=" + tokB, wsURL + recA.ID} {
		_, resp, err := websocket.Dial(ctx, u, nil)
		if err == nil || resp == nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("dial %s: %v %v, want 404", u, err, resp)
		}
	}

	c := dialCDP(t, ctx, wsURL+recA.ID+"?token="+tokA)
	var ver struct {
		Product string `json:"product"`
	}
	c.ok(ctx, "", "Browser.getVersion", nil, &ver)
	if ver.Product == "" {
		t.Error("Browser.getVersion: no product")
	}
	var bcs struct {
		IDs []string `json:"browserContextIds"`
	}
	c.ok(ctx, "", "Target.getBrowserContexts", nil, &bcs)
	if len(bcs.IDs) != 0 {
		t.Errorf("getBrowserContexts = %v, want none (the session's is the default)", bcs.IDs)
	}
	var tgs struct {
		TargetInfos []struct {
			TargetID         string `json:"targetId"`
			BrowserContextID string `json:"browserContextId"`
		} `json:"targetInfos"`
	}
	c.ok(ctx, "", "Target.getTargets", nil, &tgs)
	seen := false
	for _, ti := range tgs.TargetInfos {
		if ti.BrowserContextID != dtA.ContextID {
			t.Errorf("getTargets lists %s of context %s", ti.TargetID, ti.BrowserContextID)
		}
		seen = seen || ti.TargetID == dtA.TargetID
	}
	if !seen {
		t.Errorf("getTargets does not list the session's page: %+v", tgs)
	}

	// Discovery and auto-attach: the session's page is attached before the
	// answer, as the browser does.
	c.ok(ctx, "", "Target.setDiscoverTargets", map[string]any{"discover": true}, nil)
	c.ok(ctx, "", "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}, nil)
	c.mu.Lock()
	sid := c.attached()[dtA.TargetID]
	c.mu.Unlock()
	if sid == "" {
		t.Fatal("no Target.attachedToTarget for the session's page before the setAutoAttach answer")
	}
	var ev struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
	}
	c.ok(ctx, sid, "Runtime.evaluate", map[string]any{"expression": "document.title", "returnByValue": true}, &ev)
	if ev.Result.Value != "Shop" {
		t.Errorf("title = %q, want Shop", ev.Result.Value)
	}
	// The client drives the page the session's operations see.
	c.ok(ctx, sid, "Runtime.evaluate", map[string]any{"expression": "document.getElementById('q').value = 'from cdp'; document.getElementById('go').click()"}, nil)
	doc, err := a.sess.Content(ctx)
	if err != nil || !strings.Contains(doc.HTML, "searched from cdp") {
		t.Errorf("the session's page after the client's click: %v %.300s", err, doc.HTML)
	}

	// A new page: in the session's context, attached before the answer.
	var created struct {
		TargetID string `json:"targetId"`
	}
	c.ok(ctx, "", "Target.createTarget", map[string]any{"url": srv.URL + "/next"}, &created)
	c.mu.Lock()
	newSID := c.attached()[created.TargetID]
	c.mu.Unlock()
	if newSID == "" {
		t.Fatal("the created page was not attached before the createTarget answer")
	}
	var info struct {
		TargetInfo struct {
			BrowserContextID string `json:"browserContextId"`
		} `json:"targetInfo"`
	}
	c.ok(ctx, "", "Target.getTargetInfo", map[string]any{"targetId": created.TargetID}, &info)
	if info.TargetInfo.BrowserContextID != dtA.ContextID {
		t.Errorf("created page in context %s, want the session's %s", info.TargetInfo.BrowserContextID, dtA.ContextID)
	}
	c.ok(ctx, "", "Target.closeTarget", map[string]any{"targetId": created.TargetID}, nil)

	// Refused: other contexts, the browser, the server's files.
	for _, tc := range []struct {
		session, method string
		params          any
	}{
		{"", "Target.attachToTarget", map[string]any{"targetId": dtB.TargetID, "flatten": true}},
		{"", "Target.closeTarget", map[string]any{"targetId": dtB.TargetID}},
		{"", "Target.activateTarget", map[string]any{"targetId": dtB.TargetID}},
		{"", "Target.getTargetInfo", map[string]any{"targetId": dtB.TargetID}},
		{"", "Target.createTarget", map[string]any{"url": "about:blank", "browserContextId": dtB.ContextID}},
		{"", "Target.createTarget", map[string]any{"url": "file:///etc/passwd"}},
		{"", "Target.createBrowserContext", map[string]any{}},
		{"", "Target.disposeBrowserContext", map[string]any{"browserContextId": dtB.ContextID}},
		{"", "Target.disposeBrowserContext", map[string]any{"browserContextId": dtA.ContextID}},
		{"", "Target.exposeDevToolsProtocol", map[string]any{"targetId": dtA.TargetID}},
		{"", "Target.sendMessageToTarget", map[string]any{"message": "{}", "targetId": dtB.TargetID}},
		{"", "Target.attachToTarget", map[string]any{"targetId": dtA.TargetID, "flatten": false}},
		{"", "Target.closeTarget", map[string]any{"targetId": dtA.TargetID}},
		{"", "Browser.close", nil},
		{"", "Browser.crash", nil},
		{"", "SystemInfo.getInfo", nil},
		{"", "SystemInfo.getProcessInfo", nil},
		{"", "Tracing.start", map[string]any{}},
		{"", "Storage.getCookies", map[string]any{"browserContextId": dtB.ContextID}},
		{"", "Storage.clearDataForOrigin", map[string]any{"origin": "*", "storageTypes": "all"}},
		{"", "Browser.setDownloadBehavior", map[string]any{"behavior": "allow", "browserContextId": dtB.ContextID, "downloadPath": "/tmp"}},
		{"", "Network.clearBrowserCookies", nil},
		{"", "Runtime.evaluate", map[string]any{"expression": "1"}},
		{sid, "Page.navigate", map[string]any{"url": "file:///etc/passwd"}},
		{sid, "Page.navigate", map[string]any{"url": "chrome://version"}},
		{sid, "Page.navigate", map[string]any{"url": "view-source:file:///etc/passwd"}},
		{sid, "DOM.setFileInputFiles", map[string]any{"files": []string{"/etc/passwd"}, "nodeId": 1}},
		{sid, "Input.dispatchDragEvent", map[string]any{"type": "drop", "x": 1, "y": 1, "data": map[string]any{"items": []any{}, "dragOperationsMask": 1, "files": []string{"/etc/passwd"}}}},
		{sid, "Input.dispatchDragEvent", map[string]any{"type": "drop", "x": 1, "y": 1, "data": map[string]any{"items": []any{}, "dragOperationsMask": 1, "files": "/etc/passwd"}}},
		{sid, "Page.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": "/tmp"}},
		{sid, "Network.loadNetworkResource", map[string]any{"url": "file:///etc/passwd", "options": map[string]any{"disableCache": true, "includeCredentials": false}}},
		{sid, "Page.close", nil},
		{sid, "Page.handleFileChooser", map[string]any{"action": "accept", "files": []string{"/etc/passwd"}}},
		{sid, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 100000, "height": 100000, "deviceScaleFactor": 1, "mobile": false}},
		{sid, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 4000, "height": 4000, "deviceScaleFactor": "x", "mobile": false}},
		{sid, "Page.captureScreenshot", map[string]any{"clip": map[string]any{"x": 0, "y": 0, "width": 8000, "height": 8000, "scale": 2}}},
		{sid, "Page.captureScreenshot", map[string]any{"clip": "big"}},
		{sid, "Tracing.start", map[string]any{}},
		{sid, "Browser.getVersion", nil},
		{sid, "SystemInfo.getInfo", nil},
		{sid, "Target.createBrowserContext", map[string]any{}},
		{sid, "Target.attachToTarget", map[string]any{"targetId": dtB.TargetID, "flatten": true}},
		{sid, "Storage.getCookies", map[string]any{"browserContextId": dtB.ContextID}},
	} {
		c.refused(ctx, tc.session, tc.method, tc.params)
	}
	// A browser-level session (Playwright's CDP sessions) is confined the
	// same way.
	var bt struct {
		SessionID string `json:"sessionId"`
	}
	c.ok(ctx, "", "Target.attachToBrowserTarget", nil, &bt)
	if bt.SessionID == "" {
		t.Fatal("attachToBrowserTarget: no session")
	}
	for _, tc := range []struct {
		method string
		params any
	}{
		{"Target.attachToTarget", map[string]any{"targetId": dtB.TargetID, "flatten": true}},
		{"Target.createBrowserContext", map[string]any{}},
		{"Browser.close", nil},
		{"Target.createTarget", map[string]any{"url": "about:blank", "browserContextId": dtB.ContextID}},
	} {
		c.refused(ctx, bt.SessionID, tc.method, tc.params)
	}
	c.ok(ctx, bt.SessionID, "Target.getTargets", nil, &tgs)
	for _, ti := range tgs.TargetInfos {
		if ti.BrowserContextID != dtA.ContextID {
			t.Errorf("getTargets on a browser session lists %s of context %s", ti.TargetID, ti.BrowserContextID)
		}
	}
	var viaB struct {
		SessionID string `json:"sessionId"`
	}
	c.ok(ctx, bt.SessionID, "Target.attachToTarget", map[string]any{"targetId": dtA.TargetID, "flatten": true}, &viaB)
	c.ok(ctx, viaB.SessionID, "Runtime.evaluate", map[string]any{"expression": "document.title", "returnByValue": true}, &ev)
	if ev.Result.Value != "Shop" {
		t.Errorf("title through the browser session's attach = %q", ev.Result.Value)
	}

	// A duplicate key means to Chrome what it meant to the check: the
	// last value (a 100000-pixel-wide clip then 1 pixel is 1 pixel).
	c.next++
	dup := c.next
	raw := fmt.Sprintf(`{"id":%d,"sessionId":%q,"method":"Page.captureScreenshot","params":{"format":"png","clip":{"x":0,"y":0,"width":100000,"width":1,"height":1,"scale":1}}}`, dup, sid)
	if err := c.c.Write(ctx, websocket.MessageText, []byte(raw)); err != nil {
		t.Fatal(err)
	}
	var shot cdpMessage
	c.wait(ctx, "the screenshot", func() bool { var ok bool; shot, ok = c.resp[dup]; return ok })
	var img struct {
		Data string `json:"data"`
	}
	if shot.Error == nil {
		_ = json.Unmarshal(shot.Result, &img)
	}
	png, _ := base64.StdEncoding.DecodeString(img.Data)
	if len(png) < 24 || string(png[12:16]) != "IHDR" {
		t.Fatalf("1-pixel clip with a duplicate width: %+v, %d bytes", shot.Error, len(png))
	}
	if w := binary.BigEndian.Uint32(png[16:20]); w != 1 {
		t.Errorf("the screenshot is %d pixels wide, want 1 (the width checked)", w)
	}

	// A session of the browser's that this connection did not attach.
	if m := c.call(ctx, "0123456789ABCDEF0123456789ABCDEF", "Runtime.evaluate", map[string]any{"expression": "1"}); m.Error == nil {
		t.Errorf("a foreign session id was served: %s", m.Result)
	}
	// Cookies at the browser level are the session's context's.
	c.ok(ctx, "", "Storage.setCookies", map[string]any{"cookies": []any{map[string]any{"name": "cdp", "value": "1", "domain": "example.com", "path": "/"}}}, nil)
	st, err := a.sess.Content(ctx) // keeps the session busy a moment; cookies are read below
	_ = st
	if err != nil {
		t.Fatal(err)
	}
	var cookies struct {
		Cookies []struct {
			Name string `json:"name"`
		} `json:"cookies"`
	}
	c.ok(ctx, "", "Storage.getCookies", nil, &cookies)
	if len(cookies.Cookies) != 1 || cookies.Cookies[0].Name != "cdp" {
		t.Errorf("the session's cookies = %+v, want the one set", cookies.Cookies)
	}

	// B's page changes while A's client listens: nothing of B's reaches it.
	if _, err := b.sess.Goto(ctx, srv.URL+"/next"); err != nil {
		t.Fatal(err)
	}
	c.ok(ctx, sid, "Runtime.evaluate", map[string]any{"expression": "1"}, nil) // a round trip after B's navigation
	c.mu.Lock()
	for _, raw := range c.all {
		if strings.Contains(string(raw), dtB.TargetID) || strings.Contains(string(raw), dtB.ContextID) {
			t.Errorf("the client received a message about session B: %.300s", raw)
		}
	}
	c.mu.Unlock()

	// Ending the session closes the connection.
	if _, err := m.Delete(ctx, team, recA.ID); err != nil {
		t.Fatal(err)
	}
	c.wait(ctx, "the connection to close", func() bool { return c.closed != nil })
	if websocket.CloseStatus(c.closed) != websocket.StatusGoingAway {
		t.Errorf("closed with %v, want going away", c.closed)
	}
	if _, ok := m.CDPToken(recA.ID); ok {
		t.Error("an ended session still has a DevTools token")
	}
	_, resp, err := websocket.Dial(ctx, wsURL+recA.ID+"?token="+tokA, nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("dial an ended session: %v %v, want 404", err, resp)
	}
}

// TestCDPPageCap: a client opens pages in the session's context up to
// cdpMaxPages (the session's own counted), no more.
func TestCDPPageCap(t *testing.T) {
	m := New(Config{Store: testStore(t), Browser: testPool(t), Log: testenv.Logger(t)})
	ctx := ctxFor(t, 60*time.Second)
	rec, err := m.Create(ctx, CreateParams{TeamID: team, TTL: time.Minute, ActivityTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = m.Delete(context.WithoutCancel(ctx), team, rec.ID) })
	tok, _ := m.CDPToken(rec.ID)
	cs := cdpServer(t, m)
	c := dialCDP(t, ctx, "ws"+strings.TrimPrefix(cs.URL, "http")+"/cdp/"+rec.ID+"?token="+tok)
	c.ok(ctx, "", "Target.setDiscoverTargets", map[string]any{"discover": true}, nil)
	for i := 1; i < cdpMaxPages; i++ {
		c.ok(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, nil)
	}
	// The proxy counts the pages the browser has reported.
	c.wait(ctx, "the pages to be discovered", func() bool {
		n := 0
		for _, ev := range c.events {
			if ev.Method == "Target.targetCreated" && strings.Contains(string(ev.Params), `"type":"page"`) {
				n++
			}
		}
		return n >= cdpMaxPages
	})
	c.refused(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"})
}

// TestCDPConnectionCap: a session takes at most MaxCDPConns DevTools
// connections at once.
func TestCDPConnectionCap(t *testing.T) {
	m := New(Config{Store: testStore(t), Browser: testPool(t), Log: testenv.Logger(t)})
	ctx := ctxFor(t, 60*time.Second)
	rec, err := m.Create(ctx, CreateParams{TeamID: team, TTL: time.Minute, ActivityTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = m.Delete(context.WithoutCancel(ctx), team, rec.ID) })
	tok, _ := m.CDPToken(rec.ID)
	cs := cdpServer(t, m)
	u := "ws" + strings.TrimPrefix(cs.URL, "http") + "/cdp/" + rec.ID + "?token=" + tok
	for range MaxCDPConns {
		c := dialCDP(t, ctx, u)
		c.ok(ctx, "", "Browser.getVersion", nil, nil) // connected through
	}
	_, resp, err := websocket.Dial(ctx, u, nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("connection %d: %v %v, want 429", MaxCDPConns+1, err, resp)
	}
	// CDPHandler (a sandboxed program's DevTools) is over the cap too,
	// and says so in its own words.
	own := httptest.NewServer(m.CDPHandler(team, rec.ID))
	t.Cleanup(own.Close)
	if code, body := getText(t, own.URL); code != http.StatusTooManyRequests || body != fmt.Sprintf(cdpBusy, MaxCDPConns) {
		t.Errorf("CDPHandler over the cap: %d %q", code, body)
	}
	// CDPHandler serves the team's session, not another team's.
	h := httptest.NewServer(m.CDPHandler(otherTeam, rec.ID))
	t.Cleanup(h.Close)
	_, resp, err = websocket.Dial(ctx, "ws"+strings.TrimPrefix(h.URL, "http"), nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("CDPHandler for another team: %v %v, want 404", err, resp)
	}
	if code, body := getText(t, h.URL); code != http.StatusNotFound || body != cdpNotFound {
		t.Errorf("CDPHandler for another team: %d %q", code, body)
	}
}

// getText GETs u and returns the status and the body without its final
// newline.
func getText(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, strings.TrimSuffix(string(b), "\n")
}

var _ = browser.ErrNoDevTools

// TestCDPBounds: commands on a DevTools connection count as activity (at
// most every cdpTouchEvery), at most cdpMaxInflight wait for Chrome at
// once, and a message over cdpMaxClientMessage closes the connection.
func TestCDPBounds(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	st := testStore(t)
	m := New(Config{Store: st, Browser: testPool(t), Now: clk.now, Log: testenv.Logger(t)})
	ctx := ctxFor(t, 90*time.Second)
	rec, err := m.Create(ctx, CreateParams{TeamID: team, TTL: time.Hour, ActivityTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = m.Delete(context.WithoutCancel(ctx), team, rec.ID) })
	tok, _ := m.CDPToken(rec.ID)
	cs := cdpServer(t, m)
	u := "ws" + strings.TrimPrefix(cs.URL, "http") + "/cdp/" + rec.ID + "?token=" + tok
	c := dialCDP(t, ctx, u)

	// Activity: the first command is written, then one per cdpTouchEvery.
	clk.add(30 * time.Second)
	c.ok(ctx, "", "Browser.getVersion", nil, nil)
	got, err := st.InteractSession(ctx, team, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := clk.now(); !got.LastActivity.Equal(want) || !got.IdleAt.Equal(want.Add(time.Minute)) {
		t.Errorf("after a command: lastActivity %v idleAt %v, want %v and a minute later", got.LastActivity, got.IdleAt, want)
	}
	clk.add(time.Second)
	c.ok(ctx, "", "Browser.getVersion", nil, nil)
	if again, _ := st.InteractSession(ctx, team, rec.ID); !again.LastActivity.Equal(got.LastActivity) {
		t.Errorf("a command within %v wrote activity again: %v", cdpTouchEvery, again.LastActivity)
	}

	// In flight: promises that never settle hold their commands in Chrome.
	var at struct {
		SessionID string `json:"sessionId"`
	}
	dt, _ := m.live[rec.ID].sess.DevTools()
	c.ok(ctx, "", "Target.attachToTarget", map[string]any{"targetId": dt.TargetID, "flatten": true}, &at)
	first := c.next + 1
	for i := range cdpMaxInflight {
		c.next++
		b, _ := json.Marshal(map[string]any{"id": c.next, "sessionId": at.SessionID, "method": "Runtime.evaluate",
			"params": map[string]any{"expression": "new Promise(() => {})", "awaitPromise": true}})
		if err := c.c.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatalf("command %d: %v", i, err)
		}
	}
	m2 := c.call(ctx, at.SessionID, "Runtime.evaluate", map[string]any{"expression": "1"})
	if m2.Error == nil || !strings.Contains(m2.Error.Message, "in flight") {
		t.Errorf("command %d in flight: %s %+v, want refused", cdpMaxInflight+1, m2.Result, m2.Error)
	}
	c.mu.Lock()
	for id := first; id < first+cdpMaxInflight; id++ {
		if _, ok := c.resp[id]; ok {
			t.Errorf("a never-settling command %d was answered", id)
			break
		}
	}
	c.mu.Unlock()

	// Too big a message closes the connection.
	big := make([]byte, cdpMaxClientMessage+1)
	for i := range big {
		big[i] = ' '
	}
	_ = c.c.Write(ctx, websocket.MessageText, big)
	c.wait(ctx, "the connection to close", func() bool { return c.closed != nil })
	if s := websocket.CloseStatus(c.closed); s != websocket.StatusMessageTooBig && s != websocket.StatusPolicyViolation {
		t.Errorf("after a %d-byte message: %v", len(big), c.closed)
	}
	// The session itself is unharmed.
	if _, err := m.live[rec.ID].sess.Content(ctx); err != nil {
		t.Errorf("the session after its client was cut off: %v", err)
	}
}

// TestCDPClosesOnExpiry: a session that expires for inactivity while a
// client is connected (its commands were its last activity) closes the
// connection when the reaper ends it.
func TestCDPClosesOnExpiry(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	m := New(Config{Store: testStore(t), Browser: testPool(t), Now: clk.now, Log: testenv.Logger(t)})
	ctx := ctxFor(t, 60*time.Second)
	rec, err := m.Create(ctx, CreateParams{TeamID: team, TTL: time.Hour, ActivityTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := m.CDPToken(rec.ID)
	cs := cdpServer(t, m)
	c := dialCDP(t, ctx, "ws"+strings.TrimPrefix(cs.URL, "http")+"/cdp/"+rec.ID+"?token="+tok)
	clk.add(50 * time.Second)
	c.ok(ctx, "", "Browser.getVersion", nil, nil) // activity: idle at +110 s
	clk.add(50 * time.Second)
	m.Reap(ctx)
	if _, ok := m.CDPToken(rec.ID); !ok {
		t.Fatal("the session expired although its client was active")
	}
	clk.add(61 * time.Second)
	m.Reap(ctx)
	c.wait(ctx, "the connection to close", func() bool { return c.closed != nil })
	if websocket.CloseStatus(c.closed) != websocket.StatusGoingAway {
		t.Errorf("closed with %v, want going away", c.closed)
	}
	got, err := m.Get(ctx, team, rec.ID)
	if err != nil || got.EndReason != "activity" {
		t.Errorf("session after expiry: %+v, %v", got, err)
	}
}
