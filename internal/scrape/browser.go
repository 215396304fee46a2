package scrape

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/net/html"

	"github.com/firegate/firegate/internal/actions"
	"github.com/firegate/firegate/internal/browser"
	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/proxypool"
)

// Renderer renders pages in a browser; *browser.Pool implements it.
type Renderer interface {
	Available() error
	Render(ctx context.Context, req browser.Request) (*browser.Result, error)
}

// MediaStore keeps screenshots and PDFs of a team; *media.Store
// implements it.
type MediaStore interface {
	Put(ctx context.Context, teamID string, data []byte, contentType string) (string, error)
}

// browserOK reports whether a browser is configured and usable.
func (e *Engine) browserOK() bool {
	return e.browser != nil && e.media != nil && e.browser.Available() == nil
}

// needsBrowser reports whether the request can only be served by a
// browser: actions and screenshots need a real page.
func needsBrowser(o *Options) bool {
	return len(o.Actions) > 0 || o.HasFormat(FormatScreenshot) || o.HasFormat(FormatBranding) || o.Profile != nil
}

// prefersBrowser reports whether the request is better served by a browser
// when there is one: waiting and mobile emulation mean something only on a
// rendered page.
func prefersBrowser(o *Options) bool {
	return o.WaitFor > 0 || o.Mobile
}

// renderInBrowser renders the page in Chrome and turns the result into a
// fetched response plus the browser-only outputs.
func (e *Engine) renderInBrowser(ctx context.Context, o *Options, rt *route) (*fetch.Response, *browser.Result, error) {
	req := browser.Request{
		Proxy:         rt.Proxy,
		Stealth:       rt.Tier == proxypool.Enhanced,
		URL:           o.URL,
		Team:          o.TeamID,
		Headers:       o.Headers,
		Mobile:        o.Mobile,
		Languages:     stealthLanguages(o, rt),
		Timezone:      countryTimezone(o.Location.Country),
		SkipTLSVerify: o.SkipTLSVerification,
		BlockAds:      o.BlockAds,
		WaitFor:       o.WaitFor,
		Actions:       toBrowserActions(o.Actions),
	}
	hops := e.newHopGuard(o)
	req.CheckHop = hops.check
	if o.HasFormat(FormatBranding) {
		req.Actions = append(req.Actions, brandingAction())
	}
	if !o.ZeroDataRetention {
		// Each action's screenshot or PDF goes to the media store as soon
		// as it is taken (a zero data retention answer carries them inline).
		req.StoreMedia = func(ctx context.Context, data []byte, contentType string) (string, error) {
			return e.putMedia(ctx, o, data, contentType)
		}
	}
	if f, ok := o.FormatOf(FormatScreenshot); ok {
		req.Screenshot = &browser.Screenshot{FullPage: f.FullPage}
		if f.Quality != nil {
			req.Screenshot.Quality = *f.Quality
		}
		if f.Viewport != nil {
			req.Screenshot.Viewport = &browser.Viewport{Width: f.Viewport.Width, Height: f.Viewport.Height}
		}
	}
	var save func(*browser.State) error
	if o.Profile != nil {
		var err error
		if req.State, save, err = e.openProfile(ctx, o); err != nil {
			return nil, nil, err
		}
		req.SaveState = save != nil
	}
	req.RecordMedia = wantsMedia(o)
	res, err := e.browser.Render(ctx, req)
	if err == nil {
		rt.rendered, rt.media = true, res.MediaRequests
	}
	if save != nil {
		defer save(nil) // releases the lock if the render failed
	}
	if herr := hops.err(); herr != nil {
		return nil, nil, herr
	}
	if err != nil {
		return nil, nil, classifyBrowserError(ctx, o.URL, err)
	}
	if save != nil && res.State != nil {
		if err := save(res.State); err != nil {
			return nil, nil, err
		}
	}
	hdr := res.Header
	if hdr == nil {
		hdr = http.Header{}
	}
	resp := &fetch.Response{RequestURL: o.URL, URL: res.URL, StatusCode: res.StatusCode, Header: hdr,
		ContentType: "text/html", Body: []byte(res.HTML)}
	if hdr.Get("Content-Type") == "" && res.ContentType != "" {
		hdr.Set("Content-Type", res.ContentType)
	}
	return resp, res, nil
}

