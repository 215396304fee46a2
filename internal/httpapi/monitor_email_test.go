package httpapi

import (
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/mail"
	"github.com/firegate/firegate/internal/mail/mailtest"
	"github.com/firegate/firegate/internal/monitor"
	"github.com/firegate/firegate/internal/queue"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/teststore"
	"github.com/firegate/firegate/internal/testenv"
)

type monitorStore interface {
	jobsStore
	monitor.Store
}

// mailAPI is the monitor API with email on: a real store, River queue and
// check runner, and a recording SMTP relay on 127.0.0.1.
type mailAPI struct {
	*jobAPI
	st   monitorStore
	smtp *mailtest.Server
}

func newMailAPI(t *testing.T, kind string) *mailAPI {
	t.Helper()
	var st monitorStore
	if kind == "sqlite" {
		st = teststore.SQLite(t)
	} else {
		st = teststore.Postgres(t)
	}
	log := testenv.Logger(t)
	relay := mailtest.Start(t, "", "")
	port, _ := strconv.Atoi(relay.Port)
	var h http.Handler
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	email := &monitor.Email{
		Sender: mail.NewSender(mail.Config{Host: relay.Host, Port: port, From: "Firegate <monitor@firegate.test>", TLS: mail.TLSNone}),
		Secret: []byte("a test secret of at least 32 characters"), PublicURL: ts.URL, MinInterval: time.Nanosecond, Log: log,
	}
	engine := scrape.New(scrape.Config{Fetcher: fetch.New(fetch.Options{AllowPrivate: true}, log), Log: log})
	runner := monitor.NewRunner(monitor.RunnerConfig{Store: st, Scraper: engine, Email: email, Log: log})
	var svc *monitor.Service
	startQueue(t, st, 2, log, runner.Register, func(q *queue.Queue) {
		runner.Bind(q)
		svc = monitor.NewService(st, q, nil)
	})
	svc.SetEmail(email)
	teams := newTeamAuth(t, st)
	s := New(Deps{Auth: teams, Monitors: svc, PublicURL: ts.URL, Log: log})
	s.SetReady(true)
	h = s
	return &mailAPI{jobAPI: &jobAPI{url: ts.URL, st: st, teams: teams}, st: st, smtp: relay}
}

var linkRE = regexp.MustCompile(`https?://\S+/v2/monitor/email/(confirm|unsubscribe)\?token=\S+`)

// link returns the confirm or unsubscribe link in a mail's text.
func link(t *testing.T, m mailtest.Message, action string) string {
	t.Helper()
	for _, l := range linkRE.FindAllString(m.Decoded(), -1) {
		if strings.Contains(l, "/email/"+action+"?") {
			return l
		}
	}
	t.Fatalf("no %s link in:\n%s", action, m.Decoded())
	return ""
}

func tokenOf(t *testing.T, link string) string {
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("token")
}

func to(addr string) func(mailtest.Message) bool {
	return func(m mailtest.Message) bool { return len(m.To) == 1 && m.To[0] == addr }
}

// summaryOf matches the summary of a check sent to addr.
func summaryOf(addr, checkID string) func(mailtest.Message) bool {
	return func(m mailtest.Message) bool {
		return to(addr)(m) && strings.Contains(m.Decoded(), "The check "+checkID+" ")
	}
}

// waitMonitorCheck polls the check route until the check has finished.
func waitMonitorCheck(t *testing.T, a *mailAPI, monitorID, checkID string) map[string]any {
	t.Helper()
	var resp, d map[string]any
	if !testenv.WaitFor(testenv.Patient(30*time.Second), func() bool {
		_, resp = a.call(t, "GET", "/v2/monitor/"+monitorID+"/checks/"+checkID, keyA, "")
		d, _ = resp["data"].(map[string]any)
		return d != nil && d["finishedAt"] != nil
	}) {
		t.Fatalf("check %s not finished: %v", checkID, resp)
	}
	return d
}

// TestMonitorEmail: recipients are asked to confirm; a GET of the link
// changes nothing; only confirmed recipients get a check's summary, with
// its diff and an unsubscribe link; after unsubscribing (one click) no
// more summaries come; bad tokens are refused.
func TestMonitorEmail(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			testMonitorEmail(t, kind)
		})
	}
}

