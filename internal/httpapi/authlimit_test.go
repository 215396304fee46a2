package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/firegate/firegate/internal/apikey"
	"github.com/firegate/firegate/internal/auth"
	"github.com/firegate/firegate/internal/store/teststore"
	"github.com/firegate/firegate/internal/testenv"
)

// authLimited is a server with real keys on an embedded store and a limit
// on failed authentications, behind a real HTTP listener.
func authLimited(t *testing.T, limit int, trusted ...string) (*Server, string, string) {
	t.Helper()
	ctx := context.Background()
	st := teststore.SQLite(t)
	team, err := st.CreateTeam(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	key, _ := apikey.Generate()
	if _, err := st.CreateAPIKey(ctx, team.ID, apikey.Hash(key), apikey.Prefix(key)); err != nil {
		t.Fatal(err)
	}
	var proxies []netip.Prefix
	for _, p := range trusted {
		proxies = append(proxies, netip.MustParsePrefix(p))
	}
	s := New(Deps{Scraper: &fakeScraper{}, Auth: auth.New(st, auth.Options{}), AuthFailureLimit: limit,
		TrustedProxies: proxies, Log: testenv.Logger(t)})
	s.SetReady(true)
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return s, hs.URL, key
}

// getUsage calls GET /v2/team/credit-usage with key and X-Forwarded-For
// xff (none when empty).
func getUsage(t *testing.T, base, key, xff string) (int, string, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/v2/team/credit-usage", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, resp.Header.Get("Retry-After"), m
}

func TestFailedAuthenticationsAreRateLimited(t *testing.T) {
	t.Parallel()
	s, base, key := authLimited(t, 20)
	for i := range 20 {
		if code, _, got := getUsage(t, base, "fc-guess-"+strconv.Itoa(i), ""); code != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d %v", i+1, code, got)
		}
	}
	// The 21st request is refused, even with a valid key.
	code, retry, got := getUsage(t, base, key, "")
	secs, _ := strconv.Atoi(retry)
	if code != http.StatusTooManyRequests || got["code"] != "AUTH_RATE_LIMITED" || secs < 1 || secs > 60 ||
		!strings.Contains(got["error"].(string), "failed authentications") {
		t.Fatalf("after 20 failures: %d Retry-After %q %v", code, retry, got)
	}
	// X-Forwarded-For from an untrusted peer changes nothing.
	if code, _, got := getUsage(t, base, key, "198.51.100.7"); code != http.StatusTooManyRequests {
		t.Errorf("spoofed X-Forwarded-For: %d %v", code, got)
	}
	// The window ends a minute after the first failure.
	s.authFails.now = func() time.Time { return time.Now().Add(61 * time.Second) }
	if code, _, got := getUsage(t, base, key, ""); code != 200 {
		t.Fatalf("after the window: %d %v", code, got)
	}
	// Successes do not count.
	for i := range 30 {
		if code, _, got := getUsage(t, base, key, ""); code != 200 {
			t.Fatalf("success %d: %d %v", i, code, got)
		}
	}
}

func TestFailedAuthenticationsBehindTrustedProxy(t *testing.T) {
	t.Parallel()
	_, base, key := authLimited(t, 3, "127.0.0.0/8", "::1/128")
	for range 3 {
		if code, _, _ := getUsage(t, base, "fc-guess", "203.0.113.5"); code != http.StatusUnauthorized {
			t.Fatalf("failure: %d", code)
		}
	}
	if code, _, got := getUsage(t, base, key, "203.0.113.5"); code != http.StatusTooManyRequests {
		t.Errorf("client over the limit: %d %v", code, got)
	}
	// Prepending addresses does not escape: the rightmost untrusted hop counts.
	if code, _, got := getUsage(t, base, key, "203.0.113.9, 203.0.113.5"); code != http.StatusTooManyRequests {
		t.Errorf("prepended X-Forwarded-For: %d %v", code, got)
	}
	// Another client behind the same proxy is not affected, nor is the proxy.
	if code, _, got := getUsage(t, base, key, "203.0.113.6"); code != 200 {
		t.Errorf("another client: %d %v", code, got)
	}
	if code, _, got := getUsage(t, base, key, ""); code != 200 {
		t.Errorf("the proxy itself: %d %v", code, got)
	}
}

func TestFailedAuthenticationsLimitWatchers(t *testing.T) {
	t.Parallel()
	f := newJobsFixture(t, "sqlite", fxOptions{authFailures: 2})
	path := "/v2/crawl/" + unknownJobID
	for range 2 {
		if _, closed := dialWatch(t, f.base, path, "fc-guess").rest(); closed.Code != closeAuthFailed {
			t.Fatalf("bad key: close %d %q", closed.Code, closed.Reason)
		}
	}
	_, closed := dialWatch(t, f.base, path, fxKeyOne).rest()
	if closed.Code != websocket.StatusTryAgainLater || !strings.Contains(closed.Reason, "failed authentications") {
		t.Errorf("after 2 failures: close %d %q, want 1013", closed.Code, closed.Reason)
	}
	if code, _ := f.send(t, http.MethodGet, "/v2/crawl/active", fxKeyOne, ""); code != http.StatusTooManyRequests {
		t.Errorf("plain request after 2 failures: %d", code)
	}
}

func TestClientAddr(t *testing.T) {
	t.Parallel()
	s := New(Deps{Scraper: &fakeScraper{}, Auth: fakeAuth{}, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		Log: testenv.Logger(t)})
	for _, tc := range []struct{ remote, xff, want string }{
		{"192.0.2.1:5000", "", "192.0.2.1"},
		{"192.0.2.1:5000", "198.51.100.1", "192.0.2.1"},
		{"10.1.2.3:5000", "198.51.100.1", "198.51.100.1"},
		{"10.1.2.3:5000", "198.51.100.1, 10.9.9.9", "198.51.100.1"},
		{"10.1.2.3:5000", "garbage", "10.1.2.3"},
		{"10.1.2.3:5000", "", "10.1.2.3"},
		{"[2001:db8:1:2:3:4:5:6]:443", "", "2001:db8:1:2::"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = tc.remote
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		if got := s.clientAddr(r).String(); got != tc.want {
			t.Errorf("%s + %q: %s, want %s", tc.remote, tc.xff, got, tc.want)
		}
	}
}
