package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/console/consoletest"
	"github.com/firegate/firegate/internal/testenv"
)

// crawlSite is a three-page site for the console's crawl.
func crawlSite(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/":
			io.WriteString(w, `<html><head><title>Home</title></head><body><main><h1>Home</h1><p>Start here and read on.</p><a href="/one">one</a> <a href="/two">two</a></main></body></html>`)
		case "/one", "/two":
			fmt.Fprintf(w, `<html><head><title>%s</title></head><body><main><h1>Page %s</h1><p>Some words of page %s.</p><a href="/">home</a></main></body></html>`, r.URL.Path, r.URL.Path, r.URL.Path)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestConsole drives the web console of the built server in Chromium:
// sign in, the credit figure, a playground scrape with its markdown and
// screenshot shown, and a crawl started from the console whose progress
// bar reaches completion.
func TestConsole(t *testing.T) {
	site := targetSite(t)
	pages := crawlSite(t)
	srv := startServer(t)
	srv.cli(t, "credits", "set", "--team", "default", "--amount", "500")
	b := consoletest.New(t, 3*time.Minute)
	b.Open(srv.url + "/console")
	b.SignIn(testKey, "")
	b.WaitText("#credits-left", "500")
	b.WaitText("#credits-plan", "of 500 granted")

	b.Click(`#nav [data-view="playground"]`)
	b.Type("#pg-url", site.URL+"/article")
	b.Click(`#pg-form input[value="screenshot"]`)
	consoletest.Wait[bool](b, `document.getElementById('pg-curl').textContent.includes('"screenshot"')`, 5*time.Second)
	b.Click("#pg-run")
	b.WaitText("#pg-markdown h1", "The Lighthouse Keeper")
	b.WaitText("#pg-markdown", "For forty years she kept the lamp burning")
	// The screenshot is shown: the image loaded from the server's /media.
	if w := consoletest.Wait[int](b, `(() => { const i = document.querySelector('#pg-screenshot'); return i && i.complete && i.naturalWidth; })()`, 30*time.Second); w < 100 {
		t.Errorf("screenshot shown %d px wide", w)
	}
	b.Click(`.subtab[data-pane="raw"]`)
	b.WaitText("#pg-raw", `"success": true`)

	b.Click(`#nav [data-view="jobs"]`)
	b.Type("#crawl-url", pages.URL+"/")
	b.Type("#crawl-limit", "3")
	b.Click("#crawl-form button[type=submit]")
	b.WaitText("#jobs-msg", "started")
	b.WaitTextFor("#jobs tbody tr .status", "completed", 90*time.Second)
	got := b.WaitText("#jobs tbody tr .count", "3 / 3")
	if v := consoletest.Eval[float64](b, `document.querySelector('#jobs tbody tr progress').value`); v != 100 {
		t.Errorf("progress bar at %v (%s), want 100", v, got)
	}

	// The overview now counts what the scrape and the crawl used.
	b.Click(`#nav [data-view="overview"]`)
	b.WaitText("#credits-left", "496") // 1 for the scrape, 3 for the crawl's pages
	b.WaitText("#activity tbody", "crawl")
	if n := consoletest.Eval[int](b, `document.querySelectorAll('#chart rect.bar[data-credits]:not([data-credits="0"])').length`); n != 1 {
		t.Errorf("%d days with usage in the chart, want 1 (today)", n)
	}

	// A monitor with a finished check is listed with its result, and its
	// checks open under it.
	code, mon := api(t, srv, http.MethodPost, "/v2/monitor", testKey,
		`{"name":"lamp page","schedule":{"cron":"0 9 * * *"},"targets":[{"type":"scrape","urls":["`+site.URL+`/article"]}]}`)
	if code != 200 {
		t.Fatalf("create monitor: %d %v", code, mon)
	}
	id := mon["data"].(map[string]any)["id"].(string)
	if code, got := api(t, srv, http.MethodPost, "/v2/monitor/"+id+"/run", testKey, ""); code != 200 {
		t.Fatalf("run monitor: %d %v", code, got)
	}
	testenv.Eventually(t, time.Minute, func() bool {
		_, got := api(t, srv, http.MethodGet, "/v2/monitor/"+id, testKey, "")
		d, _ := got["data"].(map[string]any)
		return d != nil && d["lastCheckSummary"] != nil && d["currentCheckId"] == nil
	}, "the monitor's check did not finish")
	b.Click(`#nav [data-view="monitors"]`)
	b.WaitText("#monitors tbody tr", "lamp page")
	b.WaitText("#monitors tbody tr", "1 new")
	b.Click("#monitors tbody tr")
	b.WaitText("#monitors tbody tr.checks", "completed · 1 pages, 0 changed, 1 new, 0 errors")
	b.NoCSPViolations()
}

const testAdminKey = "operator-e2e-0123456789abcdef"

// TestConsoleOperator: the operator signs in with ADMIN_API_KEY, creates a
// team with credits and a key for it in the console; the key, shown once,
// then works against /v2/scrape and the team's credits go down.
func TestConsoleOperator(t *testing.T) {
	site := targetSite(t)
	srv := startServer(t, "ADMIN_API_KEY="+testAdminKey)
	b := consoletest.New(t, 3*time.Minute)
	b.Open(srv.url + "/console")
	b.SignIn("", testAdminKey)
	b.WaitText(`#teams tbody tr[data-team="default"]`, "default")
	b.Type("#team-name", "console-team")
	b.Type("#team-credits", "20")
	b.Click("#team-form button[type=submit]")
	b.WaitText("#op-msg", "Team console-team created.")
	b.WaitText(`#teams tbody tr[data-team="console-team"] .credits`, "20 of 20")
	b.WaitText("#td-name", "console-team")
	b.Click("#td-newkey")
	key := strings.TrimSpace(b.WaitText("#newkey-value", "fc-"))
	b.WaitText("#newkey-team", "console-team")

	code, got := api(t, srv, http.MethodPost, "/v2/scrape", key, `{"url":"`+site.URL+`/article"}`)
	if code != 200 {
		t.Fatalf("the console's new key on /v2/scrape: %d %v", code, got)
	}
	b.Click("#newkey-done")
	b.Click(`#nav [data-view="operator"]`)
	b.WaitText(`#teams tbody tr[data-team="console-team"] .credits`, "19 of 20")
	// The change is in the team's activity, seen with its own key.
	code, got = api(t, srv, http.MethodGet, "/v2/team/activity?endpoint=admin", key, "")
	if code != 200 || !strings.Contains(fmt.Sprint(got["data"]), "key created: "+key[:7]) {
		t.Errorf("activity: %d %v", code, got)
	}
	b.NoCSPViolations()
}
