package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// api sends a JSON request with key and decodes the answer.
func api(t *testing.T, srv *server, method, path, key, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, srv.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	return resp.StatusCode, out
}

// cdpCall sends one DevTools command on c and returns the answer with
// its id (events before it are skipped).
func cdpCall(t *testing.T, ctx context.Context, c *websocket.Conn, id int, method string, params any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err := c.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		var m map[string]any
		if json.Unmarshal(data, &m) == nil && m["id"] == float64(id) {
			return m
		}
	}
}

// TestPlaywrightOverCDP connects Playwright (npm playwright-core), then
// Puppeteer (puppeteer-core), to a session's cdpUrl on the built server
// with Chromium (sdk/cdp.test.mjs): they see and drive only that session; another
// team's key cannot read the URL; a wrong token is refused; DELETE closes
// the connection.
func TestPlaywrightOverCDP(t *testing.T) {
	node := sdkNode(t, "playwright-core")
	sdkNode(t, "puppeteer-core")
	if chromePath() == "" {
		if os.Getenv("REQUIRE_INTEGRATION") == "1" {
			t.Fatal("chromium is not installed")
		}
		t.Skip("chromium is not installed")
	}
	site := targetSite(t)
	srv := startServer(t)
	other := srv.cli(t, "keys", "create", "--team", "cdp-other")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	code, a := api(t, srv, http.MethodPost, "/v2/interact", testKey, `{}`)
	if code != 200 {
		t.Fatalf("create A: %d %v", code, a)
	}
	idA, cdpA := a["id"].(string), a["cdpUrl"].(string)
	if !strings.HasPrefix(cdpA, "ws://127.0.0.1:") || !strings.Contains(cdpA, "/v2/interact/"+idA+"/cdp?token=") {
		t.Fatalf("cdpUrl of A: %q", cdpA)
	}
	_, token, _ := strings.Cut(cdpA, "?token=")
	code, b := api(t, srv, http.MethodPost, "/v2/browser", other, `{}`)
	if code != 200 {
		t.Fatalf("create B: %d %v", code, b)
	}
	cdpB := b["cdpUrl"].(string)

	// Another team's key never reads A's session or its URL.
	code, list := api(t, srv, http.MethodGet, "/v2/interact", other, "")
	if raw, _ := json.Marshal(list); code != 200 || strings.Contains(string(raw), idA) || strings.Contains(string(raw), token) {
		t.Errorf("team B's list: %d %s", code, raw)
	}
	code, list = api(t, srv, http.MethodGet, "/v2/interact?status=active", testKey, "")
	if raw, _ := json.Marshal(list); code != 200 || !strings.Contains(string(raw), cdpA) {
		t.Errorf("team A's list lacks its cdpUrl: %d %s", code, raw)
	}

	// B's page, as B's own client sees it.
	cb, _, err := websocket.Dial(ctx, cdpB, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := cdpCall(t, ctx, cb, 1, "Target.getTargets", map[string]any{})
	infos, _ := res["result"].(map[string]any)["targetInfos"].([]any)
	if len(infos) != 1 {
		t.Fatalf("B's targets: %v", res)
	}
	otherTarget := infos[0].(map[string]any)["targetId"].(string)
	cb.CloseNow()

	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "--test-concurrency=1", "cdp.test.mjs")
	cmd.Dir = "sdk"
	cmd.Env = append(os.Environ(), "CDP_URL="+cdpA, "BAD_CDP_URL="+strings.Replace(cdpA, token, strings.Repeat("0", len(token)), 1),
		"OTHER_TARGET="+otherTarget, "FORM_URL="+site.URL+"/form", "NEXT_URL="+site.URL+"/article")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("Playwright test failed: %v", err)
	}

	// What Playwright did is the session's page.
	code, ex := api(t, srv, http.MethodPost, "/v2/interact/"+idA+"/execute", testKey,
		`{"code":"console.log(await page.evaluate(() => document.getElementById('out').textContent))"}`)
	if code != 200 || ex["stdout"] != "You searched for playwright over cdp\n" {
		t.Errorf("execute after Playwright: %d %v", code, ex)
	}

	// DELETE closes a connected client.
	ca, _, err := websocket.Dial(ctx, cdpA, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.CloseNow()
	cdpCall(t, ctx, ca, 1, "Browser.getVersion", map[string]any{})
	if code, del := api(t, srv, http.MethodDelete, "/v2/interact/"+idA, testKey, ""); code != 200 {
		t.Fatalf("delete: %d %v", code, del)
	}
	for {
		if _, _, err = ca.Read(ctx); err != nil {
			break
		}
	}
	if websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("after DELETE: %v, want a going-away close", err)
	}
	resp, err := http.Get(strings.Replace(cdpA, "ws://", "http://", 1))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("cdpUrl after DELETE: %d, want 404", resp.StatusCode)
	}
}
