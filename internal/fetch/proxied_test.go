package fetch

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/netguard"
	"github.com/firegate/firegate/internal/netguard/netguardtest"
	"github.com/firegate/firegate/internal/proxypool"
	"github.com/firegate/firegate/internal/proxypool/proxytest"
)

// logBuffer collects log lines at every level.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func onlyProxy(t *testing.T, entry string) *proxypool.Proxy {
	t.Helper()
	pool, err := proxypool.Parse(entry, proxypool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return pool.Proxies()[0]
}

// permitPorts admits loopback targets on the given ports only (the test's
// own servers), like an operator's ALLOW_TARGETS.
func permitPorts(t *testing.T, resolver *net.Resolver, ports ...string) *netguard.Policy {
	t.Helper()
	allowed := map[uint16]bool{}
	for _, p := range ports {
		n, _ := strconv.Atoi(p)
		allowed[uint16(n)] = true
	}
	policy, err := netguard.New(netguard.Options{Resolver: resolver, Permit: func(ap netip.AddrPort) bool { return allowed[ap.Port()] }})
	if err != nil {
		t.Fatal(err)
	}
	return policy
}

func portOfURL(raw string) string {
	i := strings.LastIndexByte(raw, ':')
	return raw[i+1:]
}

func TestDoThroughProxies(t *testing.T) {
	t.Parallel()
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, "/page", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<p>through</p>")
	})
	plain := httptest.NewServer(handler)
	t.Cleanup(plain.Close)
	secure := httptest.NewTLSServer(handler)
	t.Cleanup(secure.Close)
	policy := permitPorts(t, nil, portOfURL(plain.URL), portOfURL(secure.URL))
	for _, tc := range []struct {
		name    string
		start   func(testing.TB, proxytest.Options) *proxytest.Proxy
		opts    proxytest.Options
		scheme  string
		user    string
		forward bool // plain HTTP goes in absolute form
	}{
		{"http proxy", proxytest.NewHTTP, proxytest.Options{Name: "p1"}, "http", "", true},
		{"http proxy with credentials", proxytest.NewHTTP, proxytest.Options{Name: "p2", User: "alice", Pass: "hunter2"}, "http", "alice:hunter2@", true},
		{"socks5 proxy", proxytest.NewSOCKS5, proxytest.Options{}, "socks5", "", false},
		{"socks5 proxy with credentials", proxytest.NewSOCKS5, proxytest.Options{User: "alice", Pass: "hunter2"}, "socks5", "alice:hunter2@", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			px := tc.start(t, tc.opts)
			proxy := onlyProxy(t, tc.scheme+"://"+tc.user+px.Addr())
			var logs logBuffer
			c := New(Options{Policy: policy}, slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
			t.Cleanup(c.CloseIdleConnections)
			// Plain HTTP with a redirect hop, then HTTPS: both through the
			// proxy, named as asked (localhost, resolved by the proxy).
			plainURL := strings.Replace(plain.URL, "127.0.0.1", "localhost", 1) + "/hop"
			resp, err := c.Do(testCtx(t, 10*time.Second), Request{URL: plainURL, Proxy: proxy})
			if err != nil {
				t.Fatal(err)
			}
			if string(resp.Body) != "<p>through</p>" || !strings.HasSuffix(resp.URL, "/page") {
				t.Errorf("plain: %q at %s", resp.Body, resp.URL)
			}
			secureURL := strings.Replace(secure.URL, "127.0.0.1", "localhost", 1)
			if _, err := c.Do(testCtx(t, 10*time.Second), Request{URL: secureURL, Proxy: proxy, SkipTLSVerify: true}); err != nil {
				t.Fatal(err)
			}
			for _, target := range px.Targets() {
				if !strings.HasPrefix(target, "localhost:") {
					t.Errorf("proxy was asked for %s, want the name", target)
				}
			}
			if tc.forward {
				// Two plain requests forwarded (the page and its hop), one
				// tunnel for HTTPS.
				if px.Forwards() != 2 || px.Tunnels() != 1 {
					t.Errorf("forwards %d tunnels %d, want 2 and 1", px.Forwards(), px.Tunnels())
				}
			} else if px.Tunnels() < 2 || px.Forwards() != 0 {
				t.Errorf("socks: tunnels %d forwards %d", px.Tunnels(), px.Forwards())
			}
			// A target the policy refuses never reaches the proxy.
			before := px.Passed()
			_, err = c.Do(testCtx(t, 10*time.Second), Request{URL: "http://127.0.0.1:1/", Proxy: proxy})
			if !errors.Is(err, ErrBlocked) {
				t.Errorf("loopback target through the proxy: %v, want ErrBlocked", err)
			}
			if px.Passed() != before {
				t.Errorf("a refused target reached the proxy")
			}
			if tc.user == "" {
				return
			}
			// Wrong credentials: ErrProxy, masked, nothing passed.
			bad := onlyProxy(t, tc.scheme+"://alice:wrong-pass@"+px.Addr())
			_, err = c.Do(testCtx(t, 10*time.Second), Request{URL: plainURL, Proxy: bad})
			if !errors.Is(err, ErrProxy) {
				t.Errorf("wrong credentials: %v, want ErrProxy", err)
			}
			_, err2 := c.Do(testCtx(t, 10*time.Second), Request{URL: secureURL, Proxy: bad, SkipTLSVerify: true})
			if !errors.Is(err2, ErrProxy) {
				t.Errorf("wrong credentials (https): %v, want ErrProxy", err2)
			}
			for _, s := range []string{fmt.Sprint(err), fmt.Sprint(err2), logs.String()} {
				if strings.Contains(s, "hunter2") || strings.Contains(s, "wrong-pass") || strings.Contains(s, "alice") {
					t.Errorf("credentials shown: %s", s)
				}
			}
			if !strings.Contains(logs.String(), "fetch failed") {
				t.Errorf("the failures were not logged (the log check checked nothing): %s", logs.String())
			}
		})
	}
}

