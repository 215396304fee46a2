package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/firegate/firegate/internal/store"
)

var _ store.IdempotencyStore = (*Store)(nil)

const idemCols = `team_id, key, owner, request_hash, scrape_id, done, status, response, lease_until, run_until, created_at`

// scanIdem reads a record; the lease and reclaim states are judged on
// now, the clock of the one machine sharing the file.
func scanIdem(row *sql.Row, now time.Time) (store.IdempotencyRecord, error) {
	var (
		r                   store.IdempotencyRecord
		done                int64
		status              sql.NullInt64
		lease, run, created string
	)
	if err := row.Scan(&r.TeamID, &r.Key, &r.Owner, &r.RequestHash, &r.ScrapeID, &done, &status, &r.Response,
		&lease, &run, &created); err != nil {
		return store.IdempotencyRecord{}, err
	}
	r.Done = done == 1
	if status.Valid {
		r.Status = int(status.Int64)
	}
	leaseT, err := parseTime(lease)
	if err != nil {
		return store.IdempotencyRecord{}, err
	}
	runT, err := parseTime(run)
	if err != nil {
		return store.IdempotencyRecord{}, err
	}
	if r.CreatedAt, err = parseTime(created); err != nil {
		return store.IdempotencyRecord{}, err
	}
	r.LeaseLapsed = !r.Done && leaseT.Before(now)
	r.Reclaimable = r.LeaseLapsed && runT.Before(now)
	return r, nil
}

// ClaimRequest inserts a running record, or replaces an expired one, in
// one statement on the one write connection; when the key is live it
// reads the record instead.
func (s *Store) ClaimRequest(ctx context.Context, c store.IdempotencyClaim) (store.IdempotencyRecord, bool, error) {
	team, err := parseID(c.TeamID)
	if err != nil {
		return store.IdempotencyRecord{}, false, fmt.Errorf("store: claim request: %w", err)
	}
	for range 5 {
		now := s.now()
		rec, err := scanIdem(s.write.QueryRowContext(ctx, `INSERT INTO idempotency_keys AS k
			(team_id, key, request_hash, owner, scrape_id, created_at, lease_until, run_until, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (team_id, key) DO UPDATE SET request_hash = excluded.request_hash, owner = excluded.owner,
				scrape_id = excluded.scrape_id, done = 0, status = NULL, response = NULL, created_at = excluded.created_at,
				lease_until = excluded.lease_until, run_until = excluded.run_until, expires_at = excluded.expires_at
			WHERE k.expires_at <= excluded.created_at
			RETURNING `+idemCols,
			team, c.Key, c.RequestHash, c.Owner, c.ScrapeID, formatTime(now), formatTime(now.Add(c.Lease)),
			formatTime(now.Add(c.Run)), formatTime(now.Add(c.Keep))), now)
		if err == nil {
			return rec, true, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return store.IdempotencyRecord{}, false, fmt.Errorf("store: claim request: %w", mapErr(err))
		}
		now = s.now()
		rec, err = scanIdem(s.write.QueryRowContext(ctx, `SELECT `+idemCols+` FROM idempotency_keys
			WHERE team_id = ? AND key = ? AND expires_at > ?`, team, c.Key, formatTime(now)), now)
		if err == nil {
			return rec, false, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return store.IdempotencyRecord{}, false, fmt.Errorf("store: claim request: %w", mapErr(err))
		}
	}
	return store.IdempotencyRecord{}, false, errors.New("store: claim request: the key changed hands too often; retry")
}

// ReclaimRequest takes over a running record whose lease lapsed and whose
// run deadline passed.
func (s *Store) ReclaimRequest(ctx context.Context, c store.IdempotencyClaim) (store.IdempotencyRecord, bool, error) {
	team, err := parseID(c.TeamID)
	if err != nil {
		return store.IdempotencyRecord{}, false, fmt.Errorf("store: reclaim request: %w", err)
	}
	now := s.now()
	nowS := formatTime(now)
	rec, err := scanIdem(s.write.QueryRowContext(ctx, `UPDATE idempotency_keys SET owner = ?, lease_until = ?, run_until = ?
		WHERE team_id = ? AND key = ? AND done = 0 AND lease_until < ? AND run_until < ? AND expires_at > ?
		RETURNING `+idemCols, c.Owner, formatTime(now.Add(c.Lease)), formatTime(now.Add(c.Run)),
		team, c.Key, nowS, nowS, nowS), now)
	if err == nil {
		return rec, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return store.IdempotencyRecord{}, false, fmt.Errorf("store: reclaim request: %w", mapErr(err))
	}
	rec, err = scanIdem(s.write.QueryRowContext(ctx, `SELECT `+idemCols+` FROM idempotency_keys
		WHERE team_id = ? AND key = ? AND expires_at > ?`, team, c.Key, nowS), now)
	if err != nil {
		return store.IdempotencyRecord{}, false, fmt.Errorf("store: reclaim request: %w", mapErr(err))
	}
	return rec, false, nil
}

// RenewRequest extends the lease of owner's running record.
func (s *Store) RenewRequest(ctx context.Context, teamID, key, owner string, lease time.Duration) (bool, error) {
	team, err := parseID(teamID)
	if err != nil {
		return false, fmt.Errorf("store: renew request: %w", err)
	}
	res, err := s.write.ExecContext(ctx, `UPDATE idempotency_keys SET lease_until = ?
		WHERE team_id = ? AND key = ? AND owner = ? AND done = 0`, formatTime(s.now().Add(lease)), team, key, owner)
	if err != nil {
		return false, fmt.Errorf("store: renew request: %w", mapErr(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: renew request: %w", err)
	}
	return n > 0, nil
}

// CompleteRequest stores the response of owner's running record.
func (s *Store) CompleteRequest(ctx context.Context, teamID, key, owner string, status int, response []byte) error {
	team, err := parseID(teamID)
	if err != nil {
		return fmt.Errorf("store: complete request: %w", err)
	}
	if response == nil {
		response = []byte{}
	}
	res, err := s.write.ExecContext(ctx, `UPDATE idempotency_keys SET done = 1, status = ?, response = ?
		WHERE team_id = ? AND key = ? AND owner = ? AND done = 0`, status, response, team, key, owner)
	if err != nil {
		return fmt.Errorf("store: complete request: %w", mapErr(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: complete request: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("store: complete request: %w: %s does not hold the key", store.ErrNotFound, owner)
	}
	return nil
}

// ReleaseRequest deletes owner's running record.
func (s *Store) ReleaseRequest(ctx context.Context, teamID, key, owner string) error {
	team, err := parseID(teamID)
	if err != nil {
		return fmt.Errorf("store: release request: %w", err)
	}
	if _, err := s.write.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE team_id = ? AND key = ? AND owner = ? AND done = 0`,
		team, key, owner); err != nil {
		return fmt.Errorf("store: release request: %w", mapErr(err))
	}
	return nil
}

// DeleteExpiredRequests deletes the records past their expiry.
func (s *Store) DeleteExpiredRequests(ctx context.Context) (int64, error) {
	res, err := s.write.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE expires_at <= ?`, formatTime(s.now()))
	if err != nil {
		return 0, fmt.Errorf("store: delete expired requests: %w", mapErr(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: delete expired requests: %w", err)
	}
	return n, nil
}
