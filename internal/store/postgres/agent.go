package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

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
	var key, parent *uuid.UUID
	if r.APIKeyID != "" {
		k, err := parseID(r.APIKeyID)
		if err != nil {
			return store.AgentRun{}, fmt.Errorf("store: create agent run: api key: %w", err)
		}
		key = &k
	}
	if r.ParentID != "" {
		p, err := parseID(r.ParentID)
		if err != nil {
			return store.AgentRun{}, fmt.Errorf("store: create agent run: parent: %w", err)
		}
		parent = &p
	}
	var created *time.Time
	if !r.CreatedAt.IsZero() {
		created = &r.CreatedAt
	}
	opts := r.Options
	if opts == nil {
		opts = []byte{}
	}
	got, err := scanAgentRun(s.pool.QueryRow(ctx,
		`INSERT INTO agent_runs (id, team_id, api_key_id, parent_id, status, model, options, max_credits,
			created_at, updated_at, expires_at)
		VALUES ($1, $2, $3, $4, 'processing', $5, $6, $7, COALESCE($8, now()), COALESCE($8, now()), $9)
		RETURNING `+agentColumns,
		id, team, key, parent, r.Model, opts, r.MaxCredits, created, r.ExpiresAt))
	if err != nil {
		return store.AgentRun{}, fmt.Errorf("store: create agent run: %w", mapErr(err))
	}
	return got, nil
}

// AgentRun returns a run or store.ErrNotFound.
func (s *Store) AgentRun(ctx context.Context, id string) (store.AgentRun, error) {
	u, err := parseID(id)
	if err != nil {
		return store.AgentRun{}, fmt.Errorf("store: agent run: %w", err)
	}
	r, err := scanAgentRun(s.pool.QueryRow(ctx, `SELECT `+agentColumns+` FROM agent_runs WHERE id = $1`, u))
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
	at := before.CreatedAt.UTC().Truncate(time.Microsecond)
	if before.ID == "" {
		return s.queryAgentRuns(ctx, `SELECT `+agentColumns+` FROM agent_runs
		WHERE team_id = $1 AND parent_id IS NULL AND created_at < $2 ORDER BY created_at DESC, id DESC LIMIT $3`,
			team, at, max(limit, 0))
	}
	id, err := parseID(before.ID)
	if err != nil {
		return nil, fmt.Errorf("store: agent runs: %w", err)
	}
	return s.queryAgentRuns(ctx, `SELECT `+agentColumns+` FROM agent_runs
		WHERE team_id = $1 AND parent_id IS NULL AND (created_at, id) < ($2, $3)
		ORDER BY created_at DESC, id DESC LIMIT $4`,
		team, at, id, max(limit, 0))
}

// ChildAgentRuns lists a run's subagents, oldest first.
func (s *Store) ChildAgentRuns(ctx context.Context, parentID string) ([]store.AgentRun, error) {
	p, err := parseID(parentID)
	if err != nil {
		return nil, fmt.Errorf("store: child agent runs: %w", err)
	}
	return s.queryAgentRuns(ctx, `SELECT `+agentColumns+` FROM agent_runs WHERE parent_id = $1 ORDER BY created_at, id`, p)
}

func (s *Store) queryAgentRuns(ctx context.Context, q string, args ...any) ([]store.AgentRun, error) {
	rows, err := s.pool.Query(ctx, q, args...)
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
	u, err := parseID(id)
	if err != nil {
		return false, fmt.Errorf("store: record agent step: %w", err)
	}
	var ok bool
	err = s.Transact(ctx, func(tx DBTX) error {
		tag, err := tx.Exec(ctx, `UPDATE agent_runs SET step = $2, state = $3, credits_used = $4, updated_at = now()
			WHERE id = $1 AND status = 'processing' AND step = $5`, u, st.Step, st.State, st.CreditsUsed, st.Step-1)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return existsAgentRun(ctx, tx, u)
		}
		ok = true
		return appendAgent(ctx, tx, u, st.Events, st.Snapshots)
	})
	if err != nil {
		return false, fmt.Errorf("store: record agent step: %w", mapErr(err))
	}
	return ok, nil
}

// AppendAgentEvents appends events to a processing run.
func (s *Store) AppendAgentEvents(ctx context.Context, id string, events [][]byte) (bool, error) {
	u, err := parseID(id)
	if err != nil {
		return false, fmt.Errorf("store: append agent events: %w", err)
	}
	var ok bool
	err = s.Transact(ctx, func(tx DBTX) error {
		var status string
		if err := tx.QueryRow(ctx, `SELECT status FROM agent_runs WHERE id = $1 FOR UPDATE`, u).Scan(&status); err != nil {
			return err
		}
		if status != store.AgentProcessing {
			return nil
		}
		ok = true
		return appendAgent(ctx, tx, u, events, nil)
	})
	if err != nil {
		return false, fmt.Errorf("store: append agent events: %w", mapErr(err))
	}
	return ok, nil
}

