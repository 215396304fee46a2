// Package queue is the durable job queue: River (github.com/riverqueue/river)
// on the same database as the store, Postgres through pgx in production and
// the embedded SQLite file by default. It hides River's transaction type so
// the rest of the server sees one Queue whatever the database.
//
// Jobs live in River's tables. Every process that runs jobs heartbeats under
// its River client id (new at each start); every process sweeps for workers
// whose heartbeat is older than DeadAfter and hands the jobs they were
// running back to the queue, so a killed worker's jobs run again within
// seconds, on another worker or on the restarted process (see Liveness).
// River's own rescuer, after RescueAfter, remains the last resort for a live
// worker stuck in one job. Workers are registered on a *river.Workers before
// Open.
package queue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
)

// Queue names.
const (
	// Pages runs page scrapes of crawls and batches: the bulk of the work.
	Pages = "pages"
	// Control runs short jobs: crawl kickoffs, webhooks, purges.
	Control = river.QueueDefault
)

// Options tune Open. Zero values take the defaults.
type Options struct {
	// Workers is how many page jobs run at once in this process; 0 makes an
	// insert-only queue that runs no jobs (an API replica without workers).
	Workers int
	// ControlWorkers is how many control jobs run at once; default 8.
	ControlWorkers int
	// JobTimeout bounds one job; default 5 minutes.
	JobTimeout time.Duration
	// RescueAfter is how long a job may stay running before another worker
	// takes it over whatever its worker's heartbeat says: the last resort
	// for a worker alive but stuck in one job; default JobTimeout + 1m.
	RescueAfter time.Duration
	// Liveness, when set, records this process's heartbeats (when it runs
	// jobs) and lets it find dead workers, whose running jobs it hands back
	// to the queue. Without it a dead worker's jobs wait for RescueAfter.
	Liveness Liveness
	// HeartbeatEvery is how often a worker heartbeats and every process
	// sweeps for dead workers; default 5s.
	HeartbeatEvery time.Duration
	// DeadAfter is how old a worker's last heartbeat must be for it to be
	// presumed dead; default 15s (three missed beats).
	DeadAfter time.Duration
	// PollInterval is how often idle workers look for jobs when the
	// database cannot notify them (SQLite), and the fallback otherwise;
	// default 100ms on SQLite, 1s on Postgres.
	PollInterval time.Duration
	// PeriodicJobs run on a schedule in the elected leader process.
	PeriodicJobs []*river.PeriodicJob
	// Retention of finished job rows in River's table; default 1 hour.
	Retention time.Duration
}

// client is what Queue uses of a *river.Client, whatever its transaction
// type.
type client interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	InsertMany(ctx context.Context, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
	JobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error)
}

// Queue inserts jobs and, when it has workers, runs them.
type Queue struct {
	c       client
	id      string // the River client id: this process's worker id
	working bool
	depth   func(ctx context.Context) (int, error)
	release func(ctx context.Context, workerID string) (int, error)
	o       Options
	log     *slog.Logger

	mu   sync.Mutex
	stop context.CancelFunc // ends the liveness loop
	done chan struct{}      // closed when the liveness loop has ended
}

// OpenPostgres migrates River's tables in the pool's database (under an
// advisory lock, so replicas starting together are safe) and builds the
// queue. The pool's search_path decides the schema.
func OpenPostgres(ctx context.Context, pool *pgxpool.Pool, workers *river.Workers, o Options, log *slog.Logger) (*Queue, error) {
	driver := riverpgxv5.New(pool)
	if err := migratePostgres(ctx, pool, driver, log); err != nil {
		return nil, err
	}
	o = o.withDefaults(100 * time.Millisecond)
	id := newWorkerID()
	c, err := river.NewClient(driver, o.config(id, workers, log))
	if err != nil {
		return nil, fmt.Errorf("queue: %w", err)
	}
	depth := func(ctx context.Context) (int, error) {
		var n int
		err := pool.QueryRow(ctx, depthSQL).Scan(&n)
		return n, err
	}
	release := func(ctx context.Context, worker string) (int, error) {
		tag, err := pool.Exec(ctx, releasePostgresSQL, worker, releaseReason)
		return int(tag.RowsAffected()), err
	}
	return newQueue(c, id, o, depth, release, log), nil
}

