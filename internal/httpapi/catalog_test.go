package httpapi

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/firegate/firegate/internal/apikey"
	"github.com/firegate/firegate/internal/auth"
	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/catalog"
	"github.com/firegate/firegate/internal/netguard"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/search"
	"github.com/firegate/firegate/internal/search/searxngtest"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/teststore"
	"github.com/firegate/firegate/internal/testenv"
)

// catalogStore is what the catalog fixture needs of a store.
type catalogStore interface {
	store.Store
	store.IdempotencyStore
}

// toolServer is an operator's tools on loopback: it counts its calls and
// can hold one path until released.
type toolServer struct {
	*httptest.Server
	mu     sync.Mutex
	calls  map[string]int
	auths  []string
	gate   chan struct{} // /slow waits on it
	inSlow chan struct{} // /slow signals it started
}

func newToolServer(t testing.TB) *toolServer {
	ts := &toolServer{calls: map[string]int{}, gate: make(chan struct{}), inSlow: make(chan struct{}, 100)}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.mu.Lock()
		ts.calls[r.URL.Path]++
		ts.auths = append(ts.auths, r.Header.Get("Authorization"))
		ts.mu.Unlock()
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/daily":
			var in map[string]any
			_ = json.Unmarshal(body, &in)
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"city": in["city"], "forecast": "sunny", "method": r.Method})
		case "/query":
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"q": r.URL.Query().Get("q"), "n": r.URL.Query().Get("n"), "method": r.Method,
				"apikey": r.URL.Query()["apikey"]})
		case "/text":
			w.Write([]byte("plain answer"))
		case "/fail":
			http.Error(w, "broken", http.StatusInternalServerError)
		case "/big":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`"` + strings.Repeat("x", 2048) + `"`))
		case "/slow":
			ts.inSlow <- struct{}{}
			select {
			case <-ts.gate:
			case <-r.Context().Done():
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"slow":true}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

func (ts *toolServer) count(path string) int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.calls[path]
}

// catalogFixture is a server over a real store with a catalog file whose
// tools are a toolServer.
type catalogFixture struct {
	srv   *httptest.Server
	api   *Server
	st    catalogStore
	tools *toolServer
	scr   *fakeScraper
	path  string
}

const catalogYAML = `providers:
  - name: weather
    description: Forecasts by city
    categories: [weather]
    capabilities:
      - path: forecast/daily
        description: Daily forecast for a city
        method: POST
        url: {{BASE}}/daily
        headers: {Authorization: "Bearer ${WEATHER_TOKEN}"}
        inputSchema: {type: object, required: [city], properties: {city: {type: string, description: City name}, days: {type: integer, minimum: 1, maximum: 7}}}
        credits: 2
        timeoutMs: 10000
        domains: [weather.example.com]
      - path: forecast/slow
        description: A slow one
        url: {{BASE}}/slow
        credits: 1
        timeoutMs: 20000
      - path: search/query
        description: Query by GET
        method: GET
        url: {{BASE}}/query?apikey=op-secret
        credits: 1
        domains: ["*.example.org"]
      - path: misc/text
        url: {{BASE}}/text
      - path: misc/fail
        url: {{BASE}}/fail
        credits: 3
      - path: misc/big
        url: {{BASE}}/big
      - path: misc/timeout
        url: {{BASE}}/slow
        timeoutMs: 300
      - path: misc/blocked
        url: http://127.0.0.2:9/blocked
  - name: news
    description: Headlines
    capabilities:
      - path: headlines
        url: {{BASE}}/daily
`

