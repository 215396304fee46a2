package browser

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domstorage"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/firegate/firegate/internal/pause"
)

// Smart-wait tuning. The page is settled when it has loaded, no request is
// in flight and the DOM is quiet, and either
//   - no short timer (setTimeout up to instrumentTimerMax) is pending and the
//     network has been quiet for fastQuiet (the fast path: a static page
//     settles about 100 ms after load), or
//   - the network has been quiet for networkQuiet and the DOM for domQuiet
//     (pages that keep rescheduling timers), or
//   - after relaxedAfter, at most relaxedInflight requests hang (long polls,
//     beacons) while nothing else moved for networkQuiet and domQuiet.
const (
	pollEvery    = 15 * time.Millisecond
	fastQuiet    = 50 * time.Millisecond
	networkQuiet = 500 * time.Millisecond
	domQuiet     = 300 * time.Millisecond
	// smartWaitMax caps the smart wait; reaching it is not an error.
	smartWaitMax    = 10 * time.Second
	relaxedAfter    = 2 * time.Second
	relaxedInflight = 2
	// settleMax caps the wait after one action.
	settleMax = 5 * time.Second
)

// instrumentScript runs before any page script of every document: it counts
// pending short timers and notes the time of the last DOM mutation, read by
// idleExpr, and keeps the page from opening other windows.
const instrumentScript = `(() => {
  const K = Symbol.for('firegate.idle');
  if (window[K]) return;
  const st = window.setTimeout, ct = window.clearTimeout;
  const pending = new Set();
  let last = performance.now();
  window.setTimeout = function setTimeout(fn, delay, ...args) {
    const d = Number(delay) || 0;
    if (typeof fn !== 'function' || d > 3000) return st.call(window, fn, delay, ...args);
    const id = st.call(window, function () { pending.delete(id); return fn.apply(this, args); }, d);
    pending.add(id);
    return id;
  };
  window.clearTimeout = function clearTimeout(id) { pending.delete(id); return ct.call(window, id); };
  Object.defineProperty(window, K, { value: () => [pending.size, performance.now() - last, document.readyState] });
  new MutationObserver(() => { last = performance.now(); })
    .observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  // Everything happens in this tab, where the request guard sees it: no
  // popups, and links and forms aimed at another window open here.
  window.open = function open() { return null; };
  // The page's own target comes back once the click or submit is done, so
  // that the HTML read after it is the page's.
  const here = (e) => {
    const el = e.target && e.target.closest ? e.target.closest('a[target], area[target], form[target]') : null;
    if (!el || /^_(self|parent|top)$/i.test(el.target)) return;
    const was = el.getAttribute('target');
    el.target = '_self';
    st.call(window, () => { if (el.getAttribute('target') === '_self') el.setAttribute('target', was); }, 0);
  };
  document.addEventListener('click', here, true);
  document.addEventListener('submit', here, true);
})();`

// idleExpr reads the instrumentation: [pending timers, ms since the last DOM
// mutation, readyState]. Without it (error pages) the DOM counts as quiet.
const idleExpr = `(() => { const f = window[Symbol.for('firegate.idle')]; return f ? f() : [0, 1e9, document.readyState]; })()`

// hideBannersScript adopts cookieBannerCSS as a constructed style sheet
// in every document: it styles the page without being a node of it, so the
// page's HTML (rawHtml, a scrape action's html) stays the page's own.
func hideBannersScript() string {
	css, _ := json.Marshal(cookieBannerCSS) // a string always marshals
	return `(() => { try { const s = new CSSStyleSheet(); s.replaceSync(` + string(css) + `);
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, s]; } catch (e) {} })();`
}

// tracker follows one tab's network activity from its events. Its methods
// are safe for concurrent use; onEvent runs on chromedp's reader goroutine.
type tracker struct {
	mu        sync.Mutex
	mainFrame cdp.FrameID
	loaderID  cdp.LoaderID // of the navigation whose response we report
	mainResp  *network.Response
	inflight  map[network.RequestID]bool
	origins   map[string]bool // scheme://host[:port] of every request
	lastNet   time.Time
	loading   bool // main frame between started and stopped loading
	blockedOn string
	mainBlock bool     // the main document was refused by the guard
	docHosts  []string // hosts of the main frame's document requests (redirects included)
	// sessionStorage: a document wrote session storage, which belongs to
	// the tab; the tab must not serve another render.
	sessionStorage bool
}

func newTracker() *tracker {
	return &tracker{inflight: map[network.RequestID]bool{}, origins: map[string]bool{}, lastNet: time.Now()}
}

// reset forgets the last render, for the next one in the same tab.
func (tr *tracker) reset() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.loaderID, tr.mainResp = "", nil
	clear(tr.inflight)
	clear(tr.origins)
	tr.lastNet = time.Now()
	tr.loading, tr.blockedOn, tr.mainBlock, tr.sessionStorage = false, "", false, false
	tr.docHosts = tr.docHosts[:0]
}

// reusable reports whether the tab may serve another render.
func (tr *tracker) reusable() bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return !tr.sessionStorage
}

// visited returns the origins the page requested.
func (tr *tracker) visited() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := make([]string, 0, len(tr.origins))
	for o := range tr.origins {
		out = append(out, o)
	}
	return out
}

