package httpapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/firegate/firegate/internal/testenv"
)

// TestInteractCDPURL: a session's answers carry its cdpUrl (a WebSocket on
// this server with the session's token), which speaks DevTools to the
// session; a wrong token answers 404 in the error envelope, another team
// never sees the URL, and DELETE closes the connection.
func TestInteractCDPURL(t *testing.T) {
	s := interactServer(t, 2)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	rec, body := do(t, s, http.MethodPost, "/v2/interact", "fc-a", `{}`)
	if rec.Code != 200 {
		t.Fatalf("create: %d %v", rec.Code, body)
	}
	id := body["id"].(string)
	cdpURL, _ := body["cdpUrl"].(string)
	prefix := "ws://example.com/v2/interact/" + id + "/cdp?token="
	if !strings.HasPrefix(cdpURL, prefix) || len(cdpURL) != len(prefix)+64 {
		t.Fatalf("cdpUrl = %q, want %s<token>", cdpURL, prefix)
	}
	token := strings.TrimPrefix(cdpURL, prefix)
	rec, body = do(t, s, http.MethodGet, "/v2/interact", "fc-a", "")
	if sessions, _ := body["sessions"].([]any); rec.Code != 200 || len(sessions) != 1 || sessions[0].(map[string]any)["cdpUrl"] != cdpURL {
		t.Errorf("list: %d %v", rec.Code, body)
	}
	rec, body = do(t, s, http.MethodGet, "/v2/interact", "fc-b", "")
	if strings.Contains(fmt.Sprint(body), token) || strings.Contains(fmt.Sprint(body), id) {
		t.Errorf("team b's list shows team a's session: %d %v", rec.Code, body)
	}
	rec, body = do(t, s, http.MethodPost, "/v2/interact/"+id+"/execute", "fc-b", `{"code":"1"}`)
	if rec.Code != 404 || strings.Contains(fmt.Sprint(body), token) {
		t.Errorf("team b's execute: %d %v", rec.Code, body)
	}

	base := "ws" + strings.TrimPrefix(srv.URL, "http")
	for _, u := range []string{
		base + "/v2/interact/" + id + "/cdp?token=" + strings.Repeat("a", 64),
		base + "/v2/browser/" + id + "/cdp",
		base + "/v2/interact/not-a-session/cdp?token=" + token,
	} {
		_, resp, err := websocket.Dial(ctx, u, nil)
		if err == nil || resp == nil {
			t.Fatalf("dial %s: connected", u)
		}
		b, _ := io.ReadAll(resp.Body)
		var env map[string]any
		_ = json.Unmarshal(b, &env)
		if resp.StatusCode != 404 || env["success"] != false || env["code"] != "NOT_FOUND" {
			t.Errorf("dial %s: %d %s", u, resp.StatusCode, b)
		}
	}

	c, _, err := websocket.Dial(ctx, base+"/v2/browser/"+id+"/cdp?token="+token, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"id":1,"method":"Browser.getVersion"}`)); err != nil {
		t.Fatal(err)
	}
	_, msg, err := c.Read(ctx)
	if err != nil || !strings.Contains(string(msg), `"id":1`) || !strings.Contains(string(msg), `"product"`) {
		t.Fatalf("Browser.getVersion: %s %v", msg, err)
	}
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"id":2,"method":"Target.createBrowserContext","params":{}}`)); err != nil {
		t.Fatal(err)
	}
	if _, msg, err = c.Read(ctx); err != nil || !strings.Contains(string(msg), `"error"`) {
		t.Fatalf("Target.createBrowserContext: %s %v", msg, err)
	}

	rec, body = do(t, s, http.MethodDelete, "/v2/interact/"+id, "fc-a", "")
	if rec.Code != 200 {
		t.Fatalf("delete: %d %v", rec.Code, body)
	}
	_, _, err = c.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("after DELETE the connection read %v, want a going-away close", err)
	}
}

