package mcp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const testKey = "fc-test"

// seen is one request the fake API received.
type seen struct {
	method, path, query string
	auth, remote, reqID string
	body                map[string]any
}

// fakeAPI answers the tools' requests with answers[method+" "+path] (the
// first of a list, then the next on each call; the last repeats).
type fakeAPI struct {
	mu      sync.Mutex
	seen    []seen
	answers map[string][]string
	status  map[string]int
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if b, _ := io.ReadAll(r.Body); len(b) > 0 {
		_ = json.Unmarshal(b, &body)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, seen{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, auth: r.Header.Get("Authorization"),
		remote: r.RemoteAddr, reqID: r.Header.Get("X-Request-Id"), body: body})
	k := r.Method + " " + r.URL.Path
	list := f.answers[k]
	if len(list) == 0 {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"success":false,"error":"Not Found","code":"NOT_FOUND"}`)
		return
	}
	if st := f.status[k]; st != 0 {
		w.WriteHeader(st)
	}
	io.WriteString(w, list[0])
	if len(list) > 1 {
		f.answers[k] = list[1:]
	}
}

func (f *fakeAPI) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.seen)
}

// bearerTransport adds the key to every request of the client.
type bearerTransport struct{}

func (bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+testKey)
	return http.DefaultTransport.RoundTrip(r)
}

// setup serves an MCP server over api and connects a client to it.
func setup(t *testing.T, api http.Handler, o Options) *sdk.ClientSession {
	t.Helper()
	o.API = api
	o.Log = slog.New(slog.NewTextHandler(tWriter{t}, nil))
	srv := httptest.NewServer(New(o))
	t.Cleanup(srv.Close)
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL,
		HTTPClient: &http.Client{Transport: bearerTransport{}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

func callTool(t *testing.T, cs *sdk.ClientSession, name string, args any) (*sdk.CallToolResult, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out map[string]any
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content items", name, len(res.Content))
	}
	text, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		t.Fatalf("%s: content %T", name, res.Content[0])
	}
	if err := json.Unmarshal([]byte(text.Text), &out); err != nil {
		t.Fatalf("%s: text is not JSON: %v\n%s", name, err, text.Text)
	}
	return res, out
}

func TestToolsHaveFirecrawlMCPNamesAndArguments(t *testing.T) {
	cs := setup(t, &fakeAPI{}, Options{})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	props := map[string][]string{}
	for _, tl := range res.Tools {
		s, _ := tl.InputSchema.(map[string]any)
		if s["type"] != "object" {
			t.Errorf("%s: schema type %v", tl.Name, s["type"])
		}
		p, _ := s["properties"].(map[string]any)
		for k := range p {
			props[tl.Name] = append(props[tl.Name], k)
		}
		slices.Sort(props[tl.Name])
		if tl.Description == "" || tl.Annotations == nil {
			t.Errorf("%s: no description or annotations", tl.Name)
		}
	}
	// The argument names of firecrawl-mcp's tools (3.26; the batch tools
	// as its versions up to 3.1 had them).
	want := map[string][]string{
		"firecrawl_scrape": {"actions", "alexandria", "domainTools", "excludeTags", "formats", "includeTags", "jsonOptions", "location",
			"lockdown", "maxAge", "mobile", "onlyMainContent", "parsers", "pdfOptions", "profile", "proxy", "queryOptions", "redactPII",
			"removeBase64Images", "requestId", "screenshotOptions", "skipTlsVerification", "storeInCache", "timeout", "toolDetail", "url",
			"waitFor", "zeroDataRetention"},
		"firecrawl_map": {"ignoreQueryParameters", "includeSubdomains", "limit", "search", "sitemap", "url"},
		"firecrawl_search": {"categories", "domainTools", "enterprise", "excludeDomains", "filter", "highlights", "includeDomains",
			"limit", "location", "query", "scrapeOptions", "sources", "tbs", "toolDetail"},
		"firecrawl_crawl": {"allowExternalLinks", "allowSubdomains", "crawlEntireDomain", "deduplicateSimilarURLs", "delay",
			"excludePaths", "ignoreQueryParameters", "includePaths", "limit", "maxConcurrency", "maxDiscoveryDepth", "prompt",
			"scrapeOptions", "sitemap", "url", "webhook", "webhookHeaders"},
		"firecrawl_check_crawl_status": {"id"},
		"firecrawl_batch_scrape":       {"options", "urls"},
		"firecrawl_check_batch_status": {"id"},
		"firecrawl_extract":            {"allowExternalLinks", "enableWebSearch", "includeSubdomains", "prompt", "schema", "urls"},
		"firecrawl_agent":              {"effort", "exchange", "maxCredits", "mode", "prompt", "schema", "strictConstrainToURLs", "threadId", "urls"},
		"firecrawl_agent_status":       {"id"},
		"firecrawl_interact":           {"code", "language", "prompt", "scrapeId", "scrapeOptions", "timeout", "url"},
		"firecrawl_interact_stop":      {"scrapeId"},
		"firecrawl_find_tools":         {"capabilities", "categories", "expand", "groups", "level", "limit", "offset", "providers", "query", "urls"},
		"firecrawl_credit_usage":       {"byApiKey", "view"},
		"firecrawl_monitor_create": {"body", "email", "excludeDomains", "goal", "includeDiffs", "includeDomains", "maxResults", "name",
			"page", "pages", "queries", "scheduleText", "searchWindow", "timezone", "webhookUrl"},
		"firecrawl_monitor_list":    {"limit", "offset"},
		"firecrawl_monitor_get":     {"id"},
		"firecrawl_monitor_update":  {"body", "id"},
		"firecrawl_monitor_delete":  {"id"},
		"firecrawl_monitor_run":     {"id"},
		"firecrawl_monitor_checks":  {"id", "limit", "offset", "status"},
		"firecrawl_monitor_check":   {"checkId", "id", "limit", "pageStatus", "skip"},
		"firecrawl_search_feedback": {"missingContent", "querySuggestions", "rating", "searchId", "valuableSources"},
	}
	for name, w := range want {
		if diff := cmp.Diff(w, props[name]); diff != "" {
			t.Errorf("%s arguments (-want +got):\n%s", name, diff)
		}
	}
}

func TestScrapeCallsTheAPIAsTheCaller(t *testing.T) {
	api := &fakeAPI{answers: map[string][]string{
		"POST /v2/scrape": {`{"success":true,"data":{"markdown":"# Hi","metadata":{"statusCode":200,"scrapeId":"s1"}}}`},
	}}
	cs := setup(t, api, Options{})
	res, out := callTool(t, cs, "firecrawl_scrape", map[string]any{
		"url": "https://example.com", "formats": []string{"markdown", "json", "screenshot"},
		"jsonOptions": map[string]any{"prompt": "the title"}, "onlyMainContent": true, "includeTags": []string{},
		"parsers": []string{"pdf"}, "pdfOptions": map[string]any{"maxPages": 2}, "waitFor": nil,
	})
	if res.IsError || out["markdown"] != "# Hi" {
		t.Fatalf("result %v", out)
	}
	if sc, _ := res.StructuredContent.(map[string]any); sc["markdown"] != "# Hi" {
		t.Errorf("structured content %v", res.StructuredContent)
	}
	reqs := api.requests()
	if len(reqs) != 1 {
		t.Fatalf("requests %v", reqs)
	}
	got := reqs[0]
	if got.auth != "Bearer "+testKey || !strings.HasPrefix(got.remote, "127.0.0.1:") {
		t.Errorf("caller: auth %q remote %q", got.auth, got.remote)
	}
	want := map[string]any{"url": "https://example.com", "origin": "mcp", "onlyMainContent": true,
		"formats": []any{"markdown", map[string]any{"type": "json", "prompt": "the title"}, "screenshot"},
		"parsers": []any{map[string]any{"type": "pdf", "maxPages": float64(2)}},
	}
	if diff := cmp.Diff(want, got.body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

func TestAPIErrorIsAToolError(t *testing.T) {
	api := &fakeAPI{answers: map[string][]string{
		"POST /v2/scrape": {`{"success":false,"error":"formats[0]: unknown format","code":"BAD_REQUEST","details":[{"path":["formats",0]}]}`},
	}, status: map[string]int{"POST /v2/scrape": 400}}
	cs := setup(t, api, Options{})
	res, out := callTool(t, cs, "firecrawl_scrape", map[string]any{"url": "https://example.com", "formats": []string{"markdwon"}})
	if !res.IsError {
		t.Fatal("not an error")
	}
	if out["error"] != "formats[0]: unknown format" || out["code"] != "BAD_REQUEST" || out["status"] != float64(400) || out["details"] == nil {
		t.Errorf("error %v", out)
	}
}

func TestCrawlWaitsForTheJob(t *testing.T) {
	api := &fakeAPI{answers: map[string][]string{
		"POST /v2/crawl": {`{"success":true,"id":"c1","url":"http://x/v2/crawl/c1"}`},
		"GET /v2/crawl/c1": {`{"success":true,"status":"scraping","completed":1,"total":2,"data":[]}`,
			`{"success":true,"status":"completed","completed":2,"total":2,"data":[{"markdown":"a"},{"markdown":"b"}]}`},
	}}
	cs := setup(t, api, Options{PollInterval: time.Millisecond})
	res, out := callTool(t, cs, "firecrawl_crawl", map[string]any{"url": "https://example.com", "limit": 2,
		"webhook": "https://hook.example", "webhookHeaders": map[string]any{"X-A": "1"},
		"scrapeOptions": map[string]any{"formats": []string{"json"}, "jsonOptions": map[string]any{"schema": map[string]any{"type": "object"}}}})
	if res.IsError || out["status"] != "completed" || out["id"] != "c1" || len(out["data"].([]any)) != 2 {
		t.Fatalf("result %v", out)
	}
	reqs := api.requests()
	want := map[string]any{"url": "https://example.com", "limit": float64(2), "origin": "mcp",
		"webhook":       map[string]any{"url": "https://hook.example", "headers": map[string]any{"X-A": "1"}},
		"scrapeOptions": map[string]any{"formats": []any{map[string]any{"type": "json", "schema": map[string]any{"type": "object"}}}}}
	if diff := cmp.Diff(want, reqs[0].body); diff != "" {
		t.Errorf("crawl body (-want +got):\n%s", diff)
	}
	if len(reqs) != 3 {
		t.Errorf("%d requests, want 3 (start, two polls)", len(reqs))
	}
}

func TestCrawlAnswersItsIDWhenTheWaitEnds(t *testing.T) {
	api := &fakeAPI{answers: map[string][]string{
		"POST /v2/batch/scrape":   {`{"success":true,"id":"b1","url":"http://x/v2/batch/scrape/b1"}`},
		"GET /v2/batch/scrape/b1": {`{"success":true,"status":"scraping","completed":0,"total":3,"data":[]}`},
	}}
	cs := setup(t, api, Options{PollInterval: time.Millisecond, MaxWait: 50 * time.Millisecond})
	res, out := callTool(t, cs, "firecrawl_batch_scrape", map[string]any{"urls": []string{"https://a.example"},
		"options": map[string]any{"formats": []string{"markdown"}}})
	if res.IsError || out["id"] != "b1" || out["status"] != "scraping" || !strings.Contains(out["note"].(string), "firecrawl_check_batch_status") {
		t.Fatalf("result %v", out)
	}
	if diff := cmp.Diff(map[string]any{"urls": []any{"https://a.example"}, "formats": []any{"markdown"}, "origin": "mcp"},
		api.requests()[0].body); diff != "" {
		t.Errorf("batch body (-want +got):\n%s", diff)
	}
}

func TestSearchAsksForTheCatalogByDefault(t *testing.T) {
	api := &fakeAPI{answers: map[string][]string{
		"POST /v2/search": {`{"success":true,"data":{"web":[{"url":"https://a"}]},"warning":"no catalog","id":"s1","creditsUsed":2}`},
	}}
	cs := setup(t, api, Options{})
	_, out := callTool(t, cs, "firecrawl_search", map[string]any{"query": "q"})
	if out["warning"] != "no catalog" || out["id"] != "s1" || out["web"] == nil {
		t.Errorf("result %v", out)
	}
	want := map[string]any{"query": "q", "sources": []any{"web", "alexandria"}, "domainTools": true, "toolDetail": "compact", "origin": "mcp"}
	if diff := cmp.Diff(want, api.requests()[0].body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	// Sources given: no domainTools unless a web source goes with the
	// catalog; exchange is the catalog's other name.
	callTool(t, cs, "firecrawl_search", map[string]any{"query": "q", "sources": []any{map[string]any{"type": "exchange"}}})
	want = map[string]any{"query": "q", "sources": []any{map[string]any{"type": "alexandria"}}, "toolDetail": "compact", "origin": "mcp"}
	if diff := cmp.Diff(want, api.requests()[1].body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

func TestCatalogCallsCarryTheirRequestID(t *testing.T) {
	api := &fakeAPI{answers: map[string][]string{
		"POST /v2/scrape": {`{"success":true,"data":{"alexandria":[{"provider":"firecrawl","capability":"find-tools","data":{"items":[]}}],"creditsCost":0}}`},
	}}
	cs := setup(t, api, Options{})
	_, out := callTool(t, cs, "firecrawl_scrape", map[string]any{"alexandria": map[string]any{"provider": "w", "capability": "c"},
		"requestId": "req-1", "toolDetail": "full"})
	if out["requestId"] != "req-1" || out["alexandria"] == nil {
		t.Errorf("result %v", out)
	}
	_, out = callTool(t, cs, "firecrawl_find_tools", map[string]any{"query": "weather"})
	reqs := api.requests()
	if reqs[0].reqID != "req-1" || reqs[1].reqID == "" || reqs[1].reqID != out["requestId"] {
		t.Errorf("request ids %q %q (answer %v)", reqs[0].reqID, reqs[1].reqID, out["requestId"])
	}
	if diff := cmp.Diff(map[string]any{"alexandria": map[string]any{"provider": "w", "capability": "c"}, "origin": "mcp"}, reqs[0].body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	want := map[string]any{"origin": "mcp", "alexandria": map[string]any{"provider": "firecrawl", "capability": "find-tools",
		"options": map[string]any{"query": "weather", "limit": float64(20)}}}
	if diff := cmp.Diff(want, reqs[1].body); diff != "" {
		t.Errorf("find-tools body (-want +got):\n%s", diff)
	}
}

func TestMonitorAndUsageRoutes(t *testing.T) {
	api := &fakeAPI{answers: map[string][]string{
		"POST /v2/monitor":                     {`{"success":true,"data":{"id":"m1"}}`},
		"GET /v2/monitor/m1/checks":            {`{"success":true,"data":[]}`},
		"GET /v2/monitor/m1/checks/k1":         {`{"success":true,"data":{"id":"k1"}}`},
		"GET /v2/team/credit-usage/historical": {`{"success":true,"periods":[]}`},
	}}
	cs := setup(t, api, Options{})
	_, out := callTool(t, cs, "firecrawl_monitor_create", map[string]any{"page": "https://a.example", "goal": "price drops"})
	if out["id"] != "m1" {
		t.Errorf("create %v", out)
	}
	callTool(t, cs, "firecrawl_monitor_checks", map[string]any{"id": "m1", "limit": 5, "status": "failed"})
	callTool(t, cs, "firecrawl_monitor_check", map[string]any{"id": "m1", "checkId": "k1", "skip": 10})
	callTool(t, cs, "firecrawl_credit_usage", map[string]any{"byApiKey": true})
	reqs := api.requests()
	want := map[string]any{"name": "Monitor https://a.example", "goal": "price drops",
		"schedule": map[string]any{"text": "every 30 minutes", "timezone": "UTC"},
		"targets":  []any{map[string]any{"type": "scrape", "urls": []any{"https://a.example"}}}}
	if diff := cmp.Diff(want, reqs[0].body); diff != "" {
		t.Errorf("monitor body (-want +got):\n%s", diff)
	}
	if reqs[1].query != "limit=5&status=failed" || reqs[2].query != "skip=10" || reqs[3].query != "byApiKey=true" {
		t.Errorf("queries %q %q %q", reqs[1].query, reqs[2].query, reqs[3].query)
	}
}
