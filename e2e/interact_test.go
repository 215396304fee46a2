package e2e

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/llm/llmtest"
)

// searchAgent is a scripted model driving a prompt session: it types
// "harbours" into the search box it finds in the observed page, presses
// Enter, and reports what the page then says.
func searchAgent(w http.ResponseWriter, r llmtest.Request) {
	in := r.LastUser()
	box := regexp.MustCompile(`\[(\d+)\] textbox:text`).FindStringSubmatch(in)
	switch {
	case strings.Contains(in, "You searched for harbours"):
		llmtest.Write(w, `{"action":"done","output":"The page now says: You searched for harbours"}`, nil)
	case box != nil && !strings.Contains(in, `"action":"type"`):
		llmtest.Write(w, `{"action":"type","ref":`+box[1]+`,"text":"harbours"}`, nil)
	case box != nil:
		llmtest.Write(w, `{"action":"press","ref":`+box[1]+`,"key":"Enter"}`, nil)
	default:
		llmtest.Write(w, `{"action":"done","output":"no search box"}`, nil)
	}
}

// TestJavaScriptSDKInteract runs the SDK's interact, stopInteraction,
// browser, browserExecute, listBrowsers and deleteBrowser against the built
// server with Chromium (sdk/interact.test.mjs); prompts are driven by a
// scripted model.
func TestJavaScriptSDKInteract(t *testing.T) {
	node := sdkNode(t, "@mendable/firecrawl-js")
	if chromePath() == "" {
		if os.Getenv("REQUIRE_INTEGRATION") == "1" {
			t.Fatal("chromium is not installed")
		}
		t.Skip("chromium is not installed")
	}
	site := targetSite(t)
	model := llmtest.NewReplying(t, searchAgent)
	srv := startServer(t, "INTERACT_MAX_SESSIONS_PER_TEAM=3", "OPENAI_BASE_URL="+model.BaseURL, "MODEL_NAME=scripted", "OPENAI_API_KEY=sk-e2e")
	other := srv.cli(t, "keys", "create", "--team", "sdk-interact-other")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "--test-concurrency=1", "interact.test.mjs")
	cmd.Dir = "sdk"
	cmd.Env = append(os.Environ(), "API_URL="+srv.url, "API_KEY="+testKey, "OTHER_KEY="+other,
		"FORM_URL="+site.URL+"/form", "MAX_SESSIONS=3")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("SDK test failed: %v", err)
	}
	if n := len(model.Requests()); n != 3 {
		t.Errorf("the model was called %d times, want 3 (type, press, done)", n)
	}
}