// FinishAgentRun ends a run that is in one of the from statuses.
func (s *Store) FinishAgentRun(ctx context.Context, id string, from []string, f store.AgentFinish) (bool, error) {
	if !store.AgentTerminal(f.Status) {
		return false, fmt.Errorf("store: finish agent run: status %q is not final", f.Status)
	}
	u, err := parseID(id)
	if err != nil {
		return false, fmt.Errorf("store: finish agent run: %w", err)
	}
	if from == nil {
		from = []string{}
	}
	var ok bool
	err = s.Transact(ctx, func(tx DBTX) error {
		tag, err := tx.Exec(ctx, `UPDATE agent_runs SET status = $2, data = $3, error = $4, credits_used = $5,
			updated_at = now(), finished_at = now() WHERE id = $1 AND status = ANY($6::text[])`,
			u, f.Status, f.Data, f.Error, f.CreditsUsed, from)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return existsAgentRun(ctx, tx, u)
		}
		ok = true
		return appendAgent(ctx, tx, u, f.Events, f.Snapshots)
	})
	if err != nil {
		return false, fmt.Errorf("store: finish agent run: %w", mapErr(err))
	}
	return ok, nil
}

func existsAgentRun(ctx context.Context, tx DBTX, id uuid.UUID) error {
	var one int
	return tx.QueryRow(ctx, `SELECT 1 FROM agent_runs WHERE id = $1`, id).Scan(&one)
}

// appendAgent adds events (numbered after the run's last, under the run's
// row lock taken by the UPDATE) and snapshots.
func appendAgent(ctx context.Context, tx DBTX, id uuid.UUID, events [][]byte, snaps []store.AgentSnapshot) error {
	for _, sn := range snaps {
		sid, err := parseID(sn.ID)
		if err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO agent_snapshots (id, run_id, content) VALUES ($1, $2, $3)`,
			sid, id, sn.Content); err != nil {
			return err
		}
	}
	if len(events) == 0 {
		return nil
	}
	var seq int
	if err := tx.QueryRow(ctx, `UPDATE agent_runs SET event_count = event_count + $2 WHERE id = $1 RETURNING event_count`,
		id, len(events)).Scan(&seq); err != nil {
		return err
	}
	seq -= len(events)
	for _, b := range events {
		seq++
		if _, err := tx.Exec(ctx, `INSERT INTO agent_events (run_id, seq, body) VALUES ($1, $2, $3)`, id, seq, b); err != nil {
			return err
		}
	}
	return nil
}

// AgentEvents returns a run's events after seq after.
func (s *Store) AgentEvents(ctx context.Context, id string, after, limit int) ([]store.AgentEvent, error) {
	u, err := parseID(id)
	if err != nil {
		return nil, fmt.Errorf("store: agent events: %w", err)
	}
	rows, err := s.pool.Query(ctx, `SELECT seq, body, created_at FROM agent_events
		WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, u, after, max(limit, 0))
	if err != nil {
		return nil, fmt.Errorf("store: agent events: %w", err)
	}
	defer rows.Close()
	var out []store.AgentEvent
	for rows.Next() {
		var e store.AgentEvent
		if err := rows.Scan(&e.Seq, &e.Body, &e.CreatedAt); err != nil {
			return nil, fmt.Errorf("store: agent events: %w", err)
		}
		e.CreatedAt = e.CreatedAt.UTC()
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
	sn := store.AgentSnapshot{ID: sid.String(), RunID: rid.String()}
	err = s.pool.QueryRow(ctx, `SELECT content, created_at FROM agent_snapshots WHERE id = $1 AND run_id = $2`,
		sid, rid).Scan(&sn.Content, &sn.CreatedAt)
	if err != nil {
		return store.AgentSnapshot{}, fmt.Errorf("store: agent snapshot: %w", mapErr(err))
	}
	sn.CreatedAt = sn.CreatedAt.UTC()
	return sn, nil
}

// StaleAgentRuns lists processing runs not updated since t.
func (s *Store) StaleAgentRuns(ctx context.Context, t time.Time) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id::text FROM agent_runs WHERE status = 'processing' AND updated_at < $1
		ORDER BY updated_at`, t)
	if err != nil {
		return nil, fmt.Errorf("store: stale agent runs: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store: stale agent runs: %w", err)
	}
	return ids, nil
}

// DeleteExpiredAgentRuns deletes runs that expired before now.
func (s *Store) DeleteExpiredAgentRuns(ctx context.Context, now time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM agent_runs WHERE expires_at < $1`, now)
	if err != nil {
		return 0, fmt.Errorf("store: delete expired agent runs: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

func scanAgentRun(row pgx.Row) (store.AgentRun, error) {
	var (
		r           store.AgentRun
		key, parent *string
	)
	if err := row.Scan(&r.ID, &r.TeamID, &key, &parent, &r.Status, &r.Model, &r.Options, &r.MaxCredits, &r.State,
		&r.Step, &r.CreditsUsed, &r.Data, &r.Error, &r.CreatedAt, &r.UpdatedAt, &r.ExpiresAt, &r.FinishedAt); err != nil {
		return store.AgentRun{}, err
	}
	if key != nil {
		r.APIKeyID = *key
	}
	if parent != nil {
		r.ParentID = *parent
	}
	r.CreatedAt, r.UpdatedAt, r.ExpiresAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC(), r.ExpiresAt.UTC()
	if r.FinishedAt != nil {
		f := r.FinishedAt.UTC()
		r.FinishedAt = &f
	}
	return r, nil
}
