package monitor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/monitor"
	"github.com/firegate/firegate/internal/queue"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/teststore"
	"github.com/firegate/firegate/internal/testenv"
	"github.com/firegate/firegate/internal/webhook"
)

type testStore interface {
	store.Store
	store.JobStore
	monitor.Store
}

func openStore(t *testing.T, kind string) testStore {
	if kind == "sqlite" {
		return teststore.SQLite(t)
	}
	return teststore.Postgres(t)
}

// site is a local web site whose pages the test edits between checks.
type site struct {
	mu    sync.Mutex
	pages map[string]string // path -> body; missing -> 404
	hits  int               // requests served
	srv   *httptest.Server
}

// checkNow runs a check of the team's monitor now and returns its detail.
func checkNow(t *testing.T, svc *monitor.Service, runner *monitor.Runner, teamID, monID string) monitor.CheckDetail {
	t.Helper()
	c, err := svc.Run(t.Context(), teamID, monID)
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.RunCheck(t.Context(), c.ID); err != nil {
		t.Fatal(err)
	}
	d, _, err := svc.Check(t.Context(), teamID, monID, c.ID, "", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func newSite(t *testing.T) *site {
	s := &site{pages: map[string]string{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		body, ok := s.pages[r.URL.Path]
		s.hits++
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, "<html><body><h1>Not found</h1></body></html>")
			return
		}
		fmt.Fprintf(w, "<html><head><title>%s</title></head><body><main>%s</main></body></html>", r.URL.Path, body)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *site) set(path, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if body == "" {
		delete(s.pages, path)
		return
	}
	s.pages[path] = body
}

func (s *site) url(path string) string { return s.srv.URL + path }

// hooks receives webhooks and verifies their signatures.
type hooks struct {
	t      *testing.T
	secret string
	mu     sync.Mutex
	got    []hookBody
	srv    *httptest.Server
}

type hookBody struct {
	Success bool              `json:"success"`
	Type    string            `json:"type"`
	ID      string            `json:"id"`
	Data    []json.RawMessage `json:"data"`
}

func newHooks(t *testing.T, secret string) *hooks {
	h := &hooks{t: t, secret: secret}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !webhook.Verify(secret, body, r.Header.Get(webhook.SignatureHeader)) {
			t.Errorf("webhook with a bad signature %q: %s", r.Header.Get(webhook.SignatureHeader), body)
		}
		var b hookBody
		if err := json.Unmarshal(body, &b); err != nil {
			t.Errorf("webhook body: %v", err)
		}
		h.mu.Lock()
		h.got = append(h.got, b)
		h.mu.Unlock()
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hooks) of(checkID string) []hookBody {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []hookBody
	for _, b := range h.got {
		if b.ID == checkID {
			out = append(out, b)
		}
	}
	return out
}

// refusedURL is a URL on a port nothing listens on: its scrape fails.
func refusedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "http://" + addr + "/down"
}

type harness struct {
	st     testStore
	svc    *monitor.Service
	runner *monitor.Runner
	team   store.Team
	q      *queue.Queue
}

func newHarness(t *testing.T, kind string, sender monitor.WebhookSender, ledger monitor.Ledger) *harness {
	return newHarnessWith(t, kind, func(c *monitor.RunnerConfig) { c.Ledger, c.Webhooks = ledger, sender })
}

// newHarnessWith builds a harness whose runner config set adjusts.
func newHarnessWith(t *testing.T, kind string, set func(*monitor.RunnerConfig)) *harness {
	st := openStore(t, kind)
	log := testenv.Logger(t)
	engine := scrape.New(scrape.Config{Fetcher: fetch.New(fetch.Options{AllowPrivate: true}, log), Log: log})
	cfg := monitor.RunnerConfig{Store: st, Scraper: engine, Log: log}
	set(&cfg)
	runner := monitor.NewRunner(cfg)
	workers := river.NewWorkers()
	runner.Register(workers)
	q, err := queue.Open(t.Context(), st, workers, queue.Options{Workers: 2}, log)
	if err != nil {
		t.Fatal(err)
	}
	runner.Bind(q)
	if err := q.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = q.Stop(ctx)
	})
	team, err := st.CreateTeam(t.Context(), "monitor-test")
	if err != nil {
		t.Fatal(err)
	}
	return &harness{st: st, svc: monitor.NewService(st, q, nil), runner: runner, team: team, q: q}
}

func scrapeTarget(id string, urls ...string) monitor.Target {
	echo, _ := json.Marshal(map[string]any{"type": "scrape", "id": id, "urls": urls})
	return monitor.Target{Type: monitor.TargetScrape, ID: id, URLs: urls, Echo: echo,
		Scrape: scrape.Options{Formats: []scrape.Format{{Type: scrape.FormatMarkdown}}, OnlyMainContent: true, Timeout: 10 * time.Second}}
}

