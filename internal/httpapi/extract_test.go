package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/crawl/testsite"
	"github.com/firegate/firegate/internal/llm"
	"github.com/firegate/firegate/internal/llm/llmtest"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/search"
	"github.com/firegate/firegate/internal/search/searxngtest"
	"github.com/firegate/firegate/internal/testenv"
	"github.com/firegate/firegate/internal/webhook"
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
		{"web search instead of urls", `{"prompt":"x","enableWebSearch":true}`, "", ""},
		{"web search without a prompt", `{"schema":{"type":"object","properties":{"t":{"type":"string"}}},"enableWebSearch":true}`, "BAD_REQUEST", "prompt"},
		{"web search with urls, without a prompt", `{"urls":["a.com"],"schema":{"type":"object","properties":{"t":{"type":"string"}}},"enableWebSearch":true}`, "BAD_REQUEST", "prompt"},
		{"too many urls", `{"prompt":"x","urls":["a.com","b.com","c.com","d.com","e.com","f.com","g.com","h.com","i.com","j.com","k.com"]}`, "BAD_REQUEST", "urls"},
		{"bad url strict", `{"prompt":"x","ignoreInvalidURLs":false,"urls":["ftp://x"]}`, "BAD_REQUEST", "urls"},
		{"unknown key", `{"prompt":"x","urls":["a.com"],"depth":3}`, "BAD_REQUEST", ""},
		{"glob", `{"prompt":"x","urls":["https://example.com/docs/*"],"limit":5,"ignoreSitemap":true}`, "", ""},
		{"limit too big", `{"prompt":"x","urls":["https://example.com/*"],"limit":1001}`, "BAD_REQUEST", "limit"},
		{"web search", `{"prompt":"x","urls":["a.com"],"enableWebSearch":true}`, "", ""},
		{"webhook", `{"prompt":"x","urls":["a.com"],"webhook":"https://hooks.example.com"}`, "", ""},
		{"webhook events", `{"prompt":"x","urls":["a.com"],"webhook":{"url":"https://hooks.example.com","events":["extract.started","failed"]}}`, "", ""},
		{"webhook page events", `{"prompt":"x","urls":["a.com"],"webhook":{"url":"https://hooks.example.com","events":["completed","page"]}}`, "BAD_REQUEST", "webhook"},
		{"webhook bad url", `{"prompt":"x","urls":["a.com"],"webhook":{"url":"ftp://x"}}`, "BAD_REQUEST", "webhook"},
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
				if len(f) != 1 || f[0].Type != scrape.FormatJSON || len(req.URLs)+len(req.Globs) == 0 && req.WebSearch == "" || req.Options.Extract == nil {
					t.Errorf("formats %+v urls %v search %q extract %v", f, req.URLs, req.WebSearch, req.Options.Extract)
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

// TestExtractWebSearchWebhookAndTokens runs POST /v2/extract with
// enableWebSearch and no urls on a scripted model and search engine: the
// pages found for the prompt are extracted, GET /v2/extract/{id} reports
// tokensUsed and credits per tokens/15 plus the search's (charged to the
// team's ledger too), and the webhook gets
// extract.started and extract.completed with the result.
func TestExtractWebSearchWebhookAndTokens(t *testing.T) {
	_, target := site(t, testsite.Options{Pages: 40})
	engine := searxngtest.New(t, func(q url.Values) searxngtest.Answer {
		return searxngtest.Answer{Results: []searxngtest.Result{
			{URL: target + "/about", Title: "About", Content: "c", Score: 2},
			{URL: target + "/blog/post-1", Title: "Post", Content: "c", Score: 1},
		}}
	})
	model := llmtest.NewReplying(t, func(w http.ResponseWriter, r llmtest.Request) {
		_, heading, _ := strings.Cut(r.LastUser(), "\n# ")
		heading, _, _ = strings.Cut(heading, "\n")
		llmtest.Write(w, `{"pages":["`+heading+`"]}`, &llmtest.Usage{PromptTokens: 290, CompletionTokens: 10})
	})
	log := testenv.Logger(t)
	client, err := llm.New(llm.Options{BaseURL: model.BaseURL, Model: "scripted", Log: log})
	if err != nil {
		t.Fatal(err)
	}
	rec := newHookRecorder(t)
	api := newJobAPIConfig(t, "sqlite", jobAPIConfig{model: client, searcher: search.New(mustSearXNG(t, engine.URL), search.Options{}, log),
		webhooks: webhook.NewSender(webhook.Options{AllowPrivate: true}, log), billed: true})
	if _, err := api.st.SetCredits(t.Context(), api.teams[keyA].ID, 1000); err != nil {
		t.Fatal(err)
	}

	code, m := api.call(t, http.MethodPost, "/v2/extract", keyA, `{"prompt":"Which pages are there?","enableWebSearch":true,`+
		`"schema":{"type":"object","properties":{"pages":{"type":"array","items":{"type":"string"}}}},"webhook":{"url":"`+rec.url+`","metadata":{"n":1}}}`)
	if code != 200 || m["success"] != true {
		t.Fatalf("POST /v2/extract: %d %v", code, m)
	}
	id := m["id"].(string)
	if calls := engine.Calls(); len(calls) == 0 || calls[0].Get("q") != "Which pages are there?" {
		t.Errorf("search calls %v", calls)
	}
	var st map[string]any
	testenv.WaitFor(30*time.Second, func() bool {
		_, st = api.call(t, http.MethodGet, "/v2/extract/"+id, keyA, "")
		return st["status"] != "processing"
	})
	pages, _ := st["data"].(map[string]any)["pages"].([]any)
	// 300 tokens a page: 20 credits each; the search's 2 results: 2.
	if st["status"] != "completed" || len(pages) != 2 || st["tokensUsed"] != 600.0 || st["creditsUsed"] != 42.0 {
		t.Fatalf("status %v", st)
	}
	if b, err := api.st.CreditBalance(t.Context(), api.teams[keyA].ID); err != nil || b.Remaining != 1000-42 {
		t.Errorf("balance %+v %v, want %d remaining", b, err, 1000-42)
	}
	evs := rec.wait(t, 2)
	if evs[0]["type"] != "extract.started" || evs[1]["type"] != "extract.completed" || evs[1]["id"] != id {
		t.Fatalf("events %v", evs)
	}
	got, _ := json.Marshal(evs[1]["data"])
	want, _ := json.Marshal([]any{st["data"]})
	if string(got) != string(want) || fmt.Sprint(evs[1]["metadata"]) != "map[n:1]" {
		t.Errorf("completed event %v, want data %s", evs[1], want)
	}
}

func TestExtractWebSearchNotConfigured(t *testing.T) {
	model := llmtest.NewReplying(t, func(w http.ResponseWriter, r llmtest.Request) { llmtest.Write(w, `{}`, nil) })
	client, err := llm.New(llm.Options{BaseURL: model.BaseURL, Model: "scripted"})
	if err != nil {
		t.Fatal(err)
	}
	api := newJobAPIConfig(t, "sqlite", jobAPIConfig{model: client})
	code, m := api.call(t, http.MethodPost, "/v2/extract", keyA, `{"prompt":"x","enableWebSearch":true}`)
	if code != http.StatusBadRequest || m["code"] != "EXTRACT_OPTION_NOT_SUPPORTED" || !strings.Contains(fmt.Sprint(m["error"]), "SEARXNG_ENDPOINT") {
		t.Errorf("enableWebSearch without a search engine: %d %v", code, m)
	}
}

func mustSearXNG(t *testing.T, endpoint string) search.Backend {
	t.Helper()
	b, err := search.NewSearXNG(search.SearXNGOptions{Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hookRecorder is a webhook receiver on loopback.
type hookRecorder struct {
	url    string
	mu     sync.Mutex
	events []map[string]any
}

func newHookRecorder(t *testing.T) *hookRecorder {
	rec := &hookRecorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev map[string]any
		_ = json.NewDecoder(r.Body).Decode(&ev)
		rec.mu.Lock()
		rec.events = append(rec.events, ev)
		rec.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	rec.url = srv.URL
	return rec
}

// wait returns the events once n arrived; it fails the test after 15 s.
func (rec *hookRecorder) wait(t *testing.T, n int) []map[string]any {
	t.Helper()
	var evs []map[string]any
	if !testenv.WaitFor(15*time.Second, func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		evs = append(evs[:0], rec.events...)
		return len(evs) >= n
	}) {
		t.Fatalf("%d webhook events after 15 s, want %d: %v", len(evs), n, evs)
	}
	return evs
}
