package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/firegate/firegate/internal/apikey"
	"github.com/firegate/firegate/internal/auth"
	"github.com/firegate/firegate/internal/crawl/testsite"
	"github.com/firegate/firegate/internal/llm"
	"github.com/firegate/firegate/internal/llm/llmtest"
	"github.com/firegate/firegate/internal/store"
)

const (
	keyForced     = "fc-team-zdr-forced"
	msgZDRExtract = "Your team has zero data retention enabled. This is not supported on extract."
)

var forcedLimits = store.TeamLimits{ZeroDataRetention: true, ZeroDataRetentionForced: true}

// addForcedTeam adds a team with zero data retention forced on to a test
// server's teams, before its first request.
func addForcedTeam(t *testing.T, st store.Store, teams teamAuth) {
	t.Helper()
	team, err := st.CreateTeam(t.Context(), "forced")
	if err != nil {
		t.Fatal(err)
	}
	teams[keyForced] = auth.Team{ID: team.ID, Name: team.Name, Limits: forcedLimits}
}

// TestZDRForcedScrape: a forced team's scrape that does not ask for zero
// data retention runs with it: the page is not cached (the second scrape
// is a miss again, where another team's is a hit), the result is not kept
// for GET /v2/scrape/{id}, and the URL is in no log line.
func TestZDRForcedScrape(t *testing.T) {
	t.Parallel()
	l := setupLive(t, false)
	if err := l.st.SetTeamLimits(t.Context(), l.team.ID, forcedLimits); err != nil {
		t.Fatal(err)
	}
	other, err := l.st.CreateTeam(t.Context(), "other")
	if err != nil {
		t.Fatal(err)
	}
	otherKey, _ := apikey.Generate()
	if _, err := l.st.CreateAPIKey(t.Context(), other.ID, apikey.Hash(otherKey), apikey.Prefix(otherKey)); err != nil {
		t.Fatal(err)
	}
	scrape := func(key, target string) map[string]any {
		t.Helper()
		code, m := l.call(t, http.MethodPost, "/v2/scrape", key, `{"url":"`+target+`"}`)
		if code != 200 {
			t.Fatalf("scrape %s: %d %v", target, code, m)
		}
		return m["data"].(map[string]any)["metadata"].(map[string]any)
	}
	forced := l.page.URL + "/forced-path"
	first := scrape(l.key, forced)
	if second := scrape(l.key, forced); first["cacheState"] != "miss" || second["cacheState"] != "miss" {
		t.Errorf("forced team's scrapes: cacheState %v then %v; want miss twice (nothing cached)", first["cacheState"], second["cacheState"])
	}
	if code, m := l.call(t, http.MethodGet, "/v2/scrape/"+first["scrapeId"].(string), l.key, ""); code != 404 {
		t.Errorf("forced team's result kept: %d %v", code, m)
	}
	kept := l.page.URL + "/kept-path"
	scrape(otherKey, kept)
	if m := scrape(otherKey, kept); m["cacheState"] != "hit" {
		t.Errorf("other team's second scrape: cacheState %v; want hit", m["cacheState"])
	}
	if logs := l.logs.String(); strings.Contains(logs, "forced-path") || !strings.Contains(logs, "kept-path") {
		t.Errorf("logs should hold the other team's URL and not the forced team's:\n%s", logs)
	}
}

