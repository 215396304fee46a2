package interact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/firegate/firegate/internal/actions"
	"github.com/firegate/firegate/internal/browser"
)

// The DevTools proxy of a session.
//
// The client speaks CDP to what looks like a browser with one (default)
// browser context, the session's; the proxy speaks to Chrome's browser
// endpoint on a connection of its own, which reaches every context, so it
// confines the client:
//
//   - Browser-level commands (on the connection, or on a browser session
//     of Target.attachToBrowserTarget) are refused unless listed in
//     browserCommand;
//     those that name a browser context get the session's (none given
//     means the default context, which is the session's to the client),
//     another context is refused; targets and windows must be the
//     session's.
//   - Target discovery and auto-attach are emulated: the proxy discovers
//     every target, keeps the session's, and attaches to the session's
//     pages itself (the browser's own auto-attach would attach to, and
//     with waitForDebuggerOnStart pause, every team's new pages). A
//     Target.createTarget is answered once its page is attached, as the
//     browser does. Target.getBrowserContexts answers none, so clients
//     take the session's context for the default one.
//   - Commands on a session (sessionId) go only to sessions attached on
//     this connection, all of them pages of the session's context or
//     their frames and workers; their domains are listed in
//     sessionDomains, and what reads the server's files (file inputs,
//     drag data, file: URLs), writes them (downloads) or reaches beyond
//     the context is refused.
//   - Events reach the client only from its own sessions and, at the
//     browser level, only target events of the session's context.
//
// Every page of the context, the client's new ones too, reaches the
// network through the pool's guarded proxy (Chrome's proxy setting).
// Messages from the client are capped at cdpMaxClientMessage, those from
// Chrome at cdpMaxBrowserMessage, commands in flight at cdpMaxInflight.

// Limits of a DevTools connection.
const (
	cdpMaxClientMessage  = 4 << 20
	cdpMaxBrowserMessage = 64 << 20
	cdpMaxInflight       = 256
	cdpWriteTimeout      = 30 * time.Second
	cdpHandshakeTimeout  = 10 * time.Second
	// cdpMaxPages caps the pages a client may open in the context
	// (Target.createTarget), the session's own counted; the pool closes
	// any page over it however it was opened (window.open).
	cdpMaxPages = browser.MaxSessionPages
	// cdpMaxPixels caps the pixels of a viewport the client emulates and
	// of a screenshot's clip (scale counted): one huge bitmap costs a
	// Chrome that every team shares.
	cdpMaxPixels = actions.MaxImagePixels
)

// CDP error codes the proxy answers with.
const (
	cdpCodeInvalid   = -32600
	cdpCodeRefused   = -32000
	cdpCodeNoSession = -32001
)

// sessionDomains are the domains a client may use on its page sessions.
var sessionDomains = map[string]bool{
	"Accessibility": true, "Animation": true, "Audits": true, "Autofill": true, "BackgroundService": true,
	"CacheStorage": true, "Console": true, "CSS": true, "Debugger": true, "DeviceOrientation": true, "DOM": true,
	"DOMDebugger": true, "DOMSnapshot": true, "DOMStorage": true, "Emulation": true, "EventBreakpoints": true,
	"Fetch": true, "HeadlessExperimental": true, "HeapProfiler": true, "IndexedDB": true, "Input": true,
	"Inspector": true, "IO": true, "LayerTree": true, "Log": true, "Media": true, "Network": true, "Overlay": true,
	"Page": true, "Performance": true, "PerformanceTimeline": true, "Preload": true, "Profiler": true,
	"Runtime": true, "Schema": true, "Security": true, "ServiceWorker": true, "Storage": true, "Target": true,
	"WebAudio": true, "WebAuthn": true,
}

