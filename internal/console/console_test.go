package console_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/console"
	"github.com/firegate/firegate/internal/console/consoletest"
)

const goodKey = "fc-00000000000000000000000000000001"

// fakeAPI serves the console and a scripted /v2: the good key is accepted
// until revoked; the scrape answer is whatever scrape holds.
type fakeAPI struct {
	revoked atomic.Bool
	scrape  atomic.Value // func(w http.ResponseWriter)
}

func (f *fakeAPI) handler() http.Handler {
	mux := http.NewServeMux()
	c := console.New(console.Options{})
	mux.Handle("/console", c)
	mux.Handle("/console/", c)
	writeJSON := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("/v2/", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+goodKey || f.revoked.Load() {
			writeJSON(w, http.StatusUnauthorized, map[string]any{"success": false, "error": "Unauthorized: Invalid token"})
			return
		}
		switch r.URL.Path {
		case "/v2/team/credit-usage":
			writeJSON(w, 200, map[string]any{"success": true, "data": map[string]any{"remainingCredits": 1234, "planCredits": 2000, "unlimited": false}})
		case "/v2/team/credit-usage/historical", "/v2/team/token-usage/historical":
			writeJSON(w, 200, map[string]any{"success": true, "periods": []any{}})
		case "/v2/team/activity":
			writeJSON(w, 200, map[string]any{"success": true, "data": []any{}})
		case "/v2/scrape":
			f.scrape.Load().(func(http.ResponseWriter))(w)
		default:
			writeJSON(w, 404, map[string]any{"success": false, "error": "Not Found", "code": "NOT_FOUND"})
		}
	})
	return mux
}

func setup(t *testing.T) (*fakeAPI, *httptest.Server, *consoletest.Browser) {
	t.Helper()
	f := &fakeAPI{}
	f.scrape.Store(func(w http.ResponseWriter) { http.Error(w, "no", 500) })
	srv := httptest.NewServer(f.handler())
	t.Cleanup(srv.Close)
	b := consoletest.New(t, time.Minute)
	b.Open(srv.URL + "/console")
	return f, srv, b
}

func TestHandlerHeaders(t *testing.T) {
	t.Parallel()
	h := console.New(console.Options{PublicURL: "https://media.example.com:8443/base"})
	for _, tt := range []struct {
		path, ctype string
		status      int
	}{
		{"/console", "text/html; charset=utf-8", 200},
		{"/console/", "text/html; charset=utf-8", 200},
		{"/console/assets/console.js", "text/javascript; charset=utf-8", 200},
		{"/console/assets/markdown.js", "text/javascript; charset=utf-8", 200},
		{"/console/assets/console.css", "text/css; charset=utf-8", 200},
		{"/console/assets/../console.go", "", 404},
		{"/console/assets/nope.js", "", 404},
		{"/console/other", "", 404},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
		if rec.Code != tt.status || (tt.ctype != "" && rec.Header().Get("Content-Type") != tt.ctype) {
			t.Errorf("%s: %d %q, want %d %q", tt.path, rec.Code, rec.Header().Get("Content-Type"), tt.status, tt.ctype)
		}
		csp := rec.Header().Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "img-src 'self' data: https://media.example.com:8443;"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", tt.path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe") {
			t.Errorf("%s: CSP %q allows unsafe sources", tt.path, csp)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/console", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /console: %d, want 405", rec.Code)
	}
	// The assets revalidate by ETag.
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/console/assets/console.js", nil))
	req := httptest.NewRequest(http.MethodGet, "/console/assets/console.js", nil)
	req.Header.Set("If-None-Match", rec.Header().Get("ETag"))
	rec2 := httptest.NewRecorder()
	h.ServeHTTP(rec2, req)
	if rec.Header().Get("ETag") == "" || rec2.Code != http.StatusNotModified {
		t.Errorf("revalidation: ETag %q, then %d, want 304", rec.Header().Get("ETag"), rec2.Code)
	}
}

