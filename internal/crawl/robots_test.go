package crawl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/firegate/firegate/internal/crawl/testsite"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/testenv"
)

func TestParseRobots(t *testing.T) {
	t.Parallel()
	type check struct {
		path string
		want bool
	}
	tests := []struct {
		name   string
		body   string
		agent  string
		checks []check
		delay  time.Duration
	}{
		{"empty file", "", "", []check{{"/", true}, {"/x", true}}, 0},
		{"star group", "User-agent: *\nDisallow: /private/\n", "", []check{
			{"/", true}, {"/private/", false}, {"/private/x", false}, {"/private", true}, {"/public", true},
		}, 0},
		{"our group beats star", "User-agent: *\nDisallow: /\n\nUser-agent: FirecrawlAgent\nDisallow: /no\n", "", []check{
			{"/", true}, {"/no", false}, {"/yes", true},
		}, 0},
		{"agent match ignores case", "User-agent: firecrawlagent\nDisallow: /x\n", "", []check{{"/x", false}}, 0},
		{"other group does not apply", "User-agent: OtherBot\nDisallow: /\n", "", []check{{"/", true}}, 0},
		{"configured agent", "User-agent: *\nDisallow: /a\n\nUser-agent: MyBot\nDisallow: /b\n", "MyBot", []check{
			{"/a", true}, {"/b", false},
		}, 0},
		{"full user agent reduced to its token", "User-agent: Mozilla\nDisallow: /m\n", "Mozilla/5.0 (X11; Linux x86_64)", []check{
			{"/m", false},
		}, 0},
		{"grouped agents", "User-agent: a\nUser-agent: FirecrawlAgent\nDisallow: /g\n", "", []check{{"/g", false}}, 0},
		{"longest match wins", "User-agent: *\nDisallow: /shop\nAllow: /shop/public\n", "", []check{
			{"/shop/cart", false}, {"/shop/public/item", true},
		}, 0},
		{"wildcards and end anchor", "User-agent: *\nDisallow: /*.pdf$\nDisallow: /*?session=\n", "", []check{
			{"/docs/a.pdf", false}, {"/docs/a.pdf?x=1", true}, {"/docs/a.html", true},
			{"/p?session=1", false}, {"/p?x=1&session=1", true},
		}, 0},
		{"query is matched", "User-agent: *\nDisallow: /search?\n", "", []check{{"/search?q=1", false}, {"/search", true}}, 0},
		{"empty disallow allows", "User-agent: *\nDisallow:\n", "", []check{{"/", true}, {"/x", true}}, 0},
		{"empty disallow, then a rule", "User-agent: *\nDisallow:\nDisallow: /x\n", "", []check{{"/", true}, {"/x", false}}, 0},
		{"disallow all", "User-agent: *\nDisallow: /\n", "", []check{{"/", false}, {"/x", false}}, 0},
		{"comments and blank lines", "# hi\n\nUser-agent: * # all\nDisallow: /x # no x\n", "", []check{{"/x", false}, {"/y", true}}, 0},
		{"crlf and bom", "\ufeffUser-agent: *\r\nDisallow: /x\r\n", "", []check{{"/x", false}}, 0},
		{"rule before any group is dropped, the rest kept", "Disallow: /early\nUser-agent: *\nDisallow: /x\n", "", []check{
			{"/early", true}, {"/x", false},
		}, 0},
		{"bad crawl-delay is dropped, the rest kept", "User-agent: *\nCrawl-delay: soon\nDisallow: /x\n", "", []check{{"/x", false}}, 0},
		{"crawl delay", "User-agent: *\nCrawl-delay: 2.5\nDisallow: /x\n", "", []check{{"/x", false}}, 2500 * time.Millisecond},
		{"crawl delay of our group", "User-agent: *\nCrawl-delay: 9\n\nUser-agent: FirecrawlAgent\nCrawl-delay: 1\n", "", nil, time.Second},
		{"html instead of robots.txt", "<!doctype html><html><body>Not found</body></html>", "", []check{{"/", true}}, 0},
	}
	base := mustURL(t, "https://example.com/robots.txt")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := ParseRobots([]byte(tt.body), base, tt.agent)
			for _, c := range tt.checks {
				if got := r.Allowed(mustURL(t, "https://example.com"+c.path)); got != c.want {
					t.Errorf("Allowed(%q) = %v, want %v", c.path, got, c.want)
				}
			}
			if got := r.CrawlDelay(); got != tt.delay {
				t.Errorf("CrawlDelay() = %v, want %v", got, tt.delay)
			}
		})
	}
}

