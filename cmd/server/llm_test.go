package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/llm/llmtest"
	"github.com/firegate/firegate/internal/testenv"
)

// TestScrapeJSONWithLanguageModel runs the real server with OPENAI_BASE_URL
// on a scripted endpoint and scrapes a local page with the json format
// over HTTP: the model gets the caller's (normalized) schema and the page,
// the answer comes back in data.json and the team is charged 5 credits.
func TestScrapeJSONWithLanguageModel(t *testing.T) {
	t.Parallel()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<html><head><title>Widget</title></head><body><main><h1>Blue Widget</h1>
<p>Price: 19.90 EUR. In stock.</p></main></body></html>`)
	}))
	defer site.Close()
	ep := llmtest.NewReplying(t, func(w http.ResponseWriter, r llmtest.Request) {
		if strings.Contains(r.System(), "Summarize") {
			llmtest.Write(w, "A blue widget for 19.90 EUR.", &llmtest.Usage{PromptTokens: 80, CompletionTokens: 9})
			return
		}
		if strings.Contains(r.System(), "description of a web crawl") {
			if strings.Contains(r.LastUser(), "broken") {
				llmtest.Write(w, `{"includePaths":["(unclosed"]}`, nil)
				return
			}
			llmtest.Write(w, `{"includePaths":["^/blog/.*"],"limit":5,"sitemap":"skip"}`, nil)
			return
		}
		if strings.Contains(r.System(), "Name the widgets") {
			title := ""
			for _, l := range strings.Split(r.LastUser(), "\n") {
				if strings.HasPrefix(l, "# ") {
					title = strings.TrimPrefix(l, "# ")
					break
				}
			}
			b, _ := json.Marshal(map[string]any{"widgets": []string{title}})
			llmtest.Write(w, string(b), &llmtest.Usage{PromptTokens: 60, CompletionTokens: 15})
			return
		}
		if strings.Contains(r.System(), "List the colours") {
			colour := "red"
			if strings.Contains(r.LastUser(), "Blue Widget") {
				colour = "blue"
			}
			llmtest.Write(w, `{"shop":"Widgets Inc","colours":["`+colour+`","green"]}`, &llmtest.Usage{PromptTokens: 140, CompletionTokens: 10})
			return
		}
		llmtest.Write(w, `{"name":"Blue Widget","price":19.9,"currency":"EUR"}`, &llmtest.Usage{PromptTokens: 200, CompletionTokens: 15})
	})
	red := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<html><body><main><h1>Red Widget</h1><p>Price: 9 EUR.</p></main></body></html>`)
	}))
	defer red.Close()
	shopMux := http.NewServeMux()
	for path, body := range map[string]string{
		"/shop":   `<h1>Shop</h1><p><a href="/shop/a">A</a> <a href="/shop/b">B</a> <a href="/other">Other</a></p>`,
		"/shop/a": `<h1>Red Widget</h1><p>Red.</p>`,
		"/shop/b": `<h1>Blue Widget</h1><p>Blue.</p>`,
		"/other":  `<h1>Other</h1><p>Not a widget.</p>`,
	} {
		shopMux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<html><body><main>`+body+`</main></body></html>`)
		})
	}
	shop := httptest.NewServer(shopMux)
	defer shop.Close()

	dir := t.TempDir()
	ctx := context.Background()
	e := map[string]string{"DATA_DIR": dir}
	var out bytes.Buffer
	if err := run(ctx, []string{"keys", "create", "--team", "acme", "--credits", "60"}, env(e), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(out.String())

	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	for k, v := range map[string]string{"HOST": "127.0.0.1", "PORT": fmt.Sprint(port), "ALLOW_PRIVATE_TARGETS": "true",
		"BROWSER": "off", "OPENAI_BASE_URL": ep.BaseURL, "OPENAI_API_KEY": "sk-scripted", "MODEL_NAME": "scripted-model"} {
		e[k] = v
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run(sctx, nil, env(e), io.Discard, io.Discard) }()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHealthy(t, base)

	post := func(body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/v2/scrape", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, m
	}

	schema := `{"type":"object","additionalProperties":false,"properties":{"name":{"type":"string"},"price":{"type":"number"},"currency":{"type":"string"}},"required":["name","price","missing"]}`
	status, body := post(`{"url":"` + site.URL + `","formats":[{"type":"json","schema":` + schema + `,"prompt":"the product"}]}`)
	if status != 200 {
		t.Fatalf("status %d: %v", status, body)
	}
	data := body["data"].(map[string]any)
	got, _ := json.Marshal(data["json"])
	if string(got) != `{"currency":"EUR","name":"Blue Widget","price":19.9}` {
		t.Errorf("data.json = %s", got)
	}
	if _, ok := data["markdown"]; ok {
		t.Error("markdown returned though only json was requested")
	}
	if c := data["metadata"].(map[string]any)["creditsUsed"]; c != 5.0 {
		t.Errorf("creditsUsed = %v, want 5", c)
	}
	reqs := ep.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls", len(reqs))
	}
	r := reqs[0]
	var rf struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	json.Unmarshal(r.ResponseFormat, &rf)
	// httpapi's schema normalization reached the model: additionalProperties
	// dropped, required names without a property removed.
	wantSchema := `{"type":"object","properties":{"name":{"type":"string"},"price":{"type":"number"},"currency":{"type":"string"}},"required":["name","price"]}`
	if rf.Type != "json_schema" || string(rf.JSONSchema.Schema) != wantSchema {
		t.Errorf("response_format = %s", r.ResponseFormat)
	}
	if r.Model != "scripted-model" || r.Auth != "Bearer sk-scripted" || !strings.Contains(r.LastUser(), "Price: 19.90 EUR") {
		t.Errorf("model %q auth %q page %q", r.Model, r.Auth, r.LastUser())
	}

	status, body = post(`{"url":"` + site.URL + `","formats":["markdown","summary"]}`)
	if status != 200 || body["data"].(map[string]any)["summary"] != "A blue widget for 19.90 EUR." {
		t.Errorf("summary: %d %v", status, body)
	}

	status, body = post(`{"url":"` + site.URL + `","formats":[{"type":"json","schema":{"type":"objekt"}}]}`)
	if status != http.StatusUnprocessableEntity || body["code"] != "SCRAPE_JSON_SCHEMA_INVALID" || !strings.Contains(fmt.Sprint(body["error"]), "formats.json.schema") {
		t.Errorf("invalid schema: %d %v", status, body)
	}

	// Deprecated extract: a batch of the two pages with one json format,
	// merged when polled.
	extractBody := `{"urls":["` + site.URL + `","` + red.URL + `"],"prompt":"List the colours","showSources":true,` +
		`"schema":{"type":"object","properties":{"shop":{"type":"string"},"colours":{"type":"array","items":{"type":"string"}}}}}`
	type extractStatus struct {
		Success     bool                `json:"success"`
		Status      string              `json:"status"`
		Data        map[string]any      `json:"data"`
		Sources     map[string][]string `json:"sources"`
		TokensUsed  int                 `json:"tokensUsed"`
		CreditsUsed int                 `json:"creditsUsed"`
		ExpiresAt   string              `json:"expiresAt"`
	}
	var lastExtract string
	extract := func(version, body string) extractStatus {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/"+version+"/extract", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var started struct {
			Success bool   `json:"success"`
			ID      string `json:"id"`
		}
		json.NewDecoder(resp.Body).Decode(&started)
		resp.Body.Close()
		if resp.StatusCode != 200 || !started.Success || started.ID == "" || resp.Header.Get("Deprecation") != "true" {
			t.Fatalf("POST /%s/extract: %d %+v %v", version, resp.StatusCode, started, resp.Header)
		}
		lastExtract = started.ID
		var st extractStatus
		testenv.WaitFor(20*time.Second, func() bool {
			req, _ := http.NewRequest(http.MethodGet, base+"/"+version+"/extract/"+started.ID, nil)
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			st = extractStatus{}
			json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			return st.Status != "processing"
		})
		return st
	}
	st := extract("v1", extractBody) // the v1 route (the 1.x SDK's): the same body and answers
	colours := fmt.Sprint(st.Data["colours"])
	if st.Status != "completed" || st.Data["shop"] != "Widgets Inc" || !strings.Contains(colours, "blue") ||
		!strings.Contains(colours, "red") || strings.Count(colours, "green") != 1 {
		t.Errorf("extract status: %+v", st)
	}
	// Billed by tokens: 150 a page (the endpoint's usage), 10 credits each.
	if len(st.Sources["colours"]) != 2 || st.TokensUsed != 300 || st.CreditsUsed != 20 || st.ExpiresAt == "" {
		t.Errorf("sources %v tokens %d credits %d expiresAt %q", st.Sources, st.TokensUsed, st.CreditsUsed, st.ExpiresAt)
	}

	// A glob: the pages under /shop found by map, /other left out.
	st = extract("v2", `{"urls":["`+shop.URL+`/shop/*"],"prompt":"Name the widgets","showSources":true}`)
	widgets := fmt.Sprint(st.Data["widgets"])
	if st.Status != "completed" || !strings.Contains(widgets, "Shop") || !strings.Contains(widgets, "Red Widget") ||
		!strings.Contains(widgets, "Blue Widget") || strings.Contains(widgets, "Other") || st.TokensUsed != 225 || st.CreditsUsed != 15 {
		t.Errorf("glob extract: %+v", st)
		for _, p := range []string{"/v2/batch/scrape/" + lastExtract, "/v2/batch/scrape/" + lastExtract + "/errors"} {
			req, _ := http.NewRequest(http.MethodGet, base+p, nil)
			req.Header.Set("Authorization", "Bearer "+key)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				t.Logf("GET %s: %s", p, b)
			}
		}
	}

	// A crawl prompt: the model's options under the caller's own fields,
	// checked by the crawl validator; params-preview shows them.
	send := func(path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	// origin and integration are accepted as on every body (the Python
	// SDK sends origin).
	status, body = send("/v2/crawl/params-preview", `{"url":"`+site.URL+`","prompt":"only the blog, five pages","origin":"python-sdk@3.1.0","integration":"langchain"}`)
	if d, _ := body["data"].(map[string]any); status != 200 || d["limit"] != 5.0 || fmt.Sprint(d["includePaths"]) != "[^/blog/.*]" || d["url"] != site.URL {
		t.Errorf("params-preview: %d %v", status, body)
	}
	if status, body = send("/v2/crawl/params-preview", `{"url":"`+site.URL+`","prompt":"x","origin":5}`); status != 400 || fmt.Sprint(body["details"]) == "" {
		t.Errorf("params-preview with a numeric origin: %d %v", status, body)
	}
	// The crawls start at an address nothing listens on: they fail at once
	// and charge nothing, keeping the credit count below exact.
	status, body = send("/v2/crawl", `{"url":"http://127.0.0.1:1/","prompt":"only the blog, five pages","limit":2}`)
	final, _ := body["finalCrawlerOptions"].(map[string]any)
	gen, _ := body["promptGeneratedOptions"].(map[string]any)
	if status != 200 || final["limit"] != 2.0 || fmt.Sprint(final["includePaths"]) != "[^/blog/.*]" || final["sitemap"] != "skip" || gen["limit"] != 5.0 {
		t.Errorf("crawl with prompt: %d %v", status, body)
	}
	status, body = send("/v2/crawl", `{"url":"http://127.0.0.1:1/","prompt":"something broken"}`)
	if status != 400 || body["code"] != "CRAWL_PROMPT_FAILED" {
		t.Errorf("invalid generated options: %d %v", status, body)
	}

	// The model calls are in the metrics: the json scrape's, the
	// summary's (with its usage), the extracts' and the crawl prompts'.
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metricsText, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`firegate_llm_calls_total{outcome="success",purpose="json"} 6`,
		`firegate_llm_calls_total{outcome="success",purpose="summary"} 1`,
		`firegate_llm_tokens_total{kind="prompt",purpose="summary"} 80`,
		`firegate_llm_tokens_total{kind="completion",purpose="summary"} 9`,
		`firegate_llm_call_duration_seconds_count{purpose="options"} 3`,
	} {
		if !strings.Contains(string(metricsText), want) {
			t.Errorf("GET /metrics lacks %s", want)
		}
	}
	if t.Failed() {
		for _, l := range strings.Split(string(metricsText), "\n") {
			if strings.HasPrefix(l, "firegate_llm_") && !strings.Contains(l, "_bucket") {
				t.Log(l)
			}
		}
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	out.Reset()
	if err := run(ctx, []string{"credits", "show", "--team", "acme"}, env(map[string]string{"DATA_DIR": dir}), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	// 60 - 5 (json) - 1 (markdown + summary) - 20 (extract: 150 tokens on
	// each of two pages) - 15 (glob extract: 75 tokens on each of three
	// pages); failed requests are free.
	if got := strings.TrimSpace(out.String()); !strings.Contains(got, "19 of 60") {
		t.Errorf("credits after: %q", got)
	}
}