// cdpMessage is a protocol message as the proxy reads it.
type cdpMessage struct {
	ID        *int64          `json:"id,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *cdpError       `json:"error,omitempty"`
}

type cdpError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// cdpPending is a command sent to Chrome and not yet answered.
type cdpPending struct {
	clientID  int64 // the client's id; 0 for the proxy's own commands
	client    bool
	sessionID string
	// done handles the answer instead of forwarding it; nil forwards it.
	done func(result json.RawMessage, e *cdpError)
}

// cdpAttach is the proxy's attach to a page of the session.
type cdpAttach struct {
	done    bool
	waiters []func()
}

// cdpTarget is a target of the session's context.
type cdpTarget struct {
	typ  string
	info json.RawMessage
}

// cdpProxy is one client's connection. Its state is used by one goroutine
// (run).
type cdpProxy struct {
	client, up *websocket.Conn
	dt         browser.DevTools
	touch      func()
	log        *slog.Logger

	next     int64
	pending  map[int64]*cdpPending
	inflight int
	targets  map[string]*cdpTarget // the context's targets, by id
	sessions map[string]string     // page sessions attached on this connection -> target
	// browsers are the browser-level sessions: the connection itself ("")
	// and those of Target.attachToBrowserTarget (Playwright's CDP
	// sessions), each confined alike.
	browsers map[string]*cdpBrowser
	windows  map[int64]bool // windows of the context's pages
}

// cdpBrowser is a browser-level session of the client.
type cdpBrowser struct {
	id string
	// discover and autoAttach are the client's Target.setDiscoverTargets
	// and Target.setAutoAttach on it.
	discover, autoAttach bool
	attached             map[string]*cdpAttach // its auto-attaches, by target
}

// cdpRead is a message read from one side.
type cdpRead struct {
	fromClient bool
	data       []byte
	err        error
}

// runCDPProxy proxies between client and up (Chrome's browser endpoint)
// for the session dt until ctx ends or a side closes.
func runCDPProxy(ctx context.Context, client, up *websocket.Conn, dt browser.DevTools, touch func(), log *slog.Logger) error {
	client.SetReadLimit(cdpMaxClientMessage)
	up.SetReadLimit(cdpMaxBrowserMessage)
	p := &cdpProxy{client: client, up: up, dt: dt, touch: touch, log: log,
		pending: map[int64]*cdpPending{}, targets: map[string]*cdpTarget{}, sessions: map[string]string{},
		browsers: map[string]*cdpBrowser{"": {attached: map[string]*cdpAttach{}}}, windows: map[int64]bool{}}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := p.handshake(ctx); err != nil {
		return err
	}
	in := make(chan cdpRead)
	// The reads outlive ctx: a read whose context ends closes the
	// connection at once, and the caller still has a close reason to send.
	// They end when the caller closes the connections.
	rctx := context.WithoutCancel(ctx)
	read := func(c *websocket.Conn, fromClient bool) {
		for {
			_, data, err := c.Read(rctx)
			select {
			case in <- cdpRead{fromClient: fromClient, data: data, err: err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}
	go read(client, true)
	go read(up, false)
	for {
		select {
		case <-ctx.Done():
			return nil
		case r := <-in:
			if r.err != nil {
				if r.fromClient {
					return nil // the client left
				}
				return fmt.Errorf("chrome connection: %w", r.err)
			}
			var err error
			if r.fromClient {
				err = p.fromClient(ctx, r.data)
			} else {
				err = p.fromBrowser(ctx, r.data)
			}
			if err != nil {
				return err
			}
		}
	}
}

// handshake turns target discovery on for the proxy and learns the
// context's targets before the client is served.
func (p *cdpProxy) handshake(ctx context.Context) error {
	hctx, cancel := context.WithTimeout(ctx, cdpHandshakeTimeout)
	defer cancel()
	id := p.nextID()
	if err := p.writeUp(hctx, id, "", "Target.setDiscoverTargets", json.RawMessage(`{"discover":true}`)); err != nil {
		return err
	}
	for {
		_, data, err := p.up.Read(hctx)
		if err != nil {
			return fmt.Errorf("chrome connection: %w", err)
		}
		var m cdpMessage
		if err := json.Unmarshal(data, &m); err != nil {
			continue
		}
		if m.ID != nil && *m.ID == id {
			if m.Error != nil {
				return fmt.Errorf("discover targets: %s", m.Error.Message)
			}
			return nil
		}
		if m.Method == "Target.targetCreated" {
			p.noteTarget(m.Params)
		}
	}
}

func (p *cdpProxy) nextID() int64 {
	p.next++
	return p.next
}

// writeClient sends data to the client. A write is bounded by its own
// timeout, not ctx: a write whose context ends closes the connection at
// once, without the close reason the caller sends when the session ends.
func (p *cdpProxy) writeClient(ctx context.Context, data []byte) error {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cdpWriteTimeout)
	defer cancel()
	return p.client.Write(wctx, websocket.MessageText, data)
}

// cdpOut is a message the proxy writes, to Chrome or to the client: a
// command (id, method, params), a response (id, result or error) or an
// event (method, params).
type cdpOut struct {
	ID        *int64          `json:"id,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *cdpError       `json:"error,omitempty"`
}

// writeUp sends a command to Chrome.
func (p *cdpProxy) writeUp(ctx context.Context, id int64, sessionID, method string, params json.RawMessage) error {
	b, err := json.Marshal(cdpOut{ID: &id, SessionID: sessionID, Method: method, Params: params})
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cdpWriteTimeout)
	defer cancel()
	if err := p.up.Write(wctx, websocket.MessageText, b); err != nil {
		return fmt.Errorf("chrome connection: %w", err)
	}
	return nil
}

