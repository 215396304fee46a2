package fetch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/fetch/fptest"
	"github.com/firegate/firegate/internal/proxypool/proxytest"
	"github.com/firegate/firegate/internal/testenv"
)

// chromiumPath is the full Chromium, whose network stack is the
// reference; where it is not installed (CI installs only the headless
// shell) the headless shell's, the same network stack, is.
const chromiumPath = "/usr/bin/chromium"

// chromiumFingerprint has Chromium load url and returns what its first
// connection sent.
func chromiumFingerprint(t *testing.T, s *fptest.Server, path string) fptest.Fingerprint {
	t.Helper()
	bin := chromiumPath
	if _, err := exec.LookPath(bin); err != nil {
		bin = testenv.ChromePath(t)
		t.Logf("%s: %v; the reference is %s", chromiumPath, err, bin)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Patient(30*time.Second))
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--headless=new", "--no-sandbox", "--ignore-certificate-errors", "--disable-gpu",
		"--no-first-run", "--disable-background-networking", "--user-data-dir="+t.TempDir(), "--dump-dom", s.URL()+path).CombinedOutput()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	for _, fp := range s.Fingerprints() {
		if fp.Path == path {
			if bin != chromiumPath {
				// The shell does not send trust anchor IDs (0xca34),
				// which the full Chromium, as a desktop Chrome, does.
				fp.Hello.Extensions = append(fp.Hello.Extensions, 0xca34)
			}
			return fp
		}
	}
	t.Fatalf("chromium did not request %s", path)
	return fptest.Fingerprint{}
}

func TestChromeFingerprint(t *testing.T) {
	t.Parallel()
	s := fptest.New(t)
	ref := chromiumFingerprint(t, s, "/chromium")
	c := New(Options{AllowPrivate: true}, nil)
	t.Cleanup(c.CloseIdleConnections)
	var ours []fptest.Fingerprint
	for i := range 4 {
		resp, err := c.Do(testCtx(t, 10*time.Second), Request{URL: s.URL() + "/ours" + string(rune('a'+i)), SkipTLSVerify: true, Chrome: true})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(resp.Body), "fingerprinted") {
			t.Fatalf("body %q", resp.Body)
		}
		c.CloseIdleConnections() // a new connection, a new ClientHello
	}
	for _, fp := range s.Fingerprints() {
		if strings.HasPrefix(fp.Path, "/ours") {
			ours = append(ours, fp)
		}
	}
	if len(ours) != 4 {
		t.Fatalf("%d of our requests recorded", len(ours))
	}
	fp := ours[0]
	eq := func(what string, want, got any) {
		t.Helper()
		if !slices.Equal(toStrings(want), toStrings(got)) {
			t.Errorf("%s differs from Chromium's:\n chromium %v\n ours     %v", what, want, got)
		}
	}
	eq("cipher suites (GREASE aside)", fptest.WithoutGREASE(ref.Hello.CipherSuites), fptest.WithoutGREASE(fp.Hello.CipherSuites))
	eq("extension types (GREASE aside)", fptest.WithoutGREASE(ref.Hello.Extensions), fptest.WithoutGREASE(fp.Hello.Extensions))
	eq("supported groups (GREASE aside)", fptest.WithoutGREASE(ref.Hello.Groups), fptest.WithoutGREASE(fp.Hello.Groups))
	eq("signature algorithms (GREASE aside)", fptest.WithoutGREASE(ref.Hello.SigAlgs), fptest.WithoutGREASE(fp.Hello.SigAlgs))
	eq("ALPN", ref.Hello.ALPN, fp.Hello.ALPN)
	eq("HTTP/2 SETTINGS", ref.Settings, fp.Settings)
	if ref.WindowUpdate != fp.WindowUpdate || fp.Proto != "h2" {
		t.Errorf("window update %d over %s, Chromium %d over %s", fp.WindowUpdate, fp.Proto, ref.WindowUpdate, ref.Proto)
	}
	// Header order: ours, in Chromium's order for the names both send.
	var shared []string
	for _, h := range ref.Headers {
		if slices.Contains(fp.Headers, h) {
			shared = append(shared, h)
		}
	}
	var oursShared []string
	for _, h := range fp.Headers {
		if slices.Contains(shared, h) {
			oursShared = append(oursShared, h)
		}
	}
	eq("header order", shared, oursShared)
	for _, h := range ref.Headers {
		if !slices.Contains(fp.Headers, h) {
			t.Errorf("Chromium sends %s, we do not", h)
		}
	}
	for _, h := range []string{"sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform"} {
		if !strings.Contains(fp.Values["user-agent"], "Chrome/") || fp.Values[h] == "" {
			t.Errorf("%s = %q with user agent %q", h, fp.Values[h], fp.Values["user-agent"])
		}
	}
	// GREASE, and the extension order shuffled as Chrome does.
	if !slices.ContainsFunc(fp.Hello.CipherSuites, fptest.IsGREASE) || !slices.ContainsFunc(fp.Hello.Extensions, fptest.IsGREASE) {
		t.Errorf("no GREASE: suites %v extensions %v", fp.Hello.CipherSuites, fp.Hello.Extensions)
	}
	orders := map[string]bool{}
	for _, o := range ours {
		orders[strings.Join(toStrings(o.Hello.Extensions), ",")] = true
	}
	if len(orders) < 2 {
		t.Errorf("the extension order never changed over %d connections", len(ours))
	}
	t.Logf("chromium %s: sigalgs %v; ours %v", ref.Values["user-agent"], ref.Hello.SigAlgs, fp.Hello.SigAlgs)
}

