// Package interact runs live browser sessions for the interact and browser
// routes: each session is one isolated browser context (internal/browser
// Session) owned by one team, with a time to live and an inactivity limit
// enforced by a reaper, a per-team cap, a durable record in the store
// (status, times, credits) and code run against its page in a sandboxed
// JavaScript interpreter (see js.go).
//
// The browser of a session lives in the process that opened it; the
// record is shared. Another process answers ErrElsewhere for it, and any
// process's reaper ends expired records, so a session whose process died
// is ended (and billed) at its ttl at the latest.
package interact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/actions"
	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/browser"
	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/fairshare"
	"github.com/firegate/firegate/internal/store"
)

// Errors of the Manager.
var (
	// ErrNotFound: no session of the team by that id (or scrape).
	ErrNotFound = errcode.New("interact: session not found", errcode.NotFound, "NOT_FOUND",
		"Browser session not found.")
	// ErrDestroyed: the session has ended (ttl, inactivity, DELETE).
	ErrDestroyed = errcode.New("interact: session destroyed", errcode.Gone, "SESSION_DESTROYED",
		"Browser session has been destroyed.")
	// ErrTooMany: the team (or the server) has the most sessions open it
	// may.
	ErrTooMany = errcode.New("interact: too many sessions", errcode.Exhausted,
		"TOO_MANY_SESSIONS", "").WithLead("Too many browser sessions")
	// ErrElsewhere: the session is active but its browser is held by
	// another server process.
	ErrElsewhere = errcode.New("interact: session held by another server process", errcode.Conflict, "SESSION_ON_OTHER_SERVER",
		"Conflict: this browser session is held by another server process; send its requests to that process (sessions are not shared between replicas).")
	// ErrUnavailable: no browser is configured or it failed.
	ErrUnavailable = errcode.New("interact: browser unavailable", errcode.Upstream, "BROWSER_UNAVAILABLE", "")
	// ErrProfileBusy: another session is saving the same profile.
	ErrProfileBusy = errcode.New("interact: profile in use", errcode.Conflict,
		"PROFILE_IN_USE", "").WithLead("The browser profile is in use")
	// ErrReplay: the scrape could not be replayed in the new session.
	ErrReplay = errcode.New("interact: replay failed", errcode.Upstream, "INTERACT_REPLAY_FAILED", "")
	// ErrLanguage: the code's language is not run by this server.
	ErrLanguage = errcode.New("interact: language not supported", errcode.Invalid,
		"INTERACT_LANGUAGE_NOT_SUPPORTED", "")
)

// Browser opens sessions; *browser.Pool implements it.
type Browser interface {
	Available() error
	OpenSession(ctx context.Context, o browser.SessionOptions) (*browser.Session, error)
}

// Charger bills credits; *billing.Ledger implements it.
type Charger interface {
	Charge(ctx context.Context, c store.Charge) (store.ChargeResult, error)
}

// ProfileStore keeps browser profile state per team (as scrape's does).
type ProfileStore interface {
	LoadProfile(ctx context.Context, teamID, name string) ([]byte, error)
	SaveProfile(ctx context.Context, teamID, name string, state []byte) error
}

// ProfileLocker grants one saving session per profile at a time.
type ProfileLocker interface {
	TryLock(ctx context.Context, key string) (release func(), ok bool, err error)
}

// Config configures a Manager.
type Config struct {
	Store   store.InteractStore
	Browser Browser
	// Ledger, nil: sessions are not billed.
	Ledger Charger
	// Profiles and Locker, nil: the profile option answers an error.
	Profiles ProfileStore
	Locker   ProfileLocker
	// MaxPerTeam caps a team's active sessions (INTERACT_MAX_SESSIONS_PER_TEAM);
	// MaxSessions caps the sessions this process holds
	// (INTERACT_MAX_SESSIONS). 0 = defaults.
	MaxPerTeam  int
	MaxSessions int
	// Model drives prompt sessions; nil: a prompt answers ErrNoModel.
	Model Model
	// Runner runs node, python and bash programs in a sandbox
	// (INTERACT_RUNTIMES); nil: node code runs in the JavaScript
	// interpreter, python and bash answer ErrLanguage.
	Runner Runner
	// JSMemory bounds the heap growth of a code run (bytes); 0 =
	// DefaultJSMemory.
	JSMemory int64
	// ReapInterval is how often expired sessions are ended; 0 = 1s.
	ReapInterval time.Duration
	// RecordingTTL is how long the recording of an ended session is kept
	// (JOB_TTL); 0 = DefaultRecordingTTL.
	RecordingTTL time.Duration
	Now          func() time.Time
	Log          *slog.Logger
}

