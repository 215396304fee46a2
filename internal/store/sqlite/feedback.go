package sqlite

import (
	"context"
	"database/sql"
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
	if f.ID == "" {
		if f.ID, err = newID(); err != nil {
			return store.Feedback{}, false, fmt.Errorf("store: add feedback: %w", err)
		}
	} else if _, err := uuid.Parse(f.ID); err != nil {
		return store.Feedback{}, false, fmt.Errorf("store: add feedback: malformed id %q", f.ID)
	}
	if f.CreatedAt.IsZero() {
		f.CreatedAt = time.Now()
	}
	var details any // NULL without details
	if len(f.Details) > 0 {
		details = string(f.Details)
	}
	res, err := s.write.ExecContext(ctx,
		`INSERT INTO feedback (id, team_id, endpoint, job_id, rating, note, details, origin, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (team_id, endpoint, job_id) DO NOTHING`,
		f.ID, team, f.Endpoint, f.JobID, f.Rating, f.Note, details, f.Origin, formatTime(f.CreatedAt))
	if err != nil {
		return store.Feedback{}, false, fmt.Errorf("store: add feedback: %w", mapErr(err))
	}
	if n, _ := res.RowsAffected(); n == 1 {
		f.TeamID, f.CreatedAt = team, f.CreatedAt.UTC().Truncate(time.Microsecond)
		return f, true, nil
	}
	row := s.write.QueryRowContext(ctx, `SELECT f.id, f.team_id, t.name, f.endpoint, f.job_id, f.rating, f.note, f.details, f.origin, f.created_at
		FROM feedback f JOIN teams t ON t.id = f.team_id WHERE f.team_id = ? AND f.endpoint = ? AND f.job_id = ?`, team, f.Endpoint, f.JobID)
	prev, err := scanFeedback(row)
	if err != nil {
		return store.Feedback{}, false, fmt.Errorf("store: add feedback: %w", mapErr(err))
	}
	return prev, false, nil
}

// ListFeedback returns the feedback matching q, newest first.
func (s *Store) ListFeedback(ctx context.Context, q store.FeedbackQuery) ([]store.Feedback, error) {
	team := ""
	if q.TeamID != "" {
		t, err := parseID(q.TeamID)
		if err != nil {
			return []store.Feedback{}, nil // a malformed id names no team
		}
		team = t
	}
	before := ""
	if q.Before != "" {
		b, err := uuid.Parse(q.Before)
		if err != nil {
			return nil, fmt.Errorf("store: list feedback: malformed cursor id %q", q.Before)
		}
		before = b.String()
	}
	rows, err := s.read.QueryContext(ctx,
		`SELECT f.id, f.team_id, t.name, f.endpoint, f.job_id, f.rating, f.note, f.details, f.origin, f.created_at
		FROM feedback f JOIN teams t ON t.id = f.team_id
		WHERE (? = '' OR f.team_id = ?) AND (? = '' OR f.id < ?)
		ORDER BY f.id DESC LIMIT ?`,
		team, team, before, before, max(q.Limit, 1))
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
	var details sql.NullString
	var at string
	if err := row.Scan(&f.ID, &f.TeamID, &f.TeamName, &f.Endpoint, &f.JobID, &f.Rating, &f.Note, &details, &f.Origin, &at); err != nil {
		return store.Feedback{}, err
	}
	if details.Valid {
		f.Details = json.RawMessage(details.String)
	}
	var err error
	f.CreatedAt, err = parseTime(at)
	return f, err
}
