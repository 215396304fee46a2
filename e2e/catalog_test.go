package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/testenv"
)

// catalogTools is an operator's tools on loopback: /daily answers a
// forecast; /slow waits until release is closed (the first call signals
// inSlow). Every call is counted by path.
type catalogTools struct {
	*httptest.Server
	mu      sync.Mutex
	calls   map[string]int
	inSlow  chan struct{}
	release chan struct{}
}

func newCatalogTools(t *testing.T) *catalogTools {
	ct := &catalogTools{calls: map[string]int{}, inSlow: make(chan struct{}, 10), release: make(chan struct{})}
	ct.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct.mu.Lock()
		ct.calls[r.URL.Path]++
		ct.mu.Unlock()
		var in map[string]any
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&in)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/daily":
			if r.Header.Get("Authorization") != "Bearer e2e-token" {
				http.Error(w, `{"error":"no token"}`, http.StatusUnauthorized)
				return
			}
			json.NewEncoder(w).Encode(map[string]any{"city": in["city"], "forecast": "sunny"})
		case "/slow":
			select {
			case ct.inSlow <- struct{}{}:
			default:
			}
			select {
			case <-ct.release:
			case <-r.Context().Done():
				return
			}
			json.NewEncoder(w).Encode(map[string]any{"done": true})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(func() {
		select {
		case <-ct.release:
		default:
			close(ct.release)
		}
		ct.Close()
	})
	return ct
}

func (ct *catalogTools) count(path string) int {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	return ct.calls[path]
}

// writeCatalog writes a YAML catalog of the tools and returns its path;
// pageHost is a domain of the weather tool (for domainTools).
func writeCatalog(t *testing.T, toolsURL, pageHost string) string {
	t.Helper()
	doc := fmt.Sprintf(`providers:
  - name: weather
    description: Forecasts by city
    capabilities:
      - path: forecast/daily
        description: Daily forecast for a city
        url: %[1]s/daily
        headers: {Authorization: "Bearer ${E2E_WEATHER_TOKEN}"}
        inputSchema: {type: object, required: [city], properties: {city: {type: string}}}
        credits: 2
        domains: [%[2]s]
      - path: forecast/slow
        url: %[1]s/slow
        credits: 1
`, toolsURL, pageHost)
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestJavaScriptSDKCatalog runs the official SDK's scrape({alexandria}),
// findTools and domainTools against the built server with a catalog file.
func TestJavaScriptSDKCatalog(t *testing.T) {
	node := sdkNode(t, "@mendable/firecrawl-js")
	site := targetSite(t)
	tools := newCatalogTools(t)
	host := strings.TrimPrefix(site.URL, "http://")
	host = host[:strings.LastIndex(host, ":")]
	srv := startServer(t, "CATALOG_FILE="+writeCatalog(t, tools.URL, host), "E2E_WEATHER_TOKEN=e2e-token")
	srv.cli(t, "limits", "set", "--team", "default", "--catalog", "--accept-third-party-terms")
	noTerms := srv.cli(t, "keys", "create", "--team", "sdk-no-terms")
	srv.cli(t, "limits", "set", "--team", "sdk-no-terms", "--catalog")
	off := srv.cli(t, "keys", "create", "--team", "sdk-off")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "catalog.test.mjs")
	cmd.Dir = "sdk"
	cmd.Env = append(os.Environ(), "API_URL="+srv.url, "API_KEY="+testKey, "NO_TERMS_KEY="+noTerms, "OFF_KEY="+off,
		"PAGE_URL="+site.URL+"/article")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("SDK test failed: %v", err)
	}
	if n := tools.count("/daily"); n != 1 {
		t.Errorf("the weather tool ran %d times, want 1 (the SDK's retry with the same requestId replays)", n)
	}
}

// catalogPost sends a catalog body with an x-request-id to a server.
func catalogPost(t *testing.T, base, requestID, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/v2/scrape", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", requestID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// TestCatalogKeyAfterKill: the server is SIGKILLed while a keyed catalog
// call is in flight; a new server on the same data answers the key with 503
// request_unresolved (after 409 while the dead owner's lease runs out)
// until the call's timeout has passed, then runs it once more and replays
// that answer afterwards.
func TestCatalogKeyAfterKill(t *testing.T) {
	tools := newCatalogTools(t)
	path := writeCatalog(t, tools.URL, "weather.example.com")
	first := startServer(t, "CATALOG_FILE="+path, "E2E_WEATHER_TOKEN=e2e-token")
	first.cli(t, "limits", "set", "--team", "default", "--catalog", "--accept-third-party-terms")
	var dataDir string
	for _, kv := range first.env {
		if v, ok := strings.CutPrefix(kv, "DATA_DIR="); ok {
			dataDir = v
		}
	}
	// The timeout leaves room for the second server to build and start
	// before the key becomes reclaimable.
	body := `{"catalog":{"provider":"weather","capability":"forecast/slow"},"timeout":20000}`
	killedReq, err := http.NewRequest(http.MethodPost, first.url+"/v2/scrape", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	killedReq.Header.Set("Authorization", "Bearer "+testKey)
	killedReq.Header.Set("X-Request-Id", "killed-1")
	go func() { // dies with the server
		if resp, err := http.DefaultClient.Do(killedReq); err == nil {
			resp.Body.Close()
		}
	}()
	select {
	case <-tools.inSlow:
	case <-time.After(30 * time.Second):
		t.Fatal("the call never reached the tool")
	}
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = first.cmd.Wait()
	close(tools.release)
	killedAt := time.Now()

	second := startServer(t, "CATALOG_FILE="+path, "E2E_WEATHER_TOKEN=e2e-token", "DATA_DIR="+dataDir)
	seen := map[string]int{}
	var final map[string]any
	if !testenv.WaitFor(60*time.Second, func() bool {
		status, got := catalogPost(t, second.url, "killed-1", body)
		code, _ := got["code"].(string)
		seen[fmt.Sprint(status, " ", code)]++
		if status == 200 {
			final = got
			return true
		}
		if (status != 409 || code != "request_in_flight") && (status != 503 || code != "request_unresolved") {
			t.Fatalf("after the restart: %d %v", status, got)
		}
		return false
	}) {
		t.Fatalf("the key was never resolved: %v", seen)
	}
	t.Logf("answers after the kill: %v; resolved %s after it", seen, time.Since(killedAt).Round(100*time.Millisecond))
	if seen["503 request_unresolved"] == 0 {
		t.Errorf("no 503 request_unresolved before the key was reclaimed: %v", seen)
	}
	if n := tools.count("/slow"); n != 2 {
		t.Errorf("the tool ran %d times, want 2 (the killed call, then once after the reclaim)", n)
	}
	r := final["data"].(map[string]any)["alexandria"].([]any)[0].(map[string]any)
	if fmt.Sprint(r["data"]) != "map[done:true]" {
		t.Errorf("the reclaimed call's result: %v", r)
	}
	for range 2 {
		status, got := catalogPost(t, second.url, "killed-1", body)
		if status != 200 || got["scrape_id"] != final["scrape_id"] {
			t.Errorf("replay: %d %v", status, got)
		}
	}
	if n := tools.count("/slow"); n != 2 {
		t.Errorf("replays ran the tool: %d calls", n)
	}
}
