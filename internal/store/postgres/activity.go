package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/store"
)

// RecordActivity saves one activity; store.ErrNotFound if its team does
// not exist.
func (s *Store) RecordActivity(ctx context.Context, a store.Activity) error {
	team, err := parseID(a.TeamID)
	if err != nil {
		return fmt.Errorf("store: record activity: %w", err)
	}
	id, err := uuid.Parse(a.ID)
	if err != nil {
		return fmt.Errorf("store: record activity: malformed id %q", a.ID)
	}
	_, err = s.pool.Exec(ctx,
		`INSERT INTO team_activity (id, team_id, endpoint, api_version, target, username, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		id, team, a.Endpoint, a.APIVersion, a.Target, a.Username, a.CreatedAt.UTC())
	if err != nil {
		return fmt.Errorf("store: record activity: %w", mapErr(err))
	}
	return nil
}

// ListActivity returns a team's activities matching q, newest first.
func (s *Store) ListActivity(ctx context.Context, teamID string, q store.ActivityQuery) ([]store.Activity, error) {
	team, err := parseID(teamID)
	if err != nil {
		return nil, nil // a malformed id names no team: nothing to list
	}
	var before *uuid.UUID
	if q.Before != "" {
		b, err := uuid.Parse(q.Before)
		if err != nil {
			return nil, fmt.Errorf("store: list activity: malformed cursor id %q", q.Before)
		}
		before = &b
	}
	rows, err := s.pool.Query(ctx,
		`SELECT id, endpoint, api_version, target, username, created_at FROM team_activity
		WHERE team_id = $1 AND created_at >= $2 AND ($3 = '' OR endpoint = $3) AND ($4::uuid IS NULL OR id < $4)
		ORDER BY id DESC LIMIT $5`,
		team, q.Since.UTC(), q.Endpoint, before, max(q.Limit, 1))
	if err != nil {
		return nil, fmt.Errorf("store: list activity: %w", err)
	}
	defer rows.Close()
	out := []store.Activity{}
	for rows.Next() {
		var id uuid.UUID
		a := store.Activity{TeamID: teamID}
		if err := rows.Scan(&id, &a.Endpoint, &a.APIVersion, &a.Target, &a.Username, &a.CreatedAt); err != nil {
			return nil, fmt.Errorf("store: list activity: %w", err)
		}
		a.ID, a.CreatedAt = id.String(), a.CreatedAt.UTC()
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list activity: %w", err)
	}
	return out, nil
}

// DeleteActivityBefore deletes the activities created before t.
func (s *Store) DeleteActivityBefore(ctx context.Context, t time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM team_activity WHERE created_at < $1`, t.UTC())
	if err != nil {
		return 0, fmt.Errorf("store: delete activity: %w", err)
	}
	return tag.RowsAffected(), nil
}