func setupCatalog(t testing.TB, st catalogStore) *catalogFixture {
	t.Helper()
	tools := newToolServer(t)
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(catalogYAML, "{{BASE}}", tools.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	log := testenv.Logger(t)
	src, err := catalog.OpenSource(path, func(k string) (string, bool) {
		if k == "WEATHER_TOKEN" {
			return "s3cret", true
		}
		return "", false
	}, log)
	if err != nil {
		t.Fatal(err)
	}
	src.CheckEvery = 0
	policy, err := netguard.New(netguard.Options{Allow: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	md := "page"
	scr := &fakeScraper{doc: &scrape.Document{Markdown: &md, Metadata: scrape.Metadata{StatusCode: 200, CreditsUsed: 1}}}
	keys := catalog.NewKeys(st, log)
	api := New(Deps{Scraper: scr, Auth: auth.New(st, auth.Options{CacheTTL: time.Millisecond}), Ledger: billing.NewLedger(st, log),
		Catalog: &catalog.Options{Source: src, Policy: policy, MaxResponseBytes: 1024}, CatalogKeys: keys, Log: log})
	api.SetReady(true)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return &catalogFixture{srv: srv, api: api, st: st, tools: tools, scr: scr, path: path}
}

// team creates a team with a key and the given limits (credits < 0:
// unlimited).
func (f *catalogFixture) team(t testing.TB, l store.TeamLimits, credits int64) (store.Team, string) {
	t.Helper()
	ctx := context.Background()
	team, err := f.st.CreateTeam(ctx, "t-"+apikeyPrefix(t))
	if err != nil {
		t.Fatal(err)
	}
	key, _ := apikey.Generate()
	if _, err := f.st.CreateAPIKey(ctx, team.ID, apikey.Hash(key), apikey.Prefix(key)); err != nil {
		t.Fatal(err)
	}
	if err := f.st.SetTeamLimits(ctx, team.ID, l); err != nil {
		t.Fatal(err)
	}
	if credits >= 0 {
		if _, err := f.st.SetCredits(ctx, team.ID, credits); err != nil {
			t.Fatal(err)
		}
	}
	return team, key
}

var teamSeq atomic.Int64

func apikeyPrefix(testing.TB) string { return fmt.Sprint(teamSeq.Add(1), "-", time.Now().UnixNano()) }

// post sends a body to POST /v2/scrape over real HTTP.
func (f *catalogFixture) post(t testing.TB, key, requestID, body string) (int, http.Header, []byte, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+"/v2/scrape", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	if requestID != "" {
		req.Header["X-Request-Id"] = []string{requestID}
	}
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
	return resp.StatusCode, resp.Header, raw, m
}

var (
	enabled  = store.TeamLimits{Catalog: true, ThirdPartyTerms: true}
	noTerms  = store.TeamLimits{Catalog: true}
	disabled = store.TeamLimits{ThirdPartyTerms: true}
	zdrTeam  = store.TeamLimits{Catalog: true, ThirdPartyTerms: true, ZeroDataRetention: true}
)

const weatherCall = `{"provider":"weather","capability":"forecast/daily","options":{"city":"Oslo"}}`

func forStores(t *testing.T, fn func(t *testing.T, f *catalogFixture)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, setupCatalog(t, teststore.SQLite(t)))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		fn(t, setupCatalog(t, teststore.Postgres(t)))
	})
}

