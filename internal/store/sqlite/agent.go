package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/firegate/firegate/internal/store"
)

var _ store.AgentStore = (*Store)(nil)

const agentColumns = `id, team_id, api_key_id, parent_id, status, model, options, max_credits, state, step,
	credits_used, data, error, created_at, updated_at, expires_at, finished_at`

// CreateAgentRun stores a new run in status processing.
func (s *Store) CreateAgentRun(ctx context.Context, r store.AgentRun) (store.AgentRun, error) {
	if r.ExpiresAt.IsZero() || r.MaxCredits < 0 || r.Model == "" {
		return store.AgentRun{}, errors.New("store: create agent run: no expiry time, no model or negative max credits")
	}
	id, err := parseID(r.ID)
	if err != nil {
		return store.AgentRun{}, fmt.Errorf("store: create agent run: %w", err)
	}
	team, err := parseID(r.TeamID)
	if err != nil {
		return store.AgentRun{}, fmt.Errorf("store: create agent run: team: %w", err)
	}
	var key, parent sql.NullString
	if r.APIKeyID != "" {
		k, err := parseID(r.APIKeyID)
		if err != nil {
			return store.AgentRun{}, fmt.Errorf("store: create agent run: api key: %w", err)
		}
		key = sql.NullString{String: k, Valid: true}
	}
	if r.ParentID != "" {
		p, err := parseID(r.ParentID)
		if err != nil {
			return store.AgentRun{}, fmt.Errorf("store: create agent run: parent: %w", err)
		}
		parent = sql.NullString{String: p, Valid: true}
	}
	created := r.CreatedAt
	if created.IsZero() {
		created = s.now()
	}
	opts := r.Options
	if opts == nil {
		opts = []byte{}
	}
	got, err := scanAgentRun(s.write.QueryRowContext(ctx,
		`INSERT INTO agent_runs (id, team_id, api_key_id, parent_id, status, model, options, max_credits,
			created_at, updated_at, expires_at)
		VALUES (?, ?, ?, ?, 'processing', ?, ?, ?, ?, ?, ?)
		RETURNING `+agentColumns,
		id, team, key, parent, r.Model, opts, r.MaxCredits, formatTime(created), formatTime(created), formatTime(r.ExpiresAt)))
	if err != nil {
		return store.AgentRun{}, fmt.Errorf("store: create agent run: %w", mapErr(err))
	}
	return got, nil
}

// AgentRun returns a run or store.ErrNotFound.
func (s *Store) AgentRun(ctx context.Context, id string) (store.AgentRun, error) {
	id, err := parseID(id)
	if err != nil {
		return store.AgentRun{}, fmt.Errorf("store: agent run: %w", err)
	}
	r, err := scanAgentRun(s.read.QueryRowContext(ctx, `SELECT `+agentColumns+` FROM agent_runs WHERE id = ?`, id))
	if err != nil {
		return store.AgentRun{}, fmt.Errorf("store: agent run: %w", mapErr(err))
	}
	return r, nil
}

// AgentRuns lists a team's top-level runs after the cursor before, newest
// first (see store.AgentCursor).
func (s *Store) AgentRuns(ctx context.Context, teamID string, before store.AgentCursor, limit int) ([]store.AgentRun, error) {
	team, err := parseID(teamID)
	if err != nil {
		return nil, fmt.Errorf("store: agent runs: %w", err)
	}
	if before.ID == "" {
		return s.queryAgentRuns(ctx, `SELECT `+agentColumns+` FROM agent_runs
		WHERE team_id = ? AND parent_id IS NULL AND created_at < ? ORDER BY created_at DESC, id DESC LIMIT ?`,
			team, formatTime(before.CreatedAt), max(limit, 0))
	}
	id, err := parseID(before.ID)
	if err != nil {
		return nil, fmt.Errorf("store: agent runs: %w", err)
	}
	// Ids are canonical lower-case UUID text, ordered as Postgres orders
	// the uuids.
	return s.queryAgentRuns(ctx, `SELECT `+agentColumns+` FROM agent_runs
		WHERE team_id = ? AND parent_id IS NULL AND (created_at, id) < (?, ?)
		ORDER BY created_at DESC, id DESC LIMIT ?`,
		team, formatTime(before.CreatedAt), id, max(limit, 0))
}

// ChildAgentRuns lists a run's subagents, oldest first.
func (s *Store) ChildAgentRuns(ctx context.Context, parentID string) ([]store.AgentRun, error) {
	p, err := parseID(parentID)
	if err != nil {
		return nil, fmt.Errorf("store: child agent runs: %w", err)
	}
	return s.queryAgentRuns(ctx, `SELECT `+agentColumns+` FROM agent_runs WHERE parent_id = ? ORDER BY created_at, id`, p)
}

