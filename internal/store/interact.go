package store

import (
	"context"
	"time"
)

// Interact session statuses.
const (
	InteractActive    = "active"
	InteractDestroyed = "destroyed"
)

// InteractSession is the durable record of a live browser session (POST
// /v2/interact, /v2/browser or a scrape's interact): who owns it, its
// limits, and, once destroyed, why, how long it lasted and what it cost.
// The browser itself lives in one server process; the record outlives it.
type InteractSession struct {
	ID     string // UUID
	TeamID string
	// ScrapeID is the scrape the session replays; "" for a standalone
	// session. A scrape has at most one session, ever.
	ScrapeID      string
	Status        string // InteractActive or InteractDestroyed
	TTL           time.Duration
	ActivityTTL   time.Duration
	StreamWebView bool
	ProfileName   string // "" for none
	SaveChanges   bool
	CreatedAt     time.Time
	LastActivity  time.Time
	// ExpiresAt is CreatedAt+TTL; IdleAt is LastActivity+ActivityTTL. The
	// session ends at the earlier of the two.
	ExpiresAt time.Time
	IdleAt    time.Time
	// Set when destroyed.
	DestroyedAt   time.Time
	EndReason     string
	DurationMS    int64
	CreditsBilled int64
}

// InteractEnd is how a session ended.
type InteractEnd struct {
	At            time.Time
	Reason        string // deleted, ttl, activity, failed, shutdown
	DurationMS    int64
	CreditsBilled int64
}

// InteractStore keeps interact session records.
type InteractStore interface {
	// CreateInteractSession inserts an active session; ErrConflict if the
	// id is taken or the scrape already has a session. The team need not
	// have a row (auth off).
	CreateInteractSession(ctx context.Context, s InteractSession) error
	// InteractSession returns the team's session, or ErrNotFound (also
	// for another team's session).
	InteractSession(ctx context.Context, teamID, id string) (InteractSession, error)
	// InteractSessionForScrape returns the session of the team's scrape,
	// or ErrNotFound.
	InteractSessionForScrape(ctx context.Context, teamID, scrapeID string) (InteractSession, error)
	// ListInteractSessions returns the team's sessions, newest first, at
	// most limit; status "" means all.
	ListInteractSessions(ctx context.Context, teamID, status string, limit int) ([]InteractSession, error)
	// CountActiveInteractSessions counts the team's active sessions.
	CountActiveInteractSessions(ctx context.Context, teamID string) (int, error)
	// TouchInteractSession records activity on an active session: its
	// LastActivity and IdleAt. ErrNotFound if it is not active.
	TouchInteractSession(ctx context.Context, id string, at, idleAt time.Time) error
	// EndInteractSession marks an active session destroyed, reporting
	// whether it did (false: already destroyed or unknown), so that the
	// first of concurrent enders alone bills it.
	EndInteractSession(ctx context.Context, id string, end InteractEnd) (bool, error)
	// ExpiredInteractSessions returns at most limit active sessions whose
	// ExpiresAt or IdleAt is not after now, of every team.
	ExpiredInteractSessions(ctx context.Context, now time.Time, limit int) ([]InteractSession, error)

	// AddInteractPage records a page of a recorded session; ErrConflict
	// if its number is taken, ErrNotFound for an unknown session.
	AddInteractPage(ctx context.Context, p InteractPage) error
	// AddInteractFrame records a snapshot of a recorded page; ErrConflict
	// if its number is taken, ErrNotFound for an unknown page.
	AddInteractFrame(ctx context.Context, f InteractFrame) error
	// InteractPages returns a session's recorded pages in order, with
	// their frame counts.
	InteractPages(ctx context.Context, sessionID string) ([]InteractPage, error)
	// InteractFrames returns the frames of a recorded page in order.
	InteractFrames(ctx context.Context, sessionID string, pageNo int) ([]InteractFrame, error)
	// PurgeInteractRecordings deletes the recordings (pages and frames)
	// of at most limit sessions destroyed before before, of every team,
	// and reports how many pages it deleted (0: none was left).
	PurgeInteractRecordings(ctx context.Context, before time.Time, limit int) (int, error)
}

// InteractPage is a page a recorded session showed: a top-level document
// of its first page, numbered from 1 in the order they were shown. Pages
// and frames go with their session.
type InteractPage struct {
	SessionID string
	No        int
	URL       string
	Title     string
	StartedAt time.Time
	// Frames counts the page's frames (read only).
	Frames int
}

// InteractFrame is a JPEG snapshot of a recorded page, numbered from 1.
type InteractFrame struct {
	SessionID string
	PageNo    int
	Seq       int
	At        time.Time
	JPEG      []byte
}
