package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/crawl/testsite"
	"github.com/firegate/firegate/internal/scrape"
)

func TestDecodeExtractRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		code, path string // want error code and first detail path; "" = valid
	}{
		{"prompt only", `{"urls":["example.com/a"],"prompt":"the title"}`, "", ""},
		{"schema only", `{"urls":["https://example.com"],"schema":{"type":"object","properties":{"t":{"type":"string"}}}}`, "", ""},
		{"neither", `{"urls":["https://example.com"]}`, "BAD_REQUEST", "prompt"},
		{"no urls", `{"prompt":"x"}`, "BAD_REQUEST", "urls"},
		{"too many urls", `{"prompt":"x","urls":["a.com","b.com","c.com","d.com","e.com","f.com","g.com","h.com","i.com","j.com","k.com"]}`, "BAD_REQUEST", "urls"},
		{"bad url strict", `{"prompt":"x","ignoreInvalidURLs":false,"urls":["ftp://x"]}`, "BAD_REQUEST", "urls"},
		{"unknown key", `{"prompt":"x","urls":["a.com"],"depth":3}`, "BAD_REQUEST", ""},
		{"glob", `{"prompt":"x","urls":["https://example.com/docs/*"],"limit":5,"ignoreSitemap":true}`, "", ""},
		{"limit too big", `{"prompt":"x","urls":["https://example.com/*"],"limit":1001}`, "BAD_REQUEST", "limit"},
		{"web search", `{"prompt":"x","urls":["a.com"],"enableWebSearch":true}`, "EXTRACT_OPTION_NOT_SUPPORTED", "enableWebSearch"},
		{"webhook", `{"prompt":"x","urls":["a.com"],"webhook":"https://hooks.example.com"}`, "EXTRACT_OPTION_NOT_SUPPORTED", "webhook"},
		{"schema does not compile", `{"urls":["a.com"],"schema":{"type":"objekt"}}`, "BAD_REQUEST", "schema"},
		{"schema-less dictionary", `{"urls":["a.com"],"schema":{"type":"object","additionalProperties":true}}`, "BAD_REQUEST", "schema"},
		{"prompt too long", `{"urls":["a.com"],"prompt":"` + strings.Repeat("x", 10001) + `"}`, "BAD_REQUEST", "prompt"},
		{"bad scrapeOptions", `{"urls":["a.com"],"prompt":"x","scrapeOptions":{"timeout":5}}`, "BAD_REQUEST", "scrapeOptions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(http.MethodPost, "/v2/extract", strings.NewReader(tc.body))
			req, err := decodeExtractRequest(r)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				f := req.Options.Scrape.Formats
				if len(f) != 1 || f[0].Type != scrape.FormatJSON || len(req.URLs)+len(req.Globs) == 0 {
					t.Errorf("formats %+v urls %v", f, req.URLs)
				}
				return
			}
			e := toAPIError(err)
			if e.Code != tc.code || e.Status != http.StatusBadRequest {
				t.Fatalf("got %d %s %q", e.Status, e.Code, e.Message)
			}
			d, _ := e.Details.([]FieldError)
			if tc.path != "" && (len(d) == 0 || d[0].Path[0] != tc.path) {
				t.Errorf("details %+v, want path %s", e.Details, tc.path)
			}
		})
	}
}

func TestDecodeExtractRequestGlob(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest(http.MethodPost, "/v2/extract", strings.NewReader(
		`{"urls":["https://example.com/docs/*","https://example.com/about"],"prompt":"x","limit":5,"ignoreSitemap":true,"includeSubdomains":false}`))
	req, err := decodeExtractRequest(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(req.Globs) != 1 || req.Globs[0] != "https://example.com/docs" || len(req.URLs) != 1 || req.Limit != 5 ||
		req.Map.Sitemap != crawl.SitemapSkip || !req.Map.ExcludeSubdomains {
		t.Errorf("%+v", req)
	}
}

func TestDecodeExtractRequestComposesPrompt(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest(http.MethodPost, "/v2/extract", strings.NewReader(
		`{"urls":["a.com","not a url"],"systemPrompt":"Be terse.","prompt":"the price","timeout":30000}`))
	req, err := decodeExtractRequest(r)
	if err != nil {
		t.Fatal(err)
	}
	if p := req.Options.Scrape.Formats[0].Prompt; p != "Be terse.\n\nthe price" {
		t.Errorf("prompt %q", p)
	}
	if len(req.InvalidURLs) != 1 || req.Options.Scrape.Timeout.Milliseconds() != 30000 {
		t.Errorf("invalid %v timeout %v", req.InvalidURLs, req.Options.Scrape.Timeout)
	}
}

func TestExtractRoutesWithoutModel(t *testing.T) {
	_, target := site(t, testsite.Options{Pages: 2})
	api := newJobAPI(t, "sqlite")
	code, m := api.call(t, http.MethodPost, "/v2/extract", keyA, `{"urls":["`+target+`/"],"prompt":"x"}`)
	if code != http.StatusBadRequest || m["code"] != "SCRAPE_LLM_NOT_CONFIGURED" {
		t.Errorf("POST /v2/extract without a model: %d %v", code, m)
	}
	// A batch scrape is not an extract, and unknown ids are not found.
	id := api.start(t, "/v2/batch/scrape", `{"urls":["`+target+`/"]}`)
	api.wait(t, "/v2/batch/scrape/"+id)
	for _, p := range []string{"/v2/extract/" + id, "/v2/extract/0196b3a0-0000-7000-8000-000000000000"} {
		if code, m := api.call(t, http.MethodGet, p, keyA, ""); code != http.StatusNotFound || m["error"] != "Extract job not found" {
			t.Errorf("GET %s: %d %v", p, code, m)
		}
	}
	if code, _ := api.call(t, http.MethodGet, "/v2/extract/nope", keyA, ""); code != http.StatusBadRequest {
		t.Errorf("GET /v2/extract/nope: %d", code)
	}
}

func TestJSONFormatCheckPromptInjection(t *testing.T) {
	t.Parallel()
	req, err := decodeScrapeRequest(strings.NewReader(`{"url":"https://example.com","formats":[{"type":"json","prompt":"p","checkPromptInjection":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if f := req.Options.Formats[0]; !f.CheckPromptInjection || f.Prompt != "p" {
		t.Errorf("format %+v", f)
	}
	_, err = decodeScrapeRequest(strings.NewReader(`{"url":"https://example.com","formats":[{"type":"json","checkPromptInjection":"yes"}]}`))
	if e := toAPIError(err); e.Status != http.StatusBadRequest {
		t.Errorf("non-boolean checkPromptInjection: %v", err)
	}
}
