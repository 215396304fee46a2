package scrape

import (
	"net/url"
	"sync"

	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/errcode"
)

// ErrUnsafeDomain: threat protection refused the URL, or a URL it
// redirected to.
var ErrUnsafeDomain = errcode.New("scrape: unsafe domain blocked", errcode.Forbidden, "unsafe_domain_blocked", "")

// checkThreat runs threat protection on the request's URL before anything
// is fetched or read from the cache: the override's policy (mode off while
// the operator's blocklist is enforced is forbidden), then the URL's host.
func (e *Engine) checkThreat(o *Options) error {
	if err := e.threat.Validate(o.ThreatProtection); err != nil {
		return &errcode.Failure{Kind: ErrForbidden, Msg: "threatProtection.mode \"off\" is not allowed: this server enforces its threat blocklist on every request.", Cause: err}
	}
	u, err := url.Parse(o.URL)
	if err != nil {
		return nil // the validator already refused it; nothing to check
	}
	return unsafeFailure(o.URL, e.threat.Check(u.Hostname(), o.ThreatProtection))
}

// unsafeFailure wraps a threat refusal of rawURL for the API; nil stays
// nil.
func unsafeFailure(rawURL string, err error) error {
	if err == nil {
		return nil
	}
	return &errcode.Failure{Kind: ErrUnsafeDomain, Msg: "Threat protection blocked " + rawURL + ": " + err.Error() + ".", Cause: err}
}

// hopGuard checks every redirect hop (and, in the browser, every
// navigation of the main frame) of one scrape, remembering the first
// refusal.
type hopGuard struct {
	e *Engine
	o *Options

	mu      sync.Mutex
	refusal error
}

func (e *Engine) newHopGuard(o *Options) *hopGuard { return &hopGuard{e: e, o: o} }

// check is fetch.Request.CheckHop and browser.Request.CheckHop.
func (g *hopGuard) check(u *url.URL) error {
	err := g.e.threat.Check(u.Hostname(), g.o.ThreatProtection)
	if err != nil {
		g.mu.Lock()
		if g.refusal == nil {
			g.refusal = unsafeFailure(u.Redacted(), err)
		}
		g.mu.Unlock()
	}
	return err
}

// err is the first refusal, or nil.
func (g *hopGuard) err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refusal
}

// threatCredits is the threat scan's charge for a document: CostThreatScan
// when the request asked for a scan.
func threatCredits(o *Options) int {
	if !o.ThreatProtection.Active() {
		return 0
	}
	return int(billing.CostThreatScan)
}

// checkFinalURL refuses a document whose final URL (after redirects, or of
// a cached copy) the request's threat protection blocks.
func (e *Engine) checkFinalURL(o *Options, doc *Document) error {
	if doc == nil || doc.Metadata.URL == "" {
		return nil
	}
	u, err := url.Parse(doc.Metadata.URL)
	if err != nil {
		return nil
	}
	return unsafeFailure(u.Redacted(), e.threat.Check(u.Hostname(), o.ThreatProtection))
}
