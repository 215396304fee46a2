package browser

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/security"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"

	"github.com/firegate/firegate/internal/actions"
	"github.com/firegate/firegate/internal/netguard"
	"github.com/firegate/firegate/internal/pause"
	"github.com/firegate/firegate/internal/proxypool"
)

// Viewport is a width and height in CSS pixels.
type Viewport = actions.Viewport

// Screenshot asks Render for a screenshot after the page settled and the
// actions ran.
type Screenshot struct {
	FullPage bool
	Quality  int       // 1..100 = JPEG, 0 = PNG
	Viewport *Viewport // the tab's viewport for the whole render; nil = default
}

// Request is one page to render.
type Request struct {
	URL string
	// Team owns the render: browser contexts are never shared between
	// teams.
	Team string
	// Headers are sent with the requests to the target's host (the page,
	// its redirects on that host and its sub-resources there), never to
	// other hosts; a Cookie entry becomes cookies of that host and a
	// User-Agent entry overrides the user agent of the whole page.
	// Credentials in the URL are sent as basic authorization the same way.
	Headers map[string]string
	Mobile  bool // emulate a phone: 390x844 viewport, mobile UA, touch
	// Languages are locale tags in priority order: Accept-Language,
	// navigator.language(s) and the Intl locale.
	Languages []string
	// Timezone is an IANA zone (the caller derives it from the country).
	Timezone      string
	SkipTLSVerify bool
	// BlockAds blocks requests to the ad/tracker list and hides common
	// cookie-consent banners.
	BlockAds bool
	// WaitFor is the least time waited after the navigation, the smart
	// wait included.
	WaitFor    time.Duration
	Actions    []actions.Action
	Screenshot *Screenshot
	// StoreMedia, when set, writes each action's screenshot or PDF out as
	// soon as it is taken (actions.Env.Store); the results then carry its
	// reference instead of the bytes.
	StoreMedia func(ctx context.Context, data []byte, contentType string) (string, error)
	// State, when set, is loaded before navigation (a profile's cookies and
	// storage); SaveState returns the storage at the end in Result.State.
	State     *State
	SaveState bool
	// CheckHop, when set, is asked about every document request of the
	// main frame (the page, each redirect hop, later navigations); a
	// request it refuses fails as blocked by the client.
	CheckHop func(u *url.URL) error
	// Stealth hides what gives an automated headless Chrome away (see
	// stealth.go): proxy enhanced.
	Stealth bool
	// Proxy, when set, carries every connection of the render (the page,
	// its sub-resources, workers and WebSockets) behind the guarded proxy;
	// nil connects directly (through the guarded proxy only).
	Proxy *proxypool.Proxy
	// RecordMedia lists the media the page requested in
	// Result.MediaRequests (the audio and video formats): media-type
	// requests, even those not downloaded, and fetches of media files and
	// manifests.
	RecordMedia bool
}

// Result is the rendered page.
type Result struct {
	URL         string // final URL after redirects and actions
	StatusCode  int    // of the main document's response, after redirects
	Header      http.Header
	ContentType string
	HTML        string // document.documentElement.outerHTML after waits and actions

	Screenshot     []byte
	ScreenshotType string // image/png or image/jpeg

	// Actions holds the action outputs; nil when no actions were given.
	Actions *actions.Results
	// State is the browser storage after the render, when SaveState.
	State *State
	// MediaRequests are the media URLs the page requested, in order, at
	// most 32 (RecordMedia).
	MediaRequests []string
}

// defaultTimeout bounds a Render whose ctx has no deadline.
const defaultTimeout = 60 * time.Second

// Viewports.
const (
	desktopWidth, desktopHeight = 1920, 1080
	mobileWidth, mobileHeight   = 390, 844
)

