package monitor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/monitor"
	"github.com/firegate/firegate/internal/queue"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/search"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/testenv"
)

// leaks are the parts of the injected internal errors no client may see.
var leaks = []string{"10.1.2.3", ":5432", ":9222", "scrape:", "browser:", "store:", "search:", "monitor:", "dial tcp", "devtools"}

const dnsMessage = "DNS resolution failed for hostname: nowhere.invalid. Check that the URL is correct and the site exists."

// faultyScraper fails /internal with an internal error and /dns with a
// known one whose cause names an internal resolver, panics on /panic (on
// the check's own goroutine, where an unrecovered panic ends the server);
// it scrapes the rest.
type faultyScraper struct{ next monitor.Scraper }

func (f faultyScraper) Scrape(ctx context.Context, o scrape.Options) (*scrape.Document, error) {
	switch {
	case strings.HasSuffix(o.URL, "/internal"):
		return nil, testenv.InternalError("scrape page")
	case strings.HasSuffix(o.URL, "/panic"):
		var rows []int
		_ = rows[5] // a bug a page runs into: index out of range
		return nil, nil
	case strings.HasSuffix(o.URL, "/dns"):
		return nil, &errcode.Failure{Kind: scrape.ErrDNSResolution, Msg: dnsMessage,
			Cause: errors.New("lookup nowhere.invalid on 10.1.2.3:53: no such host")}
	}
	return f.next.Scrape(ctx, o)
}

// brokenSearcher's engine fails with an internal error.
type brokenSearcher struct{}

func (brokenSearcher) Search(context.Context, search.Query) ([]search.Result, error) {
	return nil, fmt.Errorf("search: %w", testenv.InternalError("searxng"))
}

// brokenLedger cannot check credits.
type brokenLedger struct{}

func (brokenLedger) Check(context.Context, string, int64) error {
	return testenv.InternalError("ledger")
}
func (brokenLedger) Charge(context.Context, store.Charge) (store.ChargeResult, error) {
	return store.ChargeResult{}, nil
}

// expectHidden checks msg, shown for an internal error, as CheckHidden
// does, against leaks.
func expectHidden(t *testing.T, where string, msg *string, prefix string, book *testenv.LogBook, logged string) {
	t.Helper()
	if msg == nil {
		t.Errorf("%s: no error", where)
		return
	}
	book.CheckHidden(t, where, *msg, prefix, leaks, logged)
}

