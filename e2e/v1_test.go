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
	node := sdkNode(t, "firecrawl-js-v1")
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