func TestParseRobotsSitemaps(t *testing.T) {
	t.Parallel()
	body := "Sitemap: https://cdn.example.com/a.xml\nUser-agent: *\nDisallow: /x\nsitemap: /b.xml # relative\nSITEMAP:   c.xml.gz  \nSitemap:\n"
	r := ParseRobots([]byte(body), mustURL(t, "https://example.com/robots.txt"), "")
	want := []string{"https://cdn.example.com/a.xml", "https://example.com/b.xml", "https://example.com/c.xml.gz"}
	if diff := cmp.Diff(want, r.Sitemaps()); diff != "" {
		t.Errorf("Sitemaps() (-want +got):\n%s", diff)
	}
}

func TestParseRobotsSizeCap(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("User-agent: *\nDisallow: /early\n")
	for b.Len() < MaxRobotsBytes+1000 {
		b.WriteString("# padding padding padding padding padding padding padding\n")
	}
	b.WriteString("Disallow: /late\nSitemap: https://example.com/late.xml\n")
	r := ParseRobots([]byte(b.String()), mustURL(t, "https://example.com/robots.txt"), "")
	if r.Allowed(mustURL(t, "https://example.com/early")) {
		t.Error("/early allowed; the rule before the cap was lost")
	}
	if !r.Allowed(mustURL(t, "https://example.com/late")) {
		t.Error("/late disallowed by a rule past the cap")
	}
	if len(r.Sitemaps()) != 0 {
		t.Errorf("Sitemaps() = %v, want none past the cap", r.Sitemaps())
	}
}

func TestRobotsNil(t *testing.T) {
	t.Parallel()
	var r *Robots
	if !r.Allowed(mustURL(t, "https://example.com/x")) || r.Sitemaps() != nil || r.CrawlDelay() != 0 {
		t.Error("a nil *Robots does not allow everything")
	}
}

func newRobotsFetcher(t *testing.T) *fetch.Client {
	t.Helper()
	c := fetch.New(fetch.Options{AllowPrivate: true}, nil)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func TestFetchRobots(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		handler    http.HandlerFunc
		unavail    bool // error wrapping ErrRobotsUnavailable
		disallowed bool // /private/x disallowed
	}{
		{"ok", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("User-agent: *\nDisallow: /private/\n"))
		}, false, true},
		{"not found", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, false, false},
		{"gone", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusGone) }, false, false},
		{"forbidden", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte("User-agent: *\nDisallow: /\n"))
		}, false, false},
		{"server error", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte("User-agent: *\nDisallow: /\n"))
		}, true, false},
		{"redirected", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.Redirect(w, r, "/real-robots.txt", http.StatusMovedPermanently)
				return
			}
			w.Write([]byte("User-agent: *\nDisallow: /private/\nSitemap: sm.xml\n"))
		}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tt.handler)
			t.Cleanup(srv.Close)
			root := mustURL(t, srv.URL+"/some/start/page?x=1")
			r, err := FetchRobots(t.Context(), newRobotsFetcher(t), root, "")
			if r == nil {
				t.Fatal("FetchRobots returned a nil *Robots")
			}
			if got := errors.Is(err, ErrRobotsUnavailable); got != tt.unavail || (!tt.unavail && err != nil) {
				t.Fatalf("err = %v, want unavailable %v", err, tt.unavail)
			}
			if got := !r.Allowed(mustURL(t, srv.URL+"/private/x")); got != tt.disallowed {
				t.Errorf("/private/x disallowed = %v, want %v", got, tt.disallowed)
			}
			if !r.Allowed(mustURL(t, srv.URL+"/public")) {
				t.Error("/public disallowed")
			}
		})
	}
}

func TestFetchRobotsRedirectResolvesSitemaps(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.Redirect(w, r, "/conf/robots.txt", http.StatusFound)
			return
		}
		w.Write([]byte("Sitemap: sm.xml\n"))
	}))
	t.Cleanup(srv.Close)
	r, err := FetchRobots(t.Context(), newRobotsFetcher(t), mustURL(t, srv.URL), "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{srv.URL + "/conf/sm.xml"}, r.Sitemaps()); diff != "" {
		t.Errorf("Sitemaps() (-want +got):\n%s", diff)
	}
}