// origin returns scheme://host[:port] of an http(s) URL, or "".
func origin(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok || (scheme != "http" && scheme != "https") {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	return scheme + "://" + strings.ToLower(rest)
}

// ignoredType reports resource types that never finish on their own.
func ignoredType(t network.ResourceType) bool {
	switch t {
	case network.ResourceTypeEventSource, network.ResourceTypeWebSocket, network.ResourceTypePing,
		network.ResourceTypePrefetch, network.ResourceTypeCSPViolationReport:
		return true
	}
	return false
}

func (tr *tracker) onEvent(ev any) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		if ev.Request != nil {
			if o := origin(ev.Request.URL); o != "" {
				tr.origins[o] = true
			}
			if ev.Type == network.ResourceTypeDocument && ev.FrameID == tr.mainFrame && len(tr.docHosts) < 32 {
				if u, err := url.Parse(ev.Request.URL); err == nil {
					tr.docHosts = append(tr.docHosts, u.Hostname())
				}
			}
		}
		if ev.Request == nil || ignoredType(ev.Type) || strings.HasPrefix(ev.Request.URL, "data:") ||
			(ev.Type == network.ResourceTypeOther && strings.HasSuffix(ev.Request.URL, "/favicon.ico")) {
			// The browser's own favicon fetch is not the page's activity.
			return
		}
		tr.inflight[ev.RequestID] = true
		tr.lastNet = time.Now()
	case *network.EventLoadingFinished:
		tr.done(ev.RequestID)
	case *network.EventLoadingFailed:
		tr.done(ev.RequestID)
	case *network.EventResponseReceived:
		if ev.Type == network.ResourceTypeDocument && ev.FrameID == tr.mainFrame &&
			(tr.loaderID == "" || ev.LoaderID == tr.loaderID) {
			tr.mainResp = ev.Response
		}
	case *domstorage.EventDomStorageItemAdded:
		tr.noteStorage(ev.StorageID)
	case *domstorage.EventDomStorageItemUpdated:
		tr.noteStorage(ev.StorageID)
	case *domstorage.EventDomStorageItemRemoved:
		tr.noteStorage(ev.StorageID)
	case *domstorage.EventDomStorageItemsCleared:
		// Storage emptied leaves nothing behind; the cleaning after a
		// render empties it too, and its event may come during the next
		// render of the tab, which then was taken for a page that wrote
		// session storage.
	case *page.EventFrameStartedLoading:
		if ev.FrameID == tr.mainFrame {
			tr.loading = true
			tr.lastNet = time.Now()
		}
	case *page.EventFrameStoppedLoading:
		if ev.FrameID == tr.mainFrame {
			tr.loading = false
			tr.lastNet = time.Now()
		}
	}
}

// noteStorage notes a write to DOM storage; tr.mu is held.
func (tr *tracker) noteStorage(id *domstorage.StorageID) {
	if id == nil || !id.IsLocalStorage {
		tr.sessionStorage = true
	}
}

func (tr *tracker) done(id network.RequestID) {
	if tr.inflight[id] {
		delete(tr.inflight, id)
		tr.lastNet = time.Now()
	}
}

// netState returns the number of requests in flight, whether the main frame
// is loading, and how long the network has been quiet.
func (tr *tracker) netState() (int, bool, time.Duration) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return len(tr.inflight), tr.loading, time.Since(tr.lastNet)
}

// settle waits until the page is settled (see the constants above) or
// budget has passed; only ctx ending is an error. afterAction makes the
// network count as quiet only from the call on, so that what the action
// started (a navigation, a fetch) has time to show up.
func settle(ctx context.Context, t *chromedp.Target, tr *tracker, budget time.Duration, afterAction bool) error {
	if dl, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(dl))
	}
	if budget <= 0 {
		return ctx.Err()
	}
	start := time.Now()
	end := start.Add(budget)
	for {
		inflight, loading, netQuiet := tr.netState()
		if afterAction {
			netQuiet = min(netQuiet, time.Since(start))
		}
		var st []any
		res, err := cdp.Call(ctx, t, runtime.Evaluate, runtime.EvaluateParams{Expression: idleExpr, ReturnByValue: new(true)})
		if err == nil && res.ExceptionDetails == nil && res.Result != nil {
			if err := json.Unmarshal(res.Result.Value, &st); err != nil {
				// Not the probe's array (a page can replace the probe; an
				// undefined result has no value): like a failed evaluation,
				// not settled yet, and the loop polls on until the budget ends.
				st = nil
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if len(st) == 3 {
			timers, _ := st[0].(float64)
			quietMS, _ := st[1].(float64)
			ready, _ := st[2].(string)
			dq := time.Duration(quietMS * float64(time.Millisecond))
			if ready == "complete" && inflight == 0 && !loading && dq >= fastQuiet &&
				((timers == 0 && netQuiet >= fastQuiet) || (netQuiet >= networkQuiet && dq >= domQuiet)) {
				return nil
			}
			if time.Since(start) >= relaxedAfter && ready == "complete" && !loading && inflight <= relaxedInflight &&
				netQuiet >= networkQuiet && dq >= domQuiet {
				return nil
			}
		}
		if time.Now().After(end) {
			return nil
		}
		if err := pause.For(ctx, pollEvery); err != nil {
			return err
		}
	}
}
