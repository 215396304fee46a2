package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/firegate/firegate/internal/store"
)

const interactColumns = `id, team_id, scrape_id, status, ttl_ms, activity_ttl_ms, stream_web_view, profile_name, save_changes,
	created_at, last_activity, expires_at, idle_at, destroyed_at, end_reason, duration_ms, credits_billed`

// rowScanner is *sql.Row or *sql.Rows.
type rowScanner interface{ Scan(dest ...any) error }

// scanInteract reads one row of interactColumns.
func scanInteract(row rowScanner) (store.InteractSession, error) {
	var (
		s                              store.InteractSession
		scrape, destroyed              sql.NullString
		ttl, idle                      int64
		created, last, expires, idleAt string
	)
	err := row.Scan(&s.ID, &s.TeamID, &scrape, &s.Status, &ttl, &idle, &s.StreamWebView, &s.ProfileName, &s.SaveChanges,
		&created, &last, &expires, &idleAt, &destroyed, &s.EndReason, &s.DurationMS, &s.CreditsBilled)
	if err != nil {
		return s, err
	}
	s.ScrapeID = scrape.String
	s.TTL, s.ActivityTTL = time.Duration(ttl)*time.Millisecond, time.Duration(idle)*time.Millisecond
	for _, f := range []struct {
		raw string
		dst *time.Time
	}{{created, &s.CreatedAt}, {last, &s.LastActivity}, {expires, &s.ExpiresAt}, {idleAt, &s.IdleAt}, {destroyed.String, &s.DestroyedAt}} {
		if f.raw == "" {
			continue
		}
		if *f.dst, err = parseTime(f.raw); err != nil {
			return s, err
		}
	}
	return s, nil
}

// CreateInteractSession inserts an active session.
func (s *Store) CreateInteractSession(ctx context.Context, is store.InteractSession) error {
	id, err := parseID(is.ID)
	if err != nil {
		return fmt.Errorf("store: create interact session: %w", err)
	}
	team, err := parseID(is.TeamID)
	if err != nil {
		return fmt.Errorf("store: create interact session: %w", err)
	}
	var scrape any
	if is.ScrapeID != "" {
		scrape = is.ScrapeID
	}
	_, err = s.write.ExecContext(ctx, `INSERT INTO interact_sessions (id, team_id, scrape_id, status, ttl_ms, activity_ttl_ms, stream_web_view,
		profile_name, save_changes, created_at, last_activity, expires_at, idle_at)
		VALUES (?, ?, ?, 'active', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, team, scrape, is.TTL.Milliseconds(), is.ActivityTTL.Milliseconds(), is.StreamWebView, is.ProfileName, is.SaveChanges,
		formatTime(is.CreatedAt), formatTime(is.LastActivity), formatTime(is.ExpiresAt), formatTime(is.IdleAt))
	if err != nil {
		return fmt.Errorf("store: create interact session: %w", mapErr(err))
	}
	return nil
}

// InteractSession returns the team's session or store.ErrNotFound.
func (s *Store) InteractSession(ctx context.Context, teamID, id string) (store.InteractSession, error) {
	team, err := parseID(teamID)
	if err != nil {
		return store.InteractSession{}, fmt.Errorf("store: interact session: %w", err)
	}
	sid, err := parseID(id)
	if err != nil {
		return store.InteractSession{}, fmt.Errorf("store: interact session: %w", err)
	}
	is, err := scanInteract(s.read.QueryRowContext(ctx, `SELECT `+interactColumns+` FROM interact_sessions WHERE id = ? AND team_id = ?`, sid, team))
	if err != nil {
		return store.InteractSession{}, fmt.Errorf("store: interact session: %w", mapErr(err))
	}
	return is, nil
}

// InteractSessionForScrape returns the session of the team's scrape or
// store.ErrNotFound.
func (s *Store) InteractSessionForScrape(ctx context.Context, teamID, scrapeID string) (store.InteractSession, error) {
	team, err := parseID(teamID)
	if err != nil {
		return store.InteractSession{}, fmt.Errorf("store: interact session of scrape: %w", err)
	}
	is, err := scanInteract(s.read.QueryRowContext(ctx, `SELECT `+interactColumns+` FROM interact_sessions WHERE team_id = ? AND scrape_id = ?`, team, scrapeID))
	if err != nil {
		return store.InteractSession{}, fmt.Errorf("store: interact session of scrape: %w", mapErr(err))
	}
	return is, nil
}

// collectInteract reads every row of rows.
func collectInteract(rows *sql.Rows) ([]store.InteractSession, error) {
	defer rows.Close()
	var out []store.InteractSession
	for rows.Next() {
		is, err := scanInteract(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, is)
	}
	return out, rows.Err()
}

// ListInteractSessions returns the team's sessions, newest first.
func (s *Store) ListInteractSessions(ctx context.Context, teamID, status string, limit int) ([]store.InteractSession, error) {
	team, err := parseID(teamID)
	if err != nil {
		return nil, fmt.Errorf("store: list interact sessions: %w", err)
	}
	rows, err := s.read.QueryContext(ctx, `SELECT `+interactColumns+` FROM interact_sessions
		WHERE team_id = ? AND (? = '' OR status = ?) ORDER BY created_at DESC, id DESC LIMIT ?`, team, status, status, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list interact sessions: %w", err)
	}
	out, err := collectInteract(rows)
	if err != nil {
		return nil, fmt.Errorf("store: list interact sessions: %w", err)
	}
	return out, nil
}

// CountActiveInteractSessions counts the team's active sessions.
func (s *Store) CountActiveInteractSessions(ctx context.Context, teamID string) (int, error) {
	team, err := parseID(teamID)
	if err != nil {
		return 0, fmt.Errorf("store: count interact sessions: %w", err)
	}
	var n int
	if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM interact_sessions WHERE team_id = ? AND status = 'active'`, team).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count interact sessions: %w", err)
	}
	return n, nil
}

