package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/llm/llmtest"
)

// scriptedModel answers like a model that read the lighthouse article:
// from the schema's properties for json, from the instructions otherwise.
func scriptedModel(w http.ResponseWriter, r llmtest.Request) {
	sys := r.System()
	switch {
	case strings.Contains(sys, "reusable extraction recipe"):
		llmtest.Write(w, `{"fields":{"title":{"selector":"article h1"},"tags":{"selector":"a.tag","many":true}}}`, nil)
	case strings.Contains(sys, "Summarize"):
		llmtest.Write(w, "A keeper tends a lighthouse lamp for forty years.", nil)
	case strings.Contains(sys, "Question: How long"):
		llmtest.Write(w, "Forty years.", &llmtest.Usage{PromptTokens: 150, CompletionTokens: 3})
	case strings.Contains(sys, "Query: ships"):
		llmtest.Write(w, "Ships passed in the night and never knew her name, but they knew her light.", nil)
	case strings.Contains(sys, "personal data"):
		llmtest.Write(w, `{"persons":[],"locations":["the grey water"]}`, nil) // a place in its reading
	case strings.Contains(sys, "Which sea words"):
		llmtest.Write(w, `{"words":["sea","storm"]}`, nil)
	case strings.Contains(string(r.ResponseFormat), `"keeper"`):
		llmtest.Write(w, `{"keeper":"she","years":40}`, nil)
	case strings.Contains(string(r.ResponseFormat), `"tags"`):
		llmtest.Write(w, `{"tags":["sea","night"]}`, &llmtest.Usage{PromptTokens: 140, CompletionTokens: 10})
	default:
		llmtest.Write(w, `{"unexpected":true}`, nil)
	}
}

// TestJavaScriptSDKLanguageModel runs the SDK's scrape (json from a zod and
// a plain schema, summary, question, highlights), extract and token usage
// against the built server, whose OPENAI_BASE_URL is a scripted endpoint on
// loopback, then checks what the model was sent.
func TestJavaScriptSDKLanguageModel(t *testing.T) {
	node := sdkNode(t, "zod")
	site := targetSite(t)
	model := llmtest.NewReplying(t, scriptedModel)
	srv := startServer(t, "OPENAI_BASE_URL="+model.BaseURL, "MODEL_NAME=scripted", "OPENAI_API_KEY=sk-e2e")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "llm.test.mjs")
	cmd.Dir = "sdk"
	limited := srv.cli(t, "keys", "create", "--team", "sdk-llm-limited", "--credits", "1000")
	cmd.Env = append(os.Environ(), "API_URL="+srv.url, "API_KEY="+testKey, "LIMITED_KEY="+limited, "PAGE_URL="+site.URL+"/article")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("SDK test failed: %v", err)
	}

	var sawZod bool
	recipes := 0
	for _, r := range model.Requests() {
		if strings.Contains(r.System(), "reusable extraction recipe") {
			recipes++
		}
		if r.Model != "scripted" || r.Auth != "Bearer sk-e2e" {
			t.Errorf("model %q auth %q", r.Model, r.Auth)
		}
		if !strings.Contains(r.LastUser(), "For forty years she kept the lamp burning") || strings.Contains(r.System(), "forty years she kept") {
			t.Errorf("the page is not (only) in the data message: system %q", r.System())
		}
		var rf struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Schema map[string]any `json:"schema"`
			} `json:"json_schema"`
		}
		if len(r.ResponseFormat) > 0 {
			json.Unmarshal(r.ResponseFormat, &rf)
			props, _ := rf.JSONSchema.Schema["properties"].(map[string]any)
			if _, ok := props["keeper"]; ok && rf.Type == "json_schema" {
				_, years := props["years"]
				sawZod = sawZod || years && strings.Contains(r.System(), "Who kept the lamp")
			}
		}
	}
	if recipes != 1 {
		t.Errorf("%d deterministicJson recipe calls, want 1 (the second scrape reuses it)", recipes)
	}
	if !sawZod {
		t.Error("the zod schema and prompt did not reach the model as response_format json_schema")
	}
}
