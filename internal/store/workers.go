package store

import (
	"context"
	"time"
)

// WorkerStore keeps the liveness of the processes that run queue jobs: each
// writes a heartbeat every few seconds under its queue client id, and a
// process whose last heartbeat is old is presumed dead, so the jobs it was
// running can go back to the queue. Times are the database's clock, so
// processes on machines whose clocks disagree still agree on who is dead.
type WorkerStore interface {
	// Heartbeat records that worker id is alive now, creating its row on
	// the first call.
	Heartbeat(ctx context.Context, id string) error
	// StaleWorkers returns the ids of the workers whose last heartbeat is
	// older than age, oldest first.
	StaleWorkers(ctx context.Context, age time.Duration) ([]string, error)
	// DeleteWorker forgets worker id if its last heartbeat is older than
	// staleFor (whatever its age when staleFor is 0), reporting whether it
	// did; an unknown id is no error. The staleness check keeps a worker
	// that beat again after it was found stale.
	DeleteWorker(ctx context.Context, id string, staleFor time.Duration) (bool, error)
}
