package interact

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"

	"github.com/firegate/firegate/internal/browser"
)

// Live view.
//
// A session opened with streamWebView has two random tokens, held by the
// process that holds its browser: one to watch its page (liveViewUrl), one
// to watch it and send clicks and keys (interactiveLiveViewUrl). The
// tokens are the only credential of the live routes, which a browser opens
// without an API key.

// newToken returns 32 random bytes in hex.
func newToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// LiveTokens returns the view and the interactive token of a session this
// process holds with its web view streamed; ok is false otherwise.
func (m *Manager) LiveTokens(id string) (view, interactive string, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.live[id]
	if l == nil || l.viewToken == "" {
		return "", "", false
	}
	return l.viewToken, l.inputToken, true
}

// LiveView is a session opened by a live-view token.
type LiveView struct {
	Session *browser.Session
	// Interactive: the token allows clicks and keys.
	Interactive bool
	touch       func(context.Context)
}

// Touch records activity (a click or a key) on the session.
func (v LiveView) Touch(ctx context.Context) { v.touch(ctx) }

// Live returns the session whose live-view token is token, or ErrNotFound
// (unknown session, wrong token, not streamed, not held here).
func (m *Manager) Live(id, token string) (LiveView, error) {
	m.mu.Lock()
	l := m.live[id]
	m.mu.Unlock()
	if l == nil || l.viewToken == "" || token == "" {
		return LiveView{}, ErrNotFound
	}
	v := LiveView{Session: l.sess, touch: func(ctx context.Context) { m.touch(ctx, l); l.kickRecorder() }}
	switch {
	case subtle.ConstantTimeCompare([]byte(token), []byte(l.inputToken)) == 1:
		v.Interactive = true
	case subtle.ConstantTimeCompare([]byte(token), []byte(l.viewToken)) == 1:
	default:
		return LiveView{}, ErrNotFound
	}
	return v, nil
}