// TestZDRForcedJobs: a forced team's crawl and batch scrape are recorded
// with zero data retention though the body does not ask for it; another
// team's are not. Its extract answers the seed's 400, as does an extract
// asking for zero data retention.
func TestZDRForcedJobs(t *testing.T) {
	model := llmtest.NewReplying(t, func(w http.ResponseWriter, r llmtest.Request) { llmtest.Write(w, `{}`, nil) })
	client, err := llm.New(llm.Options{BaseURL: model.BaseURL, Model: "scripted", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	api := newJobAPIConfig(t, "sqlite", jobAPIConfig{model: client})
	addForcedTeam(t, api.st, api.teams)
	_, target := serveSite(t, testsite.Options{Pages: 5})
	for _, tc := range []struct{ path, body string }{
		{"/v2/crawl", `{"url":"` + target + `/","limit":1}`},
		{"/v2/batch/scrape", `{"urls":["` + target + `/about"]}`},
	} {
		for key, want := range map[string]bool{keyForced: true, keyA: false} {
			code, m := api.call(t, http.MethodPost, tc.path, key, tc.body)
			if code != 200 {
				t.Fatalf("POST %s (%s): %d %v", tc.path, key, code, m)
			}
			job, err := api.st.Job(t.Context(), m["id"].(string))
			if err != nil {
				t.Fatal(err)
			}
			if job.ZeroDataRetention != want {
				t.Errorf("POST %s (%s): job zeroDataRetention %v, want %v", tc.path, key, job.ZeroDataRetention, want)
			}
		}
	}
	for _, tc := range []struct{ key, body string }{
		{keyForced, `{"urls":["` + target + `/about"],"prompt":"p"}`},
		{keyA, `{"urls":["` + target + `/about"],"prompt":"p","scrapeOptions":{"zeroDataRetention":true}}`},
	} {
		code, m := api.call(t, http.MethodPost, "/v2/extract", tc.key, tc.body)
		if code != 400 || m["success"] != false || m["error"] != msgZDRExtract || m["code"] != "ZDR_NOT_SUPPORTED" {
			t.Errorf("extract %s %s: %d %v; want 400 %q", tc.key, tc.body, code, m, msgZDRExtract)
		}
	}
	if code, m := api.call(t, http.MethodPost, "/v2/extract", keyA, `{"urls":["`+target+`/about"],"prompt":"p"}`); code != 200 {
		t.Errorf("another team's extract: %d %v", code, m)
	}
}

// TestZDRForcedAgent: POST /v2/agent answers a forced team the seed's 400
// and starts no run; another team's run starts.
func TestZDRForcedAgent(t *testing.T) {
	a := newAgentAPI(t, "sqlite", agentModel(new(string)))
	addForcedTeam(t, a.runs, a.teams)
	code, m := a.call(t, http.MethodPost, "/v2/agent", keyForced, `{"prompt":"find the name"}`)
	if code != 400 || m["success"] != false || m["error"] != msgZDRExtract || m["code"] != "ZDR_NOT_SUPPORTED" {
		t.Errorf("forced team's agent: %d %v; want 400 %q", code, m, msgZDRExtract)
	}
	if code, m := a.call(t, http.MethodGet, "/v2/agent", keyForced, ""); code != 200 || len(m["agents"].([]any)) != 0 {
		t.Errorf("forced team's runs: %d %v; want none", code, m)
	}
	if code, m := a.call(t, http.MethodPost, "/v2/agent", keyA, `{"prompt":"find the name"}`); code != 200 {
		t.Errorf("another team's agent: %d %v", code, m)
	}
}

// TestZDRForcedMonitor: a team with zero data retention forced on cannot
// create or run a monitor (a monitor keeps the pages it compares); another
// team can.
func TestZDRForcedMonitor(t *testing.T) {
	t.Parallel()
	a := newMonitorAPI(t)
	addForcedTeam(t, a.st, a.teams)
	code, m := a.call(t, http.MethodPost, "/v2/monitor", keyForced, monitorBodyOK)
	if code != 400 || m["code"] != "ZDR_NOT_SUPPORTED" || m["error"] != "Your team has zero data retention enabled. This is not supported on monitor." {
		t.Errorf("forced team's create: %d %v", code, m)
	}
	code, m = a.call(t, http.MethodPost, "/v2/monitor", keyA, monitorBodyOK)
	if code != 200 {
		t.Fatalf("other team's create: %d %v", code, m)
	}
	if code, m := a.call(t, http.MethodPost, "/v2/monitor/"+dataMap(t, m)["id"].(string)+"/run", keyForced, ""); code != 400 || m["code"] != "ZDR_NOT_SUPPORTED" {
		t.Errorf("forced team's run: %d %v", code, m)
	}
}
