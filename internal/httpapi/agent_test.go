package httpapi

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/agent"
	"github.com/firegate/firegate/internal/auth"
	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/llm"
	"github.com/firegate/firegate/internal/llm/llmtest"
	"github.com/firegate/firegate/internal/queue"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/teststore"
	"github.com/firegate/firegate/internal/testenv"
)

type agentTestStore interface {
	store.Store
	store.AgentStore
}

// agentAPI is a Server with real agent runs (store, River queue, plain
// HTTP engine, scripted model) behind a real HTTP listener.
type agentAPI struct {
	*jobAPI
	runs    agentTestStore
	page    string        // a local page that answers only when its request ends
	slowHit chan struct{} // a request for page arrived
}

func newAgentAPI(t *testing.T, kind string, model llmtest.Step) *agentAPI {
	t.Helper()
	var st agentTestStore
	if kind == "sqlite" {
		st = teststore.SQLite(t)
	} else {
		st = teststore.Postgres(t)
	}
	log := testenv.Logger(t)
	engine := scrape.New(scrape.Config{Fetcher: fetch.New(fetch.Options{AllowPrivate: true}, log), Log: log})
	cfg := agent.Config{Runs: st, Scraper: engine, CancelPoll: 50 * time.Millisecond, Log: log}
	if model != nil {
		srv := llmtest.NewReplying(t, model)
		c, err := llm.New(llm.Options{BaseURL: srv.BaseURL, Model: "scripted", MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Model = c
	}
	runner := agent.New(cfg)
	startQueue(t, st, 4, log, runner.Register, func(q *queue.Queue) { runner.Bind(q) })
	teams := newTeamAuth(t, st)
	ledger := billing.NewLedger(st, log) // teams stay unlimited until given credits
	s := New(Deps{Scraper: engine, Auth: teams, Agents: runner, Ledger: ledger, Activity: st.(store.ActivityStore), Log: log})
	s.SetReady(true)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	hit := make(chan struct{}, 16)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit <- struct{}{}
		<-r.Context().Done()
	}))
	t.Cleanup(slow.Close)
	return &agentAPI{jobAPI: &jobAPI{url: srv.URL, teams: teams}, runs: st, page: slow.URL + "/slow", slowHit: hit}
}

// waitAgent polls GET /v2/agent/{id} until the run is not processing.
func (a *agentAPI) waitAgent(t *testing.T, id string) map[string]any {
	t.Helper()
	var m map[string]any
	testenv.Eventually(t, 30*time.Second, func() bool {
		var code int
		if code, m = a.call(t, http.MethodGet, "/v2/agent/"+id, keyA, ""); code != 200 {
			t.Fatalf("GET agent: %d %v", code, m)
		}
		return m["status"] != "processing"
	}, "agent %s still processing", id)
	return m
}

// agentModel finishes at once with {"name":"x"}, or reads a page that
// never answers when the prompt says "slow".
func agentModel(page *string) llmtest.Step {
	return func(w http.ResponseWriter, r llmtest.Request) {
		if strings.Contains(r.LastUser(), "slow") {
			llmtest.WriteToolCalls(w, nil, llmtest.Call("s", "scrape", map[string]any{"url": *page}))
			return
		}
		llmtest.WriteToolCalls(w, &llmtest.Usage{PromptTokens: 30}, llmtest.Call("f", "finish", map[string]any{"data": map[string]any{"name": "x"}}))
	}
}