// Render loads req.URL in a fresh tab, waits until it settles, runs the
// actions and returns the page. The tab is reset or closed after the render
// (the caller does not wait for it). If Chrome died it
// is restarted, and a render that failed because Chrome died is retried
// once.
func (p *Pool) Render(ctx context.Context, req Request) (*Result, error) {
	u, err := url.Parse(req.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("browser: navigate %q: not an http(s) URL: %w", redactURL(req.URL), ErrNavigation)
	}
	if err := newGuard(p.policy, nil, false).checkHost(u); err != nil {
		return nil, fmt.Errorf("browser: navigate %s: %w: %w", redactURL(req.URL), ErrBlocked, err)
	}
	req = scopeCredentials(req, u)
	if err := actions.Validate(req.Actions); err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultTimeout)
		defer cancel()
	}
	release, err := p.tabs.Acquire(ctx, req.Team)
	if err != nil {
		return nil, ctxError("wait for a tab", err)
	}
	defer release()
	// The tab is held for at most MaxHold in all.
	ctx, cancel := context.WithTimeoutCause(ctx, p.opts.MaxHold, errHeld)
	defer cancel()

	for attempt := 0; ; attempt++ {
		inst, err := p.instance(ctx)
		if err != nil {
			return nil, p.holdError(ctx, err)
		}
		res, err := p.render(ctx, inst, req)
		if err != nil && attempt == 0 && ctx.Err() == nil && (inst.ctx.Err() != nil || !p.alive(inst)) {
			p.log.WarnContext(ctx, "chrome died during render, retrying", "url", redactURL(req.URL), "err", err)
			continue
		}
		return res, p.holdError(ctx, err)
	}
}

// errHeld is the cause of a render's end at Options.MaxHold.
var errHeld = errors.New("browser: the render held its tab for the most one render may")

// holdError names MaxHold in the error of a render it ended (still
// ErrTimeout and context.DeadlineExceeded).
func (p *Pool) holdError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if dl, ok := ctx.Deadline(); ok && errors.Is(err, context.DeadlineExceeded) && !time.Now().Before(dl) {
		// The render's own contexts share ctx's deadline on timers of
		// their own: one may fire first, and ctx's cause is set a moment
		// later (TestRenderHoldBound saw it under load). Past the
		// deadline, ctx is done at once.
		<-ctx.Done()
	}
	if !errors.Is(context.Cause(ctx), errHeld) {
		return err
	}
	return fmt.Errorf("browser: render: held a tab for %v, the most one render may (BROWSER_MAX_TAB_HOLD): %w: %w", p.opts.MaxHold, ErrTimeout, context.DeadlineExceeded)
}