// answer sends the client a response: result, or e when set.
func (p *cdpProxy) answer(ctx context.Context, id int64, sessionID string, result json.RawMessage, e *cdpError) error {
	out := cdpOut{ID: &id, SessionID: sessionID, Error: e}
	if e == nil {
		out.Result = result
		if len(result) == 0 {
			out.Result = json.RawMessage(`{}`)
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return p.writeClient(ctx, b)
}

// refuse answers a command with the proxy's error.
func (p *cdpProxy) refuse(ctx context.Context, m cdpMessage, why string) error {
	return p.answer(ctx, *m.ID, m.SessionID, nil, &cdpError{Code: cdpCodeRefused, Message: "firegate: " + m.Method + " is not allowed on a browser session's DevTools connection: " + why})
}

// event sends the client an event.
func (p *cdpProxy) event(ctx context.Context, sessionID, method string, params any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	b, err := json.Marshal(cdpOut{SessionID: sessionID, Method: method, Params: raw})
	if err != nil {
		return err
	}
	return p.writeClient(ctx, b)
}

// send forwards a command to Chrome; done, when set, handles the answer.
func (p *cdpProxy) send(ctx context.Context, m cdpMessage, params json.RawMessage, done func(json.RawMessage, *cdpError)) error {
	id := p.nextID()
	p.pending[id] = &cdpPending{clientID: *m.ID, client: true, sessionID: m.SessionID, done: done}
	p.inflight++
	return p.writeUp(ctx, id, m.SessionID, m.Method, params)
}

// sendBrowser forwards a command of a page session to Chrome's browser
// level instead; the answer goes to the client's session.
func (p *cdpProxy) sendBrowser(ctx context.Context, m cdpMessage, params json.RawMessage) error {
	id := p.nextID()
	p.pending[id] = &cdpPending{clientID: *m.ID, client: true, sessionID: m.SessionID}
	p.inflight++
	return p.writeUp(ctx, id, "", m.Method, params)
}

// call sends a command of the proxy's own to Chrome.
func (p *cdpProxy) call(ctx context.Context, sessionID, method string, params any, done func(json.RawMessage, *cdpError)) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	id := p.nextID()
	p.pending[id] = &cdpPending{sessionID: sessionID, done: done}
	return p.writeUp(ctx, id, sessionID, method, raw)
}

// cdpParams are a command's parameters, field by field.
type cdpParams map[string]json.RawMessage

func parseParams(raw json.RawMessage) (cdpParams, error) {
	ps := cdpParams{}
	if len(raw) == 0 || string(raw) == "null" {
		return ps, nil
	}
	if err := json.Unmarshal(raw, &ps); err != nil {
		return nil, err
	}
	if ps == nil {
		ps = cdpParams{}
	}
	return ps, nil
}

// str returns a string field: "" when absent, null or not a string. The
// checks read such a value as absent, which lets nothing through: Chrome's
// parameters are strictly typed, so it refuses the command itself.
func (ps cdpParams) str(key string) string {
	var s string
	if v, ok := ps[key]; ok {
		if err := json.Unmarshal(v, &s); err != nil {
			return ""
		}
	}
	return s
}

// boolean returns a boolean field: false when absent, null or not a
// boolean (Chrome refuses the last, as for str).
func (ps cdpParams) boolean(key string) bool {
	var b bool
	if v, ok := ps[key]; ok {
		if err := json.Unmarshal(v, &b); err != nil {
			return false
		}
	}
	return b
}

func (ps cdpParams) set(key string, v any) {
	b, _ := json.Marshal(v) // cannot fail: callers set strings and integers
	ps[key] = b
}

func (ps cdpParams) encode() json.RawMessage {
	// Cannot fail: raw values decoded from JSON or written by set.
	b, _ := json.Marshal(map[string]json.RawMessage(ps))
	return b
}

// fromClient handles a message of the client. What goes to Chrome is
// rebuilt from what was checked (method, session, parameters re-encoded),
// never the client's bytes, so that a duplicate or oddly cased key cannot
// mean one thing here and another to Chrome.
func (p *cdpProxy) fromClient(ctx context.Context, data []byte) error {
	var m cdpMessage
	if err := json.Unmarshal(data, &m); err != nil || m.ID == nil {
		return errors.New("the client sent a message that is not a DevTools command")
	}
	if m.Method == "" {
		return p.answer(ctx, *m.ID, m.SessionID, nil, &cdpError{Code: cdpCodeInvalid, Message: "Message must have string 'method' property"})
	}
	p.touch()
	if p.inflight >= cdpMaxInflight {
		return p.answer(ctx, *m.ID, m.SessionID, nil, &cdpError{Code: cdpCodeRefused, Message: fmt.Sprintf("firegate: more than %d commands in flight on this connection", cdpMaxInflight)})
	}
	ps, err := parseParams(m.Params)
	if err != nil {
		return p.answer(ctx, *m.ID, m.SessionID, nil, &cdpError{Code: cdpCodeInvalid, Message: "firegate: invalid parameters: params must be an object"})
	}
	// Any command naming a browser context must name the session's.
	if bc, ok := ps["browserContextId"]; ok && string(bc) != "null" && ps.str("browserContextId") != p.dt.ContextID {
		return p.refuse(ctx, m, "it names another browser context")
	}
	if bs := p.browsers[m.SessionID]; bs != nil {
		return p.browserCommand(ctx, m, ps, bs)
	}
	return p.sessionCommand(ctx, m, ps)
}

// allowedURL reports whether a client may open rawURL in a page: the web
// (through the guarded proxy), blank pages and data: URLs; never the
// server's files or the browser's own pages.
func allowedURL(rawURL string) bool {
	if rawURL == "" {
		return true
	}
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "data":
		return true
	case "about":
		return u.Opaque == "blank" || u.Opaque == "srcdoc"
	}
	return false
}