// TestAgentValidation: bad bodies answer 400 naming the field, with the
// contract's texts.
func TestAgentValidation(t *testing.T) {
	a := newAgentAPI(t, "sqlite", agentModel(new(string)))
	long := strings.Repeat("x", 10001)
	for _, tc := range []struct {
		body, err, path string
	}{
		{`{}`, "prompt: ", "prompt"},
		{`{"prompt":""}`, "prompt: ", "prompt"},
		{`{"prompt":"` + long + `"}`, "prompt: ", "prompt"},
		{`{"prompt":"p","schema":{"type":"nope"}}`, "Invalid JSON schema: ", "schema"},
		{`{"prompt":"p","schema":[1]}`, "schema: ", "schema"},
		{`{"prompt":"p","urls":["not a url"]}`, "Invalid URL", "urls"},
		{`{"prompt":"p","urls":"https://example.com"}`, "urls: ", "urls"},
		{`{"prompt":"p","maxCredits":0}`, "maxCredits: ", "maxCredits"},
		{`{"prompt":"p","maxCredits":"10"}`, "maxCredits: ", "maxCredits"},
		{`{"prompt":"p","model":"gpt"}`, "model: ", "model"},
		{`{"prompt":"p","effort":"max"}`, "effort: ", "effort"},
		{`{"prompt":"p","strictConstrainToURLs":"yes"}`, "strictConstrainToURLs: ", "strictConstrainToURLs"},
		{`{"prompt":"p","strictConstrainToURLs":true}`, "strictConstrainToURLs needs urls", "urls"},
		{`{"prompt":"p","webhook":{"url":"https://hooks.example.com","events":["page"]}}`, `webhook.events[0]: unknown event "page"`, "webhook"},
		{`{"prompt":"p","webhook":"ftp://x"}`, "webhook.url", "webhook"},
		{`{"prompt":"p","auditMetadata":{"user":"x"}}`, "Unrecognized key", "auditMetadata"},
		{`{"prompt":"p","threadId":"t"}`, "Agent threads are not supported", "threadId"},
		{`{"prompt":"p","mode":"chat"}`, "The chat mode is not supported", "mode"},
		{`{"prompt":"p","bogus":1}`, "Unrecognized key in body", ""},
	} {
		code, m := a.call(t, http.MethodPost, "/v2/agent", keyA, tc.body)
		errText, _ := m["error"].(string)
		if code != 400 || m["success"] != false || !strings.HasPrefix(errText, tc.err) || !strings.Contains(fmt.Sprint(m["details"]), tc.path) {
			t.Errorf("%s: %d %v; want 400 %q naming %s", tc.body, code, m, tc.err, tc.path)
		}
	}
	code, m := a.call(t, http.MethodPost, "/v2/agent", keyA, `{"prompt":"p","webhook":{"url":"https://hooks.example.com","events":["agent.completed","failed"]},"model":"spark-2","maxCredits":50,"effort":"low","mode":"extract"}`)
	if code != 200 || m["success"] != true {
		t.Fatalf("valid body: %d %v", code, m)
	}
}

