package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/firegate/firegate/internal/store"
)

var _ store.WorkerStore = (*Store)(nil)

// Heartbeat records that worker id is alive now. The processes sharing a
// SQLite file share a machine, so its clock is the database's.
func (s *Store) Heartbeat(ctx context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("store: heartbeat: empty worker id")
	}
	now := formatTime(s.now())
	_, err := s.write.ExecContext(ctx, `INSERT INTO workers (id, started_at, beat_at) VALUES (?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET beat_at = excluded.beat_at`, id, now, now)
	if err != nil {
		return fmt.Errorf("store: heartbeat: %w", mapErr(err))
	}
	return nil
}

// StaleWorkers returns the workers whose last heartbeat is older than age.
func (s *Store) StaleWorkers(ctx context.Context, age time.Duration) ([]string, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id FROM workers WHERE beat_at < ? ORDER BY beat_at, id`,
		formatTime(s.now().Add(-age)))
	if err != nil {
		return nil, fmt.Errorf("store: stale workers: %w", mapErr(err))
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: stale workers: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: stale workers: %w", mapErr(err))
	}
	return ids, nil
}

// DeleteWorker forgets worker id if its heartbeat is older than staleFor
// (always when staleFor is 0).
func (s *Store) DeleteWorker(ctx context.Context, id string, staleFor time.Duration) (bool, error) {
	q, args := `DELETE FROM workers WHERE id = ?`, []any{id}
	if staleFor > 0 {
		q += ` AND beat_at < ?`
		args = append(args, formatTime(s.now().Add(-staleFor)))
	}
	res, err := s.write.ExecContext(ctx, q, args...)
	if err != nil {
		return false, fmt.Errorf("store: delete worker: %w", mapErr(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: delete worker: %w", err)
	}
	return n > 0, nil
}
