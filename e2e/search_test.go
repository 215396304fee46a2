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

// TestJavaScriptSDKSearch runs the official SDK's search() against the
// built server, whose SEARXNG_ENDPOINT is a scripted SearXNG on loopback
// answering with pages of a local site; the test also checks what the
// server asked the engine.
func TestJavaScriptSDKSearch(t *testing.T) {
	node := sdkNode(t, "@mendable/firecrawl-js")
	site := targetSite(t)
	pageURL, missingURL, downURL := site.URL+"/article", site.URL+"/missing", "http://127.0.0.1:1/down"
	engine := searxngtest.New(t, func(q url.Values) searxngtest.Answer {
		switch q.Get("categories") {
		case "news":
			return searxngtest.Answer{Results: []searxngtest.Result{{URL: pageURL, Title: "Keeper", Content: "Keeper in the news", Score: 1}}}
		case "images":
			return searxngtest.Answer{Results: []searxngtest.Result{{URL: pageURL, Title: "Lamp", ImgSrc: site.URL + "/lamp.jpg",
				Resolution: "800x600", Score: 1}}}
		}
		return searxngtest.Answer{Results: []searxngtest.Result{
			{URL: downURL, Title: "Down", Content: "nothing listens", Score: 1},
			{URL: pageURL, Title: "The Lighthouse Keeper (search)", Content: "A story about a lamp.", Score: 3},
			{URL: missingURL, Title: "Missing", Content: "gone", Score: 2},
			{URL: pageURL + "#top", Title: "duplicate", Score: 0.5},
		}}
	})
	srv := startServer(t, "SEARXNG_ENDPOINT="+engine.URL)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	limited := srv.cli(t, "keys", "create", "--team", "sdk-search", "--credits", "100")
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "search.test.mjs")
	cmd.Dir = "sdk"
	cmd.Env = append(os.Environ(), "API_URL="+srv.url, "API_KEY="+testKey, "LIMITED_KEY="+limited,
		"PAGE_URL="+pageURL, "MISSING_URL="+missingURL, "DOWN_URL="+downURL)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("SDK test failed: %v", err)
	}

	// The SDK's options reached the engine as SearXNG parameters.
	var sawNews, sawGitHub bool
	for _, c := range engine.Calls() {
		if c.Get("format") != "json" || c.Get("pageno") == "" || c.Get("safesearch") != "0" {
			t.Errorf("call %v", c)
		}
		if c.Get("categories") == "news" && c.Get("time_range") == "week" && c.Get("language") == "en-DE" && c.Get("q") == "lighthouse keeper" {
			sawNews = true
		}
		if c.Get("categories") == "general" && strings.Contains(c.Get("q"), "site:github.com") {
			sawGitHub = true
		}
	}
	if !sawNews || !sawGitHub {
		t.Errorf("engine calls (news with tbs and country: %v, github category: %v): %v", sawNews, sawGitHub, engine.Calls())
	}
}