// waitCheck polls until the check has finished.
func (h *harness) waitCheck(t *testing.T, monitorID, checkID string) monitor.CheckDetail {
	t.Helper()
	var d monitor.CheckDetail
	if !testenv.WaitFor(testenv.Patient(30*time.Second), func() bool {
		var err error
		if d, _, err = h.svc.Check(t.Context(), h.team.ID, monitorID, checkID, "", 0, 100); err != nil {
			t.Fatalf("Check: %v", err)
		}
		return d.FinishedAt != nil
	}) {
		t.Fatalf("check %s still %s after %v", checkID, d.Status, testenv.Patient(30*time.Second))
	}
	return d
}

func pagesByURL(d monitor.CheckDetail) map[string]monitor.PageView {
	out := map[string]monitor.PageView{}
	for _, p := range d.Pages {
		out[p.URL] = p
	}
	return out
}

// TestChecks runs two checks of a site whose pages change in between (one
// edited, one unchanged, one removed, one added, one failing) and checks
// the pages, the diffs, the summaries, the credits and the webhooks.
func TestChecks(t *testing.T) {
	for _, kind := range []string{"postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			testChecks(t, kind)
		})
	}
}

func testChecks(t *testing.T, kind string) {
	ctx := t.Context()
	const secret = "s3cret"
	hk := newHooks(t, secret)
	sender := webhook.NewSender(webhook.Options{Secret: secret, AllowPrivate: true}, testenv.Logger(t))
	h := newHarness(t, kind, sender, nil)

	s := newSite(t)
	s.set("/edited", "<p>price: 10</p><p>stock: yes</p>")
	s.set("/same", "<p>nothing moves here</p>")
	s.set("/gone", "<p>here today</p>")
	down := refusedURL(t)

	sched, _ := monitor.ParseSchedule("", "daily", "UTC")
	spec := &webhook.Spec{URL: hk.srv.URL}
	mon, err := h.svc.Create(ctx, h.team.ID, monitor.Input{
		Name: "site", Schedule: sched, RetentionDays: 30,
		Config: monitor.Config{Targets: []monitor.Target{scrapeTarget("t1", s.url("/edited"), s.url("/same"), s.url("/gone"), down)}, Webhook: spec},
	})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if mon.EstimatedCreditsPerMonth != 30*4 {
		t.Errorf("estimatedCreditsPerMonth = %d, want 120 (30 daily runs of 4 pages)", mon.EstimatedCreditsPerMonth)
	}

	first, err := h.svc.Run(ctx, h.team.ID, mon.ID)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if first.Status != store.CheckQueued || first.Trigger != store.TriggerManual || first.EstimatedCredits != 4 {
		t.Errorf("run = %+v", first)
	}
	d1 := h.waitCheck(t, mon.ID, first.ID)
	if d1.Status != store.CheckPartial || d1.Summary != (monitor.Summary{TotalPages: 4, New: 3, Error: 1}) {
		t.Errorf("first check: %s %+v", d1.Status, d1.Summary)
	}
	p1 := pagesByURL(d1)
	if p := p1[down]; p.Status != "error" || p.Error == nil || p.CurrentScrapeID != nil {
		t.Errorf("failing page: %+v", p)
	}
	if p := p1[s.url("/edited")]; p.Status != "new" || p.CurrentScrapeID == nil || p.PreviousScrapeID != nil || p.StatusCode == nil || *p.StatusCode != 200 {
		t.Errorf("first sight of /edited: %+v", p)
	}

	// The site changes: one page edited, one removed, one added to the
	// targets; one stays; one still fails.
	s.set("/edited", "<p>price: 12</p><p>stock: yes</p>")
	s.set("/gone", "")
	s.set("/added", "<p>fresh</p>")
	targets := []monitor.Target{scrapeTarget("t1", s.url("/edited"), s.url("/same"), s.url("/gone"), down, s.url("/added"))}
	if _, err := h.svc.Update(ctx, h.team.ID, mon.ID, monitor.Patch{Targets: targets}); err != nil {
		t.Fatalf("Update: %v", err)
	}
	second, err := h.svc.Run(ctx, h.team.ID, mon.ID)
	if err != nil {
		t.Fatalf("Run again: %v", err)
	}
	d2 := h.waitCheck(t, mon.ID, second.ID)
	if d2.Status != store.CheckPartial || d2.Summary != (monitor.Summary{TotalPages: 5, Same: 1, Changed: 1, New: 1, Removed: 1, Error: 1}) {
		t.Errorf("second check: %s %+v", d2.Status, d2.Summary)
	}
	p2 := pagesByURL(d2)
	edited := p2[s.url("/edited")]
	if edited.Status != "changed" || edited.PreviousScrapeID == nil || p1[s.url("/edited")].CurrentScrapeID == nil ||
		*edited.PreviousScrapeID != *p1[s.url("/edited")].CurrentScrapeID || *edited.CurrentScrapeID == *edited.PreviousScrapeID {
		t.Errorf("edited page: %+v", edited)
	}
	var diff struct {
		Text string `json:"text"`
		JSON struct {
			Files []any `json:"files"`
		} `json:"json"`
	}
	if err := json.Unmarshal(edited.Diff, &diff); err != nil || !strings.Contains(diff.Text, "-price: 10") ||
		!strings.Contains(diff.Text, "+price: 12") || strings.Contains(diff.Text, "+stock") || len(diff.JSON.Files) != 1 {
		t.Errorf("edited diff = %s (%v)", edited.Diff, err)
	}
	if p := p2[s.url("/same")]; p.Status != "same" || string(p.Diff) != "null" {
		t.Errorf("same page: %+v", p)
	}
	if p := p2[s.url("/gone")]; p.Status != "removed" || p.StatusCode == nil || *p.StatusCode != 404 {
		t.Errorf("removed page: %+v", p)
	}
	if p := p2[s.url("/added")]; p.Status != "new" {
		t.Errorf("added page: %+v", p)
	}
	if p := p2[down]; p.Status != "error" {
		t.Errorf("failing page: %+v", p)
	}

	// Pages filtered and paged.
	if d, more, _ := h.svc.Check(ctx, h.team.ID, mon.ID, second.ID, "", 0, 2); len(d.Pages) != 2 || !more {
		t.Errorf("first 2 pages: %d, more %v", len(d.Pages), more)
	}
	if d, more, _ := h.svc.Check(ctx, h.team.ID, mon.ID, second.ID, "", 4, 2); len(d.Pages) != 1 || more {
		t.Errorf("last page: %d, more %v", len(d.Pages), more)
	}
	if d, _, _ := h.svc.Check(ctx, h.team.ID, mon.ID, second.ID, "changed", 0, 10); len(d.Pages) != 1 || d.Pages[0].URL != s.url("/edited") {
		t.Errorf("changed pages: %+v", d.Pages)
	}

	// The monitor shows the last summary; the checks list newest first.
	got, _ := h.svc.Get(ctx, h.team.ID, mon.ID)
	if got.LastCheckSummary == nil || *got.LastCheckSummary != d2.Summary || got.CurrentCheckID != nil {
		t.Errorf("monitor after checks: %+v", got)
	}
	list, _ := h.svc.Checks(ctx, h.team.ID, mon.ID, "", 10, 0)
	if len(list) != 2 || list[0].ID != second.ID {
		t.Errorf("checks = %+v", list)
	}

	// Webhooks: one monitor.page per page and one monitor.check.completed,
	// signed.
	testenv.WaitFor(testenv.Patient(20*time.Second), func() bool { return len(hk.of(second.ID)) >= 6 })
	events := hk.of(second.ID)
	var pageStatuses []string
	var completed *hookBody
	for i, e := range events {
		switch e.Type {
		case monitor.EventPage:
			var p struct {
				MonitorID, CheckID, URL, Status string
				IsMeaningful                    *bool
				Diff                            json.RawMessage
			}
			_ = json.Unmarshal(e.Data[0], &p)
			if p.MonitorID != mon.ID || p.CheckID != second.ID || p.IsMeaningful != nil {
				t.Errorf("page event: %s", e.Data[0])
			}
			if p.Status == "error" && e.Success {
				t.Errorf("error page event with success true")
			}
			if p.URL == s.url("/edited") && !strings.Contains(string(p.Diff), "+price: 12") {
				t.Errorf("changed page event without its diff: %s", e.Data[0])
			}
			pageStatuses = append(pageStatuses, p.Status)
		case monitor.EventCheckCompleted:
			completed = &events[i]
		}
	}
	slices.Sort(pageStatuses)
	if want := []string{"changed", "error", "new", "removed", "same"}; !slices.Equal(pageStatuses, want) {
		t.Errorf("page events %v, want %v", pageStatuses, want)
	}
	if completed == nil {
		t.Fatal("no monitor.check.completed event")
	}
	var cd struct {
		MonitorID, CheckID, Status string
		Summary                    monitor.Summary
	}
	_ = json.Unmarshal(completed.Data[0], &cd)
	if completed.Success || cd.Status != store.CheckPartial || cd.Summary != d2.Summary || cd.MonitorID != mon.ID {
		t.Errorf("completed event: success %v %s", completed.Success, completed.Data[0])
	}
}

