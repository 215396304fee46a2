package browser

import (
	"context"
	"fmt"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// MaxSessionPages caps the pages of a session's browser context: its own
// page, those a DevTools client opens and those any of them opens
// (window.open). The pool closes a page over it as soon as Chrome reports
// it, whether a client is connected or not.
const MaxSessionPages = 10

// sessionPages counts the pages of the sessions' browser contexts.
type sessionPages struct {
	mu        sync.Mutex
	byContext map[cdp.BrowserContextID]map[target.ID]bool
	context   map[target.ID]cdp.BrowserContextID // the counted pages' contexts
}

// watch starts counting the pages of a session's context.
func (sp *sessionPages) watch(id cdp.BrowserContextID) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.byContext == nil {
		sp.byContext = map[cdp.BrowserContextID]map[target.ID]bool{}
		sp.context = map[target.ID]cdp.BrowserContextID{}
	}
	sp.byContext[id] = map[target.ID]bool{}
}

// forget stops counting a session's context.
func (sp *sessionPages) forget(id cdp.BrowserContextID) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	for t := range sp.byContext[id] {
		delete(sp.context, t)
	}
	delete(sp.byContext, id)
}

// created counts a new page; it reports whether the page is over the cap
// of its context (a session's).
func (sp *sessionPages) created(in *target.Info) bool {
	if in == nil || in.Type != "page" {
		return false
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	set, ok := sp.byContext[in.BrowserContextID]
	if !ok {
		return false
	}
	set[in.TargetID] = true
	sp.context[in.TargetID] = in.BrowserContextID
	return len(set) > MaxSessionPages
}

// destroyed stops counting a page.
func (sp *sessionPages) destroyed(id target.ID) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if bc, ok := sp.context[id]; ok {
		delete(sp.byContext[bc], id)
		delete(sp.context, id)
	}
}

// watchTargets makes the pool hear of every target of the browser (target
// discovery at the browser level) and closes a session's page over
// MaxSessionPages as soon as Chrome reports it.
func (p *Pool) watchTargets(ctx context.Context, inst *instance) error {
	err := chromedp.ListenBrowser(inst.ctx, func(ev any) {
		switch ev := ev.(type) {
		case *target.EventTargetCreated:
			if inst.pages.created(ev.TargetInfo) {
				go p.closePage(inst, ev.TargetInfo.TargetID)
			}
		case *target.EventTargetDestroyed:
			inst.pages.destroyed(ev.TargetID)
		}
	})
	if err != nil {
		return fmt.Errorf("listen to targets: %w", err)
	}
	b := chromedp.FromContext(inst.ctx).Browser
	if _, err := cdp.Call(ctx, b, target.SetDiscoverTargets, target.SetDiscoverTargetsParams{Discover: true}); err != nil {
		return fmt.Errorf("discover targets: %w", err)
	}
	return nil
}

// closePage closes a session's page over the cap.
func (p *Pool) closePage(inst *instance, id target.ID) {
	ctx, cancel := context.WithTimeout(inst.ctx, closeTimeout)
	defer cancel()
	b := chromedp.FromContext(inst.ctx).Browser
	if _, err := cdp.Call(ctx, b, target.CloseTarget, target.CloseTargetParams{TargetID: id}); err != nil && inst.ctx.Err() == nil {
		p.log.WarnContext(ctx, "close a session's page over the cap", "target", id, "err", err)
		return
	}
	p.log.InfoContext(ctx, "closed a session's page over the cap", "target", id, "max_pages", MaxSessionPages)
}
