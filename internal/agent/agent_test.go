package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/firegate/firegate/internal/agent"
	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/llm"
	"github.com/firegate/firegate/internal/llm/llmtest"
	"github.com/firegate/firegate/internal/queue"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/search"
	"github.com/firegate/firegate/internal/search/searxngtest"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/teststore"
	"github.com/firegate/firegate/internal/testenv"
	"github.com/firegate/firegate/internal/webhook"
)

type agentStore interface {
	store.Store
	store.AgentStore
	store.WorkerStore
}

var stores = []string{"postgres", "sqlite"}

func openStore(t testing.TB, kind string) agentStore {
	if kind == "sqlite" {
		return teststore.SQLite(t)
	}
	return teststore.Postgres(t)
}

// site serves the pages the scripted agents read: /lighthouse, /slow
// (answers only when the request ends, and reports that it did) and
// /outside.
type site struct {
	*httptest.Server
	mu        sync.Mutex
	hits      map[string]int
	slowEnded chan time.Time
}

func newSite(t testing.TB) *site {
	s := &site{hits: map[string]int{}, slowEnded: make(chan time.Time, 16)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		switch r.URL.Path {
		case "/slow":
			<-r.Context().Done()
			s.slowEnded <- time.Now()
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<html><head><title>%s</title></head><body><main><h1>Lighthouse</h1>
			<p>The Bell Rock lighthouse was built in 1810 by Robert Stevenson. Its light is 28 metres above the sea.</p></main></body></html>`, r.URL.Path)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *site) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// charges records the ledger's charges (on the real store).
type charges struct {
	st store.Store
	mu sync.Mutex
	cs []store.Charge
}

func (c *charges) Charge(ctx context.Context, ch store.Charge) (store.ChargeResult, error) {
	c.mu.Lock()
	c.cs = append(c.cs, ch)
	c.mu.Unlock()
	return c.st.ChargeCredits(ctx, ch)
}

func (c *charges) all() []store.Charge {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.cs)
}

// hooks receives webhooks.
type hooks struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
}

func newHooks(t testing.TB) *hooks {
	h := &hooks{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		h.mu.Lock()
		h.bodies = append(h.bodies, m)
		h.mu.Unlock()
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hooks) types() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, b := range h.bodies {
		out = append(out, fmt.Sprint(b["type"]))
	}
	return out
}

func (h *hooks) of(typ string) map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, b := range h.bodies {
		if b["type"] == typ {
			return b
		}
	}
	return nil
}

type harness struct {
	st     agentStore
	runner *agent.Runner
	q      *queue.Queue
	team   store.Team
	ledger *charges
	model  *llmtest.Server
	searx  *searxngtest.Server
	hooks  *hooks
	site   *site
}

type harnessOptions struct {
	liveness   bool
	deadAfter  time.Duration
	deferStart bool
	// log, when set, is the runner's and the queue's logger.
	log *slog.Logger
	// wrapScraper, when set, wraps the runner's scrape engine.
	wrapScraper func(agent.Scraper) agent.Scraper
}

// turns answers the model's turn n (the number of assistant messages in
// the conversation, so a retried step gets the same answer) with turns[n].
func turns(steps ...llmtest.Step) llmtest.Step {
	return func(w http.ResponseWriter, r llmtest.Request) {
		n := 0
		for _, m := range r.Messages {
			if m.Role == "assistant" {
				n++
			}
		}
		if n >= len(steps) {
			llmtest.Status(http.StatusTeapot, "")(w, r)
			return
		}
		steps[n](w, r)
	}
}

func newHarness(t testing.TB, kind string, model llmtest.Step, o harnessOptions) *harness {
	t.Helper()
	log := o.log
	if log == nil {
		log = testenv.Logger(t)
	}
	h := &harness{st: openStore(t, kind), site: newSite(t), hooks: newHooks(t)}
	h.ledger = &charges{st: h.st}
	h.model = llmtest.NewReplying(t, model)
	h.searx = searxngtest.New(t, func(q url.Values) searxngtest.Answer {
		return searxngtest.Answer{Results: []searxngtest.Result{
			{URL: h.site.URL + "/lighthouse", Title: "Bell Rock", Content: "A lighthouse", Score: 2},
			{URL: "https://elsewhere.example/page", Title: "Elsewhere", Score: 1},
		}}
	})
	backend, err := search.NewSearXNG(search.SearXNGOptions{Endpoint: h.searx.URL})
	if err != nil {
		t.Fatal(err)
	}
	client, err := llm.New(llm.Options{BaseURL: h.model.BaseURL, Model: "scripted", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	fetcher := fetch.New(fetch.Options{AllowPrivate: true}, log)
	var scraper agent.Scraper = scrape.New(scrape.Config{Fetcher: fetcher, Log: log})
	if o.wrapScraper != nil {
		scraper = o.wrapScraper(scraper)
	}
	h.runner = agent.New(agent.Config{Runs: h.st, Model: client, Scraper: scraper,
		Mapper: crawl.NewMapper(fetcher, crawl.MapperOptions{}, log), Searcher: search.New(backend, search.Options{}, log),
		Ledger: h.ledger, Webhooks: webhook.NewSender(webhook.Options{AllowPrivate: true}, log), Log: log})
	workers := river.NewWorkers()
	h.runner.Register(workers)
	qo := queue.Options{Workers: 4}
	if o.liveness {
		qo.Liveness, qo.DeadAfter, qo.HeartbeatEvery = h.st, o.deadAfter, o.deadAfter/10
	}
	h.q, err = queue.Open(t.Context(), h.st, workers, qo, log)
	if err != nil {
		t.Fatal(err)
	}
	h.runner.Bind(h.q)
	if !o.deferStart {
		if err := h.q.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = h.q.Stop(ctx)
	})
	h.team, err = h.st.CreateTeam(t.Context(), "agent-test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.st.SetCredits(t.Context(), h.team.ID, 1000); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) start(t testing.TB, maxCredits int64, o agent.Options) string {
	t.Helper()
	id := agent.NewID()
	if o.Webhook == nil {
		o.Webhook = &webhook.Spec{URL: h.hooks.URL}
	}
	if err := h.runner.Start(t.Context(), agent.StartRequest{ID: id, TeamID: h.team.ID, Model: agent.ModelSpark1Pro,
		MaxCredits: maxCredits, Options: o}); err != nil {
		t.Fatal(err)
	}
	return id
}

// wait polls the run until it is no longer processing.
func (h *harness) wait(t testing.TB, id string, timeout time.Duration) store.AgentRun {
	t.Helper()
	var run store.AgentRun
	if !testenv.WaitFor(testenv.Patient(timeout), func() bool {
		var err error
		if run, err = h.st.AgentRun(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		return run.Status != store.AgentProcessing
	}) {
		t.Fatalf("run %s still processing after %s (step %d)", id, testenv.Patient(timeout), run.Step)
	}
	return run
}

// events returns the run's trace as decoded objects.
func (h *harness) events(t *testing.T, id string) []map[string]any {
	t.Helper()
	_, raw, err := h.runner.Trace(t.Context(), h.team.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]map[string]any, len(raw))
	for i, b := range raw {
		if err := json.Unmarshal(b, &out[i]); err != nil {
			t.Fatalf("event %s: %v", b, err)
		}
	}
	return out
}

func types(evs []map[string]any) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = fmt.Sprint(e["type"])
	}
	return out
}

func last(evs []map[string]any, typ string) map[string]any {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i]["type"] == typ {
			return evs[i]
		}
	}
	return nil
}

const lighthouseSchema = `{"type":"object","properties":{"name":{"type":"string"},"year":{"type":"integer"}},"required":["name","year"]}`

// TestRunCompletes: search -> scrape -> finish (first with data the schema
// rejects, then corrected). The run completes with the schema-valid data,
// is charged once what it consumed (tools plus tokens/15), and its trace,
// snapshots and webhooks tell the story in order.
func TestRunCompletes(t *testing.T) {
	for _, kind := range stores {
		t.Run(kind, func(t *testing.T) {
			var h *harness
			usage := &llmtest.Usage{PromptTokens: 100, CompletionTokens: 20} // 120 tokens a turn: 8 credits
			model := turns(
				func(w http.ResponseWriter, r llmtest.Request) {
					llmtest.WriteToolCalls(w, usage, llmtest.Call("c1", "search", map[string]any{"query": "bell rock lighthouse"}))
				},
				func(w http.ResponseWriter, r llmtest.Request) {
					res, _ := r.ToolResult("c1")
					var hits []struct{ URL string }
					_ = json.Unmarshal([]byte(res), &hits)
					if len(hits) == 0 {
						llmtest.Status(500, "")(w, r)
						return
					}
					llmtest.WriteToolCalls(w, usage, llmtest.Call("c2", "scrape", map[string]any{"url": hits[0].URL}))
				},
				func(w http.ResponseWriter, r llmtest.Request) {
					page, _ := r.ToolResult("c2")
					if !strings.Contains(page, "built in 1810") {
						llmtest.Status(500, "")(w, r)
						return
					}
					llmtest.WriteToolCalls(w, usage, llmtest.Call("c3", "finish", map[string]any{"data": map[string]any{"name": "Bell Rock", "year": "1810"}}))
				},
				func(w http.ResponseWriter, r llmtest.Request) {
					rej, _ := r.ToolResult("c3")
					if !strings.Contains(rej, "Rejected") {
						llmtest.Status(500, "")(w, r)
						return
					}
					llmtest.WriteToolCalls(w, usage, llmtest.Call("c4", "finish", map[string]any{"data": map[string]any{"name": "Bell Rock", "year": 1810}}))
				},
			)
			h = newHarness(t, kind, model, harnessOptions{})
			id := h.start(t, 500, agent.Options{Prompt: "When was the Bell Rock lighthouse built?", Schema: json.RawMessage(lighthouseSchema)})
			run := h.wait(t, id, 30*time.Second)
			if run.Status != store.AgentCompleted || string(run.Data) != `{"name":"Bell Rock","year":1810}` {
				t.Fatalf("run = %s %q data %s", run.Status, run.Error, run.Data)
			}
			// 4 turns x 120 tokens = 480 tokens = 32 credits; search of 2
			// results = 2; scrape = 1.
			if run.CreditsUsed != 35 {
				t.Errorf("creditsUsed = %d, want 35", run.CreditsUsed)
			}
			testenv.Eventually(t, 10*time.Second, func() bool { return len(h.ledger.all()) > 0 }, "still waiting for the charge")
			cs := h.ledger.all()
			if len(cs) != 1 || cs[0].Credits != 35 || cs[0].Kind != "agent" || cs[0].IdempotencyKey != "agent:"+id {
				t.Errorf("charges = %+v", cs)
			}
			// The charge follows the status change: wait for it.
			testenv.Eventually(t, 10*time.Second, func() bool {
				b, _ := h.st.CreditBalance(t.Context(), h.team.ID)
				return b.Remaining == 965
			}, "still waiting for the charge")
			reqs := h.model.Requests()
			if len(reqs) != 4 || !strings.Contains(reqs[0].System(), `"year"`) || !strings.Contains(reqs[0].LastUser(), "Bell Rock") {
				t.Errorf("model requests = %d; first system %q", len(reqs), reqs[0].System())
			}
			evs := h.events(t, id)
			got := types(evs)
			want := []string{"run.started", "tool_call.started", "tool_call.finished", "tool_call.started", "tool_call.finished",
				"artifact.updated", "tool_call.started", "tool_call.finished", "error.occurred", "tool_call.started",
				"tool_call.finished", "artifact.updated", "run.finished"}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("trace = %v\nwant    %v", got, want)
			}
			for i, e := range evs {
				if e["producerSequence"] != float64(i+1) || e["runId"] != id || e["schemaVersion"] != float64(1) {
					t.Fatalf("event %d = %v", i, e)
				}
			}
			fin := last(evs, "run.finished")
			if fin["outcome"] != "succeeded" || fin["error"] != nil {
				t.Errorf("run.finished = %v", fin)
			}
			art := evs[5]["artifact"].(map[string]any)
			sn, err := h.runner.Snapshot(t.Context(), h.team.ID, id, art["snapshotId"].(string))
			if err != nil || !strings.Contains(sn.Content, h.site.URL+"/lighthouse") {
				t.Errorf("intermediate snapshot = %+v, %v", sn, err)
			}
			final := evs[11]["artifact"].(map[string]any)
			sn, err = h.runner.Snapshot(t.Context(), h.team.ID, id, final["snapshotId"].(string))
			if err != nil || sn.Content != `{"name":"Bell Rock","year":1810}` {
				t.Errorf("final snapshot = %+v, %v", sn, err)
			}
			testenv.Eventually(t, 10*time.Second, func() bool { return h.hooks.of("agent.completed") != nil }, "still waiting for completed webhook")
			done := h.hooks.of("agent.completed")
			data := done["data"].([]any)[0].(map[string]any)
			if data["creditsUsed"] != float64(35) || fmt.Sprint(data["data"]) != "map[name:Bell Rock year:1810]" {
				t.Errorf("completed webhook = %v", done)
			}
			action := h.hooks.of("agent.action")
			if a := action["data"].([]any)[0].(map[string]any); a["action"] == nil || a["input"] == nil {
				t.Errorf("action webhook = %v", action)
			}
			if ts := h.hooks.types(); !slices.Contains(ts, "agent.started") || slices.Contains(ts, "agent.failed") {
				t.Errorf("webhooks = %v", ts)
			}
		})
	}
}

// TestCreditLimit: consumption reaching maxCredits mid-run fails the run
// with the credit-limit message, no data, creditsUsed 0, a run.finished
// credit_limit_reached event, and no charge.
func TestCreditLimit(t *testing.T) {
	for _, kind := range stores {
		t.Run(kind, func(t *testing.T) {
			big := &llmtest.Usage{PromptTokens: 60, CompletionTokens: 15} // 5 credits a turn
			var h *harness
			h = newHarness(t, kind, func(w http.ResponseWriter, r llmtest.Request) {
				llmtest.WriteToolCalls(w, big, llmtest.Call(fmt.Sprint("c", len(r.Messages)), "scrape", map[string]any{"url": h.site.URL + "/lighthouse"}))
			}, harnessOptions{})
			id := h.start(t, 12, agent.Options{Prompt: "read forever"})
			run := h.wait(t, id, 30*time.Second)
			if run.Status != store.AgentFailed || run.Error != agent.MsgCreditLimit || run.Data != nil || run.CreditsUsed != 0 {
				t.Fatalf("run = %s %q data %s credits %d", run.Status, run.Error, run.Data, run.CreditsUsed)
			}
			// 5+1 after the first turn, 12 after the second: stopped there.
			if n := len(h.model.Requests()); n != 2 {
				t.Errorf("model turns = %d, want 2", n)
			}
			evs := h.events(t, id)
			fin := last(evs, "run.finished")
			e, _ := fin["error"].(map[string]any)
			if fin["outcome"] != "credit_limit_reached" || e["code"] != "credit_limit_reached" || e["retryable"] != false {
				t.Errorf("run.finished = %v", fin)
			}
			testenv.Eventually(t, 10*time.Second, func() bool { return h.hooks.of("agent.failed") != nil }, "still waiting for failed webhook")
			// The webhook is queued after a charge would have been made.
			if cs := h.ledger.all(); len(cs) != 0 {
				t.Errorf("charges = %+v, want none", cs)
			}
			if f := h.hooks.of("agent.failed"); f["success"] != false || f["error"] != agent.MsgCreditLimit {
				t.Errorf("failed webhook = %v", f)
			}
		})
	}
}

// TestCancel: a cancel stops the tool call in flight within a second, the
// run reports failed with the cancellation message and its trace ends with
// cancelled; a second cancel is refused as already cancelled, and a cancel
// of a completed run as already finished.
func TestCancel(t *testing.T) {
	for _, kind := range stores {
		t.Run(kind, func(t *testing.T) {
			var h *harness
			h = newHarness(t, kind, func(w http.ResponseWriter, r llmtest.Request) {
				if strings.Contains(r.LastUser(), "quick") {
					llmtest.WriteToolCalls(w, nil, llmtest.Call("f", "finish", map[string]any{"data": "done"}))
					return
				}
				llmtest.WriteToolCalls(w, nil, llmtest.Call("s", "scrape", map[string]any{"url": h.site.URL + "/slow"}))
			}, harnessOptions{})
			id := h.start(t, 100, agent.Options{Prompt: "read the slow page"})
			testenv.Eventually(t, 20*time.Second, func() bool { return h.site.count("/slow") > 0 }, "still waiting for the slow page")
			cancelled := time.Now()
			if err := h.runner.Cancel(t.Context(), h.team.ID, id); err != nil {
				t.Fatal(err)
			}
			select {
			case ended := <-h.site.slowEnded:
				// Within a second (more under the race detector: the
				// cancel's path is instrumented code on a loaded machine).
				if d := ended.Sub(cancelled); d > testenv.Patient(time.Second) {
					t.Errorf("the scrape stopped %s after the cancel", d)
				}
			case <-time.After(testenv.Patient(5 * time.Second)):
				t.Fatal("the scrape in flight did not stop")
			}
			run, err := h.runner.Run(t.Context(), h.team.ID, id)
			if err != nil || run.Status != store.AgentCancelled || agent.ReportedStatus(run.Status) != "failed" || run.Error != agent.MsgCancelled {
				t.Fatalf("run = %+v, %v", run, err)
			}
			if err := h.runner.Cancel(t.Context(), h.team.ID, id); !errors.Is(err, agent.ErrAlreadyCancelled) {
				t.Errorf("second cancel = %v", err)
			}
			evs := h.events(t, id)
			fin := last(evs, "run.finished")
			e, _ := fin["error"].(map[string]any)
			if fin["outcome"] != "cancelled" || e["code"] != "cancelled" || last(evs, "run.cancel_requested") == nil {
				t.Errorf("trace = %v", evs)
			}
			if ty := types(evs); ty[len(ty)-1] != "run.finished" {
				t.Errorf("events after run.finished: %v", ty)
			}
			testenv.Eventually(t, 10*time.Second, func() bool { return h.hooks.of("agent.cancelled") != nil }, "still waiting for cancelled webhook")

			done := h.start(t, 100, agent.Options{Prompt: "quick"})
			if run := h.wait(t, done, 20*time.Second); run.Status != store.AgentCompleted || string(run.Data) != `"done"` {
				t.Fatalf("quick run = %+v", run)
			}
			if err := h.runner.Cancel(t.Context(), h.team.ID, done); !errors.Is(err, agent.ErrFinished) {
				t.Errorf("cancel of a completed run = %v", err)
			}
			other, _ := h.st.CreateTeam(t.Context(), "other")
			if err := h.runner.Cancel(t.Context(), other.ID, done); !errors.Is(err, agent.ErrNotFound) {
				t.Errorf("cancel by another team = %v", err)
			}
		})
	}
}

// TestRefusal: a model refusal fails the run with the refused code.
func TestRefusal(t *testing.T) {
	h := newHarness(t, "sqlite", func(w http.ResponseWriter, r llmtest.Request) {
		llmtest.WriteRefusal(w, "I will not do that.")
	}, harnessOptions{})
	id := h.start(t, 100, agent.Options{Prompt: "something bad"})
	run := h.wait(t, id, 20*time.Second)
	if run.Status != store.AgentFailed || !strings.Contains(run.Error, "I will not do that.") || run.CreditsUsed != 0 {
		t.Fatalf("run = %+v", run)
	}
	fin := last(h.events(t, id), "run.finished")
	if e, _ := fin["error"].(map[string]any); fin["outcome"] != "refused" || e["code"] != "refused" {
		t.Errorf("run.finished = %v", fin)
	}
}

// TestStrictConstrainToURLs: a scrape outside the run's URLs is refused
// without a fetch, and search results outside them are dropped.
func TestStrictConstrainToURLs(t *testing.T) {
	var h *harness
	h = newHarness(t, "sqlite", turns(
		func(w http.ResponseWriter, r llmtest.Request) {
			llmtest.WriteToolCalls(w, nil, llmtest.Call("a", "scrape", map[string]any{"url": h.site.URL + "/outside"}),
				llmtest.Call("b", "search", map[string]any{"query": "lighthouse"}))
		},
		func(w http.ResponseWriter, r llmtest.Request) {
			a, _ := r.ToolResult("a")
			b, _ := r.ToolResult("b")
			llmtest.WriteToolCalls(w, nil, llmtest.Call("f", "finish", map[string]any{"data": map[string]any{"a": a, "b": b}}))
		},
	), harnessOptions{})
	id := h.start(t, 100, agent.Options{Prompt: "stay inside", URLs: []string{h.site.URL + "/docs/start"}, StrictConstrainToURLs: true})
	run := h.wait(t, id, 20*time.Second)
	var data struct{ A, B string }
	if err := json.Unmarshal(run.Data, &data); err != nil || run.Status != store.AgentCompleted {
		t.Fatalf("run = %+v", run)
	}
	if !strings.Contains(data.A, "outside the URLs") || data.B != "[]" || h.site.count("/outside") != 0 {
		t.Errorf("tool results = %+v, /outside fetched %d times", data, h.site.count("/outside"))
	}
	if q := h.searx.Calls(); len(q) == 0 || !strings.Contains(q[0].Get("q"), "site:127.0.0.1") {
		t.Errorf("search calls = %v", q)
	}
}

// TestSubagents: subagents started with delegate run in parallel and their
// results come back through await_subagents; a subagent still running
// when its parent finishes stops with parent_finished, its tool call in
// flight cancelled.
func TestSubagents(t *testing.T) {
	var h *harness
	one := &llmtest.Usage{PromptTokens: 15} // 1 credit
	model := func(w http.ResponseWriter, r llmtest.Request) {
		sys, task := r.System(), r.Messages[1].Content
		switch {
		case strings.Contains(sys, "subagent") && strings.Contains(task, "slow"):
			llmtest.WriteToolCalls(w, nil, llmtest.Call("s", "scrape", map[string]any{"url": h.site.URL + "/slow"}))
		case strings.Contains(sys, "subagent"):
			llmtest.WriteToolCalls(w, &llmtest.Usage{PromptTokens: 30}, llmtest.Call("f", "finish", map[string]any{"data": "part " + task[len(task)-1:]}))
		case strings.Contains(task, "outlive"):
			turns(
				func(w http.ResponseWriter, r llmtest.Request) {
					llmtest.WriteToolCalls(w, nil, llmtest.Call("d", "delegate", map[string]any{"tasks": []any{map[string]any{"prompt": "the slow part"}}}))
				},
				func(w http.ResponseWriter, r llmtest.Request) {
					llmtest.WriteToolCalls(w, nil, llmtest.Call("f", "finish", map[string]any{"data": "without waiting"}))
				},
			)(w, r)
		default:
			turns(
				func(w http.ResponseWriter, r llmtest.Request) {
					llmtest.WriteToolCalls(w, one, llmtest.Call("d", "delegate", map[string]any{"tasks": []any{
						map[string]any{"prompt": "part 1"}, map[string]any{"prompt": "part 2"}}}),
						llmtest.Call("w", "await_subagents", map[string]any{}))
				},
				func(w http.ResponseWriter, r llmtest.Request) {
					res, _ := r.ToolResult("w")
					llmtest.WriteToolCalls(w, one, llmtest.Call("f", "finish", map[string]any{"data": res}))
				},
			)(w, r)
		}
	}
	h = newHarness(t, "postgres", model, harnessOptions{})

	id := h.start(t, 100, agent.Options{Prompt: "split the work"})
	run := h.wait(t, id, 30*time.Second)
	var res string
	if err := json.Unmarshal(run.Data, &res); err != nil || run.Status != store.AgentCompleted ||
		!strings.Contains(res, `"data":"part 1"`) || !strings.Contains(res, `"data":"part 2"`) {
		t.Fatalf("parent = %s %q %s", run.Status, run.Error, run.Data)
	}
	var finished []string
	for _, e := range h.events(t, id) {
		if e["type"] == "agent.finished" {
			who := e["agent"].(map[string]any)
			if who["role"] != "subagent" || who["parentId"] != id || e["runId"] != id {
				t.Errorf("agent.finished = %v", e)
			}
			finished = append(finished, fmt.Sprint(e["outcome"]))
		}
	}
	if fmt.Sprint(finished) != "[succeeded succeeded]" {
		t.Errorf("the parent's trace has agent.finished %v, want two succeeded", finished)
	}
	// The parent's two turns (1 credit each) and its subagents' 30 tokens
	// (2 credits) each.
	if run.CreditsUsed != 6 {
		t.Errorf("parent creditsUsed = %d, want 6; trace %v; requests %d", run.CreditsUsed, types(h.events(t, id)), len(h.model.Requests()))
	}

	id = h.start(t, 100, agent.Options{Prompt: "outlive"})
	run = h.wait(t, id, 30*time.Second)
	if run.Status != store.AgentCompleted {
		t.Fatalf("parent = %+v", run)
	}
	kids, err := h.st.ChildAgentRuns(t.Context(), id)
	if err != nil || len(kids) != 1 {
		t.Fatalf("children = %+v, %v", kids, err)
	}
	kid := h.wait(t, kids[0].ID, 10*time.Second)
	if kid.Status != store.AgentFailed {
		t.Fatalf("subagent = %+v", kid)
	}
	evs, err := h.st.AgentEvents(t.Context(), kid.ID, 0, 100)
	if err != nil || len(evs) == 0 {
		t.Fatal(err)
	}
	var fin map[string]any
	_ = json.Unmarshal(evs[len(evs)-1].Body, &fin)
	if e, _ := fin["error"].(map[string]any); fin["type"] != "run.finished" || e["code"] != "parent_finished" {
		t.Errorf("subagent's last event = %v", fin)
	}
	if h.site.count("/slow") > 0 {
		select {
		case <-h.site.slowEnded:
		case <-time.After(5 * time.Second):
			t.Error("the subagent's scrape did not stop")
		}
	}
	// Subagents are not visible through the API's team reads.
	if _, err := h.runner.Run(t.Context(), h.team.ID, kid.ID); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("subagent through Run = %v", err)
	}
}
