package e2e

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestMCPClient drives /mcp with the official MCP client library
// (@modelcontextprotocol/sdk): the tools scrape, crawl and batch scrape a
// local site under the caller's key and credits.
func TestMCPClient(t *testing.T) {
	node := sdkNode(t, "@modelcontextprotocol/sdk")
	site := targetSite(t)
	srv := startServer(t)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	limited := srv.cli(t, "keys", "create", "--team", "mcp-limited", "--credits", "100")
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "mcp.test.mjs")
	cmd.Dir = "sdk"
	cmd.Env = append(os.Environ(), "API_URL="+srv.url, "API_KEY="+testKey, "LIMITED_KEY="+limited,
		"PAGE_URL="+site.URL+"/article", "TEXT_URL="+site.URL+"/text")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("MCP client test failed: %v", err)
	}
}