// TestInteractRecording: a session is recorded by default: the replay
// lists the pages it showed, each with JPEG snapshots; another team gets
// 404; a session opened with recordSession false, or by a team with zero
// data retention forced on, has no replay.
func TestInteractRecording(t *testing.T) {
	s := interactServer(t, 2)
	site := interactSite(t)
	rec, body := do(t, s, http.MethodPost, "/v2/interact", "fc-a", `{}`)
	if rec.Code != 200 {
		t.Fatalf("create: %d %v", rec.Code, body)
	}
	id := body["id"].(string)
	t.Cleanup(func() { do(t, s, http.MethodDelete, "/v2/interact/"+id, "fc-a", "") })
	code := fmt.Sprintf(`await page.goto(%q); await page.click('#b'); await page.goto(%q); console.log(await page.title())`, site.URL+"/one", site.URL+"/two")
	rec, body = do(t, s, http.MethodPost, "/v2/interact/"+id+"/execute", "fc-a", fmt.Sprintf(`{"code":%q}`, code))
	if rec.Code != 200 || body["stdout"] != "Counter\n" {
		t.Fatalf("execute: %d %v", rec.Code, body)
	}
	// Snapshots are taken after activity, by the session's recorder: wait
	// for the last page's.
	var pages []any
	if !testenv.WaitFor(30*time.Second, func() bool {
		rec, body = do(t, s, http.MethodGet, "/v2/interact/"+id+"/replay", "fc-a", "")
		if rec.Code != 200 {
			t.Fatalf("replay: %d %v", rec.Code, body)
		}
		pages, _ = body["pages"].([]any)
		n := len(pages)
		return n > 0 && strings.HasSuffix(fmt.Sprint(pages[n-1].(map[string]any)["url"]), "/two") && pages[n-1].(map[string]any)["frames"] != 0.0
	}) {
		t.Fatalf("no snapshot of /two in the replay: %v", body)
	}
	if body["id"] != id || body["status"] != "active" {
		t.Errorf("replay: %v", body)
	}
	// about:blank at open, then the two pages of the code.
	var urls []string
	for i, p := range pages {
		pm := p.(map[string]any)
		urls = append(urls, fmt.Sprint(pm["url"]))
		if pm["pageId"] != fmt.Sprint(i+1) || pm["startedAt"] == "" {
			t.Errorf("page %d: %v", i, pm)
		}
	}
	if len(urls) < 2 || !strings.HasSuffix(urls[len(urls)-1], "/two") || urls[len(urls)-1] == urls[len(urls)-2] {
		t.Errorf("pages %v, want the pages shown, /two last", urls)
	}
	last := pages[len(pages)-1].(map[string]any)
	rec, body = do(t, s, http.MethodGet, "/v2/browser/"+id+"/replay/"+last["pageId"].(string), "fc-a", "")
	if rec.Code != 200 {
		t.Fatalf("replay page: %d %v", rec.Code, body)
	}
	frames, _ := body["frames"].([]any)
	if page, _ := body["page"].(map[string]any); len(frames) == 0 || page["url"] != last["url"] || page["title"] != "Counter" {
		t.Fatalf("replay page: %v", body)
	}
	img, _ := frames[0].(map[string]any)["image"].(string)
	jpeg, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(img, "data:image/jpeg;base64,"))
	if err != nil || len(jpeg) < 100 || jpeg[0] != 0xff || jpeg[1] != 0xd8 {
		t.Errorf("frame is not a JPEG data URL: %.80s (%v)", img, err)
	}

	for _, tc := range []struct{ path, key, code string }{
		{"/v2/interact/" + id + "/replay", "fc-b", "NOT_FOUND"},
		{"/v2/interact/" + id + "/replay/1", "fc-b", "NOT_FOUND"},
		{"/v2/interact/" + id + "/replay/999", "fc-a", "NOT_FOUND"},
		{"/v2/interact/" + id + "/replay/first", "fc-a", "NOT_FOUND"},
		{"/v2/interact/not-a-session/replay", "fc-a", "NOT_FOUND"},
	} {
		rec, body = do(t, s, http.MethodGet, tc.path, tc.key, "")
		wantErr(t, tc.path+" "+tc.key, rec, body, 404, tc.code, "")
	}
	rec, body = do(t, s, http.MethodGet, "/v2/interact/"+id+"/replay", "", "")
	if rec.Code != 401 {
		t.Errorf("replay without a key: %d %v", rec.Code, body)
	}

	// Not recorded: recordSession false; a team with zero data retention.
	for _, key := range []string{"fc-a", "fc-z"} {
		req := `{"recordSession":false}`
		if key == "fc-z" {
			req = `{}`
		}
		rec, body = do(t, s, http.MethodPost, "/v2/interact", key, req)
		if rec.Code != 200 {
			t.Fatalf("create %s: %d %v", key, rec.Code, body)
		}
		other := body["id"].(string)
		rec, body = do(t, s, http.MethodGet, "/v2/interact/"+other+"/replay", key, "")
		wantErr(t, "unrecorded session of "+key, rec, body, 404, "REPLAY_NOT_FOUND", "no replay")
		do(t, s, http.MethodDelete, "/v2/interact/"+other, key, "")
	}

	// The recording outlives the session.
	do(t, s, http.MethodDelete, "/v2/interact/"+id, "fc-a", "")
	rec, body = do(t, s, http.MethodGet, "/v2/interact/"+id+"/replay", "fc-a", "")
	if p, _ := body["pages"].([]any); rec.Code != 200 || body["status"] != "destroyed" || len(p) != len(pages) {
		t.Errorf("replay after DELETE: %d %v", rec.Code, body)
	}
}
