package scrape

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/browser"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/proxypool"
	"github.com/firegate/firegate/internal/proxypool/proxytest"
)

// syncBuffer collects log lines of every level.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// proxyEngine is an engine whose fetcher admits loopback targets, with
// the given pools and every log line in logs.
func proxyEngine(t *testing.T, basic, enhanced string) (*Engine, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	parse := func(s string) *proxypool.Pool {
		p, err := proxypool.Parse(s, proxypool.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	f := fetch.New(fetch.Options{AllowPrivate: true, MaxBodyBytes: 1 << 20}, log)
	t.Cleanup(f.CloseIdleConnections)
	return New(Config{Fetcher: f, Log: log, Proxies: proxypool.Pools{Basic: parse(basic), Enhanced: parse(enhanced)}}), logs
}

// guardedSite blocks what arrives through the proxy named "basic" the way
// mode says, and serves an article to everything else; it records the
// Via header of every request.
func guardedSite(t *testing.T, mode string) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var via []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		via = append(via, r.Header.Get("Via"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if strings.Contains(r.Header.Get("Via"), "basic") {
			switch mode {
			case "403":
				w.WriteHeader(http.StatusForbidden)
				io.WriteString(w, "<html><body>Forbidden</body></html>")
			case "challenge":
				io.WriteString(w, `<!DOCTYPE html><html><head><title>Just a moment...</title></head><body><script>window._cf_chl_opt={}</script></body></html>`)
			case "empty":
			}
			return
		}
		io.WriteString(w, articleHTML)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), via...)
	}
}

func TestProxyAutoEscalatesBlockedAnswers(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"403", "challenge", "empty"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			site, via := guardedSite(t, mode)
			basic := proxytest.NewHTTP(t, proxytest.Options{Name: "basic"})
			enhanced := proxytest.NewHTTP(t, proxytest.Options{Name: "enhanced"})
			e, _ := proxyEngine(t, "http://"+basic.Addr(), "http://"+enhanced.Addr())

			doc, err := e.Scrape(context.Background(), defaults(site.URL+"/article", FormatMarkdown))
			if err != nil {
				t.Fatal(err)
			}
			if doc.Metadata.ProxyUsed != "enhanced" || doc.Metadata.StatusCode != 200 || !strings.Contains(*doc.Markdown, "Tide Tables") {
				t.Errorf("auto: proxyUsed %q status %d markdown %.60q", doc.Metadata.ProxyUsed, doc.Metadata.StatusCode, *doc.Markdown)
			}
			if doc.Metadata.CreditsUsed != 1 {
				t.Errorf("the retry cost extra: %d credits", doc.Metadata.CreditsUsed)
			}
			if basic.Forwards() != 1 || enhanced.Forwards() != 1 {
				t.Errorf("auto: basic %d, enhanced %d requests; want one each", basic.Forwards(), enhanced.Forwards())
			}
			if doc.Warning != nil {
				t.Errorf("warning %q", *doc.Warning)
			}

			// basic takes the blocked answer as it is.
			o := defaults(site.URL+"/article", FormatMarkdown)
			o.Proxy = "basic"
			doc, err = e.Scrape(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if doc.Metadata.ProxyUsed != "basic" || enhanced.Forwards() != 1 || basic.Forwards() != 2 {
				t.Errorf("basic: proxyUsed %q, basic %d enhanced %d requests", doc.Metadata.ProxyUsed, basic.Forwards(), enhanced.Forwards())
			}
			// enhanced goes straight to the enhanced pool.
			o.Proxy = "enhanced"
			doc, err = e.Scrape(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if doc.Metadata.ProxyUsed != "enhanced" || enhanced.Forwards() != 2 || basic.Forwards() != 2 {
				t.Errorf("enhanced: proxyUsed %q, basic %d enhanced %d requests", doc.Metadata.ProxyUsed, basic.Forwards(), enhanced.Forwards())
			}
			for _, v := range via() {
				if v == "" {
					t.Errorf("a request reached the site directly (no Via): %v", via())
				}
			}
		})
	}
}

func TestProxyAutoKeepsServedAnswers(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	basic := proxytest.NewHTTP(t, proxytest.Options{Name: "basic"})
	enhanced := proxytest.NewHTTP(t, proxytest.Options{Name: "enhanced"})
	e, _ := proxyEngine(t, "http://"+basic.Addr(), "http://"+enhanced.Addr())
	for _, path := range []string{"/article", "/gone"} {
		doc, err := e.Scrape(context.Background(), defaults(s.URL+path, FormatMarkdown))
		if err != nil {
			t.Fatal(err)
		}
		if doc.Metadata.ProxyUsed != "basic" {
			t.Errorf("%s: proxyUsed %q", path, doc.Metadata.ProxyUsed)
		}
	}
	if basic.Forwards() != 2 || enhanced.Forwards() != 0 {
		t.Errorf("basic %d enhanced %d; a page that was served (or a 410) is not retried", basic.Forwards(), enhanced.Forwards())
	}
}

