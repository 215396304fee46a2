// Package auth resolves API keys to teams and their limit settings, with a
// short-lived cache so the store is not consulted on every request.
package auth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/firegate/firegate/internal/apikey"
	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/store"
)

// ErrInvalidKey means the key is missing, malformed, unknown or revoked.
var ErrInvalidKey = errcode.New("auth: invalid api key", errcode.Unauthenticated, "UNAUTHORIZED", "Unauthorized: Invalid token")

// Team is the authenticated caller.
type Team struct {
	ID       string
	Name     string
	APIKeyID string
	// Limits are the team's overrides of the server's default limits.
	Limits store.TeamLimits
	// Unlimited is set when auth is off: no credits, rate or concurrency
	// limits apply and zero data retention is allowed.
	Unlimited bool
}

// KeyStore looks keys and team settings up; store.Store implements it.
type KeyStore interface {
	APIKeyByHash(ctx context.Context, hash []byte) (store.APIKey, store.Team, error)
	TeamLimits(ctx context.Context, teamID string) (store.TeamLimits, error)
}

// Options configures an Authenticator.
type Options struct {
	// Disabled accepts any or no key as one unlimited team (AUTH_MODE=off).
	Disabled bool
	// CacheTTL is how long a resolved key is trusted without asking the
	// store; a revoked key stops working within this time. Default 30s.
	CacheTTL time.Duration
	// MaxCached bounds the cache; default 10000 keys.
	MaxCached int
}

// MaxKeyLen is the longest key accepted; longer ones are malformed.
const MaxKeyLen = 256

// SelfHostedTeamID is the id of the one team every request belongs to when
// auth is off.
const SelfHostedTeamID = "00000000-0000-0000-0000-000000000000"

// Authenticator resolves bearer keys to teams.
type Authenticator struct {
	store KeyStore
	opts  Options
	now   func() time.Time

	mu    sync.Mutex
	cache map[string]cached // by hex hash
}

type cached struct {
	team    Team
	expires time.Time
}

// New returns an Authenticator over s.
func New(s KeyStore, opts Options) *Authenticator {
	if opts.CacheTTL <= 0 {
		opts.CacheTTL = 30 * time.Second
	}
	if opts.MaxCached <= 0 {
		opts.MaxCached = 10000
	}
	return &Authenticator{store: s, opts: opts, now: time.Now, cache: make(map[string]cached)}
}

// Authenticate returns the team owning key, or an error wrapping ErrInvalidKey.
func (a *Authenticator) Authenticate(ctx context.Context, key string) (Team, error) {
	if a.opts.Disabled {
		return Team{ID: SelfHostedTeamID, Name: "self-hosted", Unlimited: true}, nil
	}
	if key == "" || len(key) > MaxKeyLen {
		return Team{}, ErrInvalidKey
	}
	hash := apikey.Hash(key)
	ck := string(hash)
	now := a.now()
	a.mu.Lock()
	c, ok := a.cache[ck]
	a.mu.Unlock()
	if ok && now.Before(c.expires) {
		return c.team, nil
	}
	k, t, err := a.store.APIKeyByHash(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		a.mu.Lock()
		delete(a.cache, ck)
		a.mu.Unlock()
		return Team{}, ErrInvalidKey
	}
	if err != nil {
		return Team{}, fmt.Errorf("auth: look up key: %w", err)
	}
	lim, err := a.store.TeamLimits(ctx, t.ID)
	if err != nil {
		return Team{}, fmt.Errorf("auth: team limits: %w", err)
	}
	team := Team{ID: t.ID, Name: t.Name, APIKeyID: k.ID, Limits: lim}
	a.mu.Lock()
	if len(a.cache) >= a.opts.MaxCached {
		clear(a.cache)
	}
	a.cache[ck] = cached{team: team, expires: now.Add(a.opts.CacheTTL)}
	a.mu.Unlock()
	return team, nil
}