// TestAgentRoutes drives a run through the routes: start, status with
// data and credits, trace with snapshots, list, and the seed's errors for
// bad ids, another team's key and a cancel of a finished run.
func TestAgentRoutes(t *testing.T) {
	for _, kind := range []string{"postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			var page string
			a := newAgentAPI(t, kind, agentModel(&page))
			page = a.page
			code, m := a.call(t, http.MethodPost, "/v2/agent", keyA, `{"prompt":"name it","schema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]},"maxCredits":100}`)
			if code != 200 || m["success"] != true {
				t.Fatalf("POST: %d %v", code, m)
			}
			id := m["id"].(string)
			st := a.waitAgent(t, id)
			exp, err := time.Parse(time.RFC3339Nano, fmt.Sprint(st["expiresAt"]))
			if st["status"] != "completed" || fmt.Sprint(st["data"]) != "map[name:x]" || st["model"] != "spark-1-pro" ||
				st["creditsUsed"] != float64(2) || err != nil || time.Until(exp) < 23*time.Hour {
				t.Fatalf("status = %v", st)
			}
			code, tr := a.call(t, http.MethodGet, "/v2/agent/"+id+"/trace", keyA, "")
			evs, _ := tr["events"].([]any)
			if code != 200 || tr["id"] != id || tr["creditsUsed"] != float64(2) || len(evs) < 4 {
				t.Fatalf("trace: %d %v", code, tr)
			}
			var snap string
			for _, e := range evs {
				ev := e.(map[string]any)
				if ev["type"] == "artifact.updated" {
					snap = ev["artifact"].(map[string]any)["snapshotId"].(string)
				}
			}
			code, sn := a.call(t, http.MethodGet, "/v2/agent/"+id+"/snapshots/"+snap, keyA, "")
			if code != 200 || sn["snapshot"] != `{"name":"x"}` || sn["snapshotId"] != snap || sn["id"] != id {
				t.Errorf("snapshot: %d %v", code, sn)
			}
			code, lst := a.call(t, http.MethodGet, "/v2/agent", keyA, "")
			agents, _ := lst["agents"].([]any)
			if code != 200 || len(agents) != 1 || agents[0].(map[string]any)["id"] != id || lst["next"] != nil {
				t.Errorf("list: %d %v", code, lst)
			}
			if code, lst := a.call(t, http.MethodGet, "/v2/agent", keyB, ""); code != 200 || len(lst["agents"].([]any)) != 0 {
				t.Errorf("list of team b: %d %v", code, lst)
			}

			for _, path := range []string{"/v2/agent/" + id, "/v2/agent/" + id + "/trace", "/v2/agent/" + id + "/snapshots/" + snap} {
				if code, m := a.call(t, http.MethodGet, path, keyB, ""); code != 404 || m["error"] != "Agent job not found" {
					t.Errorf("GET %s as team b: %d %v", path, code, m)
				}
			}
			if code, m := a.call(t, http.MethodDelete, "/v2/agent/"+id, keyB, ""); code != 404 || m["error"] != "Agent job not found" {
				t.Errorf("DELETE as team b: %d %v", code, m)
			}
			unknown := agent.NewID()
			if code, m := a.call(t, http.MethodGet, "/v2/agent/"+unknown, keyA, ""); code != 404 || m["error"] != "Agent job not found" {
				t.Errorf("unknown run: %d %v", code, m)
			}
			for _, tc := range []struct{ method, path string }{
				{http.MethodGet, "/v2/agent/nope"}, {http.MethodDelete, "/v2/agent/nope"},
				{http.MethodGet, "/v2/agent/nope/trace"}, {http.MethodGet, "/v2/agent/nope/snapshots/" + snap},
			} {
				if code, m := a.call(t, tc.method, tc.path, keyA, ""); code != 400 || m["error"] != "Invalid job ID format. Job ID must be a valid UUID." {
					t.Errorf("%s %s: %d %v", tc.method, tc.path, code, m)
				}
			}
			if code, m := a.call(t, http.MethodGet, "/v2/agent/"+id+"/snapshots/bad", keyA, ""); code != 400 || m["error"] != "Invalid snapshot ID" {
				t.Errorf("bad snapshot id: %d %v", code, m)
			}
			if code, m := a.call(t, http.MethodGet, "/v2/agent/"+id+"/snapshots/"+agent.NewID(), keyA, ""); code != 404 || m["error"] != "Snapshot not found" {
				t.Errorf("unknown snapshot: %d %v", code, m)
			}
			if code, m := a.call(t, http.MethodDelete, "/v2/agent/"+id, keyA, ""); code != 409 || m["error"] != "Agent already finished" {
				t.Errorf("cancel of a completed run: %d %v", code, m)
			}
			if code, m := a.call(t, http.MethodGet, "/v2/agent?before=yesterday", keyA, ""); code != 400 || !strings.Contains(fmt.Sprint(m["details"]), "before") {
				t.Errorf("bad before: %d %v", code, m)
			}
			// 20 credits are needed to start a run; nothing is started below.
			if _, err := a.runs.SetCredits(t.Context(), a.teams[keyB].ID, 19); err != nil {
				t.Fatal(err)
			}
			if code, m := a.call(t, http.MethodPost, "/v2/agent", keyB, `{"prompt":"name it"}`); code != 402 || m["code"] != "insufficient_credits" {
				t.Errorf("POST with 19 credits: %d %v", code, m)
			}
			if _, lst := a.call(t, http.MethodGet, "/v2/agent", keyB, ""); len(lst["agents"].([]any)) != 0 {
				t.Errorf("a run was started: %v", lst)
			}
		})
	}
}

// TestAgentCancelHTTP: DELETE on a running run answers 200 and the run
// reports failed with the cancellation message and no credits; a second
// DELETE answers 409 Agent is already cancelled.
func TestAgentCancelHTTP(t *testing.T) {
	var page string
	a := newAgentAPI(t, "sqlite", agentModel(&page))
	page = a.page
	code, m := a.call(t, http.MethodPost, "/v2/agent", keyA, `{"prompt":"read the slow page"}`)
	if code != 200 {
		t.Fatalf("POST: %d %v", code, m)
	}
	id := m["id"].(string)
	select {
	case <-a.slowHit:
	case <-time.After(20 * time.Second):
		t.Fatal("the run never read the slow page")
	}
	if code, m := a.call(t, http.MethodDelete, "/v2/agent/"+id, keyA, ""); code != 200 || m["success"] != true {
		t.Fatalf("DELETE: %d %v", code, m)
	}
	code, st := a.call(t, http.MethodGet, "/v2/agent/"+id, keyA, "")
	if code != 200 || st["status"] != "failed" || st["error"] != agent.MsgCancelled || st["creditsUsed"] != float64(0) || st["data"] != nil {
		t.Errorf("status after cancel: %d %v", code, st)
	}
	if code, m := a.call(t, http.MethodDelete, "/v2/agent/"+id, keyA, ""); code != 409 || m["error"] != "Agent is already cancelled" {
		t.Errorf("second DELETE: %d %v", code, m)
	}
}

