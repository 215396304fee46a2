package browser

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/domstorage"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Tabs and browser contexts.
//
// A render uses a tab (target) in a browser context (its own cookies,
// storage and cache) that no other render uses at the same time. Opening a
// browser context costs a new window, which is several times the cost of a
// tab, so contexts are kept in slots: a slot is a context whose window is
// held open by an idle anchor tab, and a tab for the next render. After a
// render succeeds, its tab is reset (about:blank, no history, what the
// render set on the tab undone), the slot's cookies and the storage of every
// origin the page touched are cleared, and the slot, tab included, goes back
// to the free list. Opening a tab costs Chrome more than the rest of a
// render of a small page, so a tab is reused as long as nothing ties it to
// the last render: a page that wrote session storage (which belongs to the
// tab, and which clearing an origin's data is not documented to cover) gets
// its tab closed and the next one opened ahead of time. A slot is disposed of (with everything in it) after a
// failed render, after recycleAfter renders, or when cleaning fails.

// tabOpenTimeout bounds opening a tab or a slot.
const tabOpenTimeout = 15 * time.Second

// closeTimeout bounds cleaning a slot and disposing of a browser context.
const closeTimeout = 5 * time.Second

// recycleAfter is how many renders a slot serves before it is replaced.
const recycleAfter = 100

// slot is a browser context with a window kept open by an anchor tab.
type slot struct {
	team   string // the only team whose renders use it
	id     cdp.BrowserContextID
	anchor target.ID
	uses   int
	next   *tab // opened ahead for the next render, or nil
}

// tab is a target in a slot, used by one render at a time.
type tab struct {
	ctx    context.Context // the tab's chromedp context; no deadline
	cancel context.CancelFunc
	t      *chromedp.Target
	tr     *tracker
	// undo holds the commands that undo what the current render set on
	// the tab (interception, scripts, emulation); resetTab runs them.
	undo []tabCall
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

// newSlot creates a browser context and its anchor window.
func (p *Pool) newSlot(ctx context.Context, inst *instance, team string) (*slot, error) {
	octx, cancel := context.WithTimeout(ctx, tabOpenTimeout)
	defer cancel()
	b := chromedp.FromContext(inst.ctx).Browser
	// A remote Chrome disposes of the context if our connection drops.
	params := target.CreateBrowserContextParams{DisposeOnDetach: new(true)}
	if p.proxyURL != "" {
		// The context reaches the network only through the guarded proxy;
		// loopback is not exempt.
		params.ProxyServer, params.ProxyBypassList = p.proxyURL, "<-loopback>"
	}
	bc, err := cdp.Call(octx, b, target.CreateBrowserContext, params)
	if err != nil {
		return nil, fmt.Errorf("create browser context: %w", err)
	}
	anchor, err := cdp.Call(octx, b, target.CreateTarget, target.CreateTargetParams{
		URL: "about:blank", BrowserContextID: bc.BrowserContextID, NewWindow: new(true),
	})
	if err != nil {
		p.disposeContext(ctx, inst, bc.BrowserContextID)
		return nil, fmt.Errorf("create anchor tab: %w", err)
	}
	return &slot{team: team, id: bc.BrowserContextID, anchor: anchor.TargetID}, nil
}

// slots holds an instance's idle slots. A slot belongs to the team whose
// render created it and serves only that team's renders: nothing a render
// leaves in a browser context (cookies, storage, HTTP auth, service
// workers, permissions) can reach another team's render.
type slots struct {
	mu   sync.Mutex
	idle []*slot
	n    int // slots that exist, idle or in use
	max  int
	wake chan struct{} // a slot went back to idle
}

func newSlots(max int) *slots {
	return &slots{max: max, wake: make(chan struct{}, 1)}
}

// put returns a slot to the idle list.
func (ss *slots) put(s *slot) {
	ss.mu.Lock()
	ss.idle = append(ss.idle, s)
	ss.mu.Unlock()
	select {
	case ss.wake <- struct{}{}:
	default:
	}
}

// passWake wakes another waiter when idle slots are left; ss.mu is held.
func (ss *slots) passWake() {
	if len(ss.idle) > 0 {
		select {
		case ss.wake <- struct{}{}:
		default:
		}
	}
}

// drain removes and returns every idle slot.
func (ss *slots) drain() []*slot {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	out := ss.idle
	ss.idle = nil
	return out
}

// count returns the slots that exist.
func (ss *slots) count() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.n
}

// takeSlot returns an idle slot of the team, or a new one when fewer than
// the maximum exist; at the maximum, another team's idle slot is disposed
// of to make room, else it waits for one.
func (p *Pool) takeSlot(ctx context.Context, inst *instance, team string) (*slot, error) {
	ss := inst.slots
	for {
		ss.mu.Lock()
		for i := len(ss.idle) - 1; i >= 0; i-- {
			if s := ss.idle[i]; s.team == team {
				ss.idle = append(ss.idle[:i], ss.idle[i+1:]...)
				ss.passWake()
				ss.mu.Unlock()
				return s, nil
			}
		}
		var evict *slot
		switch {
		case ss.n < ss.max:
			ss.n++
		case len(ss.idle) > 0:
			evict = ss.idle[0]
			ss.idle = ss.idle[1:]
			ss.passWake()
		default:
			ss.mu.Unlock()
			select {
			case <-ss.wake:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-inst.ctx.Done():
				return nil, inst.ctx.Err()
			}
		}
		ss.mu.Unlock()
		if evict != nil {
			p.disposeSlot(ctx, inst, evict)
		}
		s, err := p.newSlot(ctx, inst, team)
		if err != nil {
			ss.mu.Lock()
			ss.n--
			ss.mu.Unlock()
		}
		return s, err
	}
}

