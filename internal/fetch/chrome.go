package fetch

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	fhttp "github.com/bogdanfinn/fhttp"
	"github.com/bogdanfinn/fhttp/http2"
	tlsclient "github.com/bogdanfinn/tls-client"
	"github.com/bogdanfinn/tls-client/profiles"
	utls "github.com/bogdanfinn/utls"
	"golang.org/x/net/proxy"

	"github.com/firegate/firegate/internal/proxypool"
)

// Requests that look like Chromium's (Request.Chrome).
//
// The TLS ClientHello and HTTP/2 framing come from bogdanfinn/tls-client
// (on its utls fork): Chromium's cipher suites and extension types, GREASE
// and a shuffled extension order, ALPN h2 and http/1.1, Chromium's HTTP/2
// SETTINGS, window update and pseudo-header order. The header set and its
// order are Chromium's for a top-level navigation, with client hints
// matching the User-Agent. The profile below is what Chromium 156 sends
// (TestChromeFingerprint compares them in one test). The connection under
// the TLS layer is still the guarded dial (or the proxy's tunnel, after
// the target was checked): the address check holds. Redirects, cookies
// and the body are handled by Do as for every request.

// chromeProfile is Chromium 156's ClientHello and HTTP/2 settings.
func chromeProfile() profiles.ClientProfile {
	id := utls.ClientHelloID{
		Client:               "Chrome",
		Version:              "156",
		RandomExtensionOrder: true, // Chrome shuffles its extensions
		SpecFactory: func() (utls.ClientHelloSpec, error) {
			return utls.ClientHelloSpec{
				CipherSuites: []uint16{
					utls.GREASE_PLACEHOLDER,
					utls.TLS_AES_128_GCM_SHA256,
					utls.TLS_AES_256_GCM_SHA384,
					utls.TLS_CHACHA20_POLY1305_SHA256,
					utls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
					utls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
					utls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
					utls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
					utls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
					utls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
					utls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
					utls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
					utls.TLS_RSA_WITH_AES_128_GCM_SHA256,
					utls.TLS_RSA_WITH_AES_256_GCM_SHA384,
					utls.TLS_RSA_WITH_AES_128_CBC_SHA,
					utls.TLS_RSA_WITH_AES_256_CBC_SHA,
				},
				CompressionMethods: []byte{0},
				Extensions: []utls.TLSExtension{
					&utls.UtlsGREASEExtension{},
					&utls.SNIExtension{},
					&utls.ExtendedMasterSecretExtension{},
					&utls.RenegotiationInfoExtension{Renegotiation: utls.RenegotiateOnceAsClient},
					&utls.SupportedCurvesExtension{Curves: []utls.CurveID{
						utls.GREASE_PLACEHOLDER, utls.X25519MLKEM768, utls.X25519, utls.CurveP256, utls.CurveP384,
					}},
					&utls.SupportedPointsExtension{SupportedPoints: []byte{0}},
					&utls.SessionTicketExtension{},
					&utls.ALPNExtension{AlpnProtocols: []string{"h2", "http/1.1"}},
					&utls.StatusRequestExtension{},
					&utls.SignatureAlgorithmsExtension{SupportedSignatureAlgorithms: []utls.SignatureScheme{
						0x0904, 0x0905, 0x0906, // ML-DSA-44, -65, -87 (Chromium GREASEs here too)
						utls.ECDSAWithP256AndSHA256, utls.PSSWithSHA256, utls.PKCS1WithSHA256,
						utls.ECDSAWithP384AndSHA384, utls.PSSWithSHA384, utls.PKCS1WithSHA384,
						utls.PSSWithSHA512, utls.PKCS1WithSHA512,
					}},
					&utls.SCTExtension{},
					&utls.KeyShareExtension{KeyShares: []utls.KeyShare{
						{Group: utls.CurveID(utls.GREASE_PLACEHOLDER), Data: []byte{0}},
						{Group: utls.X25519MLKEM768},
						{Group: utls.X25519},
					}},
					&utls.PSKKeyExchangeModesExtension{Modes: []uint8{utls.PskModeDHE}},
					&utls.SupportedVersionsExtension{Versions: []uint16{utls.GREASE_PLACEHOLDER, utls.VersionTLS13, utls.VersionTLS12}},
					&utls.UtlsCompressCertExtension{Algorithms: []utls.CertCompressionAlgo{utls.CertCompressionBrotli}},
					&utls.ApplicationSettingsExtensionNew{SupportedProtocols: []string{"h2"}},
					utls.BoringGREASEECH(),
					// Trust anchor IDs (draft-ietf-tls-trust-anchor-ids),
					// the list Chromium 156 sends.
					&utls.GenericExtension{Id: 0xca34, Data: chromeTrustAnchors},
					&utls.UtlsGREASEExtension{},
				},
			}, nil
		},
	}
	settings := map[http2.SettingID]uint32{
		http2.SettingHeaderTableSize:   65536,
		http2.SettingEnablePush:        0,
		http2.SettingInitialWindowSize: 6291456,
		http2.SettingMaxHeaderListSize: 262144,
	}
	order := []http2.SettingID{http2.SettingHeaderTableSize, http2.SettingEnablePush, http2.SettingInitialWindowSize, http2.SettingMaxHeaderListSize}
	return profiles.NewClientProfile(id, settings, order, []string{":method", ":authority", ":scheme", ":path"}, 15663105, nil, nil)
}

