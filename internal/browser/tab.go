package browser

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/domstorage"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/firegate/firegate/internal/pause"
)

// Tabs and browser contexts.
//
// A render uses a tab (target) in a browser context (its own cookies,
// storage, cache, HTTP auth, service workers and permissions). A browser
// context belongs to one team and never serves another team's render:
// nothing one team's page leaves in it can reach another team. Renders of
// one team share its context, each in a tab of its own, so that they share
// Chrome's renderer processes too (a process never serves two contexts;
// one context per render cost a renderer per render in flight). A render
// that carries state (a profile, or cookies given in its headers) gets a
// context of its own for its duration.
//
// Contexts are kept: a slot is a context with the tabs of its renders, each
// in a window of its own (a tab behind another would be hidden), reset and
// kept for the next renders, since opening a window costs Chrome more than
// the rest of a small page's render. After a render succeeds, its
// tab is reset (about:blank, no history, what the render set on the tab
// undone), the storage of every origin the page touched is cleared, and
// the context's cookies when no other render is in it; the tab goes back to
// the slot. A page that wrote session storage (which belongs to the tab)
// gets its tab closed instead. After a failed render the tab is closed and
// the slot retired: it takes no new render and is disposed of, with
// everything in it, when its last render ends; so is a slot that served
// recycleAfter renders. A team's slot is also disposed of to make room for
// another team's when the maximum of contexts is reached.

// tabOpenTimeout bounds opening a tab or a slot.
const tabOpenTimeout = 15 * time.Second

// closeTimeout bounds cleaning a slot and disposing of a browser context.
const closeTimeout = 5 * time.Second

// offscreenWindow is the width and height of a tab's window in pixels.
const offscreenWindow = 100

// recycleAfter is how many renders a slot serves before it is replaced.
const recycleAfter = 100

// slot is a browser context of one team. Its mutable fields are guarded by
// the slots' mutex.
type slot struct {
	team      string
	exclusive bool   // serves one render at a time (a render with state)
	route     string // the guarded proxy's route the context goes through ("" = the main one)
	id        cdp.BrowserContextID
	uses      int
	active    int                // renders in it now
	retired   bool               // takes no new render; disposed of when active is 0
	idle      []*tab             // reset tabs ready for a render
	tabs      map[target.ID]bool // every tab the pool opened in the slot and has not closed
	opening   int                // tabs being opened: in Chrome, maybe not yet in tabs
}

// tab is a target in a slot, used by one render at a time.
type tab struct {
	ctx    context.Context // the tab's chromedp context; no deadline
	cancel context.CancelFunc
	t      *chromedp.Target
	tr     *tracker
	slot   *slot     // the slot it was opened in
	id     target.ID // its target
	// undo holds the commands that undo what the current render set on
	// the tab (interception, scripts, emulation); resetTab runs them.
	undo []tabCall

	abortMu sync.Mutex
	abort   context.CancelCauseFunc // ends the current render; nil between renders
}

// setAbort sets (nil: clears) what abortRender calls.
func (tb *tab) setAbort(f context.CancelCauseFunc) {
	tb.abortMu.Lock()
	tb.abort = f
	tb.abortMu.Unlock()
}

// abortRender ends the tab's current render with cause; it reports
// whether one was running.
func (tb *tab) abortRender(cause error) bool {
	tb.abortMu.Lock()
	f := tb.abort
	tb.abortMu.Unlock()
	if f != nil {
		f(cause)
	}
	return f != nil
}

// tabCall is one DevTools command of a tab.
type tabCall struct {
	method string
	params any
}

// onReset adds a command that resetTab runs after the render.
func (tb *tab) onReset(method string, params any) {
	tb.undo = append(tb.undo, tabCall{method, params})
}