func testMonitorEmail(t *testing.T, kind string) {
	a := newMailAPI(t, kind)
	var mu sync.Mutex
	page := "<p>price: 10</p>"
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "<html><body><main>%s</main></body></html>", page)
	}))
	t.Cleanup(site.Close)

	body := `{"name":"prices","schedule":{"text":"daily"},"targets":[{"type":"scrape","urls":["` + site.URL + `/p"]}],
		"notification":{"email":{"enabled":true,"includeDiffs":true,"recipients":["Alice@Example.com","bob@example.com","carol@example.com","alice@example.com"]}}}`
	code, resp := a.call(t, "POST", "/v2/monitor", keyA, body)
	if code != 200 {
		t.Fatalf("create: %d %v", code, resp)
	}
	mon := dataMap(t, resp)
	id := mon["id"].(string)
	email := mon["notification"].(map[string]any)["email"].(map[string]any)
	if fmt.Sprint(email["recipients"]) != "[alice@example.com bob@example.com carol@example.com]" || email["enabled"] != true {
		t.Errorf("notification = %v", mon["notification"])
	}

	// One confirmation each, with a link.
	links := map[string]string{}
	for _, addr := range []string{"alice@example.com", "bob@example.com", "carol@example.com"} {
		m := a.smtp.Wait(t, 30*time.Second, to(addr))
		if !strings.Contains(m.Header.Get("Subject"), `Confirm change emails of the monitor "prices"`) {
			t.Errorf("confirmation subject = %q", m.Header.Get("Subject"))
		}
		links[addr] = link(t, m, "confirm")
	}
	if !strings.HasPrefix(links["alice@example.com"], a.url+"/v2/monitor/email/confirm?token=") {
		t.Errorf("link = %s", links["alice@example.com"])
	}

	// A GET (a mail scanner following the link) shows a page and confirms
	// nothing.
	resp2, err := http.Get(links["alice@example.com"])
	if err != nil {
		t.Fatal(err)
	}
	page2, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	if resp2.StatusCode != 200 || !strings.Contains(string(page2), `<form method="post">`) {
		t.Errorf("GET confirm link: %d %s", resp2.StatusCode, page2)
	}
	if st, _ := a.st.RecipientStatus(t.Context(), id, "alice@example.com"); st != store.RecipientPending {
		t.Errorf("after GET, alice is %q, want pending", st)
	}

	// Confirm alice with the API's JSON body, carol with the page's form.
	code, resp = a.call(t, "POST", "/v2/monitor/email/confirm", "", `{"token":"`+tokenOf(t, links["alice@example.com"])+`"}`)
	if d, _ := resp["data"].(map[string]any); code != 200 || d["status"] != "confirmed" || d["email"] != "alice@example.com" || d["monitorId"] != id {
		t.Errorf("confirm: %d %v", code, resp)
	}
	form, err := http.PostForm(a.url+"/v2/monitor/email/confirm", url.Values{"token": {tokenOf(t, links["carol@example.com"])}})
	if err != nil {
		t.Fatal(err)
	}
	fb, _ := io.ReadAll(form.Body)
	form.Body.Close()
	if form.StatusCode != 200 || !strings.Contains(string(fb), "Confirmed") {
		t.Errorf("form confirm: %d %s", form.StatusCode, fb)
	}

	// Forged, truncated, missing and wrong-route tokens.
	tok := tokenOf(t, links["bob@example.com"])
	for _, bad := range []string{tok[:len(tok)-2] + "AA", "x" + tok, "garbage", strings.Replace(tok, ".", "", 1)} {
		if code, resp := a.call(t, "POST", "/v2/monitor/email/confirm", "", `{"token":"`+bad+`"}`); code != 400 || resp["code"] != "INVALID_TOKEN" {
			t.Errorf("forged token: %d %v", code, resp)
		}
	}
	if code, resp := a.call(t, "POST", "/v2/monitor/email/unsubscribe", "", `{"token":"`+tok+`"}`); code != 400 || resp["code"] != "INVALID_TOKEN" {
		t.Errorf("confirm token on the unsubscribe route: %d %v", code, resp)
	}
	if code, resp := a.call(t, "POST", "/v2/monitor/email/confirm", "", `{}`); code != 400 || resp["success"] != false {
		t.Errorf("no token: %d %v", code, resp)
	}
	if st, _ := a.st.RecipientStatus(t.Context(), id, "bob@example.com"); st != store.RecipientPending {
		t.Errorf("bob is %q after bad tokens, want pending", st)
	}

	// First check: the page is new. Alice and carol get the summary; bob,
	// unconfirmed, does not.
	code, resp = a.call(t, "POST", "/v2/monitor/"+id+"/run", keyA, "")
	if code != 200 {
		t.Fatalf("run: %d %v", code, resp)
	}
	first := resp["id"].(string)
	waitMonitorCheck(t, a, id, first)
	am := a.smtp.Wait(t, 30*time.Second, summaryOf("alice@example.com", first))
	a.smtp.Wait(t, 30*time.Second, summaryOf("carol@example.com", first))
	if s := am.Header.Get("Subject"); s != "prices: 0 changed, 1 new, 0 removed" {
		t.Errorf("summary subject = %q", s)
	}
	if txt := am.Decoded(); !strings.Contains(txt, "New:\n- "+site.URL+"/p") && !strings.Contains(txt, "New:\r\n- "+site.URL+"/p") {
		t.Errorf("summary text:\n%s", txt)
	}
	unsub := link(t, am, "unsubscribe")
	if got := am.Header.Get("List-Unsubscribe"); got != "<"+unsub+">" {
		t.Errorf("List-Unsubscribe = %q, want <%s>", got, unsub)
	}

	// Alice unsubscribes with the one-click POST of her mail client.
	oc, err := http.Post(unsub, "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, oc.Body)
	oc.Body.Close()
	if oc.StatusCode != 200 {
		t.Errorf("one-click unsubscribe: %d", oc.StatusCode)
	}
	if st, _ := a.st.RecipientStatus(t.Context(), id, "alice@example.com"); st != store.RecipientUnsubscribed {
		t.Errorf("alice is %q, want unsubscribed", st)
	}

	// Second check: the page changed. Carol gets the summary with the
	// diff; alice (unsubscribed) and bob (unconfirmed) get nothing. Their
	// jobs were queued before carol's and run before her mail arrives.
	mu.Lock()
	page = "<p>price: 12</p>"
	mu.Unlock()
	_, resp = a.call(t, "POST", "/v2/monitor/"+id+"/run", keyA, "")
	second := resp["id"].(string)
	waitMonitorCheck(t, a, id, second)
	cm := a.smtp.Wait(t, 30*time.Second, summaryOf("carol@example.com", second))
	if s := cm.Header.Get("Subject"); s != "prices: 1 changed, 0 new, 0 removed" {
		t.Errorf("second summary subject = %q", s)
	}
	if txt := cm.Decoded(); !strings.Contains(txt, "-price: 10") || !strings.Contains(txt, "+price: 12") {
		t.Errorf("second summary has no diff:\n%s", txt)
	}
	for _, m := range a.smtp.Messages() {
		if to("bob@example.com")(m) && strings.Contains(m.Decoded(), "The check ") {
			t.Errorf("bob, unconfirmed, got a summary")
		}
		if summaryOf("alice@example.com", second)(m) {
			t.Errorf("alice got a summary after unsubscribing")
		}
	}

	// An update of the list: dave, new, is asked; carol stays confirmed
	// and is not asked again; bob, unlisted, is dropped; alice, listed
	// again, stays unsubscribed and is not asked.
	code, resp = a.call(t, "PATCH", "/v2/monitor/"+id, keyA,
		`{"notification":{"email":{"enabled":true,"recipients":["carol@example.com","dave@example.com","alice@example.com"]}}}`)
	if code != 200 {
		t.Fatalf("patch: %d %v", code, resp)
	}
	a.smtp.Wait(t, 30*time.Second, to("dave@example.com"))
	confirmations := map[string]int{}
	for _, m := range a.smtp.Messages() {
		if strings.Contains(m.Header.Get("Subject"), "Confirm") {
			confirmations[m.To[0]]++
		}
	}
	if confirmations["carol@example.com"] != 1 || confirmations["alice@example.com"] != 1 || confirmations["dave@example.com"] != 1 {
		t.Errorf("confirmations sent: %v", confirmations)
	}
	for addr, want := range map[string]string{"carol@example.com": store.RecipientConfirmed, "alice@example.com": store.RecipientUnsubscribed,
		"dave@example.com": store.RecipientPending} {
		if st, err := a.st.RecipientStatus(t.Context(), id, addr); st != want {
			t.Errorf("%s is %q (%v), want %s", addr, st, err, want)
		}
	}
	if _, err := a.st.RecipientStatus(t.Context(), id, "bob@example.com"); err == nil {
		t.Error("bob, no longer listed, is still a recipient")
	}
	// Bob's old link no longer confirms anything.
	if code, resp := a.call(t, "POST", "/v2/monitor/email/confirm", "", `{"token":"`+tok+`"}`); code != 404 {
		t.Errorf("confirm of an unlisted recipient: %d %v", code, resp)
	}
}