// sessionCommand handles a command on a session of the client.
func (p *cdpProxy) sessionCommand(ctx context.Context, m cdpMessage, ps cdpParams) error {
	target, ok := p.sessions[m.SessionID]
	if !ok {
		return p.answer(ctx, *m.ID, m.SessionID, nil, &cdpError{Code: cdpCodeNoSession, Message: "Session with given id not found."})
	}
	domain, _, _ := strings.Cut(m.Method, ".")
	if !sessionDomains[domain] {
		return p.refuse(ctx, m, "the "+domain+" domain reaches beyond the session's pages")
	}
	switch m.Method {
	case "DOM.setFileInputFiles", "Page.handleFileChooser":
		return p.refuse(ctx, m, "it would upload files from the server's disk")
	case "Storage.getCookies", "Storage.setCookies", "Storage.clearCookies":
		// On a page session Chrome runs them on its default context,
		// which every team's pages share, and takes no context: they go
		// to the browser with the session's.
		ps.set("browserContextId", p.dt.ContextID)
		return p.sendBrowser(ctx, m, ps.encode())
	case "Emulation.setDeviceMetricsOverride":
		return p.deviceMetrics(ctx, m, ps, target)
	case "Page.captureScreenshot":
		if _, ok := ps["clip"]; ok {
			clip, err := parseParams(ps["clip"])
			if err != nil {
				return p.answer(ctx, *m.ID, m.SessionID, nil, &cdpError{Code: cdpCodeInvalid, Message: "firegate: invalid parameters: clip must be an object"})
			}
			if pixels(clip, "width", "height", "scale") > cdpMaxPixels {
				return p.refuse(ctx, m, fmt.Sprintf("the clip would exceed %d pixels", cdpMaxPixels))
			}
			ps["clip"] = clip.encode() // Chrome reads the clip checked here
		}
	case "Input.dispatchDragEvent":
		// Re-encoded, so that Chrome reads the data checked here.
		data, err := parseParams(ps["data"])
		if err != nil {
			return p.answer(ctx, *m.ID, m.SessionID, nil, &cdpError{Code: cdpCodeInvalid, Message: "firegate: invalid parameters: data must be an object"})
		}
		var files []string
		if f, ok := data["files"]; ok && json.Unmarshal(f, &files) != nil {
			return p.answer(ctx, *m.ID, m.SessionID, nil, &cdpError{Code: cdpCodeInvalid, Message: "firegate: invalid parameters: data.files must be an array of strings"})
		}
		if len(files) > 0 {
			return p.refuse(ctx, m, "dragged files would be read from the server's disk")
		}
		if _, ok := ps["data"]; ok {
			ps["data"] = data.encode()
		}
	case "Network.loadNetworkResource":
		return p.refuse(ctx, m, "it loads resources outside the page")
	case "Page.setDownloadBehavior":
		if ps.str("behavior") != "deny" {
			return p.refuse(ctx, m, "downloads are not saved on the server; only behavior \"deny\" is accepted")
		}
	case "Page.navigate":
		if !allowedURL(ps.str("url")) {
			return p.refuse(ctx, m, "only http(s), data: and about:blank URLs may be opened")
		}
	case "Page.close", "Page.crash":
		if target == p.dt.TargetID {
			return p.refuse(ctx, m, "the session's first page lives as long as the session; DELETE the session to end it")
		}
	case "Target.setAutoAttach":
		if ps.boolean("autoAttach") && !ps.boolean("flatten") {
			return p.refuse(ctx, m, "only flatten mode is supported")
		}
	case "Target.getTargetInfo":
		if id := ps.str("targetId"); id != "" && p.targets[id] == nil && id != target {
			return p.refuse(ctx, m, "the target is not the session's")
		}
	case "Target.detachFromTarget":
		if !p.ownsDetach(ps) {
			return p.refuse(ctx, m, "the session or target is not this connection's")
		}
	default:
		if domain == "Target" {
			return p.refuse(ctx, m, "only setAutoAttach, getTargetInfo and detachFromTarget are served on a page session")
		}
	}
	return p.send(ctx, m, ps.encode(), nil)
}

// pixels returns width x height x scale² of a command's fields (scale 1
// when absent or 0); a value that is not a number counts as huge.
func pixels(ps cdpParams, width, height, scale string) float64 {
	w, h := ps.num(width, 0), ps.num(height, 0)
	sc := ps.factor(scale)
	return w * h * sc * sc
}

