package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/firegate/firegate/internal/store"
)

var _ store.MonitorStore = (*Store)(nil)

const monitorColumns = `id, team_id, name, status, cron, timezone, config, retention_days,
	estimated_credits_per_month, next_run_at, last_run_at, COALESCE(current_check_id, ''),
	last_check_summary, created_at, updated_at`

const checkColumns = `id, monitor_id, team_id, status, trigger, scheduled_for, started_at,
	finished_at, estimated_credits, reserved_credits, actual_credits, billing_status, summary,
	target_results, error, created_at, updated_at`

const pageColumns = `id, check_id, monitor_id, target_id, url, status, previous_scrape_id,
	current_scrape_id, status_code, error, data, created_at`

// nullTime renders an optional time as stored.
func nullTime(t *time.Time) sql.NullString {
	if t == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: formatTime(*t), Valid: true}
}

// parseNullTime reads an optional stored time.
func parseNullTime(s sql.NullString) (*time.Time, error) {
	if !s.Valid {
		return nil, nil
	}
	t, err := parseTime(s.String)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

func nullInt(p *int64) sql.NullInt64 {
	if p == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: *p, Valid: true}
}

func intPtr(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	v := n.Int64
	return &v
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func scanMonitor(row scanner) (store.Monitor, error) {
	var m store.Monitor
	var next, last sql.NullString
	var created, updated string
	err := row.Scan(&m.ID, &m.TeamID, &m.Name, &m.Status, &m.Cron, &m.Timezone, &m.Config, &m.RetentionDays,
		&m.EstimatedCreditsPerMonth, &next, &last, &m.CurrentCheckID, &m.LastCheckSummary, &created, &updated)
	if err != nil {
		return store.Monitor{}, err
	}
	if m.NextRunAt, err = parseNullTime(next); err != nil {
		return store.Monitor{}, err
	}
	if m.LastRunAt, err = parseNullTime(last); err != nil {
		return store.Monitor{}, err
	}
	if m.CreatedAt, err = parseTime(created); err != nil {
		return store.Monitor{}, err
	}
	if m.UpdatedAt, err = parseTime(updated); err != nil {
		return store.Monitor{}, err
	}
	return m, nil
}

func scanCheck(row scanner) (store.MonitorCheck, error) {
	var c store.MonitorCheck
	var sched, started, finished sql.NullString
	var reserved, actual sql.NullInt64
	var created, updated string
	err := row.Scan(&c.ID, &c.MonitorID, &c.TeamID, &c.Status, &c.Trigger, &sched, &started, &finished,
		&c.EstimatedCredits, &reserved, &actual, &c.BillingStatus, &c.Summary, &c.TargetResults, &c.Error,
		&created, &updated)
	if err != nil {
		return store.MonitorCheck{}, err
	}
	for _, f := range []struct {
		dst **time.Time
		src sql.NullString
	}{{&c.ScheduledFor, sched}, {&c.StartedAt, started}, {&c.FinishedAt, finished}} {
		if *f.dst, err = parseNullTime(f.src); err != nil {
			return store.MonitorCheck{}, err
		}
	}
	c.ReservedCredits, c.ActualCredits = intPtr(reserved), intPtr(actual)
	if c.CreatedAt, err = parseTime(created); err != nil {
		return store.MonitorCheck{}, err
	}
	if c.UpdatedAt, err = parseTime(updated); err != nil {
		return store.MonitorCheck{}, err
	}
	return c, nil
}

func scanPage(row scanner) (store.MonitorPage, error) {
	var p store.MonitorPage
	var created string
	err := row.Scan(&p.ID, &p.CheckID, &p.MonitorID, &p.TargetID, &p.URL, &p.Status, &p.PreviousScrapeID,
		&p.CurrentScrapeID, &p.StatusCode, &p.Error, &p.Data, &created)
	if err != nil {
		return store.MonitorPage{}, err
	}
	p.CreatedAt, err = parseTime(created)
	return p, err
}

func collect[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
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
	got, err := scanMonitor(s.write.QueryRowContext(ctx,
		`INSERT INTO monitors (id, team_id, name, status, cron, timezone, config, retention_days,
			estimated_credits_per_month, next_run_at, created_at, updated_at)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11)
		RETURNING `+monitorColumns,
		id, team, m.Name, m.Status, m.Cron, m.Timezone, nonNil(m.Config), m.RetentionDays,
		m.EstimatedCreditsPerMonth, nullTime(m.NextRunAt), formatTime(m.CreatedAt)))
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
	m, err := scanMonitor(s.read.QueryRowContext(ctx,
		`SELECT `+monitorColumns+` FROM monitors WHERE id = ? AND team_id = ? AND status <> 'deleted'`, mid, team))
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
	rows, err := s.read.QueryContext(ctx,
		`SELECT `+monitorColumns+` FROM monitors WHERE team_id = ? AND status <> 'deleted'
		ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`, team, limit, offset)
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
	got, err := scanMonitor(s.write.QueryRowContext(ctx,
		`UPDATE monitors SET name = ?3, status = ?4, cron = ?5, timezone = ?6, config = ?7,
			retention_days = ?8, estimated_credits_per_month = ?9, next_run_at = ?10, updated_at = ?11
		WHERE id = ?1 AND team_id = ?2 AND status <> 'deleted'
		RETURNING `+monitorColumns,
		id, team, m.Name, m.Status, m.Cron, m.Timezone, nonNil(m.Config), m.RetentionDays,
		m.EstimatedCreditsPerMonth, nullTime(m.NextRunAt), formatTime(m.UpdatedAt)))
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
	res, err := s.write.ExecContext(ctx,
		`UPDATE monitors SET status = 'deleted', next_run_at = NULL, updated_at = ?
		WHERE id = ? AND team_id = ? AND status <> 'deleted'`, formatTime(now), mid, team)
	if err != nil {
		return fmt.Errorf("store: delete monitor: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("store: delete monitor: %w", store.ErrNotFound)
	}
	return nil
}

// DueMonitors returns active monitors due at now.
func (s *Store) DueMonitors(ctx context.Context, now time.Time, limit int) ([]store.Monitor, error) {
	rows, err := s.read.QueryContext(ctx,
		`SELECT `+monitorColumns+` FROM monitors WHERE status = 'active' AND next_run_at <= ?
		ORDER BY next_run_at LIMIT ?`, formatTime(now), limit)
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
		var nextS sql.NullString
		err := tx.QueryRowContext(ctx,
			`SELECT status, next_run_at, COALESCE(current_check_id, '') FROM monitors WHERE id = ? AND team_id = ?`,
			mid, team).Scan(&status, &nextS, &current)
		if err != nil {
			return mapErr(err)
		}
		if status != store.MonitorActive {
			return store.ErrMonitorPaused
		}
		now := formatTime(st.Check.CreatedAt)
		c := st.Check
		c.Status = store.CheckQueued
		c.BillingStatus = "not_applicable"
		if st.DueAt != nil {
			if !nextS.Valid || nextS.String != formatTime(*st.DueAt) {
				return store.ErrConflict
			}
			if _, err := tx.ExecContext(ctx, `UPDATE monitors SET next_run_at = ?, last_run_at = ? WHERE id = ?`,
				nullTime(st.NextRunAt), now, mid); err != nil {
				return err
			}
		}
		if current != "" {
			if st.DueAt == nil {
				return &store.CheckRunningError{CheckID: current}
			}
			c.Status = store.CheckSkippedOverlap
			t := st.Check.CreatedAt
			c.FinishedAt = &t
		}
		got, err := scanCheck(tx.QueryRowContext(ctx,
			`INSERT INTO monitor_checks (id, monitor_id, team_id, status, trigger, scheduled_for, finished_at,
				estimated_credits, billing_status, created_at, updated_at)
			VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10)
			RETURNING `+checkColumns,
			cid, mid, team, c.Status, c.Trigger, nullTime(c.ScheduledFor), nullTime(c.FinishedAt),
			c.EstimatedCredits, c.BillingStatus, now))
		if err != nil {
			return mapErr(err)
		}
		if got.Status == store.CheckQueued {
			if _, err := tx.ExecContext(ctx, `UPDATE monitors SET current_check_id = ?, last_run_at = ? WHERE id = ?`,
				cid, now, mid); err != nil {
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
	c, err := scanCheck(s.write.QueryRowContext(ctx,
		`UPDATE monitor_checks SET status = 'running', started_at = COALESCE(started_at, ?2), updated_at = ?2
		WHERE id = ?1 AND status IN ('queued', 'running') RETURNING `+checkColumns, cid, formatTime(now)))
	if errors.Is(err, sql.ErrNoRows) {
		var n int
		if err := s.write.QueryRowContext(ctx, `SELECT count(*) FROM monitor_checks WHERE id = ?`, cid).Scan(&n); err != nil {
			return store.MonitorCheck{}, false, fmt.Errorf("store: claim check: %w", err)
		}
		if n == 0 {
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
	_, err = s.write.ExecContext(ctx,
		`INSERT INTO monitor_pages (id, check_id, monitor_id, target_id, url, status, previous_scrape_id,
			current_scrape_id, status_code, error, data, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (check_id, target_id, url) DO UPDATE SET status = excluded.status,
			previous_scrape_id = excluded.previous_scrape_id, current_scrape_id = excluded.current_scrape_id,
			status_code = excluded.status_code, error = excluded.error, data = excluded.data`,
		id, cid, mid, p.TargetID, p.URL, p.Status, p.PreviousScrapeID, p.CurrentScrapeID, p.StatusCode,
		p.Error, p.Data, formatTime(p.CreatedAt))
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
	p, err := scanPage(s.read.QueryRowContext(ctx,
		`SELECT `+pageColumns+` FROM monitor_pages
		WHERE monitor_id = ? AND target_id = ? AND url = ? AND check_id <> ? AND current_scrape_id <> ''
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
	res, err := s.write.ExecContext(ctx, `UPDATE monitor_checks SET target_results = ? WHERE id = ? AND status = 'running'`, results, cid)
	if err != nil {
		return false, fmt.Errorf("store: set check target results: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// FinishCheck records the end of a running check.
func (s *Store) FinishCheck(ctx context.Context, c store.MonitorCheck) (bool, error) {
	cid, err := parseID(c.ID)
	if err != nil {
		return false, fmt.Errorf("store: finish check: %w", err)
	}
	finished := s.now()
	if c.FinishedAt != nil {
		finished = *c.FinishedAt
	}
	var ok bool
	err = s.Transact(ctx, func(tx DBTX) error {
		var mid string
		err := tx.QueryRowContext(ctx,
			`UPDATE monitor_checks SET status = ?2, finished_at = ?3, summary = ?4, target_results = ?5,
				reserved_credits = ?6, actual_credits = ?7, billing_status = ?8, error = ?9, updated_at = ?3
			WHERE id = ?1 AND status = 'running' RETURNING monitor_id`,
			cid, c.Status, formatTime(finished), c.Summary, c.TargetResults, nullInt(c.ReservedCredits),
			nullInt(c.ActualCredits), c.BillingStatus, c.Error).Scan(&mid)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		ok = true
		_, err = tx.ExecContext(ctx,
			`UPDATE monitors SET current_check_id = CASE WHEN current_check_id = ?2 THEN NULL ELSE current_check_id END,
				last_check_summary = ?3 WHERE id = ?1`, mid, cid, c.Summary)
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
	rows, err := s.read.QueryContext(ctx,
		`SELECT `+checkColumns+` FROM monitor_checks WHERE monitor_id = ?1 AND team_id = ?2
			AND (?3 = '' OR status = ?3)
		ORDER BY created_at DESC, id DESC LIMIT ?4 OFFSET ?5`, mid, team, status, limit, offset)
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
	c, err := scanCheck(s.read.QueryRowContext(ctx,
		`SELECT `+checkColumns+` FROM monitor_checks WHERE id = ? AND monitor_id = ? AND team_id = ?`,
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
	rows, err := s.read.QueryContext(ctx,
		`SELECT `+pageColumns+` FROM monitor_pages WHERE check_id = ?1 AND (?2 = '' OR status = ?2)
		ORDER BY seq LIMIT ?3 OFFSET ?4`, cid, status, limit, skip)
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
	rows, err := s.read.QueryContext(ctx,
		`SELECT id FROM monitor_checks WHERE status = 'queued' AND created_at < ? ORDER BY created_at LIMIT ?`,
		formatTime(before), limit)
	if err != nil {
		return nil, fmt.Errorf("store: queued checks: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: queued checks: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: queued checks: %w", err)
	}
	return ids, nil
}

// StaleRunningChecks lists running checks not updated since before.
func (s *Store) StaleRunningChecks(ctx context.Context, before time.Time, limit int) ([]string, error) {
	rows, err := s.read.QueryContext(ctx,
		`SELECT id FROM monitor_checks WHERE status = 'running' AND updated_at < ? ORDER BY updated_at LIMIT ?`,
		formatTime(before), limit)
	if err != nil {
		return nil, fmt.Errorf("store: stale running checks: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: stale running checks: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: stale running checks: %w", err)
	}
	return ids, nil
}

// DeleteExpiredChecks deletes finished checks past their monitor's
// retention.
func (s *Store) DeleteExpiredChecks(ctx context.Context, now time.Time) (int, error) {
	// Stored times are fixed-width UTC text to the microsecond (see
	// timeFormat), compared as text: the cutoff is now less the monitor's
	// retention in whole days, so SQLite shifts the date and time to the
	// second and the stored layout's fraction of now (microseconds, as
	// Postgres keeps them) is appended unchanged.
	now = now.UTC().Truncate(time.Microsecond)
	stamp := formatTime(now)
	res, err := s.write.ExecContext(ctx,
		`DELETE FROM monitor_checks WHERE finished_at IS NOT NULL AND created_at <
			strftime('%Y-%m-%dT%H:%M:%S', ?1, '-' || (SELECT retention_days FROM monitors m WHERE m.id = monitor_checks.monitor_id) || ' days') || ?2`,
		now.Format("2006-01-02 15:04:05"), stamp[len("2006-01-02T15:04:05"):])
	if err != nil {
		return 0, fmt.Errorf("store: delete expired checks: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
