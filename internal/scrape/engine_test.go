package scrape

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/testenv"
)

// defaults mirrors the API defaults httpapi applies.
func defaults(url string, formats ...string) Options {
	o := Options{URL: url, OnlyMainContent: true, Timeout: testenv.Patient(10 * time.Second), RemoveBase64Images: true,
		Parsers: []Parser{{Type: "pdf", Mode: "auto"}}, BlockAds: true, Proxy: "auto", SkipTLSVerification: true,
		Location: Location{Country: "US"}}
	for _, f := range formats {
		o.Formats = append(o.Formats, Format{Type: f})
	}
	return o
}

const articleHTML = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Tide Tables</title>
<meta name="description" content="When the sea comes in."><meta property="og:locale:alternate" content="fr_FR">
<script>track()</script><style>p{color:red}</style></head><body>
<nav><a href="/">Home</a><a href="/about">About</a></nav>
<article><h1>Tide Tables</h1><p>The sea comes in <a href="/moon">twice a day</a>, pulled by the moon and, a little, by the sun.</p>
<p>Fishermen read the tables the way farmers read the sky, and plan their nets around them.</p>
<img src="/img/tide.png" alt="A chart"></article>
<footer>Copyright Harbour Press</footer></body></html>`

type site struct {
	*httptest.Server
	hits atomic.Int32
}

func newSite(t testing.TB) *site {
	s := &site{}
	mux := http.NewServeMux()
	mux.HandleFunc("/article", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, articleHTML)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/article", http.StatusFound)
	})
	mux.HandleFunc("/gone", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusGone)
		io.WriteString(w, "<html><body><p>This page is gone.</p></body></html>")
	})
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "just text\n")
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
		w.Write([]byte("<html><body><p>Caf\xe9 cr\xe8me</p></body></html>"))
	})
	mux.HandleFunc("/doc.pdf", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		io.WriteString(w, "%PDF-1.4\n%fake\n")
	})
	mux.HandleFunc("/image.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00"))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	})
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func newEngine(t *testing.T, allowPrivate bool) *Engine {
	log := testenv.Logger(t)
	return New(Config{Fetcher: fetch.New(fetch.Options{AllowPrivate: allowPrivate, MaxBodyBytes: 1 << 20}, log), Log: log})
}

func TestScrapeArticle(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	e := newEngine(t, true)
	doc, err := e.Scrape(context.Background(), defaults(s.URL+"/redirect", FormatMarkdown, FormatHTML, FormatRawHTML, FormatLinks, FormatImages))
	if err != nil {
		t.Fatal(err)
	}
	md := *doc.Markdown
	for _, want := range []string{"# Tide Tables", "[twice a day](" + s.URL + "/moon)", "![A chart](" + s.URL + "/img/tide.png)"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	for _, unwanted := range []string{"Copyright Harbour Press", "track()", "About"} {
		if strings.Contains(md, unwanted) {
			t.Errorf("markdown has %q (onlyMainContent):\n%s", unwanted, md)
		}
	}
	if strings.Contains(*doc.HTML, "<script") || strings.Contains(*doc.HTML, "<style") || !strings.Contains(*doc.HTML, s.URL+"/moon") {
		t.Errorf("html not cleaned or not absolute:\n%s", *doc.HTML)
	}
	if *doc.RawHTML != articleHTML {
		t.Errorf("rawHtml differs from the served bytes")
	}
	if !slices.Contains(doc.Links, s.URL+"/about") || !slices.Contains(doc.Links, s.URL+"/moon") {
		t.Errorf("links %v", doc.Links)
	}
	if !slices.Contains(doc.Images, s.URL+"/img/tide.png") {
		t.Errorf("images %v", doc.Images)
	}
	m := doc.Metadata
	if m.SourceURL != s.URL+"/redirect" || m.URL != s.URL+"/article" || m.StatusCode != 200 || m.Error != nil {
		t.Errorf("metadata %+v", m)
	}
	if m.ContentType != "text/html; charset=utf-8" || m.ScrapeID == "" || m.CreditsUsed != 1 || m.ProxyUsed != "basic" {
		t.Errorf("metadata %+v", m)
	}
	if m.Page["title"] != "Tide Tables" || m.Page["description"] != "When the sea comes in." || m.Page["language"] != "en" {
		t.Errorf("page metadata %v", m.Page)
	}
}

func TestScrapeOnlyRequestedFormats(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	doc, err := newEngine(t, true).Scrape(context.Background(), defaults(s.URL+"/article", FormatLinks))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Markdown != nil || doc.HTML != nil || doc.RawHTML != nil || doc.Images != nil || len(doc.Links) == 0 {
		t.Errorf("unrequested formats present: %+v", doc)
	}
}

func TestScrapeFullPage(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	o := defaults(s.URL+"/article", FormatMarkdown)
	o.OnlyMainContent = false
	doc, err := newEngine(t, true).Scrape(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(*doc.Markdown, "Copyright Harbour Press") {
		t.Errorf("onlyMainContent false must keep the footer:\n%s", *doc.Markdown)
	}
}

func TestScrapeContentKinds(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	e := newEngine(t, true)
	ctx := context.Background()

	doc, err := e.Scrape(ctx, defaults(s.URL+"/gone", FormatMarkdown))
	if err != nil || doc.Metadata.StatusCode != 410 || doc.Metadata.Error == nil || !strings.Contains(*doc.Markdown, "This page is gone.") {
		t.Errorf("non-2xx target: %+v %v", doc, err)
	}
	doc, err = e.Scrape(ctx, defaults(s.URL+"/text", FormatMarkdown))
	if err != nil || *doc.Markdown != "just text\n" {
		t.Errorf("text: %v %v", doc, err)
	}
	doc, err = e.Scrape(ctx, defaults(s.URL+"/latin1", FormatMarkdown))
	if err != nil || !strings.Contains(*doc.Markdown, "Café crème") {
		t.Errorf("latin1: %v %v", doc, err)
	}

	o := defaults(s.URL+"/doc.pdf", FormatMarkdown)
	o.Parsers = nil
	doc, err = e.Scrape(ctx, o)
	if err != nil || *doc.Markdown != base64.StdEncoding.EncodeToString([]byte("%PDF-1.4\n%fake\n")) {
		t.Errorf("pdf with parsers []: %v %v", doc, err)
	}
	if _, err := e.Scrape(ctx, defaults(s.URL+"/doc.pdf", FormatMarkdown)); !errors.Is(err, ErrUnsupportedFile) {
		t.Errorf("corrupt pdf with the pdf parser: %v", err)
	}

	if _, err := e.Scrape(ctx, defaults(s.URL+"/image.png", FormatMarkdown)); !errors.Is(err, ErrUnsupportedFile) {
		t.Errorf("image as markdown: %v", err)
	}
	doc, err = e.Scrape(ctx, defaults(s.URL+"/image.png", FormatRawBase64))
	if err != nil || *doc.RawBase64 != base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n\x00\x00")) || doc.Metadata.ContentType != "image/png" {
		t.Errorf("rawBase64: %v %v", doc, err)
	}
}

func TestScrapeErrors(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	ctx := context.Background()

	o := defaults(s.URL+"/slow", FormatMarkdown)
	o.Timeout = 300 * time.Millisecond
	start := time.Now()
	if _, err := newEngine(t, true).Scrape(ctx, o); !errors.Is(err, ErrTimeout) {
		t.Errorf("slow: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("timeout not honoured: took %v", d)
	}

	o = defaults(s.URL+"/article", FormatMarkdown)
	o.Timeout = 300 * time.Millisecond
	o.WaitFor = time.Second
	if _, err := newEngine(t, true).Scrape(ctx, o); !errors.Is(err, ErrTimeout) {
		t.Errorf("waitFor past timeout: %v", err)
	}

	if _, err := newEngine(t, true).Scrape(ctx, defaults("http://no-such-host.invalid/", FormatMarkdown)); !errors.Is(err, ErrDNSResolution) {
		t.Errorf("dns: %v", err)
	}
	if _, err := newEngine(t, false).Scrape(ctx, defaults(s.URL+"/article", FormatMarkdown)); !errors.Is(err, ErrBlockedTarget) {
		t.Errorf("loopback with private targets refused: %v", err)
	}
}

func TestCacheOnlyModesNeverFetch(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	e := newEngine(t, true)
	o := defaults(s.URL+"/article", FormatMarkdown)
	o.Lockdown = true
	if _, err := e.Scrape(context.Background(), o); !errors.Is(err, ErrLockdownCacheMiss) {
		t.Errorf("lockdown: %v", err)
	}
	o = defaults(s.URL+"/article", FormatMarkdown)
	one := time.Millisecond
	o.MinAge = &one
	if _, err := e.Scrape(context.Background(), o); !errors.Is(err, ErrNoCachedData) {
		t.Errorf("minAge: %v", err)
	}
	if n := s.hits.Load(); n != 0 {
		t.Errorf("cache-only modes made %d requests", n)
	}
}

func TestUnsupportedFeatures(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	e := newEngine(t, true)
	for _, tc := range []struct {
		code, feature string
		mod           func(*Options)
	}{
		{"SCRAPE_ACTIONS_NOT_SUPPORTED", "actions", func(o *Options) { o.Actions = []Action{{Type: "scrape"}} }},
		{"SCRAPE_SCREENSHOT_NOT_SUPPORTED", "formats.screenshot", func(o *Options) { o.Formats = append(o.Formats, Format{Type: FormatScreenshot}) }},
		{"SCRAPE_LLM_NOT_CONFIGURED", "formats.json", func(o *Options) { o.Formats = append(o.Formats, Format{Type: FormatJSON}) }},
		{"SCRAPE_LLM_NOT_CONFIGURED", "formats.summary", func(o *Options) { o.Formats = append(o.Formats, Format{Type: FormatSummary}) }},
		{"SCRAPE_LLM_NOT_CONFIGURED", "onlyCleanContent", func(o *Options) { o.OnlyCleanContent = true }},
		{"SCRAPE_BRANDING_NOT_SUPPORTED", "formats.branding", func(o *Options) { o.Formats = append(o.Formats, Format{Type: FormatBranding}) }},
		{"SCRAPE_MEDIA_NOT_SUPPORTED", "formats.audio", func(o *Options) { o.Formats = append(o.Formats, Format{Type: FormatAudio}) }},
		{"SCRAPE_PROFILE_NOT_SUPPORTED", "profile", func(o *Options) { o.Profile = &Profile{Name: "p"} }},
	} {
		o := defaults(s.URL+"/article", FormatMarkdown)
		tc.mod(&o)
		var fe *errcode.Failure
		if _, err := e.Scrape(context.Background(), o); !errors.As(err, &fe) || fe.Kind.Code() != tc.code || fe.Field != tc.feature {
			t.Errorf("%s: got %v", tc.feature, err)
		}
	}
	o := defaults(s.URL+"/article", FormatMarkdown)
	o.DomainTools = true
	if _, err := e.Scrape(context.Background(), o); !errors.Is(err, ErrForbidden) {
		t.Errorf("domainTools: %v", err)
	}
	if n := s.hits.Load(); n != 0 {
		t.Errorf("rejected requests made %d fetches", n)
	}
}

func TestHostilePages(t *testing.T) {
	t.Parallel()
	deep := "<html><body>" + strings.Repeat("<div>", 100000) + "<p>deep text survives</p>" + strings.Repeat("</div>", 100000) + "</body></html>"
	huge := "<html><body>" + strings.Repeat("<p>lorem ipsum dolor sit amet</p>", 200000) + "</body></html>" // ~6.6 MB
	binary := "<html><body>\x00\x01\x02\xff\xfe<p>after binary</p></body></html>"
	mux := http.NewServeMux()
	mux.HandleFunc("/deep", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, deep) })
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, huge)
	})
	mux.HandleFunc("/binary", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, binary)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/misdeclared", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=shift_jis")
		io.WriteString(w, "<html><body><p>naïve café</p></body></html>")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	e := newEngine(t, true) // MaxBodyBytes 1 MiB
	ctx := context.Background()

	doc, err := e.Scrape(ctx, defaults(srv.URL+"/deep", FormatMarkdown))
	if err != nil || !strings.Contains(*doc.Markdown, "deep text survives") {
		t.Errorf("deeply nested page: %v", err)
	}
	doc, err = e.Scrape(ctx, defaults(srv.URL+"/huge", FormatMarkdown))
	if err != nil || doc.Warning == nil || !strings.Contains(*doc.Markdown, "lorem ipsum") || len(*doc.Markdown) > 1<<20 {
		t.Errorf("huge page must be truncated with a warning: %v", err)
	}
	doc, err = e.Scrape(ctx, defaults(srv.URL+"/binary", FormatMarkdown))
	if err != nil || !strings.Contains(*doc.Markdown, "after binary") {
		t.Errorf("binary bytes in html: %v", err)
	}
	if _, err := e.Scrape(ctx, defaults(srv.URL+"/loop", FormatMarkdown)); !errors.Is(err, ErrSite) || !strings.Contains(err.Error(), "redirect") {
		t.Errorf("redirect loop: %v", err)
	}
	doc, err = e.Scrape(ctx, defaults(srv.URL+"/misdeclared", FormatMarkdown))
	if err != nil || doc.Markdown == nil || *doc.Markdown == "" {
		t.Errorf("mis-declared charset: %v", err)
	}
}

func TestFlattenDeep(t *testing.T) {
	t.Parallel()
	got := flattenDeep("<div><div><div><p>x</p></div></div><br><img src=a></div>", 2)
	want := "<div><div>x</div><br><img src=a></div>"
	if got != want {
		t.Errorf("flattenDeep = %q, want %q", got, want)
	}
}

// TestRequestedEmptyListsAreSent: a requested list format with nothing in
// it is [] in the JSON, not missing.
func TestRequestedEmptyListsAreSent(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<html><body><p>No links or images here.</p></body></html>")
	}))
	t.Cleanup(srv.Close)
	doc, err := newEngine(t, true).Scrape(context.Background(), defaults(srv.URL, FormatLinks, FormatImages))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(doc)
	if !strings.Contains(string(b), `"links":[]`) || !strings.Contains(string(b), `"images":[]`) {
		t.Errorf("empty lists missing: %s", b)
	}
	doc, _ = newEngine(t, true).Scrape(context.Background(), defaults(srv.URL, FormatMarkdown))
	if b, _ := json.Marshal(doc); strings.Contains(string(b), `"links"`) {
		t.Errorf("unrequested links present: %s", b)
	}
}