// TestAssetsBuildNoHTML: the script never turns text into HTML (no
// innerHTML, outerHTML, insertAdjacentHTML, document.write, eval), so
// nothing a scraped page or the server says can become markup or code.
func TestAssetsBuildNoHTML(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"assets/console.js", "assets/markdown.js"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"} {
			if strings.Contains(string(b), bad) {
				t.Errorf("%s uses %s", name, bad)
			}
		}
	}
}

// TestBadKey: a key the server refuses gives a clear message on the
// sign-in form and nothing else opens.
func TestBadKey(t *testing.T) {
	t.Parallel()
	_, _, b := setup(t)
	b.SignIn("fc-wrong", "")
	b.WaitText("#signin-msg", "This API key is not accepted by the server")
	if consoletest.Eval[bool](b, `!document.getElementById('view-overview').hidden || sessionStorage.length > 0`) {
		t.Error("a refused key opened the console or was kept")
	}
	// A missing operator view is said as such.
	b.SignIn("", "some-operator-key")
	b.WaitText("#signin-msg", "This server has no operator view: ADMIN_API_KEY is not set.")
	b.NoCSPViolations()
}

// TestSignInShowsCredits: the good key opens the overview with the
// team's credit figures, and the key is in sessionStorage only (not in
// the URL, not in a cookie).
func TestSignInShowsCredits(t *testing.T) {
	t.Parallel()
	_, _, b := setup(t)
	b.SignIn(goodKey, "")
	b.WaitText("#credits-left", "1,234")
	b.WaitText("#credits-used", "766")
	got := consoletest.Eval[[]string](b, `[sessionStorage.getItem('firegate.key'), location.href, document.cookie, localStorage.length + '']`)
	if got[0] != goodKey || strings.Contains(got[1], goodKey) || got[2] != "" || got[3] != "0" {
		t.Errorf("key storage: session %q, url %q, cookie %q, localStorage %s", got[0], got[1], got[2], got[3])
	}
	b.NoCSPViolations()
}

// TestExpiredSession: a session idle for over an hour is ended on load
// with a message, and the key is forgotten.
func TestExpiredSession(t *testing.T) {
	t.Parallel()
	_, _, b := setup(t)
	b.SignIn(goodKey, "")
	b.WaitText("#credits-left", "1,234")
	consoletest.Eval[bool](b, `sessionStorage.setItem('firegate.seen', String(Date.now() - 2 * 3600 * 1000)) || true`)
	b.Reload()
	b.WaitText("#banner", "Your session expired after an hour without use. Sign in again.")
	b.WaitText("#signin h2", "Sign in")
	if k := consoletest.Eval[string](b, `sessionStorage.getItem('firegate.key') || ''`); k != "" {
		t.Errorf("expired session kept the key %q", k)
	}
}

// TestRevokedKey: a key the server stops accepting mid-session ends the
// session with a message, not a blank page.
func TestRevokedKey(t *testing.T) {
	t.Parallel()
	f, _, b := setup(t)
	b.SignIn(goodKey, "")
	b.WaitText("#credits-left", "1,234")
	f.revoked.Store(true)
	b.Click(`#nav [data-view="jobs"]`)
	b.WaitText("#banner", "The server no longer accepts your API key")
	b.WaitText("#signin h2", "Sign in")
}

// TestServerErrors: a 500 in the envelope, a 502 from a proxy with an HTML
// body and a server that is gone each show a sentence saying so.
func TestServerErrors(t *testing.T) {
	t.Parallel()
	f, srv, b := setup(t)
	b.SignIn(goodKey, "")
	b.WaitText("#credits-left", "1,234")
	b.Click(`#nav [data-view="playground"]`)
	b.Type("#pg-url", "https://example.com/")

	f.scrape.Store(func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "req123")
		w.WriteHeader(500)
		io.WriteString(w, `{"success":false,"code":"UNKNOWN_ERROR","error":"An unexpected error occurred."}`)
	})
	b.Click("#pg-run")
	b.WaitText("#pg-msg", "The server failed (500 UNKNOWN_ERROR): An unexpected error occurred. Request id req123")

	f.scrape.Store(func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(502)
		io.WriteString(w, `<html><body><h1>502 Bad Gateway</h1></body></html>`)
	})
	b.Click("#pg-run")
	b.WaitText("#pg-msg", "The server sent 502 Bad Gateway without a JSON body for POST /v2/scrape.")

	srv.CloseClientConnections()
	srv.Listener.Close()
	b.Click("#pg-run")
	b.WaitText("#pg-msg", "Cannot reach the server at "+srv.URL)
	b.NoCSPViolations()
}

