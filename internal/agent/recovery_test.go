package agent_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/agent"
	"github.com/firegate/firegate/internal/llm/llmtest"
	"github.com/firegate/firegate/internal/queue/queuetest"
	"github.com/firegate/firegate/internal/store"
)

// TestWorkerDied: a run whose step was in the hands of a worker that died
// resumes on another from its last recorded step and completes; a run
// whose workers died on every attempt of a step but the last fails with a
// clear message instead of staying processing.
func TestWorkerDied(t *testing.T) {
	for _, kind := range stores {
		t.Run(kind, func(t *testing.T) {
			// The dead worker's beat is staged an hour old (StageDead).
			const deadAfter = time.Minute
			h := newHarness(t, kind, func(w http.ResponseWriter, r llmtest.Request) {
				llmtest.WriteToolCalls(w, nil, llmtest.Call("f", "finish", map[string]any{"data": "resumed"}))
			}, harnessOptions{liveness: true, deadAfter: deadAfter, deferStart: true})
			resumed := h.start(t, 100, agent.Options{Prompt: "survive"})
			poison := h.start(t, 100, agent.Options{Prompt: "keeps killing workers"})
			queuetest.StageRunning(t, h.st, "agent_step", "run", resumed, 1, "dead")
			queuetest.StageRunning(t, h.st, "agent_step", "run", poison, 3, "dead") // the step's attempts are 4
			queuetest.StageDead(t, h.st, "dead")
			if err := h.q.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			run := h.wait(t, resumed, 30*time.Second)
			if run.Status != store.AgentCompleted || string(run.Data) != `"resumed"` {
				t.Errorf("resumed run = %s %q %s", run.Status, run.Error, run.Data)
			}
			run = h.wait(t, poison, 30*time.Second)
			if run.Status != store.AgentFailed || !strings.Contains(run.Error, "worker running this agent died") {
				t.Errorf("poisoned run = %s %q", run.Status, run.Error)
			}
			if fin := last(h.events(t, poison), "run.finished"); fin["outcome"] != "failed" {
				t.Errorf("poisoned run.finished = %v", fin)
			}
		})
	}
}
