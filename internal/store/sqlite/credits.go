package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/firegate/firegate/internal/store"
)

// CreditBalance returns a team's balance; store.ErrNotFound if the team does
// not exist.
func (s *Store) CreditBalance(ctx context.Context, teamID string) (store.Balance, error) {
	team, err := parseID(teamID)
	if err != nil {
		return store.Balance{}, fmt.Errorf("store: credit balance: %w", err)
	}
	b, err := balance(ctx, s.read, team)
	if err != nil {
		return store.Balance{}, fmt.Errorf("store: credit balance: %w", err)
	}
	return b, nil
}

// balance reads a team's balance through q; store.ErrNotFound if the team
// does not exist.
func balance(ctx context.Context, q DBTX, team string) (store.Balance, error) {
	var remaining, plan sql.NullInt64
	err := q.QueryRowContext(ctx,
		`SELECT c.remaining, c.plan FROM teams t LEFT JOIN team_credits c ON c.team_id = t.id WHERE t.id = ?`,
		team).Scan(&remaining, &plan)
	if err != nil {
		return store.Balance{}, mapErr(err)
	}
	if !remaining.Valid {
		return store.Balance{Unlimited: true}, nil
	}
	return store.Balance{Remaining: remaining.Int64, Plan: plan.Int64}, nil
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
	err = s.write.QueryRowContext(ctx,
		`INSERT INTO team_credits (team_id, remaining, plan, updated_at) VALUES (?1, ?2, ?2, ?3)
		ON CONFLICT (team_id) DO UPDATE SET remaining = excluded.remaining, plan = excluded.plan, updated_at = excluded.updated_at
		RETURNING remaining, plan`, team, credits, formatTime(s.now())).Scan(&b.Remaining, &b.Plan)
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
	err = s.write.QueryRowContext(ctx,
		`UPDATE team_credits SET remaining = remaining + ?2, plan = plan + ?2, updated_at = ?3
		WHERE team_id = ?1 RETURNING remaining, plan`, team, credits, formatTime(s.now())).Scan(&b.Remaining, &b.Plan)
	if errors.Is(err, sql.ErrNoRows) {
		// No row: unlimited, or no such team.
		b, err = balance(ctx, s.write, team)
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
	if _, err := s.write.ExecContext(ctx, `DELETE FROM team_credits WHERE team_id = ?`, team); err != nil {
		return fmt.Errorf("store: set unlimited: %w", mapErr(err))
	}
	if _, err := balance(ctx, s.write, team); err != nil {
		return fmt.Errorf("store: set unlimited: %w", err)
	}
	return nil
}

// ChargeCredits checks and decrements a team's balance and records the usage
// in one IMMEDIATE transaction on the single write connection, so charges
// are serialized (across processes too, by SQLite's write lock).
func (s *Store) ChargeCredits(ctx context.Context, c store.Charge) (store.ChargeResult, error) {
	if c.Credits < 0 {
		return store.ChargeResult{}, fmt.Errorf("store: charge credits: negative credits %d", c.Credits)
	}
	team, err := parseID(c.TeamID)
	if err != nil {
		return store.ChargeResult{}, fmt.Errorf("store: charge credits: %w", err)
	}
	var key sql.NullString
	if c.APIKeyID != "" {
		k, err := parseID(c.APIKeyID)
		if err != nil {
			return store.ChargeResult{}, fmt.Errorf("store: charge credits: api key: %w", err)
		}
		key = sql.NullString{String: k, Valid: true}
	}
	if c.Credits == 0 {
		b, err := balance(ctx, s.read, team)
		if err != nil {
			return store.ChargeResult{}, fmt.Errorf("store: charge credits: %w", err)
		}
		return store.ChargeResult{Balance: b}, nil
	}
	var res store.ChargeResult
	err = s.Transact(ctx, func(tx DBTX) error {
		res = store.ChargeResult{}
		if c.IdempotencyKey != "" {
			u, err := scanUsage(tx.QueryRowContext(ctx,
				`SELECT `+usageColumns+` FROM credit_usage WHERE team_id = ? AND idempotency_key = ?`,
				team, c.IdempotencyKey))
			switch {
			case err == nil:
				res.Usage, res.Duplicate = u, true
				res.Balance, err = balance(ctx, tx, team)
				return err
			case !errors.Is(err, sql.ErrNoRows):
				return mapErr(err)
			}
		}
		charged := c.Credits
		var remaining, plan int64
		err := tx.QueryRowContext(ctx,
			`SELECT remaining, plan FROM team_credits WHERE team_id = ?`, team).Scan(&remaining, &plan)
		switch {
		case errors.Is(err, sql.ErrNoRows):
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
			if _, err := tx.ExecContext(ctx,
				`UPDATE team_credits SET remaining = ?, updated_at = ? WHERE team_id = ?`,
				remaining, formatTime(s.now()), team); err != nil {
				return mapErr(err)
			}
			res.Balance = store.Balance{Remaining: remaining, Plan: plan}
		}
		id, err := newID()
		if err != nil {
			return err
		}
		var idk sql.NullString
		if c.IdempotencyKey != "" {
			idk = sql.NullString{String: c.IdempotencyKey, Valid: true}
		}
		res.Usage, err = scanUsage(tx.QueryRowContext(ctx,
			`INSERT INTO credit_usage (id, team_id, api_key_id, credits, kind, idempotency_key, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING `+usageColumns,
			id, team, key, charged, c.Kind, idk, formatTime(s.now())))
		return mapErr(err)
	})
	if err != nil {
		return store.ChargeResult{}, fmt.Errorf("store: charge credits: %w", err)
	}
	return res, nil
}

// CreditUsageByPeriod sums a team's usage created in [from, to) per calendar
// month (UTC), optionally split by API key.
func (s *Store) CreditUsageByPeriod(ctx context.Context, teamID string, from, to time.Time, byAPIKey bool) ([]store.UsagePeriod, error) {
	team, err := parseID(teamID)
	if err != nil {
		return nil, fmt.Errorf("store: credit usage by period: %w", err)
	}
	if _, err := balance(ctx, s.read, team); err != nil {
		return nil, fmt.Errorf("store: credit usage by period: %w", err)
	}
	// Stored times are fixed-width UTC text, so the first 7 characters are
	// the month and text comparison is time comparison.
	rows, err := s.read.QueryContext(ctx,
		`SELECT substr(created_at, 1, 7) AS period,
			CASE WHEN ?4 THEN COALESCE(api_key_id, '') ELSE '' END AS key,
			sum(credits)
		FROM credit_usage
		WHERE team_id = ?1 AND created_at >= ?2 AND created_at < ?3
		GROUP BY 1, 2
		ORDER BY 1, 2`, team, formatTime(from), formatTime(to), byAPIKey)
	if err != nil {
		return nil, fmt.Errorf("store: credit usage by period: %w", mapErr(err))
	}
	defer rows.Close()
	periods := []store.UsagePeriod{}
	for rows.Next() {
		var (
			month string
			p     store.UsagePeriod
		)
		if err := rows.Scan(&month, &p.APIKeyID, &p.Credits); err != nil {
			return nil, fmt.Errorf("store: credit usage by period: %w", err)
		}
		start, err := time.Parse("2006-01", month)
		if err != nil {
			return nil, fmt.Errorf("store: credit usage by period: bad stored month %q: %w", month, err)
		}
		p.Start, p.End = start.UTC(), start.UTC().AddDate(0, 1, 0)
		periods = append(periods, p)
	}
	if err := rows.Err(); err != nil {
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
	if _, err := balance(ctx, s.read, team); err != nil {
		return nil, fmt.Errorf("store: credit usage by day: %w", err)
	}
	// Stored times are fixed-width UTC text: the first 10 characters are
	// the day.
	rows, err := s.read.QueryContext(ctx,
		`SELECT substr(created_at, 1, 10) AS day, sum(credits)
		FROM credit_usage
		WHERE team_id = ?1 AND created_at >= ?2 AND created_at < ?3
		GROUP BY 1
		ORDER BY 1`, team, formatTime(from), formatTime(to))
	if err != nil {
		return nil, fmt.Errorf("store: credit usage by day: %w", mapErr(err))
	}
	defer rows.Close()
	days := []store.UsagePeriod{}
	for rows.Next() {
		var (
			day string
			p   store.UsagePeriod
		)
		if err := rows.Scan(&day, &p.Credits); err != nil {
			return nil, fmt.Errorf("store: credit usage by day: %w", err)
		}
		start, err := time.Parse(time.DateOnly, day)
		if err != nil {
			return nil, fmt.Errorf("store: credit usage by day: bad stored day %q: %w", day, err)
		}
		p.Start, p.End = start.UTC(), start.UTC().AddDate(0, 0, 1)
		days = append(days, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: credit usage by day: %w", mapErr(err))
	}
	return days, nil
}

const usageColumns = `id, team_id, api_key_id, credits, kind, idempotency_key, created_at`

func scanUsage(row scanner) (store.Usage, error) {
	var (
		u        store.Usage
		key, idk sql.NullString
		created  string
	)
	if err := row.Scan(&u.ID, &u.TeamID, &key, &u.Credits, &u.Kind, &idk, &created); err != nil {
		return store.Usage{}, err
	}
	u.APIKeyID, u.IdempotencyKey = key.String, idk.String
	t, err := parseTime(created)
	if err != nil {
		return store.Usage{}, err
	}
	u.CreatedAt = t
	return u, nil
}