// attachBrowserOutputs stores screenshots and PDFs (inlines them under zero
// data retention) and fills the document's screenshot and actions fields.
func (e *Engine) attachBrowserOutputs(ctx context.Context, o *Options, res *browser.Result, doc *Document) error {
	if len(res.Screenshot) > 0 && o.HasFormat(FormatScreenshot) {
		u, err := e.putMedia(ctx, o, res.Screenshot, res.ScreenshotType)
		if err != nil {
			return err
		}
		doc.Screenshot = &u
	}
	if len(o.Actions) == 0 || res.Actions == nil {
		return nil
	}
	out := &ActionResults{Screenshots: []string{}, Scrapes: []ActionScrape{}, JavascriptReturns: []JavascriptValue{}, PDFs: []string{}}
	ref := func(m actions.Media) (string, error) {
		if m.Ref != "" {
			return m.Ref, nil
		}
		return e.putMedia(ctx, o, m.Data, m.ContentType)
	}
	for _, m := range res.Actions.Screenshots {
		u, err := ref(m)
		if err != nil {
			return err
		}
		out.Screenshots = append(out.Screenshots, u)
	}
	for _, m := range res.Actions.PDFs {
		u, err := ref(m)
		if err != nil {
			return err
		}
		out.PDFs = append(out.PDFs, u)
	}
	for _, s := range res.Actions.Scrapes {
		out.Scrapes = append(out.Scrapes, ActionScrape{URL: s.URL, HTML: s.HTML})
	}
	for _, r := range res.Actions.JavascriptReturns {
		out.JavascriptReturns = append(out.JavascriptReturns, JavascriptValue{Type: r.Type, Value: r.Value})
	}
	doc.Actions = out
	return nil
}

// putMedia stores a screenshot or PDF in the team's media and returns its
// URL; under zero data retention nothing is stored and the URL is a data:
// URI holding the bytes.
func (e *Engine) putMedia(ctx context.Context, o *Options, data []byte, contentType string) (string, error) {
	if o.ZeroDataRetention {
		return "data:" + contentType + ";base64," + base64.StdEncoding.EncodeToString(data), nil
	}
	id, err := e.media.Put(context.WithoutCancel(ctx), o.TeamID, data, contentType)
	if err != nil {
		return "", fmt.Errorf("scrape: store media: %w", err)
	}
	return e.mediaURL(id), nil
}

// navigationReason is Chrome's reason why a page did not load
// ("net::ERR_CONNECTION_REFUSED", "the response is a download, not a
// page"), taken from a browser.ErrNavigation error's text ("browser:
// navigate <url>: <reason>: browser: navigation failed"), or "" when it has
// none. Its root cause is the sentinel, whose text only names the package.
func navigationReason(err error) string {
	text, _, ok := strings.Cut(err.Error(), ": "+browser.ErrNavigation.Error())
	if !ok {
		return ""
	}
	_, text, ok = strings.Cut(text, "navigate ")
	if !ok {
		return ""
	}
	_, reason, _ := strings.Cut(text, ": ")
	return strings.TrimSpace(reason)
}

// classifyBrowserError maps browser errors to engine sentinels.
func classifyBrowserError(ctx context.Context, rawURL string, err error) error {
	var ae *actions.Error
	switch {
	case errors.As(err, &ae):
		return &errcode.Failure{Kind: ErrAction, Msg: fmt.Sprintf("Action %d (%s) failed: %s", ae.Index, ae.Type, ae.Reason), Cause: err}
	case errors.Is(err, context.Canceled) && ctx.Err() != context.DeadlineExceeded:
		return err
	case errors.Is(err, browser.ErrTimeout), errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &errcode.Failure{Kind: ErrTimeout, Msg: "The page took longer than the timeout to load and run its actions.", Cause: err}
	case errors.Is(err, browser.ErrDNS):
		return classifyFetchError(ctx, rawURL, fmt.Errorf("%w: %w", fetch.ErrDNS, err))
	case errors.Is(err, browser.ErrTLS):
		return classifyFetchError(ctx, rawURL, fmt.Errorf("%w: %w", fetch.ErrTLS, err))
	case errors.Is(err, browser.ErrBlocked):
		return classifyFetchError(ctx, rawURL, fmt.Errorf("%w: %w", fetch.ErrBlocked, err))
	case errors.Is(err, browser.ErrNavigation):
		msg := "Could not load " + rawURL + " in the browser."
		if reason := navigationReason(err); reason != "" {
			msg = "Could not load " + rawURL + " in the browser: " + reason + "."
		}
		return &errcode.Failure{Kind: ErrSite, Msg: msg, Cause: err}
	default:
		return fmt.Errorf("scrape: browser: %w", err)
	}
}

