package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/firegate/firegate/internal/browser"
	"github.com/firegate/firegate/internal/cache"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/interact"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/search"
	"github.com/firegate/firegate/internal/search/searxngtest"
	"github.com/firegate/firegate/internal/store/sqlite"
	"github.com/firegate/firegate/internal/testenv"
)

// loggedWith is the err attribute of the JSON record in logs logged with
// error_id id, or "".
func loggedWith(logs, id string) string {
	for line := range strings.SplitSeq(logs, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["error_id"] == id {
			s, _ := rec["err"].(string)
			return s
		}
	}
	return ""
}

// TestSearchResultErrorsShowNoInternalError: a search result whose scrape
// failed with an error no errcode sentinel describes shows UNKNOWN_ERROR with
// the generic message naming an error id, logged with the full error, in
// its metadata, and nothing of the error's text; a known error keeps its
// code and exact message.
func TestSearchResultErrorsShowNoInternalError(t *testing.T) {
	t.Parallel()
	site := searchSite(t)
	f := setupSearch(t, true, func(url.Values) searxngtest.Answer {
		return searxngtest.Answer{Results: []searxngtest.Result{
			{URL: site.URL + "/lamp", Title: "Lamp", Score: 3},
			{URL: site.URL + "/internal", Title: "Internal", Score: 2},
			{URL: site.URL + "/dns", Title: "DNS", Score: 1},
		}}
	})
	logs := &logBuffer{}
	f.srv.log = slog.New(slog.NewJSONHandler(logs, nil))
	f.srv.scraper = failingScraper{next: f.srv.scraper}
	status, got := f.post(t, `{"query":"q","scrapeOptions":{"formats":["markdown"]}}`)
	if status != 200 {
		t.Fatalf("%d %v", status, got)
	}
	checkShown(t, "search response", got)
	web, _ := got["data"].(map[string]any)["web"].([]any)
	if len(web) != 3 {
		t.Fatalf("%d web results, want 3: %v", len(web), got)
	}
	meta := func(i int) (code, msg string) {
		r, _ := web[i].(map[string]any)
		m, _ := r["metadata"].(map[string]any)
		code, _ = m["code"].(string)
		msg, _ = m["error"].(string)
		return code, msg
	}
	if code, msg := meta(0); code != "" || msg != "" {
		t.Errorf("scraped result: metadata code %q error %q", code, msg)
	}
	code, msg := meta(1)
	if code != "UNKNOWN_ERROR" || !isGeneric(msg) {
		t.Errorf("internal failure shown as %q %q; want UNKNOWN_ERROR and the generic message", code, msg)
	} else if id := errorIDMsg.FindStringSubmatch(msg)[1]; !strings.Contains(loggedWith(logs.String(), id), "10.1.2.3:5432") {
		t.Errorf("error id %s logged with %q, want the full error", id, loggedWith(logs.String(), id))
	}
	if code, msg := meta(2); code != "SCRAPE_DNS_RESOLUTION_ERROR" || msg != knownDNSMsg {
		t.Errorf("known failure shown as %q %q; want SCRAPE_DNS_RESOLUTION_ERROR %q", code, msg, knownDNSMsg)
	}
}

// TestKnownErrorNamesNoPackage: POST /v2/scrape of a file the engine
// cannot convert answers its code with a sentence that names no Go
// package ("scrape: unsupported file: ..." before).
func TestKnownErrorNamesNoPackage(t *testing.T) {
	t.Parallel()
	img := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("\x89PNG\r\n\x1a\n"))
	}))
	t.Cleanup(img.Close)
	log := testenv.Logger(t)
	s := New(Deps{Scraper: scrape.New(scrape.Config{Fetcher: fetch.New(fetch.Options{AllowPrivate: true}, log), Log: log}),
		Auth: fakeAuth{}, Log: log})
	s.SetReady(true)
	rec, got := do(t, s, http.MethodPost, "/v2/scrape", goodKey, `{"url":"`+img.URL+`/a.png","formats":["markdown"]}`)
	const want = `Unsupported file: content type "image/png" cannot be converted; request the rawBase64 format to receive the bytes.`
	if rec.Code != http.StatusInternalServerError || got["code"] != "SCRAPE_UNSUPPORTED_FILE_ERROR" || got["error"] != want {
		t.Errorf("got %d %v; want 500 SCRAPE_UNSUPPORTED_FILE_ERROR %q", rec.Code, got, want)
	}
}