// Defaults of Config.
const (
	DefaultMaxPerTeam   = 5
	DefaultMaxSessions  = 20
	defaultReapInterval = time.Second
	// openTimeout bounds opening a session and replaying a scrape in it.
	openTimeout = 60 * time.Second
	// closeTimeout bounds closing a session's browser and saving its
	// profile.
	closeTimeout = 15 * time.Second
)

// Manager owns the sessions of this process.
type Manager struct {
	cfg Config
	log *slog.Logger
	now func() time.Time

	mu      sync.Mutex
	live    map[string]*live // by session id
	pending map[string]int   // sessions being opened, by team
	opening int              // sessions being opened, in all
	// runners bounds the code runner processes alive at once, shared
	// fairly between teams (runner.go).
	runners *fairshare.Pool
	// purged is when Reap last purged old recordings (m.mu).
	purged time.Time
}

// live is a session whose browser this process holds.
type live struct {
	rec     store.InteractSession
	sess    *browser.Session
	release func() // the profile's saving lock; nil without one
	prompt  bool   // prompt-driven: billed at the prompt rate
	// viewToken and inputToken open the live view (watch; watch and
	// interact); "" when the web view is not streamed.
	viewToken, inputToken string
	// cdpToken opens the session's DevTools connection (cdpUrl); "" when
	// the browser has no DevTools endpoint. cdpConns counts the open
	// connections (m.mu).
	cdpToken string
	cdpConns int
	// recorder records the session (recordSession); nil when it is not.
	recorder *recorder
}

