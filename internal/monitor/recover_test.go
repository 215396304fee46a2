package monitor_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/firegate/firegate/internal/monitor"
	"github.com/firegate/firegate/internal/queue"
	"github.com/firegate/firegate/internal/queue/queuetest"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/testenv"
)

// staleCheckArgs is a monitor check job as the runner queues it.
type staleCheckArgs struct {
	Check string `json:"check"`
}

func (staleCheckArgs) Kind() string { return "monitor_check" }

// TestRunningCheckRecovered: a check a crash left running, with nobody
// claiming it since, is repaired by the scheduler's tick: with no queue job
// it is queued again and runs to its end; with its job discarded by River
// (the worker of its last attempt died) it fails quoting the job's last
// error by the error id it is logged under.
func TestRunningCheckRecovered(t *testing.T) {
	for _, kind := range []string{"postgres", "sqlite"} {
		for _, mode := range []string{"no job", "discarded"} {
			t.Run(kind+"/"+mode, func(t *testing.T) {
				t.Parallel()
				log, book := testenv.NewLogBook(t)
				h := newHarnessWith(t, kind, func(c *monitor.RunnerConfig) { c.Log = log })
				s := newSite(t)
				s.set("/a", "<p>a</p>")
				sched, _ := monitor.ParseSchedule("", "daily", "UTC")
				mon, err := h.svc.Create(t.Context(), h.team.ID, monitor.Input{Name: "r", Schedule: sched, RetentionDays: 1,
					Config: monitor.Config{Targets: []monitor.Target{scrapeTarget("t", s.url("/a"))}}})
				if err != nil {
					t.Fatal(err)
				}
				// A check claimed two hours ago by a worker that died.
				lost := time.Now().Add(-2 * time.Hour)
				c, err := h.st.StartCheck(t.Context(), store.CheckStart{TeamID: h.team.ID, MonitorID: mon.ID,
					Check: store.MonitorCheck{ID: uuid.NewString(), Trigger: store.TriggerManual, EstimatedCredits: 1, CreatedAt: lost}})
				if err != nil {
					t.Fatal(err)
				}
				if _, ok, err := h.st.ClaimCheck(t.Context(), c.ID, lost); err != nil || !ok {
					t.Fatalf("claim: %v %v", ok, err)
				}
				// River's text of the last attempt's error, which names an
				// internal address.
				const reason = "staged: the worker died with the check: dial tcp 10.1.2.3:5432: connection refused"
				if mode == "discarded" {
					// Its job, scheduled far off so that no worker takes it,
					// then discarded as River leaves a spent job.
					if err := h.q.Insert(t.Context(), staleCheckArgs{Check: c.ID},
						&river.InsertOpts{Queue: queue.Control, ScheduledAt: time.Now().Add(time.Hour)}); err != nil {
						t.Fatal(err)
					}
					queuetest.StageDiscarded(t, h.st, "monitor_check", "check", c.ID, reason)
				}
				if err := h.runner.Tick(t.Context()); err != nil {
					t.Fatal(err)
				}
				d := h.waitCheck(t, mon.ID, c.ID)
				if mode == "no job" {
					if d.Status != store.CheckCompleted || len(d.Pages) != 1 {
						t.Errorf("resumed check: status %s, %d pages; want completed with 1", d.Status, len(d.Pages))
					}
					return
				}
				if d.Status != store.CheckFailed || len(d.Pages) != 0 {
					t.Errorf("check with a discarded job: status %s pages %d; want failed", d.Status, len(d.Pages))
				}
				expectHidden(t, "check with a discarded job", d.Error,
					"The check could not be completed: its job failed on all of its attempts; the last one: An unexpected error occurred",
					book, reason)
			})
		}
	}
}
