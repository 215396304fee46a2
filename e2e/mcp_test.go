package e2e

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/search/searxngtest"
)

// TestMCPClient drives /mcp with the official MCP client library
// (@modelcontextprotocol/sdk): the tools scrape, crawl, batch scrape and
// search (a scripted SearXNG) a local site under the caller's key and
// credits, and give feedback the operator reads with the CLI.
func TestMCPClient(t *testing.T) {
	node := sdkNode(t, "@modelcontextprotocol/sdk")
	site := targetSite(t)
	engine := searxngtest.New(t, func(url.Values) searxngtest.Answer {
		return searxngtest.Answer{Results: []searxngtest.Result{{URL: site.URL + "/article", Title: "The Lighthouse Keeper", Content: "A story", Score: 1}}}
	})
	srv := startServer(t, "SEARXNG_ENDPOINT="+engine.URL)

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
	// The feedback the tools gave is the operator's to read.
	list := srv.cli(t, "feedback", "list")
	if !strings.Contains(list, "mcp-limited") || !strings.Contains(list, "clean markdown") || !strings.Contains(list, "search") {
		t.Errorf("feedback list:\n%s", list)
	}
}
