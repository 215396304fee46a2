package sqlite

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
	err = s.read.QueryRowContext(ctx,
		`SELECT state FROM browser_profiles WHERE team_id = ? AND name = ?`, team, name,
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
	_, err = s.write.ExecContext(ctx,
		`INSERT INTO browser_profiles (team_id, name, state, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (team_id, name) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
		team, name, state, formatTime(s.now()))
	if err != nil {
		return fmt.Errorf("store: save profile state: %w", mapErr(err))
	}
	return nil
}
