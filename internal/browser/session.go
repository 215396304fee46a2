package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"github.com/firegate/firegate/internal/actions"
	"github.com/firegate/firegate/internal/pause"
)

// Sessions.
//
// A Session is a long-lived tab in a browser context of its own, for the
// interact routes: it belongs to one team, takes no render slot and is
// never shared or reused. Like a render's tab, every request its pages
// make passes the request guard and (a local Chrome) the guarded proxy.
// Its operations are serialised; each carries the caller's deadline.
// Closing it disposes of its browser context with everything in it.

// ErrSessionClosed is returned by the operations of a closed Session or
// of one whose Chrome has gone.
var ErrSessionClosed = errors.New("browser: session closed")

// SessionOptions configures OpenSession.
type SessionOptions struct {
	// Team owns the session.
	Team string
	// URL, when set, scopes Headers to its host (as for a render).
	URL       string
	Headers   map[string]string
	Mobile    bool
	Languages []string
	Timezone  string
	BlockAds  bool
	// State is loaded before the first navigation (a profile).
	State *State
}

// Session is a live tab of one team. Its methods are safe for concurrent
// use and run one at a time.
type Session struct {
	p       *Pool
	inst    *instance
	sl      *slot
	tb      *tab
	env     actions.Env
	ctx     context.Context // ends when the session is closed or Chrome goes
	cancel  context.CancelFunc
	wait    func()
	mu      sync.Mutex
	closed  bool
	restore page.ScriptIdentifier // profile storage script, removed after the first navigation
	live    liveState
}

// sessionOpenTimeout bounds opening a session when ctx has no deadline.
const sessionOpenTimeout = 30 * time.Second

// OpenSession opens a tab in a new browser context for the team, with the
// request guard on, emulation applied and the profile state loaded.
func (p *Pool) OpenSession(ctx context.Context, o SessionOptions) (*Session, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, sessionOpenTimeout)
		defer cancel()
	}
	inst, err := p.instance(ctx)
	if err != nil {
		return nil, err
	}
	sl, err := p.newSlot(ctx, inst, o.Team, true, "")
	if err != nil {
		return nil, p.runError(ctx, inst, "open session", err)
	}
	inst.pages.watch(sl.id)
	tb, err := p.openTab(ctx, inst, sl)
	if err != nil {
		inst.pages.forget(sl.id)
		p.disposeContext(ctx, inst, sl.id)
		return nil, p.runError(ctx, inst, "open session", err)
	}
	s := &Session{p: p, inst: inst, sl: sl, tb: tb}
	s.ctx, s.cancel = context.WithCancel(tb.ctx)
	req := Request{URL: o.URL, Team: o.Team, Headers: o.Headers, Mobile: o.Mobile, Languages: o.Languages, Timezone: o.Timezone, BlockAds: o.BlockAds}
	g := newGuard(p.policy, p.adHosts, o.BlockAds)
	s.wait = p.guardRequests(s.ctx, tb.t, g, newScope(req), tb.tr)
	fail := func(stage string, err error) (*Session, error) {
		err = p.runError(ctx, inst, stage, err)
		s.dispose(context.WithoutCancel(ctx))
		return nil, err
	}
	if _, err := cdp.Call(ctx, tb.t, fetch.Enable, fetch.EnableParams{
		Patterns:           []*fetch.RequestPattern{{URLPattern: "*"}},
		HandleAuthRequests: new(true),
	}); err != nil {
		return fail("enable request guard", err)
	}
	answerDialogs(s.ctx, tb.t)
	if s.env, err = p.setup(ctx, inst, sl.id, tb, req); err != nil {
		return fail("set up session", err)
	}
	if o.State != nil {
		if s.restore, err = p.loadState(ctx, inst, sl, tb, o.State); err != nil {
			return fail("load profile", err)
		}
	}
	return s, nil
}

// Done is closed when the session can serve no more: closed, or its Chrome
// gone.
func (s *Session) Done() <-chan struct{} { return s.ctx.Done() }

// lock takes the session for one operation and returns a context bounded
// by both ctx and the session's life.
func (s *Session) lock(ctx context.Context) (context.Context, func(), error) {
	s.mu.Lock()
	if s.closed || s.ctx.Err() != nil {
		s.mu.Unlock()
		return nil, nil, ErrSessionClosed
	}
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(defaultTimeout)
	}
	rctx, cancel := context.WithDeadline(s.ctx, dl)
	stop := context.AfterFunc(ctx, cancel)
	return rctx, func() { stop(); cancel(); s.mu.Unlock() }, nil
}

// opError converts an operation's error: a closed session (Close, or
// Chrome gone), the caller's deadline, a dead Chrome.
func (s *Session) opError(ctx context.Context, stage string, err error) error {
	if ctx.Err() != nil && s.ctx.Err() == nil {
		s.unstick()
	}
	var ae *actions.Error
	if errors.As(err, &ae) {
		return err
	}
	if s.ctx.Err() != nil {
		return fmt.Errorf("browser: %s: %w", stage, ErrSessionClosed)
	}
	return s.p.runError(ctx, s.inst, stage, err)
}

