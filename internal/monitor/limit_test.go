package monitor_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/monitor"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/testenv"
)

// TestTeamConcurrencyDelaysChecks: a check's pages take the team's
// concurrency slots like any scrape. While the team holds its only slot
// the check's first page waits for it and the site sees no request; once
// the slot is free the check runs, one page at a time.
func TestTeamConcurrencyDelaysChecks(t *testing.T) {
	ctx := t.Context()
	lim := limits.NewLocal()
	h := newHarnessWith(t, "sqlite", func(c *monitor.RunnerConfig) {
		c.Limiter = lim
		c.TeamConcurrency = func(context.Context, string) (int, error) { return 1, nil }
		c.PageConcurrency = 4
	})
	s := newSite(t)
	var requests, inFlight, maxInFlight atomic.Int32
	inner := s.srv.Config.Handler
	s.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		inner.ServeHTTP(w, r)
	})
	for _, p := range []string{"/a", "/b", "/c", "/d"} {
		s.set(p, "<p>page "+p+"</p>")
	}
	sched, _ := monitor.ParseSchedule("", "daily", "UTC")
	mon, err := h.svc.Create(ctx, h.team.ID, monitor.Input{Name: "limited", Schedule: sched, RetentionDays: 30,
		Config: monitor.Config{Targets: []monitor.Target{scrapeTarget("t1", s.url("/a"), s.url("/b"), s.url("/c"), s.url("/d"))}}})
	if err != nil {
		t.Fatal(err)
	}

	// The team's one slot is taken (a scrape of its own in flight).
	release, _, err := lim.Acquire(ctx, h.team.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := h.svc.Run(ctx, h.team.ID, mon.ID)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() bool {
		n, err := lim.Waiting(ctx, h.team.ID)
		if err != nil {
			t.Fatal(err)
		}
		return n > 0
	}, "no page of the check queued for the team's slot")
	if got := requests.Load(); got != 0 {
		t.Fatalf("the site got %d requests while the team was at its limit", got)
	}
	if d, _, _ := h.svc.Check(ctx, h.team.ID, mon.ID, c.ID, "", 0, 10); d.Status != store.CheckRunning {
		t.Errorf("check while waiting = %s, want running", d.Status)
	}
	release()

	d := h.waitCheck(t, mon.ID, c.ID)
	if d.Status != store.CheckCompleted || d.Summary.New != 4 {
		t.Errorf("check = %s %+v", d.Status, d.Summary)
	}
	if requests.Load() != 4 || maxInFlight.Load() != 1 {
		t.Errorf("site requests = %d, at most %d at once; want 4, one at a time", requests.Load(), maxInFlight.Load())
	}
	if n, _ := lim.InUse(ctx, h.team.ID); n != 0 {
		t.Errorf("slots still held after the check: %d", n)
	}
}

// TestDeletedMonitorPurged: the scheduler's purge removes a deleted
// monitor's checks, pages and the snapshots its checks compared against.
func TestDeletedMonitorPurged(t *testing.T) {
	for _, kind := range []string{"postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			h := newHarness(t, kind, nil, nil)
			s := newSite(t)
			s.set("/p", "<p>watched</p>")
			sched, _ := monitor.ParseSchedule("", "daily", "UTC")
			mon, err := h.svc.Create(ctx, h.team.ID, monitor.Input{Name: "purged", Schedule: sched, RetentionDays: 30,
				Config: monitor.Config{Targets: []monitor.Target{scrapeTarget("t1", s.url("/p"))}}})
			if err != nil {
				t.Fatal(err)
			}
			c, err := h.svc.Run(ctx, h.team.ID, mon.ID)
			if err != nil {
				t.Fatal(err)
			}
			if d := h.waitCheck(t, mon.ID, c.ID); d.Status != store.CheckCompleted {
				t.Fatalf("check = %s", d.Status)
			}
			tag := "monitor:" + mon.ID + ":t1"
			if _, err := h.st.PreviousScrape(ctx, h.team.ID, s.url("/p"), tag); err != nil {
				t.Fatalf("snapshot after the check: %v", err)
			}
			if err := h.svc.Delete(ctx, h.team.ID, mon.ID); err != nil {
				t.Fatal(err)
			}
			if err := h.runner.Tick(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := h.st.PreviousScrape(ctx, h.team.ID, s.url("/p"), tag); err == nil {
				t.Error("the deleted monitor's snapshot is still there after the purge")
			}
			if pages, err := h.st.CheckPages(ctx, c.ID, "", 0, 10); err != nil || len(pages) != 0 {
				t.Errorf("the deleted monitor's pages after the purge: %v, %v", pages, err)
			}
		})
	}
}
