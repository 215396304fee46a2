package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/firegate/firegate/internal/store"
)

var _ store.IdempotencyStore = (*Store)(nil)

// idemCols are the columns scanned by scanIdem, with the lease and
// reclaim states computed on the database's clock.
const idemCols = `team_id::text, key, owner, request_hash, scrape_id, done, status, response,
	(NOT done AND lease_until < now()), (NOT done AND lease_until < now() AND run_until < now()), created_at`

func scanIdem(row pgx.Row) (store.IdempotencyRecord, error) {
	var (
		r      store.IdempotencyRecord
		status *int32
	)
	if err := row.Scan(&r.TeamID, &r.Key, &r.Owner, &r.RequestHash, &r.ScrapeID, &r.Done, &status, &r.Response,
		&r.LeaseLapsed, &r.Reclaimable, &r.CreatedAt); err != nil {
		return store.IdempotencyRecord{}, err
	}
	if status != nil {
		r.Status = int(*status)
	}
	r.CreatedAt = r.CreatedAt.UTC()
	return r, nil
}

func secs(d time.Duration) float64 { return d.Seconds() }

// ClaimRequest inserts a running record, or replaces an expired one, in
// one statement; when the key is live it reads the record instead.
func (s *Store) ClaimRequest(ctx context.Context, c store.IdempotencyClaim) (store.IdempotencyRecord, bool, error) {
	team, err := parseID(c.TeamID)
	if err != nil {
		return store.IdempotencyRecord{}, false, fmt.Errorf("store: claim request: %w", err)
	}
	// A record deleted between the failed insert and the read (released
	// or expired meanwhile) is claimed on the next round.
	for range 5 {
		rec, err := scanIdem(s.pool.QueryRow(ctx, `INSERT INTO idempotency_keys AS k
			(team_id, key, request_hash, owner, scrape_id, lease_until, run_until, expires_at)
			VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6::float8),
				now() + make_interval(secs => $7::float8), now() + make_interval(secs => $8::float8))
			ON CONFLICT (team_id, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, owner = EXCLUDED.owner,
				scrape_id = EXCLUDED.scrape_id, done = false, status = NULL, response = NULL, created_at = now(),
				lease_until = EXCLUDED.lease_until, run_until = EXCLUDED.run_until, expires_at = EXCLUDED.expires_at
			WHERE k.expires_at <= now()
			RETURNING `+idemCols,
			team, c.Key, c.RequestHash, c.Owner, c.ScrapeID, secs(c.Lease), secs(c.Run), secs(c.Keep)))
		if err == nil {
			return rec, true, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return store.IdempotencyRecord{}, false, fmt.Errorf("store: claim request: %w", mapErr(err))
		}
		rec, err = scanIdem(s.pool.QueryRow(ctx, `SELECT `+idemCols+` FROM idempotency_keys
			WHERE team_id = $1 AND key = $2 AND expires_at > now()`, team, c.Key))
		if err == nil {
			return rec, false, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
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
	rec, err := scanIdem(s.pool.QueryRow(ctx, `UPDATE idempotency_keys SET owner = $3,
			lease_until = now() + make_interval(secs => $4::float8), run_until = now() + make_interval(secs => $5::float8)
		WHERE team_id = $1 AND key = $2 AND NOT done AND lease_until < now() AND run_until < now() AND expires_at > now()
		RETURNING `+idemCols, team, c.Key, c.Owner, secs(c.Lease), secs(c.Run)))
	if err == nil {
		return rec, true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return store.IdempotencyRecord{}, false, fmt.Errorf("store: reclaim request: %w", mapErr(err))
	}
	rec, err = scanIdem(s.pool.QueryRow(ctx, `SELECT `+idemCols+` FROM idempotency_keys
		WHERE team_id = $1 AND key = $2 AND expires_at > now()`, team, c.Key))
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
	tag, err := s.pool.Exec(ctx, `UPDATE idempotency_keys SET lease_until = now() + make_interval(secs => $4::float8)
		WHERE team_id = $1 AND key = $2 AND owner = $3 AND NOT done`, team, key, owner, secs(lease))
	if err != nil {
		return false, fmt.Errorf("store: renew request: %w", mapErr(err))
	}
	return tag.RowsAffected() > 0, nil
}

// CompleteRequest stores the response of owner's running record.
func (s *Store) CompleteRequest(ctx context.Context, teamID, key, owner string, status int, response []byte) error {
	team, err := parseID(teamID)
	if err != nil {
		return fmt.Errorf("store: complete request: %w", err)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE idempotency_keys SET done = true, status = $4, response = $5
		WHERE team_id = $1 AND key = $2 AND owner = $3 AND NOT done`, team, key, owner, status, response)
	if err != nil {
		return fmt.Errorf("store: complete request: %w", mapErr(err))
	}
	if tag.RowsAffected() == 0 {
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
	if _, err := s.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE team_id = $1 AND key = $2 AND owner = $3 AND NOT done`,
		team, key, owner); err != nil {
		return fmt.Errorf("store: release request: %w", mapErr(err))
	}
	return nil
}

// DeleteExpiredRequests deletes the records past their expiry.
func (s *Store) DeleteExpiredRequests(ctx context.Context) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE expires_at <= now()`)
	if err != nil {
		return 0, fmt.Errorf("store: delete expired requests: %w", mapErr(err))
	}
	return tag.RowsAffected(), nil
}
