package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/firegate/firegate/internal/store"
)

// CreditBalance returns a team's balance; store.ErrNotFound if the team does
// not exist.
func (s *Store) CreditBalance(ctx context.Context, teamID string) (store.Balance, error) {
	team, err := parseID(teamID)
	if err != nil {
		return store.Balance{}, fmt.Errorf("store: credit balance: %w", err)
	}
	b, err := balance(ctx, s.pool, team)
	if err != nil {
		return store.Balance{}, fmt.Errorf("store: credit balance: %w", err)
	}
	return b, nil
}

// balance reads a team's balance through q; store.ErrNotFound if the team
// does not exist.
func balance(ctx context.Context, q DBTX, team uuid.UUID) (store.Balance, error) {
	var remaining, plan *int64
	err := q.QueryRow(ctx,
		`SELECT c.remaining, c.plan FROM teams t LEFT JOIN team_credits c ON c.team_id = t.id WHERE t.id = $1`,
		team).Scan(&remaining, &plan)
	if err != nil {
		return store.Balance{}, mapErr(err)
	}
	if remaining == nil {
		return store.Balance{Unlimited: true}, nil
	}
	return store.Balance{Remaining: *remaining, Plan: *plan}, nil
}

// SetCredits makes the team limited with exactly credits remaining and plan
// credits; store.ErrNotFound if the team does not exist.
func (s *Store) SetCredits(ctx context.Context, teamID string, credits int64) (store.Balance, error) {
	if credits < 0 {
		return store.Balance{}, fmt.Errorf("store: set credits: negative credits %d", credits)
	}
	team, err := parseID(teamID)
	if err != nil {
		return store.Balance{}, fmt.Errorf("store: set credits: %w", err)
	}
	var b store.Balance
	err = s.pool.QueryRow(ctx,
		`INSERT INTO team_credits (team_id, remaining, plan) VALUES ($1, $2, $2)
		ON CONFLICT (team_id) DO UPDATE SET remaining = EXCLUDED.remaining, plan = EXCLUDED.plan, updated_at = now()
		RETURNING remaining, plan`, team, credits).Scan(&b.Remaining, &b.Plan)
	if err != nil {
		return store.Balance{}, fmt.Errorf("store: set credits: %w", mapErr(err))
	}
	return b, nil
}

// AddCredits adds credits to a limited team; an unlimited team stays
// unlimited. store.ErrNotFound if the team does not exist.
func (s *Store) AddCredits(ctx context.Context, teamID string, credits int64) (store.Balance, error) {
	if credits < 0 {
		return store.Balance{}, fmt.Errorf("store: add credits: negative credits %d", credits)
	}
	team, err := parseID(teamID)
	if err != nil {
		return store.Balance{}, fmt.Errorf("store: add credits: %w", err)
	}
	var b store.Balance
	err = s.pool.QueryRow(ctx,
		`UPDATE team_credits SET remaining = remaining + $2, plan = plan + $2, updated_at = now()
		WHERE team_id = $1 RETURNING remaining, plan`, team, credits).Scan(&b.Remaining, &b.Plan)
	if errors.Is(err, pgx.ErrNoRows) {
		// No row: unlimited, or no such team.
		b, err = balance(ctx, s.pool, team)
	}
	if err != nil {
		return store.Balance{}, fmt.Errorf("store: add credits: %w", mapErr(err))
	}
	return b, nil
}

// SetUnlimited removes a team's limit; store.ErrNotFound if the team does not
// exist.
func (s *Store) SetUnlimited(ctx context.Context, teamID string) error {
	team, err := parseID(teamID)
	if err != nil {
		return fmt.Errorf("store: set unlimited: %w", err)
	}
	var exists bool
	err = s.pool.QueryRow(ctx,
		`WITH d AS (DELETE FROM team_credits WHERE team_id = $1)
		SELECT EXISTS (SELECT 1 FROM teams WHERE id = $1)`, team).Scan(&exists)
	if err != nil {
		return fmt.Errorf("store: set unlimited: %w", mapErr(err))
	}
	if !exists {
		return fmt.Errorf("store: set unlimited: %w", store.ErrNotFound)
	}
	return nil
}

// ChargeCredits checks and decrements a team's balance and records the usage
// in one transaction. The balance row is locked (SELECT ... FOR UPDATE), so
// concurrent charges of a team queue on it and none is lost.
func (s *Store) ChargeCredits(ctx context.Context, c store.Charge) (store.ChargeResult, error) {
	if c.Credits < 0 {
		return store.ChargeResult{}, fmt.Errorf("store: charge credits: negative credits %d", c.Credits)
	}
	team, err := parseID(c.TeamID)
	if err != nil {
		return store.ChargeResult{}, fmt.Errorf("store: charge credits: %w", err)
	}
	var key *uuid.UUID
	if c.APIKeyID != "" {
		k, err := parseID(c.APIKeyID)
		if err != nil {
			return store.ChargeResult{}, fmt.Errorf("store: charge credits: api key: %w", err)
		}
		key = &k
	}
	if c.Credits == 0 {
		b, err := balance(ctx, s.pool, team)
		if err != nil {
			return store.ChargeResult{}, fmt.Errorf("store: charge credits: %w", err)
		}
		return store.ChargeResult{Balance: b}, nil
	}
	res, err := s.charge(ctx, team, key, c)
	if errors.Is(err, store.ErrConflict) && c.IdempotencyKey != "" {
		// A concurrent charge with the same key committed first; this
		// attempt rolled back and now finds it.
		res, err = s.charge(ctx, team, key, c)
	}
	if err != nil {
		return store.ChargeResult{}, fmt.Errorf("store: charge credits: %w", err)
	}
	return res, nil
}

