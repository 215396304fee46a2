package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/firegate/firegate/internal/store"
)

// Scheduling bounds.
const (
	dueBatch   = 100
	sweepAfter = time.Minute
	purgeEvery = time.Hour
	// purgeGrace is how long a deleted monitor whose check never finished
	// is kept before it is purged all the same.
	purgeGrace = 24 * time.Hour
)

// Tick starts the checks due now: for each due monitor it claims the slot
// (the store's compare-and-set of next_run_at, so of several schedulers
// one wins) and moves next_run_at to the first run after now, so slots
// missed while no scheduler ran give one check, not one per slot. It also
// re-enqueues checks left queued (an insert lost to a crash), repairs
// checks left running (see recoverRunning) and, hourly, purges checks past
// their retention.
func (r *Runner) Tick(ctx context.Context) error {
	now := r.now()
	due, err := r.cfg.Store.DueMonitors(ctx, now, dueBatch)
	if err != nil {
		return err
	}
	for _, m := range due {
		r.startScheduled(ctx, m, now)
	}
	ids, err := r.cfg.Store.QueuedChecks(ctx, now.Add(-sweepAfter), dueBatch)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := enqueueCheck(ctx, r.q, id); err != nil {
			r.cfg.Log.WarnContext(ctx, "monitor: re-enqueue check", "check_id", id, "err", err)
		}
	}
	stale, err := r.cfg.Store.StaleRunningChecks(ctx, now.Add(-(r.cfg.CheckTimeout + sweepAfter)), dueBatch)
	if err != nil {
		return err
	}
	if len(stale) > 0 {
		r.recoverRunning(ctx, stale, now)
	}
	r.mu.Lock()
	purge := now.Sub(r.lastPurge) >= purgeEvery
	if purge {
		r.lastPurge = now
	}
	r.mu.Unlock()
	if purge {
		n, err := r.cfg.Store.DeleteExpiredChecks(ctx, now)
		if err != nil {
			return err
		}
		if n > 0 {
			r.cfg.Log.InfoContext(ctx, "monitor: expired checks purged", "checks", n)
		}
		n, err = r.cfg.Store.PurgeDeletedMonitors(ctx, now.Add(-purgeGrace))
		if err != nil {
			return err
		}
		if n > 0 {
			r.cfg.Log.InfoContext(ctx, "monitor: deleted monitors purged with their checks and snapshots", "monitors", n)
		}
	}
	return nil
}

// discardedLister lists the queue's discarded jobs; *queue.Queue
// implements it.
type discardedLister interface {
	Discarded(ctx context.Context, kind string, each func(*rivertype.JobRow) error) error
}

// recoverRunning repairs checks left running that no worker claimed for
// longer than a check may take (ids): a check whose job River discarded
// (its attempts spent, the last worker dead with it, so the last attempt
// could not fail it) fails with the last attempt's error; any other is
// queued again and resumes (a job of it still waiting in the queue is not
// doubled: check jobs are unique by check).
func (r *Runner) recoverRunning(ctx context.Context, ids []string, now time.Time) {
	discarded := map[string]string{}
	if q, ok := r.q.(discardedLister); ok {
		err := q.Discarded(ctx, checkArgs{}.Kind(), func(row *rivertype.JobRow) error {
			var a checkArgs
			if json.Unmarshal(row.EncodedArgs, &a) == nil && a.Check != "" {
				reason := "unknown"
				if n := len(row.Errors); n > 0 {
					reason = row.Errors[n-1].Error
				}
				discarded[a.Check] = reason
			}
			return nil
		})
		if err != nil {
			r.cfg.Log.WarnContext(ctx, "monitor: list discarded check jobs", "err", err)
			return
		}
	}
	for _, id := range ids {
		reason, gone := discarded[id]
		if !gone {
			r.cfg.Log.WarnContext(ctx, "monitor: check left running without a worker; queued again", "check_id", id)
			if err := enqueueCheck(ctx, r.q, id); err != nil {
				r.cfg.Log.WarnContext(ctx, "monitor: re-enqueue running check", "check_id", id, "err", err)
			}
			continue
		}
		// River keeps only the last error's text: the check's error quotes
		// it by the error id it is logged under.
		shown := r.shown(ctx, errors.New(reason), "check_id", id)
		ok, err := r.cfg.Store.FinishCheck(ctx, store.MonitorCheck{ID: id, Status: store.CheckFailed, FinishedAt: &now,
			Summary: emptySummary, BillingStatus: "not_applicable",
			Error: "The check could not be completed: its job failed on all of its attempts; the last one: " + shown})
		if err != nil {
			r.cfg.Log.ErrorContext(ctx, "monitor: fail check left running", "check_id", id, "err", err)
			continue
		}
		if ok {
			r.cfg.Log.WarnContext(ctx, "monitor: check left running with its job discarded; failed", "check_id", id, "err", reason)
		}
	}
}

func (r *Runner) startScheduled(ctx context.Context, m store.Monitor, now time.Time) {
	log := r.cfg.Log.With("monitor_id", m.ID)
	sched, err := ParseSchedule(m.Cron, "", m.Timezone)
	if err != nil {
		log.ErrorContext(ctx, "monitor: stored schedule", "err", err)
		return
	}
	var cfg Config
	if err := json.Unmarshal(m.Config, &cfg); err != nil {
		log.ErrorContext(ctx, "monitor: stored config", "err", err)
		return
	}
	c, err := r.cfg.Store.StartCheck(ctx, store.CheckStart{
		TeamID: m.TeamID, MonitorID: m.ID, DueAt: m.NextRunAt, NextRunAt: nonZero(sched.Next(now)),
		Check: store.MonitorCheck{ID: newID(), Trigger: store.TriggerScheduled, ScheduledFor: m.NextRunAt,
			EstimatedCredits: CheckCost(cfg), CreatedAt: now},
	})
	switch {
	case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrMonitorPaused), errors.Is(err, store.ErrNotFound):
		return // another scheduler took the slot, or the monitor changed
	case err != nil:
		log.ErrorContext(ctx, "monitor: start check", "err", err)
		return
	}
	if c.Status == store.CheckSkippedOverlap {
		log.InfoContext(ctx, "monitor: check skipped, the previous one still runs", "check_id", c.ID)
		r.notify(ctx, cfg.Webhook, EventCheckCompleted, c.ID, true, completedData(m.ID, c.ID, c.Status, Summary{}))
		return
	}
	if err := enqueueCheck(ctx, r.q, c.ID); err != nil {
		log.WarnContext(ctx, "monitor: enqueue check (the sweep retries)", "check_id", c.ID, "err", err)
	}
}

// Run ticks every interval until ctx ends.
func (r *Runner) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := r.Tick(ctx); err != nil && ctx.Err() == nil {
			r.cfg.Log.WarnContext(ctx, "monitor: scheduler tick", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
