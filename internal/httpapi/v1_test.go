package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/firegate/firegate/internal/scrape"
)

// TestV1Scrape sends v1 scrape bodies (as the 1.x JavaScript SDK writes
// them) and checks what the engine is asked and what the client gets back.
func TestV1Scrape(t *testing.T) {
	t.Parallel()
	md := "# Hello"
	extracted := json.RawMessage(`{"title":"Hello"}`)
	sc := &fakeScraper{doc: &scrape.Document{Markdown: &md, JSON: &extracted,
		Metadata: scrape.Metadata{StatusCode: 200, CreditsUsed: 5}}}
	s, _ := setup(t, sc)

	body := `{"url":"https://example.com/a","formats":["markdown","screenshot@fullPage","extract","changeTracking"],
		"extract":{"schema":{"type":"object","properties":{"title":{"type":"string"}}},"systemPrompt":"Be brief.","prompt":"The title."},
		"changeTrackingOptions":{"modes":["git-diff"]},"parsePDF":false,"geolocation":{"country":"DE"},
		"onlyMainContent":false,"mobile":true,"useMock":"x","origin":"js-sdk@1.29.2"}`
	rec, m := do(t, s, http.MethodPost, "/v1/scrape", goodKey, body)
	if rec.Code != http.StatusOK || m["success"] != true {
		t.Fatalf("status %d: %v", rec.Code, m)
	}
	data, _ := m["data"].(map[string]any)
	if data["markdown"] != md || data["extract"] == nil || data["json"] != nil {
		t.Errorf("v1 data wants markdown and extract (not json): %v", data)
	}
	if diff := cmp.Diff(map[string]any{"title": "Hello"}, data["extract"]); diff != "" {
		t.Errorf("extract (-want +got):\n%s", diff)
	}
	if len(sc.got) != 1 {
		t.Fatalf("engine called %d times", len(sc.got))
	}
	o := sc.got[0]
	types := make([]string, len(o.Formats))
	for i, f := range o.Formats {
		types[i] = f.Type
	}
	if diff := cmp.Diff([]string{"markdown", "screenshot", "json", "changeTracking"}, types); diff != "" {
		t.Errorf("formats (-want +got):\n%s", diff)
	}
	if !o.Formats[1].FullPage {
		t.Error("screenshot@fullPage lost fullPage")
	}
	if o.Formats[2].Prompt != "Be brief.\n\nThe title." || !strings.Contains(string(o.Formats[2].Schema), `"title"`) {
		t.Errorf("json format from extract options: prompt %q schema %s", o.Formats[2].Prompt, o.Formats[2].Schema)
	}
	if diff := cmp.Diff([]string{"git-diff"}, o.Formats[3].Modes); diff != "" {
		t.Errorf("changeTracking modes (-want +got):\n%s", diff)
	}
	if len(o.Parsers) != 0 || o.Location.Country != "DE" || o.OnlyMainContent || !o.Mobile {
		t.Errorf("options: parsers %v location %v onlyMainContent %v mobile %v", o.Parsers, o.Location, o.OnlyMainContent, o.Mobile)
	}
	// v1's defaults where they differ from v2's: no cache, 30 s.
	if o.MaxAge != 0 || o.Timeout != 30*time.Second {
		t.Errorf("v1 defaults: maxAge %v timeout %v", o.MaxAge, o.Timeout)
	}

	// A plain v1 call keeps the v2 default formats and returns no extract.
	rec, m = do(t, s, http.MethodPost, "/v1/scrape", goodKey, `{"url":"https://example.com/b","maxAge":60000,"timeout":5000}`)
	if rec.Code != 200 || sc.got[1].MaxAge != time.Minute || sc.got[1].Timeout != 5*time.Second {
		t.Errorf("explicit maxAge/timeout: %d %v %+v", rec.Code, m, sc.got[1])
	}
	if data, _ := m["data"].(map[string]any); data["json"] == nil || data["extract"] != nil {
		t.Errorf("json format not asked as extract keeps its v2 name: %v", data)
	}
}

// TestV1ScrapeErrors checks that /v1/scrape keeps /v2's auth and
// validation, with errors in the envelope naming the field.
func TestV1ScrapeErrors(t *testing.T) {
	t.Parallel()
	sc := &fakeScraper{doc: &scrape.Document{}}
	s, _ := setup(t, sc)
	tests := []struct {
		name, key, body string
		status          int
		code            string
		path            string // first details path, "" for none
	}{
		{"no key", "", `{"url":"https://example.com"}`, 401, "UNAUTHORIZED", ""},
		{"not JSON", goodKey, `{"url":`, 400, "BAD_REQUEST_INVALID_JSON", ""},
		{"no url", goodKey, `{"formats":["markdown"]}`, 400, "BAD_REQUEST", "url"},
		{"unknown format", goodKey, `{"url":"https://example.com","formats":["pdf"]}`, 400, "BAD_REQUEST", "formats.0"},
		{"unknown key", goodKey, `{"url":"https://example.com","crawlerOptions":{}}`, 400, "BAD_REQUEST", "crawlerOptions"},
		{"lower-case country", goodKey, `{"url":"https://example.com","location":{"country":"us"}}`, 400, "BAD_REQUEST", "location.country"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, m := do(t, s, http.MethodPost, "/v1/scrape", tt.key, tt.body)
			if rec.Code != tt.status || m["code"] != tt.code || m["success"] != false || m["error"] == "" {
				t.Fatalf("%d %v", rec.Code, m)
			}
			if tt.path == "" {
				return
			}
			details, _ := m["details"].([]any)
			if len(details) == 0 {
				t.Fatalf("no details: %v", m)
			}
			d, _ := details[0].(map[string]any)
			var parts []string
			for _, p := range d["path"].([]any) {
				parts = append(parts, fmt.Sprint(p))
			}
			if got := strings.Join(parts, "."); got != tt.path {
				t.Errorf("details path %q, want %q (%v)", got, tt.path, m)
			}
		})
	}
	if len(sc.got) != 0 {
		t.Errorf("a rejected request reached the engine: %d", len(sc.got))
	}
}