func TestDoProxyRefusesPrivateNames(t *testing.T) {
	t.Parallel()
	dns := netguardtest.NewDNS(t)
	dns.Answer("intranet.example", netip.MustParseAddr("10.0.0.7"))
	dns.Answer("rebind.example", netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("127.0.0.1"))
	policy, err := netguard.New(netguard.Options{Resolver: dns.Resolver()})
	if err != nil {
		t.Fatal(err)
	}
	px := proxytest.NewHTTP(t, proxytest.Options{})
	proxy := onlyProxy(t, "http://"+px.Addr())
	c := New(Options{Policy: policy}, nil)
	t.Cleanup(c.CloseIdleConnections)
	for _, u := range []string{"http://intranet.example/", "https://intranet.example/", "http://10.0.0.7/", "http://localhost:8080/"} {
		_, err := c.Do(testCtx(t, 10*time.Second), Request{URL: u, Proxy: proxy})
		if !errors.Is(err, ErrBlocked) {
			t.Errorf("%s through the proxy: %v, want ErrBlocked", u, err)
		}
	}
	if n := px.Passed(); n != 0 {
		t.Errorf("%d refused requests reached the proxy", n)
	}
	if n := dns.Lookups("intranet.example"); n == 0 {
		t.Errorf("the name was not resolved locally before being refused")
	}
}

func TestDoProxyFailureIsErrProxy(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := New(Options{AllowPrivate: true}, nil)
	t.Cleanup(c.CloseIdleConnections)
	for _, entry := range []string{"http://u:pw@" + addr, "socks5://" + addr} {
		p := onlyProxy(t, entry)
		for _, u := range []string{"http://example.com/", "https://example.com/"} {
			_, err := c.Do(testCtx(t, 10*time.Second), Request{URL: u, Proxy: p})
			if !errors.Is(err, ErrProxy) {
				t.Errorf("%s via %s: %v, want ErrProxy", u, p, err)
			}
			if err != nil && strings.Contains(err.Error(), ":pw") {
				t.Errorf("credentials shown: %v", err)
			}
		}
	}
}
