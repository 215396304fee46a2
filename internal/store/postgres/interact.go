package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/firegate/firegate/internal/store"
)

const interactColumns = `id, team_id, scrape_id, status, ttl_ms, activity_ttl_ms, stream_web_view, profile_name, save_changes,
	created_at, last_activity, expires_at, idle_at, destroyed_at, end_reason, duration_ms, credits_billed`

// scanInteract reads one row of interactColumns.
func scanInteract(row pgx.Row) (store.InteractSession, error) {
	var (
		s           store.InteractSession
		scrape      *string
		ttl, idle   int64
		destroyedAt *time.Time
	)
	err := row.Scan(&s.ID, &s.TeamID, &scrape, &s.Status, &ttl, &idle, &s.StreamWebView, &s.ProfileName, &s.SaveChanges,
		&s.CreatedAt, &s.LastActivity, &s.ExpiresAt, &s.IdleAt, &destroyedAt, &s.EndReason, &s.DurationMS, &s.CreditsBilled)
	if err != nil {
		return s, err
	}
	if scrape != nil {
		s.ScrapeID = *scrape
	}
	s.TTL, s.ActivityTTL = time.Duration(ttl)*time.Millisecond, time.Duration(idle)*time.Millisecond
	s.CreatedAt, s.LastActivity, s.ExpiresAt, s.IdleAt = s.CreatedAt.UTC(), s.LastActivity.UTC(), s.ExpiresAt.UTC(), s.IdleAt.UTC()
	if destroyedAt != nil {
		s.DestroyedAt = destroyedAt.UTC()
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
	var scrape *string
	if is.ScrapeID != "" {
		scrape = &is.ScrapeID
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO interact_sessions (id, team_id, scrape_id, status, ttl_ms, activity_ttl_ms, stream_web_view,
		profile_name, save_changes, created_at, last_activity, expires_at, idle_at)
		VALUES ($1, $2, $3, 'active', $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		id, team, scrape, is.TTL.Milliseconds(), is.ActivityTTL.Milliseconds(), is.StreamWebView, is.ProfileName, is.SaveChanges,
		is.CreatedAt.UTC(), is.LastActivity.UTC(), is.ExpiresAt.UTC(), is.IdleAt.UTC())
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
	is, err := scanInteract(s.pool.QueryRow(ctx, `SELECT `+interactColumns+` FROM interact_sessions WHERE id = $1 AND team_id = $2`, sid, team))
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
	is, err := scanInteract(s.pool.QueryRow(ctx, `SELECT `+interactColumns+` FROM interact_sessions WHERE team_id = $1 AND scrape_id = $2`, team, scrapeID))
	if err != nil {
		return store.InteractSession{}, fmt.Errorf("store: interact session of scrape: %w", mapErr(err))
	}
	return is, nil
}

// ListInteractSessions returns the team's sessions, newest first.
func (s *Store) ListInteractSessions(ctx context.Context, teamID, status string, limit int) ([]store.InteractSession, error) {
	team, err := parseID(teamID)
	if err != nil {
		return nil, fmt.Errorf("store: list interact sessions: %w", err)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+interactColumns+` FROM interact_sessions
		WHERE team_id = $1 AND ($2 = '' OR status = $2) ORDER BY created_at DESC, id DESC LIMIT $3`, team, status, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list interact sessions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.InteractSession, error) { return scanInteract(r) })
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
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM interact_sessions WHERE team_id = $1 AND status = 'active'`, team).Scan(&n); err != nil {
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
	tag, err := s.pool.Exec(ctx, `UPDATE interact_sessions SET last_activity = $2, idle_at = $3 WHERE id = $1 AND status = 'active'`, sid, at.UTC(), idleAt.UTC())
	if err != nil {
		return fmt.Errorf("store: touch interact session: %w", err)
	}
	if tag.RowsAffected() == 0 {
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
	tag, err := s.pool.Exec(ctx, `UPDATE interact_sessions SET status = 'destroyed', destroyed_at = $2, end_reason = $3, duration_ms = $4, credits_billed = $5
		WHERE id = $1 AND status = 'active'`, sid, end.At.UTC(), end.Reason, end.DurationMS, end.CreditsBilled)
	if err != nil {
		return false, fmt.Errorf("store: end interact session: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// ExpiredInteractSessions returns active sessions past their ttl or
// activity ttl at now.
func (s *Store) ExpiredInteractSessions(ctx context.Context, now time.Time, limit int) ([]store.InteractSession, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+interactColumns+` FROM interact_sessions
		WHERE status = 'active' AND (expires_at <= $1 OR idle_at <= $1) ORDER BY expires_at, id LIMIT $2`, now.UTC(), limit)
	if err != nil {
		return nil, fmt.Errorf("store: expired interact sessions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.InteractSession, error) { return scanInteract(r) })
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
	if _, err := s.pool.Exec(ctx, `INSERT INTO interact_pages (session_id, page_no, url, title, started_at) VALUES ($1, $2, $3, $4, $5)`,
		sid, p.No, p.URL, p.Title, p.StartedAt.UTC()); err != nil {
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
	if _, err := s.pool.Exec(ctx, `INSERT INTO interact_frames (session_id, page_no, seq, taken_at, jpeg) VALUES ($1, $2, $3, $4, $5)`,
		sid, f.PageNo, f.Seq, f.At.UTC(), f.JPEG); err != nil {
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
	rows, err := s.pool.Query(ctx, `SELECT p.page_no, p.url, p.title, p.started_at,
		(SELECT count(*) FROM interact_frames f WHERE f.session_id = p.session_id AND f.page_no = p.page_no)
		FROM interact_pages p WHERE p.session_id = $1 ORDER BY p.page_no`, sid)
	if err != nil {
		return nil, fmt.Errorf("store: interact pages: %w", err)
	}
	defer rows.Close()
	var out []store.InteractPage
	for rows.Next() {
		p := store.InteractPage{SessionID: sessionID}
		if err := rows.Scan(&p.No, &p.URL, &p.Title, &p.StartedAt, &p.Frames); err != nil {
			return nil, fmt.Errorf("store: interact pages: %w", err)
		}
		p.StartedAt = p.StartedAt.UTC()
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
	rows, err := s.pool.Query(ctx, `SELECT seq, taken_at, jpeg FROM interact_frames WHERE session_id = $1 AND page_no = $2 ORDER BY seq`, sid, pageNo)
	if err != nil {
		return nil, fmt.Errorf("store: interact frames: %w", err)
	}
	defer rows.Close()
	var out []store.InteractFrame
	for rows.Next() {
		f := store.InteractFrame{SessionID: sessionID, PageNo: pageNo}
		if err := rows.Scan(&f.Seq, &f.At, &f.JPEG); err != nil {
			return nil, fmt.Errorf("store: interact frames: %w", err)
		}
		f.At = f.At.UTC()
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
	tag, err := s.pool.Exec(ctx, `DELETE FROM interact_pages WHERE session_id IN (
		SELECT s.id FROM interact_sessions s WHERE s.status = 'destroyed' AND s.destroyed_at < $1
		AND EXISTS (SELECT 1 FROM interact_pages p WHERE p.session_id = s.id) LIMIT $2)`, before.UTC(), limit)
	if err != nil {
		return 0, fmt.Errorf("store: purge interact recordings: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