// unstick ends the page's script that an operation cut short by its
// deadline may have left running (a page in an endless loop answers
// nothing else), so that the next operation finds the page responsive.
func (s *Session) unstick() {
	ctx, cancel := context.WithTimeout(s.ctx, closeTimeout)
	defer cancel()
	if err := s.tb.t.Call(ctx, runtime.CommandTerminateExecution, nil, nil); err != nil && s.ctx.Err() == nil {
		s.p.log.DebugContext(ctx, "terminate page script", "err", err)
	}
}

// Goto navigates to rawURL and waits until the page settles (at most
// half the time left); it returns the main document's status code (0 when
// none was seen).
func (s *Session) Goto(ctx context.Context, rawURL string) (int, error) {
	rctx, unlock, err := s.lock(ctx)
	if err != nil {
		return 0, err
	}
	defer unlock()
	return s.navigate(rctx, rawURL)
}

// navigate is Goto with the session held.
func (s *Session) navigate(ctx context.Context, rawURL string) (int, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return 0, fmt.Errorf("browser: navigate %q: not an http(s) URL: %w", redactURL(rawURL), ErrNavigation)
	}
	if err := newGuard(s.p.policy, nil, false).checkHost(u); err != nil {
		return 0, fmt.Errorf("browser: navigate %s: %w: %w", redactURL(rawURL), ErrBlocked, err)
	}
	tr, t := s.tb.tr, s.tb.t
	tr.mu.Lock()
	tr.loaderID, tr.mainResp, tr.mainBlock = "", nil, false
	tr.docHosts = tr.docHosts[:0]
	tr.mu.Unlock()
	nav, err := cdp.Call(ctx, t, page.Navigate, page.NavigateParams{URL: rawURL})
	if err != nil {
		return 0, s.opError(ctx, "navigate", err)
	}
	if nav.ErrorText != "" || nav.IsDownload {
		return 0, s.p.navError(rawURL, nav.ErrorText, nav.IsDownload, tr)
	}
	tr.mu.Lock()
	tr.loaderID = nav.LoaderID
	tr.mu.Unlock()
	dl, _ := ctx.Deadline()
	if err := settle(ctx, t, tr, min(smartWaitMax, time.Until(dl)/2), false); err != nil {
		return 0, s.opError(ctx, "smart wait", err)
	}
	if err := proxyRefusal(rawURL, tr); err != nil {
		return 0, err
	}
	if s.restore != "" {
		if _, err := cdp.Call(ctx, t, page.RemoveScriptToEvaluateOnNewDocument, page.RemoveScriptToEvaluateOnNewDocumentParams{Identifier: s.restore}); err != nil {
			return 0, s.opError(ctx, "load profile", err)
		}
		s.restore = ""
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.mainResp != nil {
		return int(tr.mainResp.Status), nil
	}
	return 0, nil
}

// Replay opens rawURL, waits at least waitFor from the navigation and runs
// the actions, as a render would: a scrape replayed in the session.
func (s *Session) Replay(ctx context.Context, rawURL string, waitFor time.Duration, list []actions.Action) (actions.Results, error) {
	if err := actions.Validate(list); err != nil {
		return actions.Results{}, err
	}
	rctx, unlock, err := s.lock(ctx)
	if err != nil {
		return actions.Results{}, err
	}
	defer unlock()
	start := time.Now()
	if _, err := s.navigate(rctx, rawURL); err != nil {
		return actions.Results{}, err
	}
	if w := waitFor - time.Since(start); waitFor > 0 && w > 0 {
		if err := pause.For(rctx, w); err != nil {
			return actions.Results{}, s.opError(rctx, "waitFor", err)
		}
	}
	if len(list) == 0 {
		return actions.Results{}, nil
	}
	res, err := s.run(rctx, list)
	if err != nil {
		return res, err
	}
	return res, nil
}

// run runs actions with the session held; page-changing ones are followed
// by a settle.
func (s *Session) run(ctx context.Context, list []actions.Action) (actions.Results, error) {
	env := s.env
	env.Pixels = actions.NewPixelBudget(actions.RequestPixels)
	dl, _ := ctx.Deadline()
	env.Settle = func(ctx context.Context) error {
		return settle(ctx, s.tb.t, s.tb.tr, min(settleMax, time.Until(dl)/3), true)
	}
	res, err := actions.Run(ctx, s.tb.t, env, list)
	if err != nil {
		return res, s.opError(ctx, "actions", err)
	}
	return res, nil
}

// Do runs page actions (click, write, press, wait, scroll, screenshot,
// scrape, executeJavascript, pdf) in the session.
func (s *Session) Do(ctx context.Context, list ...actions.Action) (actions.Results, error) {
	if err := actions.Validate(list); err != nil {
		return actions.Results{}, err
	}
	rctx, unlock, err := s.lock(ctx)
	if err != nil {
		return actions.Results{}, err
	}
	defer unlock()
	return s.run(rctx, list)
}