func (s *Store) queryAgentRuns(ctx context.Context, q string, args ...any) ([]store.AgentRun, error) {
	rows, err := s.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: agent runs: %w", err)
	}
	defer rows.Close()
	var out []store.AgentRun
	for rows.Next() {
		r, err := scanAgentRun(rows)
		if err != nil {
			return nil, fmt.Errorf("store: agent runs: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: agent runs: %w", err)
	}
	return out, nil
}

// RecordAgentStep records a step of a processing run.
func (s *Store) RecordAgentStep(ctx context.Context, id string, st store.AgentStep) (bool, error) {
	id, err := parseID(id)
	if err != nil {
		return false, fmt.Errorf("store: record agent step: %w", err)
	}
	var ok bool
	err = s.Transact(ctx, func(tx DBTX) error {
		now := formatTime(s.now())
		res, err := tx.ExecContext(ctx, `UPDATE agent_runs SET step = ?, state = ?, credits_used = ?, updated_at = ?
			WHERE id = ? AND status = 'processing' AND step = ?`, st.Step, st.State, st.CreditsUsed, now, id, st.Step-1)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err != nil {
				return err
			}
			return existsAgentRun(ctx, tx, id)
		}
		ok = true
		return appendAgent(ctx, tx, id, now, st.Events, st.Snapshots)
	})
	if err != nil {
		return false, fmt.Errorf("store: record agent step: %w", err)
	}
	return ok, nil
}

// AppendAgentEvents appends events to a processing run.
func (s *Store) AppendAgentEvents(ctx context.Context, id string, events [][]byte) (bool, error) {
	id, err := parseID(id)
	if err != nil {
		return false, fmt.Errorf("store: append agent events: %w", err)
	}
	var ok bool
	err = s.Transact(ctx, func(tx DBTX) error {
		var status string
		if err := tx.QueryRowContext(ctx, `SELECT status FROM agent_runs WHERE id = ?`, id).Scan(&status); err != nil {
			return mapErr(err)
		}
		if status != store.AgentProcessing {
			return nil
		}
		ok = true
		return appendAgent(ctx, tx, id, formatTime(s.now()), events, nil)
	})
	if err != nil {
		return false, fmt.Errorf("store: append agent events: %w", err)
	}
	return ok, nil
}

// FinishAgentRun ends a run that is in one of the from statuses.
func (s *Store) FinishAgentRun(ctx context.Context, id string, from []string, f store.AgentFinish) (bool, error) {
	if !store.AgentTerminal(f.Status) {
		return false, fmt.Errorf("store: finish agent run: status %q is not final", f.Status)
	}
	id, err := parseID(id)
	if err != nil {
		return false, fmt.Errorf("store: finish agent run: %w", err)
	}
	var ok bool
	err = s.Transact(ctx, func(tx DBTX) error {
		now := formatTime(s.now())
		args := []any{f.Status, f.Data, f.Error, f.CreditsUsed, now, now, id}
		for _, st := range from {
			args = append(args, st)
		}
		res, err := tx.ExecContext(ctx, `UPDATE agent_runs SET status = ?, data = ?, error = ?, credits_used = ?,
			updated_at = ?, finished_at = ? WHERE id = ? AND status IN (`+placeholders(len(from))+`)`, args...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err != nil {
				return err
			}
			return existsAgentRun(ctx, tx, id)
		}
		ok = true
		return appendAgent(ctx, tx, id, now, f.Events, f.Snapshots)
	})
	if err != nil {
		return false, fmt.Errorf("store: finish agent run: %w", err)
	}
	return ok, nil
}

func existsAgentRun(ctx context.Context, tx DBTX, id string) error {
	var one int
	return mapErr(tx.QueryRowContext(ctx, `SELECT 1 FROM agent_runs WHERE id = ?`, id).Scan(&one))
}

