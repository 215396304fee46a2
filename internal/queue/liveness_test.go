package queue_test

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/firegate/firegate/internal/queue"
	"github.com/firegate/firegate/internal/queue/queuetest"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/teststore"
	"github.com/firegate/firegate/internal/testenv"
)

// riverTable is raw access to River's job table, for a test to stage jobs
// as a dead process leaves them and to read them back.
type riverTable interface {
	// setRunning makes echo job n running on the given attempt, started by
	// worker after an earlier attempt by "dead" (so only the last entry of
	// attempted_by may count).
	setRunning(t *testing.T, n, attempt int, worker string)
	// job reads echo job n's state, attempt and recorded errors (JSON).
	job(t *testing.T, n int) (state string, attempt int, errors string)
}

type pgTable struct{ pool *pgxpool.Pool }

func (p pgTable) setRunning(t *testing.T, n, attempt int, worker string) {
	t.Helper()
	tag, err := p.pool.Exec(t.Context(), `UPDATE river_job SET state = 'running', attempt = $2,
		attempted_at = now(), attempted_by = ARRAY['dead', $3] WHERE kind = 'echo' AND (args->>'n')::int = $1`,
		n, attempt, worker)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("stage job %d: %v (%d rows)", n, err, tag.RowsAffected())
	}
}

func (p pgTable) job(t *testing.T, n int) (string, int, string) {
	t.Helper()
	var state, errs string
	var attempt int
	err := p.pool.QueryRow(t.Context(), `SELECT state::text, attempt, coalesce(array_to_json(errors)::text, '')
		FROM river_job WHERE kind = 'echo' AND (args->>'n')::int = $1`, n).Scan(&state, &attempt, &errs)
	if err != nil {
		t.Fatalf("read job %d: %v", n, err)
	}
	return state, attempt, errs
}

type sqliteTable struct{ db *sql.DB }

func (s sqliteTable) setRunning(t *testing.T, n, attempt int, worker string) {
	t.Helper()
	res, err := s.db.ExecContext(t.Context(), `UPDATE river_job SET state = 'running', attempt = ?2,
		attempted_at = datetime('now', 'subsec'), attempted_by = json_array('dead', ?3)
		WHERE kind = 'echo' AND json_extract(args, '$.n') = ?1`, n, attempt, worker)
	if err != nil {
		t.Fatalf("stage job %d: %v", n, err)
	}
	if k, _ := res.RowsAffected(); k != 1 {
		t.Fatalf("stage job %d: %d rows", n, k)
	}
}

func (s sqliteTable) job(t *testing.T, n int) (string, int, string) {
	t.Helper()
	var state, errs string
	var attempt int
	err := s.db.QueryRowContext(t.Context(), `SELECT state, attempt, coalesce(errors, '')
		FROM river_job WHERE kind = 'echo' AND json_extract(args, '$.n') = ?`, n).Scan(&state, &attempt, &errs)
	if err != nil {
		t.Fatalf("read job %d: %v", n, err)
	}
	return state, attempt, errs
}

// watched passes the queue's liveness calls to a store and tells the test
// about them. The queue's loop starts every sweep with StaleWorkers, one
// sweep at a time, so the n+1th call after a point in the test means n
// whole sweeps ran after it; heartbeats are counted per worker.
type watched struct {
	store.WorkerStore
	sweeps chan struct{} // one value per StaleWorkers call, dropped when full

	mu    sync.Mutex
	beats map[string]int // successful heartbeats by worker id
}

func watch(ws store.WorkerStore) *watched {
	return &watched{WorkerStore: ws, sweeps: make(chan struct{}, 64), beats: map[string]int{}}
}

func (w *watched) StaleWorkers(ctx context.Context, age time.Duration) ([]string, error) {
	select {
	case w.sweeps <- struct{}{}:
	default:
	}
	return w.WorkerStore.StaleWorkers(ctx, age)
}

func (w *watched) Heartbeat(ctx context.Context, id string) error {
	err := w.WorkerStore.Heartbeat(ctx, id)
	if err == nil {
		w.mu.Lock()
		w.beats[id]++
		w.mu.Unlock()
	}
	return err
}

func (w *watched) beatsOf(id string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.beats[id]
}

// sweepsRun returns once n whole sweeps have run since it was called.
func (w *watched) sweepsRun(t *testing.T, n int) {
	t.Helper()
	for {
		select {
		case <-w.sweeps:
			continue
		default:
		}
		break
	}
	timeout := time.After(testenv.Patient(10 * time.Second))
	for i := 0; i <= n; i++ {
		select {
		case <-w.sweeps:
		case <-timeout:
			t.Fatalf("%d of %d sweeps ran", max(i-1, 0), n)
		}
	}
}

// livenessStores open a store and its River table on each database.
var livenessStores = map[string]func(t *testing.T) (store.WorkerStore, riverTable){
	"postgres": func(t *testing.T) (store.WorkerStore, riverTable) {
		st := teststore.Postgres(t)
		return st, pgTable{st.Pool()}
	},
	"sqlite": func(t *testing.T) (store.WorkerStore, riverTable) {
		st := teststore.SQLite(t)
		return st, sqliteTable{st.WriteDB()}
	},
}