// TouchInteractSession records activity on an active session.
func (s *Store) TouchInteractSession(ctx context.Context, id string, at, idleAt time.Time) error {
	sid, err := parseID(id)
	if err != nil {
		return fmt.Errorf("store: touch interact session: %w", err)
	}
	res, err := s.write.ExecContext(ctx, `UPDATE interact_sessions SET last_activity = ?, idle_at = ? WHERE id = ? AND status = 'active'`,
		formatTime(at), formatTime(idleAt), sid)
	if err != nil {
		return fmt.Errorf("store: touch interact session: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("store: touch interact session: %w", store.ErrNotFound)
	}
	return nil
}

// EndInteractSession marks an active session destroyed.
func (s *Store) EndInteractSession(ctx context.Context, id string, end store.InteractEnd) (bool, error) {
	sid, err := parseID(id)
	if err != nil {
		return false, nil
	}
	res, err := s.write.ExecContext(ctx, `UPDATE interact_sessions SET status = 'destroyed', destroyed_at = ?, end_reason = ?, duration_ms = ?, credits_billed = ?
		WHERE id = ? AND status = 'active'`, formatTime(end.At), end.Reason, end.DurationMS, end.CreditsBilled, sid)
	if err != nil {
		return false, fmt.Errorf("store: end interact session: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: end interact session: %w", err)
	}
	return n == 1, nil
}

// ExpiredInteractSessions returns active sessions past their ttl or
// activity ttl at now.
func (s *Store) ExpiredInteractSessions(ctx context.Context, now time.Time, limit int) ([]store.InteractSession, error) {
	at := formatTime(now)
	rows, err := s.read.QueryContext(ctx, `SELECT `+interactColumns+` FROM interact_sessions
		WHERE status = 'active' AND (expires_at <= ? OR idle_at <= ?) ORDER BY expires_at, id LIMIT ?`, at, at, limit)
	if err != nil {
		return nil, fmt.Errorf("store: expired interact sessions: %w", err)
	}
	out, err := collectInteract(rows)
	if err != nil {
		return nil, fmt.Errorf("store: expired interact sessions: %w", err)
	}
	return out, nil
}

// AddInteractPage records a page of a recorded session.
func (s *Store) AddInteractPage(ctx context.Context, p store.InteractPage) error {
	sid, err := parseID(p.SessionID)
	if err != nil {
		return fmt.Errorf("store: add interact page: %w", err)
	}
	if _, err := s.write.ExecContext(ctx, `INSERT INTO interact_pages (session_id, page_no, url, title, started_at) VALUES (?, ?, ?, ?, ?)`,
		sid, p.No, p.URL, p.Title, formatTime(p.StartedAt)); err != nil {
		return fmt.Errorf("store: add interact page: %w", mapErr(err))
	}
	return nil
}

// AddInteractFrame records a snapshot of a recorded page.
func (s *Store) AddInteractFrame(ctx context.Context, f store.InteractFrame) error {
	sid, err := parseID(f.SessionID)
	if err != nil {
		return fmt.Errorf("store: add interact frame: %w", err)
	}
	if _, err := s.write.ExecContext(ctx, `INSERT INTO interact_frames (session_id, page_no, seq, taken_at, jpeg) VALUES (?, ?, ?, ?, ?)`,
		sid, f.PageNo, f.Seq, formatTime(f.At), f.JPEG); err != nil {
		return fmt.Errorf("store: add interact frame: %w", mapErr(err))
	}
	return nil
}

// InteractPages returns a session's recorded pages in order.
func (s *Store) InteractPages(ctx context.Context, sessionID string) ([]store.InteractPage, error) {
	sid, err := parseID(sessionID)
	if err != nil {
		return nil, fmt.Errorf("store: interact pages: %w", err)
	}
	rows, err := s.read.QueryContext(ctx, `SELECT p.page_no, p.url, p.title, p.started_at,
		(SELECT count(*) FROM interact_frames f WHERE f.session_id = p.session_id AND f.page_no = p.page_no)
		FROM interact_pages p WHERE p.session_id = ? ORDER BY p.page_no`, sid)
	if err != nil {
		return nil, fmt.Errorf("store: interact pages: %w", err)
	}
	defer rows.Close()
	var out []store.InteractPage
	for rows.Next() {
		p := store.InteractPage{SessionID: sessionID}
		var started string
		if err := rows.Scan(&p.No, &p.URL, &p.Title, &started, &p.Frames); err != nil {
			return nil, fmt.Errorf("store: interact pages: %w", err)
		}
		if p.StartedAt, err = parseTime(started); err != nil {
			return nil, fmt.Errorf("store: interact pages: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: interact pages: %w", err)
	}
	return out, nil
}

// InteractFrames returns the frames of a recorded page in order.
func (s *Store) InteractFrames(ctx context.Context, sessionID string, pageNo int) ([]store.InteractFrame, error) {
	sid, err := parseID(sessionID)
	if err != nil {
		return nil, fmt.Errorf("store: interact frames: %w", err)
	}
	rows, err := s.read.QueryContext(ctx, `SELECT seq, taken_at, jpeg FROM interact_frames WHERE session_id = ? AND page_no = ? ORDER BY seq`, sid, pageNo)
	if err != nil {
		return nil, fmt.Errorf("store: interact frames: %w", err)
	}
	defer rows.Close()
	var out []store.InteractFrame
	for rows.Next() {
		f := store.InteractFrame{SessionID: sessionID, PageNo: pageNo}
		var at string
		if err := rows.Scan(&f.Seq, &at, &f.JPEG); err != nil {
			return nil, fmt.Errorf("store: interact frames: %w", err)
		}
		if f.At, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("store: interact frames: %w", err)
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: interact frames: %w", err)
	}
	return out, nil
}

// PurgeInteractRecordings deletes the recordings of at most limit
// sessions destroyed before before.
func (s *Store) PurgeInteractRecordings(ctx context.Context, before time.Time, limit int) (int, error) {
	res, err := s.write.ExecContext(ctx, `DELETE FROM interact_pages WHERE session_id IN (
		SELECT s.id FROM interact_sessions s WHERE s.status = 'destroyed' AND s.destroyed_at < ?
		AND EXISTS (SELECT 1 FROM interact_pages p WHERE p.session_id = s.id) LIMIT ?)`, formatTime(before), limit)
	if err != nil {
		return 0, fmt.Errorf("store: purge interact recordings: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: purge interact recordings: %w", err)
	}
	return int(n), nil
}