func TestFetchRobotsUnreachable(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close()
	r, err := FetchRobots(t.Context(), newRobotsFetcher(t), mustURL(t, addr), "")
	if !errors.Is(err, ErrRobotsUnavailable) || !errors.Is(err, fetch.ErrConnection) {
		t.Errorf("err = %v, want ErrRobotsUnavailable wrapping fetch.ErrConnection", err)
	}
	if r == nil || !r.Allowed(mustURL(t, addr+"/x")) {
		t.Error("an unreachable robots.txt does not allow everything")
	}
}

func TestFetchRobotsDeadline(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	r, err := FetchRobots(ctx, newRobotsFetcher(t), mustURL(t, srv.URL), "")
	if !errors.Is(err, ErrRobotsUnavailable) {
		t.Errorf("err = %v, want ErrRobotsUnavailable", err)
	}
	if d := time.Since(start); d > testenv.Patient(2*time.Second) {
		t.Errorf("FetchRobots took %v past a 100ms deadline", d)
	}
	if r == nil || !r.Allowed(mustURL(t, srv.URL+"/x")) {
		t.Error("a timed-out robots.txt does not allow everything")
	}
}

func TestFetchRobotsTestsite(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(testsite.New(testsite.Options{Pages: testsite.MinPages}))
	t.Cleanup(srv.Close)
	f := newRobotsFetcher(t)
	root := mustURL(t, srv.URL+"/blog/")

	r, err := FetchRobots(t.Context(), f, root, "")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{
		"/": true, testsite.PathAbout: true, testsite.PathPrivate: false, testsite.PathSecret: false,
	} {
		if got := r.Allowed(mustURL(t, srv.URL+path)); got != want {
			t.Errorf("Allowed(%s) = %v, want %v", path, got, want)
		}
	}
	if diff := cmp.Diff([]string{srv.URL + testsite.PathSitemap}, r.Sitemaps()); diff != "" {
		t.Errorf("Sitemaps() (-want +got):\n%s", diff)
	}

	bad, err := FetchRobots(t.Context(), f, root, testsite.BadBot+"/2.0")
	if err != nil {
		t.Fatal(err)
	}
	if bad.Allowed(mustURL(t, srv.URL+testsite.PathAbout)) {
		t.Error("BadBot allowed /about")
	}
}

// Robots only reads the path and query of the URL it is asked about.
func TestRobotsAllowedEscapedPath(t *testing.T) {
	t.Parallel()
	r := ParseRobots([]byte("User-agent: *\nDisallow: /caf%C3%A9\n"), mustURL(t, "https://example.com/robots.txt"), "")
	u := &url.URL{Scheme: "https", Host: "example.com", Path: "/café/menu"}
	if r.Allowed(u) {
		t.Error("percent-encoded rule does not match the escaped path")
	}
}

// A robots.txt cannot make the crawler compile or test without bound:
// rules past the length, wildcard and pattern-count bounds are dropped,
// plain prefix rules are all kept.
func TestParseRobotsBounds(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	b.WriteString("Disallow: /long" + strings.Repeat("*a", 2000) + "\n") // over 2,048 bytes: dropped
	b.WriteString("Disallow: /stars*a*b*c*d*e*f*g*h*i*j*k\n")            // 11 wildcards: dropped
	b.WriteString("Disallow: /ten*a*b*c*d*e*f*g*h*i*j$\n")               // 10 wildcards: kept
	for i := range maxRobotsPatternRules + 10 {
		fmt.Fprintf(&b, "Disallow: /p%d/*.pdf\n", i) // the last 10 are past the bound
	}
	for i := range 3000 {
		fmt.Fprintf(&b, "Disallow: /plain%d/\n", i) // prefix rules: all kept
	}
	r := ParseRobots([]byte(b.String()), mustURL(t, "https://example.com/robots.txt"), "")
	for path, allowed := range map[string]bool{
		"/long" + strings.Repeat("a", 2000): true,
		"/starsabcdefghijk":                 true,
		"/tenabcdefghij":                    false,
		"/p0/x.pdf":                         false,
		fmt.Sprintf("/p%d/x.pdf", maxRobotsPatternRules-2): false,
		fmt.Sprintf("/p%d/x.pdf", maxRobotsPatternRules+5): true,
		"/plain2999/page": false,
		"/elsewhere":      true,
	} {
		if got := r.Allowed(mustURL(t, "https://example.com"+path)); got != allowed {
			t.Errorf("%s: allowed = %v, want %v", path, got, allowed)
		}
	}
}