// TestCatalogRules drives every catalog mode rule of the seed over real
// HTTP, on both stores.
func TestCatalogRules(t *testing.T) {
	t.Parallel()
	forStores(t, func(t *testing.T, f *catalogFixture) {
		tests := []struct {
			name      string
			limits    store.TeamLimits
			credits   int64
			requestID string
			body      string
			status    int
			code      string
			msg       string // substring of error
			path      []any  // details[0].path
			tool      string // a tool path that must not have been called
		}{
			{name: "malformed request id before 403", limits: disabled, credits: -1, requestID: "bad id!", body: `{"catalog":` + weatherCall + `}`,
				status: 400, code: "BAD_REQUEST", msg: "x-request-id", path: []any{"x-request-id"}},
			{name: "request id too long", limits: enabled, credits: -1, requestID: strings.Repeat("a", 129), body: `{"catalog":` + weatherCall + `}`,
				status: 400, code: "BAD_REQUEST", msg: "x-request-id", tool: "/daily"},
			{name: "request id before body validation", limits: enabled, credits: -1, requestID: "é", body: `{"catalog":[]}`,
				status: 400, msg: "x-request-id"},
			{name: "not enabled", limits: disabled, credits: -1, body: `{"catalog":` + weatherCall + `}`, status: 403, code: "CATALOG_NOT_ENABLED"},
			{name: "zero data retention", limits: zdrTeam, credits: -1, body: `{"catalog":` + weatherCall + `}`, status: 403, code: "CATALOG_ZDR_NOT_SUPPORTED"},
			{name: "zero data retention forced", limits: store.TeamLimits{Catalog: true, ThirdPartyTerms: true, ZeroDataRetentionForced: true}, credits: -1,
				body: `{"catalog":` + weatherCall + `}`, status: 403, code: "CATALOG_ZDR_NOT_SUPPORTED"},
			{name: "with url", limits: enabled, credits: -1, body: `{"catalog":` + weatherCall + `,"url":"https://a.com"}`,
				status: 400, msg: msgCatalogCombined, path: []any{"url"}},
			{name: "with formats", limits: enabled, credits: -1, body: `{"alexandria":` + weatherCall + `,"formats":["markdown"]}`,
				status: 400, msg: msgCatalogCombined, path: []any{"formats"}},
			{name: "both members", limits: enabled, credits: -1, body: `{"alexandria":` + weatherCall + `,"catalog":` + weatherCall + `}`,
				status: 400, msg: msgCatalogBoth},
			{name: "unknown sibling", limits: enabled, credits: -1, body: `{"catalog":` + weatherCall + `,"foo":1}`,
				status: 400, code: "BAD_REQUEST", path: []any{"foo"}},
			{name: "unknown call key", limits: enabled, credits: -1, body: `{"catalog":{"provider":"weather","capability":"forecast/daily","opts":{}}}`,
				status: 400, path: []any{"catalog", "opts"}},
			{name: "eleven calls", limits: enabled, credits: -1, body: `{"catalog":[` + strings.TrimSuffix(strings.Repeat(weatherCall+",", 11), ",") + `]}`,
				status: 400, path: []any{"catalog"}},
			{name: "unknown provider", limits: enabled, credits: -1, body: `{"catalog":[` + weatherCall + `,{"provider":"nope","capability":"x"}]}`,
				status: 404, code: "unknown_provider", path: []any{"catalog", float64(1)}, tool: "/daily"},
			{name: "unknown capability", limits: enabled, credits: -1, body: `{"alexandria":{"provider":"weather","capability":"forecast/hourly"}}`,
				status: 404, code: "unknown_provider", path: []any{"alexandria"}},
			{name: "terms not accepted", limits: noTerms, credits: -1, body: `{"catalog":` + weatherCall + `}`,
				status: 403, code: "THIRD_PARTY_DATA_TERMS_REQUIRED", tool: "/daily"},
			{name: "options miss a required field", limits: enabled, credits: -1, body: `{"catalog":[{"provider":"weather","capability":"forecast/daily","options":{}}]}`,
				status: 400, code: "BAD_REQUEST", msg: "city", path: []any{"catalog", float64(0), "options"}},
			{name: "options field of the wrong type", limits: enabled, credits: -1, body: `{"catalog":{"provider":"weather","capability":"forecast/daily","options":{"city":"Oslo","days":9}}}`,
				status: 400, code: "BAD_REQUEST", msg: "options.days", path: []any{"catalog", "options", "days"}, tool: "/daily"},
			{name: "insufficient credits", limits: enabled, credits: 3, body: `{"catalog":[` + weatherCall + `,` + weatherCall + `]}`,
				status: 402, code: "insufficient_credits", tool: "/daily"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				_, key := f.team(t, tc.limits, tc.credits)
				before := 0
				if tc.tool != "" {
					before = f.tools.count(tc.tool)
				}
				status, hdr, _, got := f.post(t, key, tc.requestID, tc.body)
				if status != tc.status || got["success"] != false {
					t.Fatalf("status %d %v, want %d", status, got, tc.status)
				}
				if tc.code != "" && got["code"] != tc.code {
					t.Errorf("code %v, want %s (%v)", got["code"], tc.code, got)
				}
				if msg, _ := got["error"].(string); !strings.Contains(msg, tc.msg) {
					t.Errorf("error %q, want it to contain %q", msg, tc.msg)
				}
				if tc.path != nil {
					d, _ := got["details"].([]any)
					if len(d) == 0 {
						t.Fatalf("no details: %v", got)
					}
					if p := d[0].(map[string]any)["path"]; fmt.Sprint(p) != fmt.Sprint(tc.path) {
						t.Errorf("details[0].path %v, want %v", p, tc.path)
					}
				}
				if tc.code == "THIRD_PARTY_DATA_TERMS_REQUIRED" && got["requiresAction"] != true {
					t.Errorf("requiresAction missing: %v", got)
				}
				if tc.tool != "" && f.tools.count(tc.tool) != before {
					t.Errorf("the tool ran on a %d", status)
				}
				if tc.requestID != "" && hdr.Get("X-Request-Id") == tc.requestID {
					t.Errorf("a malformed x-request-id was echoed")
				}
			})
		}
	})
}