// num returns a number field (def when absent); a value that is not a
// number counts as huge.
func (ps cdpParams) num(key string, def float64) float64 {
	v, ok := ps[key]
	if !ok {
		return def
	}
	var f float64
	if json.Unmarshal(v, &f) != nil {
		return 1e18
	}
	return f
}

// factor returns a scale field: 1 when absent or 0 (no override).
func (ps cdpParams) factor(key string) float64 {
	if f := ps.num(key, 1); f != 0 {
		return f
	}
	return 1
}

// deviceMetrics checks an Emulation.setDeviceMetricsOverride of a page:
// the viewport it makes (the window's width or height where it gives 0,
// which means "the window's") times the device scale factor and the
// image scale, squared, must stay within cdpMaxPixels, and so must its
// visible-area viewport. A width or height of 0 is replaced by the
// window's, so that resizing the window later cannot grow the viewport.
func (p *cdpProxy) deviceMetrics(ctx context.Context, m cdpMessage, ps cdpParams, target string) error {
	scale := ps.factor("deviceScaleFactor") * ps.factor("scale")
	tooBig := func(w, h float64) bool { return w*h*scale*scale > cdpMaxPixels }
	refuse := func() error {
		return p.refuse(ctx, m, fmt.Sprintf("the viewport times its scale factor would exceed %d pixels", cdpMaxPixels))
	}
	if raw, ok := ps["viewport"]; ok {
		vp, err := parseParams(raw)
		if err != nil {
			return p.answer(ctx, *m.ID, m.SessionID, nil, &cdpError{Code: cdpCodeInvalid, Message: "firegate: invalid parameters: viewport must be an object"})
		}
		if tooBig(vp.num("width", 0)*vp.factor("scale"), vp.num("height", 0)*vp.factor("scale")) {
			return refuse()
		}
		ps["viewport"] = vp.encode() // Chrome reads the viewport checked here
	}
	w, h := ps.num("width", 0), ps.num("height", 0)
	if w < 0 || h < 0 || tooBig(w, h) {
		return refuse()
	}
	if w > 0 && h > 0 {
		return p.send(ctx, m, ps.encode(), nil)
	}
	return p.call(ctx, "", "Browser.getWindowForTarget", map[string]string{"targetId": target}, func(res json.RawMessage, e *cdpError) {
		var r struct {
			Bounds struct {
				Width  float64 `json:"width"`
				Height float64 `json:"height"`
			} `json:"bounds"`
		}
		if e != nil || json.Unmarshal(res, &r) != nil {
			_ = p.refuse(ctx, m, "the size of the page's window could not be read")
			return
		}
		if w == 0 {
			w = r.Bounds.Width
		}
		if h == 0 {
			h = r.Bounds.Height
		}
		if tooBig(w, h) {
			_ = refuse()
			return
		}
		ps.set("width", int64(w))
		ps.set("height", int64(h))
		_ = p.send(ctx, m, ps.encode(), nil)
	})
}

// windowBounds checks a Browser.setWindowBounds: the window it makes (its
// present width or height where the bounds give none) must stay within
// cdpMaxPixels.
func (p *cdpProxy) windowBounds(ctx context.Context, m cdpMessage, ps cdpParams) error {
	b, err := parseParams(ps["bounds"])
	if err != nil {
		return p.answer(ctx, *m.ID, m.SessionID, nil, &cdpError{Code: cdpCodeInvalid, Message: "firegate: invalid parameters: bounds must be an object"})
	}
	ps["bounds"] = b.encode() // Chrome reads the bounds checked here
	refuse := func() error {
		return p.refuse(ctx, m, fmt.Sprintf("the window would exceed %d pixels", cdpMaxPixels))
	}
	_, hasW := b["width"]
	_, hasH := b["height"]
	w, h := b.num("width", 0), b.num("height", 0)
	if w < 0 || h < 0 || w*h > cdpMaxPixels {
		return refuse()
	}
	if hasW == hasH {
		return p.send(ctx, m, ps.encode(), nil)
	}
	return p.call(ctx, "", "Browser.getWindowBounds", map[string]json.RawMessage{"windowId": ps["windowId"]}, func(res json.RawMessage, e *cdpError) {
		var r struct {
			Bounds struct {
				Width  float64 `json:"width"`
				Height float64 `json:"height"`
			} `json:"bounds"`
		}
		if e != nil || json.Unmarshal(res, &r) != nil {
			_ = p.refuse(ctx, m, "the window's size could not be read")
			return
		}
		if !hasW {
			w = r.Bounds.Width
		}
		if !hasH {
			h = r.Bounds.Height
		}
		if w*h > cdpMaxPixels {
			_ = refuse()
			return
		}
		_ = p.send(ctx, m, ps.encode(), nil)
	})
}

// ownsDetach reports whether a Target.detachFromTarget names a session of
// this connection or a target of the context.
func (p *cdpProxy) ownsDetach(ps cdpParams) bool {
	if sid := ps.str("sessionId"); sid != "" {
		_, ok := p.sessions[sid]
		return ok || p.browsers[sid] != nil
	}
	return p.targets[ps.str("targetId")] != nil
}

