package agent_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/agent"
	"github.com/firegate/firegate/internal/llm/llmtest"
	"github.com/firegate/firegate/internal/queue/queuetest"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/testenv"
)

// modelLeaks are the parts of the injected errors no client may see: the
// model endpoint's and a store's addresses, package prefixes.
var modelLeaks = []string{"10.1.2.3", ":8000", ":5432", "llm:", "scrape:", "browser:", "store:", "dial tcp", "devtools"}

// failingModel answers every request with HTTP code and a body that names
// an internal endpoint, as a gateway in front of a model may.
func failingModel(code int) llmtest.Step {
	return func(w http.ResponseWriter, _ llmtest.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, `{"error":{"message":"upstream http://10.1.2.3:8000/v1/chat/completions failed: store: dial tcp 10.1.2.3:5432"}}`)
	}
}

// brokenScraper fails every page with an internal error.
type brokenScraper struct{}

func (brokenScraper) Scrape(context.Context, scrape.Options) (*scrape.Document, error) {
	return nil, testenv.InternalError("")
}

// errorMessage is the error message of a trace event.
func errorMessage(ev map[string]any) string {
	e, _ := ev["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

const unknownPrefix = "An unexpected error occurred. Please contact support, error id "

// TestRunErrorsShowNoInternalError: a run failed by the language model
// (rejecting the request, or failing on every attempt of a step) shows the
// model's error, which names the endpoint's address, only by an error id
// logged with it, in the run's error and its trace; a provider's rate limit
// is said so; a tool's internal error reaches the trace (and the model) the
// same way.
func TestRunErrorsShowNoInternalError(t *testing.T) {
	for _, kind := range stores {
		t.Run(kind, func(t *testing.T) {
			t.Run("rejected", func(t *testing.T) {
				log, book := testenv.NewLogBook(t)
				h := newHarness(t, kind, failingModel(http.StatusBadRequest), harnessOptions{log: log})
				id := h.start(t, 100, agent.Options{Prompt: "find it"})
				run := h.wait(t, id, 20*time.Second)
				if run.Status != store.AgentFailed {
					t.Errorf("status %s, want failed", run.Status)
				}
				const prefix = "The language model rejected the request: " + unknownPrefix
				book.CheckHidden(t, "run error", run.Error, prefix, modelLeaks, "10.1.2.3:8000")
				book.CheckHidden(t, "run.finished", errorMessage(last(h.events(t, id), "run.finished")), prefix, modelLeaks, "10.1.2.3:8000")
			})
			for _, c := range []struct {
				name  string
				code  int
				known string // "" for an error shown by its id
			}{
				{"unavailable", http.StatusServiceUnavailable, ""},
				{"rate limited", http.StatusTooManyRequests,
					"The language model kept failing: its provider is rate limiting this server (HTTP 429 Too Many Requests); retry later."},
			} {
				t.Run(c.name, func(t *testing.T) {
					log, book := testenv.NewLogBook(t)
					h := newHarness(t, kind, failingModel(c.code), harnessOptions{log: log})
					id := h.start(t, 100, agent.Options{Prompt: "find it"})
					testenv.Eventually(t, 20*time.Second, func() bool {
						return last(h.events(t, id), "error.occurred") != nil
					}, "still waiting for the first attempt's error")
					// The step's next attempt is its last.
					queuetest.StageNextAttempt(t, h.st, "agent_step", "run", id, 3)
					run := h.wait(t, id, 30*time.Second)
					if run.Status != store.AgentFailed {
						t.Errorf("status %s, want failed", run.Status)
					}
					retried := errorMessage(last(h.events(t, id), "error.occurred"))
					finished := errorMessage(last(h.events(t, id), "run.finished"))
					if c.known != "" {
						if run.Error != c.known || finished != c.known {
							t.Errorf("run error %q, run.finished %q; want %q", run.Error, finished, c.known)
						}
						if want := strings.TrimPrefix(c.known, "The language model kept failing: "); retried != want {
							t.Errorf("error.occurred %q, want %q", retried, want)
						}
						return
					}
					const prefix = "The language model kept failing: " + unknownPrefix
					book.CheckHidden(t, "run error", run.Error, prefix, modelLeaks, "10.1.2.3:8000")
					book.CheckHidden(t, "run.finished", finished, prefix, modelLeaks, "10.1.2.3:8000")
					book.CheckHidden(t, "error.occurred", retried, unknownPrefix, modelLeaks, "10.1.2.3:8000")
				})
			}
			t.Run("tool", func(t *testing.T) {
				log, book := testenv.NewLogBook(t)
				var h *harness
				h = newHarness(t, kind, turns(
					func(w http.ResponseWriter, r llmtest.Request) {
						llmtest.WriteToolCalls(w, nil, llmtest.Call("s", "scrape", map[string]any{"url": h.site.URL + "/lighthouse"}))
					},
					llmtest.Calls(nil, llmtest.Call("f", "finish", map[string]any{"data": "none"})),
				), harnessOptions{log: log, wrapScraper: func(agent.Scraper) agent.Scraper { return brokenScraper{} }})
				id := h.start(t, 100, agent.Options{Prompt: "read the lighthouse page"})
				if run := h.wait(t, id, 20*time.Second); run.Status != store.AgentCompleted {
					t.Errorf("run %s %q, want completed", run.Status, run.Error)
				}
				ev := last(h.events(t, id), "error.occurred")
				if ev == nil {
					t.Fatal("no error.occurred event for the failed scrape")
				}
				book.CheckHidden(t, "tool error", errorMessage(ev), "Error: scrape failed: "+unknownPrefix, modelLeaks, "10.1.2.3:9222")
				for _, r := range h.model.Requests() {
					if res, ok := r.ToolResult("s"); ok {
						book.CheckHidden(t, "tool result sent to the model", res, "Error: scrape failed: "+unknownPrefix, modelLeaks, "10.1.2.3:9222")
					}
				}
			})
		})
	}
}