// TestCatalogCalls runs calls and checks the response shape, credits,
// headers, GET tools, errors per call and the key protocol.
func TestCatalogCalls(t *testing.T) {
	t.Parallel()
	forStores(t, func(t *testing.T, f *catalogFixture) {
		team, key := f.team(t, enabled, 100)
		body := `{"alexandria":[` + weatherCall + `,{"provider":"weather","capability":"search/query","options":{"q":"rain","n":3}},` +
			`{"provider":"weather","capability":"misc/fail"},{"provider":"weather","capability":"misc/text"},` +
			`{"provider":"weather","capability":"misc/big"},{"provider":"weather","capability":"misc/timeout"},` +
			`{"provider":"weather","capability":"misc/blocked"}],"timeout":5000,"origin":"test"}`
		status, hdr, raw, got := f.post(t, key, "req-1.a:b_c", body)
		if status != 200 || got["success"] != true {
			t.Fatalf("status %d %s", status, raw)
		}
		if hdr.Get("X-Request-Id") != "req-1.a:b_c" {
			t.Errorf("X-Request-Id %q not echoed", hdr.Get("X-Request-Id"))
		}
		scrapeID, _ := got["scrape_id"].(string)
		if len(scrapeID) != 36 {
			t.Errorf("scrape_id %q", scrapeID)
		}
		data := got["data"].(map[string]any)
		results := data["alexandria"].([]any)
		if len(results) != 7 || data["creditsCost"] != float64(3) {
			t.Fatalf("data %s", raw)
		}
		r0 := results[0].(map[string]any)
		if r0["provider"] != "weather" || r0["capability"] != "forecast/daily" || r0["creditsCost"] != float64(2) ||
			fmt.Sprint(r0["data"]) != "map[city:Oslo forecast:sunny method:POST]" || r0["upstreamStatus"] != float64(200) {
			t.Errorf("result 0: %v", r0)
		}
		r1 := results[1].(map[string]any)
		if fmt.Sprint(r1["data"]) != "map[apikey:[op-secret] method:GET n:3 q:rain]" || r1["creditsCost"] != float64(1) {
			t.Errorf("GET result: %v", r1)
		}
		wantErr := map[int]string{2: "upstream_error", 4: "response_too_large", 5: "timeout", 6: "tool_not_allowed"}
		for i, code := range wantErr {
			r := results[i].(map[string]any)
			e, _ := r["error"].(map[string]any)
			if e == nil || e["code"] != code || e["message"] == "" || r["data"] != nil {
				t.Errorf("result %d: %v, want error %s", i, r, code)
			}
		}
		if e := results[2].(map[string]any)["error"].(map[string]any); e["status"] != float64(500) {
			t.Errorf("upstream status: %v", e)
		}
		if results[3].(map[string]any)["data"] != "plain answer" {
			t.Errorf("text result: %v", results[3])
		}
		f.tools.mu.Lock()
		auths := strings.Join(f.tools.auths, ",")
		f.tools.mu.Unlock()
		if !strings.Contains(auths, "Bearer s3cret") {
			t.Errorf("the ${WEATHER_TOKEN} header was not sent: %q", auths)
		}
		if bal, _ := f.st.CreditBalance(context.Background(), team.ID); bal.Remaining != 97 {
			t.Errorf("balance %d, want 97 (failed calls are free)", bal.Remaining)
		}

		// Replay: the same key and body answers the same bytes, runs nothing.
		n := f.tools.count("/daily")
		status, _, raw2, _ := f.post(t, key, "req-1.a:b_c", body)
		if status != 200 || !bytes.Equal(raw, raw2) || f.tools.count("/daily") != n {
			t.Errorf("replay: %d, same body %v, tool calls %d -> %d", status, bytes.Equal(raw, raw2), n, f.tools.count("/daily"))
		}
		if bal, _ := f.st.CreditBalance(context.Background(), team.ID); bal.Remaining != 97 {
			t.Errorf("a replay charged: balance %d", bal.Remaining)
		}
		// The same key with other parameters.
		chargeID, _ := got["chargeId"].(string)
		if len(chargeID) != 36 {
			t.Errorf("chargeId %q of a charged request", chargeID)
		}
		status, _, _, got = f.post(t, key, "req-1.a:b_c", `{"catalog":`+weatherCall+`}`)
		if status != 409 || got["code"] != "duplicate_request" || got["chargeId"] != chargeID {
			t.Errorf("different parameters: %d %v, want chargeId %s", status, got, chargeID)
		}
		// Another team may use the same key.
		_, key2 := f.team(t, enabled, -1)
		if status, _, _, got = f.post(t, key2, "req-1.a:b_c", `{"catalog":`+weatherCall+`}`); status != 200 {
			t.Errorf("another team's key: %d %v", status, got)
		}
		// Without a key: runs every time.
		n = f.tools.count("/daily")
		for range 2 {
			if status, _, _, got = f.post(t, key, "", `{"catalog":`+weatherCall+`}`); status != 200 {
				t.Fatalf("no key: %d %v", status, got)
			}
		}
		if f.tools.count("/daily") != n+2 {
			t.Errorf("calls without a key ran %d times, want 2", f.tools.count("/daily")-n)
		}
		// A released key (the request failed before running) is free again.
		_, poor := f.team(t, enabled, 0)
		if status, _, _, _ = f.post(t, poor, "k2", `{"catalog":`+weatherCall+`}`); status != 402 {
			t.Fatalf("poor team: %d", status)
		}
		if _, err := f.st.SetCredits(context.Background(), teamOf(t, f, poor), 10); err != nil {
			t.Fatal(err)
		}
		if status, _, _, got = f.post(t, poor, "k2", `{"catalog":`+weatherCall+`}`); status != 200 {
			t.Errorf("the key of a request refused with 402, after credits were added: %d %v", status, got)
		}
	})
}