// browserCommand handles a browser-level command: what is not listed is
// refused.
func (p *cdpProxy) browserCommand(ctx context.Context, m cdpMessage, ps cdpParams, bs *cdpBrowser) error {
	ours := func(key string) bool { return p.targets[ps.str(key)] != nil }
	switch m.Method {
	case "Browser.getVersion":
		return p.send(ctx, m, nil, nil)
	case "Target.getBrowserContexts":
		// The session's context is the client's default one.
		return p.answer(ctx, *m.ID, m.SessionID, json.RawMessage(`{"browserContextIds":[]}`), nil)
	case "Target.setDiscoverTargets":
		return p.setDiscover(ctx, m, bs, ps.boolean("discover"))
	case "Target.setAutoAttach":
		if ps.boolean("autoAttach") && !ps.boolean("flatten") {
			return p.refuse(ctx, m, "only flatten mode is supported")
		}
		return p.setAutoAttach(ctx, m, bs, ps.boolean("autoAttach"))
	case "Target.getTargets":
		return p.send(ctx, m, ps.encode(), func(res json.RawMessage, e *cdpError) {
			if e == nil {
				res = p.filterTargets(res)
			}
			_ = p.answer(ctx, *m.ID, m.SessionID, res, e)
		})
	case "Target.attachToBrowserTarget":
		// A browser-level session, confined as the connection is.
		return p.send(ctx, m, nil, func(res json.RawMessage, e *cdpError) {
			var r struct {
				SessionID string `json:"sessionId"`
			}
			if e == nil && json.Unmarshal(res, &r) == nil && r.SessionID != "" {
				p.browsers[r.SessionID] = &cdpBrowser{id: r.SessionID, attached: map[string]*cdpAttach{}}
			}
			_ = p.answer(ctx, *m.ID, m.SessionID, res, e)
		})
	case "Target.getTargetInfo":
		if ps.str("targetId") != "" && !ours("targetId") {
			return p.refuse(ctx, m, "the target is not the session's")
		}
		return p.send(ctx, m, ps.encode(), nil)
	case "Target.attachToTarget":
		if !ours("targetId") {
			return p.refuse(ctx, m, "the target is not the session's")
		}
		if !ps.boolean("flatten") {
			return p.refuse(ctx, m, "only flatten mode is supported")
		}
		return p.send(ctx, m, ps.encode(), nil)
	case "Target.detachFromTarget":
		if !p.ownsDetach(ps) {
			return p.refuse(ctx, m, "the session or target is not this connection's")
		}
		return p.send(ctx, m, ps.encode(), nil)
	case "Target.activateTarget":
		if !ours("targetId") {
			return p.refuse(ctx, m, "the target is not the session's")
		}
		return p.send(ctx, m, ps.encode(), nil)
	case "Target.closeTarget":
		if !ours("targetId") {
			return p.refuse(ctx, m, "the target is not the session's")
		}
		if ps.str("targetId") == p.dt.TargetID {
			return p.refuse(ctx, m, "the session's first page lives as long as the session; DELETE the session to end it")
		}
		return p.send(ctx, m, ps.encode(), nil)
	case "Target.createTarget":
		pages := 0
		for _, t := range p.targets {
			if t.typ == "page" {
				pages++
			}
		}
		if pages >= cdpMaxPages {
			return p.refuse(ctx, m, fmt.Sprintf("the session has %d pages, the most it may", cdpMaxPages))
		}
		if !allowedURL(ps.str("url")) {
			return p.refuse(ctx, m, "only http(s), data: and about:blank URLs may be opened")
		}
		ps.set("browserContextId", p.dt.ContextID)
		return p.send(ctx, m, ps.encode(), func(res json.RawMessage, e *cdpError) {
			var r struct {
				TargetID string `json:"targetId"`
			}
			if e != nil || !bs.autoAttach || json.Unmarshal(res, &r) != nil || r.TargetID == "" {
				_ = p.answer(ctx, *m.ID, m.SessionID, res, e)
				return
			}
			// As the browser does: the page is attached before the answer.
			p.attachPage(ctx, bs, r.TargetID, func() { _ = p.answer(ctx, *m.ID, m.SessionID, res, nil) })
		})
	case "Browser.setDownloadBehavior":
		// Downloads are never saved on the server (a client's downloadPath
		// is a path on its own machine).
		params := cdpParams{}
		params.set("behavior", "deny")
		params.set("browserContextId", p.dt.ContextID)
		return p.send(ctx, m, params.encode(), nil)
	case "Browser.grantPermissions", "Browser.resetPermissions", "Browser.setPermission", "Browser.cancelDownload",
		"Storage.getCookies", "Storage.setCookies", "Storage.clearCookies":
		ps.set("browserContextId", p.dt.ContextID)
		return p.send(ctx, m, ps.encode(), nil)
	case "Browser.getWindowForTarget":
		if !ours("targetId") {
			return p.refuse(ctx, m, "the target is not the session's")
		}
		return p.send(ctx, m, ps.encode(), func(res json.RawMessage, e *cdpError) {
			var r struct {
				WindowID int64 `json:"windowId"`
			}
			if e == nil && json.Unmarshal(res, &r) == nil {
				p.windows[r.WindowID] = true
			}
			_ = p.answer(ctx, *m.ID, m.SessionID, res, e)
		})
	case "Browser.getWindowBounds", "Browser.setWindowBounds":
		var id int64
		if err := json.Unmarshal(ps["windowId"], &id); err != nil || !p.windows[id] {
			return p.refuse(ctx, m, "the window is not one of the session's (ask Browser.getWindowForTarget first)")
		}
		if m.Method == "Browser.setWindowBounds" {
			return p.windowBounds(ctx, m, ps)
		}
		return p.send(ctx, m, ps.encode(), nil)
	}
	return p.refuse(ctx, m, "it reaches beyond the session's browser context")
}