// newSlot creates a browser context; route, when set, is the URL of the
// guarded proxy's route (an outbound proxy behind it) that all of the
// context's connections take.
func (p *Pool) newSlot(ctx context.Context, inst *instance, team string, exclusive bool, route string) (*slot, error) {
	octx, cancel := context.WithTimeout(ctx, tabOpenTimeout)
	defer cancel()
	b := chromedp.FromContext(inst.ctx).Browser
	// A remote Chrome disposes of the context if our connection drops.
	params := target.CreateBrowserContextParams{DisposeOnDetach: new(true)}
	switch {
	case route != "":
		// Chrome takes one proxy per context: this context's is the
		// route; loopback is not exempt.
		params.ProxyServer, params.ProxyBypassList = route, "<-loopback>"
	case p.proxyURL != "" && p.opts.RemoteURL != "":
		// A remote Chrome reaches the network only through the guarded
		// proxy, set on each context (a local one has it as its
		// --proxy-server); loopback is not exempt.
		params.ProxyServer, params.ProxyBypassList = p.proxyURL, "<-loopback>"
	}
	bc, err := cdp.Call(octx, b, target.CreateBrowserContext, params)
	if err != nil {
		return nil, fmt.Errorf("create browser context: %w", err)
	}
	return &slot{team: team, exclusive: exclusive, route: route, id: bc.BrowserContextID, tabs: map[target.ID]bool{}}, nil
}

// slots holds an instance's browser contexts.
type slots struct {
	mu   sync.Mutex
	all  []*slot
	max  int
	wake chan struct{} // a render left a slot
}

func newSlots(max int) *slots {
	return &slots{max: max, wake: make(chan struct{}, 1)}
}

// signal wakes a waiter; ss.mu need not be held.
func (ss *slots) signal() {
	select {
	case ss.wake <- struct{}{}:
	default:
	}
}

// drain removes and returns every slot no render uses.
func (ss *slots) drain() []*slot {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var out, keep []*slot
	for _, s := range ss.all {
		if s.active == 0 {
			out = append(out, s)
		} else {
			keep = append(keep, s)
		}
	}
	ss.all = keep
	return out
}

// remove forgets s; ss.mu is held.
func (ss *slots) remove(s *slot) {
	if i := slices.Index(ss.all, s); i >= 0 {
		ss.all = slices.Delete(ss.all, i, i+1)
	}
}

// placeholder marks a slot being created: it counts against the maximum.
var placeholder = &slot{retired: true, active: 1}

// takeTab returns a slot of the team and a tab in it: the team's shared
// slot on route (or, when exclusive, an idle slot of its own) with an idle
// tab or a new one. Without a slot for it, one is created; at the maximum,
// an idle slot of another team (or route) is disposed of to make room, or
// it waits.
func (p *Pool) takeTab(ctx context.Context, inst *instance, team string, exclusive bool, route string) (*slot, *tab, error) {
	ss := inst.slots
	for {
		ss.mu.Lock()
		var use, evict *slot
		for _, s := range ss.all {
			if s.team == team && s.exclusive == exclusive && s.route == route && !s.retired && (!exclusive || s.active == 0) {
				use = s
				break
			}
		}
		if use == nil && len(ss.all) >= ss.max {
			for _, s := range ss.all {
				if s.active == 0 && s != placeholder {
					evict = s
					break
				}
			}
			if evict == nil {
				ss.mu.Unlock()
				select {
				case <-ss.wake:
					continue
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				case <-inst.ctx.Done():
					return nil, nil, inst.ctx.Err()
				}
			}
			ss.remove(evict)
		}
		if use != nil {
			use.active++
			var tb *tab
			if n := len(use.idle); n > 0 {
				tb, use.idle = use.idle[n-1], use.idle[:n-1]
			}
			ss.mu.Unlock()
			if tb != nil && tb.ctx.Err() == nil {
				return use, tb, nil
			}
			if tb != nil {
				p.closeTab(ctx, inst, tb)
			}
			tb, err := p.openTab(ctx, inst, use)
			if err != nil {
				p.leave(ctx, inst, use, false)
				return nil, nil, err
			}
			return use, tb, nil
		}
		// Create a slot; a placeholder holds its place meanwhile.
		ss.all = append(ss.all, placeholder)
		ss.mu.Unlock()
		if evict != nil {
			p.disposeSlot(ctx, inst, evict)
		}
		s, err := p.newSlot(ctx, inst, team, exclusive, route)
		ss.mu.Lock()
		ss.remove(placeholder)
		if err == nil {
			s.active = 1
			ss.all = append(ss.all, s)
		}
		ss.mu.Unlock()
		ss.signal()
		if err != nil {
			return nil, nil, err
		}
		tb, err := p.openTab(ctx, inst, s)
		if err != nil {
			p.leave(ctx, inst, s, false)
			return nil, nil, err
		}
		return s, tb, nil
	}
}

