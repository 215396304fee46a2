package monitor_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/firegate/firegate/internal/monitor"
	"github.com/firegate/firegate/internal/queue"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/postgres"
	"github.com/firegate/firegate/internal/testenv"
)

// clock is an injected clock the test moves by hand.
type clock struct{ ns atomic.Int64 }

func newClock(t time.Time) *clock {
	c := &clock{}
	c.set(t)
	return c
}
func (c *clock) set(t time.Time) { c.ns.Store(t.UnixNano()) }
func (c *clock) now() time.Time  { return time.Unix(0, c.ns.Load()).UTC() }
func at(hh, mm int) time.Time    { return time.Date(2026, 6, 1, hh, mm, 0, 0, time.UTC) }

// TestScheduler advances an injected clock across due times: one check per
// due slot, none before it, one (not one per slot) after a downtime that
// missed several, and skipped_overlap while the previous check is
// unfinished.
func TestScheduler(t *testing.T) {
	for _, kind := range []string{"postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			testScheduler(t, kind)
		})
	}
}

func testScheduler(t *testing.T, kind string) {
	ctx := t.Context()
	st := openStore(t, kind)
	clk := newClock(at(10, 7))
	rec := &recorder{}
	newRunner := func() *monitor.Runner {
		r := monitor.NewRunner(monitor.RunnerConfig{Store: st, Now: clk.now, Log: testenv.Logger(t)})
		r.Bind(rec)
		return r
	}
	runner := newRunner()
	svc := monitor.NewService(st, rec, clk.now)
	team, _ := st.CreateTeam(ctx, "sched")
	sched, _ := monitor.ParseSchedule("", "every 30 minutes", "UTC")
	mon, err := svc.Create(ctx, team.ID, monitor.Input{Name: "s", Schedule: sched, RetentionDays: 30,
		Config: monitor.Config{Targets: []monitor.Target{scrapeTarget("t", "https://example.com/")}}})
	if err != nil {
		t.Fatal(err)
	}
	if mon.NextRunAt == nil || !mon.NextRunAt.Equal(at(10, 30)) {
		t.Fatalf("nextRunAt = %v, want 10:30", mon.NextRunAt)
	}
	checks := func() []monitor.CheckView {
		t.Helper()
		cs, err := svc.Checks(ctx, team.ID, mon.ID, "", 100, 0)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	tick := func(r *monitor.Runner) {
		t.Helper()
		if err := r.Tick(ctx); err != nil {
			t.Fatalf("Tick: %v", err)
		}
	}

	clk.set(at(10, 29))
	tick(runner)
	if n := len(checks()); n != 0 {
		t.Fatalf("%d checks before the due time", n)
	}
	clk.set(at(10, 30))
	tick(runner)
	tick(runner) // the same instant again: nothing more
	cs := checks()
	if len(cs) != 1 || cs[0].Trigger != store.TriggerScheduled || cs[0].Status != store.CheckQueued ||
		cs[0].ScheduledFor == nil || !cs[0].ScheduledFor.Equal(at(10, 30)) {
		t.Fatalf("checks at 10:30 = %+v", cs)
	}
	if n := rec.count("monitor_check"); n != 1 {
		t.Errorf("%d check jobs enqueued, want 1", n)
	}
	m, _ := svc.Get(ctx, team.ID, mon.ID)
	if !m.NextRunAt.Equal(at(11, 0)) || m.CurrentCheckID == nil || *m.CurrentCheckID != cs[0].ID {
		t.Errorf("monitor after the 10:30 check: next %v current %v", m.NextRunAt, m.CurrentCheckID)
	}

	// The 10:30 check is still unfinished at 11:00: skipped_overlap.
	clk.set(at(11, 0))
	tick(runner)
	cs = checks()
	if len(cs) != 2 || cs[0].Status != store.CheckSkippedOverlap || !cs[0].ScheduledFor.Equal(at(11, 0)) || cs[0].FinishedAt == nil {
		t.Fatalf("checks at 11:00 = %+v", cs)
	}
	// No job for the skipped check; the sweep enqueues the 10:30 check
	// again, queued for half an hour (the queue's uniqueness by check
	// makes that a no-op when its first job is still there).
	if n := rec.count("monitor_check"); n != 2 {
		t.Errorf("%d check jobs after an overlap, want 2", n)
	}

	// The first check finishes (claimed and run with no pages to scrape
	// by a runner without a scraper would fail: finish it via the store).
	c, ok, err := st.ClaimCheck(ctx, cs[1].ID, clk.now())
	if err != nil || !ok {
		t.Fatal(err)
	}
	now := clk.now()
	c.Status, c.FinishedAt, c.BillingStatus = store.CheckCompleted, &now, "not_applicable"
	if _, err := st.FinishCheck(ctx, c); err != nil {
		t.Fatal(err)
	}

	// Down from 11:05 to 13:10: the 11:30, 12:00, 12:30 and 13:00 slots
	// pass with no scheduler. A restarted runner starts one check, for
	// the oldest missed slot, and schedules the next after now.
	clk.set(at(13, 10))
	runner = newRunner()
	tick(runner)
	tick(runner)
	cs = checks()
	if len(cs) != 3 || cs[0].Status != store.CheckQueued || !cs[0].ScheduledFor.Equal(at(11, 30)) {
		t.Fatalf("checks after the downtime = %+v", cs)
	}
	m, _ = svc.Get(ctx, team.ID, mon.ID)
	if !m.NextRunAt.Equal(at(13, 30)) {
		t.Errorf("nextRunAt after the downtime = %v, want 13:30", m.NextRunAt)
	}

	// A check left queued past the sweep delay is enqueued again (its job
	// is unique by check, so the queue runs it once).
	before := rec.count("monitor_check")
	clk.set(at(13, 12))
	tick(runner)
	if n := rec.count("monitor_check"); n != before+1 {
		t.Errorf("check jobs after the sweep = %d, want %d", n, before+1)
	}

	// Paused: no checks however late; resumed: the next slot after now.
	paused := "paused"
	if _, err := svc.Update(ctx, team.ID, mon.ID, monitor.Patch{Status: &paused}); err != nil {
		t.Fatal(err)
	}
	clk.set(at(15, 0))
	tick(runner)
	if n := len(checks()); n != 3 {
		t.Errorf("%d checks while paused, want 3", n)
	}
	active := "active"
	m, err = svc.Update(ctx, team.ID, mon.ID, monitor.Patch{Status: &active})
	if err != nil || m.NextRunAt == nil || !m.NextRunAt.Equal(at(15, 30)) {
		t.Errorf("resumed: next %v, %v", m.NextRunAt, err)
	}
}

// TestTwoSchedulers runs two schedulers, as two replicas would, on one
// Postgres schema through separate pools, ticking at the same instants
// concurrently over many monitors: every due slot gets exactly one check.
func TestTwoSchedulers(t *testing.T) {
	t.Parallel()
	url := testenv.PostgresURL(t)
	schema := "test_" + strings.ToLower(rand.Text())
	t.Cleanup(func() {
		ctx := context.WithoutCancel(t.Context())
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Errorf("drop schema: %v", err)
			return
		}
		defer conn.Close(ctx)
		_, _ = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	})
	open := func() *postgres.Store {
		s, err := postgres.OpenOptions(t.Context(), url, testenv.Logger(t), postgres.Options{Schema: schema, MaxConns: 8})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	a, b := open(), open()
	ctx := t.Context()
	clk := newClock(at(9, 0))
	team, _ := a.CreateTeam(ctx, "replicas")
	svc := monitor.NewService(a, &recorder{}, clk.now)
	sched, _ := monitor.ParseSchedule("*/5 * * * *", "", "UTC")
	const monitors = 20
	var ids []string
	for range monitors {
		m, err := svc.Create(ctx, team.ID, monitor.Input{Name: "r", Schedule: sched, RetentionDays: 1,
			Config: monitor.Config{Targets: []monitor.Target{scrapeTarget("t", "https://example.com/")}}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	recA, recB := &recorder{}, &recorder{}
	ra := monitor.NewRunner(monitor.RunnerConfig{Store: a, Now: clk.now, Log: testenv.Logger(t)})
	rb := monitor.NewRunner(monitor.RunnerConfig{Store: b, Now: clk.now, Log: testenv.Logger(t)})
	ra.Bind(recA)
	rb.Bind(recB)

	const slots = 6
	for i := 1; i <= slots; i++ {
		clk.set(at(9, 5*i))
		var wg sync.WaitGroup
		for _, r := range []*monitor.Runner{ra, rb, ra, rb} {
			wg.Go(func() {
				if err := r.Tick(ctx); err != nil {
					t.Errorf("Tick: %v", err)
				}
			})
		}
		wg.Wait()
		// Finish every check so the next slot is not an overlap.
		for _, id := range ids {
			cs, _ := a.MonitorChecks(ctx, team.ID, id, store.CheckQueued, 10, 0)
			for _, c := range cs {
				c, ok, err := a.ClaimCheck(ctx, c.ID, clk.now())
				if err != nil || !ok {
					t.Fatal(err)
				}
				now := clk.now()
				c.Status, c.FinishedAt, c.BillingStatus = store.CheckCompleted, &now, "not_applicable"
				if _, err := a.FinishCheck(ctx, c); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, id := range ids {
		cs, err := a.MonitorChecks(ctx, team.ID, id, "", 100, 0)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[time.Time]int{}
		for _, c := range cs {
			if c.Status != store.CheckCompleted {
				t.Errorf("monitor %s: check %s is %s", id, c.ID, c.Status)
			}
			seen[*c.ScheduledFor]++
		}
		if len(cs) != slots || len(seen) != slots {
			t.Errorf("monitor %s: %d checks over %d distinct slots, want %d", id, len(cs), len(seen), slots)
		}
	}
	if got := recA.count("monitor_check") + recB.count("monitor_check"); got != monitors*slots {
		t.Errorf("%d check jobs enqueued, want %d", got, monitors*slots)
	}
	if recA.count("monitor_check") == 0 || recB.count("monitor_check") == 0 {
		t.Logf("one replica won every slot (A %d, B %d)", recA.count("monitor_check"), recB.count("monitor_check"))
	}
}

// TestCheckJobUnique: enqueuing a check again (the sweep does, every tick,
// for checks left queued) adds no second job while the first exists.
func TestCheckJobUnique(t *testing.T) {
	for _, kind := range []string{"postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			st := openStore(t, kind)
			ctx := t.Context()
			q, err := queue.Open(ctx, st, river.NewWorkers(), queue.Options{}, testenv.Logger(t))
			if err != nil {
				t.Fatal(err)
			}
			clk := newClock(at(8, 0))
			svc := monitor.NewService(st, q, clk.now)
			runner := monitor.NewRunner(monitor.RunnerConfig{Store: st, Now: clk.now, Log: testenv.Logger(t)})
			runner.Bind(q)
			team, _ := st.CreateTeam(ctx, "unique")
			sched, _ := monitor.ParseSchedule("", "daily", "UTC")
			m, err := svc.Create(ctx, team.ID, monitor.Input{Name: "u", Schedule: sched, RetentionDays: 1,
				Config: monitor.Config{Targets: []monitor.Target{scrapeTarget("t", "https://example.com/")}}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Run(ctx, team.ID, m.ID); err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				clk.set(at(8, 5+i))
				if err := runner.Tick(ctx); err != nil {
					t.Fatal(err)
				}
			}
			const count = `SELECT count(*) FROM river_job WHERE kind = 'monitor_check'`
			var n int
			switch s := any(st).(type) {
			case interface{ Pool() *pgxpool.Pool }:
				err = s.Pool().QueryRow(ctx, count).Scan(&n)
			case interface{ WriteDB() *sql.DB }:
				err = s.WriteDB().QueryRowContext(ctx, count).Scan(&n)
			}
			if err != nil || n != 1 {
				t.Errorf("%d check jobs after a run and three sweeps, want 1 (%v)", n, err)
			}
		})
	}
}