// filterTargets keeps the context's targets in a Target.getTargets
// answer.
func (p *cdpProxy) filterTargets(res json.RawMessage) json.RawMessage {
	var r struct {
		TargetInfos []json.RawMessage `json:"targetInfos"`
	}
	if json.Unmarshal(res, &r) != nil {
		return json.RawMessage(`{"targetInfos":[]}`)
	}
	keep := make([]json.RawMessage, 0, len(r.TargetInfos))
	for _, ti := range r.TargetInfos {
		var info struct {
			BrowserContextID string `json:"browserContextId"`
		}
		if json.Unmarshal(ti, &info) == nil && info.BrowserContextID == p.dt.ContextID {
			keep = append(keep, ti)
		}
	}
	out, _ := json.Marshal(map[string]any{"targetInfos": keep}) // cannot fail: raw values decoded from res
	return out
}

// setDiscover turns the client's target discovery on or off; on, it
// reports the context's targets first, as the browser does.
func (p *cdpProxy) setDiscover(ctx context.Context, m cdpMessage, bs *cdpBrowser, on bool) error {
	was := bs.discover
	bs.discover = on
	if on && !was {
		for _, t := range p.targets {
			if err := p.event(ctx, bs.id, "Target.targetCreated", map[string]json.RawMessage{"targetInfo": t.info}); err != nil {
				return err
			}
		}
	}
	return p.answer(ctx, *m.ID, m.SessionID, nil, nil)
}

// setAutoAttach turns the client's auto-attach on or off; on, the
// context's pages are attached before the answer, as the browser does.
func (p *cdpProxy) setAutoAttach(ctx context.Context, m cdpMessage, bs *cdpBrowser, on bool) error {
	bs.autoAttach = on
	var pages []string
	if on {
		for id, t := range p.targets {
			if t.typ == "page" {
				pages = append(pages, id)
			}
		}
	}
	left := len(pages) + 1
	done := func() {
		if left--; left == 0 {
			_ = p.answer(ctx, *m.ID, m.SessionID, nil, nil)
		}
	}
	for _, id := range pages {
		p.attachPage(ctx, bs, id, done)
	}
	done()
	return nil
}

// attachPage attaches a page of the context to the browser-level session
// bs once (the browser tells bs with Target.attachedToTarget), then calls
// then (when set).
func (p *cdpProxy) attachPage(ctx context.Context, bs *cdpBrowser, targetID string, then func()) {
	if a := bs.attached[targetID]; a != nil {
		if a.done {
			if then != nil {
				then()
			}
		} else if then != nil {
			a.waiters = append(a.waiters, then)
		}
		return
	}
	a := &cdpAttach{}
	if then != nil {
		a.waiters = append(a.waiters, then)
	}
	bs.attached[targetID] = a
	err := p.call(ctx, bs.id, "Target.attachToTarget", map[string]any{"targetId": targetID, "flatten": true}, func(res json.RawMessage, e *cdpError) {
		a.done = true
		if e == nil {
			var r struct {
				SessionID string `json:"sessionId"`
			}
			if json.Unmarshal(res, &r) == nil && r.SessionID != "" {
				p.sessions[r.SessionID] = targetID
			}
		}
		for _, w := range a.waiters {
			w()
		}
		a.waiters = nil
	})
	if err != nil {
		p.log.Debug("auto-attach", "target", targetID, "err", err)
	}
}

// noteTarget records a target of the context from a Target.targetCreated
// or Target.targetInfoChanged; it reports the target's id when it is the
// context's.
func (p *cdpProxy) noteTarget(params json.RawMessage) (string, bool) {
	var ev struct {
		TargetInfo json.RawMessage `json:"targetInfo"`
	}
	if json.Unmarshal(params, &ev) != nil {
		return "", false
	}
	var info struct {
		TargetID         string `json:"targetId"`
		Type             string `json:"type"`
		BrowserContextID string `json:"browserContextId"`
	}
	if json.Unmarshal(ev.TargetInfo, &info) != nil || info.TargetID == "" || info.BrowserContextID != p.dt.ContextID {
		return "", false
	}
	p.targets[info.TargetID] = &cdpTarget{typ: info.Type, info: ev.TargetInfo}
	return info.TargetID, true
}