// TestCheckErrorsShowNoInternalError: a check's pages, search target and
// the check itself, failing with errors no errcode sentinel describes,
// show the generic message naming an error id (logged with the full
// error) and none of the error's addresses or package prefixes; a known
// error keeps its exact message.
func TestCheckErrorsShowNoInternalError(t *testing.T) {
	for _, kind := range []string{"postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			t.Run("pages and search", func(t *testing.T) {
				log, book := testenv.NewLogBook(t)
				h := newHarnessWith(t, kind, func(c *monitor.RunnerConfig) {
					c.Log, c.Scraper, c.Searcher = log, faultyScraper{next: c.Scraper}, brokenSearcher{}
				})
				s := newSite(t)
				s.set("/fine", "<p>fine</p>")
				echo, _ := json.Marshal(map[string]any{"type": "search", "id": "news"})
				searchT := monitor.Target{Type: monitor.TargetSearch, ID: "news", Echo: echo,
					Search: &monitor.SearchTarget{Queries: []string{"lamp news"}, Window: "5m", MaxResults: 10}}
				sched, _ := monitor.ParseSchedule("", "daily", "UTC")
				mon, err := h.svc.Create(t.Context(), h.team.ID, monitor.Input{Name: "e", Schedule: sched, RetentionDays: 1,
					Config: monitor.Config{Goal: "lamps", Targets: []monitor.Target{
						scrapeTarget("t", s.url("/fine"), s.url("/internal"), s.url("/dns"), s.url("/panic")), searchT}}})
				if err != nil {
					t.Fatal(err)
				}
				c, err := h.svc.Run(t.Context(), h.team.ID, mon.ID)
				if err != nil {
					t.Fatal(err)
				}
				d := h.waitCheck(t, mon.ID, c.ID)
				pages := pagesByURL(d)
				expectHidden(t, "page", pages[s.url("/internal")].Error, "An unexpected error occurred. Please contact support, error id ",
					book, "10.1.2.3:5432")
				expectHidden(t, "panicking page", pages[s.url("/panic")].Error, "An unexpected error occurred. Please contact support, error id ",
					book, "index out of range")
				if p := pages[s.url("/dns")]; p.Error == nil || *p.Error != dnsMessage {
					t.Errorf("page with a known error: %v, want %q", p.Error, dnsMessage)
				}
				if p := pages[s.url("/fine")]; p.Error != nil {
					t.Errorf("fine page: error %q", *p.Error)
				}
				var results []struct {
					Type  string `json:"type"`
					Error string `json:"error"`
				}
				if err := json.Unmarshal(d.TargetResults, &results); err != nil {
					t.Fatal(err)
				}
				for _, r := range results {
					if r.Type == monitor.TargetSearch {
						expectHidden(t, "search target", &r.Error, "Search failed: An unexpected error occurred", book, "searxng")
					}
				}
				expectHidden(t, "check", d.Error, "Search failed: An unexpected error occurred", book, "searxng")
			})
			t.Run("credits", func(t *testing.T) {
				log, book := testenv.NewLogBook(t)
				h := newHarnessWith(t, kind, func(c *monitor.RunnerConfig) { c.Log, c.Ledger = log, brokenLedger{} })
				s := newSite(t)
				s.set("/a", "<p>a</p>")
				sched, _ := monitor.ParseSchedule("", "daily", "UTC")
				mon, err := h.svc.Create(t.Context(), h.team.ID, monitor.Input{Name: "c", Schedule: sched, RetentionDays: 1,
					Config: monitor.Config{Targets: []monitor.Target{scrapeTarget("t", s.url("/a"))}}})
				if err != nil {
					t.Fatal(err)
				}
				c, err := h.svc.Run(t.Context(), h.team.ID, mon.ID)
				if err != nil {
					t.Fatal(err)
				}
				d := h.waitCheck(t, mon.ID, c.ID)
				if d.Status != store.CheckFailed {
					t.Errorf("status %s, want failed", d.Status)
				}
				expectHidden(t, "check", d.Error, "Credits could not be checked: An unexpected error occurred", book, "ledger")
			})
			t.Run("last attempt", func(t *testing.T) {
				log, book := testenv.NewLogBook(t)
				h := newHarnessWith(t, kind, func(c *monitor.RunnerConfig) {
					c.Log = log
					c.ZDRForced = func(context.Context, string) (bool, error) { return false, testenv.InternalError("team settings") }
				})
				s := newSite(t)
				s.set("/a", "<p>a</p>")
				sched, _ := monitor.ParseSchedule("", "daily", "UTC")
				mon, err := h.svc.Create(t.Context(), h.team.ID, monitor.Input{Name: "l", Schedule: sched, RetentionDays: 1,
					Config: monitor.Config{Targets: []monitor.Target{scrapeTarget("t", s.url("/a"))}}})
				if err != nil {
					t.Fatal(err)
				}
				c, err := h.st.StartCheck(t.Context(), store.CheckStart{TeamID: h.team.ID, MonitorID: mon.ID,
					Check: store.MonitorCheck{ID: uuid.NewString(), Trigger: store.TriggerManual, EstimatedCredits: 1, CreatedAt: time.Now()}})
				if err != nil {
					t.Fatal(err)
				}
				// One attempt, so that it is the last.
				if err := h.q.Insert(t.Context(), staleCheckArgs{Check: c.ID}, &river.InsertOpts{Queue: queue.Control, MaxAttempts: 1}); err != nil {
					t.Fatal(err)
				}
				d := h.waitCheck(t, mon.ID, c.ID)
				if d.Status != store.CheckFailed {
					t.Errorf("status %s, want failed", d.Status)
				}
				expectHidden(t, "check", d.Error, "The check could not be completed: An unexpected error occurred", book, "team settings")
			})
		})
	}
}
