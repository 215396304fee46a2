package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/search"
	"github.com/firegate/firegate/internal/search/searxngtest"
	"github.com/firegate/firegate/internal/testenv"
)

// searchSite serves the pages search results point at: two articles, a
// page that answers 404 and one that never answers.
func searchSite(t testing.TB) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	page := func(title, text string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<html><head><title>%s</title></head><body><main><h1>%s</h1><p>%s</p></main></body></html>`, title, title, text)
		}
	}
	mux.HandleFunc("/lamp", page("The Lamp", "For forty years she kept the lamp burning."))
	mux.HandleFunc("/keeper", page("The Keeper", "Ships passed in the night."))
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "gone", http.StatusNotFound) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// searchFixture is a billed server whose scraper is the real engine over
// a fetch client (admitting loopback targets or not) and whose searcher is
// the real SearXNG backend over a scripted engine.
type searchFixture struct {
	*billed
	engine *searxngtest.Server
	http   *httptest.Server
}

func setupSearch(t *testing.T, allowPrivate bool, answer func(url.Values) searxngtest.Answer) *searchFixture {
	t.Helper()
	b := setupBilled(t, LimitDefaults{Concurrency: 4})
	log := testenv.Logger(t)
	fc := fetch.New(fetch.Options{AllowPrivate: allowPrivate}, log)
	t.Cleanup(fc.CloseIdleConnections)
	b.srv.scraper = scrape.New(scrape.Config{Fetcher: fc, Log: log})
	eng := searxngtest.New(t, answer)
	backend, err := search.NewSearXNG(search.SearXNGOptions{Endpoint: eng.URL, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	b.srv.searcher = search.New(backend, search.Options{}, log)
	hs := httptest.NewServer(b.srv)
	t.Cleanup(hs.Close)
	return &searchFixture{billed: b, engine: eng, http: hs}
}

// post sends body to POST /v2/search over HTTP and decodes the answer.
func (f *searchFixture) post(t *testing.T, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, f.http.URL+"/v2/search", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+f.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("body is not JSON: %q", raw)
	}
	return resp.StatusCode, m
}

func (f *searchFixture) balance(t *testing.T) int64 {
	t.Helper()
	bal, err := f.st.CreditBalance(context.Background(), f.team.ID)
	if err != nil {
		t.Fatal(err)
	}
	return bal.Remaining
}

func TestSearchScrapesResults(t *testing.T) {
	t.Parallel()
	site := searchSite(t)
	f := setupSearch(t, true, func(q url.Values) searxngtest.Answer {
		switch q.Get("categories") {
		case "news":
			return searxngtest.Answer{Results: []searxngtest.Result{{URL: site.URL + "/keeper", Title: "Keeper news", Content: "news snippet",
				Score: 2, PublishedDate: searxngtest.Date(time.Now().Add(-2 * time.Hour)), ThumbnailSrc: site.URL + "/t.jpg"}}}
		case "images":
			return searxngtest.Answer{Results: []searxngtest.Result{{URL: site.URL + "/lamp", Title: "Lamp picture",
				ImgSrc: site.URL + "/lamp.jpg", Resolution: "640x480", Score: 1}}}
		}
		return searxngtest.Answer{Results: []searxngtest.Result{
			{URL: site.URL + "/keeper", Title: "Keeper", Content: "about the keeper", Score: 1},
			{URL: site.URL + "/lamp", Title: "Lamp", Content: "about the lamp", Score: 3},
			{URL: site.URL + "/lamp/#again", Title: "Lamp again", Score: 0.5}, // same page
			{URL: site.URL + "/missing", Title: "Missing", Content: "gone", Score: 0.9},
			{URL: "http://127.0.0.1:1/refused", Title: "Refused", Content: "down", Score: 0.8},
		}}
	})
	if _, err := f.st.SetCredits(context.Background(), f.team.ID, 100); err != nil {
		t.Fatal(err)
	}
	status, got := f.post(t, `{"query":"lighthouse keeper","limit":5,"sources":["web",{"type":"news","tbs":"qdr:d"},"images"],
		"lang":"de","country":"at","safe":true,"scrapeOptions":{"formats":["markdown"]}}`)
	if status != 200 || got["success"] != true {
		t.Fatalf("%d %v", status, got)
	}

	// What the engine was asked: one call per source (each answered fewer
	// results than the limit on page 1, and the next page brought nothing new).
	byCat := map[string]url.Values{}
	for _, c := range f.engine.Calls() {
		if c.Get("pageno") == "1" {
			byCat[c.Get("categories")] = c
		}
	}
	base := url.Values{"q": {"lighthouse keeper"}, "format": {"json"}, "language": {"de-AT"}, "safesearch": {"2"}, "pageno": {"1"}}
	for cat, extra := range map[string]url.Values{"general": {}, "news": {"time_range": {"day"}}, "images": {}} {
		want := url.Values{"categories": {cat}}
		for k, v := range base {
			want[k] = v
		}
		for k, v := range extra {
			want[k] = v
		}
		if diff := cmp.Diff(want, byCat[cat]); diff != "" {
			t.Errorf("%s call (-want +got)\n%s", cat, diff)
		}
	}

	if _, err := uuid.Parse(fmt.Sprint(got["id"])); err != nil {
		t.Errorf("id %v", got["id"])
	}
	data := got["data"].(map[string]any)
	web := data["web"].([]any)
	if len(web) != 4 {
		t.Fatalf("web: %d results, want 4 (the duplicate merged): %v", len(web), web)
	}
	item := func(i int) map[string]any { return web[i].(map[string]any) }
	meta := func(i int) map[string]any { return item(i)["metadata"].(map[string]any) }
	// Ranked by score; fields of the reference plus the scraped document.
	for i, want := range []struct{ url, title string }{
		{site.URL + "/lamp", "Lamp"}, {site.URL + "/keeper", "Keeper"}, {site.URL + "/missing", "Missing"}, {"http://127.0.0.1:1/refused", "Refused"},
	} {
		if item(i)["url"] != want.url || item(i)["title"] != want.title || item(i)["position"] != float64(i+1) {
			t.Errorf("web[%d] = %v, want %s %q at %d", i, item(i), want.url, want.title, i+1)
		}
	}
	if item(0)["description"] != "about the lamp" || !strings.Contains(fmt.Sprint(item(0)["markdown"]), "# The Lamp") ||
		meta(0)["statusCode"] != float64(200) || meta(0)["title"] != "The Lamp" {
		t.Errorf("web[0] scraped: %v", item(0))
	}
	if !strings.Contains(fmt.Sprint(item(1)["markdown"]), "Ships passed") {
		t.Errorf("web[1] scraped: %v", item(1))
	}
	// A page answering 404 is scraped (statusCode 404), as a scrape would be.
	if meta(2)["statusCode"] != float64(404) {
		t.Errorf("web[2] metadata: %v", meta(2))
	}
	// A failed scrape keeps its result, with metadata.error.
	if item(3)["description"] != "down" || item(3)["markdown"] != nil || meta(3)["code"] != "SCRAPE_SITE_ERROR" || meta(3)["error"] == "" ||
		meta(3)["url"] != "http://127.0.0.1:1/refused" {
		t.Errorf("web[3] (refused): %v", item(3))
	}

	news := data["news"].([]any)[0].(map[string]any)
	if news["title"] != "Keeper news" || news["snippet"] != "news snippet" || news["imageUrl"] != site.URL+"/t.jpg" ||
		news["date"] == nil || news["position"] != float64(1) || !strings.Contains(fmt.Sprint(news["markdown"]), "Ships passed") {
		t.Errorf("news: %v", news)
	}
	wantImg := map[string]any{"title": "Lamp picture", "imageUrl": site.URL + "/lamp.jpg", "imageWidth": float64(640),
		"imageHeight": float64(480), "url": site.URL + "/lamp", "position": float64(1)}
	if diff := cmp.Diff(wantImg, data["images"].([]any)[0]); diff != "" {
		t.Errorf("images are not scraped (-want +got)\n%s", diff)
	}

	// Credits: 2 per 10 results per source (3 sources) + 1 per scraped page
	// (web: lamp, keeper, missing; news: keeper); the refused one is free.
	if got["creditsUsed"] != float64(6+4) {
		t.Errorf("creditsUsed = %v, want 10", got["creditsUsed"])
	}
	if bal := f.balance(t); bal != 90 {
		t.Errorf("balance %d, want 90", bal)
	}

	// Without scrapeOptions formats nothing is scraped: 2 credits.
	status, got = f.post(t, `{"query":"lighthouse keeper","scrapeOptions":{"onlyMainContent":false}}`)
	web = got["data"].(map[string]any)["web"].([]any)
	if status != 200 || got["creditsUsed"] != float64(2) || web[0].(map[string]any)["markdown"] != nil || got["data"].(map[string]any)["news"] != nil {
		t.Errorf("no formats: %d %v", status, got)
	}
	if bal := f.balance(t); bal != 88 {
		t.Errorf("balance %d, want 88", bal)
	}
}

func TestSearchScrapesThroughNetworkPolicy(t *testing.T) {
	t.Parallel()
	site := searchSite(t)
	f := setupSearch(t, false, func(url.Values) searxngtest.Answer {
		return searxngtest.Answer{Results: []searxngtest.Result{{URL: site.URL + "/lamp", Title: "Lamp", Score: 1}}}
	})
	status, got := f.post(t, `{"query":"q","scrapeOptions":{"formats":["markdown"]}}`)
	if status != 200 {
		t.Fatalf("%d %v", status, got)
	}
	it := got["data"].(map[string]any)["web"].([]any)[0].(map[string]any)
	meta, _ := it["metadata"].(map[string]any)
	if it["markdown"] != nil || meta["code"] != "SCRAPE_TARGET_NOT_ALLOWED" {
		t.Errorf("a loopback result was scraped without ALLOW_PRIVATE_TARGETS: %v", it)
	}
}

func TestSearchScrapeTimeoutKeepsResults(t *testing.T) {
	t.Parallel()
	site := searchSite(t)
	f := setupSearch(t, true, func(url.Values) searxngtest.Answer {
		return searxngtest.Answer{Results: []searxngtest.Result{
			{URL: site.URL + "/lamp", Title: "Lamp", Score: 2},
			{URL: site.URL + "/slow", Title: "Slow", Score: 1},
		}}
	})
	start := time.Now()
	status, got := f.post(t, `{"query":"q","timeout":1500,"scrapeOptions":{"formats":["markdown"]}}`)
	if status != 200 {
		t.Fatalf("%d %v", status, got)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v: the scrape was not cut at the request's timeout", d)
	}
	web := got["data"].(map[string]any)["web"].([]any)
	lamp, slow := web[0].(map[string]any), web[1].(map[string]any)
	if !strings.Contains(fmt.Sprint(lamp["markdown"]), "The Lamp") {
		t.Errorf("lamp: %v", lamp)
	}
	if meta, _ := slow["metadata"].(map[string]any); meta["code"] != "SCRAPE_TIMEOUT" || slow["title"] != "Slow" {
		t.Errorf("slow: %v", slow)
	}
}

func TestSearchEngineErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		answer searxngtest.Answer
		body   string
		status int
		code   string
		msg    string
	}{
		{"json format off", searxngtest.Answer{Status: 403, Raw: "Forbidden"}, `{"query":"q"}`, 502, "SEARCH_ENGINE_ERROR", "search.formats"},
		{"not json", searxngtest.Answer{Raw: "<html></html>"}, `{"query":"q"}`, 502, "SEARCH_ENGINE_ERROR", "JSON"},
		{"every engine failed", searxngtest.Answer{Unresponsive: [][]string{{"google", "CAPTCHA"}}}, `{"query":"q"}`, 502,
			"SEARCH_ENGINE_UNAVAILABLE", "google: CAPTCHA"},
		{"slow", searxngtest.Answer{Delay: 10 * time.Second}, `{"query":"q","timeout":300}`, 408, "SCRAPE_TIMEOUT", "search engine did not answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setupSearch(t, true, func(url.Values) searxngtest.Answer { return tc.answer })
			if _, err := f.st.SetCredits(context.Background(), f.team.ID, 50); err != nil {
				t.Fatal(err)
			}
			status, got := f.post(t, tc.body)
			if status != tc.status || got["code"] != tc.code || !strings.Contains(fmt.Sprint(got["error"]), tc.msg) {
				t.Errorf("%d %v, want %d %s containing %q", status, got, tc.status, tc.code, tc.msg)
			}
			if bal := f.balance(t); bal != 50 {
				t.Errorf("a failed search charged credits: balance %d", bal)
			}
		})
	}
}

func TestSearchNotConfigured(t *testing.T) {
	t.Parallel()
	s, _ := setup(t, &fakeScraper{})
	rec, got := do(t, s, http.MethodPost, "/v2/search", goodKey, `{"query":"q"}`)
	if rec.Code != 400 || got["code"] != "SEARCH_NOT_CONFIGURED" || !strings.Contains(fmt.Sprint(got["error"]), "SEARXNG_ENDPOINT") {
		t.Errorf("%d %v", rec.Code, got)
	}
	// Validation still comes first.
	rec, got = do(t, s, http.MethodPost, "/v2/search", goodKey, `{}`)
	if rec.Code != 400 || got["code"] != "BAD_REQUEST" {
		t.Errorf("%d %v", rec.Code, got)
	}
	// Feedback routes are still not implemented.
	rec, _ = do(t, s, http.MethodPost, "/v2/search/"+uuid.NewString()+"/feedback", goodKey, `{}`)
	if rec.Code != http.StatusNotImplemented {
		t.Errorf("feedback: %d", rec.Code)
	}
}

func TestSearchValidation(t *testing.T) {
	t.Parallel()
	s, _ := setup(t, &fakeScraper{})
	for _, tc := range []struct {
		body string
		path string
		code string
	}{
		{`{}`, `["query"]`, codeInvalidType},
		{`{"query":""}`, `["query"]`, codeTooSmall},
		{`{"query":"` + strings.Repeat("a", 501) + `"}`, `["query"]`, codeTooBig},
		{`{"query":"q","limit":0}`, `["limit"]`, codeTooSmall},
		{`{"query":"q","limit":101}`, `["limit"]`, codeTooBig},
		{`{"query":"q","sources":["video"]}`, `["sources",0]`, codeInvalidEnum},
		{`{"query":"q","sources":[]}`, `["sources"]`, codeTooSmall},
		{`{"query":"q","sources":["web",{"type":"web"}]}`, `["sources",1]`, codeCustom},
		{`{"query":"q","sources":[{"type":"images","tbs":"qdr:d"}]}`, `["sources",0,"tbs"]`, codeUnrecognizedKeys},
		{`{"query":"q","sources":[{"type":"web","tbs":"qdr:q"}]}`, `["sources",0,"tbs"]`, codeInvalidString},
		{`{"query":"q","tbs":"cdr:1"}`, `["tbs"]`, codeInvalidString},
		{`{"query":"q","includeDomains":["a.com"],"excludeDomains":["b.com"]}`, `["excludeDomains"]`, codeCustom},
		{`{"query":"q","includeDomains":["https://a.com/x"]}`, `["includeDomains",0]`, codeInvalidString},
		{`{"query":"q","safe":"true"}`, `["safe"]`, codeInvalidType},
		{`{"query":"q","categories":["music"]}`, `["categories",0]`, codeInvalidEnum},
		{`{"query":"q","categories":[{"type":"developer"}]}`, `["categories",0,"type"]`, codeCustom},
		{`{"query":"q","lang":"english please"}`, `["lang"]`, codeInvalidString},
		{`{"query":"q","country":"zz"}`, `["country"]`, codeInvalidString},
		{`{"query":"q","timeout":0}`, `["timeout"]`, codeTooSmall},
		{`{"query":"q","enterprise":["gold"]}`, `["enterprise",0]`, codeInvalidEnum},
		{`{"query":"q","scrapeOptions":{"formats":["rawBase64"]}}`, `["scrapeOptions","formats",0]`, codeInvalidEnum},
		{`{"query":"q","scrapeOptions":{"formats":["markdown"],"waitFor":-1}}`, `["scrapeOptions","waitFor"]`, codeTooSmall},
		{`{"query":"q","scrapeOptions":{"nope":1}}`, `["scrapeOptions","nope"]`, codeUnrecognizedKeys},
		{`{"query":"q","num":5}`, `["num"]`, codeUnrecognizedKeys},
		{`{"query":"q","scrapeOptions":"markdown"}`, `["scrapeOptions"]`, codeInvalidType},
	} {
		rec, got := do(t, s, http.MethodPost, "/v2/search", goodKey, tc.body)
		details, _ := json.Marshal(got["details"])
		if rec.Code != 400 || got["code"] != "BAD_REQUEST" || got["error"] != "Invalid request body" ||
			!strings.Contains(string(details), `"path":`+tc.path) || !strings.Contains(string(details), `"code":"`+tc.code+`"`) {
			t.Errorf("%s: %d %v, want details at %s with code %s", tc.body, rec.Code, got, tc.path, tc.code)
		}
	}
}

func TestSearchRequestDefaults(t *testing.T) {
	t.Parallel()
	req, err := decodeSearchRequest(strings.NewReader(`{"query":"q","tbs":"qdr:w","lang":"fr",
		"sources":["web",{"type":"news","country":"ca"},{"type":"images"}],"location":"Paris,France"}`))
	if err != nil {
		t.Fatal(err)
	}
	week, _ := search.ParseTBS("qdr:w")
	want := []searchSource{
		{Type: "web", Time: week, Language: "fr"},                 // location given: no default country
		{Type: "news", Time: week, Language: "fr", Country: "CA"}, // its own country
		{Type: "images", Language: "fr"},                          // no time range for images
	}
	if diff := cmp.Diff(want, req.Sources); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if req.Limit != 10 || req.Timeout != time.Minute || len(req.Scrape.Formats) != 0 {
		t.Errorf("defaults: %+v", req)
	}
	req, _ = decodeSearchRequest(strings.NewReader(`{"query":"q"}`))
	if diff := cmp.Diff([]searchSource{{Type: "web", Language: "en", Country: "US"}}, req.Sources); diff != "" {
		t.Errorf("default source (-want +got)\n%s", diff)
	}
}

func TestSearchRefusals(t *testing.T) {
	t.Parallel()
	site := searchSite(t)
	f := setupSearch(t, true, func(url.Values) searxngtest.Answer {
		return searxngtest.Answer{Results: []searxngtest.Result{{URL: site.URL + "/lamp", Title: "Lamp", Score: 1}}}
	})
	if _, err := f.st.SetCredits(context.Background(), f.team.ID, 20); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		body   string
		status int
		code   string
	}{
		// The pre-check needs `limit` credits; nothing runs on a 402.
		{`{"query":"q","limit":21}`, 402, "insufficient_credits"},
		{`{"query":"q","zeroDataRetention":true}`, 403, "ZDR_NOT_ENABLED"},
		{`{"query":"q","scrapeOptions":{"formats":["markdown"],"zeroDataRetention":true}}`, 403, "ZDR_NOT_ENABLED"},
		{`{"query":"q","enterprise":["anon"]}`, 403, "FORBIDDEN"},
		{`{"query":"q","asyncScraping":true}`, 400, "SEARCH_ASYNC_SCRAPING_NOT_SUPPORTED"},
		// The catalog alone on a server without one (with web results it is
		// left out with a warning: TestSearchCatalogSource).
		{`{"query":"q","sources":["alexandria"]}`, 403, "CATALOG_NOT_ENABLED"},
	} {
		status, got := f.post(t, tc.body)
		if status != tc.status || got["code"] != tc.code {
			t.Errorf("%s: %d %v, want %d %s", tc.body, status, got, tc.status, tc.code)
		}
	}
	if n := len(f.engine.Calls()); n != 0 {
		t.Errorf("the engine was called %d times by refused searches", n)
	}
	if bal := f.balance(t); bal != 20 {
		t.Errorf("refused searches charged credits: balance %d", bal)
	}

	// The search holds one of the team's concurrency slots.
	release, _, err := f.limit.Acquire(context.Background(), f.team.ID, 4)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		r, _, err := f.limit.Acquire(context.Background(), f.team.ID, 4)
		if err != nil {
			t.Fatal(err)
		}
		defer r()
	}
	status, got := f.post(t, `{"query":"q","timeout":300}`)
	if status != http.StatusTooManyRequests || got["code"] != "CONCURRENCY_LIMIT_REACHED" {
		t.Errorf("with every slot taken: %d %v", status, got)
	}
	release()
	if status, got := f.post(t, `{"query":"q"}`); status != 200 {
		t.Errorf("with a slot free: %d %v", status, got)
	}
}

// TestV1Search checks POST /v1/search over the real search and engine
// path: v1's default limit, scrapeOptions in v1 form, and the web results
// as a flat data array.
func TestV1Search(t *testing.T) {
	t.Parallel()
	site := searchSite(t)
	var results []searxngtest.Result
	for i := range 8 {
		results = append(results, searxngtest.Result{URL: fmt.Sprintf("%s/r%d", site.URL, i), Title: fmt.Sprint("R", i), Score: float64(10 - i)})
	}
	results[0].URL = site.URL + "/keeper"
	f := setupSearch(t, true, func(url.Values) searxngtest.Answer { return searxngtest.Answer{Results: results} })
	post := func(body string) (int, map[string]any) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, f.http.URL+"/v1/search", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+f.key)
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
	status, got := post(`{"query":"lighthouse"}`)
	data, _ := got["data"].([]any)
	if status != 200 || got["success"] != true || len(data) != 5 {
		t.Fatalf("default limit: %d %d results %v", status, len(data), got)
	}
	first, _ := data[0].(map[string]any)
	if first["url"] != site.URL+"/keeper" || first["title"] != "R0" {
		t.Errorf("first result %v", first)
	}
	status, got = post(`{"query":"lighthouse","limit":1,"scrapeOptions":{"formats":["markdown"],"parsePDF":false}}`)
	data, _ = got["data"].([]any)
	if status != 200 || len(data) != 1 {
		t.Fatalf("scraped: %d %v", status, got)
	}
	if md, _ := data[0].(map[string]any)["markdown"].(string); !strings.Contains(md, "Keeper") {
		t.Errorf("scraped result without its markdown: %v", data[0])
	}
	if status, got = post(`{"query":""}`); status != 400 || got["code"] != "BAD_REQUEST" {
		t.Errorf("empty query: %d %v", status, got)
	}
}
