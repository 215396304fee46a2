package agent_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/agent"
	"github.com/firegate/firegate/internal/llm/llmtest"
	"github.com/firegate/firegate/internal/store"
)

// BenchmarkAgentTurns measures the cost of a turn of a run: the queue job,
// loading and recording the state and trace, one scrape of a local page,
// with a model that answers at once. Each iteration is a run of 10 turns
// (9 scrapes and a finish); ms/turn is reported.
func BenchmarkAgentTurns(b *testing.B) {
	for _, kind := range stores {
		b.Run(kind, func(b *testing.B) {
			const turns = 10
			var h *harness
			h = newHarness(b, kind, func(w http.ResponseWriter, r llmtest.Request) {
				n := 0
				for _, m := range r.Messages {
					if m.Role == "assistant" {
						n++
					}
				}
				u := &llmtest.Usage{PromptTokens: 15}
				if n < turns-1 {
					llmtest.WriteToolCalls(w, u, llmtest.Call(fmt.Sprint("c", n), "scrape", map[string]any{"url": fmt.Sprintf("%s/p%d", h.site.URL, n)}))
					return
				}
				llmtest.WriteToolCalls(w, u, llmtest.Call("f", "finish", map[string]any{"data": n}))
			}, harnessOptions{})
			b.ResetTimer()
			start := time.Now()
			for b.Loop() {
				id := h.start(b, 1000, agent.Options{Prompt: "bench"})
				if run := h.wait(b, id, time.Minute); run.Status != store.AgentCompleted {
					b.Fatalf("run = %+v", run)
				}
			}
			b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N*turns), "ms/turn")
		})
	}
}
