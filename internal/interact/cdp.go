package interact

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/firegate/firegate/internal/errcode"
)

// DevTools connections (cdpUrl).
//
// A session held by this process with a DevTools endpoint (the pool's
// Options.DevTools) has a random token; GET /v2/interact/{id}/cdp?token=
// upgrades to a WebSocket that speaks the Chrome DevTools protocol to the
// session's browser context only (see cdpproxy.go for what is refused and
// rewritten), so that Playwright's connectOverCDP and Puppeteer's connect
// work on it and see the session's context as their default one. Each
// client gets a Chrome connection of its own; a session takes at most
// MaxCDPConns at once; every command refreshes the session's activityTtl
// (at most every cdpTouchEvery); the connection closes when the session
// ends.
//
// In-process callers (the code runners of internal/sandbox) use
// CDPHandler, which serves the same confined connection for a session of
// a team without a token: they bridge it to their sandbox themselves.

// ErrCDPBusy: the session has the most DevTools connections it may.
var ErrCDPBusy = errcode.New("interact: the session has the most DevTools connections it may", errcode.Exhausted,
	"CDP_BUSY", "")

// MaxCDPConns caps the DevTools connections open at once per session.
const MaxCDPConns = 3

// cdpTouchEvery is how often activity on a DevTools connection is written
// to the session's record.
const cdpTouchEvery = 5 * time.Second

// cdpDialTimeout bounds connecting to Chrome for a client.
const cdpDialTimeout = 10 * time.Second

// CDPToken returns the DevTools token of a session this process holds;
// ok is false when it has none (no DevTools endpoint, ended, elsewhere).
func (m *Manager) CDPToken(id string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.live[id]
	if l == nil || l.cdpToken == "" {
		return "", false
	}
	return l.cdpToken, true
}

// ServeCDP serves GET .../{id}/cdp?token=: it answers ErrNotFound (unknown
// session, wrong token, ended, held elsewhere), ErrCDPBusy or
// ErrUnavailable before upgrading the request, and nil once it has served
// the connection to its end.
func (m *Manager) ServeCDP(w http.ResponseWriter, r *http.Request, id, token string) error {
	m.mu.Lock()
	l := m.live[id]
	m.mu.Unlock()
	if l == nil || l.cdpToken == "" || token == "" || subtle.ConstantTimeCompare([]byte(token), []byte(l.cdpToken)) != 1 {
		return ErrNotFound
	}
	return m.serveCDP(w, r, l)
}

// Answers of CDPHandler.
const (
	cdpNotFound = "Browser session not found." // as the API says it
	cdpBusy     = "The session has the most DevTools connections it may (%d)."
)

// CDPHandler returns a handler that serves a DevTools connection confined
// to session id of teamID, as cdpUrl does, without a token: for code this
// process runs on the session's behalf (a sandboxed runner bridged to a
// listener of its own). A request for a session that is not the team's,
// has ended or is held elsewhere answers 404; over the cap, 429.
func (m *Manager) CDPHandler(teamID, id string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		l := m.live[id]
		m.mu.Unlock()
		// The texts are the program's, written for it: no package
		// prefixes, no causes (serveCDP logs those).
		if l == nil || l.rec.TeamID != teamID {
			http.Error(w, cdpNotFound, http.StatusNotFound)
			return
		}
		var ue *errcode.Failure
		switch err := m.serveCDP(w, r, l); {
		case errors.Is(err, ErrCDPBusy):
			http.Error(w, fmt.Sprintf(cdpBusy, MaxCDPConns), http.StatusTooManyRequests)
		case errors.As(err, &ue):
			http.Error(w, ue.Msg, http.StatusBadGateway)
		case err != nil:
			http.Error(w, cdpNotFound, http.StatusNotFound)
		}
	})
}

// serveCDP connects to Chrome, upgrades the request and proxies until
// either side leaves or the session ends.
func (m *Manager) serveCDP(w http.ResponseWriter, r *http.Request, l *live) error {
	dt, err := l.sess.DevTools()
	if err != nil {
		return ErrNotFound
	}
	m.mu.Lock()
	if m.live[l.rec.ID] != l {
		m.mu.Unlock()
		return ErrNotFound
	}
	if l.cdpConns >= MaxCDPConns {
		m.mu.Unlock()
		return fmt.Errorf("%w (%d)", ErrCDPBusy, MaxCDPConns)
	}
	l.cdpConns++
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		l.cdpConns--
		m.mu.Unlock()
	}()

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-l.sess.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	dctx, dcancel := context.WithTimeout(ctx, cdpDialTimeout)
	up, _, err := websocket.Dial(dctx, dt.URL, nil)
	dcancel()
	if err != nil {
		m.log.WarnContext(ctx, "connect to chrome for a DevTools client", "session_id", l.rec.ID, "err", err)
		return unavailable("The session's browser could not be reached over DevTools.", err)
	}
	defer up.CloseNow()
	client, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return nil // Accept has answered the request
	}
	defer client.CloseNow()

	var mu sync.Mutex
	var last time.Time
	touch := func() {
		mu.Lock()
		now := m.now()
		due := now.Sub(last) >= cdpTouchEvery
		if due {
			last = now
		}
		mu.Unlock()
		if due {
			m.touch(ctx, l)
			l.kickRecorder()
		}
	}
	m.log.InfoContext(ctx, "devtools client connected", "session_id", l.rec.ID, "team_id", l.rec.TeamID)
	err = runCDPProxy(ctx, client, up, dt, touch, m.log)
	reason := "done"
	ended := false
	select {
	case <-l.sess.Done():
		ended = true
	default:
	}
	switch {
	case ended:
		client.Close(websocket.StatusGoingAway, "the browser session has ended")
		reason = "session ended"
	case err != nil && ctx.Err() == nil:
		client.Close(websocket.StatusPolicyViolation, truncate(err.Error(), 120))
		reason = err.Error()
	}
	m.log.InfoContext(ctx, "devtools client disconnected", "session_id", l.rec.ID, "reason", reason)
	return nil
}

// truncate shortens s to at most n bytes (a WebSocket close reason is
// limited to 123).
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