// chromeTrustAnchors is the body of Chromium 156's trust anchor IDs
// extension (0xca34) as it sends it.
var chromeTrustAnchors = []byte{ //nolint:gochecknoglobals // constant bytes
	0x00, 0xb8, 0x05, 0x82, 0xdf, 0x13, 0x02, 0x01, 0x05, 0x82, 0xdf, 0x13, 0x02, 0x06, 0x05, 0x82,
	0xdf, 0x13, 0x02, 0x0d, 0x05, 0x82, 0xdf, 0x13, 0x02, 0x0e, 0x05, 0x82, 0xdf, 0x13, 0x02, 0x0f,
	0x05, 0x82, 0xdf, 0x13, 0x02, 0x12, 0x05, 0x82, 0xdf, 0x13, 0x02, 0x13, 0x05, 0x82, 0xdf, 0x13,
	0x02, 0x14, 0x08, 0x83, 0x9a, 0x64, 0x8c, 0x9b, 0x2d, 0x01, 0x07, 0x08, 0x83, 0x9a, 0x64, 0x8c,
	0x9b, 0x2d, 0x01, 0x08, 0x08, 0x83, 0x9a, 0x64, 0x8c, 0x9b, 0x2d, 0x01, 0x09, 0x08, 0x83, 0x9a,
	0x64, 0x8c, 0x9b, 0x2d, 0x01, 0x0a, 0x08, 0x83, 0x9a, 0x64, 0x8c, 0x9b, 0x2d, 0x01, 0x0b, 0x08,
	0x83, 0x9a, 0x64, 0x8c, 0x9b, 0x2d, 0x01, 0x0c, 0x08, 0x83, 0x9a, 0x64, 0x8c, 0x9b, 0x2d, 0x01,
	0x0d, 0x08, 0x83, 0x9a, 0x64, 0x8c, 0x9b, 0x2d, 0x01, 0x12, 0x08, 0x83, 0x9a, 0x64, 0x8c, 0x9b,
	0x2d, 0x01, 0x13, 0x04, 0xd6, 0x79, 0x09, 0x01, 0x04, 0xd6, 0x79, 0x09, 0x04, 0x04, 0xd6, 0x79,
	0x09, 0x05, 0x04, 0xd6, 0x79, 0x09, 0x06, 0x04, 0xd6, 0x79, 0x09, 0x07, 0x04, 0xd6, 0x79, 0x09,
	0x08, 0x04, 0xd6, 0x79, 0x09, 0x0a, 0x04, 0xd6, 0x79, 0x09, 0x0b, 0x04, 0xd6, 0x79, 0x09, 0x0c,
	0x04, 0xd6, 0x79, 0x09, 0x0d, 0x04, 0xd6, 0x79, 0x09, 0x0f,
}