// TestCatalogGetToolKeepsOperatorParams: a GET tool's URL carries the
// operator's query parameters (an API key among them); an option of the
// same name, in any case, is a 400 naming it, and the tool never sees the
// caller's value (it replaced the operator's before).
func TestCatalogGetToolKeepsOperatorParams(t *testing.T) {
	t.Parallel()
	f := setupCatalog(t, teststore.SQLite(t))
	_, key := f.team(t, enabled, 100)
	for _, name := range []string{"apikey", "APIKey"} {
		body := `{"catalog":{"provider":"weather","capability":"search/query","options":{"q":"x","` + name + `":"mine"}}}`
		status, _, raw, got := f.post(t, key, "", body)
		if status != 400 || got["code"] != "BAD_REQUEST" || !strings.Contains(fmt.Sprint(got["error"]), "options."+name) {
			t.Errorf("option %s colliding with the operator's parameter: %d %s", name, status, raw)
		}
	}
	if n := f.tools.count("/query"); n != 0 {
		t.Errorf("the tool was called %d times with a colliding option", n)
	}
	status, _, raw, got := f.post(t, key, "", `{"catalog":{"provider":"weather","capability":"search/query","options":{"q":"x"}}}`)
	results, _ := got["data"].(map[string]any)["alexandria"].([]any)
	if status != 200 || len(results) != 1 || fmt.Sprint(results[0].(map[string]any)["data"]) != "map[apikey:[op-secret] method:GET n: q:x]" {
		t.Errorf("plain GET call: %d %s", status, raw)
	}
}

func teamOf(t *testing.T, f *catalogFixture, key string) string {
	t.Helper()
	_, team, err := f.st.APIKeyByHash(context.Background(), apikey.Hash(key))
	if err != nil {
		t.Fatal(err)
	}
	return team.ID
}

// TestCatalogInFlightAndExactlyOnce sends 50 concurrent requests with one
// key to a tool that counts its calls: it runs once; every other answer is
// the first's response or 409 request_in_flight.
func TestCatalogInFlightAndExactlyOnce(t *testing.T) {
	t.Parallel()
	forStores(t, func(t *testing.T, f *catalogFixture) {
		_, key := f.team(t, enabled, -1)
		body := `{"catalog":{"provider":"weather","capability":"forecast/slow"},"timeout":30000}`
		const n = 50
		type answer struct {
			status int
			raw    []byte
			code   any
		}
		answers := make(chan answer, n)
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				status, _, raw, got := f.post(t, key, "once", body)
				answers <- answer{status, raw, got["code"]}
			}()
		}
		// One reaches the tool; the rest answer while it is held.
		select {
		case <-f.tools.inSlow:
		case <-time.After(20 * time.Second):
			t.Fatal("no request reached the tool")
		}
		inFlight := 0
		for inFlight < n-1 {
			select {
			case a := <-answers:
				if a.status != 409 || a.code != "request_in_flight" {
					t.Fatalf("while in flight: %d %s", a.status, a.raw)
				}
				inFlight++
			case <-time.After(20 * time.Second):
				t.Fatalf("only %d of %d duplicates answered while the call was held", inFlight, n-1)
			}
		}
		close(f.tools.gate)
		wg.Wait()
		close(answers)
		first := <-answers
		if first.status != 200 {
			t.Fatalf("the running request: %d %s", first.status, first.raw)
		}
		if c := f.tools.count("/slow"); c != 1 {
			t.Errorf("the tool ran %d times, want 1", c)
		}
		// Later repeats replay the same response.
		for range 3 {
			status, _, raw, _ := f.post(t, key, "once", body)
			if status != 200 || !bytes.Equal(raw, first.raw) {
				t.Errorf("replay: %d %s", status, raw)
			}
		}
		if c := f.tools.count("/slow"); c != 1 {
			t.Errorf("after replays the tool ran %d times, want 1", c)
		}
	})
}

// TestCatalogUnresolvedKey: a key held by a dead owner answers 503
// request_unresolved until its run deadline passes, then runs once. The
// owner's lease lapsed before the requests and its run deadline is an hour
// off until the test moves it into the past, so no answer depends on how
// fast the requests arrive.
func TestCatalogUnresolvedKey(t *testing.T) {
	t.Parallel()
	forStores(t, func(t *testing.T, f *catalogFixture) {
		team, key := f.team(t, enabled, -1)
		body := `{"catalog":` + weatherCall + `,"timeout":1000}`
		fields, apiErr := readJSONObject(strings.NewReader(body))
		if apiErr != nil {
			t.Fatal(apiErr)
		}
		req, err := decodeCatalogRequest(fields)
		if err != nil {
			t.Fatal(err)
		}
		// A process that claimed the key and died: its lease lapsed a
		// minute ago, its run deadline is an hour away.
		if _, ok, err := f.st.ClaimRequest(context.Background(), store.IdempotencyClaim{TeamID: team.ID, Key: "dead", Owner: "dead-process",
			RequestHash: req.hash(), ScrapeID: "00000000-0000-0000-0000-0000000000aa", Lease: -time.Minute, Run: time.Hour, Keep: 2 * time.Hour}); err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
		n := f.tools.count("/daily")
		status, hdr, _, got := f.post(t, key, "dead", body)
		if status != 503 || got["code"] != "request_unresolved" || hdr.Get("Retry-After") == "" {
			t.Fatalf("unresolved key: %d %v", status, got)
		}
		if status, _, _, got = f.post(t, key, "dead", `{"catalog":{"provider":"news","capability":"headlines"}}`); status != 503 {
			t.Errorf("unresolved key with other parameters: %d %v", status, got)
		}
		if c := f.tools.count("/daily") - n; c != 0 {
			t.Errorf("the unresolved key ran the tool %d times", c)
		}
		// The run deadline passes: the next request reclaims the key.
		passRunDeadline(t, f.st, "dead")
		status, _, raw, got := f.post(t, key, "dead", body)
		if status != 200 || got["scrape_id"] != "00000000-0000-0000-0000-0000000000aa" {
			t.Errorf("after the run deadline: %d %s; want 200 with the original scrape_id", status, raw)
		}
		if c := f.tools.count("/daily") - n; c != 1 {
			t.Errorf("the reclaimed key ran the tool %d times, want 1", c)
		}
	})
}

