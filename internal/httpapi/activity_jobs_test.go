package httpapi

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/firegate/firegate/internal/auth"
	"github.com/firegate/firegate/internal/llm"
	"github.com/firegate/firegate/internal/llm/llmtest"
	"github.com/firegate/firegate/internal/store/teststore"
	"github.com/firegate/firegate/internal/testenv"
)

// activityOf lists a team's activity of one endpoint through GET
// /v2/team/activity as endpoint, api_version, target and username.
func activityOf(t *testing.T, call func(method, path string) (int, map[string]any), endpoint string) [][4]string {
	t.Helper()
	code, got := call(http.MethodGet, "/v2/team/activity?endpoint="+endpoint)
	if code != 200 {
		t.Fatalf("activity of %s: %d %v", endpoint, code, got)
	}
	var out [][4]string
	data, _ := got["data"].([]any)
	for _, d := range data {
		e, _ := d.(map[string]any)
		user := ""
		if a, ok := e["auditMetadata"].(map[string]any); ok {
			user = fmt.Sprint(a["username"])
		}
		out = append(out, [4]string{fmt.Sprint(e["endpoint"]), fmt.Sprint(e["api_version"]), fmt.Sprint(e["target"]), user})
	}
	return out
}

// TestActivityExtractAndAgent: POST /v2/extract (v2 and v1) and POST
// /v2/agent are recorded in the team's activity with their targets and
// auditMetadata.username; a refused request is not.
func TestActivityExtractAndAgent(t *testing.T) {
	t.Parallel()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><main><h1>Menu</h1><p>Coffee</p></main></body></html>")
	}))
	t.Cleanup(site.Close)
	model := llmtest.NewReplying(t, func(w http.ResponseWriter, r llmtest.Request) {
		llmtest.Write(w, `{"title":"x"}`, &llmtest.Usage{PromptTokens: 10})
	})
	client, err := llm.New(llm.Options{BaseURL: model.BaseURL, Model: "scripted", Log: testenv.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	api := newJobAPIConfig(t, "sqlite", jobAPIConfig{model: client, activity: true})
	call := func(method, path string) (int, map[string]any) { return api.call(t, method, path, keyA, "") }
	const schema = `"schema":{"type":"object","properties":{"title":{"type":"string"}}}`
	for _, body := range []string{
		`{"urls":["` + site.URL + `/a","` + site.URL + `/b"],` + schema + `,"scrapeOptions":{"auditMetadata":{"username":"jane@corp.example"}}}`,
		`{"urls":["` + site.URL + `/c"],` + schema + `}`,
	} {
		if code, m := api.call(t, http.MethodPost, "/v2/extract", keyA, body); code != 200 {
			t.Fatalf("POST /v2/extract: %d %v", code, m)
		}
	}
	if code, m := api.call(t, http.MethodPost, "/v1/extract", keyA, `{"urls":["`+site.URL+`/d"],`+schema+`}`); code != 200 {
		t.Fatalf("POST /v1/extract: %d %v", code, m)
	}
	if code, m := api.call(t, http.MethodPost, "/v2/extract", keyA, `{"urls":["`+site.URL+`/e"]}`); code != 400 {
		t.Fatalf("POST /v2/extract without prompt or schema: %d %v", code, m)
	}
	got := activityOf(t, call, "extract")
	want := [][4]string{
		{"extract", "v1", site.URL + "/d", ""},
		{"extract", "v2", site.URL + "/c", ""},
		{"extract", "v2", site.URL + "/a (+1 more)", "jane@corp.example"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("extract activity = %v, want %v", got, want)
	}
	if other := activityOf(t, func(m, p string) (int, map[string]any) { return api.call(t, m, p, keyB, "") }, "extract"); len(other) != 0 {
		t.Errorf("another team's activity: %v", other)
	}

	a := newAgentAPI(t, "sqlite", agentModel(new(string)))
	for _, body := range []string{
		`{"prompt":"Find the name of the shop","auditMetadata":{"username":"ops-bot"}}`,
		`{"prompt":"Find the name","urls":["https://shop.example/"]}`,
	} {
		if code, m := a.call(t, http.MethodPost, "/v2/agent", keyA, body); code != 200 {
			t.Fatalf("POST /v2/agent: %d %v", code, m)
		}
	}
	got = activityOf(t, func(m, p string) (int, map[string]any) { return a.call(t, m, p, keyA, "") }, "agent")
	want = [][4]string{
		{"agent", "v2", "https://shop.example/", ""},
		{"agent", "v2", "Find the name of the shop", "ops-bot"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("agent activity = %v, want %v", got, want)
	}
}

// TestActivityInteract: sessions opened through POST /v2/interact and
// /v2/browser, and calls of a scrape's interact, are recorded (without a
// target: a session names no URL).
func TestActivityInteract(t *testing.T) {
	s := interactServer(t, 5)
	st := teststore.SQLite(t)
	team, err := st.CreateTeam(t.Context(), "activity")
	if err != nil {
		t.Fatal(err)
	}
	s.auth = teamAuth{"fc-a": auth.Team{ID: team.ID, Name: "activity"}}
	s.activity = st
	for _, path := range []string{"/v2/interact", "/v2/browser"} {
		if rec, body := do(t, s, http.MethodPost, path, "fc-a", `{"ttl":60}`); rec.Code != 200 {
			t.Fatalf("POST %s: %d %v", path, rec.Code, body)
		}
	}
	site := interactSite(t)
	rec, body := do(t, s, http.MethodPost, "/v2/scrape", "fc-a", `{"url":"`+site.URL+`/"}`)
	if rec.Code != 200 {
		t.Fatalf("scrape: %d %v", rec.Code, body)
	}
	id := body["data"].(map[string]any)["metadata"].(map[string]any)["scrapeId"].(string)
	if rec, body := do(t, s, http.MethodPost, "/v2/scrape/"+id+"/interact", "fc-a", `{"code":"console.log(await page.title())"}`); rec.Code != 200 {
		t.Fatalf("scrape interact: %d %v", rec.Code, body)
	}
	call := func(method, path string) (int, map[string]any) {
		rec, body := do(t, s, method, path, "fc-a", "")
		return rec.Code, body
	}
	if got := activityOf(t, call, "scrape"); len(got) != 1 {
		t.Errorf("scrape activity = %v", got)
	}
	if got := activityOf(t, call, "interact"); fmt.Sprint(got) != fmt.Sprint([][4]string{{"interact", "v2", "", ""}, {"interact", "v2", "", ""}}) {
		t.Errorf("interact activity = %v", got)
	}
	if got := activityOf(t, call, "browser"); fmt.Sprint(got) != fmt.Sprint([][4]string{{"browser", "v2", "", ""}}) {
		t.Errorf("browser activity = %v", got)
	}
}

func TestExtractTarget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		req  extractRequest
		want string
	}{
		{extractRequest{URLs: []string{"https://a.example/x"}}, "https://a.example/x"},
		{extractRequest{URLs: []string{"https://a.example/x"}, Globs: []string{"https://b.example/docs"}}, "https://a.example/x (+1 more)"},
		{extractRequest{Globs: []string{"https://b.example/docs/"}}, "https://b.example/docs/*"},
		{extractRequest{WebSearch: "best espresso"}, "best espresso"},
	} {
		if got := extractTarget(&tc.req); got != tc.want {
			t.Errorf("extractTarget(%+v) = %q, want %q", tc.req, got, tc.want)
		}
	}
}
