package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/actions"
	"github.com/firegate/firegate/internal/auth"
	"github.com/firegate/firegate/internal/browser"
	"github.com/firegate/firegate/internal/cache"
	"github.com/firegate/firegate/internal/interact"
	"github.com/firegate/firegate/internal/sandbox"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store/sqlite"
	"github.com/firegate/firegate/internal/testenv"
)

// Two teams with UUID ids (the session store keys teams by UUID).
const (
	interactTeamA = "0195e0a0-0000-7000-8000-00000000000a"
	interactTeamB = "0195e0a0-0000-7000-8000-00000000000b"
)

type twoTeams struct{}

func (twoTeams) Authenticate(_ context.Context, key string) (auth.Team, error) {
	switch key {
	case "fc-a":
		return auth.Team{ID: interactTeamA, Name: "a"}, nil
	case "fc-b":
		return auth.Team{ID: interactTeamB, Name: "b"}, nil
	case "fc-z": // zero data retention forced on
		t := auth.Team{ID: "0195e0a0-0000-7000-8000-00000000000c", Name: "z"}
		t.Limits.ZeroDataRetentionForced = true
		return t, nil
	}
	return auth.Team{}, auth.ErrInvalidKey
}

// docScraper answers every scrape with a document of its URL under a new
// scrape id.
type docScraper struct{}

func (docScraper) Scrape(_ context.Context, o scrape.Options) (*scrape.Document, error) {
	doc := &scrape.Document{}
	doc.Metadata.SourceURL, doc.Metadata.ScrapeID, doc.Metadata.StatusCode, doc.Metadata.CreditsUsed = o.URL, uuid.NewString(), 200, 1
	return doc, nil
}

var (
	interactPoolOnce sync.Once
	interactPool     *browser.Pool
)