// chromeKey selects the Chrome-like transport of one way out.
type chromeKey struct {
	proxy      *proxypool.Proxy // nil = direct
	skipVerify bool
}

// chromeClients holds the Chrome-like transports made so far.
type chromeClients struct {
	mu sync.Mutex
	m  map[chromeKey]*chromeTransport
}

// contextDialer is the dial of one way out, as tls-client takes it.
type contextDialer func(ctx context.Context, network, addr string) (net.Conn, error)

func (d contextDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return d(ctx, network, addr)
}

func (d contextDialer) Dial(network, addr string) (net.Conn, error) {
	return d(context.Background(), network, addr)
}

// chromeTransport returns the Chrome-like round tripper of a way out.
func (c *Client) chromeTransport(p *proxypool.Proxy, skipVerify bool) (*chromeTransport, error) {
	c.chrome.mu.Lock()
	defer c.chrome.mu.Unlock()
	k := chromeKey{p, skipVerify}
	if t := c.chrome.m[k]; t != nil {
		return t, nil
	}
	dial := contextDialer(c.dialer.DialFunc(ErrBlocked))
	if p != nil {
		dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if err := c.checkTarget(ctx, addr); err != nil {
				return nil, err
			}
			return p.DialContext(ctx, network, addr)
		}
	}
	opts := []tlsclient.HttpClientOption{
		tlsclient.WithClientProfile(chromeProfile()),
		tlsclient.WithNotFollowRedirects(), // Do follows them
		tlsclient.WithTimeoutSeconds(0),    // the request's ctx bounds it
		tlsclient.WithDisableHttp3(),
		tlsclient.WithProxyDialerFactory(func(string, time.Duration, *net.TCPAddr, fhttp.Header, tlsclient.Logger) (proxy.ContextDialer, error) {
			return dial, nil
		}),
		tlsclient.WithTransportOptions(&tlsclient.TransportOptions{
			MaxIdleConns: 1024, MaxIdleConnsPerHost: 256, MaxResponseHeaderBytes: 1 << 20, DisableCompression: true,
		}),
	}
	if skipVerify {
		opts = append(opts, tlsclient.WithInsecureSkipVerify())
	}
	hc, err := tlsclient.NewHttpClient(tlsclient.NewNoopLogger(), opts...)
	if err != nil {
		return nil, fmt.Errorf("fetch: chrome-like client: %w", err)
	}
	if c.chrome.m == nil {
		c.chrome.m = map[chromeKey]*chromeTransport{}
	}
	t := &chromeTransport{hc: hc}
	if p != nil && p.ForwardURL() != nil {
		// Plain HTTP has no TLS to look like Chrome's: it is forwarded in
		// absolute form like any request through an HTTP proxy (some
		// carry CONNECT only to port 443), Chrome's headers kept.
		t.plain = c.proxyTransport(p, skipVerify)
	}
	c.chrome.m[k] = t
	return t, nil
}

// closeChrome closes the idle connections of the Chrome-like transports.
func (c *Client) closeChrome() {
	c.chrome.mu.Lock()
	defer c.chrome.mu.Unlock()
	for _, t := range c.chrome.m {
		t.hc.CloseIdleConnections()
	}
}

// chromeTransport is an http.RoundTripper sending through tls-client.
type chromeTransport struct {
	hc tlsclient.HttpClient
	// plain sends plain-HTTP requests through an HTTP proxy; nil: hc.
	plain http.RoundTripper
}