// render does one attempt of Render on inst.
func (p *Pool) render(ctx context.Context, inst *instance, req Request) (res *Result, err error) {
	start := time.Now()
	route, err := p.route(req.Proxy)
	if err != nil {
		return nil, err
	}
	sl, tb, err := p.takeTab(ctx, inst, req.Team, carriesState(req), route)
	if err != nil {
		return nil, p.runError(ctx, inst, "open tab", err)
	}
	// Close the tab after returning: the caller does not wait for it.
	defer func() {
		// A context where certificate errors were ignored may keep a
		// connection to the host that a later render would reuse without
		// checking: it serves no other render.
		ok := err == nil && !req.SkipTLSVerify
		p.closing.Go(func() { p.releaseTab(context.WithoutCancel(ctx), inst, sl, tb, ok) })
	}()
	// A message over the bound for the tab ends the render (see pipe.go).
	abortCtx, abort := context.WithCancelCause(tb.ctx)
	defer abort(nil)
	tb.setAbort(abort)
	defer tb.setAbort(nil)
	defer func() {
		if cause := context.Cause(abortCtx); err != nil && errors.Is(cause, ErrMessageTooLarge) {
			res, err = nil, fmt.Errorf("browser: navigate %s: %w: %w", redactURL(req.URL), cause, ErrNavigation)
		}
	}()
	t, tr := tb.t, tb.tr
	dl, _ := ctx.Deadline()
	runCtx, cancelRun := context.WithDeadline(abortCtx, dl)
	defer cancelRun()
	stop := context.AfterFunc(ctx, cancelRun)
	defer stop()
	fail := func(stage string, err error) error { return p.runError(ctx, inst, stage, err) }

	// Every request of the page pauses in the Fetch domain: the guard's
	// early refusal, headers for the target only, and authentication
	// challenges cancelled (the 401 page is the answer; Chrome never
	// prompts or keeps credentials).
	g := newGuard(p.policy, p.adHosts, req.BlockAds)
	// Nothing shows pictures, media or fonts unless a screenshot is taken
	// (actions may take one): they are not downloaded.
	g.skipMedia = offscreen(req)
	g.checkHop = req.CheckHop
	if req.RecordMedia {
		g.media = &mediaRequests{}
	}
	sc := newScope(req)
	wait := p.guardRequests(runCtx, t, g, sc, tr)
	defer func() { cancelRun(); wait() }()
	tb.onReset(fetch.CommandDisable, nil)
	if _, err := cdp.Call(runCtx, t, fetch.Enable, fetch.EnableParams{
		Patterns:           []*fetch.RequestPattern{{URLPattern: "*"}},
		HandleAuthRequests: new(true),
	}); err != nil {
		return nil, fail("enable request guard", err)
	}
	answerDialogs(runCtx, t)
	env, err := p.setup(runCtx, inst, sl.id, tb, req)
	if err != nil {
		return nil, fail("set up tab", err)
	}
	var restore page.ScriptIdentifier
	if req.State != nil {
		if restore, err = p.loadState(runCtx, inst, sl, tb, req.State); err != nil {
			return nil, fail("load profile", err)
		}
	}

	// As a link followed, not an address typed: Chrome then keeps the
	// tab's browsing instance, and its renderer process, when the page is
	// of another site than the tab's last one; a typed address started a
	// renderer process per render (BenchmarkRenderSequence, two-sites:
	// 1 process and 107-125 ms of Chrome's CPU per render before, none and
	// 77 ms after). Processes stay within the team's browser context.
	nav, err := cdp.Call(runCtx, t, page.Navigate, page.NavigateParams{URL: req.URL, TransitionType: page.TransitionTypeLink})
	if err != nil {
		return nil, fail("navigate", err)
	}
	if nav.ErrorText != "" || nav.IsDownload {
		return nil, p.navError(req.URL, nav.ErrorText, nav.IsDownload, tr)
	}
	tr.mu.Lock()
	tr.loaderID = nav.LoaderID
	tr.mu.Unlock()
	navigated := time.Now()

	remaining := func() time.Duration { return time.Until(dl) }
	if err := settle(runCtx, t, tr, min(smartWaitMax, remaining()/2), false); err != nil {
		return nil, fail("smart wait", err)
	}
	if err := proxyRefusal(req.URL, tr); err != nil {
		return nil, err
	}
	if restore != "" {
		// Restore storage in the first page's documents only: later
		// documents must see what the page itself stored.
		if _, err := cdp.Call(runCtx, t, page.RemoveScriptToEvaluateOnNewDocument, page.RemoveScriptToEvaluateOnNewDocumentParams{Identifier: restore}); err != nil {
			return nil, fail("load profile", err)
		}
	}
	// waitFor counts from the navigation: the smart wait's time is part
	// of it, so a page that settled early waits only what is left.
	if wait := req.WaitFor - time.Since(navigated); req.WaitFor > 0 && wait > 0 {
		if err := pause.For(runCtx, wait); err != nil {
			return nil, fail("waitFor", err)
		}
	}

	res = &Result{}
	if len(req.Actions) > 0 {
		env.Pixels = actions.NewPixelBudget(actions.RequestPixels)
		env.Store = req.StoreMedia
		env.Settle = func(ctx context.Context) error {
			return settle(ctx, t, tr, min(settleMax, remaining()/3), true)
		}
		ar, err := actions.Run(runCtx, t, env, req.Actions)
		if err != nil {
			var ae *actions.Error
			if errors.As(err, &ae) {
				return nil, err
			}
			return nil, fail("actions", err)
		}
		res.Actions = &ar
	}
	if shot := req.Screenshot; shot != nil {
		// The screenshot format has a budget of its own: one image.
		shotEnv := env
		shotEnv.Pixels = nil
		m, err := actions.Screenshot(runCtx, t, shotEnv, shot.FullPage, shot.Quality, nil)
		if err != nil {
			return nil, fail("screenshot", err)
		}
		res.Screenshot, res.ScreenshotType = m.Data, m.ContentType
	}
	doc, err := actions.Capture(runCtx, t)
	if err != nil {
		var ae *actions.Error
		if errors.As(err, &ae) {
			err = errors.New(ae.Reason)
		}
		return nil, fail("read html", err)
	}
	res.URL, res.HTML = doc.URL, doc.HTML
	res.MediaRequests = g.media.list()
	if req.SaveState {
		if res.State, err = p.readState(runCtx, inst, sl, tb); err != nil {
			return nil, fail("save profile", err)
		}
	}

	tr.mu.Lock()
	resp := tr.mainResp
	tr.mu.Unlock()
	res.StatusCode, res.Header = http.StatusOK, http.Header{}
	if resp != nil {
		res.StatusCode = int(resp.Status)
		for k, v := range resp.Headers {
			val, _ := v.(string)
			for line := range strings.SplitSeq(val, "\n") {
				res.Header.Add(k, line)
			}
		}
		res.ContentType = res.Header.Get("Content-Type")
		if res.ContentType == "" {
			res.ContentType = resp.MimeType
		}
	}
	p.log.DebugContext(ctx, "render done", "url", redactURL(req.URL), "status", res.StatusCode, "elapsed_ms", time.Since(start).Milliseconds())
	return res, nil
}

