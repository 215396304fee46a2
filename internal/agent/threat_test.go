package agent_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/agent"
	"github.com/firegate/firegate/internal/llm/llmtest"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
)

// TestThreatProtection: a run's threatProtection blacklists the test
// site's other name (localhost) and the search engine's second result.
// map and scrape of a blacklisted URL fail without a fetch, and the
// blacklisted result is not shown to the model.
func TestThreatProtection(t *testing.T) {
	var h *harness
	blocked := func() string {
		_, port, _ := strings.Cut(strings.TrimPrefix(h.site.URL, "http://"), ":")
		return "http://localhost:" + port
	}
	h = newHarness(t, "sqlite", turns(
		func(w http.ResponseWriter, r llmtest.Request) {
			llmtest.WriteToolCalls(w, nil,
				llmtest.Call("m", "map", map[string]any{"url": blocked() + "/blocked-map"}),
				llmtest.Call("s", "search", map[string]any{"query": "lighthouse"}),
				llmtest.Call("p", "scrape", map[string]any{"url": blocked() + "/blocked-page"}))
		},
		func(w http.ResponseWriter, r llmtest.Request) {
			m, _ := r.ToolResult("m")
			s, _ := r.ToolResult("s")
			p, _ := r.ToolResult("p")
			llmtest.WriteToolCalls(w, nil, llmtest.Call("f", "finish", map[string]any{"data": map[string]any{"m": m, "s": s, "p": p}}))
		},
	), harnessOptions{})
	id := h.start(t, 100, agent.Options{Prompt: "read about lighthouses",
		ThreatProtection: &scrape.ThreatProtection{Blacklist: []string{"localhost", "elsewhere.example"}}})
	run := h.wait(t, id, 20*time.Second)
	var data struct{ M, S, P string }
	if err := json.Unmarshal(run.Data, &data); err != nil || run.Status != store.AgentCompleted {
		t.Fatalf("run = %+v", run)
	}
	if !strings.Contains(data.M, "blocked by threat protection") || !strings.Contains(data.P, "blocked") {
		t.Errorf("map: %q, scrape: %q", data.M, data.P)
	}
	if !strings.Contains(data.S, "/lighthouse") || strings.Contains(data.S, "elsewhere") {
		t.Errorf("search: %q", data.S)
	}
	for _, p := range []string{"/blocked-map", "/blocked-page", "/robots.txt", "/sitemap.xml"} {
		if n := h.site.count(p); n != 0 {
			t.Errorf("%s fetched %d times", p, n)
		}
	}
}