// OpenSQLite migrates River's tables into the SQLite database and builds the
// queue on db, which should be the store's single-connection write pool so
// that all writers queue in Go rather than on the file lock.
func OpenSQLite(ctx context.Context, db *sql.DB, workers *river.Workers, o Options, log *slog.Logger) (*Queue, error) {
	driver := riversqlite.New(db)
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: riverLogger(log)})
	if err != nil {
		return nil, fmt.Errorf("queue: migrate: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return nil, fmt.Errorf("queue: migrate: %w", err)
	}
	o = o.withDefaults(100 * time.Millisecond)
	id := newWorkerID()
	cfg := o.config(id, workers, log)
	cfg.PollOnly = true
	c, err := river.NewClient(driver, cfg)
	if err != nil {
		return nil, fmt.Errorf("queue: %w", err)
	}
	depth := func(ctx context.Context) (int, error) {
		var n int
		err := db.QueryRowContext(ctx, depthSQL).Scan(&n)
		return n, err
	}
	release := func(ctx context.Context, worker string) (int, error) {
		res, err := db.ExecContext(ctx, releaseSQLiteSQL, releaseReason, worker)
		if err != nil {
			return 0, err
		}
		n, err := res.RowsAffected()
		return int(n), err
	}
	return newQueue(c, id, o, depth, release, log), nil
}

// depthSQL counts jobs waiting to run (both databases accept it).
const depthSQL = `SELECT count(*) FROM river_job WHERE state IN ('available', 'scheduled', 'retryable')`

// migrateLockKey is the advisory lock serializing River migrations between
// replicas.
const migrateLockKey = 0x5249564552 // "RIVER"

func migratePostgres(ctx context.Context, pool *pgxpool.Pool, driver *riverpgxv5.Driver, log *slog.Logger) error {
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: riverLogger(log)})
	if err != nil {
		return fmt.Errorf("queue: migrate: %w", err)
	}
	// River's migrations cannot share one transaction (one adds an enum
	// value another uses), so a session lock on a held connection
	// serializes replicas instead.
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("queue: migrate: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(migrateLockKey)); err != nil {
		return fmt.Errorf("queue: migrate lock: %w", err)
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(migrateLockKey))
	}()
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("queue: migrate: %w", err)
	}
	return nil
}

func (o Options) withDefaults(poll time.Duration) Options {
	if o.ControlWorkers <= 0 {
		o.ControlWorkers = 8
	}
	if o.JobTimeout <= 0 {
		o.JobTimeout = 5 * time.Minute
	}
	if o.RescueAfter <= o.JobTimeout {
		o.RescueAfter = o.JobTimeout + time.Minute
	}
	if o.PollInterval <= 0 {
		o.PollInterval = poll
	}
	if o.Retention <= 0 {
		o.Retention = time.Hour
	}
	if o.HeartbeatEvery <= 0 {
		o.HeartbeatEvery = 5 * time.Second
	}
	if o.DeadAfter <= 0 {
		o.DeadAfter = 3 * o.HeartbeatEvery
	}
	return o
}

func (o Options) config(id string, workers *river.Workers, log *slog.Logger) *river.Config {
	cfg := &river.Config{
		ID:                          id,
		JobTimeout:                  o.JobTimeout,
		RescueStuckJobsAfter:        o.RescueAfter,
		FetchPollInterval:           o.PollInterval,
		FetchCooldown:               min(o.PollInterval, 10*time.Millisecond),
		CompletedJobRetentionPeriod: o.Retention,
		CancelledJobRetentionPeriod: o.Retention,
		DiscardedJobRetentionPeriod: 24 * time.Hour,
		Logger:                      riverLogger(log),
		MaxAttempts:                 5,
	}
	if o.Workers > 0 {
		cfg.Workers = workers
		cfg.PeriodicJobs = o.PeriodicJobs
		cfg.Queues = map[string]river.QueueConfig{
			Pages:   {MaxWorkers: o.Workers},
			Control: {MaxWorkers: o.ControlWorkers},
		}
	}
	return cfg
}

// riverLogger passes River's own logs on at warn level and above: its info
// lines (every producer start, every leadership change) are noise here.
func riverLogger(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(minLevel{log.Handler(), slog.LevelWarn}).With("component", "river")
}

type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}
func (h minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(a), h.min}
}
func (h minLevel) WithGroup(n string) slog.Handler { return minLevel{h.Handler.WithGroup(n), h.min} }