// Evaluate runs script in the page (see actions.Execute) and returns its
// value.
func (s *Session) Evaluate(ctx context.Context, script string) (actions.JSReturn, error) {
	rctx, unlock, err := s.lock(ctx)
	if err != nil {
		return actions.JSReturn{}, err
	}
	defer unlock()
	v, err := actions.Execute(rctx, s.tb.t, script)
	if err != nil {
		return v, s.opError(rctx, "evaluate", err)
	}
	return v, nil
}

// Content returns the page's URL and HTML.
func (s *Session) Content(ctx context.Context) (actions.Scrape, error) {
	rctx, unlock, err := s.lock(ctx)
	if err != nil {
		return actions.Scrape{}, err
	}
	defer unlock()
	doc, err := actions.Capture(rctx, s.tb.t)
	if err != nil {
		return doc, s.opError(rctx, "read html", err)
	}
	return doc, nil
}

// Screenshot captures the viewport (or the whole page) as PNG.
func (s *Session) Screenshot(ctx context.Context, fullPage bool) ([]byte, error) {
	rctx, unlock, err := s.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	env := s.env
	env.Pixels = actions.NewPixelBudget(actions.MaxImagePixels)
	m, err := actions.Screenshot(rctx, s.tb.t, env, fullPage, 0, nil)
	if err != nil {
		return nil, s.opError(rctx, "screenshot", err)
	}
	return m.Data, nil
}

// Close ends the session: with save, the browser state is read first and
// returned. The browser context is disposed of even when reading fails.
func (s *Session) Close(ctx context.Context, save bool) (*State, error) {
	s.cancel() // ends the operation in progress, if any
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrSessionClosed
	}
	s.closed = true
	var st *State
	var err error
	if save && s.tb.ctx.Err() == nil && s.inst.ctx.Err() == nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
		st, err = s.p.readState(rctx, s.inst, s.sl, s.tb)
		cancel()
		if err != nil {
			err = fmt.Errorf("browser: save profile: %w", err)
		}
	}
	s.dispose(ctx)
	return st, err
}

// dispose stops the guard, closes the tab and disposes of the context.
func (s *Session) dispose(ctx context.Context) {
	s.cancel()
	s.wait()
	s.p.closeTab(ctx, s.inst, s.tb)
	s.p.disposeContext(ctx, s.inst, s.sl.id)
	s.inst.pages.forget(s.sl.id)
}

// ErrNoDevTools: the pool has no DevTools endpoint for sessions
// (Options.DevTools off, a remote Chrome without a ws:// URL or proxy).
var ErrNoDevTools = errors.New("browser: no DevTools endpoint for sessions")

// DevTools is how a CDP proxy reaches a session on a DevTools connection
// of its own: Chrome's browser endpoint, which reaches every context, so
// the proxy must confine its client to ContextID (internal/interact).
type DevTools struct {
	// URL is Chrome's ws:// browser endpoint.
	URL string
	// ContextID is the session's browser context.
	ContextID string
	// TargetID is the session's first page, which the session's own
	// operations drive.
	TargetID string
}

// DevTools returns the endpoint, context and page of the session, or
// ErrNoDevTools, or ErrSessionClosed.
func (s *Session) DevTools() (DevTools, error) {
	if s.closedOrGone() {
		return DevTools{}, ErrSessionClosed
	}
	if s.inst.devtools == "" {
		return DevTools{}, ErrNoDevTools
	}
	return DevTools{URL: s.inst.devtools, ContextID: string(s.sl.id), TargetID: string(s.tb.id)}, nil
}

// Snapshot is what a session's recording keeps of its page at a moment.
type Snapshot struct {
	// EntryID identifies the page's navigation history entry: a new one
	// is a new page (a document, or a history.pushState).
	EntryID int64
	URL     string
	Title   string
	// JPEG is the viewport at quality 50.
	JPEG []byte
}

// Snapshot captures the page's history entry and viewport.
func (s *Session) Snapshot(ctx context.Context) (Snapshot, error) {
	rctx, unlock, err := s.lock(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	defer unlock()
	h, err := cdp.Call(rctx, s.tb.t, page.GetNavigationHistory, cdp.Empty{})
	if err != nil {
		return Snapshot{}, s.opError(rctx, "snapshot", err)
	}
	var snap Snapshot
	if i := int(h.CurrentIndex); i >= 0 && i < len(h.Entries) && h.Entries[i] != nil {
		e := h.Entries[i]
		snap.EntryID, snap.URL, snap.Title = e.ID, e.URL, e.Title
	}
	quality := int64(50)
	shot, err := cdp.Call(rctx, s.tb.t, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatJpeg, Quality: &quality})
	if err != nil {
		return Snapshot{}, s.opError(rctx, "snapshot", err)
	}
	snap.JPEG = shot.Data
	return snap, nil
}