// leave ends a render's use of a slot; a failed render retires it. The
// last render out of a retired or used-up slot disposes of it.
func (p *Pool) leave(ctx context.Context, inst *instance, s *slot, ok bool) {
	ss := inst.slots
	ss.mu.Lock()
	s.active--
	s.uses++
	if !ok || s.uses >= recycleAfter || inst.ctx.Err() != nil {
		s.retired = true
	}
	dispose := s.retired && s.active == 0
	if dispose {
		ss.remove(s)
	}
	ss.mu.Unlock()
	if dispose {
		p.disposeSlot(ctx, inst, s)
	}
	ss.signal()
}

// disposeSlot disposes of a slot's browser context, closing its tabs.
func (p *Pool) disposeSlot(ctx context.Context, inst *instance, s *slot) {
	for _, tb := range s.idle {
		p.closeTab(ctx, inst, tb)
	}
	s.idle = nil
	p.disposeContext(ctx, inst, s.id)
}

// disposeContext disposes of a browser context, logging a failure.
func (p *Pool) disposeContext(ctx context.Context, inst *instance, id cdp.BrowserContextID) {
	if inst.ctx.Err() != nil {
		return // Chrome is gone, and its contexts with it
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
	defer cancel()
	b := chromedp.FromContext(inst.ctx).Browser
	if _, err := cdp.Call(dctx, b, target.DisposeBrowserContext, target.DisposeBrowserContextParams{BrowserContextID: id}); err != nil && inst.ctx.Err() == nil {
		p.log.WarnContext(ctx, "dispose browser context", "err", err)
	}
}

// openTab opens a tab in the slot's window with the instrumentation script
// installed. ctx bounds the opening only.
func (p *Pool) openTab(ctx context.Context, inst *instance, s *slot) (*tab, error) {
	octx, cancel := context.WithTimeout(ctx, tabOpenTimeout)
	defer cancel()
	b := chromedp.FromContext(inst.ctx).Browser
	inst.slots.mu.Lock()
	s.opening++
	inst.slots.mu.Unlock()
	// A window of its own: a tab behind another in one window would be
	// hidden (no rendering, no scroll or intersection events).
	tgt, err := cdp.Call(octx, b, target.CreateTarget, target.CreateTargetParams{
		URL: "about:blank", BrowserContextID: s.id, NewWindow: new(true),
		// Renders set the viewport they lay out in; what Chrome paints
		// when nothing looks is this window (see offscreen).
		Width: offscreenWindow, Height: offscreenWindow,
	})
	inst.slots.mu.Lock()
	s.opening--
	if err == nil {
		s.tabs[tgt.TargetID] = true
	}
	inst.slots.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("create target: %w", err)
	}
	tr := newTracker()
	tctx, tcancel := chromedp.NewContext(inst.ctx, chromedp.WithTargetID(tgt.TargetID), chromedp.WithListener(tr.onEvent))
	tb := &tab{ctx: tctx, cancel: tcancel, tr: tr, slot: s, id: tgt.TargetID}
	// The first Run binds the target to tctx, which must outlive this call,
	// so the attach is bounded by a watchdog instead of a deadline.
	stop := context.AfterFunc(octx, tcancel)
	t, err := chromedp.Run(tctx, func(_ context.Context, t *chromedp.Target) (*chromedp.Target, error) { return t, nil })
	if err == nil {
		err = prepareTab(octx, t)
	}
	if fired := !stop(); err == nil && fired {
		err = octx.Err()
	}
	if err != nil {
		p.closeTab(ctx, inst, tb)
		if octx.Err() != nil {
			return nil, fmt.Errorf("open tab: %w", octx.Err())
		}
		return nil, err
	}
	tb.t = t
	tr.mainFrame = cdp.FrameID(t.TargetID)
	inst.bySession.Store(t.SessionID, tb)
	return tb, nil
}