// New returns a Manager; Run reaps its expired sessions.
func New(cfg Config) *Manager {
	if cfg.MaxPerTeam <= 0 {
		cfg.MaxPerTeam = DefaultMaxPerTeam
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.ReapInterval <= 0 {
		cfg.ReapInterval = defaultReapInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RecordingTTL <= 0 {
		cfg.RecordingTTL = DefaultRecordingTTL
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Manager{cfg: cfg, log: cfg.Log, now: cfg.Now, live: map[string]*live{}, pending: map[string]int{},
		runners: newRunners(runtime.NumCPU())}
}

// Profile names persistent browser storage for a session.
type Profile struct {
	Name        string
	SaveChanges bool
}

// Replay is a scrape replayed in a new session.
type Replay struct {
	URL       string
	Headers   map[string]string
	WaitFor   time.Duration
	Actions   []actions.Action
	Mobile    bool
	Languages []string
	Timezone  string
	BlockAds  bool
}

// CreateParams describes a new session.
type CreateParams struct {
	TeamID        string
	ScrapeID      string // the scrape replayed; "" for a standalone session
	TTL           time.Duration
	ActivityTTL   time.Duration
	StreamWebView bool
	// Record keeps the session's pages and snapshots (record.go).
	Record  bool
	Profile *Profile
	Replay  *Replay
}

// Create opens a session and records it. For a scrape, the scrape is
// replayed in it first; a scrape that already has a session gets
// store.ErrConflict (the caller looks that one up).
func (m *Manager) Create(ctx context.Context, p CreateParams) (store.InteractSession, error) {
	if m.cfg.Browser == nil {
		return store.InteractSession{}, fmt.Errorf("%w: no browser is configured", ErrUnavailable)
	}
	if err := m.cfg.Browser.Available(); err != nil {
		return store.InteractSession{}, unavailable("No browser can be started on this server.", err)
	}
	if err := m.reserve(ctx, p.TeamID); err != nil {
		return store.InteractSession{}, err
	}
	defer m.unreserve(p.TeamID)

	l := &live{}
	opts := browser.SessionOptions{Team: p.TeamID}
	if r := p.Replay; r != nil {
		opts.URL, opts.Headers, opts.Mobile, opts.Languages, opts.Timezone, opts.BlockAds = r.URL, r.Headers, r.Mobile, r.Languages, r.Timezone, r.BlockAds
	}
	if p.Profile != nil {
		st, release, err := m.openProfile(ctx, p.TeamID, *p.Profile)
		if err != nil {
			return store.InteractSession{}, err
		}
		opts.State, l.release = st, release
	}
	fail := func(err error) (store.InteractSession, error) {
		if l.sess != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
			_, _ = l.sess.Close(cctx, false)
			cancel()
		}
		if l.release != nil {
			l.release()
		}
		return store.InteractSession{}, err
	}
	octx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	sess, err := m.cfg.Browser.OpenSession(octx, opts)
	if err != nil {
		return fail(unavailable("The browser could not open a session.", err))
	}
	l.sess = sess
	if r := p.Replay; r != nil {
		if _, err := sess.Replay(octx, r.URL, r.WaitFor, r.Actions); err != nil {
			return fail(replayError(err))
		}
	}
	now := m.now().UTC()
	rec := store.InteractSession{
		ID: uuid.NewString(), TeamID: p.TeamID, ScrapeID: p.ScrapeID, Status: store.InteractActive,
		TTL: p.TTL, ActivityTTL: p.ActivityTTL, StreamWebView: p.StreamWebView,
		CreatedAt: now, LastActivity: now, ExpiresAt: now.Add(p.TTL), IdleAt: now.Add(p.ActivityTTL),
	}
	if p.Profile != nil {
		rec.ProfileName, rec.SaveChanges = p.Profile.Name, p.Profile.SaveChanges
	}
	if err := m.cfg.Store.CreateInteractSession(ctx, rec); err != nil {
		return fail(err)
	}
	l.rec = rec
	if rec.StreamWebView {
		l.viewToken, l.inputToken = newToken(), newToken()
	}
	if _, err := sess.DevTools(); err == nil {
		l.cdpToken = newToken()
	}
	if p.Record {
		m.startRecorder(l)
	}
	m.mu.Lock()
	m.live[rec.ID] = l
	m.mu.Unlock()
	m.log.InfoContext(ctx, "interact session opened", "session_id", rec.ID, "team_id", rec.TeamID, "scrape_id", rec.ScrapeID, "ttl", rec.TTL, "activity_ttl", rec.ActivityTTL)
	return rec, nil
}

// reserve counts a session being opened against the caps, or answers
// ErrTooMany.
func (m *Manager) reserve(ctx context.Context, team string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.live)+m.opening >= m.cfg.MaxSessions {
		return fmt.Errorf("%w: this server holds its maximum of %d browser sessions", ErrTooMany, m.cfg.MaxSessions)
	}
	n, err := m.cfg.Store.CountActiveInteractSessions(ctx, team)
	if err != nil {
		return err
	}
	if n+m.pending[team] >= m.cfg.MaxPerTeam {
		return fmt.Errorf("%w: the team has %d active browser sessions, its maximum", ErrTooMany, m.cfg.MaxPerTeam)
	}
	m.pending[team]++
	m.opening++
	return nil
}

func (m *Manager) unreserve(team string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.opening--
	if m.pending[team]--; m.pending[team] <= 0 {
		delete(m.pending, team)
	}
}

// openProfile loads a profile and, with SaveChanges, takes its lock.
func (m *Manager) openProfile(ctx context.Context, team string, p Profile) (*browser.State, func(), error) {
	if m.cfg.Profiles == nil || m.cfg.Locker == nil {
		return nil, nil, fmt.Errorf("%w: browser profiles are not available on this server", ErrUnavailable)
	}
	var release func()
	if p.SaveChanges {
		rel, ok, err := m.cfg.Locker.TryLock(ctx, "profile:"+team+":"+p.Name)
		if err != nil {
			return nil, nil, fmt.Errorf("interact: profile lock: %w", err)
		}
		if !ok {
			return nil, nil, fmt.Errorf("%w: another session is saving profile %q; use saveChanges: false to load it without saving, or retry when that session ends", ErrProfileBusy, p.Name)
		}
		release = rel
	}
	raw, err := m.cfg.Profiles.LoadProfile(ctx, team, p.Name)
	if err != nil {
		if release != nil {
			release()
		}
		return nil, nil, fmt.Errorf("interact: load profile: %w", err)
	}
	if raw == nil {
		return nil, release, nil
	}
	var st browser.State
	if err := json.Unmarshal(raw, &st); err != nil {
		m.log.WarnContext(ctx, "profile state unreadable; starting empty", "profile", p.Name, "err", err)
		return nil, release, nil
	}
	return &st, release, nil
}

// Get returns the team's session record.
func (m *Manager) Get(ctx context.Context, teamID, id string) (store.InteractSession, error) {
	rec, err := m.cfg.Store.InteractSession(ctx, teamID, id)
	if errors.Is(err, store.ErrNotFound) {
		return rec, ErrNotFound
	}
	return rec, err
}

// ForScrape returns the session record of the team's scrape.
func (m *Manager) ForScrape(ctx context.Context, teamID, scrapeID string) (store.InteractSession, error) {
	rec, err := m.cfg.Store.InteractSessionForScrape(ctx, teamID, scrapeID)
	if errors.Is(err, store.ErrNotFound) {
		return rec, ErrNotFound
	}
	return rec, err
}

// List returns the team's sessions, newest first (at most 100).
func (m *Manager) List(ctx context.Context, teamID, status string) ([]store.InteractSession, error) {
	return m.cfg.Store.ListInteractSessions(ctx, teamID, status, 100)
}

// acquire returns the live session of a record, ending it first when it
// has expired by the clock (the reaper may not have come by yet).
func (m *Manager) acquire(ctx context.Context, rec store.InteractSession) (*live, error) {
	if rec.Status != store.InteractActive {
		return nil, ErrDestroyed
	}
	now := m.now()
	if reason := expiry(rec, now); reason != "" {
		m.end(ctx, rec, reason)
		return nil, ErrDestroyed
	}
	m.mu.Lock()
	l := m.live[rec.ID]
	m.mu.Unlock()
	if l == nil {
		// Ended meanwhile, or held by another process.
		if fresh, err := m.cfg.Store.InteractSession(ctx, rec.TeamID, rec.ID); err == nil && fresh.Status != store.InteractActive {
			return nil, ErrDestroyed
		}
		return nil, ErrElsewhere
	}
	select {
	case <-l.sess.Done():
		m.end(ctx, rec, "failed")
		return nil, ErrDestroyed
	default:
	}
	return l, nil
}

// expiry names why rec has expired at now ("" if it has not).
func expiry(rec store.InteractSession, now time.Time) string {
	switch {
	case !now.Before(rec.ExpiresAt):
		return "ttl"
	case !now.Before(rec.IdleAt):
		return "activity"
	}
	return ""
}

// touch records activity on a session.
func (m *Manager) touch(ctx context.Context, l *live) {
	now := m.now().UTC()
	if err := m.cfg.Store.TouchInteractSession(context.WithoutCancel(ctx), l.rec.ID, now, now.Add(l.rec.ActivityTTL)); err != nil && !errors.Is(err, store.ErrNotFound) {
		m.log.WarnContext(ctx, "record interact activity", "session_id", l.rec.ID, "err", err)
	}
}

// Ended is what Delete reports.
type Ended struct {
	DurationMS    int64
	CreditsBilled int64
}

// Delete ends the team's session: ErrNotFound for none, ErrDestroyed if
// it had already ended.
func (m *Manager) Delete(ctx context.Context, teamID, id string) (Ended, error) {
	rec, err := m.Get(ctx, teamID, id)
	if err != nil {
		return Ended{}, err
	}
	return m.deleteRecord(ctx, rec)
}

// DeleteForScrape ends the session of the team's scrape.
func (m *Manager) DeleteForScrape(ctx context.Context, teamID, scrapeID string) (Ended, error) {
	rec, err := m.ForScrape(ctx, teamID, scrapeID)
	if err != nil {
		return Ended{}, err
	}
	return m.deleteRecord(ctx, rec)
}

func (m *Manager) deleteRecord(ctx context.Context, rec store.InteractSession) (Ended, error) {
	if rec.Status != store.InteractActive {
		return Ended{}, ErrDestroyed
	}
	reason := expiry(rec, m.now())
	if reason == "" {
		reason = "deleted"
	}
	end, ok := m.end(ctx, rec, reason)
	if !ok {
		return Ended{}, ErrDestroyed
	}
	if reason != "deleted" {
		return Ended{}, ErrDestroyed
	}
	return end, nil
}

// end marks the record destroyed, bills it, and closes the browser when
// this process holds it (saving the profile). ok is false when another
// ender came first.
func (m *Manager) end(ctx context.Context, rec store.InteractSession, reason string) (Ended, bool) {
	ctx = context.WithoutCancel(ctx)
	now := m.now().UTC()
	if reason == "ttl" && now.After(rec.ExpiresAt) {
		now = rec.ExpiresAt // billed to the ttl, not to when the reaper came by
	}
	m.mu.Lock()
	l := m.live[rec.ID]
	delete(m.live, rec.ID)
	m.mu.Unlock()
	dur := max(now.Sub(rec.CreatedAt), 0)
	prompt := l != nil && l.prompt
	credits := billing.InteractCost(dur, prompt)
	ok, err := m.cfg.Store.EndInteractSession(ctx, rec.ID, store.InteractEnd{At: now, Reason: reason, DurationMS: dur.Milliseconds(), CreditsBilled: credits})
	if err != nil {
		m.log.ErrorContext(ctx, "end interact session", "session_id", rec.ID, "err", err)
	}
	if l != nil {
		m.closeLive(ctx, l)
	}
	if !ok {
		return Ended{}, false
	}
	if m.cfg.Ledger != nil && credits > 0 {
		if _, err := m.cfg.Ledger.Charge(ctx, store.Charge{TeamID: rec.TeamID, Credits: credits, Kind: "interact", IdempotencyKey: "interact:" + rec.ID, Clamp: true}); err != nil {
			m.log.ErrorContext(ctx, "charge interact session", "session_id", rec.ID, "credits", credits, "err", err)
		}
	}
	m.log.InfoContext(ctx, "interact session ended", "session_id", rec.ID, "team_id", rec.TeamID, "reason", reason, "duration_ms", dur.Milliseconds(), "credits", credits)
	return Ended{DurationMS: dur.Milliseconds(), CreditsBilled: credits}, true
}

// closeLive closes a held browser, saving its profile when asked.
func (m *Manager) closeLive(ctx context.Context, l *live) {
	cctx, cancel := context.WithTimeout(ctx, closeTimeout)
	defer cancel()
	save := l.release != nil && m.cfg.Profiles != nil
	st, err := l.sess.Close(cctx, save)
	if err != nil && !errors.Is(err, browser.ErrSessionClosed) {
		m.log.WarnContext(ctx, "close interact session", "session_id", l.rec.ID, "err", err)
	}
	if save && st != nil {
		if b, err := json.Marshal(st); err == nil {
			if err := m.cfg.Profiles.SaveProfile(cctx, l.rec.TeamID, l.rec.ProfileName, b); err != nil {
				m.log.WarnContext(ctx, "save interact profile", "session_id", l.rec.ID, "profile", l.rec.ProfileName, "err", err)
			}
		}
	}
	if l.release != nil {
		l.release()
	}
}

// Run ends expired sessions every ReapInterval until ctx ends, then ends
// every session this process holds ("shutdown").
func (m *Manager) Run(ctx context.Context) {
	t := time.NewTicker(m.cfg.ReapInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			m.Shutdown(context.WithoutCancel(ctx))
			return
		case <-t.C:
			m.Reap(ctx)
		}
	}
}

