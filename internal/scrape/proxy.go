package scrape

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/firegate/firegate/internal/browser"
	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/logsafe"
	"github.com/firegate/firegate/internal/proxypool"
)

// The proxy option.
//
// proxy basic goes through the basic pool (direct when it is empty);
// enhanced through the enhanced pool (then the basic pool, then direct,
// with a warning); auto, the default, tries basic and, when the answer
// looks blocked (blockedAnswer), retries once with enhanced, at no extra
// credit; an enhanced fetch also sends Chromium's TLS hello, HTTP/2
// settings and headers. location.country picks a proxy of that country in the pool used
// (with none: any proxy, and a warning when the request named the
// country). metadata.proxyUsed says which tier produced the document. A
// proxy that failed to connect is skipped for a minute, and the attempt is
// made once more through another.

// route is one attempt's way out and what it got.
type route struct {
	proxypool.Route
	// resp is the answer the attempt's document was made of.
	resp *fetch.Response
	// rendered says the browser made resp; media are the media URLs the
	// page requested there (the audio and video formats).
	rendered bool
	media    []string
}

// route chooses the way out of one attempt of tier.
func (e *Engine) route(o *Options, tier string) *route {
	c := proxypool.Choice{Country: o.Location.Country}
	if o.ProxySession != "" {
		host := o.URL
		if u, err := url.Parse(o.URL); err == nil {
			host = strings.ToLower(u.Hostname())
		}
		c.Sticky = o.ProxySession + "\x00" + host
	}
	return &route{Route: e.proxies.Route(tier, c, o.Location.CountryNamed)}
}

// fresh fetches and renders the page through the proxy the request's
// proxy option and location choose (see above), and sets the document's
// proxyUsed and the warnings of the choice.
func (e *Engine) fresh(ctx context.Context, opts *Options, engine *string) (*Document, error) {
	tier := proxypool.Basic
	if opts.Proxy == proxypool.Enhanced {
		tier = proxypool.Enhanced
	}
	rt, doc, err := e.attempt(ctx, opts, engine, tier)
	if err == nil && opts.Proxy == "auto" && e.enhancedDiffers() {
		if why := blockedAnswer(rt.resp); why != "" && ctx.Err() == nil {
			e.log.DebugContext(ctx, "answer looks blocked, retrying with the enhanced proxy", "url", logsafe.URL(opts.URL), "why", why, "proxy", rt.Proxy)
			ert, edoc, eerr := e.attempt(ctx, opts, engine, proxypool.Enhanced)
			switch {
			case eerr == nil:
				rt, doc = ert, edoc
			case ctx.Err() != nil && errors.Is(eerr, ErrTimeout):
				addWarning(doc, "The answer looked blocked ("+why+"); the retry through the enhanced proxy did not fit in the timeout.")
			default:
				addWarning(doc, "The answer looked blocked ("+why+"); the retry through the enhanced proxy failed: "+userMessage(eerr))
			}
		}
	}
	if err != nil {
		return nil, err
	}
	doc.Metadata.ProxyUsed = rt.Tier
	for _, w := range rt.Warnings {
		addWarning(doc, w)
	}
	if err := e.attachMedia(ctx, opts, doc, rt); err != nil {
		return nil, err
	}
	return doc, nil
}

// enhancedDiffers reports whether an enhanced attempt differs from a
// basic one, so that auto's retry of a blocked answer can get another
// answer: it always does, since an enhanced fetch sends Chromium's TLS
// hello, HTTP/2 settings and headers (fetch.Request.Chrome), and leaves
// through another proxy when any is configured.
func (e *Engine) enhancedDiffers() bool { return true }

// attempt runs freshOnce through a proxy of tier and, when that proxy
// failed to connect, once more through another.
func (e *Engine) attempt(ctx context.Context, opts *Options, engine *string, tier string) (*route, *Document, error) {
	rt := e.route(opts, tier)
	doc, err := e.freshOnce(ctx, opts, engine, rt)
	if err != nil && rt.Proxy != nil && (errors.Is(err, fetch.ErrProxy) || errors.Is(err, browser.ErrProxy)) && ctx.Err() == nil {
		e.log.WarnContext(ctx, "proxy failed, trying another", "proxy", rt.Proxy, "err", err)
		if next := e.route(opts, tier); next.Proxy != rt.Proxy {
			rt = next
			doc, err = e.freshOnce(ctx, opts, engine, rt)
		}
	}
	return rt, doc, err
}

// userMessage is the text a failure shows the API user.
func userMessage(err error) string {
	if f, ok := errors.AsType[*errcode.Failure](err); ok {
		return f.Msg
	}
	return rootCause(err)
}