// Start starts the workers, if any, and with Options.Liveness the loop that
// heartbeats and recovers dead workers' jobs. A worker's first heartbeat is
// written before it takes any job.
func (q *Queue) Start(ctx context.Context) error {
	if q.working && q.o.Liveness != nil {
		if err := q.o.Liveness.Heartbeat(ctx, q.id); err != nil {
			return fmt.Errorf("queue: heartbeat: %w", err)
		}
	}
	if q.working {
		if err := q.c.Start(ctx); err != nil {
			return fmt.Errorf("queue: start: %w", err)
		}
		q.log.InfoContext(ctx, "queue: worker started", "worker_id", q.id)
	}
	if q.o.Liveness != nil {
		q.startLiveness(ctx)
	}
	return nil
}

// Stop lets running jobs finish until ctx ends, then cancels the rest: a
// cancelled job is retried later (by this process after a restart, or by
// another worker), so shutting down hands unfinished work back.
func (q *Queue) Stop(ctx context.Context) error {
	// The heartbeat goes on while running jobs drain, so that no other
	// process takes them for a dead worker's.
	defer q.stopLiveness()
	if !q.working {
		return nil
	}
	err := q.c.Stop(ctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		q.log.Warn("queue: jobs still running at shutdown; cancelling them for retry")
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		err = q.c.StopAndCancel(stopCtx)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("queue: stop: %w", err)
	}
	if err == nil && q.o.Liveness != nil {
		// Every job of this worker has ended: nothing to hand back, so its
		// row can go now rather than when it goes stale.
		q.stopLiveness()
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, err := q.o.Liveness.DeleteWorker(dctx, q.id, 0); err != nil {
			q.log.WarnContext(ctx, "queue: forget worker", "worker_id", q.id, "err", err)
		}
	}
	return nil
}

// Insert enqueues one job.
func (q *Queue) Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error {
	_, err := q.c.Insert(ctx, args, opts)
	if err != nil {
		return fmt.Errorf("queue: insert %s: %w", args.Kind(), err)
	}
	return nil
}

// insertChunk is how many jobs one transaction of InsertMany inserts.
// River's SQLite driver inserts a row per statement (0.8 ms each here) and
// SQLite has one writer: a 50,000-URL batch inserted in one transaction
// held the database for 33 s, while every other writer (heartbeats, other
// teams' pages) waited and failed on its deadline. Chunks of 500 hold it
// for about 0.4 s at a time; on Postgres they cost a round trip each.
const insertChunk = 500

// InsertMany enqueues jobs, insertChunk to a transaction. On an error the
// chunks before it stay queued: callers' jobs must tolerate that (a page
// of a job that failed to start is skipped by its worker).
func (q *Queue) InsertMany(ctx context.Context, params []river.InsertManyParams) error {
	done := 0
	for chunk := range slices.Chunk(params, insertChunk) {
		if _, err := q.c.InsertMany(ctx, chunk); err != nil {
			return fmt.Errorf("queue: insert %d jobs (%d inserted before): %w", len(params), done, err)
		}
		done += len(chunk)
	}
	return nil
}

// Discarded calls each for every job of kind that River discarded (its
// attempts spent) and still keeps (a day), a page at a time, oldest first;
// it stops at each's first error.
func (q *Queue) Discarded(ctx context.Context, kind string, each func(*rivertype.JobRow) error) error {
	const page = 500
	params := river.NewJobListParams().Kinds(kind).States(rivertype.JobStateDiscarded).First(page)
	for {
		res, err := q.c.JobList(ctx, params)
		if err != nil {
			return fmt.Errorf("queue: list discarded %s jobs: %w", kind, err)
		}
		for _, j := range res.Jobs {
			if err := each(j); err != nil {
				return err
			}
		}
		if len(res.Jobs) < page || res.LastCursor == nil {
			return nil
		}
		params = params.After(res.LastCursor)
	}
}

// Depth counts jobs waiting to run, for metrics.
func (q *Queue) Depth(ctx context.Context) (int, error) { return q.depth(ctx) }

// Ping checks the queue's table is reachable.
func (q *Queue) Ping(ctx context.Context) error {
	_, err := q.depth(ctx)
	return err
}

// Open builds the queue on the database of a store: one with a Pool (the
// Postgres store) or a WriteDB (the SQLite store).
func Open(ctx context.Context, st any, workers *river.Workers, o Options, log *slog.Logger) (*Queue, error) {
	switch s := st.(type) {
	case interface{ Pool() *pgxpool.Pool }:
		return OpenPostgres(ctx, s.Pool(), workers, o, log)
	case interface{ WriteDB() *sql.DB }:
		return OpenSQLite(ctx, s.WriteDB(), workers, o, log)
	}
	return nil, fmt.Errorf("queue: no queue for store %T", st)
}
