package queue

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/riverqueue/river/rivertype"
)

// Liveness is where worker processes record their heartbeats;
// store.WorkerStore implements it (see there for the semantics).
type Liveness interface {
	Heartbeat(ctx context.Context, id string) error
	StaleWorkers(ctx context.Context, age time.Duration) ([]string, error)
	DeleteWorker(ctx context.Context, id string, staleFor time.Duration) (bool, error)
}

// releaseReason is the error recorded on a job handed back from a dead
// worker, as River records a rescued job's.
const releaseReason = "worker stopped heartbeating; job queued again"

// rescueReason is the error River's rescuer records on a job it took from
// a worker that held it past RescueAfter.
const rescueReason = "Stuck job rescued by JobRescuer"

// LastAttemptDied reports whether the job's previous attempt ended with its
// worker dead (handed back after the heartbeat stopped) or stuck (rescued
// after RescueAfter) rather than with an error its code returned. A job
// whose attempts keep ending this way may be what kills its workers.
func LastAttemptDied(job *rivertype.JobRow) bool {
	if job == nil || len(job.Errors) == 0 {
		return false
	}
	last := job.Errors[len(job.Errors)-1]
	return last.Attempt == job.Attempt-1 && died(last)
}

// DiedAttempts counts the job's attempts that ended with its worker dead or
// stuck (see LastAttemptDied).
func DiedAttempts(job *rivertype.JobRow) int {
	n := 0
	if job != nil {
		for _, e := range job.Errors {
			if died(e) {
				n++
			}
		}
	}
	return n
}

func died(e rivertype.AttemptError) bool {
	return e.Error == releaseReason || e.Error == rescueReason
}

// The release statements hand back the jobs a worker was running: River
// appends the client id to attempted_by when a job starts, so a running
// job whose last entry is the dead worker's id was in its hands. A job is
// made available at once (keeping its place in line) with its attempt
// count as is, so the next run is a retry that checks what the dead one
// finished; one whose attempts are spent is discarded, as River's rescuer
// would. The error is recorded in River's attempt error format.
const (
	releasePostgresSQL = `UPDATE river_job SET
	state = CASE WHEN attempt >= max_attempts THEN 'discarded'::river_job_state ELSE 'available'::river_job_state END,
	finalized_at = CASE WHEN attempt >= max_attempts THEN now() END,
	errors = array_append(errors, jsonb_build_object('at', now(), 'attempt', attempt, 'error', $2::text, 'trace', ''))
WHERE state = 'running' AND attempted_by[array_length(attempted_by, 1)] = $1`

	releaseSQLiteSQL = `UPDATE river_job SET
	state = CASE WHEN attempt >= max_attempts THEN 'discarded' ELSE 'available' END,
	finalized_at = CASE WHEN attempt >= max_attempts THEN datetime('now', 'subsec') END,
	errors = json_insert(coalesce(errors, json('[]')), '$[#]',
		json_object('at', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'attempt', attempt, 'error', ?1, 'trace', ''))
WHERE state = 'running' AND json_extract(attempted_by, '$[#-1]') = ?2`
)

// newWorkerID returns a River client id unique to this start of this
// process: the host name (as River's default) with the pid and a random
// suffix, so a restarted process never takes its previous incarnation's id.
func newWorkerID() string {
	host, _ := os.Hostname()
	host = strings.NewReplacer(".", "_", "-", "_").Replace(host)
	if host == "" {
		host = "unknown_host"
	}
	if len(host) > 60 {
		host = host[:60]
	}
	return fmt.Sprintf("%s_%d_%s", host, os.Getpid(), strings.ToLower(rand.Text()[:10]))
}

func newQueue(c client, id string, o Options, depth func(context.Context) (int, error),
	release func(context.Context, string) (int, error), log *slog.Logger) *Queue {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Queue{c: c, id: id, working: o.Workers > 0, depth: depth, release: release, o: o, log: log}
}

// ID is this process's worker id: its River client id, recorded in
// attempted_by of every job it starts and in its heartbeats.
func (q *Queue) ID() string { return q.id }

// Release hands the jobs that worker was running back to the queue (see
// the release statements), returning how many. The maintenance loop calls
// it for dead workers; it must not be called for a live one, whose jobs
// would then run twice (the store would still keep one result per URL).
func (q *Queue) Release(ctx context.Context, worker string) (int, error) {
	n, err := q.release(ctx, worker)
	if err != nil {
		return 0, fmt.Errorf("queue: release jobs of %s: %w", worker, err)
	}
	return n, nil
}

// startLiveness starts the loop that heartbeats (a process with workers)
// and recovers dead workers' jobs (every process).
func (q *Queue) startLiveness(ctx context.Context) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stop != nil {
		return
	}
	ctx, q.stop = context.WithCancel(context.WithoutCancel(ctx))
	q.done = make(chan struct{})
	go func() {
		defer close(q.done)
		t := time.NewTicker(q.o.HeartbeatEvery)
		defer t.Stop()
		// The first sweep is at once: a restarted process finds its
		// previous incarnation dead as soon as that one's beat is old.
		q.sweep(ctx)
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if q.working {
				q.beat(ctx)
			}
			q.sweep(ctx)
		}
	}()
}

// stopLiveness ends the loop and waits for it.
func (q *Queue) stopLiveness() {
	q.mu.Lock()
	stop, done := q.stop, q.done
	q.mu.Unlock()
	if stop == nil {
		return
	}
	stop()
	<-done
}

// beat writes this worker's heartbeat.
func (q *Queue) beat(ctx context.Context) {
	bctx, cancel := context.WithTimeout(ctx, q.o.HeartbeatEvery)
	defer cancel()
	if err := q.o.Liveness.Heartbeat(bctx, q.id); err != nil && ctx.Err() == nil {
		q.log.WarnContext(ctx, "queue: heartbeat failed; other workers will take this one's jobs if it goes on",
			"worker_id", q.id, "err", err)
	}
}

// sweep hands the running jobs of every dead worker back to the queue and
// forgets the worker. Every process sweeps; the release and the delete are
// idempotent, so sweeps racing on one dead worker do no harm.
func (q *Queue) sweep(ctx context.Context) {
	sctx, cancel := context.WithTimeout(ctx, q.o.HeartbeatEvery)
	defer cancel()
	dead, err := q.o.Liveness.StaleWorkers(sctx, q.o.DeadAfter)
	if err != nil {
		if ctx.Err() == nil {
			q.log.WarnContext(ctx, "queue: list dead workers", "err", err)
		}
		return
	}
	for _, id := range dead {
		if id == q.id {
			// This process is alive whatever its row says (its beats
			// failed): its jobs are still running here.
			continue
		}
		n, err := q.Release(sctx, id)
		if err != nil {
			if ctx.Err() == nil {
				q.log.WarnContext(ctx, "queue: release dead worker's jobs", "worker_id", id, "err", err)
			}
			return
		}
		// Only a worker still stale is forgotten: one that beat again in
		// between keeps its row (its released jobs run twice at worst,
		// which the store makes harmless).
		if _, err := q.o.Liveness.DeleteWorker(sctx, id, q.o.DeadAfter); err != nil {
			if ctx.Err() == nil {
				q.log.WarnContext(ctx, "queue: forget dead worker", "worker_id", id, "err", err)
			}
			return
		}
		q.log.InfoContext(ctx, "queue: worker presumed dead; its running jobs are queued again",
			"worker_id", id, "jobs", n, "dead_after", q.o.DeadAfter.String())
	}
}