// TestDeadWorkerJobsRunAgain stages the running jobs of three other
// workers: one whose last heartbeat is an hour old (dead), one that beat
// just now (alive), one that never beat (unknown: left to River's
// rescuer). The queue hands back only the dead worker's jobs, at once: the
// one with attempts left runs again as its next attempt, the one whose
// attempts are spent is discarded; the dead worker is forgotten; the
// queue's own heartbeat is kept while it runs and removed when it stops.
func TestDeadWorkerJobsRunAgain(t *testing.T) {
	for name, open := range livenessStores {
		t.Run(name, func(t *testing.T) {
			ws, table := open(t)
			workers := river.NewWorkers()
			w := &echoWorker{seen: map[int]int{}, done: make(chan int, 10)}
			river.AddWorker(workers, w)
			// The queue's store calls are bounded by its heartbeat
			// interval: under the race detector they take longer. The dead
			// worker's beat is staged an hour old, so no test step depends
			// on how long the others take.
			beat, deadAfter := testenv.Patient(100*time.Millisecond), time.Minute
			live := watch(ws)
			q, err := queue.Open(t.Context(), ws, workers, queue.Options{Workers: 4, Liveness: live,
				HeartbeatEvery: beat, DeadAfter: deadAfter}, testenv.Logger(t))
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			for n := 1; n <= 4; n++ {
				if err := q.Insert(ctx, echoArgs{N: n}, &river.InsertOpts{MaxAttempts: 3}); err != nil {
					t.Fatal(err)
				}
			}
			table.setRunning(t, 1, 1, "dead")
			table.setRunning(t, 2, 1, "alive")
			table.setRunning(t, 3, 1, "unknown")
			table.setRunning(t, 4, 3, "dead")
			if err := ws.Heartbeat(ctx, "alive"); err != nil {
				t.Fatal(err)
			}
			queuetest.StageDead(t, ws, "dead")

			started := time.Now()
			if err := q.Start(ctx); err != nil {
				t.Fatal(err)
			}
			stopped := false
			stop := func() {
				if stopped {
					return
				}
				stopped = true
				sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if err := q.Stop(sctx); err != nil {
					t.Errorf("Stop: %v", err)
				}
			}
			t.Cleanup(stop)
			select {
			case n := <-w.done:
				if n != 1 {
					t.Fatalf("job %d ran, want the dead worker's job 1", n)
				}
			case <-time.After(testenv.Patient(10 * time.Second)):
				t.Fatal("the dead worker's job did not run again")
			}
			t.Logf("dead worker's job ran again %v after start", time.Since(started).Round(time.Millisecond))
			// Two more sweeps: they release nothing else (jobs 2 and 3
			// stay running on their first attempt, below).
			beatsBefore := live.beatsOf(q.ID())
			live.sweepsRun(t, 2)
			select {
			case n := <-w.done:
				t.Fatalf("job %d ran; only the dead worker's job 1 may", n)
			default:
			}
			if n := live.beatsOf(q.ID()); n <= beatsBefore {
				t.Errorf("the queue beat %d times over two sweeps, want at least once", n-beatsBefore)
			}

			state, attempt, errs := table.job(t, 1)
			if state != "completed" || attempt != 2 || !strings.Contains(errs, "stopped heartbeating") {
				t.Errorf("job 1: %s attempt %d errors %s; want completed on attempt 2 with the release recorded", state, attempt, errs)
			}
			if state, _, errs := table.job(t, 4); state != "discarded" || !strings.Contains(errs, "stopped heartbeating") {
				t.Errorf("job 4 (attempts spent): %s errors %s; want discarded", state, errs)
			}
			for _, n := range []int{2, 3} {
				if state, attempt, _ := table.job(t, n); state != "running" || attempt != 1 {
					t.Errorf("job %d: %s attempt %d; want left running", n, state, attempt)
				}
			}
			all, err := ws.StaleWorkers(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			if slices.Contains(all, "dead") || !slices.Contains(all, "alive") || !slices.Contains(all, q.ID()) {
				t.Errorf("workers recorded %q; want alive and this queue, not dead", all)
			}
			stop()
			if deleted, err := ws.DeleteWorker(ctx, q.ID(), 0); err != nil || deleted {
				t.Errorf("queue's worker row after Stop: deleted=%v err=%v; want already gone", deleted, err)
			}
		})
	}
}

// TestOwnStaleRowKeepsJobs: a worker whose own heartbeat row went stale
// (its beats failed) never hands back its own running jobs.
func TestOwnStaleRowKeepsJobs(t *testing.T) {
	ws, table := livenessStores["sqlite"](t)
	blocked := make(chan struct{})
	workers := river.NewWorkers()
	w := &blockWorker{started: make(chan int, 1), release: blocked}
	river.AddWorker(workers, w)
	const deadAfter = time.Minute
	live := watch(ws)
	q, err := queue.Open(t.Context(), ws, workers, queue.Options{Workers: 1, Liveness: &frozen{WorkerStore: live},
		HeartbeatEvery: testenv.Patient(50 * time.Millisecond), DeadAfter: deadAfter}, testenv.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		close(blocked)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = q.Stop(ctx)
	})
	if err := q.Insert(t.Context(), blockArgs{N: 1}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.started:
	case <-time.After(10 * time.Second):
		t.Fatal("job did not start")
	}
	// Its one recorded beat (at Start) is now an hour old; later ones
	// are lost (frozen).
	queuetest.StageDead(t, ws, q.ID())
	live.sweepsRun(t, 2)
	if stale, err := ws.StaleWorkers(t.Context(), deadAfter); err != nil || len(stale) != 1 || stale[0] != q.ID() {
		t.Fatalf("stale workers %q, %v; want only this queue's (its beats are frozen)", stale, err)
	}
	var state string
	var attempt int
	if err := table.(sqliteTable).db.QueryRow(`SELECT state, attempt FROM river_job WHERE kind = 'block'`).Scan(&state, &attempt); err != nil || state != "running" || attempt != 1 {
		t.Errorf("own job: %s attempt %d, %v; want still running its first attempt", state, attempt, err)
	}
	select {
	case <-w.started:
		t.Error("own job started twice")
	default:
	}
}

