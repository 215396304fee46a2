package browser

import (
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/network"

	"github.com/firegate/firegate/internal/netguard"
)

// defaultAdHosts is the bundled ad and tracker block list: one domain per
// line, matched against a request's host and all its parent domains.
const defaultAdHosts = `
doubleclick.net
googlesyndication.com
googleadservices.com
google-analytics.com
googletagmanager.com
googletagservices.com
adservice.google.com
2mdn.net
amazon-adsystem.com
adnxs.com
adsrvr.org
advertising.com
criteo.com
criteo.net
taboola.com
outbrain.com
scorecardresearch.com
quantserve.com
quantcount.com
hotjar.com
hotjar.io
mixpanel.com
api.segment.io
cdn.segment.com
connect.facebook.net
pubmatic.com
rubiconproject.com
openx.net
casalemedia.com
moatads.com
adform.net
smartadserver.com
yieldmo.com
media.net
bidswitch.net
3lift.com
sharethrough.com
teads.tv
serving-sys.com
adroll.com
chartbeat.com
chartbeat.net
nr-data.net
bat.bing.com
ads-twitter.com
analytics.twitter.com
ads.linkedin.com
clarity.ms
mc.yandex.ru
doubleverify.com
adsafeprotected.com
mathtag.com
demdex.net
omtrdc.net
krxd.net
bluekai.com
rlcdn.com
tapad.com
crwdcntrl.net
id5-sync.com
`

// cookieBannerCSS hides the common cookie-consent banners when blockAds is
// on. It only hides them; they stay in the HTML.
const cookieBannerCSS = `#onetrust-consent-sdk, #onetrust-banner-sdk, #CybotCookiebotDialog,
#CybotCookiebotDialogBodyUnderlay, #usercentrics-root, #didomi-host, .qc-cmp2-container,
#qc-cmp2-container, .fc-consent-root, #truste-consent-track, .truste_box_overlay, .osano-cm-window,
#cmpbox, #cmpbox2, .cc-window, .cc-banner, #cookie-law-info-bar, #cookiescript_injected,
.cookie-notice, #cookie-notice, .cookie-banner, #cookie-banner, #cookieConsent, .cookieConsent,
#gdpr-cookie-message, .gdpr-banner, #sp_message_container, [id^="sp_message_container_"],
.evidon-banner, #iubenda-cs-banner, .iubenda-cs-container, #klaro, .klaro,
#moove_gdpr_cookie_info_bar, #cookie-consent-banner, [aria-label="cookieconsent"]
{ display: none !important; visibility: hidden !important; }`

// parseHosts splits a block list into lower-case domains.
func parseHosts(list string) []string {
	var out []string
	for line := range strings.Lines(list) {
		if h := strings.ToLower(strings.TrimSpace(line)); h != "" && !strings.HasPrefix(h, "#") {
			out = append(out, strings.TrimSuffix(h, "."))
		}
	}
	return out
}

// guard is the early, cheap refusal of the requests a page makes, in the
// DevTools Fetch domain: ad hosts (when blocking ads), schemes other than
// http(s)/ws(s), and hosts the network policy refuses without a lookup
// (address literals, *.localhost). It is not the network policy: every
// connection Chrome makes goes through the guarded proxy, which resolves
// names itself and refuses at dial time (see netguard).
type guard struct {
	policy  *netguard.Policy
	adHosts map[string]bool
	// skipMedia fails image, media and font requests (no screenshot).
	skipMedia bool
	// checkHop is Request.CheckHop.
	checkHop func(u *url.URL) error
	// media records the page's media requests (Request.RecordMedia); nil
	// records none.
	media *mediaRequests
}

// skippable reports the resource types a render without screenshots does
// not need.
func skippable(t network.ResourceType) bool {
	switch t {
	case network.ResourceTypeImage, network.ResourceTypeMedia, network.ResourceTypeFont:
		return true
	}
	return false
}

func newGuard(policy *netguard.Policy, adHosts []string, blockAds bool) *guard {
	g := &guard{policy: policy}
	if blockAds {
		g.adHosts = make(map[string]bool, len(adHosts))
		for _, h := range adHosts {
			g.adHosts[h] = true
		}
	}
	return g
}

// active reports whether any request needs checking.
func (g *guard) active() bool { return !g.policy.AllowsAll() || len(g.adHosts) > 0 }

// verdict is the guard's decision on one request.
type verdict int

const (
	allow verdict = iota
	blockAd
	blockPrivate
)

// check decides on rawURL. isMain exempts the page itself from ad blocking.
func (g *guard) check(rawURL string, isMain bool) verdict {
	u, err := url.Parse(rawURL)
	if err != nil {
		return blockPrivate
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
	case "data", "blob", "about":
		return allow
	default:
		if g.policy.AllowsAll() {
			return allow
		}
		return blockPrivate
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if !isMain && g.isAdHost(host) {
		return blockAd
	}
	if g.checkHost(u) != nil {
		return blockPrivate
	}
	return allow
}

// isAdHost reports whether host or one of its parent domains is listed.
func (g *guard) isAdHost(host string) bool {
	if len(g.adHosts) == 0 {
		return false
	}
	for h := host; h != ""; {
		if g.adHosts[h] {
			return true
		}
		_, rest, ok := strings.Cut(h, ".")
		if !ok {
			break
		}
		h = rest
	}
	return false
}

// refusal is what the proxy said of a host.
type refusal struct {
	at     time.Time
	reason string // netguard.Reason*
}

// refusals remembers the hosts the proxy could not reach in the last
// minute, so that a navigation that failed on one (Chrome only says the
// tunnel failed) is named. It holds at most refusalsMax hosts.
type refusals struct {
	mu sync.Mutex
	m  map[string]refusal
}

const (
	refusalTTL  = time.Minute
	refusalsMax = 4096
)

// note records a refusal (netguard.ProxyOptions.OnRefuse).
func (r *refusals) note(host, reason string) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.m) >= refusalsMax {
		clear(r.m)
	}
	r.m[host] = refusal{at: time.Now(), reason: reason}
}

// lookup returns the recent refusal of host, if any.
func (r *refusals) lookup(host string) (refusal, bool) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	r.mu.Lock()
	defer r.mu.Unlock()
	f, ok := r.m[host]
	if !ok || time.Since(f.at) > refusalTTL {
		return refusal{}, false
	}
	return f, true
}

// checkHost refuses a URL whose host the policy refuses without a lookup.
func (g *guard) checkHost(u *url.URL) error {
	port := uint16(80)
	if n, err := strconv.ParseUint(u.Port(), 10, 16); err == nil {
		port = uint16(n)
	} else if u.Scheme == "https" || u.Scheme == "wss" {
		port = 443
	}
	return g.policy.CheckHost(strings.TrimSuffix(strings.ToLower(u.Hostname()), "."), port)
}