func (s *Store) charge(ctx context.Context, team uuid.UUID, key *uuid.UUID, c store.Charge) (store.ChargeResult, error) {
	var res store.ChargeResult
	err := s.Transact(ctx, func(tx DBTX) error {
		res = store.ChargeResult{}
		if c.IdempotencyKey != "" {
			u, err := scanUsage(tx.QueryRow(ctx,
				`SELECT `+usageColumns+` FROM credit_usage WHERE team_id = $1 AND idempotency_key = $2`,
				team, c.IdempotencyKey))
			switch {
			case err == nil:
				res.Usage, res.Duplicate = u, true
				res.Balance, err = balance(ctx, tx, team)
				return err
			case !errors.Is(err, pgx.ErrNoRows):
				return mapErr(err)
			}
		}
		charged := c.Credits
		var remaining, plan int64
		err := tx.QueryRow(ctx,
			`SELECT remaining, plan FROM team_credits WHERE team_id = $1 FOR UPDATE`, team).Scan(&remaining, &plan)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			res.Balance = store.Balance{Unlimited: true}
		case err != nil:
			return mapErr(err)
		default:
			if remaining < charged {
				if !c.Clamp {
					return fmt.Errorf("%w: %d remaining, %d asked", store.ErrInsufficientCredits, remaining, charged)
				}
				charged = remaining
			}
			remaining -= charged
			if _, err := tx.Exec(ctx,
				`UPDATE team_credits SET remaining = $2, updated_at = now() WHERE team_id = $1`,
				team, remaining); err != nil {
				return mapErr(err)
			}
			res.Balance = store.Balance{Remaining: remaining, Plan: plan}
		}
		id, err := newID()
		if err != nil {
			return err
		}
		res.Usage, err = scanUsage(tx.QueryRow(ctx,
			`INSERT INTO credit_usage (id, team_id, api_key_id, credits, kind, idempotency_key)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING `+usageColumns,
			id, team, key, charged, c.Kind, nullString(c.IdempotencyKey)))
		return mapErr(err)
	})
	return res, err
}

// CreditUsageByPeriod sums a team's usage created in [from, to) per calendar
// month (UTC), optionally split by API key.
func (s *Store) CreditUsageByPeriod(ctx context.Context, teamID string, from, to time.Time, byAPIKey bool) ([]store.UsagePeriod, error) {
	team, err := parseID(teamID)
	if err != nil {
		return nil, fmt.Errorf("store: credit usage by period: %w", err)
	}
	if _, err := balance(ctx, s.pool, team); err != nil {
		return nil, fmt.Errorf("store: credit usage by period: %w", err)
	}
	rows, err := s.pool.Query(ctx,
		`SELECT date_trunc('month', created_at, 'UTC') AS period,
			CASE WHEN $4 THEN COALESCE(api_key_id::text, '') ELSE '' END AS key,
			sum(credits)::bigint
		FROM credit_usage
		WHERE team_id = $1 AND created_at >= $2 AND created_at < $3
		GROUP BY 1, 2
		ORDER BY 1, 2`, team, from, to, byAPIKey)
	if err != nil {
		return nil, fmt.Errorf("store: credit usage by period: %w", mapErr(err))
	}
	periods, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.UsagePeriod, error) {
		var p store.UsagePeriod
		if err := row.Scan(&p.Start, &p.APIKeyID, &p.Credits); err != nil {
			return p, err
		}
		p.Start = p.Start.UTC()
		p.End = p.Start.AddDate(0, 1, 0)
		return p, nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: credit usage by period: %w", mapErr(err))
	}
	return periods, nil
}

// CreditUsageByDay sums a team's usage created in [from, to) per calendar
// day (UTC).
func (s *Store) CreditUsageByDay(ctx context.Context, teamID string, from, to time.Time) ([]store.UsagePeriod, error) {
	team, err := parseID(teamID)
	if err != nil {
		return nil, fmt.Errorf("store: credit usage by day: %w", err)
	}
	if _, err := balance(ctx, s.pool, team); err != nil {
		return nil, fmt.Errorf("store: credit usage by day: %w", err)
	}
	rows, err := s.pool.Query(ctx,
		`SELECT date_trunc('day', created_at, 'UTC') AS day, sum(credits)::bigint
		FROM credit_usage
		WHERE team_id = $1 AND created_at >= $2 AND created_at < $3
		GROUP BY 1
		ORDER BY 1`, team, from, to)
	if err != nil {
		return nil, fmt.Errorf("store: credit usage by day: %w", mapErr(err))
	}
	days, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.UsagePeriod, error) {
		var p store.UsagePeriod
		if err := row.Scan(&p.Start, &p.Credits); err != nil {
			return p, err
		}
		p.Start = p.Start.UTC()
		p.End = p.Start.AddDate(0, 0, 1)
		return p, nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: credit usage by day: %w", mapErr(err))
	}
	return days, nil
}

const usageColumns = `id, team_id, api_key_id, credits, kind, idempotency_key, created_at`

func scanUsage(row pgx.Row) (store.Usage, error) {
	var (
		u        store.Usage
		key, idk *string
	)
	if err := row.Scan(&u.ID, &u.TeamID, &key, &u.Credits, &u.Kind, &idk, &u.CreatedAt); err != nil {
		return store.Usage{}, err
	}
	if key != nil {
		u.APIKeyID = *key
	}
	if idk != nil {
		u.IdempotencyKey = *idk
	}
	u.CreatedAt = u.CreatedAt.UTC()
	return u, nil
}

// nullString maps "" to SQL NULL.
func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