func TestMain(m *testing.M) {
	interact.RunChildIfRequested() // interact code runs in a child process of this binary
	sandbox.RunInitIfRequested()   // and programs in a sandbox whose init it is
	code := m.Run()
	if interactPool != nil {
		if err := interactPool.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "close pool:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// interactServer is a Server with real sessions: Chrome, an SQLite store
// and the in-process cache.
func interactServer(t *testing.T, maxPerTeam int) *Server {
	t.Helper()
	return interactServerWith(t, maxPerTeam, nil)
}

// interactServerWith is interactServer with a code runner.
func interactServerWith(t *testing.T, maxPerTeam int, runner interact.Runner) *Server {
	t.Helper()
	path := testenv.ChromePath(t)
	interactPoolOnce.Do(func() {
		interactPool = browser.New(browser.Options{ChromePath: path, MaxTabs: 2, AllowPrivate: true, DevTools: true}, slog.New(slog.DiscardHandler))
	})
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "firegate.db"), testenv.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	m := interact.New(interact.Config{Store: st, Browser: interactPool, MaxPerTeam: maxPerTeam, Runner: runner, Log: testenv.Logger(t)})
	t.Cleanup(func() {
		m.Shutdown(context.Background())
		st.Close()
	})
	s := New(Deps{Scraper: docScraper{}, Auth: twoTeams{}, Results: cache.NewMemory(1 << 20), Interact: m, Log: testenv.Logger(t)})
	s.SetReady(true)
	return s
}

func interactSite(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><head><title>Counter</title></head><body><button id="b" onclick="this.dataset.n = (+this.dataset.n || 0) + 1; document.getElementById('n').textContent = this.dataset.n">+</button><p id="n">0</p></body></html>`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func wantErr(t *testing.T, what string, rec *httptest.ResponseRecorder, body map[string]any, status int, code, msg string) {
	t.Helper()
	if rec.Code != status || body["success"] != false || (code != "" && body["code"] != code) || !strings.Contains(fmt.Sprint(body["error"]), msg) {
		t.Errorf("%s: %d %v; want %d %s %q", what, rec.Code, body, status, code, msg)
	}
}

func TestScrapeInteract(t *testing.T) {
	s := interactServer(t, 5)
	site := interactSite(t)
	rec, body := do(t, s, http.MethodPost, "/v2/scrape", "fc-a",
		fmt.Sprintf(`{"url":%q,"actions":[{"type":"click","selector":"#b"},{"type":"click","selector":"#b"}]}`, site.URL+"/"))
	if rec.Code != 200 {
		t.Fatalf("scrape: %d %v", rec.Code, body)
	}
	id := body["data"].(map[string]any)["metadata"].(map[string]any)["scrapeId"].(string)
	path := "/v2/scrape/" + id + "/interact"

	// Bad bodies first: nothing is opened for them.
	for _, tc := range []struct {
		name, body, code, msg string
	}{
		{"empty", `{}`, "BAD_REQUEST", "Either 'code' or 'prompt' must be provided."},
		{"python", `{"code":"print(1)","language":"python"}`, "INTERACT_LANGUAGE_NOT_SUPPORTED", `"python" programs are not run by this server: the operator has not enabled them in INTERACT_RUNTIMES`},
		{"timeout", `{"code":"1","timeout":301}`, "BAD_REQUEST", ""},
		{"empty code", `{"code":""}`, "BAD_REQUEST", ""},
		{"prompt without model", `{"prompt":"click the button"}`, "SCRAPE_LLM_NOT_CONFIGURED", "language model"},
	} {
		rec, body := do(t, s, http.MethodPost, path, "fc-a", tc.body)
		wantErr(t, tc.name, rec, body, 400, tc.code, tc.msg)
	}

	// The first call replays the scrape (two clicks), the next reuses the
	// session.
	rec, body = do(t, s, http.MethodPost, path, "fc-a", `{"code":"console.log(await page.evaluate(() => document.getElementById('n').textContent)); await page.click('#b');"}`)
	if rec.Code != 200 || body["success"] != true || body["stdout"] != "2\n" || body["result"] != "2\n" || body["exitCode"] != 0.0 || body["killed"] != false {
		t.Fatalf("first interact: %d %v", rec.Code, body)
	}
	session := body["sessionId"].(string)
	rec, body = do(t, s, http.MethodPost, path, "fc-a", `{"code":"console.log(await page.title(), document === undefined)","language":"node","timeout":10}`)
	if rec.Code != 200 || body["success"] != false || body["exitCode"] != 1.0 || !strings.Contains(body["stderr"].(string), "document is not defined") {
		t.Errorf("code reading a page global: %d %v", rec.Code, body)
	}
	rec, body = do(t, s, http.MethodPost, path, "fc-a", `{"code":"console.log(await page.evaluate('document.getElementById(\"n\").textContent'))"}`)
	if rec.Code != 200 || body["stdout"] != "3\n" || body["sessionId"] != session {
		t.Errorf("second interact: %d %v (session %s)", rec.Code, body, session)
	}
	rec, body = do(t, s, http.MethodPost, path, "fc-a", `{"code":"while (true) {}","timeout":1}`)
	if rec.Code != 200 || body["success"] != false || body["killed"] != true {
		t.Errorf("endless code: %d %v", rec.Code, body)
	}

	// Another team sees neither the scrape nor the session.
	rec, body = do(t, s, http.MethodPost, path, "fc-b", `{"code":"console.log(1)"}`)
	wantErr(t, "other team", rec, body, 404, "NOT_FOUND", "Job not found.")
	rec, body = do(t, s, http.MethodDelete, path, "fc-b", "")
	wantErr(t, "other team delete", rec, body, 404, "NOT_FOUND", "Browser session not found.")
	rec, body = do(t, s, http.MethodPost, "/v2/scrape/"+uuid.NewString()+"/interact", "fc-a", `{"code":"1"}`)
	wantErr(t, "unknown scrape", rec, body, 404, "NOT_FOUND", "Job not found.")

	rec, body = do(t, s, http.MethodDelete, path, "fc-a", "")
	if rec.Code != 200 || body["success"] != true || body["creditsBilled"] != 2.0 || body["cleanupQueued"] != true {
		t.Fatalf("stop: %d %v", rec.Code, body)
	}
	if d, _ := body["sessionDurationMs"].(float64); d <= 0 {
		t.Errorf("sessionDurationMs %v", body["sessionDurationMs"])
	}
	rec, body = do(t, s, http.MethodPost, path, "fc-a", `{"code":"1"}`)
	wantErr(t, "after stop", rec, body, 410, "SESSION_DESTROYED", "Browser session has been destroyed.")
	rec, body = do(t, s, http.MethodDelete, path, "fc-a", "")
	wantErr(t, "stop again", rec, body, 410, "SESSION_DESTROYED", "Browser session has been destroyed.")

	// A scrape whose request was not kept cannot be replayed.
	zid := uuid.NewString()
	s.results.put(t.Context(), zid, interactTeamA, []byte(`{}`))
	rec, body = do(t, s, http.MethodPost, "/v2/scrape/"+zid+"/interact", "fc-a", `{"code":"1"}`)
	wantErr(t, "no replay data", rec, body, 409, "INTERACT_REPLAY_UNAVAILABLE", "cannot be replayed")
}

func TestBrowserSessions(t *testing.T) {
	s := interactServer(t, 2)
	site := interactSite(t)
	for _, tc := range []struct{ body, field string }{
		{`{"ttl":29}`, "ttl"}, {`{"ttl":3601}`, "ttl"}, {`{"activityTtl":9}`, "activityTtl"}, {`{"profile":{}}`, "name"}, {`{"bogus":1}`, "bogus"},
	} {
		rec, body := do(t, s, http.MethodPost, "/v2/browser", "fc-a", tc.body)
		if rec.Code != 400 || !strings.Contains(fmt.Sprint(body["details"]), tc.field) {
			t.Errorf("create %s: %d %v", tc.body, rec.Code, body)
		}
	}
	rec, body := do(t, s, http.MethodPost, "/v2/browser", "fc-a", `{"ttl":120,"activityTtl":60}`)
	if rec.Code != 200 || body["success"] != true {
		t.Fatalf("create: %d %v", rec.Code, body)
	}
	id := body["id"].(string)
	exp, err := time.Parse(time.RFC3339Nano, body["expiresAt"].(string))
	if err != nil || time.Until(exp) < 110*time.Second || time.Until(exp) > 121*time.Second {
		t.Errorf("expiresAt %v, %v", body["expiresAt"], err)
	}
	code := fmt.Sprintf(`await page.goto(%q); await page.click('#b'); console.log(await page.title(), await page.evaluate(() => document.getElementById('n').textContent))`, site.URL+"/")
	rec, body = do(t, s, http.MethodPost, "/v2/interact/"+id+"/execute", "fc-a", fmt.Sprintf(`{"code":%q,"language":"node"}`, code))
	if rec.Code != 200 || body["success"] != true || body["stdout"] != "Counter 1\n" {
		t.Fatalf("execute: %d %v", rec.Code, body)
	}
	rec, body = do(t, s, http.MethodPost, "/v2/browser/"+id+"/execute", "fc-a", `{"language":"node"}`)
	wantErr(t, "execute without code", rec, body, 400, "BAD_REQUEST", "")
	rec, body = do(t, s, http.MethodPost, "/v2/browser/"+id+"/execute", "fc-a", `{"code":"ls","language":"bash"}`)
	wantErr(t, "bash", rec, body, 400, "INTERACT_LANGUAGE_NOT_SUPPORTED", "bash")
	if d, _ := body["details"].([]any); len(d) != 1 || fmt.Sprint(d[0].(map[string]any)["path"]) != "[language]" || !strings.Contains(fmt.Sprint(d[0]), "INTERACT_RUNTIMES") {
		t.Errorf("bash: details %v", body["details"])
	}
	rec, body = do(t, s, http.MethodPost, "/v2/browser/"+id+"/execute", "fc-b", `{"code":"1"}`)
	wantErr(t, "other team execute", rec, body, 404, "NOT_FOUND", "Browser session not found.")
	rec, body = do(t, s, http.MethodDelete, "/v2/browser/"+id, "fc-b", "")
	wantErr(t, "other team delete", rec, body, 404, "NOT_FOUND", "Browser session not found.")
	rec, body = do(t, s, http.MethodPost, "/v2/browser/not-a-uuid/execute", "fc-a", `{"code":"1"}`)
	wantErr(t, "bad id", rec, body, 404, "NOT_FOUND", "Browser session not found.")

	// The cap: two active sessions per team here.
	rec, body = do(t, s, http.MethodPost, "/v2/interact", "fc-a", `{}`)
	if rec.Code != 200 {
		t.Fatalf("second session: %d %v", rec.Code, body)
	}
	second := body["id"].(string)
	rec, body = do(t, s, http.MethodPost, "/v2/interact", "fc-a", `{}`)
	wantErr(t, "third session", rec, body, 429, "TOO_MANY_SESSIONS", "maximum")
	// Team b has room of its own.
	rec, body = do(t, s, http.MethodPost, "/v2/browser", "fc-b", `{}`)
	if rec.Code != 200 {
		t.Errorf("team b session: %d %v", rec.Code, body)
	}

	rec, body = do(t, s, http.MethodGet, "/v2/browser?status=active", "fc-a", "")
	if sessions, _ := body["sessions"].([]any); rec.Code != 200 || len(sessions) != 2 {
		t.Fatalf("list active: %d %v", rec.Code, body)
	}
	rec, body = do(t, s, http.MethodDelete, "/v2/interact/"+id, "fc-a", "")
	if rec.Code != 200 || body["success"] != true || body["creditsBilled"] != 2.0 {
		t.Fatalf("delete: %d %v", rec.Code, body)
	}
	rec, body = do(t, s, http.MethodPost, "/v2/browser/"+id+"/execute", "fc-a", `{"code":"1"}`)
	wantErr(t, "execute after delete", rec, body, 410, "SESSION_DESTROYED", "Browser session has been destroyed.")
	rec, body = do(t, s, http.MethodGet, "/v2/interact?status=destroyed", "fc-a", "")
	sessions, _ := body["sessions"].([]any)
	if rec.Code != 200 || len(sessions) != 1 {
		t.Fatalf("list destroyed: %d %v", rec.Code, body)
	}
	if got := sessions[0].(map[string]any); got["id"] != id || got["status"] != "destroyed" || got["streamWebView"] != true || got["createdAt"] == "" || got["lastActivity"] == "" {
		t.Errorf("destroyed session: %v", got)
	}
	rec, body = do(t, s, http.MethodGet, "/v2/browser", "fc-a", "")
	if sessions, _ := body["sessions"].([]any); rec.Code != 200 || len(sessions) != 2 {
		t.Errorf("list all: %d %v", rec.Code, body)
	}
	rec, body = do(t, s, http.MethodGet, "/v2/browser?status=gone", "fc-a", "")
	wantErr(t, "bad status", rec, body, 400, "BAD_REQUEST", "status")
	// With one ended, there is room again.
	rec, body = do(t, s, http.MethodPost, "/v2/interact", "fc-a", `{}`)
	if rec.Code != 200 {
		t.Errorf("session after delete: %d %v", rec.Code, body)
	}
	_ = second
	// The ended session's replay (see TestInteractRecording) is kept.
	rec, body = do(t, s, http.MethodGet, "/v2/interact/"+id+"/replay", "fc-a", "")
	if rec.Code != 200 || body["status"] != "destroyed" {
		t.Errorf("replay: %d %v", rec.Code, body)
	}
}

func TestInteractNotConfigured(t *testing.T) {
	t.Parallel()
	s, _ := setup(t, &fakeScraper{})
	for _, p := range []string{"/v2/browser", "/v2/interact", "/v2/scrape/" + uuid.NewString() + "/interact"} {
		rec, body := do(t, s, http.MethodPost, p, goodKey, `{}`)
		wantErr(t, p, rec, body, 501, "NOT_IMPLEMENTED", "")
	}
}

// TestLiveView loads a session's interactive live view in headless Chrome:
// the page shows the stream's frames, and a click on the picture reaches
// the session's page. The view-only URL refuses input; a wrong token is 404.
func TestLiveView(t *testing.T) {
	s := interactServer(t, 5)
	api := httptest.NewServer(s)
	t.Cleanup(api.Close)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><body style="margin:0"><button id="b" style="width:100vw;height:100vh;font-size:80px" onclick="this.textContent = +this.textContent + 1">0</button></body></html>`)
	}))
	t.Cleanup(site.Close)
	call := func(method, path, body string) (int, map[string]any) {
		req, _ := http.NewRequest(method, api.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer fc-a")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	status, body := call(http.MethodPost, "/v2/browser", `{}`)
	if status != 200 {
		t.Fatalf("create: %d %v", status, body)
	}
	id := body["id"].(string)
	view, _ := body["liveViewUrl"].(string)
	interactive, _ := body["interactiveLiveViewUrl"].(string)
	if !strings.HasPrefix(view, api.URL+"/v2/interact/"+id+"/live?token=") || !strings.HasPrefix(interactive, api.URL+"/v2/interact/"+id+"/live?token=") || view == interactive {
		t.Fatalf("live URLs %q %q", view, interactive)
	}
	if status, body := call(http.MethodPost, "/v2/browser/"+id+"/execute", fmt.Sprintf(`{"code":%q}`, "await page.goto('"+site.URL+"')")); status != 200 || body["success"] != true {
		t.Fatalf("goto: %d %v", status, body)
	}

	// Input with the view-only token is refused; a wrong token is unknown.
	inputURL := func(u string) string { return strings.Replace(u, "/live?", "/live/input?", 1) }
	for _, tc := range []struct {
		url    string
		status int
	}{{inputURL(view), 403}, {inputURL(strings.Replace(view, "token=", "token=x", 1)), 404}, {api.URL + "/v2/interact/" + id + "/live/input", 404}} {
		resp, err := http.Post(tc.url, "application/json", strings.NewReader(`{"type":"click","x":10,"y":10}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("POST %s: %d, want %d", tc.url, resp.StatusCode, tc.status)
		}
	}
	if resp, err := http.Post(inputURL(interactive), "application/json", strings.NewReader(`{"type":"click","x":-1,"y":10}`)); err != nil || resp.StatusCode != 400 {
		t.Errorf("click outside the viewport: %v %v", resp.StatusCode, err)
	}
	// A key the browser does not know is named, without the Go package of
	// the error that refused it.
	if resp, err := http.Post(inputURL(interactive), "application/json", strings.NewReader(`{"type":"key","key":"NoSuchKey"}`)); err != nil {
		t.Error(err)
	} else {
		var got map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		const want = `The input could not be sent to the page: unknown key "NoSuchKey".`
		if resp.StatusCode != 400 || got["code"] != "LIVE_INPUT_FAILED" || got["error"] != want {
			t.Errorf("unknown key: %d %v; want 400 LIVE_INPUT_FAILED %q", resp.StatusCode, got, want)
		}
	}

	// The viewer, in a real headless Chrome: frames arrive, a click on the
	// picture's centre clicks the page's centre.
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	res, err := interactPool.Render(ctx, browser.Request{URL: interactive, Team: "viewer", Actions: []actions.Action{
		{Type: actions.TypeWait, Selector: "#v"},
		{Type: actions.TypeExecuteJavascript, Script: `await new Promise((ok, fail) => { const img = document.getElementById('v'); const t0 = Date.now();
  (function poll() { if (img.naturalWidth > 0) ok(); else if (Date.now() - t0 > 15000) fail(new Error('no frame')); else setTimeout(poll, 100); })(); });
  document.getElementById('v').naturalWidth`},
		{Type: actions.TypeClick, Selector: "#v"},
		{Type: actions.TypeWait, Milliseconds: 500},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if w, _ := res.Actions.JavascriptReturns[0].Value.(float64); w < 100 {
		t.Errorf("the live view's picture is %v pixels wide", res.Actions.JavascriptReturns[0].Value)
	}
	var clickStatus int
	var clickBody map[string]any
	if !testenv.WaitFor(10*time.Second, func() bool {
		clickStatus, clickBody = call(http.MethodPost, "/v2/browser/"+id+"/execute", `{"code":"console.log(await page.evaluate(() => document.getElementById('b').textContent))"}`)
		return clickStatus == 200 && clickBody["stdout"] == "1\n"
	}) {
		t.Fatalf("the click did not reach the page: %d %v", clickStatus, clickBody)
	}
	// The live URLs are listed with the active session, not after it ends.
	if _, body := call(http.MethodGet, "/v2/browser?status=active", ""); !strings.Contains(fmt.Sprint(body["sessions"]), interactive) {
		t.Errorf("list: %v", body)
	}
	call(http.MethodDelete, "/v2/browser/"+id, "")
	if resp, err := http.Get(view); err != nil || resp.StatusCode != 404 {
		t.Errorf("live view after delete: %v %v", resp.StatusCode, err)
	}
}