// TestCredits: a check is checked against the team's credits before it
// runs and charged per scraped page after.
func TestCredits(t *testing.T) {
	t.Parallel()
	st := teststore.SQLite(t)
	log := testenv.Logger(t)
	ledger := billing.NewLedger(st, log)
	engine := scrape.New(scrape.Config{Fetcher: fetch.New(fetch.Options{AllowPrivate: true}, log), Log: log})
	runner := monitor.NewRunner(monitor.RunnerConfig{Store: st, Scraper: engine, Ledger: ledger, Log: log})
	rec := &recorder{}
	runner.Bind(rec)
	svc := monitor.NewService(st, rec, nil)
	team, _ := st.CreateTeam(t.Context(), "credits")
	if _, err := st.SetCredits(t.Context(), team.ID, 10); err != nil {
		t.Fatal(err)
	}
	s := newSite(t)
	s.set("/a", "<p>a</p>")
	s.set("/b", "<p>b</p>")
	sched, _ := monitor.ParseSchedule("", "daily", "UTC")
	mon, err := svc.Create(t.Context(), team.ID, monitor.Input{Name: "c", Schedule: sched, RetentionDays: 1,
		Config: monitor.Config{Targets: []monitor.Target{scrapeTarget("t", s.url("/a"), s.url("/b"), refusedURL(t))}}})
	if err != nil {
		t.Fatal(err)
	}
	d := checkNow(t, svc, runner, team.ID, mon.ID)
	if d.ReservedCredits == nil || *d.ReservedCredits != 3 || d.ActualCredits == nil || *d.ActualCredits != 2 || d.BillingStatus != "confirmed" {
		t.Errorf("check credits: reserved %v actual %v billing %s", d.ReservedCredits, d.ActualCredits, d.BillingStatus)
	}
	bal, _ := st.CreditBalance(t.Context(), team.ID)
	if bal.Remaining != 8 {
		t.Errorf("remaining credits %d, want 8", bal.Remaining)
	}
	// Running the same check's job again charges nothing more.
	if err := runner.RunCheck(t.Context(), d.ID); err != nil {
		t.Fatal(err)
	}
	if bal, _ := st.CreditBalance(t.Context(), team.ID); bal.Remaining != 8 {
		t.Errorf("remaining after a repeated job %d, want 8", bal.Remaining)
	}

	// Too few credits for the estimate: skipped, nothing scraped.
	if _, err := st.SetCredits(t.Context(), team.ID, 2); err != nil {
		t.Fatal(err)
	}
	c2, err := svc.Run(t.Context(), team.ID, mon.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.RunCheck(t.Context(), c2.ID); err != nil {
		t.Fatal(err)
	}
	d2, _, _ := svc.Check(t.Context(), team.ID, mon.ID, c2.ID, "", 0, 10)
	if d2.Status != store.CheckSkippedCredits || len(d2.Pages) != 0 || d2.Error == nil {
		t.Errorf("check without credits: %s, %d pages, error %v", d2.Status, len(d2.Pages), d2.Error)
	}
}

// recorder is an Enqueuer that only records check jobs.
type recorder struct {
	mu   sync.Mutex
	jobs []string
}

func (r *recorder) Insert(_ context.Context, args river.JobArgs, _ *river.InsertOpts) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, _ := json.Marshal(args)
	r.jobs = append(r.jobs, args.Kind()+" "+string(b))
	return nil
}