// TestMonitorEmailNotConfigured: without an SMTP relay, enabled email is
// a 400 naming the field and the setting; disabled email is accepted;
// the link routes say so too.
func TestMonitorEmailNotConfigured(t *testing.T) {
	t.Parallel()
	a := newMonitorAPI(t)
	body := strings.Replace(monitorBodyOK, `"webhook"`, `"notification":{"email":{"enabled":true,"recipients":["a@example.com"]}},"webhook"`, 1)
	code, resp := a.call(t, "POST", "/v2/monitor", keyA, body)
	details, _ := resp["details"].([]any)
	if code != 400 || resp["code"] != "EMAIL_NOT_CONFIGURED" || !strings.Contains(fmt.Sprint(resp["error"]), "SMTP_URL") || len(details) != 1 ||
		fmt.Sprint(details[0].(map[string]any)["path"]) != "[notification email enabled]" {
		t.Errorf("enabled email without a relay: %d %v", code, resp)
	}
	body = strings.Replace(monitorBodyOK, `"webhook"`, `"notification":{"email":{"enabled":false,"recipients":["a@example.com"]}},"webhook"`, 1)
	if code, resp := a.call(t, "POST", "/v2/monitor", keyA, body); code != 200 {
		t.Errorf("disabled email: %d %v", code, resp)
	}
	if code, resp := a.call(t, "POST", "/v2/monitor/email/confirm", "", `{"token":"x.y"}`); code != 400 || resp["code"] != "EMAIL_NOT_CONFIGURED" {
		t.Errorf("confirm without a relay: %d %v", code, resp)
	}
}

