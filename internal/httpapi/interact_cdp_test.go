package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
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

// TestInteractRecording: sessions are not recorded, and say so:
// recordSession true is refused naming the field, the replay routes answer
// 501 with a stable code.
func TestInteractRecording(t *testing.T) {
	s := interactServer(t, 2)
	rec, body := do(t, s, http.MethodPost, "/v2/interact", "fc-a", `{"recordSession":true}`)
	wantErr(t, "recordSession true", rec, body, 400, "INTERACT_RECORDING_NOT_SUPPORTED", "recordSession: false")
	if !strings.Contains(fmt.Sprint(body["details"]), "recordSession") {
		t.Errorf("details do not name recordSession: %v", body["details"])
	}
	rec, body = do(t, s, http.MethodPost, "/v2/interact", "fc-a", `{"recordSession":false}`)
	if rec.Code != 200 {
		t.Fatalf("recordSession false: %d %v", rec.Code, body)
	}
	id := body["id"].(string)
	t.Cleanup(func() { do(t, s, http.MethodDelete, "/v2/interact/"+id, "fc-a", "") })
	for _, path := range []string{"/v2/interact/" + id + "/replay", "/v2/browser/" + id + "/replay/page-1"} {
		rec, body = do(t, s, http.MethodGet, path, "fc-a", "")
		wantErr(t, path, rec, body, 501, "INTERACT_REPLAY_NOT_SUPPORTED", "not recorded")
	}
	rec, body = do(t, s, http.MethodGet, "/v2/interact/"+id+"/replay", "", "")
	if rec.Code != 401 {
		t.Errorf("replay without a key: %d %v", rec.Code, body)
	}
}
