package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// TestJavaScriptSDKMonitor runs the official SDK's monitor calls
// (monitor.test.mjs) against the built server: a monitor over a local page
// that changes between two manual checks (the SDK test bumps it), then
// checks the signed monitor.page and monitor.check.completed webhooks the
// server sent.
func TestJavaScriptSDKMonitor(t *testing.T) {
	node := sdkNode(t, "@mendable/firecrawl-js")
	var version atomic.Int64
	version.Store(1)
	mux := http.NewServeMux()
	mux.HandleFunc("/price", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<html><head><title>Price</title></head><body><main><h1>Lamp</h1><p>Price: %d EUR</p><p>In stock.</p></main></body></html>", 10*version.Load())
	})
	mux.HandleFunc("/still", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html><body><main><p>Nothing changes here.</p></main></body></html>")
	})
	mux.HandleFunc("/bump", func(w http.ResponseWriter, r *http.Request) { version.Add(1) })
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><body><main><a href="/price">price</a> <a href="/still">still</a></main></body></html>`)
	})
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)
	hooks := &hookReceiver{}
	hookSrv := httptest.NewServer(hooks)
	t.Cleanup(hookSrv.Close)
	const secret = "monitor-secret"
	srv := startServer(t, "WEBHOOK_SECRET="+secret)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "monitor.test.mjs")
	cmd.Dir = "sdk"
	cmd.Env = append(os.Environ(), "API_URL="+srv.url, "API_KEY="+testKey,
		"PRICE_URL="+site.URL+"/price", "STILL_URL="+site.URL+"/still", "BUMP_URL="+site.URL+"/bump", "SITE_URL="+site.URL+"/",
		"HOOK_URL="+hookSrv.URL+"/monitor")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("SDK test failed: %v", err)
	}

	// Two checks of two pages: four monitor.page events and two
	// monitor.check.completed, all signed.
	ds := hooks.wait("/monitor", "monitor.check.completed", 2, 30*time.Second)
	checkSignatures(t, secret, ds)
	var statuses []string
	completed := 0
	for _, d := range ds {
		data, _ := d.event["data"].([]any)
		if len(data) != 1 {
			t.Errorf("%v: data %v", d.event["type"], d.event["data"])
			continue
		}
		item, _ := data[0].(map[string]any)
		switch d.event["type"] {
		case "monitor.page":
			statuses = append(statuses, fmt.Sprint(item["status"]))
			if item["checkId"] != d.event["id"] || item["monitorId"] == nil {
				t.Errorf("page event ids: %v", d.event)
			}
		case "monitor.check.completed":
			completed++
			if d.event["success"] != true || item["status"] != "completed" {
				t.Errorf("completed event: %v", d.event)
			}
		default:
			t.Errorf("unexpected event %v", d.event["type"])
		}
	}
	slices.Sort(statuses)
	if want := []string{"changed", "new", "new", "same"}; !slices.Equal(statuses, want) || completed != 2 {
		t.Errorf("page events %v (want %v), %d completed", statuses, want, completed)
	}
}
