package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/testenv"
)

// mapSite serves a small loopback site: a home page with links, a
// robots.txt naming a sitemap, and a page that never answers.
func mapSite(t *testing.T) *httptest.Server {
	t.Helper()
	var base string
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<title>Home</title><a href="/docs/intro">Intro to docs</a><a href="/blog?page=2">Blog</a><a href="https://other.example.org/">x</a>`)
	})
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "Sitemap: %s/sm.xml\n", base)
	})
	mux.HandleFunc("/sm.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<urlset><url><loc>%[1]s/pricing</loc></url><url><loc>%[1]s/docs/api</loc></url></urlset>`, base)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	base = srv.URL
	return srv
}

// realMapper is the real crawl.Mapper over a fetch client that admits
// loopback targets (allowPrivate) or not.
func realMapper(t *testing.T, allowPrivate bool) *crawl.Mapper {
	t.Helper()
	c := fetch.New(fetch.Options{AllowPrivate: allowPrivate}, nil)
	t.Cleanup(c.CloseIdleConnections)
	return crawl.NewMapper(c, crawl.MapperOptions{}, testenv.Logger(t))
}

func TestMapSuccess(t *testing.T) {
	t.Parallel()
	site := mapSite(t)
	s, _ := setup(t, &fakeScraper{})
	s.mapper = realMapper(t, true)
	rec, got := do(t, s, http.MethodPost, "/v2/map", goodKey, `{"url":"`+site.URL+`"}`)
	if rec.Code != 200 {
		t.Fatalf("%d %v", rec.Code, got)
	}
	id, err := uuid.Parse(fmt.Sprint(got["id"]))
	if err != nil || id.Version() != 7 {
		t.Errorf("id %v is not a UUIDv7", got["id"])
	}
	delete(got, "id")
	want := map[string]any{"success": true, "links": []any{
		map[string]any{"url": site.URL + "/", "title": "Home"},
		map[string]any{"url": site.URL + "/docs/intro", "title": "Intro to docs"},
		map[string]any{"url": site.URL + "/blog", "title": "Blog"},
		map[string]any{"url": site.URL + "/pricing"},
		map[string]any{"url": site.URL + "/docs/api"},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}

	// Options reach the mapper: search, limit, path filter and warning.
	rec, got = do(t, s, http.MethodPost, "/v2/map", goodKey,
		`{"url":"`+site.URL+`","search":"api","limit":1,"sitemap":"only"}`)
	if rec.Code != 200 || fmt.Sprint(got["links"]) != "[map[url:"+site.URL+"/docs/api]]" {
		t.Errorf("search: %d %v", rec.Code, got)
	}
	rec, got = do(t, s, http.MethodPost, "/v2/map", goodKey, `{"url":"`+site.URL+`/docs/api","sitemap":"skip"}`)
	if rec.Code != 200 || !strings.HasPrefix(fmt.Sprint(got["warning"]), "Only 0 result(s) found.") {
		t.Errorf("warning: %d %v", rec.Code, got)
	}
}

func TestMapErrors(t *testing.T) {
	t.Parallel()
	site := mapSite(t)
	for _, tc := range []struct {
		name         string
		allowPrivate bool
		body         string
		status       int
		code, msg    string
	}{
		{"timeout", true, `{"url":"` + site.URL + `/slow","timeout":150}`, http.StatusRequestTimeout, "MAP_TIMEOUT",
			"The map operation timed out before it finished. Raise timeout, lower limit, or set sitemap to skip or only."},
		{"blocked", false, `{"url":"` + site.URL + `"}`, http.StatusForbidden, "MAP_TARGET_NOT_ALLOWED",
			"Forbidden: the URL resolves to a private or otherwise non-public address, which this server does not fetch."},
		{"unreachable", true, `{"url":"http://127.0.0.1:1/"}`, http.StatusInternalServerError, "MAP_FAILED",
			"Map failed: the start URL could not be fetched and no sitemap of the site listed any URL."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := setup(t, &fakeScraper{})
			s.mapper = realMapper(t, tc.allowPrivate)
			rec, got := do(t, s, http.MethodPost, "/v2/map", goodKey, tc.body)
			want := map[string]any{"success": false, "code": tc.code, "error": tc.msg}
			if rec.Code != tc.status {
				t.Errorf("status %d, want %d", rec.Code, tc.status)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestMapNotConfigured(t *testing.T) {
	t.Parallel()
	s, _ := setup(t, &fakeScraper{})
	rec, got := do(t, s, http.MethodPost, "/v2/map", goodKey, `{"url":"https://example.com"}`)
	if rec.Code != http.StatusNotImplemented || got["code"] != "NOT_IMPLEMENTED" {
		t.Errorf("%d %v", rec.Code, got)
	}
}

func TestDecodeMapRequest(t *testing.T) {
	t.Parallel()
	def := func(f func(o *crawl.MapOptions)) crawl.MapOptions {
		o := crawl.MapOptions{URL: "https://example.com", Sitemap: crawl.SitemapInclude, Limit: crawl.DefaultLimit}
		if f != nil {
			f(&o)
		}
		return o
	}
	for _, tc := range []struct {
		name, body string
		want       crawl.MapOptions
	}{
		{"defaults", `{"url":"https://example.com"}`, def(nil)},
		{"scheme added", `{"url":"example.com"}`, def(func(o *crawl.MapOptions) { o.URL = "http://example.com" })},
		{"every option", `{"url":"https://example.com","search":"docs","sitemap":"only","includeSubdomains":false,
			"ignoreQueryParameters":false,"ignoreCache":true,"limit":100000,"timeout":1500.5,"location":{"country":"DE","languages":["de"]},
			"headers":{"X-A":"1"},"auditMetadata":{"username":"bob"},"origin":"sdk","integration":"x",
			"includePaths":["^/docs"],"excludePaths":["\\.pdf$"],"regexOnFullURL":true,"allowExternalLinks":true,
			"maxDiscoveryDepth":0,"deduplicateSimilarURLs":false,"ignoreRobotsTxt":true,"delay":0.5,"useIndex":false,"filterByPath":false}`,
			crawl.MapOptions{URL: "https://example.com", Search: "docs", Sitemap: crawl.SitemapOnly, ExcludeSubdomains: true,
				KeepQueryParameters: true, Limit: 100000, Timeout: 1501 * time.Millisecond, Languages: []string{"de"}, Country: "DE",
				Headers: map[string]string{"X-A": "1"}, IncludePaths: []string{"^/docs"}, ExcludePaths: []string{`\.pdf$`},
				RegexOnFullURL: true, AllowExternalLinks: true, SkipPageLinks: true, KeepSimilarURLs: true,
				Delay: 500 * time.Millisecond, NoPathFilter: true}},
		{"crawlEntireDomain lifts the path filter", `{"url":"https://example.com","crawlEntireDomain":true,"maxDiscoveryDepth":3}`,
			def(func(o *crawl.MapOptions) { o.NoPathFilter = true })},
		{"allowSubdomains false", `{"url":"https://example.com","allowSubdomains":false}`,
			def(func(o *crawl.MapOptions) { o.ExcludeSubdomains = true })},
		{"allowSubdomains agreeing", `{"url":"https://example.com","allowSubdomains":true,"includeSubdomains":true}`, def(nil)},
		{"nulls are absent", `{"url":"https://example.com","limit":null,"search":null,"timeout":null}`, def(nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, err := decodeMapRequest(strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, req.Options); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestMapValidation(t *testing.T) {
	t.Parallel()
	s, _ := setup(t, &fakeScraper{})
	s.mapper = realMapper(t, false) // never reached
	for _, tc := range []struct {
		name, body, code, msg string
		path                  []any
	}{
		{"unknown key", `{"url":"https://example.com","formats":["markdown"]}`, "BAD_REQUEST", msgUnrecognized, []any{"formats"}},
		{"missing url", `{}`, "BAD_REQUEST", msgURLMissing, []any{"url"}},
		{"bad url", `{"url":"ftp://example.com"}`, "BAD_REQUEST", malformedURL("ftp://example.com"), []any{"url"}},
		{"limit 0", `{"url":"https://example.com","limit":0}`, "BAD_REQUEST", msgBadRequest, []any{"limit"}},
		{"limit too big", `{"url":"https://example.com","limit":100001}`, "BAD_REQUEST", msgBadRequest, []any{"limit"}},
		{"sitemap enum", `{"url":"https://example.com","sitemap":"sometimes"}`, "BAD_REQUEST", msgBadRequest, []any{"sitemap"}},
		{"timeout 0", `{"url":"https://example.com","timeout":0}`, "BAD_REQUEST", msgBadRequest, []any{"timeout"}},
		{"timeout string", `{"url":"https://example.com","timeout":"1s"}`, "BAD_REQUEST", msgBadRequest, []any{"timeout"}},
		{"search type", `{"url":"https://example.com","search":1}`, "BAD_REQUEST", msgBadRequest, []any{"search"}},
		{"bool type", `{"url":"https://example.com","ignoreRobotsTxt":"yes"}`, "BAD_REQUEST", msgBadRequest, []any{"ignoreRobotsTxt"}},
		{"bad regex", `{"url":"https://example.com","includePaths":["(a"]}`, "BAD_REQUEST",
			"Invalid regular expression in includePaths: error parsing regexp: missing closing ): `(a`", []any{"includePaths", 0}},
		{"regex longer than 4096", `{"url":"https://example.com","excludePaths":["^/a","` + strings.Repeat("a|", 2500) + `"]}`, "BAD_REQUEST",
			"Invalid regular expression in excludePaths: the regular expression is longer than 4096 characters", []any{"excludePaths", 1}},
		{"depth negative", `{"url":"https://example.com","maxDiscoveryDepth":-1}`, "BAD_REQUEST", msgBadRequest, []any{"maxDiscoveryDepth"}},
		{"delay too long", `{"url":"https://example.com","delay":61}`, "BAD_REQUEST", msgMapDelay, []any{"delay"}},
		{"delay zero", `{"url":"https://example.com","delay":0}`, "BAD_REQUEST", msgBadRequest, []any{"delay"}},
		{"subdomain flags disagree", `{"url":"https://example.com","includeSubdomains":true,"allowSubdomains":false}`,
			"BAD_REQUEST", msgMapSubdomains, []any{"allowSubdomains"}},
		{"location key", `{"url":"https://example.com","location":{"city":"x"}}`, "BAD_REQUEST", msgUnrecognized, []any{"location", "city"}},
		{"threatProtection invalid", `{"url":"https://example.com","threatProtection":{"mode":"max"}}`, "BAD_REQUEST", msgBadRequest,
			[]any{"threatProtection", "mode"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec, got := do(t, s, http.MethodPost, "/v2/map", goodKey, tc.body)
			msg := tc.msg
			if msg == msgBadRequest {
				msg = firstFieldMessage(got) // no contract message: the first failing field
			}
			if rec.Code != http.StatusBadRequest || got["code"] != tc.code || got["error"] != msg {
				t.Fatalf("%d %v", rec.Code, got)
			}
			details, _ := got["details"].([]any)
			if len(details) == 0 {
				t.Fatalf("no details: %v", got)
			}
			first, _ := details[0].(map[string]any)
			if diff := cmp.Diff(fmt.Sprint(tc.path), fmt.Sprint(first["path"])); diff != "" {
				t.Errorf("path (-want +got)\n%s", diff)
			}
		})
	}
	rec, got := do(t, s, http.MethodPost, "/v2/map", goodKey, `{"url":`)
	if rec.Code != http.StatusBadRequest || got["code"] != "BAD_REQUEST_INVALID_JSON" {
		t.Errorf("malformed: %d %v", rec.Code, got)
	}
}

func TestMapCreditsAndRateLimit(t *testing.T) {
	t.Parallel()
	site := mapSite(t)
	b := setupBilled(t, LimitDefaults{RateMultiplier: 1}) // map: 10 per minute
	b.srv.mapper = realMapper(t, true)
	ctx := context.Background()
	if _, err := b.st.SetCredits(ctx, b.team.ID, 1); err != nil {
		t.Fatal(err)
	}
	body := `{"url":"` + site.URL + `","sitemap":"skip"}`
	if rec, got := do(t, b.srv, http.MethodPost, "/v2/map", b.key, body); rec.Code != 200 {
		t.Fatalf("first map: %d %v", rec.Code, got)
	}
	if bal, _ := b.st.CreditBalance(ctx, b.team.ID); bal.Remaining != 0 {
		t.Errorf("balance %d, want 0", bal.Remaining)
	}
	rec, got := do(t, b.srv, http.MethodPost, "/v2/map", b.key, body)
	if rec.Code != http.StatusPaymentRequired || got["code"] != "insufficient_credits" {
		t.Fatalf("second map: %d %v", rec.Code, got)
	}

	// A failed map costs nothing.
	b.st.SetCredits(ctx, b.team.ID, 20)
	rec, got = do(t, b.srv, http.MethodPost, "/v2/map", b.key, `{"url":"`+site.URL+`/slow","timeout":100}`)
	if rec.Code != http.StatusRequestTimeout {
		t.Fatalf("timeout: %d %v", rec.Code, got)
	}
	if bal, _ := b.st.CreditBalance(ctx, b.team.ID); bal.Remaining != 20 {
		t.Errorf("balance %d after a failed map, want 20", bal.Remaining)
	}

	// The map class has its own per-minute budget (3 used so far).
	for i := 3; i < limits.RatePerMinute(limits.ClassMap, 1); i++ {
		if rec, got := do(t, b.srv, http.MethodPost, "/v2/map", b.key, body); rec.Code != 200 {
			t.Fatalf("map %d: %d %v", i, rec.Code, got)
		}
	}
	rec, got = do(t, b.srv, http.MethodPost, "/v2/map", b.key, body)
	if rec.Code != http.StatusTooManyRequests || got["code"] != "RATE_LIMIT_EXCEEDED" {
		t.Fatalf("over the limit: %d %v", rec.Code, got)
	}
	if rec, got := b.scrape(t); rec.Code != 200 {
		t.Errorf("scrape after the map budget is spent: %d %v", rec.Code, got)
	}
}
