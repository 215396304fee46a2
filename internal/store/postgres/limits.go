package postgres

import (
	"context"
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
	var (
		l                   store.TeamLimits
		zdr, zdrf, cat, tpt *bool
	)
	err = s.pool.QueryRow(ctx,
		`SELECT l.concurrency_limit, l.rate_multiplier, l.zero_data_retention, l.zero_data_retention_forced, l.catalog, l.third_party_terms
		FROM teams t LEFT JOIN team_limits l ON l.team_id = t.id WHERE t.id = $1`, team,
	).Scan(&l.ConcurrencyLimit, &l.RateMultiplier, &zdr, &zdrf, &cat, &tpt)
	if err != nil {
		return store.TeamLimits{}, fmt.Errorf("store: team limits: %w", mapErr(err))
	}
	l.ZeroDataRetention = zdr != nil && *zdr
	l.ZeroDataRetentionForced = zdrf != nil && *zdrf
	l.Catalog = cat != nil && *cat
	l.ThirdPartyTerms = tpt != nil && *tpt
	return l, nil
}

// SetTeamLimits replaces a team's limit overrides; store.ErrNotFound if the
// team does not exist.
func (s *Store) SetTeamLimits(ctx context.Context, teamID string, l store.TeamLimits) error {
	if err := checkLimits(l); err != nil {
		return fmt.Errorf("store: set team limits: %w", err)
	}
	team, err := parseID(teamID)
	if err != nil {
		return fmt.Errorf("store: set team limits: %w", err)
	}
	_, err = s.pool.Exec(ctx,
		`INSERT INTO team_limits (team_id, concurrency_limit, rate_multiplier, zero_data_retention,
			zero_data_retention_forced, catalog, third_party_terms)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (team_id) DO UPDATE SET concurrency_limit = EXCLUDED.concurrency_limit,
			rate_multiplier = EXCLUDED.rate_multiplier,
			zero_data_retention = EXCLUDED.zero_data_retention,
			zero_data_retention_forced = EXCLUDED.zero_data_retention_forced, catalog = EXCLUDED.catalog,
			third_party_terms = EXCLUDED.third_party_terms, updated_at = now()`,
		team, l.ConcurrencyLimit, l.RateMultiplier, l.ZeroDataRetention, l.ZeroDataRetentionForced, l.Catalog, l.ThirdPartyTerms)
	if err != nil {
		return fmt.Errorf("store: set team limits: %w", mapErr(err))
	}
	return nil
}

// checkLimits rejects negative limits.
func checkLimits(l store.TeamLimits) error {
	if (l.ConcurrencyLimit != nil && *l.ConcurrencyLimit < 0) || (l.RateMultiplier != nil && *l.RateMultiplier < 0) {
		return errors.New("negative limit")
	}
	return nil
}