func toBrowserActions(in []Action) []actions.Action {
	if len(in) == 0 {
		return nil
	}
	out := make([]actions.Action, len(in))
	for i, a := range in {
		b := actions.Action{Type: a.Type, Milliseconds: a.Milliseconds, Selector: a.Selector, FullPage: a.FullPage,
			All: a.All, Text: a.Text, Key: a.Key, Direction: a.Direction, Script: a.Script, PDFFormat: a.PDFFormat,
			Landscape: a.Landscape, Scale: a.Scale}
		if a.Quality != nil {
			b.Quality = *a.Quality
		}
		if a.Viewport != nil {
			b.Viewport = &actions.Viewport{Width: a.Viewport.Width, Height: a.Viewport.Height}
		}
		out[i] = b
	}
	return out
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// countryTimezone is the main IANA zone of a country, for the browser's
// timezone emulation; "" leaves the browser's own.
func countryTimezone(cc string) string {
	switch strings.ToUpper(cc) {
	case "US", "US-GENERIC":
		return "America/New_York"
	case "CA":
		return "America/Toronto"
	case "MX":
		return "America/Mexico_City"
	case "BR":
		return "America/Sao_Paulo"
	case "AR":
		return "America/Argentina/Buenos_Aires"
	case "GB":
		return "Europe/London"
	case "IE":
		return "Europe/Dublin"
	case "FR":
		return "Europe/Paris"
	case "DE":
		return "Europe/Berlin"
	case "ES":
		return "Europe/Madrid"
	case "IT":
		return "Europe/Rome"
	case "NL":
		return "Europe/Amsterdam"
	case "BE":
		return "Europe/Brussels"
	case "CH":
		return "Europe/Zurich"
	case "AT":
		return "Europe/Vienna"
	case "SE":
		return "Europe/Stockholm"
	case "NO":
		return "Europe/Oslo"
	case "DK":
		return "Europe/Copenhagen"
	case "FI":
		return "Europe/Helsinki"
	case "PL":
		return "Europe/Warsaw"
	case "PT":
		return "Europe/Lisbon"
	case "CZ":
		return "Europe/Prague"
	case "GR":
		return "Europe/Athens"
	case "TR":
		return "Europe/Istanbul"
	case "RU":
		return "Europe/Moscow"
	case "UA":
		return "Europe/Kyiv"
	case "IL":
		return "Asia/Jerusalem"
	case "AE":
		return "Asia/Dubai"
	case "IN":
		return "Asia/Kolkata"
	case "CN":
		return "Asia/Shanghai"
	case "HK":
		return "Asia/Hong_Kong"
	case "TW":
		return "Asia/Taipei"
	case "JP":
		return "Asia/Tokyo"
	case "KR":
		return "Asia/Seoul"
	case "SG":
		return "Asia/Singapore"
	case "ID":
		return "Asia/Jakarta"
	case "TH":
		return "Asia/Bangkok"
	case "VN":
		return "Asia/Ho_Chi_Minh"
	case "PH":
		return "Asia/Manila"
	case "AU":
		return "Australia/Sydney"
	case "NZ":
		return "Pacific/Auckland"
	case "ZA":
		return "Africa/Johannesburg"
	case "EG":
		return "Africa/Cairo"
	case "NG":
		return "Africa/Lagos"
	case "KE":
		return "Africa/Nairobi"
	}
	return ""
}
