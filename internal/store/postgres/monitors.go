package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/firegate/firegate/internal/store"
)

var _ store.MonitorStore = (*Store)(nil)

const monitorColumns = `id::text, team_id::text, name, status, cron, timezone, config, retention_days,
	estimated_credits_per_month, next_run_at, last_run_at, COALESCE(current_check_id::text, ''),
	last_check_summary, created_at, updated_at`

const checkColumns = `id::text, monitor_id::text, team_id::text, status, trigger, scheduled_for, started_at,
	finished_at, estimated_credits, reserved_credits, actual_credits, billing_status, summary,
	target_results, error, created_at, updated_at`

const pageColumns = `id::text, check_id::text, monitor_id::text, target_id, url, status, previous_scrape_id,
	current_scrape_id, status_code, error, data, created_at`

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func scanMonitor(row pgx.Row) (store.Monitor, error) {
	var m store.Monitor
	err := row.Scan(&m.ID, &m.TeamID, &m.Name, &m.Status, &m.Cron, &m.Timezone, &m.Config, &m.RetentionDays,
		&m.EstimatedCreditsPerMonth, &m.NextRunAt, &m.LastRunAt, &m.CurrentCheckID, &m.LastCheckSummary,
		&m.CreatedAt, &m.UpdatedAt)
	if err != nil {
		return store.Monitor{}, err
	}
	m.NextRunAt, m.LastRunAt = utcPtr(m.NextRunAt), utcPtr(m.LastRunAt)
	m.CreatedAt, m.UpdatedAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC()
	return m, nil
}

func scanCheck(row pgx.Row) (store.MonitorCheck, error) {
	var c store.MonitorCheck
	err := row.Scan(&c.ID, &c.MonitorID, &c.TeamID, &c.Status, &c.Trigger, &c.ScheduledFor, &c.StartedAt,
		&c.FinishedAt, &c.EstimatedCredits, &c.ReservedCredits, &c.ActualCredits, &c.BillingStatus, &c.Summary,
		&c.TargetResults, &c.Error, &c.CreatedAt, &c.UpdatedAt)
	if err != nil {
		return store.MonitorCheck{}, err
	}
	c.ScheduledFor, c.StartedAt, c.FinishedAt = utcPtr(c.ScheduledFor), utcPtr(c.StartedAt), utcPtr(c.FinishedAt)
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return c, nil
}

func scanPage(row pgx.Row) (store.MonitorPage, error) {
	var p store.MonitorPage
	err := row.Scan(&p.ID, &p.CheckID, &p.MonitorID, &p.TargetID, &p.URL, &p.Status, &p.PreviousScrapeID,
		&p.CurrentScrapeID, &p.StatusCode, &p.Error, &p.Data, &p.CreatedAt)
	p.CreatedAt = p.CreatedAt.UTC()
	return p, err
}

