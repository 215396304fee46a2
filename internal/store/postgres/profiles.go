package postgres

import (
	"context"
	"fmt"

	"github.com/firegate/firegate/internal/store"
)

// ProfileState returns the saved state of a team's browser profile, or
// store.ErrNotFound.
func (s *Store) ProfileState(ctx context.Context, teamID, name string) ([]byte, error) {
	team, err := parseID(teamID)
	if err != nil {
		return nil, fmt.Errorf("store: profile state: %w", err)
	}
	if store.CheckProfileName(name) != nil {
		return nil, fmt.Errorf("store: profile state: %w: bad profile name %q", store.ErrNotFound, name)
	}
	var state []byte
	err = s.pool.QueryRow(ctx,
		`SELECT state FROM browser_profiles WHERE team_id = $1 AND name = $2`, team, name,
	).Scan(&state)
	if err != nil {
		return nil, fmt.Errorf("store: profile state: %w", mapErr(err))
	}
	if state == nil {
		state = []byte{}
	}
	return state, nil
}

// SaveProfileState creates or replaces a team's browser profile state;
// store.ErrNotFound if the team does not exist.
func (s *Store) SaveProfileState(ctx context.Context, teamID, name string, state []byte) error {
	team, err := parseID(teamID)
	if err != nil {
		return fmt.Errorf("store: save profile state: %w", err)
	}
	if err := store.CheckProfileName(name); err != nil {
		return fmt.Errorf("store: save profile state: %w", err)
	}
	if state == nil {
		state = []byte{} // NULL is not an empty state
	}
	_, err = s.pool.Exec(ctx,
		`INSERT INTO browser_profiles (team_id, name, state) VALUES ($1, $2, $3)
		ON CONFLICT (team_id, name) DO UPDATE SET state = EXCLUDED.state, updated_at = now()`,
		team, name, state)
	if err != nil {
		return fmt.Errorf("store: save profile state: %w", mapErr(err))
	}
	return nil
}