func TestClientHints(t *testing.T) {
	t.Parallel()
	for ua, want := range map[string]string{
		DefaultUserAgent:       `"Chromium";v="142", "Google Chrome";v="142", "Not_A Brand";v="99"|?0|"Windows"`,
		DefaultMobileUserAgent: `"Chromium";v="142", "Google Chrome";v="142", "Not_A Brand";v="99"|?1|"Android"`,
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36": `"Not:A-Brand";v="8", "Chromium";v="156", "Google Chrome";v="156"|?0|"Linux"`,
		"curl/8": "||",
	} {
		b, m, p := clientHints(ua)
		if got := b + "|" + m + "|" + p; got != want {
			t.Errorf("clientHints(%q) = %s, want %s", ua, got, want)
		}
	}
}

func toStrings(v any) []string {
	var out []string
	switch v := v.(type) {
	case []uint16:
		for _, x := range v {
			out = append(out, strconv.Itoa(int(x)))
		}
	case []string:
		out = v
	}
	return out
}

func TestChromeKeepsTheNetworkPolicy(t *testing.T) {
	t.Parallel()
	s := fptest.New(t)
	// Default policy: loopback refused at dial time, under the TLS layer.
	c := New(Options{}, nil)
	t.Cleanup(c.CloseIdleConnections)
	_, err := c.Do(testCtx(t, 10*time.Second), Request{URL: s.URL() + "/", SkipTLSVerify: true, Chrome: true})
	if !errors.Is(err, ErrBlocked) {
		t.Errorf("loopback with the Chrome-like client: %v, want ErrBlocked", err)
	}
	if n := len(s.Fingerprints()); n != 0 {
		t.Errorf("%d connections reached the refused server", n)
	}
	// Through a proxy: the target is checked first, then tunnelled.
	px := proxytest.NewHTTP(t, proxytest.Options{User: "u", Pass: "pw"})
	_, port, _ := strings.Cut(strings.TrimPrefix(s.URL(), "https://"), ":")
	cp := New(Options{Policy: permitPorts(t, nil, port)}, nil)
	t.Cleanup(cp.CloseIdleConnections)
	proxy := onlyProxy(t, "http://u:pw@"+px.Addr())
	resp, err := cp.Do(testCtx(t, 10*time.Second), Request{URL: s.URL() + "/via", SkipTLSVerify: true, Chrome: true, Proxy: proxy})
	if err != nil || !strings.Contains(string(resp.Body), "fingerprinted") {
		t.Fatalf("through the proxy: %v", err)
	}
	if px.Tunnels() != 1 {
		t.Errorf("tunnels %d", px.Tunnels())
	}
	if _, err := cp.Do(testCtx(t, 10*time.Second), Request{URL: "https://127.0.0.1:1/", Chrome: true, Proxy: proxy}); !errors.Is(err, ErrBlocked) {
		t.Errorf("refused target through the proxy: %v", err)
	}
	if px.Tunnels() != 1 {
		t.Errorf("a refused target reached the proxy")
	}
}

// BenchmarkChromeLike compares a plain fetch of a 100 KB page over HTTPS
// (HTTP/2) with Go's client and with the Chrome-like one, reusing the
// connection and with a new connection (a TLS handshake) every time.
func BenchmarkChromeLike(b *testing.B) {
	page := strings.Repeat("<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>\n", 1600)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, page)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	b.Cleanup(srv.Close)
	for _, mode := range []struct {
		name   string
		chrome bool
		fresh  bool
	}{{"go/reuse", false, false}, {"chrome/reuse", true, false}, {"go/handshake", false, true}, {"chrome/handshake", true, true}} {
		b.Run(mode.name, func(b *testing.B) {
			c := New(Options{AllowPrivate: true}, nil)
			defer c.CloseIdleConnections()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				resp, err := c.Do(ctx, Request{URL: srv.URL + "/", SkipTLSVerify: true, Chrome: mode.chrome})
				if err != nil || len(resp.Body) != len(page) {
					b.Fatalf("%v %d", err, len(resp.Body))
				}
				if mode.fresh {
					c.CloseIdleConnections()
				}
			}
		})
	}
}
