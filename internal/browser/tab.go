package browser

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// tabOpenTimeout bounds opening a tab.
const tabOpenTimeout = 15 * time.Second

// spareTabs is how many opened tabs wait for the next render, so that a
// render does not pay for opening its tab.
const spareTabs = 1

// tab is a new target in its own browser context, used by one render and
// then closed.
type tab struct {
	ctx    context.Context // the tab's chromedp context; no deadline
	cancel context.CancelFunc
	t      *chromedp.Target
	tr     *tracker
}

// openTab opens a tab with the instrumentation script installed. ctx
// bounds the opening only.
func (p *Pool) openTab(ctx context.Context, inst *instance) (*tab, error) {
	tr := newTracker()
	tctx, cancel := chromedp.NewContext(inst.ctx, chromedp.WithNewBrowserContext(), chromedp.WithListener(tr.onEvent))
	tb := &tab{ctx: tctx, cancel: cancel, tr: tr}
	// The first Run binds the target to tctx, which must outlive this call,
	// so the opening is bounded by a watchdog instead of a deadline.
	stopCtx := context.AfterFunc(ctx, cancel)
	timer := time.AfterFunc(tabOpenTimeout, cancel)
	t, err := chromedp.Run(tctx, func(_ context.Context, t *chromedp.Target) (*chromedp.Target, error) { return t, nil })
	if err == nil {
		_, err = cdp.Call(tctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: instrumentScript})
	}
	ctxFired, timerFired := !stopCtx(), !timer.Stop()
	if err == nil && (ctxFired || timerFired) {
		err = context.Canceled
	}
	if err != nil {
		p.closeTab(ctx, inst, tb)
		switch {
		case ctxFired:
			return nil, ctx.Err()
		case timerFired:
			return nil, fmt.Errorf("open tab: %w", context.DeadlineExceeded)
		}
		return nil, err
	}
	tb.t = t
	tr.mainFrame = cdp.FrameID(t.TargetID)
	return tb, nil
}

// closeTab closes the tab and its browser context, logging a failure.
func (p *Pool) closeTab(ctx context.Context, inst *instance, tb *tab) {
	err := chromedp.Cancel(tb.ctx)
	tb.cancel()
	if err != nil && inst.ctx.Err() == nil && !errors.Is(err, context.Canceled) {
		p.log.WarnContext(ctx, "close tab", "err", err)
	}
}

// takeTab returns a spare tab, or opens one. The spares are refilled when
// a render ends (see render), so that opening a tab does not slow the
// render that is starting.
func (p *Pool) takeTab(ctx context.Context, inst *instance) (*tab, error) {
	for {
		select {
		case tb := <-inst.spares:
			if tb.ctx.Err() != nil {
				p.closeTab(ctx, inst, tb)
				continue
			}
			return tb, nil
		default:
			return p.openTab(ctx, inst)
		}
	}
}

// refill opens spare tabs in the background until there are spareTabs.
func (p *Pool) refill(inst *instance) {
	if !inst.refilling.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer inst.refilling.Store(false)
		for len(inst.spares) < cap(inst.spares) && inst.ctx.Err() == nil {
			tb, err := p.openTab(inst.ctx, inst)
			if err != nil {
				if inst.ctx.Err() == nil {
					p.log.Warn("open spare tab", "err", err)
				}
				return
			}
			select {
			case inst.spares <- tb:
			default:
				p.closeTab(inst.ctx, inst, tb)
				return
			}
		}
	}()
}
