package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/firegate/firegate/internal/store"
)

// TeamLimits returns a team's limit overrides; store.ErrNotFound if the team
// does not exist.
func (s *Store) TeamLimits(ctx context.Context, teamID string) (store.TeamLimits, error) {
	team, err := parseID(teamID)
	if err != nil {
		return store.TeamLimits{}, fmt.Errorf("store: team limits: %w", err)
	}
	var conc, rate, zdr, zdrf, cat, tpt sql.NullInt64
	err = s.read.QueryRowContext(ctx,
		`SELECT l.concurrency_limit, l.rate_multiplier, l.zero_data_retention, l.zero_data_retention_forced, l.catalog, l.third_party_terms
		FROM teams t LEFT JOIN team_limits l ON l.team_id = t.id WHERE t.id = ?`, team,
	).Scan(&conc, &rate, &zdr, &zdrf, &cat, &tpt)
	if err != nil {
		return store.TeamLimits{}, fmt.Errorf("store: team limits: %w", mapErr(err))
	}
	var l store.TeamLimits
	if conc.Valid {
		n := int(conc.Int64)
		l.ConcurrencyLimit = &n
	}
	if rate.Valid {
		n := int(rate.Int64)
		l.RateMultiplier = &n
	}
	l.ZeroDataRetention = zdr.Valid && zdr.Int64 == 1
	l.ZeroDataRetentionForced = zdrf.Valid && zdrf.Int64 == 1
	l.Catalog = cat.Valid && cat.Int64 == 1
	l.ThirdPartyTerms = tpt.Valid && tpt.Int64 == 1
	return l, nil
}

// SetTeamLimits replaces a team's limit overrides; store.ErrNotFound if the
// team does not exist.
func (s *Store) SetTeamLimits(ctx context.Context, teamID string, l store.TeamLimits) error {
	if (l.ConcurrencyLimit != nil && *l.ConcurrencyLimit < 0) || (l.RateMultiplier != nil && *l.RateMultiplier < 0) {
		return errors.New("store: set team limits: negative limit")
	}
	team, err := parseID(teamID)
	if err != nil {
		return fmt.Errorf("store: set team limits: %w", err)
	}
	_, err = s.write.ExecContext(ctx,
		`INSERT INTO team_limits (team_id, concurrency_limit, rate_multiplier, zero_data_retention,
			zero_data_retention_forced, catalog, third_party_terms, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (team_id) DO UPDATE SET concurrency_limit = excluded.concurrency_limit,
			rate_multiplier = excluded.rate_multiplier,
			zero_data_retention = excluded.zero_data_retention,
			zero_data_retention_forced = excluded.zero_data_retention_forced, catalog = excluded.catalog,
			third_party_terms = excluded.third_party_terms, updated_at = excluded.updated_at`,
		team, l.ConcurrencyLimit, l.RateMultiplier, l.ZeroDataRetention, l.ZeroDataRetentionForced, l.Catalog, l.ThirdPartyTerms, formatTime(s.now()))
	if err != nil {
		return fmt.Errorf("store: set team limits: %w", mapErr(err))
	}
	return nil
}