// RoundTrip sends r as Chromium would and returns the answer as a
// net/http response (the body is the wire's, still encoded).
func (t *chromeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme == "http" && t.plain != nil {
		return t.plain.RoundTrip(r)
	}
	fr, err := fhttp.NewRequestWithContext(r.Context(), r.Method, r.URL.String(), r.Body)
	if err != nil {
		return nil, err
	}
	fr.Header = fhttp.Header{}
	var order []string
	for _, name := range chromeHeaderOrder {
		if v, ok := r.Header[http.CanonicalHeaderKey(name)]; ok {
			fr.Header[name] = v
			order = append(order, name)
		}
	}
	for name, v := range r.Header { // the caller's others, after Chrome's
		if ln := strings.ToLower(name); !slices.Contains(chromeHeaderOrder, ln) {
			fr.Header[ln] = v
			order = append(order, ln)
		}
	}
	fr.Header[fhttp.HeaderOrderKey] = order
	resp, err := t.hc.Do(fr)
	if err != nil {
		return nil, err
	}
	return &http.Response{
		Status: resp.Status, StatusCode: resp.StatusCode, Proto: resp.Proto, ProtoMajor: resp.ProtoMajor, ProtoMinor: resp.ProtoMinor,
		Header: http.Header(resp.Header), Body: resp.Body, ContentLength: resp.ContentLength, Request: r,
		Uncompressed: resp.Uncompressed,
	}, nil
}

// chromeHeaderOrder is the order of Chromium's headers on a top-level
// navigation (lower-case, as HTTP/2 sends them).
var chromeHeaderOrder = []string{ //nolint:gochecknoglobals // constant list
	"cache-control", "sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform", "upgrade-insecure-requests", "user-agent",
	"accept", "sec-fetch-site", "sec-fetch-mode", "sec-fetch-user", "sec-fetch-dest", "referer", "accept-encoding",
	"accept-language", "cookie", "priority",
}

// chromeAccept is Chromium's Accept of a navigation.
const chromeAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"

// chromeHeaders adds to h what Chromium sends on a top-level navigation
// beside the User-Agent: client hints matching ua, fetch metadata, its
// Accept, Accept-Encoding and priority.
func chromeHeaders(h http.Header, ua string) {
	brands, mobile, platform := clientHints(ua)
	if brands != "" {
		h.Set("Sec-Ch-Ua", brands)
		h.Set("Sec-Ch-Ua-Mobile", mobile)
		h.Set("Sec-Ch-Ua-Platform", platform)
	}
	h.Set("Accept", chromeAccept)
	h.Set("Accept-Encoding", "gzip, deflate, br, zstd")
	h.Set("Sec-Fetch-Site", "none")
	h.Set("Sec-Fetch-Mode", "navigate")
	h.Set("Sec-Fetch-User", "?1")
	h.Set("Sec-Fetch-Dest", "document")
	h.Set("Priority", "u=0, i")
}

// clientHints derives Sec-CH-UA, -Mobile and -Platform from a Chrome
// User-Agent; brands is "" when ua is not Chrome's. The brand list is
// built as Chromium builds it for its major version (the greased brand's
// characters, version and place all follow from it).
func clientHints(ua string) (brands, mobile, platform string) {
	_, rest, ok := strings.Cut(ua, "Chrome/")
	if !ok {
		return "", "", ""
	}
	majorStr, _, _ := strings.Cut(rest, ".")
	major, err := strconv.Atoi(majorStr)
	if err != nil || major <= 0 {
		return "", "", ""
	}
	chars := []string{" ", "(", ":", "-", ".", "/", ")", ";", "=", "?", "_"}
	versions := []string{"8", "99", "24"}
	greased := fmt.Sprintf(`"Not%sA%sBrand";v="%s"`, chars[major%len(chars)], chars[(major+1)%len(chars)], versions[major%len(versions)])
	list := []string{greased, fmt.Sprintf(`"Chromium";v="%d"`, major), fmt.Sprintf(`"Google Chrome";v="%d"`, major)}
	orders := [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	order := orders[major%len(orders)]
	out := make([]string, 3)
	for i, pos := range order {
		out[pos] = list[i]
	}
	mobile, platform = "?0", `"Windows"`
	switch {
	case strings.Contains(ua, "Android"):
		mobile, platform = "?1", `"Android"`
	case strings.Contains(ua, "Macintosh"):
		platform = `"macOS"`
	case strings.Contains(ua, "Linux"):
		platform = `"Linux"`
	}
	return strings.Join(out, ", "), mobile, platform
}
