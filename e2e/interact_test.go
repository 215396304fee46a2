package e2e

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestJavaScriptSDKInteract runs the SDK's interact, stopInteraction,
// browser, browserExecute, listBrowsers and deleteBrowser against the built
// server with Chromium (sdk/interact.test.mjs).
func TestJavaScriptSDKInteract(t *testing.T) {
	node := sdkNode(t, "@mendable/firecrawl-js")
	if chromePath() == "" {
		if os.Getenv("REQUIRE_INTEGRATION") == "1" {
			t.Fatal("chromium is not installed")
		}
		t.Skip("chromium is not installed")
	}
	site := targetSite(t)
	srv := startServer(t, "INTERACT_MAX_SESSIONS_PER_TEAM=3")
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
}