// TestMarkdownIsRenderedSafely: scraped markdown with HTML, script and
// javascript: links is shown as text and safe links; nothing runs.
func TestMarkdownIsRenderedSafely(t *testing.T) {
	t.Parallel()
	f, _, b := setup(t)
	md := "# Title <b>bold?</b>\n\nSome **strong** and *em* text with `code` and a [good link](https://example.com/a) and a [bad link](javascript:window.pwned=1).\n\n" +
		"<img src=x onerror=\"window.pwned=2\">\n\n<script>window.pwned=3</script>\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\n<script>window.pwned=4</script>\n```\n\n![pic](https://example.com/p.png)\n"
	doc, _ := json.Marshal(map[string]any{"success": true, "data": map[string]any{
		"markdown": md, "html": "<p onclick=\"window.pwned=5\">x</p><script>window.pwned=6</script>",
		"links":    []string{"https://example.com/a", "javascript:window.pwned=7"},
		"metadata": map[string]any{"title": "<script>window.pwned=8</script>", "url": "https://example.com/", "statusCode": 200}}})
	f.scrape.Store(func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(doc)
	})
	b.SignIn(goodKey, "")
	b.WaitText("#credits-left", "1,234")
	b.Click(`#nav [data-view="playground"]`)
	b.Type("#pg-url", "https://example.com/")
	b.Click("#pg-form input[value=links]")
	b.Click("#pg-form input[value=html]")
	b.Click("#pg-run")
	b.WaitText("#pg-markdown h1", "Title <b>bold?</b>")
	got := consoletest.Eval[map[string]any](b, `(() => {
		const r = document.getElementById('pg-rendered');
		const attrs = [...r.querySelectorAll('*')].flatMap((n) => [...n.attributes].map((a) => a.name)).filter((a) => a.startsWith('on'));
		return {
			pwned: String(window.pwned),
			scripts: r.querySelectorAll('script').length,
			imgs: document.querySelectorAll('#pg-markdown img').length,
			handlers: attrs.length,
			hrefs: [...r.querySelectorAll('a')].map((a) => a.getAttribute('href')),
			strong: (r.querySelector('#pg-markdown strong') || {}).textContent || '',
			cells: r.querySelectorAll('#pg-markdown td').length,
			items: r.querySelectorAll('#pg-markdown li').length,
			code: (r.querySelector('#pg-markdown pre code') || {}).textContent || '',
			raw: document.getElementById('pg-raw').textContent.length,
		};
	})()`)
	if got["pwned"] != "undefined" || got["scripts"] != float64(0) || got["imgs"] != float64(0) || got["handlers"] != float64(0) {
		t.Errorf("scraped content ran or became markup: %v", got)
	}
	for _, h := range got["hrefs"].([]any) {
		if !strings.HasPrefix(h.(string), "https://example.com/") {
			t.Errorf("unsafe link target %q", h)
		}
	}
	if got["strong"] != "strong" || got["cells"] != float64(2) || got["items"] != float64(2) || got["code"] != "<script>window.pwned=4</script>" || got["raw"] == float64(0) {
		t.Errorf("markdown not rendered as expected: %v", got)
	}
	// The code tab holds the equivalent calls, without the key.
	b.Click(`.subtab[data-pane="code"]`)
	curl := b.WaitText("#pg-curl", "/v2/scrape")
	js := b.WaitText("#pg-js", "firecrawl.scrape(\"https://example.com/\"")
	py := b.WaitText("#pg-py", "only_main_content=True")
	for _, s := range []string{curl, js, py} {
		if strings.Contains(s, goodKey) {
			t.Errorf("snippet holds the key: %s", s)
		}
	}
	b.NoCSPViolations()
}
