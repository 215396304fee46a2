package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/crawl/testsite"
	"github.com/firegate/firegate/internal/webhook"
)

// hookReceiver records webhook deliveries and checks their signatures.
type hookReceiver struct {
	secret string
	mu     sync.Mutex
	events []map[string]any
	bad    int
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var ev map[string]any
	_ = json.Unmarshal(body, &ev)
	h.mu.Lock()
	defer h.mu.Unlock()
	if !webhook.Verify(h.secret, body, r.Header.Get(webhook.SignatureHeader)) {
		h.bad++
	}
	h.events = append(h.events, ev)
}

// TestJavaScriptSDKJobs runs the SDK's crawl, batch scrape, map and watcher
// against the built server, whose webhooks go to a local receiver.
func TestJavaScriptSDKJobs(t *testing.T) {
	if _, err := os.Stat("sdk/node_modules/@mendable/firecrawl-js"); err != nil {
		if os.Getenv("REQUIRE_INTEGRATION") == "1" {
			t.Fatal("the SDK is not installed: run (cd e2e/sdk && npm install)")
		}
		t.Skip("the SDK is not installed: run (cd e2e/sdk && npm install)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found")
	}
	site := httptest.NewServer(testsite.New(testsite.Options{Pages: 60}))
	t.Cleanup(site.Close)
	slow := httptest.NewServer(testsite.New(testsite.Options{Pages: 60, LinkDelay: 500 * time.Millisecond}))
	t.Cleanup(slow.Close)
	hooks := &hookReceiver{secret: "e2e-secret"}
	hook := httptest.NewServer(hooks)
	t.Cleanup(hook.Close)
	srv := startServer(t, "WEBHOOK_SECRET="+hooks.secret)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--experimental-websocket", "--no-warnings", "--test", "--test-reporter=spec", "jobs.test.mjs")
	cmd.Dir = "sdk"
	cmd.Env = append(os.Environ(), "API_URL="+srv.url, "API_KEY="+testKey,
		"SITE_URL="+site.URL, "SLOW_URL="+slow.URL, "HOOK_URL="+hook.URL)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("SDK jobs test failed: %v", err)
	}

	// The crawl with a webhook: started, a page event per page, completed
	// last (it is sent a second after the last page), every one signed.
	deadline := time.Now().Add(15 * time.Second)
	for {
		hooks.mu.Lock()
		n := len(hooks.events)
		last := ""
		if n > 0 {
			last, _ = hooks.events[n-1]["type"].(string)
		}
		hooks.mu.Unlock()
		if last == "crawl.completed" || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	hooks.mu.Lock()
	defer hooks.mu.Unlock()
	if hooks.bad != 0 {
		t.Errorf("%d webhook deliveries with a bad signature", hooks.bad)
	}
	if len(hooks.events) < 3 {
		t.Fatalf("%d webhook events", len(hooks.events))
	}
	types := make([]string, len(hooks.events))
	pages := 0
	for i, ev := range hooks.events {
		types[i], _ = ev["type"].(string)
		if md, _ := ev["metadata"].(map[string]any); md["run"] != "sdk" {
			t.Errorf("event %d metadata %v", i, ev["metadata"])
		}
		if types[i] == "crawl.page" {
			pages++
		}
	}
	if types[0] != "crawl.started" || types[len(types)-1] != "crawl.completed" || pages != 25 {
		t.Errorf("events %s; want started, 25 pages, completed", strings.Join(types, " "))
	}
	if !strings.Contains(srv.logs.String(), "status=101") {
		t.Errorf("the watcher did not use the WebSocket")
	}
	resp, err := http.Get(srv.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	metrics, _ := io.ReadAll(resp.Body)
	for _, want := range []string{`firegate_job_pages_total{kind="crawl",state="done"}`, `firegate_job_pages_total{kind="batch",state="done"}`,
		`firegate_credits_charged_total{kind="crawl"}`, "firegate_queue_depth "} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