// blockedAnswer says why an answer looks like the site refused the
// client rather than served the page ("HTTP 403", "a challenge page",
// "an empty page"), or "" when it does not.
func blockedAnswer(r *fetch.Response) string {
	if r == nil {
		return ""
	}
	switch r.StatusCode {
	case 403, 429, 503:
		return fmt.Sprintf("HTTP %d", r.StatusCode)
	}
	if r.StatusCode < 200 || r.StatusCode > 299 || r.StatusCode == 204 {
		return ""
	}
	if len(bytes.TrimSpace(r.Body)) == 0 {
		return "an empty page"
	}
	if kind := classifyContent(r); kind == contentHTML && challengePage(r.Body) {
		return "a challenge page"
	}
	return ""
}

// challengeMarkers are found only on the interstitial pages of bot
// checks (Cloudflare's challenge, DataDome's, PerimeterX's block page,
// Incapsula's), not on the pages they protect.
var challengeMarkers = []string{ //nolint:gochecknoglobals // constant list
	"<title>just a moment...</title>",
	"<title>attention required! | cloudflare</title>",
	"cf-browser-verification",
	"window._cf_chl_opt",
	"geo.captcha-delivery.com/captcha",
	`id="px-captcha"`,
	"_incapsula_resource?",
	"<title>access denied</title>",
}

// captchaWords mark a page that is only a captcha when the page is small.
var captchaWords = []string{"captcha", "verify you are human", "are you a robot", "unusual traffic"} //nolint:gochecknoglobals // constant list

// challengeSmall is the size under which a page that speaks of a captcha
// is taken for one.
const challengeSmall = 16 << 10

// challengePage reports whether an HTML body is a bot check's page.
func challengePage(body []byte) bool {
	head := body[:min(len(body), 256<<10)]
	low := lowerASCII(head)
	for _, m := range challengeMarkers {
		if bytes.Contains(low, []byte(m)) {
			return true
		}
	}
	if len(body) > challengeSmall {
		return false
	}
	for _, w := range captchaWords {
		if bytes.Contains(low, []byte(w)) {
			return true
		}
	}
	return false
}

// lowerASCII returns b with ASCII letters in lower case, for a search of
// the ASCII challengeMarkers and captchaWords: it finds them where
// bytes.ToLower(b) does, since other characters lower-case to non-ASCII
// bytes, but for two that become ASCII letters (U+0130 to "i", U+212A
// Kelvin to "k"), for which b is lowered by bytes.ToLower. It does not
// decode the page rune by rune as bytes.ToLower does on non-ASCII text
// (most pages), which cost 7% of a plain scrape's CPU.
func lowerASCII(b []byte) []byte {
	if bytes.Contains(b, []byte("\u0130")) || bytes.Contains(b, []byte("\u212a")) {
		return bytes.ToLower(b)
	}
	low := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	return low
}

// stealthLanguages are the languages of a browser render: the request's,
// or under the stealth profile (enhanced) the country's own when the
// request named a country but no languages, so that navigator.languages,
// Accept-Language and the locale agree with the time zone and the proxy.
func stealthLanguages(o *Options, rt *route) []string {
	if len(o.Location.Languages) > 0 || rt.Tier != proxypool.Enhanced || !o.Location.CountryNamed {
		return o.Location.Languages
	}
	if l := countryLanguage(o.Location.Country); l != "" {
		return []string{l + "-" + o.Location.Country, l}
	}
	return nil
}

// countryLanguage is the main language of a country's people online, for
// the countries proxies are most often asked for; "" for the others.
func countryLanguage(cc string) string {
	switch cc {
	case "DE", "AT", "CH", "LI":
		return "de"
	case "FR", "BE", "LU", "MC":
		return "fr"
	case "ES", "MX", "AR", "CO", "CL", "PE", "VE", "EC", "UY", "PY", "BO", "CR", "DO", "GT", "HN", "NI", "PA", "SV":
		return "es"
	case "IT", "SM":
		return "it"
	case "PT", "BR", "AO", "MZ":
		return "pt"
	case "NL":
		return "nl"
	case "PL":
		return "pl"
	case "SE":
		return "sv"
	case "NO":
		return "nb"
	case "DK":
		return "da"
	case "FI":
		return "fi"
	case "CZ":
		return "cs"
	case "SK":
		return "sk"
	case "HU":
		return "hu"
	case "RO", "MD":
		return "ro"
	case "BG":
		return "bg"
	case "GR", "CY":
		return "el"
	case "TR":
		return "tr"
	case "RU", "BY", "KZ":
		return "ru"
	case "UA":
		return "uk"
	case "JP":
		return "ja"
	case "KR":
		return "ko"
	case "CN", "TW", "HK":
		return "zh"
	case "TH":
		return "th"
	case "VN":
		return "vi"
	case "ID":
		return "id"
	case "IL":
		return "he"
	case "SA", "AE", "EG", "MA", "DZ", "TN", "QA", "KW", "JO", "LB", "IQ", "OM", "BH":
		return "ar"
	case "IN", "US", "GB", "CA", "AU", "NZ", "IE", "ZA", "PH", "NG", "KE", "SG":
		return "en"
	}
	return ""
}