// passRunDeadline moves the run deadline of the one idempotency key named
// key (each test store holds its own) a minute into the past.
func passRunDeadline(t *testing.T, st any, key string) {
	t.Helper()
	var n int64
	switch db := st.(type) {
	case interface{ Pool() *pgxpool.Pool }:
		tag, err := db.Pool().Exec(t.Context(), `UPDATE idempotency_keys SET run_until = now() - interval '1 minute' WHERE key = $1`, key)
		if err != nil {
			t.Fatal(err)
		}
		n = tag.RowsAffected()
	case interface{ WriteDB() *sql.DB }:
		res, err := db.WriteDB().ExecContext(t.Context(), `UPDATE idempotency_keys SET run_until = ? WHERE key = ?`,
			time.Now().Add(-time.Minute).UTC().Format("2006-01-02T15:04:05.000000Z07:00"), key)
		if err != nil {
			t.Fatal(err)
		}
		n, _ = res.RowsAffected()
	default:
		t.Fatalf("%T is neither a Postgres nor a SQLite store", st)
	}
	if n != 1 {
		t.Fatalf("pass the run deadline of key %s: %d keys", key, n)
	}
}

// TestCatalogFindToolsAndDomainTools covers the built-in provider and
// domainTools on a normal scrape.
func TestCatalogFindToolsAndDomainTools(t *testing.T) {
	t.Parallel()
	f := setupCatalog(t, teststore.SQLite(t))
	_, key := f.team(t, noTerms, 0) // built-in tools need neither terms nor credits
	find := func(opts string) map[string]any {
		t.Helper()
		status, _, raw, got := f.post(t, key, "", `{"catalog":{"provider":"firecrawl","capability":"find-tools","options":`+opts+`}}`)
		if status != 200 {
			t.Fatalf("find-tools %s: %d %s", opts, status, raw)
		}
		r := got["data"].(map[string]any)["alexandria"].([]any)[0].(map[string]any)
		if r["error"] != nil {
			t.Fatalf("find-tools %s: %v", opts, r["error"])
		}
		return r["data"].(map[string]any)
	}
	d := find(`{}`)
	if d["level"] != "providers" || d["total"] != float64(3) || d["next"] != nil {
		t.Errorf("providers: %v", d)
	}
	d = find(`{"level":"groups","providers":["weather"]}`)
	if d["total"] != float64(3) { // forecast, search, misc
		t.Errorf("groups: %v", d)
	}
	d = find(`{"providers":["weather"],"limit":2}`)
	items := d["items"].([]any)
	if d["level"] != "tools" || d["total"] != float64(8) || len(items) != 2 || d["next"] == nil {
		t.Fatalf("tools page 1: %v", d)
	}
	it := items[0].(map[string]any)
	if it["id"] != "weather/forecast/daily" || it["creditsCost"] != float64(2) || fmt.Sprint(it["options"]) !=
		"[map[description:City name name:city required:true type:string] map[name:days required:false type:integer]]" {
		t.Errorf("tool item: %v", it)
	}
	next := d["next"].(map[string]any)
	raw, _ := json.Marshal(next["options"])
	d = find(string(raw))
	if d["total"] != float64(8) || len(d["items"].([]any)) != 2 || d["items"].([]any)[0].(map[string]any)["id"] != "weather/search/query" {
		t.Errorf("tools page 2 (%s): %v", raw, d)
	}
	d = find(`{"urls":["https://api.example.org/x"]}`)
	if d["total"] != float64(1) || d["items"].([]any)[0].(map[string]any)["matchedUrls"] == nil {
		t.Errorf("by url: %v", d)
	}
	// query (firecrawl_find_tools sends it): the tools whose names,
	// descriptions, provider or categories hold its words, best first.
	d = find(`{"query":"daily forecast for Oslo"}`)
	items = d["items"].([]any)
	if d["level"] != "tools" || len(items) < 2 || items[0].(map[string]any)["id"] != "weather/forecast/daily" ||
		fmt.Sprint(items[0].(map[string]any)["matchedBy"]) != "[query]" {
		t.Errorf("by query: %v", d)
	}
	if d = find(`{"query":"headlines"}`); d["total"] != float64(1) || d["items"].([]any)[0].(map[string]any)["id"] != "news/headlines" {
		t.Errorf("by query, one match: %v", d)
	}
	if d = find(`{"query":"zzqx"}`); d["total"] != float64(0) {
		t.Errorf("by query, no match: %v", d)
	}
	if d = find(`{"level":"categories"}`); fmt.Sprint(d["items"]) != "[map[id:weather name:weather next:map[capability:find-tools options:map[categories:[weather] level:providers] provider:firecrawl] providers:1]]" {
		t.Errorf("categories: %v", d)
	}
	// firecrawl_find_tools without arguments reads the categories at
	// GET /exchange/discover.
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/exchange/discover", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var disc map[string]any
	json.NewDecoder(resp.Body).Decode(&disc)
	resp.Body.Close()
	if resp.StatusCode != 200 || fmt.Sprint(disc["cohorts"]) != "[map[about:Providers: weather cohort:weather providers:1]]" {
		t.Errorf("exchange/discover: %d %v", resp.StatusCode, disc)
	}
	status, _, _, got := f.post(t, key, "", `{"catalog":{"provider":"firecrawl","capability":"find-tools","options":{"query":""}}}`)
	if status != 400 {
		t.Errorf("empty query: %d %v", status, got)
	}
	status, _, _, got = f.post(t, key, "", `{"catalog":{"provider":"firecrawl","capability":"find-tools","options":{"level":"all"}}}`)
	if status != 400 || fmt.Sprint(got["details"].([]any)[0].(map[string]any)["path"]) != "[catalog options level]" {
		t.Errorf("bad level: %d %v", status, got)
	}

	// domainTools.
	_, dt := f.team(t, noTerms, -1)
	status, _, raw2, got := f.post(t, dt, "", `{"url":"https://weather.example.com/oslo","domainTools":true}`)
	tools, _ := got["data"].(map[string]any)["tools"].([]any)
	if status != 200 || len(tools) != 1 || tools[0].(map[string]any)["capability"] != "forecast/daily" {
		t.Fatalf("domainTools: %d %s", status, raw2)
	}
	if f.scr.got[len(f.scr.got)-1].DomainTools {
		t.Errorf("domainTools reached the engine")
	}
	if status, _, _, got = f.post(t, dt, "", `{"url":"https://other.example.net/","domainTools":true}`); status != 200 ||
		len(got["data"].(map[string]any)["tools"].([]any)) != 0 {
		t.Errorf("domainTools without a match: %d %v", status, got)
	}
	_, off := f.team(t, disabled, -1)
	if status, _, _, got = f.post(t, off, "", `{"url":"https://weather.example.com/","domainTools":true}`); status != 403 || got["code"] != "CATALOG_NOT_ENABLED" {
		t.Errorf("domainTools without access: %d %v", status, got)
	}
	_, zdr := f.team(t, zdrTeam, -1)
	if status, _, _, got = f.post(t, zdr, "", `{"url":"https://weather.example.com/","domainTools":true,"zeroDataRetention":true}`); status != 403 {
		t.Errorf("domainTools with zero data retention: %d %v", status, got)
	}

	// The built-in scrape runs the engine, after the credit pre-check.
	body := `{"catalog":{"provider":"firecrawl","capability":"scrape","options":{"url":"https://a.example.com","formats":["markdown"]}}}`
	if status, _, _, got = f.post(t, key, "", body); status != 402 || got["code"] != "insufficient_credits" {
		t.Errorf("built-in scrape without credits: %d %v", status, got)
	}
	_, rich := f.team(t, noTerms, 10)
	status, _, raw2, got = f.post(t, rich, "", body)
	r := got["data"].(map[string]any)["alexandria"].([]any)[0].(map[string]any)
	if status != 200 || r["error"] != nil || r["creditsCost"] != float64(1) || r["data"].(map[string]any)["markdown"] != "page" {
		t.Fatalf("built-in scrape: %d %s", status, raw2)
	}
	if got := f.scr.got[len(f.scr.got)-1]; got.URL != "https://a.example.com" {
		t.Errorf("the engine scraped %q", got.URL)
	}
	status, _, _, got = f.post(t, rich, "", `{"catalog":{"provider":"firecrawl","capability":"scrape","options":{"url":"nope"}}}`)
	r = got["data"].(map[string]any)["alexandria"].([]any)[0].(map[string]any)
	if e, _ := r["error"].(map[string]any); status != 200 || e == nil || e["status"] != float64(400) {
		t.Errorf("built-in scrape with a bad url: %d %v", status, r)
	}
}

