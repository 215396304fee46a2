package sqlite

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
	_, err = s.write.ExecContext(ctx,
		`INSERT INTO team_activity (id, team_id, endpoint, api_version, target, username, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		id.String(), team, a.Endpoint, a.APIVersion, a.Target, a.Username, formatTime(a.CreatedAt))
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
	before := ""
	if q.Before != "" {
		b, err := uuid.Parse(q.Before)
		if err != nil {
			return nil, fmt.Errorf("store: list activity: malformed cursor id %q", q.Before)
		}
		before = b.String()
	}
	rows, err := s.read.QueryContext(ctx,
		`SELECT id, endpoint, api_version, target, username, created_at FROM team_activity
		WHERE team_id = ? AND created_at >= ? AND (? = '' OR endpoint = ?) AND (? = '' OR id < ?)
		ORDER BY id DESC LIMIT ?`,
		team, formatTime(q.Since), q.Endpoint, q.Endpoint, before, before, max(q.Limit, 1))
	if err != nil {
		return nil, fmt.Errorf("store: list activity: %w", err)
	}
	defer rows.Close()
	out := []store.Activity{}
	for rows.Next() {
		var at string
		a := store.Activity{TeamID: teamID}
		if err := rows.Scan(&a.ID, &a.Endpoint, &a.APIVersion, &a.Target, &a.Username, &at); err != nil {
			return nil, fmt.Errorf("store: list activity: %w", err)
		}
		if a.CreatedAt, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("store: list activity: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list activity: %w", err)
	}
	return out, nil
}

// DeleteActivityBefore deletes the activities created before t.
func (s *Store) DeleteActivityBefore(ctx context.Context, t time.Time) (int64, error) {
	res, err := s.write.ExecContext(ctx, `DELETE FROM team_activity WHERE created_at < ?`, formatTime(t))
	if err != nil {
		return 0, fmt.Errorf("store: delete activity: %w", err)
	}
	return res.RowsAffected()
}