// TestAgentListPaging: pages of 20, newest first, next carrying a cursor
// that pages on from the last run; runs created in the same instant across
// a page boundary are each listed exactly once.
func TestAgentListPaging(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			a := newAgentAPI(t, kind, agentModel(new(string)))
			base := time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
			var ids []string
			for i := range 25 {
				// Runs 2..8 share one instant: the page boundary (after
				// the 20th newest, run 5 were they apart) falls among them.
				created := base.Add(time.Duration(i) * time.Second)
				if i >= 2 && i <= 8 {
					created = base.Add(2 * time.Second)
				}
				id := agent.NewID()
				_, err := a.runs.CreateAgentRun(t.Context(), store.AgentRun{ID: id, TeamID: a.teams[keyA].ID, Model: "spark-1-pro",
					Options: []byte(fmt.Sprintf(`{"prompt":"p%d","urls":["https://example.com/%d"]}`, i, i)), MaxCredits: 10,
					CreatedAt: created, ExpiresAt: time.Now().Add(time.Hour)})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			code, m := a.call(t, http.MethodGet, "/v2/agent", keyA, "")
			page, _ := m["agents"].([]any)
			if code != 200 || len(page) != 20 || m["next"] == nil {
				t.Fatalf("first page: %d %d agents, next %v", code, len(page), m["next"])
			}
			seen := map[string]int{}
			var items []map[string]any
			for _, it := range page {
				items = append(items, it.(map[string]any))
			}
			next, err := url.Parse(m["next"].(string))
			if err != nil {
				t.Fatal(err)
			}
			code, m = a.call(t, http.MethodGet, next.RequestURI(), keyA, "")
			page, _ = m["agents"].([]any)
			if code != 200 || len(page) != 5 || m["next"] != nil {
				t.Fatalf("second page (%s): %d %v", next.RequestURI(), code, m)
			}
			for _, it := range page {
				items = append(items, it.(map[string]any))
			}
			for _, it := range items {
				seen[it["id"].(string)]++
			}
			for i, id := range ids {
				if seen[id] != 1 {
					t.Errorf("run %d listed %d times", i, seen[id])
				}
			}
			if items[24]["id"] != ids[0] || items[10]["id"] != ids[14] {
				t.Errorf("order: the 11th is %v (want run 14), the last %v (want run 0)", items[10]["id"], items[24]["id"])
			}
			var prompt24 map[string]any
			for _, it := range items {
				if it["id"] == ids[24] {
					prompt24 = it
				}
			}
			opts := prompt24["options"].(map[string]any)
			if prompt24["status"] != "processing" || prompt24["targetHint"] != "https://example.com/24" || opts["prompt"] != "p24" ||
				opts["model"] != "spark-1-pro" || prompt24["origin"] != "api" {
				t.Errorf("item = %v", prompt24)
			}
			// before still starts the list at a time; a bad cursor is a 400
			// naming it.
			code, m = a.call(t, http.MethodGet, fmt.Sprintf("/v2/agent?before=%d", base.Add(15*time.Second).UnixMilli()), keyA, "")
			if page, _ = m["agents"].([]any); code != 200 || len(page) != 15 || page[0].(map[string]any)["id"] != ids[14] {
				t.Errorf("before: %d %v", code, m)
			}
			for _, bad := range []string{"x", "123", "123.not-a-uuid", "-5." + ids[0]} {
				code, m = a.call(t, http.MethodGet, "/v2/agent?cursor="+url.QueryEscape(bad), keyA, "")
				if code != 400 || !strings.Contains(fmt.Sprint(m["details"]), "cursor") {
					t.Errorf("cursor %q: %d %v", bad, code, m)
				}
			}
		})
	}
}

// TestAgentWithoutModelOrRunner: no model configured answers a clear 400;
// no agent runner at all keeps the routes at 501.
func TestAgentWithoutModelOrRunner(t *testing.T) {
	a := newAgentAPI(t, "sqlite", nil)
	if code, m := a.call(t, http.MethodPost, "/v2/agent", keyA, `{"prompt":"p"}`); code != 400 || m["code"] != "AGENT_LLM_NOT_CONFIGURED" {
		t.Errorf("no model: %d %v", code, m)
	}
	s := New(Deps{Auth: teamAuth{keyA: auth.Team{ID: "t"}}, Log: testenv.Logger(t)})
	for _, p := range []string{"/v2/agent", "/v2/agent/" + agent.NewID()} {
		rec, m := do(t, s, http.MethodGet, p, keyA, "")
		if rec.Code != 501 || m["code"] != "NOT_IMPLEMENTED" {
			t.Errorf("GET %s without runner: %d %v", p, rec.Code, m)
		}
	}
}