// TestCatalogBuiltinSearch runs firecrawl/search against a scripted
// SearXNG; it is listed by find-tools only when search is configured.
func TestCatalogBuiltinSearch(t *testing.T) {
	t.Parallel()
	st := teststore.SQLite(t)
	log := testenv.Logger(t)
	eng := searxngtest.New(t, func(q url.Values) searxngtest.Answer {
		return searxngtest.Answer{Results: []searxngtest.Result{
			{URL: "https://a.example.com/1", Title: "One " + q.Get("q"), Content: "first", Score: 2},
			{URL: "https://b.example.com/2", Title: "Two", Content: "second", Score: 1},
		}}
	})
	backend, err := search.NewSearXNG(search.SearXNGOptions{Endpoint: eng.URL, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	policy, _ := netguard.New(netguard.Options{})
	api := New(Deps{Scraper: &fakeScraper{}, Auth: auth.New(st, auth.Options{CacheTTL: time.Millisecond}), Ledger: billing.NewLedger(st, log),
		Searcher: search.New(backend, search.Options{}, log), Catalog: &catalog.Options{Policy: policy}, CatalogKeys: catalog.NewKeys(st, log), Log: log})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	f := &catalogFixture{srv: srv, api: api, st: st}
	team, key := f.team(t, noTerms, 100)

	status, _, raw, got := f.post(t, key, "s-1", `{"catalog":{"provider":"firecrawl","capability":"search","options":{"query":"lamps","limit":2}}}`)
	if status != 200 {
		t.Fatalf("search: %d %s", status, raw)
	}
	r := got["data"].(map[string]any)["alexandria"].([]any)[0].(map[string]any)
	web, _ := r["data"].(map[string]any)["web"].([]any)
	if r["error"] != nil || len(web) != 2 || web[0].(map[string]any)["title"] != "One lamps" || r["creditsCost"] != float64(2) {
		t.Fatalf("search result: %s", raw)
	}
	if bal, _ := f.st.CreditBalance(context.Background(), team.ID); bal.Remaining != 98 {
		t.Errorf("balance %d, want 98", bal.Remaining)
	}
	status, _, _, got = f.post(t, key, "", `{"catalog":{"provider":"firecrawl","capability":"search","options":{"query":"x","scrapeOptions":{"formats":["markdown"]}}}}`)
	r = got["data"].(map[string]any)["alexandria"].([]any)[0].(map[string]any)
	if e, _ := r["error"].(map[string]any); status != 200 || e == nil || e["status"] != float64(400) {
		t.Errorf("search with scraping: %d %v", status, r)
	}
	status, _, _, got = f.post(t, key, "", `{"catalog":{"provider":"firecrawl","capability":"search","options":{}}}`)
	r = got["data"].(map[string]any)["alexandria"].([]any)[0].(map[string]any)
	if e, _ := r["error"].(map[string]any); status != 200 || e == nil || !strings.Contains(fmt.Sprint(e["message"]), "query") {
		t.Errorf("search without a query: %d %v", status, r)
	}
	// Without a catalog file only the built-in provider is listed, and
	// without a searcher it has no search capability.
	status, _, raw, got = f.post(t, key, "", `{"catalog":{"provider":"firecrawl","capability":"find-tools","options":{"level":"tools"}}}`)
	d := got["data"].(map[string]any)["alexandria"].([]any)[0].(map[string]any)["data"].(map[string]any)
	if status != 200 || d["total"] != float64(3) {
		t.Errorf("find-tools with search configured: %d %s", status, raw)
	}
	plain := setupCatalog(t, teststore.SQLite(t))
	_, pk := plain.team(t, noTerms, -1)
	if status, _, _, got = plain.post(t, pk, "", `{"catalog":{"provider":"firecrawl","capability":"search","options":{"query":"x"}}}`); status != 404 || got["code"] != "unknown_provider" {
		t.Errorf("search without a searcher: %d %v", status, got)
	}
}

// BenchmarkCatalogCall measures one catalog call to a loopback tool over
// real HTTP, without a key, with a new key each time (claim, renew,
// complete) and replaying one completed key, on both stores.
func BenchmarkCatalogCall(b *testing.B) {
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			var st catalogStore
			if name == "sqlite" {
				st = teststore.SQLite(b)
			} else {
				st = teststore.Postgres(b)
			}
			f := setupCatalog(b, st)
			_, key := f.team(b, enabled, -1)
			body := `{"catalog":` + weatherCall + `}`
			call := func(b *testing.B, requestID string) {
				if status, _, raw, _ := f.post(b, key, requestID, body); status != 200 {
					b.Fatalf("status %d %s", status, raw)
				}
			}
			b.Run("no key", func(b *testing.B) {
				for b.Loop() {
					call(b, "")
				}
			})
			b.Run("new key", func(b *testing.B) {
				i := 0
				for b.Loop() {
					i++
					call(b, fmt.Sprintf("bench-%d", i))
				}
			})
			b.Run("replay", func(b *testing.B) {
				call(b, "bench-replay")
				for b.Loop() {
					call(b, "bench-replay")
				}
			})
		})
	}
}