// frozen records the first heartbeat only, as a worker cut off from the
// database after it started would.
type frozen struct {
	store.WorkerStore
	once sync.Once
}

func (f *frozen) Heartbeat(ctx context.Context, id string) error {
	var err error
	f.once.Do(func() { err = f.WorkerStore.Heartbeat(ctx, id) })
	return err
}

type blockArgs struct {
	N int `json:"n"`
}

func (blockArgs) Kind() string { return "block" }

type blockWorker struct {
	river.WorkerDefaults[blockArgs]
	started chan int
	release chan struct{}
}

func (w *blockWorker) Work(ctx context.Context, job *river.Job[blockArgs]) error {
	w.started <- job.Args.N
	select {
	case <-w.release:
	case <-ctx.Done():
	}
	return nil
}

// TestStopBeatsWhileDraining: a worker stopping gracefully keeps beating
// while its running jobs drain (so no other process takes them for a dead
// worker's) and forgets its row once they are done.
func TestStopBeatsWhileDraining(t *testing.T) {
	ws, _ := livenessStores["sqlite"](t)
	blocked := make(chan struct{})
	workers := river.NewWorkers()
	w := &blockWorker{started: make(chan int, 1), release: blocked}
	river.AddWorker(workers, w)
	live := watch(ws)
	q, err := queue.Open(t.Context(), ws, workers, queue.Options{Workers: 1, Liveness: live,
		HeartbeatEvery: 50 * time.Millisecond, DeadAfter: time.Minute}, testenv.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := q.Insert(t.Context(), blockArgs{N: 1}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.started:
	case <-time.After(10 * time.Second):
		t.Fatal("job did not start")
	}
	stopping := make(chan struct{})
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		close(stopping)
		stopped <- q.Stop(ctx)
	}()
	<-stopping
	before := live.beatsOf(q.ID())
	testenv.Eventually(t, 10*time.Second, func() bool { return live.beatsOf(q.ID()) >= before+3 },
		"the queue stopped beating while its job drained (%d beats since Stop)", live.beatsOf(q.ID())-before)
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) with the job still running", err)
	default:
	}
	close(blocked)
	if err := <-stopped; err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if deleted, err := ws.DeleteWorker(t.Context(), q.ID(), 0); err != nil || deleted {
		t.Errorf("worker row after Stop: deleted=%v err=%v; want already gone", deleted, err)
	}
}

func TestLastAttemptDied(t *testing.T) {
	died := func(attempt int, errs ...rivertype.AttemptError) bool {
		return queue.LastAttemptDied(&rivertype.JobRow{Attempt: attempt, Errors: errs})
	}
	released := rivertype.AttemptError{Attempt: 2, Error: "worker stopped heartbeating; job queued again"}
	rescued := rivertype.AttemptError{Attempt: 2, Error: "Stuck job rescued by JobRescuer"}
	returned := rivertype.AttemptError{Attempt: 2, Error: "store: connection refused"}
	for _, c := range []struct {
		name string
		got  bool
		want bool
	}{
		{"first attempt", died(1), false},
		{"previous released", died(3, returned, released), true},
		{"previous rescued", died(3, rescued), true},
		{"previous returned an error", died(3, released, returned), false},
		{"released before the previous", died(4, released), false},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	if queue.LastAttemptDied(nil) {
		t.Error("nil job died")
	}
	if n := queue.DiedAttempts(&rivertype.JobRow{Errors: []rivertype.AttemptError{released, returned, rescued}}); n != 2 {
		t.Errorf("DiedAttempts = %d, want 2", n)
	}
}