// appendAgent adds events (numbered after the run's last) and snapshots.
func appendAgent(ctx context.Context, tx DBTX, id, now string, events [][]byte, snaps []store.AgentSnapshot) error {
	for _, sn := range snaps {
		sid, err := parseID(sn.ID)
		if err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO agent_snapshots (id, run_id, content, created_at) VALUES (?, ?, ?, ?)`,
			sid, id, sn.Content, now); err != nil {
			return mapErr(err)
		}
	}
	if len(events) == 0 {
		return nil
	}
	var seq int
	if err := tx.QueryRowContext(ctx, `UPDATE agent_runs SET event_count = event_count + ? WHERE id = ? RETURNING event_count`,
		len(events), id).Scan(&seq); err != nil {
		return mapErr(err)
	}
	seq -= len(events)
	for _, b := range events {
		seq++
		if _, err := tx.ExecContext(ctx, `INSERT INTO agent_events (run_id, seq, body, created_at) VALUES (?, ?, ?, ?)`,
			id, seq, b, now); err != nil {
			return mapErr(err)
		}
	}
	return nil
}

// AgentEvents returns a run's events after seq after.
func (s *Store) AgentEvents(ctx context.Context, id string, after, limit int) ([]store.AgentEvent, error) {
	id, err := parseID(id)
	if err != nil {
		return nil, fmt.Errorf("store: agent events: %w", err)
	}
	rows, err := s.read.QueryContext(ctx, `SELECT seq, body, created_at FROM agent_events
		WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`, id, after, max(limit, 0))
	if err != nil {
		return nil, fmt.Errorf("store: agent events: %w", err)
	}
	defer rows.Close()
	var out []store.AgentEvent
	for rows.Next() {
		var e store.AgentEvent
		var created string
		if err := rows.Scan(&e.Seq, &e.Body, &created); err != nil {
			return nil, fmt.Errorf("store: agent events: %w", err)
		}
		if e.CreatedAt, err = parseTime(created); err != nil {
			return nil, fmt.Errorf("store: agent events: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: agent events: %w", err)
	}
	return out, nil
}

// AgentSnapshot returns a snapshot of a run or store.ErrNotFound.
func (s *Store) AgentSnapshot(ctx context.Context, runID, snapshotID string) (store.AgentSnapshot, error) {
	rid, err := parseID(runID)
	if err != nil {
		return store.AgentSnapshot{}, fmt.Errorf("store: agent snapshot: %w", err)
	}
	sid, err := parseID(snapshotID)
	if err != nil {
		return store.AgentSnapshot{}, fmt.Errorf("store: agent snapshot: %w", err)
	}
	sn := store.AgentSnapshot{ID: sid, RunID: rid}
	var created string
	err = s.read.QueryRowContext(ctx, `SELECT content, created_at FROM agent_snapshots WHERE id = ? AND run_id = ?`,
		sid, rid).Scan(&sn.Content, &created)
	if err != nil {
		return store.AgentSnapshot{}, fmt.Errorf("store: agent snapshot: %w", mapErr(err))
	}
	if sn.CreatedAt, err = parseTime(created); err != nil {
		return store.AgentSnapshot{}, fmt.Errorf("store: agent snapshot: %w", err)
	}
	return sn, nil
}

// StaleAgentRuns lists processing runs not updated since t.
func (s *Store) StaleAgentRuns(ctx context.Context, t time.Time) ([]string, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id FROM agent_runs WHERE status = 'processing' AND updated_at < ?
		ORDER BY updated_at`, formatTime(t))
	if err != nil {
		return nil, fmt.Errorf("store: stale agent runs: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: stale agent runs: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// DeleteExpiredAgentRuns deletes runs that expired before now.
func (s *Store) DeleteExpiredAgentRuns(ctx context.Context, now time.Time) (int, error) {
	res, err := s.write.ExecContext(ctx, `DELETE FROM agent_runs WHERE expires_at < ?`, formatTime(now))
	if err != nil {
		return 0, fmt.Errorf("store: delete expired agent runs: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

func scanAgentRun(row scanner) (store.AgentRun, error) {
	var (
		r                         store.AgentRun
		key, parent, finished     sql.NullString
		created, updated, expires string
	)
	if err := row.Scan(&r.ID, &r.TeamID, &key, &parent, &r.Status, &r.Model, &r.Options, &r.MaxCredits, &r.State,
		&r.Step, &r.CreditsUsed, &r.Data, &r.Error, &created, &updated, &expires, &finished); err != nil {
		return store.AgentRun{}, err
	}
	r.APIKeyID, r.ParentID = key.String, parent.String
	var err error
	if r.CreatedAt, err = parseTime(created); err != nil {
		return store.AgentRun{}, err
	}
	if r.UpdatedAt, err = parseTime(updated); err != nil {
		return store.AgentRun{}, err
	}
	if r.ExpiresAt, err = parseTime(expires); err != nil {
		return store.AgentRun{}, err
	}
	if finished.Valid {
		f, err := parseTime(finished.String)
		if err != nil {
			return store.AgentRun{}, err
		}
		r.FinishedAt = &f
	}
	return r, nil
}