func TestProxyEnhancedFallsBackWithWarning(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	basic := proxytest.NewHTTP(t, proxytest.Options{Name: "basic"})
	e, _ := proxyEngine(t, "http://"+basic.Addr(), "")
	o := defaults(s.URL+"/article", FormatMarkdown)
	o.Proxy = "enhanced"
	doc, err := e.Scrape(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Metadata.ProxyUsed != "enhanced" || basic.Forwards() != 1 || doc.Warning == nil || !strings.Contains(*doc.Warning, "ENHANCED_PROXY_URLS") {
		t.Errorf("proxyUsed %q, basic %d, warning %v", doc.Metadata.ProxyUsed, basic.Forwards(), doc.Warning)
	}
}

func TestProxyCountry(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	de := proxytest.NewHTTP(t, proxytest.Options{Name: "de"})
	us := proxytest.NewHTTP(t, proxytest.Options{Name: "us"})
	e, _ := proxyEngine(t, "DE=http://"+de.Addr()+",US=http://"+us.Addr(), "")
	scrape := func(country string, named bool) *Document {
		o := defaults(s.URL+"/article", FormatMarkdown)
		o.Location = Location{Country: country, CountryNamed: named}
		doc, err := e.Scrape(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	for range 3 {
		if doc := scrape("DE", true); doc.Warning != nil {
			t.Errorf("DE: warning %q", *doc.Warning)
		}
	}
	if de.Forwards() != 3 || us.Forwards() != 0 {
		t.Errorf("location DE: de %d us %d", de.Forwards(), us.Forwards())
	}
	scrape("US", false) // the default country
	if us.Forwards() != 1 {
		t.Errorf("default US: us %d", us.Forwards())
	}
	doc := scrape("FR", true)
	if doc.Warning == nil || !strings.Contains(*doc.Warning, "No proxy of country FR") {
		t.Errorf("FR: warning %v", doc.Warning)
	}
	if de.Forwards()+us.Forwards() != 5 {
		t.Errorf("FR went elsewhere than a configured proxy: de %d us %d", de.Forwards(), us.Forwards())
	}
}

func TestProxyStickyPerHostForACrawl(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	var proxies []*proxytest.Proxy
	var entries []string
	for i := range 4 {
		p := proxytest.NewHTTP(t, proxytest.Options{Name: fmt.Sprint("p", i)})
		proxies = append(proxies, p)
		entries = append(entries, "http://"+p.Addr())
	}
	e, _ := proxyEngine(t, strings.Join(entries, ","), "")
	// Several hosts of the one test server: 127.0.0.1, localhost and
	// names under localhost all reach it.
	_, port, _ := strings.Cut(strings.TrimPrefix(s.URL, "http://"), ":")
	hosts := []string{"127.0.0.1", "localhost", "a.localhost", "b.localhost", "c.localhost", "d.localhost"}
	for range 3 {
		for _, h := range hosts {
			o := defaults("http://"+h+":"+port+"/article", FormatMarkdown)
			o.ProxySession = "crawl-1"
			if _, err := e.Scrape(context.Background(), o); err != nil {
				t.Fatal(err)
			}
		}
	}
	byHost := map[string]map[int]bool{}
	used := map[int]bool{}
	for i, p := range proxies {
		for _, target := range p.Targets() {
			h, _, _ := strings.Cut(target, ":")
			if byHost[h] == nil {
				byHost[h] = map[int]bool{}
			}
			byHost[h][i] = true
			used[i] = true
		}
	}
	for _, h := range hosts {
		if len(byHost[h]) != 1 {
			t.Errorf("host %s went through %d proxies during the crawl, want 1", h, len(byHost[h]))
		}
	}
	if len(used) < 2 {
		t.Errorf("every host of the crawl used the same proxy: %v", byHost)
	}
}

func TestProxyCredentialsNeverShown(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	good := proxytest.NewHTTP(t, proxytest.Options{Name: "basic", User: "alice", Pass: "hunter2"})
	e, logs := proxyEngine(t, "http://alice:hunter2@"+good.Addr(), "http://alice:wrong-pw@"+good.Addr())
	doc, err := e.Scrape(context.Background(), defaults(s.URL+"/article", FormatMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	o := defaults(s.URL+"/article", FormatMarkdown)
	o.Proxy = "enhanced"
	_, eerr := e.Scrape(context.Background(), o)
	if eerr == nil {
		t.Fatal("the enhanced proxy refused the credentials, yet the scrape succeeded")
	}
	js, _ := json.Marshal(doc)
	for _, s := range []string{string(js), eerr.Error(), fmt.Sprintf("%+v", eerr), logs.String()} {
		for _, secret := range []string{"hunter2", "wrong-pw", "alice"} {
			if strings.Contains(s, secret) {
				t.Errorf("%q shown in %s", secret, s)
			}
		}
	}
	if !strings.Contains(logs.String(), "proxy failed") {
		t.Errorf("the proxy's failure was not logged, so the log check checked nothing:\n%s", logs.String())
	}
}

func TestProxyAutoEscalatesInTheBrowser(t *testing.T) {
	t.Parallel()
	e, cr := browserEngine(t)
	site, via := guardedSite(t, "403")
	basic := proxytest.NewHTTP(t, proxytest.Options{Name: "basic", User: "u", Pass: "basic-pw"})
	enhanced := proxytest.NewHTTP(t, proxytest.Options{Name: "enhanced", User: "u", Pass: "enhanced-pw"})
	withPools, _ := proxyEngine(t, "http://u:basic-pw@"+basic.Addr(), "http://u:enhanced-pw@"+enhanced.Addr())
	e.proxies = withPools.proxies
	o := defaults(site.URL+"/article", FormatMarkdown)
	o.WaitFor = 100 * time.Millisecond // rendered in the browser
	doc, err := e.Scrape(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if n := cr.count(); n != 2 {
		t.Errorf("%d renders, want 2 (basic, then enhanced)", n)
	}
	if doc.Metadata.ProxyUsed != "enhanced" || doc.Metadata.StatusCode != 200 || !strings.Contains(*doc.Markdown, "Tide Tables") {
		t.Errorf("proxyUsed %q status %d markdown %.80q", doc.Metadata.ProxyUsed, doc.Metadata.StatusCode, *doc.Markdown)
	}
	if basic.Forwards() == 0 || enhanced.Forwards() == 0 {
		t.Errorf("basic %d, enhanced %d forwarded requests", basic.Forwards(), enhanced.Forwards())
	}
	for _, v := range via() {
		if v == "" {
			t.Errorf("a request of the page reached the site directly: %v", via())
		}
	}
}

func TestProxyFailureTriesAnother(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	good := proxytest.NewHTTP(t, proxytest.Options{Name: "good"})
	e, _ := proxyEngine(t, "http://"+dead+",http://"+good.Addr(), "")
	for range 3 {
		doc, err := e.Scrape(context.Background(), defaults(s.URL+"/article", FormatMarkdown))
		if err != nil {
			t.Fatal(err)
		}
		if doc.Metadata.ProxyUsed != "basic" {
			t.Errorf("proxyUsed %q", doc.Metadata.ProxyUsed)
		}
	}
	// The first scrape met the dead proxy and went on through the good
	// one; the next ones skip the dead proxy.
	if good.Forwards() != 3 {
		t.Errorf("good proxy carried %d of 3 scrapes", good.Forwards())
	}
}

// recordingRenderer answers every render with a page and keeps the
// requests.
type recordingRenderer struct {
	mu   sync.Mutex
	reqs []browser.Request
}

func (r *recordingRenderer) Available() error { return nil }

func (r *recordingRenderer) Render(_ context.Context, req browser.Request) (*browser.Result, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return &browser.Result{URL: req.URL, StatusCode: 200, HTML: articleHTML, ContentType: "text/html"}, nil
}

type nopMedia struct{}

func (nopMedia) Put(context.Context, string, []byte, string) (string, error) { return "m", nil }

func TestProxyEnhancedRendersStealthily(t *testing.T) {
	t.Parallel()
	rr := &recordingRenderer{}
	e := New(Config{Fetcher: fetch.New(fetch.Options{AllowPrivate: true}, nil), Browser: rr, Media: nopMedia{}, MediaURL: func(id string) string { return id }})
	for _, tc := range []struct {
		proxy   string
		loc     Location
		stealth bool
		langs   []string
	}{
		{"basic", Location{Country: "DE", CountryNamed: true}, false, nil},
		{"enhanced", Location{Country: "DE", CountryNamed: true}, true, []string{"de-DE", "de"}},
		{"enhanced", Location{Country: "DE", CountryNamed: true, Languages: []string{"en-GB"}}, true, []string{"en-GB"}},
		{"enhanced", Location{Country: "US"}, true, nil},
	} {
		o := defaults("http://example.test/", FormatMarkdown)
		o.WaitFor = time.Millisecond // the browser
		o.Proxy, o.Location = tc.proxy, tc.loc
		if _, err := e.Scrape(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		rr.mu.Lock()
		got := rr.reqs[len(rr.reqs)-1]
		rr.mu.Unlock()
		if got.Stealth != tc.stealth || strings.Join(got.Languages, ",") != strings.Join(tc.langs, ",") || got.Timezone != countryTimezone(tc.loc.Country) {
			t.Errorf("%s %+v: stealth %v languages %v timezone %q", tc.proxy, tc.loc, got.Stealth, got.Languages, got.Timezone)
		}
	}
}
