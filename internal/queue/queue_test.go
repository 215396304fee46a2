package queue_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	_ "modernc.org/sqlite"

	"github.com/firegate/firegate/internal/queue"
	"github.com/firegate/firegate/internal/testenv"
)

type echoArgs struct {
	N int `json:"n"`
}

func (echoArgs) Kind() string { return "echo" }
func (echoArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queue.Pages, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

type echoWorker struct {
	river.WorkerDefaults[echoArgs]
	mu   sync.Mutex
	seen map[int]int
	done chan int
}

func (w *echoWorker) Work(ctx context.Context, job *river.Job[echoArgs]) error {
	w.mu.Lock()
	w.seen[job.Args.N]++
	w.mu.Unlock()
	w.done <- job.Args.N
	return nil
}

// openers build a queue on each database.
func openers(t *testing.T) map[string]func(t *testing.T, w *river.Workers) *queue.Queue {
	return map[string]func(t *testing.T, w *river.Workers) *queue.Queue{
		"sqlite": func(t *testing.T, w *river.Workers) *queue.Queue {
			db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "q.db")+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate")
			if err != nil {
				t.Fatal(err)
			}
			db.SetMaxOpenConns(1)
			t.Cleanup(func() { db.Close() })
			q, err := queue.OpenSQLite(t.Context(), db, w, queue.Options{Workers: 8}, testenv.Logger(t))
			if err != nil {
				t.Fatal(err)
			}
			return q
		},
		"postgres": func(t *testing.T, w *river.Workers) *queue.Queue {
			pool := pgSchemaPool(t)
			q, err := queue.OpenPostgres(t.Context(), pool, w, queue.Options{Workers: 8}, testenv.Logger(t))
			if err != nil {
				t.Fatal(err)
			}
			return q
		},
	}
}

// pgSchemaPool connects to the test database with a fresh schema as the only
// search_path entry, dropped when the test ends.
func pgSchemaPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	url := testenv.PostgresURL(t)
	schema := "q_" + strings.ToLower(rand.Text())
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	admin, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		admin.Close()
	})
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func TestQueueRunsEveryJobOnce(t *testing.T) {
	for name, open := range openers(t) {
		t.Run(name, func(t *testing.T) {
			workers := river.NewWorkers()
			w := &echoWorker{seen: map[int]int{}, done: make(chan int, 100)}
			river.AddWorker(workers, w)
			q := open(t, workers)
			ctx := t.Context()
			if err := q.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_ = q.Stop(ctx)
			})
			var params []river.InsertManyParams
			for i := range 40 {
				params = append(params, river.InsertManyParams{Args: echoArgs{N: i}})
			}
			// The second half repeats the first: unique by args, so each
			// number runs once.
			if err := q.InsertMany(ctx, params); err != nil {
				t.Fatal(err)
			}
			if err := q.InsertMany(ctx, params[:20]); err != nil {
				t.Fatal(err)
			}
			timeout := time.After(20 * time.Second)
			for range 40 {
				select {
				case <-w.done:
				case <-timeout:
					t.Fatalf("jobs did not run; seen %d", len(w.seen))
				}
			}
			select {
			case n := <-w.done:
				t.Fatalf("job %d ran twice", n)
			case <-time.After(300 * time.Millisecond):
			}
			w.mu.Lock()
			defer w.mu.Unlock()
			for i := range 40 {
				if w.seen[i] != 1 {
					t.Errorf("job %d ran %d times", i, w.seen[i])
				}
			}
			depth, err := q.Depth(ctx)
			if err != nil || depth != 0 {
				t.Errorf("Depth = %d, %v; want 0", depth, err)
			}
		})
	}
}

func TestInsertOnlyQueueRunsNothing(t *testing.T) {
	q, err := queue.OpenPostgres(t.Context(), pgSchemaPool(t), river.NewWorkers(), queue.Options{}, testenv.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := q.Insert(t.Context(), echoArgs{N: i}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// What is checked is an absence over time: a queue that ran jobs
	// would take these within a poll interval (100 ms); two go by.
	time.Sleep(200 * time.Millisecond)
	if d, err := q.Depth(t.Context()); err != nil || d != 3 {
		t.Fatalf("Depth = %d, %v; want 3", d, err)
	}
}

// InsertMany inserts in chunks of its own; every job of a list longer
// than a few chunks, with a remainder, is queued once.
func TestInsertManyQueuesEveryChunk(t *testing.T) {
	for name, open := range openers(t) {
		t.Run(name, func(t *testing.T) {
			workers := river.NewWorkers()
			river.AddWorker(workers, &echoWorker{seen: map[int]int{}, done: make(chan int, 1)})
			q := open(t, workers) // not started: the jobs stay queued
			params := make([]river.InsertManyParams, 1234)
			for i := range params {
				params[i] = river.InsertManyParams{Args: echoArgs{N: i}}
			}
			if err := q.InsertMany(t.Context(), params); err != nil {
				t.Fatal(err)
			}
			if d, err := q.Depth(t.Context()); err != nil || d != len(params) {
				t.Fatalf("Depth = %d, %v; want %d", d, err, len(params))
			}
		})
	}
}