// setup applies the request's emulation to the tab before navigation and
// returns the actions environment. What a later render would not set again
// is undone when the tab is reset. The instrumentation script is already
// on the tab (see openTab).
func (p *Pool) setup(ctx context.Context, inst *instance, slotID cdp.BrowserContextID, tb *tab, req Request) (actions.Env, error) {
	t := tb.t
	env := actions.Env{Viewport: Viewport{Width: desktopWidth, Height: desktopHeight}, Mobile: req.Mobile}
	if req.Mobile {
		env.Viewport = Viewport{Width: mobileWidth, Height: mobileHeight}
	}
	screen := Viewport{}
	if req.Stealth && !req.Mobile {
		// A maximised window's viewport on a desktop screen (stealth.go).
		env.Viewport, screen = stealthViewport(), Viewport{Width: stealthScreenW, Height: stealthScreenH}
	}
	if s := req.Screenshot; s != nil && s.Viewport != nil {
		env.Viewport = *s.Viewport
	}
	if screen.Width < env.Viewport.Width || screen.Height < env.Viewport.Height {
		screen = env.Viewport
	}
	if req.Stealth {
		if err := p.applyStealth(ctx, tb, req.Mobile); err != nil {
			return env, err
		}
	}
	if req.BlockAds {
		res, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: hideBannersScript()})
		if err != nil {
			return env, err
		}
		tb.onReset(page.CommandRemoveScriptToEvaluateOnNewDocument, page.RemoveScriptToEvaluateOnNewDocumentParams(res))
	}
	metrics := emulation.SetDeviceMetricsOverrideParams{
		Width: int64(env.Viewport.Width), Height: int64(env.Viewport.Height), DeviceScaleFactor: 1, Mobile: req.Mobile,
		ScreenWidth: int64(screen.Width), ScreenHeight: int64(screen.Height),
	}
	if offscreen(req) {
		// The page lays out in the viewport as it would on screen, but
		// Chrome paints only the tab's tiny window: nothing looks at the
		// pixels, and painting a 1920x1080 viewport was a fifth of the
		// CPU of a small page's render (BENCHMARKS.md).
		metrics.DontSetVisibleSize = new(true)
	} else {
		// A render that looks (a screenshot, actions) paints the whole
		// viewport; the next render of the tab may not.
		tb.onReset(emulation.CommandClearDeviceMetricsOverride, nil)
	}
	if _, err := cdp.Call(ctx, t, emulation.SetDeviceMetricsOverride, metrics); err != nil {
		return env, err
	}
	ua, platform := inst.userAgent, "Linux x86_64"
	if req.Stealth {
		// Chrome's reduced User-Agent, as a desktop Chrome sends it.
		ua = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/" + inst.major + ".0.0.0 Safari/537.36"
	}
	if req.Mobile {
		tb.onReset(emulation.CommandSetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: false})
		if _, err := cdp.Call(ctx, t, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: true, MaxTouchPoints: 5}); err != nil {
			return env, err
		}
		ua = "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/" + inst.major + ".0.0.0 Mobile Safari/537.36"
		platform = "Linux armv8l"
	}
	ownUA := true
	for k, v := range req.Headers {
		if strings.EqualFold(k, "User-Agent") {
			ua, ownUA = v, false
		}
	}
	uaParams := emulation.SetUserAgentOverrideParams{UserAgent: ua, AcceptLanguage: acceptLanguage(req.Languages), Platform: platform}
	if ownUA {
		// An override without metadata empties navigator.userAgentData's
		// brands, which no desktop Chrome has; a User-Agent the request
		// sets itself may name another browser, so it gets none.
		uaParams.UserAgentMetadata = chromeMetadata(inst.major, req.Mobile)
	}
	if _, err := cdp.Call(ctx, t, emulation.SetUserAgentOverride, uaParams); err != nil {
		return env, err
	}
	if len(req.Languages) > 0 {
		tb.onReset(emulation.CommandSetLocaleOverride, emulation.SetLocaleOverrideParams{})
		if _, err := cdp.Call(ctx, t, emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{Locale: req.Languages[0]}); err != nil {
			p.log.WarnContext(ctx, "locale override refused", "locale", req.Languages[0], "err", err)
		}
	}
	if req.Timezone != "" {
		tb.onReset(emulation.CommandSetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: ""})
		if _, err := cdp.Call(ctx, t, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: req.Timezone}); err != nil {
			p.log.WarnContext(ctx, "timezone override refused", "timezone", req.Timezone, "err", err)
		}
	}
	// No HTTP cache: a response cached for one caller (say, with its
	// cookies) must never be served to the next one in this slot.
	if _, err := cdp.Call(ctx, t, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		return env, err
	}
	if cookies := headerCookies(req); len(cookies) > 0 {
		// Cookies of the target's host only; the slot's cookies are
		// cleared after the render.
		b := chromedp.FromContext(inst.ctx).Browser
		if _, err := cdp.Call(ctx, b, storage.SetCookies, storage.SetCookiesParams{Cookies: cookies, BrowserContextID: slotID}); err != nil {
			return env, fmt.Errorf("set cookies: %w", err)
		}
	}
	if req.SkipTLSVerify {
		tb.onReset(security.CommandSetIgnoreCertificateErrors, security.SetIgnoreCertificateErrorsParams{Ignore: false})
		if _, err := cdp.Call(ctx, t, security.SetIgnoreCertificateErrors, security.SetIgnoreCertificateErrorsParams{Ignore: true}); err != nil {
			return env, err
		}
	}
	return env, nil
}