// dropSlot disposes of a slot and forgets it.
func (p *Pool) dropSlot(ctx context.Context, inst *instance, s *slot) {
	p.disposeSlot(ctx, inst, s)
	inst.slots.mu.Lock()
	inst.slots.n--
	inst.slots.mu.Unlock()
	select {
	case inst.slots.wake <- struct{}{}:
	default:
	}
}

// disposeSlot disposes of a slot's browser context, closing its tabs.
func (p *Pool) disposeSlot(ctx context.Context, inst *instance, s *slot) {
	if s.next != nil {
		p.closeTab(ctx, inst, s.next)
		s.next = nil
	}
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
	tgt, err := cdp.Call(octx, b, target.CreateTarget, target.CreateTargetParams{
		URL: "about:blank", BrowserContextID: s.id, NewWindow: new(false),
	})
	if err != nil {
		return nil, fmt.Errorf("create target: %w", err)
	}
	tr := newTracker()
	tctx, tcancel := chromedp.NewContext(inst.ctx, chromedp.WithTargetID(tgt.TargetID), chromedp.WithListener(tr.onEvent))
	tb := &tab{ctx: tctx, cancel: tcancel, tr: tr}
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
	return tb, nil
}

// prepareTab sets up a newly attached tab: the instrumentation script and
// the session storage events (see tracker.sessionStorage) on, and off what
// chromedp enables on attach that the package does not use and that costs
// Chrome work on every page: target discovery (every tab would hear of
// every target of the browser), the DOM and CSS agents and lifecycle
// events. The commands are sent together.
func prepareTab(ctx context.Context, t *chromedp.Target) error {
	calls := []tabCall{
		{page.CommandAddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: instrumentScript}},
		{domstorage.CommandEnable, nil},
		{target.CommandSetDiscoverTargets, target.SetDiscoverTargetsParams{Discover: false}},
		{page.CommandSetLifecycleEventsEnabled, page.SetLifecycleEventsEnabledParams{Enabled: false}},
		{css.CommandDisable, nil},
		{dom.CommandDisable, nil},
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
	if err != nil && inst.ctx.Err() == nil && !errors.Is(err, context.Canceled) {
		p.log.WarnContext(ctx, "close tab", "err", err)
	}
}

// takeTab returns a slot and a fresh tab in it: the one opened ahead, or a
// new one.
func (p *Pool) takeTab(ctx context.Context, inst *instance, team string) (*slot, *tab, error) {
	s, err := p.takeSlot(ctx, inst, team)
	if err != nil {
		return nil, nil, err
	}
	if tb := s.next; tb != nil {
		s.next = nil
		if tb.ctx.Err() == nil {
			return s, tb, nil
		}
		p.closeTab(ctx, inst, tb)
	}
	tb, err := p.openTab(ctx, inst, s)
	if err != nil {
		p.dropSlot(ctx, inst, s)
		return nil, nil, err
	}
	return s, tb, nil
}

// releaseTab ends a render's use of its tab: after a successful render it
// cleans the slot and keeps it, with the tab reset for the next render (or
// a new one opened ahead); otherwise it disposes of the slot.
func (p *Pool) releaseTab(ctx context.Context, inst *instance, s *slot, tb *tab, ok bool) {
	s.uses++
	keep := ok && s.uses < recycleAfter && inst.ctx.Err() == nil
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
			keep = false
		}
	}
	if keep && reuse {
		tb.tr.reset()
		s.next = tb
		inst.slots.put(s)
		return
	}
	p.closeTab(ctx, inst, tb)
	if keep {
		next, err := p.openTab(ctx, inst, s)
		if err == nil {
			s.next = next
			inst.slots.put(s)
			return
		}
		if inst.ctx.Err() == nil {
			p.log.WarnContext(ctx, "open next tab", "err", err)
		}
	}
	p.dropSlot(ctx, inst, s)
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
		if err := sleep(rctx, 10*time.Millisecond); err != nil {
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
	b := chromedp.FromContext(inst.ctx).Browser
	infos, err := cdp.Call(cctx, b, target.GetTargets, target.GetTargetsParams{Filter: target.Filter{{Type: "page"}}})
	if err != nil {
		return fmt.Errorf("list targets: %w", err)
	}
	for _, in := range infos.TargetInfos {
		if in.Type == "page" && in.BrowserContextID == s.id && in.TargetID != s.anchor && in.TargetID != tb.t.TargetID {
			return fmt.Errorf("the page opened another window (%s)", in.URL)
		}
	}
	var errs []error
	for _, origin := range tb.tr.visited() {
		if _, err := cdp.Call(cctx, tb.t, storage.ClearDataForOrigin, storage.ClearDataForOriginParams{Origin: origin, StorageTypes: "all"}); err != nil {
			errs = append(errs, fmt.Errorf("clear %s: %w", origin, err))
		}
	}
	if _, err := cdp.Call(cctx, b, storage.ClearCookies, storage.ClearCookiesParams{BrowserContextID: s.id}); err != nil {
		errs = append(errs, fmt.Errorf("clear cookies: %w", err))
	}
	return errors.Join(errs...)
}