func (r *recorder) count(kind string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, j := range r.jobs {
		if strings.HasPrefix(j, kind+" ") {
			n++
		}
	}
	return n
}

// TestZDRForcedCheck: a check of a team that has zero data retention forced
// on (set after its monitor was created) fails with the reason and scrapes
// nothing.
func TestZDRForcedCheck(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, "sqlite", func(c *monitor.RunnerConfig) {
		c.ZDRForced = func(context.Context, string) (bool, error) { return true, nil }
	})
	s := newSite(t)
	s.set("/a", "<p>a</p>")
	sched, _ := monitor.ParseSchedule("", "daily", "UTC")
	mon, err := h.svc.Create(t.Context(), h.team.ID, monitor.Input{Name: "z", Schedule: sched, RetentionDays: 1,
		Config: monitor.Config{Targets: []monitor.Target{scrapeTarget("t", s.url("/a"))}}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := h.svc.Run(t.Context(), h.team.ID, mon.ID)
	if err != nil {
		t.Fatal(err)
	}
	d := h.waitCheck(t, mon.ID, c.ID)
	if d.Status != "failed" || d.Error == nil || *d.Error != monitor.ZDRForcedMessage || len(d.Pages) != 0 {
		t.Errorf("check: status %s error %v pages %d", d.Status, d.Error, len(d.Pages))
	}
	s.mu.Lock()
	n := s.hits
	s.mu.Unlock()
	if n != 0 {
		t.Errorf("the page was fetched %d times", n)
	}
}