// offscreen reports whether nothing of the render looks at its pixels (no
// screenshot, no actions, which may take one or click at a point).
func offscreen(req Request) bool {
	return req.Screenshot == nil && len(req.Actions) == 0
}

// acceptLanguage joins locale tags in priority order; Chrome adds the
// q-values itself ("de-DE,en" is sent as "de-DE,en;q=0.9").
func acceptLanguage(langs []string) string {
	var out []string
	for _, l := range langs {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, ",")
}

// guardRequests answers every paused request of the tab: continue, or fail
// it when the guard refuses it. The returned func waits for the handlers,
// which stop when ctx ends.
func (p *Pool) guardRequests(ctx context.Context, t *chromedp.Target, g *guard, sc *scope, tr *tracker) func() {
	events := cdp.Events(ctx, t, fetch.RequestPaused)
	auths := cdp.Events(ctx, t, fetch.AuthRequired)
	var wg sync.WaitGroup
	wg.Go(func() {
		for ev, err := range events {
			if err != nil {
				return
			}
			wg.Go(func() { p.decide(ctx, t, g, sc, tr, ev) })
		}
	})
	wg.Go(func() {
		for ev, err := range auths {
			if err != nil {
				return
			}
			wg.Go(func() {
				_, _ = cdp.Call(ctx, t, fetch.ContinueWithAuth, fetch.ContinueWithAuthParams{
					RequestID:             ev.RequestID,
					AuthChallengeResponse: &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseCancelAuth},
				})
			})
		}
	})
	return wg.Wait
}

// decide checks one paused request.
func (p *Pool) decide(ctx context.Context, t *chromedp.Target, g *guard, sc *scope, tr *tracker, ev fetch.EventRequestPaused) {
	if ev.Request == nil {
		return
	}
	tr.mu.Lock()
	isMain := ev.ResourceType == network.ResourceTypeDocument && ev.FrameID == tr.mainFrame
	tr.mu.Unlock()
	if g.media != nil {
		g.media.note(ev.ResourceType, ev.Request.URL)
	}
	v := g.check(ev.Request.URL, isMain)
	if v == allow && g.skipMedia && skippable(ev.ResourceType) {
		v = blockAd
	}
	if v == allow && isMain && g.checkHop != nil {
		if u, err := url.Parse(ev.Request.URL); err != nil || g.checkHop(u) != nil {
			v = blockAd // the caller's refusal, not the network policy's
		}
	}
	if v == allow {
		params := fetch.ContinueRequestParams{RequestID: ev.RequestID, Headers: sc.headersFor(ev.Request)}
		if _, err := cdp.Call(ctx, t, fetch.ContinueRequest, params); err != nil && ctx.Err() == nil {
			p.log.DebugContext(ctx, "continue request", "url", redactURL(ev.Request.URL), "err", err)
		}
		return
	}
	if v == blockPrivate {
		p.log.InfoContext(ctx, "blocked request to a non-public address", "url", redactURL(ev.Request.URL), "main", isMain)
		tr.mu.Lock()
		if isMain {
			tr.mainBlock = true
		}
		tr.mu.Unlock()
	}
	if _, err := cdp.Call(ctx, t, fetch.FailRequest, fetch.FailRequestParams{
		RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient,
	}); err != nil && ctx.Err() == nil {
		p.log.DebugContext(ctx, "fail request", "url", redactURL(ev.Request.URL), "err", err)
	}
}