// TestSearchEngineErrorShowsNoAddress: POST /v2/search whose engine cannot
// be reached (at a private network's address) answers 502
// SEARCH_ENGINE_ERROR saying so in the client's terms, without the
// engine's host, address or the Go packages of the error; the full cause
// is logged.
func TestSearchEngineErrorShowsNoAddress(t *testing.T) {
	t.Parallel()
	f := setupSearch(t, true, func(url.Values) searxngtest.Answer { return searxngtest.Answer{} })
	logs := &logBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	f.srv.log = log
	backend, err := search.NewSearXNG(search.SearXNGOptions{Endpoint: "http://searxng:8080", Client: searxngtest.RefusedAt(t, "10.1.2.3:8080")})
	if err != nil {
		t.Fatal(err)
	}
	f.srv.searcher = search.New(backend, search.Options{}, log)
	status, got := f.post(t, `{"query":"q"}`)
	const want = "The search engine could not be reached."
	if status != http.StatusBadGateway || got["code"] != "SEARCH_ENGINE_ERROR" || got["error"] != want {
		t.Errorf("%d %v; want 502 SEARCH_ENGINE_ERROR %q", status, got, want)
	}
	checkShown(t, "search response", got)
	for _, leak := range []string{"10.1.2.3", "8080", "searxng", "search:", "dial tcp"} {
		if strings.Contains(fmt.Sprint(got["error"]), leak) {
			t.Errorf("error %q shows %q", got["error"], leak)
		}
	}
	if !strings.Contains(logs.String(), "dial tcp 10.1.2.3:8080: connect: connection refused") {
		t.Errorf("the cause is not logged: %s", logs.String())
	}
}

// TestLiveInputErrorShowsNoBrowserText: an input the page did not take for
// a reason of the browser's (whose text names the DevTools address and Go
// packages) answers LIVE_INPUT_FAILED naming an error id under which the
// full error is logged, and nothing of its text; a deadline is said so.
func TestLiveInputErrorShowsNoBrowserText(t *testing.T) {
	logs := &logBuffer{}
	s := &Server{log: slog.New(slog.NewJSONHandler(logs, nil))}
	cause := errors.New(`browser: click: chrome exited: browser: chrome unavailable (read tcp 127.0.0.1:41234->10.1.2.3:9222: ws://10.1.2.3:9222/devtools/page/AB12: connection reset)`)
	e := s.liveInputError(t.Context(), cause)
	if e.Status != http.StatusBadRequest || e.Code != "LIVE_INPUT_FAILED" || !strings.HasPrefix(e.Message, "The input could not be sent to the page. ") {
		t.Errorf("%d %s %q", e.Status, e.Code, e.Message)
	}
	generic := strings.TrimPrefix(e.Message, "The input could not be sent to the page. ")
	if !isGeneric(generic) {
		t.Errorf("message %q does not end with the generic message naming an error id", e.Message)
	} else if id := errorIDMsg.FindStringSubmatch(generic)[1]; !strings.Contains(loggedWith(logs.String(), id), "ws://10.1.2.3:9222/devtools/page/AB12") {
		t.Errorf("error id %s logged with %q, want the full error", id, loggedWith(logs.String(), id))
	}
	for _, leak := range append(internalLeaks, "chrome", "click:") {
		if strings.Contains(e.Message, leak) {
			t.Errorf("message %q shows %q", e.Message, leak)
		}
	}
	e = s.liveInputError(t.Context(), fmt.Errorf("browser: click: %w", context.DeadlineExceeded))
	if want := "The input could not be sent to the page within 10s."; e.Message != want {
		t.Errorf("deadline: %q; want %q", e.Message, want)
	}
}

// TestBrowserUnavailableShowsNoDevToolsAddress: POST /v2/browser whose
// browser (a remote Chrome at an unreachable DevTools URL) cannot open a
// session answers 502 BROWSER_UNAVAILABLE in the client's terms, without
// the DevTools address or the Go packages of the error; the full error is
// logged.
func TestBrowserUnavailableShowsNoDevToolsAddress(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	devtools := "ws://" + l.Addr().String() + "/devtools/browser/0b1c"
	l.Close()
	remote := browser.New(browser.Options{RemoteURL: devtools, MaxTabs: 1, AllowPrivate: true}, slog.New(slog.DiscardHandler))
	t.Cleanup(func() { remote.Close() })
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "firegate.db"), testenv.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	m := interact.New(interact.Config{Store: st, Browser: remote, MaxPerTeam: 1, Log: testenv.Logger(t)})
	t.Cleanup(func() {
		m.Shutdown(context.Background())
		st.Close()
	})
	logs := &logBuffer{}
	s := New(Deps{Scraper: docScraper{}, Auth: twoTeams{}, Results: cache.NewMemory(1 << 20), Interact: m, Log: slog.New(slog.NewJSONHandler(logs, nil))})
	s.SetReady(true)
	rec, body := do(t, s, http.MethodPost, "/v2/browser", "fc-a", `{}`)
	const want = "The browser could not open a session."
	if rec.Code != http.StatusBadGateway || body["code"] != "BROWSER_UNAVAILABLE" || body["error"] != want {
		t.Errorf("%d %v; want 502 BROWSER_UNAVAILABLE %q", rec.Code, body, want)
	}
	for _, leak := range []string{"127.0.0.1", "devtools", "0b1c", "ws://", "browser:", "interact:"} {
		if strings.Contains(fmt.Sprint(body["error"]), leak) {
			t.Errorf("error %q shows %q", body["error"], leak)
		}
	}
	if !strings.Contains(logs.String(), devtools) {
		t.Errorf("the DevTools error is not logged: %s", logs.String())
	}
}