// Reap ends the sessions expired now (of any process: a dead process's
// records too), and those this process holds whose browser has gone or
// whose record another process ended.
func (m *Manager) Reap(ctx context.Context) {
	now := m.now()
	for {
		recs, err := m.cfg.Store.ExpiredInteractSessions(ctx, now, 100)
		if err != nil {
			if ctx.Err() == nil {
				m.log.WarnContext(ctx, "list expired interact sessions", "err", err)
			}
			return
		}
		for _, rec := range recs {
			m.end(ctx, rec, expiry(rec, now))
		}
		if len(recs) < 100 {
			break
		}
	}
	m.purgeRecordings(ctx, now)
	m.mu.Lock()
	held := make([]*live, 0, len(m.live))
	for _, l := range m.live {
		held = append(held, l)
	}
	m.mu.Unlock()
	for _, l := range held {
		select {
		case <-l.sess.Done():
			m.end(ctx, l.rec, "failed")
			continue
		default:
		}
		rec, err := m.cfg.Store.InteractSession(ctx, l.rec.TeamID, l.rec.ID)
		if err == nil && rec.Status != store.InteractActive {
			m.mu.Lock()
			delete(m.live, rec.ID)
			m.mu.Unlock()
			m.closeLive(ctx, l)
		}
	}
}

// Shutdown ends every session this process holds.
func (m *Manager) Shutdown(ctx context.Context) {
	m.mu.Lock()
	held := make([]*live, 0, len(m.live))
	for _, l := range m.live {
		held = append(held, l)
	}
	m.mu.Unlock()
	for _, l := range held {
		m.end(ctx, l.rec, "shutdown")
	}
}

// Held reports how many sessions this process holds.
func (m *Manager) Held() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.live)
}