// prepareTab sets up a newly attached tab: the instrumentation script and
// the session storage events (see tracker.sessionStorage) on, and off what
// chromedp enables on attach that the package does not use and that costs
// Chrome work on every page: target discovery (every tab would hear of
// every target of the browser), the DOM and CSS agents and lifecycle
// events. Runtime and Log events go too: nothing reads them, and they
// carry whatever the page logs (every console.log argument, whole, to
// this process: a page logging 4 x 100 MB took the server from 16 MB to
// 950 MB). Commands of those domains still work. The commands are sent
// together.
func prepareTab(ctx context.Context, t *chromedp.Target) error {
	calls := []tabCall{
		{page.CommandAddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: instrumentScript}},
		{domstorage.CommandEnable, nil},
		{target.CommandSetDiscoverTargets, target.SetDiscoverTargetsParams{Discover: false}},
		{page.CommandSetLifecycleEventsEnabled, page.SetLifecycleEventsEnabledParams{Enabled: false}},
		{css.CommandDisable, nil},
		{dom.CommandDisable, nil},
		{runtime.CommandDisable, nil},
		{cdplog.CommandDisable, nil},
	}
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() {
			if err := t.Call(ctx, c.method, c.params, nil); err != nil {
				errs[i] = fmt.Errorf("%s: %w", c.method, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// closeTab closes a tab (chromedp.Cancel), logging a failure.
func (p *Pool) closeTab(ctx context.Context, inst *instance, tb *tab) {
	err := chromedp.Cancel(tb.ctx)
	tb.cancel()
	if tb.t != nil {
		inst.bySession.Delete(tb.t.SessionID)
	}
	if tb.slot != nil {
		// Forgotten once closed, so a cleaning never takes it for a
		// window a page opened.
		inst.slots.mu.Lock()
		delete(tb.slot.tabs, tb.id)
		inst.slots.mu.Unlock()
	}
	if err != nil && inst.ctx.Err() == nil && !errors.Is(err, context.Canceled) {
		p.log.WarnContext(ctx, "close tab", "err", err)
	}
}

// releaseTab ends a render's use of its tab: after a successful render
// the tab is reset and kept in the slot (or closed, when session storage
// ties it to the page), and the slot is cleaned; a failed render closes
// the tab and retires the slot.
func (p *Pool) releaseTab(ctx context.Context, inst *instance, s *slot, tb *tab, ok bool) {
	keep := ok && inst.ctx.Err() == nil
	// The page goes first, so that it cannot store anything after the
	// cleaning.
	reuse := keep && tb.tr.reusable()
	if reuse {
		if err := p.resetTab(ctx, tb); err != nil {
			if inst.ctx.Err() == nil {
				p.log.WarnContext(ctx, "reset tab", "err", err)
			}
			reuse = false
		}
	}
	if keep {
		if err := p.clearState(ctx, inst, s, tb); err != nil {
			if inst.ctx.Err() == nil {
				p.log.WarnContext(ctx, "clear browser context", "err", err)
			}
			keep, reuse = false, false
		}
	}
	if reuse {
		tb.tr.reset()
		inst.slots.mu.Lock()
		s.idle = append(s.idle, tb)
		inst.slots.mu.Unlock()
	} else {
		p.closeTab(ctx, inst, tb)
	}
	p.leave(ctx, inst, s, keep)
}

// resetTab makes a used tab as good as a new one, but for its session
// storage: the page is replaced by about:blank (its scripts and requests
// stop), its history and window name are dropped, and what the render set
// on the tab is undone. Navigating first also ends the requests the guard
// held, so that turning interception off lets none of them through.
func (p *Pool) resetTab(ctx context.Context, tb *tab) error {
	rctx, cancel := context.WithTimeout(ctx, closeTimeout)
	defer cancel()
	t := tb.t
	answerDialogs(rctx, t) // a beforeunload dialog must not hold the navigation
	stopped := cdp.Events(rctx, t, page.FrameStoppedLoading)
	nav, err := cdp.Call(rctx, t, page.Navigate, page.NavigateParams{URL: "about:blank"})
	if err != nil {
		return fmt.Errorf("navigate to about:blank: %w", err)
	}
	if nav.ErrorText != "" {
		return fmt.Errorf("navigate to about:blank: %s", nav.ErrorText)
	}
	// Chrome resets the history only once about:blank is the page.
	for ev, err := range stopped {
		if err != nil {
			return fmt.Errorf("navigate to about:blank: %w", err)
		}
		if ev.FrameID == tb.tr.mainFrame {
			break
		}
	}
	for i := 0; ; i++ {
		_, err := cdp.Call(rctx, t, page.ResetNavigationHistory, cdp.Empty{})
		if err == nil {
			break
		}
		if i == resetTries-1 {
			return fmt.Errorf("reset history: %w", err)
		}
		if err := pause.For(rctx, 10*time.Millisecond); err != nil {
			return fmt.Errorf("reset history: %w", err)
		}
	}
	calls := append(tb.undo, tabCall{runtime.CommandEvaluate, runtime.EvaluateParams{Expression: "window.name = ''"}})
	tb.undo = nil
	for _, c := range calls {
		if err := t.Call(rctx, c.method, c.params, nil); err != nil {
			return fmt.Errorf("%s: %w", c.method, err)
		}
	}
	return nil
}

// popup returns the URL of a page in the slot's browser context that the
// pool did not open, or "". A tab another render of the slot is opening
// exists in Chrome before it is in s.tabs: while one is, the list is read
// again.
func (p *Pool) popup(ctx context.Context, inst *instance, s *slot) (string, error) {
	b := chromedp.FromContext(inst.ctx).Browser
	for {
		infos, err := cdp.Call(ctx, b, target.GetTargets, target.GetTargetsParams{Filter: target.Filter{{Type: "page"}}})
		if err != nil {
			return "", fmt.Errorf("list targets: %w", err)
		}
		inst.slots.mu.Lock()
		var url string
		for _, in := range infos.TargetInfos {
			if in.Type == "page" && in.BrowserContextID == s.id && !s.tabs[in.TargetID] {
				url = in.URL
			}
		}
		opening := s.opening
		inst.slots.mu.Unlock()
		if url == "" || opening == 0 {
			return url, nil
		}
		if err := pause.For(ctx, 10*time.Millisecond); err != nil {
			return "", fmt.Errorf("list targets: %w", err)
		}
	}
}

// resetTries bounds the attempts at resetting a tab's history: a stop of
// the page's own loading can come before about:blank is in place.
const resetTries = 5

// clearState deletes what the render left in the slot's browser context:
// all its cookies, and every storage (local, IndexedDB, cache storage,
// service workers...) of the origins the page requested. The HTTP cache
// stays empty because tabs run with it disabled (see setup).
func (p *Pool) clearState(ctx context.Context, inst *instance, s *slot, tb *tab) error {
	cctx, cancel := context.WithTimeout(ctx, closeTimeout)
	defer cancel()
	// A window the page opened anyway (the instrumentation blocks them)
	// means the context cannot be trusted clean: drop the slot.
	if popup, err := p.popup(cctx, inst, s); err != nil {
		return err
	} else if popup != "" {
		return fmt.Errorf("a page opened another window (%s)", redactURL(popup))
	}
	b := chromedp.FromContext(inst.ctx).Browser
	var errs []error
	for _, origin := range tb.tr.visited() {
		if _, err := cdp.Call(cctx, tb.t, storage.ClearDataForOrigin, storage.ClearDataForOriginParams{Origin: origin, StorageTypes: "all"}); err != nil {
			errs = append(errs, fmt.Errorf("clear %s: %w", origin, err))
		}
	}
	// Cookies of the whole context go when no other render of the team
	// is in it (the origins' cookies went with their data above).
	inst.slots.mu.Lock()
	alone := s.active == 1
	inst.slots.mu.Unlock()
	if alone {
		if _, err := cdp.Call(cctx, b, storage.ClearCookies, storage.ClearCookiesParams{BrowserContextID: s.id}); err != nil {
			errs = append(errs, fmt.Errorf("clear cookies: %w", err))
		}
	}
	return errors.Join(errs...)
}