// fromBrowser handles a message of Chrome.
func (p *cdpProxy) fromBrowser(ctx context.Context, data []byte) error {
	var m cdpMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil
	}
	if m.ID != nil {
		pd := p.pending[*m.ID]
		if pd == nil {
			return nil
		}
		delete(p.pending, *m.ID)
		if pd.client {
			p.inflight--
		}
		if pd.done != nil {
			pd.done(m.Result, m.Error)
			return nil
		}
		return p.answer(ctx, pd.clientID, pd.sessionID, m.Result, m.Error)
	}
	if m.Method == "" {
		return nil
	}
	if m.SessionID != "" {
		if bs := p.browsers[m.SessionID]; bs != nil {
			return p.browserEvent(ctx, bs, m, data)
		}
		return p.sessionEvent(ctx, m, data)
	}
	switch m.Method {
	case "Target.targetCreated", "Target.targetInfoChanged":
		id, ok := p.noteTarget(m.Params)
		if !ok {
			return nil
		}
		if err := p.discovered(ctx, m, data); err != nil {
			return err
		}
		if m.Method == "Target.targetCreated" && p.targets[id].typ == "page" {
			for _, bs := range p.browsers {
				if bs.autoAttach {
					p.attachPage(ctx, bs, id, nil)
				}
			}
		}
		return nil
	case "Target.targetDestroyed", "Target.targetCrashed":
		var ev struct {
			TargetID string `json:"targetId"`
		}
		if json.Unmarshal(m.Params, &ev) != nil || p.targets[ev.TargetID] == nil {
			return nil
		}
		if m.Method == "Target.targetDestroyed" {
			delete(p.targets, ev.TargetID)
			for _, bs := range p.browsers {
				delete(bs.attached, ev.TargetID)
			}
		}
		return p.discovered(ctx, m, data)
	case "Target.attachedToTarget", "Target.detachedFromTarget":
		return p.browserEvent(ctx, p.browsers[""], m, data)
	}
	return nil // other browser-level events are not the session's
}

// discovered passes a target event of the context to the browser-level
// sessions that discover targets.
func (p *cdpProxy) discovered(ctx context.Context, m cdpMessage, data []byte) error {
	for _, bs := range p.browsers {
		if !bs.discover {
			continue
		}
		var err error
		if bs.id == "" {
			err = p.writeClient(ctx, data)
		} else {
			err = p.event(ctx, bs.id, m.Method, m.Params)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// browserEvent passes an attach or detach event of a browser-level
// session when it is about the context's pages (or the session itself).
func (p *cdpProxy) browserEvent(ctx context.Context, bs *cdpBrowser, m cdpMessage, data []byte) error {
	switch m.Method {
	case "Target.attachedToTarget":
		var ev struct {
			SessionID  string `json:"sessionId"`
			TargetInfo struct {
				TargetID         string `json:"targetId"`
				BrowserContextID string `json:"browserContextId"`
			} `json:"targetInfo"`
		}
		if json.Unmarshal(m.Params, &ev) != nil || ev.TargetInfo.BrowserContextID != p.dt.ContextID || ev.SessionID == "" {
			return nil
		}
		p.sessions[ev.SessionID] = ev.TargetInfo.TargetID
		return p.writeClient(ctx, data)
	case "Target.detachedFromTarget":
		var ev struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(m.Params, &ev) != nil {
			return nil
		}
		if _, ok := p.sessions[ev.SessionID]; ok {
			delete(p.sessions, ev.SessionID)
		} else if ev.SessionID != "" && p.browsers[ev.SessionID] != nil {
			delete(p.browsers, ev.SessionID)
		} else {
			return nil
		}
		return p.writeClient(ctx, data)
	}
	return nil
}

// sessionEvent forwards an event of a session of this connection, noting
// the frames and workers attached to it.
func (p *cdpProxy) sessionEvent(ctx context.Context, m cdpMessage, data []byte) error {
	if _, ok := p.sessions[m.SessionID]; !ok {
		return nil
	}
	switch m.Method {
	case "Target.attachedToTarget":
		var ev struct {
			SessionID  string `json:"sessionId"`
			TargetInfo struct {
				TargetID string `json:"targetId"`
			} `json:"targetInfo"`
		}
		if json.Unmarshal(m.Params, &ev) == nil && ev.SessionID != "" {
			p.sessions[ev.SessionID] = ev.TargetInfo.TargetID
		}
	case "Target.detachedFromTarget":
		var ev struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(m.Params, &ev) == nil {
			delete(p.sessions, ev.SessionID)
		}
	}
	return p.writeClient(ctx, data)
}