// TestV1NotServed checks that a /v1 route without a translation answers a
// JSON 400 that names the v2 route, with or without a key.
func TestV1NotServed(t *testing.T) {
	t.Parallel()
	s, _ := setup(t, &fakeScraper{})
	for _, tc := range []struct{ method, path, key, v2 string }{
		{http.MethodPost, "/v1/crawl", goodKey, "POST /v2/crawl"},
		{http.MethodGet, "/v1/crawl/0190c2a4-0000-7000-8000-000000000000", "", "GET /v2/crawl/0190c2a4-0000-7000-8000-000000000000"},
		{http.MethodPost, "/v1/deep-research", goodKey, "POST /v2/deep-research"},
		{http.MethodPost, "/v1/llmstxt", goodKey, "POST /v2/llmstxt"},
		{http.MethodGet, "/v1/team/credit-usage/historical", goodKey, "GET /v2/team/credit-usage/historical"},
		{http.MethodPost, "/v1/batch/scrape", goodKey, "POST /v2/batch/scrape"},
		{http.MethodGet, "/v1/scrape", goodKey, "GET /v2/scrape"},
	} {
		rec, m := do(t, s, tc.method, tc.path, tc.key, `{}`)
		msg, _ := m["error"].(string)
		if rec.Code != http.StatusBadRequest || m["success"] != false || m["code"] != "V1_ROUTE_NOT_SERVED" ||
			!strings.Contains(msg, tc.v2) || !strings.Contains(msg, "v2 SDK") {
			t.Errorf("%s %s: %d %v", tc.method, tc.path, rec.Code, m)
		}
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s %s: Content-Type %q", tc.method, tc.path, ct)
		}
	}
}

// TestV1Map checks POST /v1/map against a real mapper and site: the links
// come back as v1's URL strings, and ignoreSitemap / sitemapOnly choose
// what the v2 sitemap option would.
func TestV1Map(t *testing.T) {
	t.Parallel()
	site := mapSite(t)
	s, _ := setup(t, &fakeScraper{})
	s.mapper = realMapper(t, true)
	tests := []struct {
		name, body string
		want       []any
	}{
		{"default", `{"url":"` + site.URL + `"}`, []any{site.URL + "/", site.URL + "/docs/intro", site.URL + "/blog",
			site.URL + "/pricing", site.URL + "/docs/api"}},
		{"ignoreSitemap", `{"url":"` + site.URL + `","ignoreSitemap":true,"useMock":"x"}`,
			[]any{site.URL + "/", site.URL + "/docs/intro", site.URL + "/blog"}},
		{"sitemapOnly", `{"url":"` + site.URL + `","sitemapOnly":true,"ignoreSitemap":false}`,
			[]any{site.URL + "/pricing", site.URL + "/docs/api"}},
		{"search and limit", `{"url":"` + site.URL + `","search":"api","limit":1,"sitemapOnly":true}`,
			[]any{site.URL + "/docs/api"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec, got := do(t, s, http.MethodPost, "/v1/map", goodKey, tt.body)
			if rec.Code != 200 || got["success"] != true {
				t.Fatalf("%d %v", rec.Code, got)
			}
			if diff := cmp.Diff(tt.want, got["links"]); diff != "" {
				t.Errorf("links (-want +got):\n%s", diff)
			}
		})
	}
	rec, got := do(t, s, http.MethodPost, "/v1/map", goodKey, `{"url":"`+site.URL+`","limit":0}`)
	if rec.Code != 400 || got["code"] != "BAD_REQUEST" {
		t.Errorf("limit 0: %d %v", rec.Code, got)
	}
	rec, got = do(t, s, http.MethodPost, "/v1/map", "", `{"url":"`+site.URL+`"}`)
	if rec.Code != 401 {
		t.Errorf("no key: %d %v", rec.Code, got)
	}
}

// TestV1CreditUsage checks the v1 names of the balance fields, on a real
// ledger and store.
func TestV1CreditUsage(t *testing.T) {
	t.Parallel()
	b := setupBilled(t, LimitDefaults{})
	if _, err := b.st.SetCredits(t.Context(), b.team.ID, 40); err != nil {
		t.Fatal(err)
	}
	rec, m := do(t, b.srv, http.MethodGet, "/v1/team/credit-usage", b.key, "")
	data, _ := m["data"].(map[string]any)
	if rec.Code != 200 || m["success"] != true || data["remaining_credits"] != float64(40) || data["plan_credits"] != float64(40) ||
		data["billing_period_start"] == nil || data["remainingCredits"] != nil {
		t.Errorf("credit usage: %d %v", rec.Code, m)
	}
	rec, m = do(t, b.srv, http.MethodGet, "/v1/team/token-usage", b.key, "")
	data, _ = m["data"].(map[string]any)
	if rec.Code != 200 || data["remaining_tokens"] != float64(40*tokensPerCredit) {
		t.Errorf("token usage: %d %v", rec.Code, m)
	}
	if rec, m := do(t, b.srv, http.MethodGet, "/v1/team/credit-usage", "", ""); rec.Code != 401 {
		t.Errorf("no key: %d %v", rec.Code, m)
	}
}
