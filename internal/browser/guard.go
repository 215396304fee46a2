package browser

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"
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

// blockedPrefixes are the ranges refused besides what the netip predicates
// cover.
const blockedPrefixes = "0.0.0.0/8,100.64.0.0/10,192.0.0.0/24,198.18.0.0/15,240.0.0.0/4,fd00:ec2::254/128,100::/64,2001:db8::/32"

// guard decides which requests a page may make: ad hosts (when blocking
// ads) and non-public addresses (unless private targets are allowed).
type guard struct {
	allowPrivate bool
	adHosts      map[string]bool
	blocked      []netip.Prefix
	resolver     *net.Resolver
	// permit, when set, admits a host:port regardless of its address;
	// tests use it to let one loopback server through an active guard.
	permit func(hostport string) bool

	mu    sync.Mutex
	cache map[string]bool // host -> public
}

func newGuard(allowPrivate bool, adHosts []string, blockAds bool) *guard {
	g := &guard{allowPrivate: allowPrivate, resolver: net.DefaultResolver, cache: map[string]bool{}}
	if blockAds {
		g.adHosts = make(map[string]bool, len(adHosts))
		for _, h := range adHosts {
			g.adHosts[h] = true
		}
	}
	for s := range strings.SplitSeq(blockedPrefixes, ",") {
		g.blocked = append(g.blocked, netip.MustParsePrefix(s))
	}
	return g
}

// active reports whether any request needs checking.
func (g *guard) active() bool { return !g.allowPrivate || len(g.adHosts) > 0 }

// verdict is the guard's decision on one request.
type verdict int

const (
	allow verdict = iota
	blockAd
	blockPrivate
)

// dnsTimeout bounds the guard's own lookup of a request's host.
const dnsTimeout = 5 * time.Second

// check decides on rawURL. isMain exempts the page itself from ad blocking.
func (g *guard) check(ctx context.Context, rawURL string, isMain bool) verdict {
	u, err := url.Parse(rawURL)
	if err != nil {
		return blockPrivate
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
	case "data", "blob", "about":
		return allow
	default:
		if g.allowPrivate {
			return allow
		}
		return blockPrivate
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if !isMain && g.isAdHost(host) {
		return blockAd
	}
	if g.allowPrivate || (g.permit != nil && g.permit(u.Host)) {
		return allow
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if g.publicAddr(ip) {
			return allow
		}
		return blockPrivate
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return blockPrivate
	}
	g.mu.Lock()
	public, ok := g.cache[host]
	g.mu.Unlock()
	if ok {
		return pick(public)
	}
	lctx, cancel := context.WithTimeout(ctx, dnsTimeout)
	defer cancel()
	addrs, err := g.resolver.LookupNetIP(lctx, "ip", host)
	if err != nil {
		// Let Chrome fail the lookup itself, so the error names it.
		return allow
	}
	public = len(addrs) > 0
	for _, a := range addrs {
		if !g.publicAddr(a) {
			public = false
		}
	}
	g.mu.Lock()
	g.cache[host] = public
	g.mu.Unlock()
	return pick(public)
}

func pick(public bool) verdict {
	if public {
		return allow
	}
	return blockPrivate
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

// publicAddr reports whether ip is a globally routable unicast address.
func (g *guard) publicAddr(ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		// NAT64 64:ff9b::/96 carries an IPv4 address: judge that one.
		b := ip.As16()
		if b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && b[4]|b[5]|b[6]|b[7]|b[8]|b[9]|b[10]|b[11] == 0 {
			ip = netip.AddrFrom4([4]byte(b[12:16]))
		}
	}
	if !ip.IsValid() || ip.IsUnspecified() || ip.IsLoopback() || ip.IsPrivate() || ip.IsMulticast() ||
		ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() {
		return false
	}
	for _, p := range g.blocked {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}