// answerDialogs accepts every JavaScript dialog (alert, confirm, prompt,
// beforeunload) of the tab until ctx ends, so that none blocks the page.
func answerDialogs(ctx context.Context, t *chromedp.Target) {
	events := cdp.Events(ctx, t, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range events {
			if err != nil {
				return
			}
			_, _ = cdp.Call(ctx, t, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{
				Accept: true, PromptText: ev.DefaultPrompt,
			})
		}
	}()
}

// navError classifies a failed navigation: refused by the in-page guard
// or by the proxy (on the page's host or a host it redirected to), a
// download, a lookup or TLS failure.
func (p *Pool) navError(rawURL, text string, download bool, tr *tracker) error {
	rawURL = redactURL(rawURL)
	tr.mu.Lock()
	blocked := tr.mainBlock
	hosts := slices.Clone(tr.docHosts)
	tr.mu.Unlock()
	if !blocked && !download && (strings.Contains(text, "ERR_TUNNEL_CONNECTION_FAILED") || strings.Contains(text, "ERR_PROXY_")) {
		// Chrome only says the proxy failed it: the proxy says why.
		if u, err := url.Parse(rawURL); err == nil {
			hosts = append(hosts, u.Hostname())
		}
		for _, h := range slices.Backward(hosts) {
			if f, ok := p.refused.lookup(h); ok {
				return reasonError(rawURL, f.reason)
			}
		}
	}
	switch {
	case blocked:
		return fmt.Errorf("browser: navigate %s: %w", rawURL, ErrBlocked)
	case download:
		return fmt.Errorf("browser: navigate %s: the response is a download, not a page: %w", rawURL, ErrNavigation)
	case strings.Contains(text, "ERR_NAME_NOT_RESOLVED") || strings.Contains(text, "ERR_NAME_RESOLUTION_FAILED"):
		return fmt.Errorf("browser: navigate %s: %s: %w: %w", rawURL, text, ErrNavigation, ErrDNS)
	case strings.Contains(text, "ERR_CERT_") || strings.Contains(text, "ERR_SSL_"):
		return fmt.Errorf("browser: navigate %s: %s: %w: %w", rawURL, text, ErrNavigation, ErrTLS)
	}
	return fmt.Errorf("browser: navigate %s: %s: %w", rawURL, text, ErrNavigation)
}

// reasonError is the error of a main document the proxy could not reach,
// in Chrome's words where it has them.
func reasonError(rawURL, reason string) error {
	switch reason {
	case netguard.ReasonBlocked:
		return fmt.Errorf("browser: navigate %s: %w", rawURL, ErrBlocked)
	case netguard.ReasonDNS:
		return fmt.Errorf("browser: navigate %s: net::ERR_NAME_NOT_RESOLVED: %w: %w", rawURL, ErrNavigation, ErrDNS)
	case netguard.ReasonRefused:
		return fmt.Errorf("browser: navigate %s: net::ERR_CONNECTION_REFUSED: %w", rawURL, ErrNavigation)
	case netguard.ReasonTimeout:
		return fmt.Errorf("browser: navigate %s: net::ERR_CONNECTION_TIMED_OUT: %w", rawURL, ErrNavigation)
	case netguard.ReasonProxy:
		return fmt.Errorf("browser: navigate %s: net::ERR_PROXY_CONNECTION_FAILED: %w: %w", rawURL, ErrNavigation, ErrProxy)
	}
	return fmt.Errorf("browser: navigate %s: net::ERR_CONNECTION_FAILED: %w", rawURL, ErrNavigation)
}

// runError converts an error of a tab step: deadline -> ErrTimeout, a dead
// Chrome -> ErrUnavailable.
func (p *Pool) runError(ctx context.Context, inst *instance, stage string, err error) error {
	if ctx.Err() != nil {
		return ctxError(stage, ctx.Err())
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ctxError(stage, context.DeadlineExceeded)
	}
	if inst.ctx.Err() != nil || !p.alive(inst) {
		return fmt.Errorf("browser: %s: chrome exited: %w (%v)", stage, ErrUnavailable, err)
	}
	return fmt.Errorf("browser: %s: %w", stage, err)
}
