package browser

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Tabs and browser contexts.
//
// Every render gets a new tab (target) that is closed when it ends. The tab
// lives in a browser context (its own cookies, storage and cache) that no
// other render uses at the same time. Opening a browser context costs a new
// window, which is several times the cost of a tab, so contexts are kept in
// slots: a slot is a context whose window is held open by an idle anchor
// tab. After a render succeeds, the slot's cookies and the storage of every
// origin the page touched are cleared, its tab is closed, the next tab is
// opened ahead of time and the slot goes back to the free list. A slot is
// disposed of (with everything in it) after a failed render, after
// recycleAfter renders, or when cleaning fails.

// tabOpenTimeout bounds opening a tab or a slot.
const tabOpenTimeout = 15 * time.Second

// closeTimeout bounds cleaning a slot and disposing of a browser context.
const closeTimeout = 5 * time.Second

// recycleAfter is how many renders a slot serves before it is replaced.
const recycleAfter = 100

// slot is a browser context with a window kept open by an anchor tab.
type slot struct {
	id     cdp.BrowserContextID
	anchor target.ID
	uses   int
	next   *tab // opened ahead for the next render, or nil
}

// tab is a new target in a slot, used by one render and then closed.
type tab struct {
	ctx    context.Context // the tab's chromedp context; no deadline
	cancel context.CancelFunc
	t      *chromedp.Target
	tr     *tracker
}

// newSlot creates a browser context and its anchor window.
func (p *Pool) newSlot(ctx context.Context, inst *instance) (*slot, error) {
	octx, cancel := context.WithTimeout(ctx, tabOpenTimeout)
	defer cancel()
	b := chromedp.FromContext(inst.ctx).Browser
	// A remote Chrome disposes of the context if our connection drops.
	bc, err := cdp.Call(octx, b, target.CreateBrowserContext, target.CreateBrowserContextParams{DisposeOnDetach: new(true)})
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
	return &slot{id: bc.BrowserContextID, anchor: anchor.TargetID}, nil
}

// takeSlot returns a free slot, creating one when fewer than the maximum
// exist, else waiting for one.
func (p *Pool) takeSlot(ctx context.Context, inst *instance) (*slot, error) {
	select {
	case s := <-inst.free:
		return s, nil
	default:
	}
	inst.mu.Lock()
	if inst.nslots < cap(inst.free) {
		inst.nslots++
		inst.mu.Unlock()
		s, err := p.newSlot(ctx, inst)
		if err != nil {
			inst.mu.Lock()
			inst.nslots--
			inst.mu.Unlock()
		}
		return s, err
	}
	inst.mu.Unlock()
	select {
	case s := <-inst.free:
		return s, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-inst.ctx.Done():
		return nil, inst.ctx.Err()
	}
}

// dropSlot disposes of a slot's browser context, closing its tabs.
func (p *Pool) dropSlot(ctx context.Context, inst *instance, s *slot) {
	if s.next != nil {
		p.closeTab(ctx, inst, s.next)
		s.next = nil
	}
	p.disposeContext(ctx, inst, s.id)
	inst.mu.Lock()
	inst.nslots--
	inst.mu.Unlock()
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
		_, err = cdp.Call(octx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: instrumentScript})
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
func (p *Pool) takeTab(ctx context.Context, inst *instance) (*slot, *tab, error) {
	s, err := p.takeSlot(ctx, inst)
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

// releaseTab ends a render's use of its tab: it cleans and keeps the slot
// after a successful render (opening the next tab ahead), or disposes of it.
func (p *Pool) releaseTab(ctx context.Context, inst *instance, s *slot, tb *tab, ok bool) {
	s.uses++
	keep := ok && s.uses < recycleAfter && inst.ctx.Err() == nil
	if keep {
		if err := p.clearState(ctx, inst, s, tb); err != nil {
			if inst.ctx.Err() == nil {
				p.log.WarnContext(ctx, "clear browser context", "err", err)
			}
			keep = false
		}
	}
	p.closeTab(ctx, inst, tb)
	if keep {
		next, err := p.openTab(ctx, inst, s)
		if err == nil {
			s.next = next
			inst.free <- s // never blocks: at most cap(free) slots exist
			return
		}
		if inst.ctx.Err() == nil {
			p.log.WarnContext(ctx, "open next tab", "err", err)
		}
	}
	p.dropSlot(ctx, inst, s)
}

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
	infos, err := cdp.Call(cctx, b, target.GetTargets, target.GetTargetsParams{})
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