func collect[T any](rows pgx.Rows, scan func(pgx.Row) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// CreateMonitor stores m; store.ErrNotFound if the team does not exist.
func (s *Store) CreateMonitor(ctx context.Context, m store.Monitor) (store.Monitor, error) {
	id, err := parseID(m.ID)
	if err != nil {
		return store.Monitor{}, fmt.Errorf("store: create monitor: %w", err)
	}
	team, err := parseID(m.TeamID)
	if err != nil {
		return store.Monitor{}, fmt.Errorf("store: create monitor: %w", err)
	}
	got, err := scanMonitor(s.pool.QueryRow(ctx,
		`INSERT INTO monitors (id, team_id, name, status, cron, timezone, config, retention_days,
			estimated_credits_per_month, next_run_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)
		RETURNING `+monitorColumns,
		id, team, m.Name, m.Status, m.Cron, m.Timezone, nonNil(m.Config), m.RetentionDays,
		m.EstimatedCreditsPerMonth, utcPtr(m.NextRunAt), m.CreatedAt.UTC()))
	if err != nil {
		return store.Monitor{}, fmt.Errorf("store: create monitor: %w", mapErr(err))
	}
	return got, nil
}

// Monitor returns a team's monitor that is not deleted.
func (s *Store) Monitor(ctx context.Context, teamID, id string) (store.Monitor, error) {
	mid, err := parseID(id)
	if err != nil {
		return store.Monitor{}, fmt.Errorf("store: monitor: %w", err)
	}
	team, err := parseID(teamID)
	if err != nil {
		return store.Monitor{}, fmt.Errorf("store: monitor: %w", err)
	}
	m, err := scanMonitor(s.pool.QueryRow(ctx,
		`SELECT `+monitorColumns+` FROM monitors WHERE id = $1 AND team_id = $2 AND status <> 'deleted'`, mid, team))
	if err != nil {
		return store.Monitor{}, fmt.Errorf("store: monitor: %w", mapErr(err))
	}
	return m, nil
}

// ListMonitors returns a team's monitors, newest first.
func (s *Store) ListMonitors(ctx context.Context, teamID string, limit, offset int) ([]store.Monitor, error) {
	team, err := parseID(teamID)
	if err != nil {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx,
		`SELECT `+monitorColumns+` FROM monitors WHERE team_id = $1 AND status <> 'deleted'
		ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`, team, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("store: list monitors: %w", err)
	}
	out, err := collect(rows, scanMonitor)
	if err != nil {
		return nil, fmt.Errorf("store: list monitors: %w", err)
	}
	return out, nil
}

// UpdateMonitor replaces the mutable fields of a monitor.
func (s *Store) UpdateMonitor(ctx context.Context, m store.Monitor) (store.Monitor, error) {
	id, err := parseID(m.ID)
	if err != nil {
		return store.Monitor{}, fmt.Errorf("store: update monitor: %w", err)
	}
	team, err := parseID(m.TeamID)
	if err != nil {
		return store.Monitor{}, fmt.Errorf("store: update monitor: %w", err)
	}
	got, err := scanMonitor(s.pool.QueryRow(ctx,
		`UPDATE monitors SET name = $3, status = $4, cron = $5, timezone = $6, config = $7,
			retention_days = $8, estimated_credits_per_month = $9, next_run_at = $10, updated_at = $11
		WHERE id = $1 AND team_id = $2 AND status <> 'deleted'
		RETURNING `+monitorColumns,
		id, team, m.Name, m.Status, m.Cron, m.Timezone, nonNil(m.Config), m.RetentionDays,
		m.EstimatedCreditsPerMonth, utcPtr(m.NextRunAt), m.UpdatedAt.UTC()))
	if err != nil {
		return store.Monitor{}, fmt.Errorf("store: update monitor: %w", mapErr(err))
	}
	return got, nil
}

// DeleteMonitor marks a monitor deleted.
func (s *Store) DeleteMonitor(ctx context.Context, teamID, id string, now time.Time) error {
	mid, err := parseID(id)
	if err != nil {
		return fmt.Errorf("store: delete monitor: %w", err)
	}
	team, err := parseID(teamID)
	if err != nil {
		return fmt.Errorf("store: delete monitor: %w", err)
	}
	tag, err := s.pool.Exec(ctx,
		`UPDATE monitors SET status = 'deleted', next_run_at = NULL, updated_at = $3
		WHERE id = $1 AND team_id = $2 AND status <> 'deleted'`, mid, team, now.UTC())
	if err != nil {
		return fmt.Errorf("store: delete monitor: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: delete monitor: %w", store.ErrNotFound)
	}
	return nil
}

// DueMonitors returns active monitors due at now.
func (s *Store) DueMonitors(ctx context.Context, now time.Time, limit int) ([]store.Monitor, error) {
	rows, err := s.pool.Query(ctx,
		`SELECT `+monitorColumns+` FROM monitors WHERE status = 'active' AND next_run_at <= $1
		ORDER BY next_run_at LIMIT $2`, now.UTC(), limit)
	if err != nil {
		return nil, fmt.Errorf("store: due monitors: %w", err)
	}
	out, err := collect(rows, scanMonitor)
	if err != nil {
		return nil, fmt.Errorf("store: due monitors: %w", err)
	}
	return out, nil
}

// StartCheck records a new check atomically with the monitor's state.
func (s *Store) StartCheck(ctx context.Context, st store.CheckStart) (store.MonitorCheck, error) {
	mid, err := parseID(st.MonitorID)
	if err != nil {
		return store.MonitorCheck{}, fmt.Errorf("store: start check: %w", err)
	}
	team, err := parseID(st.TeamID)
	if err != nil {
		return store.MonitorCheck{}, fmt.Errorf("store: start check: %w", err)
	}
	cid, err := parseID(st.Check.ID)
	if err != nil {
		return store.MonitorCheck{}, fmt.Errorf("store: start check: %w", err)
	}
	var out store.MonitorCheck
	err = s.Transact(ctx, func(tx DBTX) error {
		var status, current string
		var next *time.Time
		err := tx.QueryRow(ctx,
			`SELECT status, next_run_at, COALESCE(current_check_id::text, '') FROM monitors
			WHERE id = $1 AND team_id = $2 FOR UPDATE`, mid, team).Scan(&status, &next, &current)
		if err != nil {
			return mapErr(err)
		}
		if status != store.MonitorActive {
			return store.ErrMonitorPaused
		}
		now := st.Check.CreatedAt.UTC()
		c := st.Check
		c.Status = store.CheckQueued
		c.BillingStatus = "not_applicable"
		if st.DueAt != nil {
			if next == nil || !next.Equal(*st.DueAt) {
				return store.ErrConflict
			}
			if _, err := tx.Exec(ctx, `UPDATE monitors SET next_run_at = $2, last_run_at = $3 WHERE id = $1`,
				mid, utcPtr(st.NextRunAt), now); err != nil {
				return err
			}
		}
		if current != "" {
			if st.DueAt == nil {
				return &store.CheckRunningError{CheckID: current}
			}
			c.Status = store.CheckSkippedOverlap
			c.FinishedAt = &now
		}
		got, err := scanCheck(tx.QueryRow(ctx,
			`INSERT INTO monitor_checks (id, monitor_id, team_id, status, trigger, scheduled_for, finished_at,
				estimated_credits, billing_status, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)
			RETURNING `+checkColumns,
			cid, mid, team, c.Status, c.Trigger, utcPtr(c.ScheduledFor), utcPtr(c.FinishedAt),
			c.EstimatedCredits, c.BillingStatus, now))
		if err != nil {
			return mapErr(err)
		}
		if got.Status == store.CheckQueued {
			if _, err := tx.Exec(ctx, `UPDATE monitors SET current_check_id = $2, last_run_at = $3 WHERE id = $1`,
				mid, cid, now); err != nil {
				return err
			}
		}
		out = got
		return nil
	})
	if err != nil {
		return store.MonitorCheck{}, fmt.Errorf("store: start check: %w", err)
	}
	return out, nil
}

// ClaimCheck moves a queued or running check to running.
func (s *Store) ClaimCheck(ctx context.Context, id string, now time.Time) (store.MonitorCheck, bool, error) {
	cid, err := parseID(id)
	if err != nil {
		return store.MonitorCheck{}, false, fmt.Errorf("store: claim check: %w", err)
	}
	c, err := scanCheck(s.pool.QueryRow(ctx,
		`UPDATE monitor_checks SET status = 'running', started_at = COALESCE(started_at, $2), updated_at = $2
		WHERE id = $1 AND status IN ('queued', 'running') RETURNING `+checkColumns, cid, now.UTC()))
	if errors.Is(err, pgx.ErrNoRows) {
		var exists bool
		if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM monitor_checks WHERE id = $1)`, cid).Scan(&exists); err != nil {
			return store.MonitorCheck{}, false, fmt.Errorf("store: claim check: %w", err)
		}
		if !exists {
			return store.MonitorCheck{}, false, fmt.Errorf("store: claim check: %w", store.ErrNotFound)
		}
		return store.MonitorCheck{}, false, nil
	}
	if err != nil {
		return store.MonitorCheck{}, false, fmt.Errorf("store: claim check: %w", err)
	}
	return c, true, nil
}

// SaveCheckPage creates or replaces a page of a check.
func (s *Store) SaveCheckPage(ctx context.Context, p store.MonitorPage) error {
	id, err := parseID(p.ID)
	if err != nil {
		return fmt.Errorf("store: save check page: %w", err)
	}
	cid, err := parseID(p.CheckID)
	if err != nil {
		return fmt.Errorf("store: save check page: %w", err)
	}
	mid, err := parseID(p.MonitorID)
	if err != nil {
		return fmt.Errorf("store: save check page: %w", err)
	}
	_, err = s.pool.Exec(ctx,
		`INSERT INTO monitor_pages (id, check_id, monitor_id, target_id, url, status, previous_scrape_id,
			current_scrape_id, status_code, error, data, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		ON CONFLICT (check_id, target_id, url) DO UPDATE SET status = EXCLUDED.status,
			previous_scrape_id = EXCLUDED.previous_scrape_id, current_scrape_id = EXCLUDED.current_scrape_id,
			status_code = EXCLUDED.status_code, error = EXCLUDED.error, data = EXCLUDED.data`,
		id, cid, mid, p.TargetID, p.URL, p.Status, p.PreviousScrapeID, p.CurrentScrapeID, p.StatusCode,
		p.Error, p.Data, p.CreatedAt.UTC())
	if err != nil {
		return fmt.Errorf("store: save check page: %w", mapErr(err))
	}
	return nil
}

// LastPage returns the newest scraped page of a monitor's target and URL
// outside one check.
func (s *Store) LastPage(ctx context.Context, monitorID, targetID, url, exceptCheck string) (store.MonitorPage, error) {
	mid, err := parseID(monitorID)
	if err != nil {
		return store.MonitorPage{}, fmt.Errorf("store: last page: %w", err)
	}
	except, err := parseID(exceptCheck)
	if err != nil {
		return store.MonitorPage{}, fmt.Errorf("store: last page: %w", err)
	}
	p, err := scanPage(s.pool.QueryRow(ctx,
		`SELECT `+pageColumns+` FROM monitor_pages
		WHERE monitor_id = $1 AND target_id = $2 AND url = $3 AND check_id <> $4 AND current_scrape_id <> ''
		ORDER BY seq DESC LIMIT 1`, mid, targetID, url, except))
	if err != nil {
		return store.MonitorPage{}, fmt.Errorf("store: last page: %w", mapErr(err))
	}
	return p, nil
}

// SetCheckTargetResults replaces a running check's target results.
func (s *Store) SetCheckTargetResults(ctx context.Context, id string, results []byte) (bool, error) {
	cid, err := parseID(id)
	if err != nil {
		return false, fmt.Errorf("store: set check target results: %w", err)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE monitor_checks SET target_results = $2 WHERE id = $1 AND status = 'running'`, cid, results)
	if err != nil {
		return false, fmt.Errorf("store: set check target results: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// FinishCheck records the end of a running check.
func (s *Store) FinishCheck(ctx context.Context, c store.MonitorCheck) (bool, error) {
	cid, err := parseID(c.ID)
	if err != nil {
		return false, fmt.Errorf("store: finish check: %w", err)
	}
	finished := time.Now().UTC()
	if c.FinishedAt != nil {
		finished = c.FinishedAt.UTC()
	}
	var ok bool
	err = s.Transact(ctx, func(tx DBTX) error {
		var mid string
		err := tx.QueryRow(ctx,
			`UPDATE monitor_checks SET status = $2, finished_at = $3, summary = $4, target_results = $5,
				reserved_credits = $6, actual_credits = $7, billing_status = $8, error = $9, updated_at = $3
			WHERE id = $1 AND status = 'running' RETURNING monitor_id::text`,
			cid, c.Status, finished, c.Summary, c.TargetResults, c.ReservedCredits, c.ActualCredits,
			c.BillingStatus, c.Error).Scan(&mid)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		ok = true
		_, err = tx.Exec(ctx,
			`UPDATE monitors SET current_check_id = CASE WHEN current_check_id = $2 THEN NULL ELSE current_check_id END,
				last_check_summary = $3 WHERE id = $1`, mid, cid, c.Summary)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("store: finish check: %w", err)
	}
	return ok, nil
}

// MonitorChecks returns a monitor's checks, newest first.
func (s *Store) MonitorChecks(ctx context.Context, teamID, monitorID, status string, limit, offset int) ([]store.MonitorCheck, error) {
	mid, err := parseID(monitorID)
	if err != nil {
		return nil, nil
	}
	team, err := parseID(teamID)
	if err != nil {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx,
		`SELECT `+checkColumns+` FROM monitor_checks WHERE monitor_id = $1 AND team_id = $2
			AND ($3 = '' OR status = $3)
		ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5`, mid, team, status, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("store: monitor checks: %w", err)
	}
	out, err := collect(rows, scanCheck)
	if err != nil {
		return nil, fmt.Errorf("store: monitor checks: %w", err)
	}
	return out, nil
}

// MonitorCheck returns one check of a team's monitor.
func (s *Store) MonitorCheck(ctx context.Context, teamID, monitorID, checkID string) (store.MonitorCheck, error) {
	cid, err := parseID(checkID)
	if err != nil {
		return store.MonitorCheck{}, fmt.Errorf("store: monitor check: %w", err)
	}
	mid, err := parseID(monitorID)
	if err != nil {
		return store.MonitorCheck{}, fmt.Errorf("store: monitor check: %w", err)
	}
	team, err := parseID(teamID)
	if err != nil {
		return store.MonitorCheck{}, fmt.Errorf("store: monitor check: %w", err)
	}
	c, err := scanCheck(s.pool.QueryRow(ctx,
		`SELECT `+checkColumns+` FROM monitor_checks WHERE id = $1 AND monitor_id = $2 AND team_id = $3`,
		cid, mid, team))
	if err != nil {
		return store.MonitorCheck{}, fmt.Errorf("store: monitor check: %w", mapErr(err))
	}
	return c, nil
}

// CheckPages returns a check's pages in creation order.
func (s *Store) CheckPages(ctx context.Context, checkID, status string, skip, limit int) ([]store.MonitorPage, error) {
	cid, err := parseID(checkID)
	if err != nil {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx,
		`SELECT `+pageColumns+` FROM monitor_pages WHERE check_id = $1 AND ($2 = '' OR status = $2)
		ORDER BY seq LIMIT $3 OFFSET $4`, cid, status, limit, skip)
	if err != nil {
		return nil, fmt.Errorf("store: check pages: %w", err)
	}
	out, err := collect(rows, scanPage)
	if err != nil {
		return nil, fmt.Errorf("store: check pages: %w", err)
	}
	return out, nil
}

// QueuedChecks returns checks still queued that were created before before.
func (s *Store) QueuedChecks(ctx context.Context, before time.Time, limit int) ([]string, error) {
	rows, err := s.pool.Query(ctx,
		`SELECT id::text FROM monitor_checks WHERE status = 'queued' AND created_at < $1 ORDER BY created_at LIMIT $2`,
		before.UTC(), limit)
	if err != nil {
		return nil, fmt.Errorf("store: queued checks: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store: queued checks: %w", err)
	}
	return ids, nil
}

// StaleRunningChecks lists running checks not updated since before.
func (s *Store) StaleRunningChecks(ctx context.Context, before time.Time, limit int) ([]string, error) {
	rows, err := s.pool.Query(ctx,
		`SELECT id::text FROM monitor_checks WHERE status = 'running' AND updated_at < $1 ORDER BY updated_at LIMIT $2`,
		before.UTC(), limit)
	if err != nil {
		return nil, fmt.Errorf("store: stale running checks: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store: stale running checks: %w", err)
	}
	return ids, nil
}

// DeleteExpiredChecks deletes finished checks past their monitor's
// retention.
func (s *Store) DeleteExpiredChecks(ctx context.Context, now time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx,
		`DELETE FROM monitor_checks c USING monitors m
		WHERE c.monitor_id = m.id AND c.finished_at IS NOT NULL
			AND c.created_at < $1::timestamptz - make_interval(days => m.retention_days)`, now.UTC())
	if err != nil {
		return 0, fmt.Errorf("store: delete expired checks: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
