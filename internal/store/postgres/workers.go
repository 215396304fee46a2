package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/firegate/firegate/internal/store"
)

var _ store.WorkerStore = (*Store)(nil)

// Heartbeat records that worker id is alive now (the database's clock).
func (s *Store) Heartbeat(ctx context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("store: heartbeat: empty worker id")
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO workers (id) VALUES ($1)
		ON CONFLICT (id) DO UPDATE SET beat_at = now()`, id)
	if err != nil {
		return fmt.Errorf("store: heartbeat: %w", mapErr(err))
	}
	return nil
}

// StaleWorkers returns the workers whose last heartbeat is older than age.
func (s *Store) StaleWorkers(ctx context.Context, age time.Duration) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id FROM workers
		WHERE beat_at < now() - make_interval(secs => $1::float8) ORDER BY beat_at, id`, age.Seconds())
	if err != nil {
		return nil, fmt.Errorf("store: stale workers: %w", mapErr(err))
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store: stale workers: %w", mapErr(err))
	}
	return ids, nil
}

// DeleteWorker forgets worker id if its heartbeat is older than staleFor
// (always when staleFor is 0).
func (s *Store) DeleteWorker(ctx context.Context, id string, staleFor time.Duration) (bool, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM workers
		WHERE id = $1 AND ($2::float8 = 0 OR beat_at < now() - make_interval(secs => $2::float8))`, id, staleFor.Seconds())
	if err != nil {
		return false, fmt.Errorf("store: delete worker: %w", mapErr(err))
	}
	return tag.RowsAffected() > 0, nil
}
