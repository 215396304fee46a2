package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestJavaScriptSDKSandboxedPrograms runs the SDK's interact and
// browserExecute with node, python and bash programs against the built
// server with INTERACT_RUNTIMES=node,python,bash (sdk/sandbox.test.mjs):
// each runs in the bubblewrap sandbox, node with playwright-core on the
// session's page.
func TestJavaScriptSDKSandboxedPrograms(t *testing.T) {
	node := sdkNode(t, "playwright-core")
	for _, bin := range []string{"bwrap", "/usr/bin/python3", "/usr/bin/bash"} {
		if _, err := exec.LookPath(bin); err != nil || chromePath() == "" {
			if os.Getenv("REQUIRE_INTEGRATION") == "1" {
				t.Fatalf("%s or chromium is not installed: %v", bin, err)
			}
			t.Skipf("%s or chromium is not installed: %v", bin, err)
		}
	}
	mods, err := filepath.Abs("sdk/node_modules")
	if err != nil {
		t.Fatal(err)
	}
	site := targetSite(t)
	srv := startServer(t, "INTERACT_RUNTIMES=node,python,bash", "INTERACT_NODE_MODULES="+mods)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "--test-concurrency=1", "sandbox.test.mjs")
	cmd.Dir = "sdk"
	cmd.Env = append(os.Environ(), "API_URL="+srv.url, "API_KEY="+testKey, "FORM_URL="+site.URL+"/form")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("SDK test failed: %v", err)
	}
}
