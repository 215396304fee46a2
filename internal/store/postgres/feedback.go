package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/store"
)

// AddFeedback saves f once per team, endpoint and job id; a repeat returns
// the earlier feedback with created false.
func (s *Store) AddFeedback(ctx context.Context, f store.Feedback) (store.Feedback, bool, error) {
	team, err := parseID(f.TeamID)
	if err != nil {
		return store.Feedback{}, false, fmt.Errorf("store: add feedback: %w", err)
	}
	var id uuid.UUID
	if f.ID == "" {
		if id, err = newID(); err != nil {
			return store.Feedback{}, false, fmt.Errorf("store: add feedback: %w", err)
		}
	} else if id, err = uuid.Parse(f.ID); err != nil {
		return store.Feedback{}, false, fmt.Errorf("store: add feedback: malformed id %q", f.ID)
	}
	if f.CreatedAt.IsZero() {
		f.CreatedAt = time.Now()
	}
	var details any // NULL without details
	if len(f.Details) > 0 {
		details = string(f.Details)
	}
	tag, err := s.pool.Exec(ctx,
		`INSERT INTO feedback (id, team_id, endpoint, job_id, rating, note, details, origin, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9) ON CONFLICT (team_id, endpoint, job_id) DO NOTHING`,
		id, team, f.Endpoint, f.JobID, f.Rating, f.Note, details, f.Origin, f.CreatedAt.UTC())
	if err != nil {
		return store.Feedback{}, false, fmt.Errorf("store: add feedback: %w", mapErr(err))
	}
	if tag.RowsAffected() == 1 {
		f.ID, f.TeamID, f.CreatedAt = id.String(), team.String(), f.CreatedAt.UTC().Truncate(time.Microsecond)
		return f, true, nil
	}
	row := s.pool.QueryRow(ctx, `SELECT f.id, f.team_id, t.name, f.endpoint, f.job_id, f.rating, f.note, f.details::text, f.origin, f.created_at
		FROM feedback f JOIN teams t ON t.id = f.team_id WHERE f.team_id = $1 AND f.endpoint = $2 AND f.job_id = $3`, team, f.Endpoint, f.JobID)
	prev, err := scanFeedback(row)
	if err != nil {
		return store.Feedback{}, false, fmt.Errorf("store: add feedback: %w", mapErr(err))
	}
	return prev, false, nil
}

// ListFeedback returns the feedback matching q, newest first.
func (s *Store) ListFeedback(ctx context.Context, q store.FeedbackQuery) ([]store.Feedback, error) {
	var team *uuid.UUID
	if q.TeamID != "" {
		t, err := parseID(q.TeamID)
		if err != nil {
			return []store.Feedback{}, nil // a malformed id names no team
		}
		team = &t
	}
	var before *uuid.UUID
	if q.Before != "" {
		b, err := uuid.Parse(q.Before)
		if err != nil {
			return nil, fmt.Errorf("store: list feedback: malformed cursor id %q", q.Before)
		}
		before = &b
	}
	rows, err := s.pool.Query(ctx,
		`SELECT f.id, f.team_id, t.name, f.endpoint, f.job_id, f.rating, f.note, f.details::text, f.origin, f.created_at
		FROM feedback f JOIN teams t ON t.id = f.team_id
		WHERE ($1::uuid IS NULL OR f.team_id = $1) AND ($2::uuid IS NULL OR f.id < $2)
		ORDER BY f.id DESC LIMIT $3`,
		team, before, max(q.Limit, 1))
	if err != nil {
		return nil, fmt.Errorf("store: list feedback: %w", err)
	}
	defer rows.Close()
	out := []store.Feedback{}
	for rows.Next() {
		f, err := scanFeedback(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list feedback: %w", err)
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list feedback: %w", err)
	}
	return out, nil
}

func scanFeedback(row interface{ Scan(...any) error }) (store.Feedback, error) {
	var f store.Feedback
	var id, team uuid.UUID
	var details *string
	if err := row.Scan(&id, &team, &f.TeamName, &f.Endpoint, &f.JobID, &f.Rating, &f.Note, &details, &f.Origin, &f.CreatedAt); err != nil {
		return store.Feedback{}, err
	}
	f.ID, f.TeamID, f.CreatedAt = id.String(), team.String(), f.CreatedAt.UTC()
	if details != nil {
		f.Details = json.RawMessage(*details)
	}
	return f, nil
}
