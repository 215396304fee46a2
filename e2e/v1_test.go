package e2e

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestJavaScriptSDKv1 runs the 1.x SDK (npm @mendable/firecrawl-js@1,
// installed as firecrawl-js-v1) against the built server's /v1 routes.
func TestJavaScriptSDKv1(t *testing.T) {
	if _, err := os.Stat("sdk/node_modules/firecrawl-js-v1"); err != nil {
		if os.Getenv("REQUIRE_INTEGRATION") == "1" {
			t.Fatal("the 1.x SDK is not installed: run (cd e2e/sdk && npm install --engine-strict=false)")
		}
		t.Skip("the 1.x SDK is not installed: run (cd e2e/sdk && npm install --engine-strict=false)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("REQUIRE_INTEGRATION") == "1" {
			t.Fatal("node not found")
		}
		if os.Getenv("REQUIRE_INTEGRATION") == "1" {
			t.Fatal("node not found (REQUIRE_INTEGRATION=1, not skipping)")
		}
		t.Skip("node not found")
	}
	site := targetSite(t)
	srv := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "v1.test.mjs")
	cmd.Dir = "sdk"
	cmd.Env = append(os.Environ(), "API_URL="+srv.url, "API_KEY="+testKey, "PAGE_URL="+site.URL+"/article",
		"TEXT_URL="+site.URL+"/text")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("1.x SDK test failed: %v", err)
	}
}
