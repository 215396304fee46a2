package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/llm/llmtest"
	"github.com/firegate/firegate/internal/search/searxngtest"
	"github.com/firegate/firegate/internal/testenv"
)

// agentModel scripts the server's model for agent.test.mjs by the prompt
// and the turn (the assistant messages so far).
func agentModel(pageURL, slowURL string) llmtest.Step {
	return func(w http.ResponseWriter, r llmtest.Request) {
		task := r.Messages[1].Content
		turn := 0
		for _, m := range r.Messages {
			if m.Role == "assistant" {
				turn++
			}
		}
		usage := &llmtest.Usage{PromptTokens: 90, CompletionTokens: 15}
		switch {
		case strings.Contains(task, "slow"):
			llmtest.WriteToolCalls(w, usage, llmtest.Call("s", "scrape", map[string]any{"url": slowURL}))
		case strings.Contains(task, "expensive"):
			llmtest.WriteToolCalls(w, &llmtest.Usage{PromptTokens: 300}, llmtest.Call("s", "scrape", map[string]any{"url": pageURL}))
		case turn == 0:
			llmtest.WriteToolCalls(w, usage, llmtest.Call("q", "search", map[string]any{"query": "lighthouse keeper"}))
		case turn == 1:
			res, _ := r.ToolResult("q")
			var hits []struct{ URL string }
			_ = json.Unmarshal([]byte(res), &hits)
			if len(hits) == 0 {
				llmtest.Status(http.StatusBadRequest, "")(w, r)
				return
			}
			llmtest.WriteToolCalls(w, usage, llmtest.Call("p", "scrape", map[string]any{"url": hits[0].URL}))
		default:
			page, _ := r.ToolResult("p")
			if !strings.Contains(page, "For forty years she kept the lamp burning") {
				llmtest.Status(http.StatusBadRequest, "")(w, r)
				return
			}
			llmtest.WriteToolCalls(w, usage, llmtest.Call("f", "finish", map[string]any{"data": map[string]any{"keeper": "she", "years": 40}}))
		}
	}
}

// TestJavaScriptSDKAgent runs the official SDK's agent calls against the
// built server, with a scripted model, a scripted SearXNG and local pages,
// then checks the webhooks the run sent.
func TestJavaScriptSDKAgent(t *testing.T) {
	node := sdkNode(t, "@mendable/firecrawl-js")
	site := targetSite(t)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(slow.Close)
	var (
		mu    sync.Mutex
		hooks []map[string]any
	)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		mu.Lock()
		hooks = append(hooks, m)
		mu.Unlock()
	}))
	t.Cleanup(hook.Close)
	engine := searxngtest.New(t, func(q url.Values) searxngtest.Answer {
		return searxngtest.Answer{Results: []searxngtest.Result{{URL: site.URL + "/article", Title: "The Lighthouse Keeper", Score: 1}}}
	})
	model := llmtest.NewReplying(t, agentModel(site.URL+"/article", slow.URL+"/slow"))
	srv := startServer(t, "OPENAI_BASE_URL="+model.BaseURL, "MODEL_NAME=scripted", "SEARXNG_ENDPOINT="+engine.URL)
	other := srv.cli(t, "keys", "create", "--team", "sdk-agent-other")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "agent.test.mjs")
	cmd.Dir = "sdk"
	cmd.Env = append(os.Environ(), "API_URL="+srv.url, "API_KEY="+testKey, "OTHER_KEY="+other, "HOOK_URL="+hook.URL)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("SDK test failed: %v", err)
	}

	// The started and completed webhooks of the first run, and nothing
	// else (its events filter leaves action out).
	var types []string
	if !testenv.WaitFor(15*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		types = types[:0]
		for _, h := range hooks {
			types = append(types, h["type"].(string))
		}
		return len(types) >= 2
	}) {
		t.Fatalf("webhooks = %v, want agent.started and agent.completed", types)
	}
	if strings.Join(types, ",") != "agent.started,agent.completed" {
		t.Errorf("webhooks = %v", types)
	}
	mu.Lock()
	done := hooks[1]
	mu.Unlock()
	data, _ := done["data"].([]any)
	if len(data) != 1 || done["success"] != true {
		t.Fatalf("completed webhook = %v", done)
	}
	if d := data[0].(map[string]any); d["creditsUsed"].(float64) <= 0 || d["data"].(map[string]any)["years"] != float64(40) {
		t.Errorf("completed webhook data = %v", d)
	}
}

// TestAgentWorkerKilled: the server is SIGKILLed while a run's step waits
// for the model; a new server on the same data directory finds the dead
// worker (its heartbeat stops), hands the step back to the queue and the
// run resumes and completes instead of staying processing.
func TestAgentWorkerKilled(t *testing.T) {
	inFlight := make(chan struct{}, 1)
	release := make(chan struct{})
	var (
		mu    sync.Mutex
		calls int
	)
	model := llmtest.NewReplying(t, func(w http.ResponseWriter, r llmtest.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 {
			inFlight <- struct{}{}
			<-release // the server dies meanwhile
			return
		}
		llmtest.WriteToolCalls(w, nil, llmtest.Call("f", "finish", map[string]any{"data": "resumed"}))
	})
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	first := startServer(t, "OPENAI_BASE_URL="+model.BaseURL, "MODEL_NAME=scripted")
	var dataDir string
	for _, kv := range first.env {
		if v, ok := strings.CutPrefix(kv, "DATA_DIR="); ok {
			dataDir = v
		}
	}
	id := agentCall(t, first.url, http.MethodPost, "/v2/agent", `{"prompt":"survive"}`)["id"].(string)
	select {
	case <-inFlight:
	case <-time.After(30 * time.Second):
		t.Fatal("the run's first step never reached the model")
	}
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = first.cmd.Wait()
	close(release)

	second := startServer(t, "OPENAI_BASE_URL="+model.BaseURL, "MODEL_NAME=scripted", "DATA_DIR="+dataDir)
	var st map[string]any
	if !testenv.WaitFor(90*time.Second, func() bool {
		st = agentCall(t, second.url, http.MethodGet, "/v2/agent/"+id, "")
		return st["status"] != "processing"
	}) {
		t.Fatalf("run still processing %s after the restart", 90*time.Second)
	}
	if st["status"] != "completed" || st["data"] != "resumed" {
		t.Fatalf("after the restart: %v", st)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 2 {
		t.Errorf("model calls = %d, want 2 (the killed step, then its retry)", calls)
	}
}

// agentCall sends a request with the test key and decodes the answer.
func agentCall(t *testing.T, base, method, path, body string) map[string]any {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%s %s: %d %v %v", method, path, resp.StatusCode, m, err)
	}
	return m
}
