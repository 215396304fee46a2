package scrape

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/threat"
)

// threatSite serves a landing page, an HTTP redirect and a script
// redirect to it under the name "localhost", and counts the landing's
// hits: a blocked hop must never reach it.
type threatSite struct {
	*httptest.Server
	landing atomic.Int64
}

func newThreatSite(t *testing.T) *threatSite {
	s := &threatSite{}
	mux := http.NewServeMux()
	landingURL := func(r *http.Request) string {
		_, port, _ := strings.Cut(r.Host, ":")
		return "http://localhost:" + port + "/landing"
	}
	mux.HandleFunc("/landing", func(w http.ResponseWriter, r *http.Request) {
		s.landing.Add(1)
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, articleHTML)
	})
	mux.HandleFunc("/go", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, landingURL(r), http.StatusFound)
	})
	mux.HandleFunc("/js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<!doctype html><html><head><title>Moving</title><script>location.replace(`+"`"+landingURL(r)+"`"+`)</script></head><body><p>This shop has moved.</p></body></html>`)
	})
	mux.HandleFunc("/article", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, articleHTML)
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func wantUnsafe(t *testing.T, err error, mention string) {
	t.Helper()
	var f *errcode.Failure
	if !errors.Is(err, ErrUnsafeDomain) || !errors.Is(err, threat.ErrBlocked) || !errors.As(err, &f) || !strings.Contains(f.Msg, mention) {
		t.Fatalf("err = %v, want an unsafe-domain failure mentioning %q", err, mention)
	}
}

func TestThreatProtectionFetch(t *testing.T) {
	t.Parallel()
	s := newThreatSite(t)
	e := newEngine(t, true)
	ctx := context.Background()

	// A redirect hop to a blacklisted host is refused before it is
	// requested.
	o := defaults(s.URL+"/go", FormatMarkdown)
	o.ThreatProtection = &ThreatProtection{Blacklist: []string{"localhost"}}
	_, err := e.Scrape(ctx, o)
	wantUnsafe(t, err, "localhost")
	if n := s.landing.Load(); n != 0 {
		t.Fatalf("the blocked hop was fetched %d times", n)
	}

	// The start URL itself: nothing is fetched.
	o = defaults(s.URL+"/article", FormatMarkdown)
	o.ThreatProtection = &ThreatProtection{Mode: "normal", Blacklist: []string{"127.0.0.1"}}
	_, err = e.Scrape(ctx, o)
	wantUnsafe(t, err, "127.0.0.1")

	// Whitelisted: the redirect is followed; the scan costs 2 credits.
	o = defaults(s.URL+"/go", FormatMarkdown)
	o.ThreatProtection = &ThreatProtection{Whitelist: []string{"localhost"}, BlockedTLDs: []string{"localhost"}}
	doc, err := e.Scrape(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(*doc.Markdown, "Tide Tables") || doc.Metadata.CreditsUsed != 3 || s.landing.Load() != 1 {
		t.Errorf("whitelisted: credits %d, landing hits %d, markdown %q", doc.Metadata.CreditsUsed, s.landing.Load(), *doc.Markdown)
	}
	// mode off: no scan, no charge.
	o.ThreatProtection = &ThreatProtection{Mode: "off", Blacklist: []string{"localhost"}}
	if doc, err = e.Scrape(ctx, o); err != nil || doc.Metadata.CreditsUsed != 1 {
		t.Errorf("mode off: %v", err)
	}
}

func TestThreatBlocklistFile(t *testing.T) {
	t.Parallel()
	s := newThreatSite(t)
	path := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(path, []byte("0.0.0.0 evil.example\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := threat.New(threat.Options{BlocklistFile: path})
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, true)
	e.threat = c
	ctx := context.Background()
	// Every request, with or without threatProtection; never looked up.
	_, err = e.Scrape(ctx, defaults("http://cdn.evil.example/page", FormatMarkdown))
	wantUnsafe(t, err, "evil.example")
	// The operator's list cannot be turned off.
	o := defaults(s.URL+"/article", FormatMarkdown)
	o.ThreatProtection = &ThreatProtection{Mode: "off"}
	if _, err = e.Scrape(ctx, o); !errors.Is(err, ErrForbidden) {
		t.Errorf("mode off under an enforced list: %v", err)
	}
	if _, err = e.Scrape(ctx, defaults(s.URL+"/article", FormatMarkdown)); err != nil {
		t.Errorf("an unlisted host: %v", err)
	}
}

func TestThreatProtectionBrowser(t *testing.T) {
	t.Parallel()
	e, cr := browserEngine(t)
	s := newThreatSite(t)
	ctx := context.Background()
	for _, path := range []string{"/go", "/js"} {
		o := defaults(s.URL+path, FormatMarkdown, FormatScreenshot)
		o.ThreatProtection = &ThreatProtection{Blacklist: []string{"localhost"}}
		_, err := e.Scrape(ctx, o)
		wantUnsafe(t, err, "localhost")
		if n := s.landing.Load(); n != 0 {
			t.Fatalf("%s: the blocked navigation was fetched %d times", path, n)
		}
	}
	if cr.count() != 2 {
		t.Errorf("renders = %d, want 2", cr.count())
	}
	// Allowed: the script redirect lands.
	o := defaults(s.URL+"/js", FormatMarkdown, FormatScreenshot)
	o.ThreatProtection = &ThreatProtection{Blacklist: []string{"*.localhost"}}
	doc, err := e.Scrape(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(*doc.Markdown, "Tide Tables") || s.landing.Load() == 0 {
		t.Errorf("allowed script redirect: %q", *doc.Markdown)
	}
}