// TestMonitorEmailRecipients: recipients must be bare addresses (no
// display name, no header smuggled in a line break), at most 25.
func TestMonitorEmailRecipients(t *testing.T) {
	t.Parallel()
	a := newMonitorAPI(t)
	many := make([]string, 26)
	for i := range many {
		many[i] = `"r` + strconv.Itoa(i) + `@example.com"`
	}
	for _, tc := range []struct{ recipients, path string }{
		{`["a@example.com\r\nBcc: evil@example.com"]`, "[notification email recipients 0]"},
		{`["ok@example.com","Alice <alice@example.com>"]`, "[notification email recipients 1]"},
		{`["a@example.com, b@example.com"]`, "[notification email recipients 0]"},
		{`["not an address"]`, "[notification email recipients 0]"},
		{`[` + strings.Join(many, ",") + `]`, "[notification email recipients]"},
		{`"a@example.com"`, "[notification email recipients]"},
	} {
		body := strings.Replace(monitorBodyOK, `"webhook"`, `"notification":{"email":{"enabled":false,"recipients":`+tc.recipients+`}},"webhook"`, 1)
		code, resp := a.call(t, "POST", "/v2/monitor", keyA, body)
		details, _ := resp["details"].([]any)
		if code != 400 || len(details) == 0 || fmt.Sprint(details[0].(map[string]any)["path"]) != tc.path {
			t.Errorf("recipients %s: %d %v", tc.recipients, code, resp)
		}
	}
}

// TestMonitorEmailConfirmationFlood: an address listed in many monitors
// is asked to confirm at most 5 times a day.
func TestMonitorEmailConfirmationFlood(t *testing.T) {
	t.Parallel()
	a := newMailAPI(t, "sqlite")
	create := func(addr string) {
		t.Helper()
		body := `{"name":"flood","schedule":{"text":"daily"},"targets":[{"type":"scrape","urls":["https://example.com/"]}],
			"notification":{"email":{"enabled":true,"recipients":["` + addr + `"]}}}`
		if code, resp := a.call(t, "POST", "/v2/monitor", keyA, body); code != 200 {
			t.Fatalf("create: %d %v", code, resp)
		}
	}
	for range 7 {
		create("flood@example.com")
	}
	// Wait until the queue has run every email job.
	db := a.st.(interface{ WriteDB() *sql.DB }).WriteDB()
	left := -1
	if !testenv.WaitFor(testenv.Patient(30*time.Second), func() bool {
		if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'monitor_email'
			AND state NOT IN ('completed', 'cancelled', 'discarded')`).Scan(&left); err != nil {
			t.Fatal(err)
		}
		return left == 0
	}) {
		t.Fatalf("%d email jobs still queued", left)
	}
	n := 0
	for _, m := range a.smtp.Messages() {
		if to("flood@example.com")(m) {
			n++
		}
	}
	if n != 5 {
		t.Errorf("flood@example.com got %d confirmations, want 5", n)
	}
}
