// Package store owns the durable tables (teams, API keys, ...) and all SQL.
// Two implementations satisfy Store: Postgres (package store/postgres) and the
// embedded SQLite file (package store/sqlite); both pass storetest.Run.
package store

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is returned when a looked-up row does not exist.
var ErrNotFound = errors.New("store: not found")

// ErrConflict is returned when a unique constraint would be violated.
var ErrConflict = errors.New("store: conflict")

// Team owns API keys; every operation is scoped to one team.
type Team struct {
	ID        string // UUID
	Name      string // unique
	CreatedAt time.Time
}

// APIKey is a stored key. The key itself is never stored, only its hash.
type APIKey struct {
	ID        string // UUID
	TeamID    string
	Hash      []byte // SHA-256 of the key
	Prefix    string // first characters of the key, for display
	CreatedAt time.Time
	RevokedAt *time.Time
}

// Store is the durable store. Implementations are safe for concurrent use.
type Store interface {
	// CreateTeam creates a team; ErrConflict if the name exists.
	CreateTeam(ctx context.Context, name string) (Team, error)
	// TeamByName returns the team of that name or ErrNotFound.
	TeamByName(ctx context.Context, name string) (Team, error)
	// TeamByID returns the team or ErrNotFound.
	TeamByID(ctx context.Context, id string) (Team, error)
	// CreateAPIKey stores a key hash for a team; ErrConflict if the hash exists
	// (even revoked), ErrNotFound if the team does not exist.
	CreateAPIKey(ctx context.Context, teamID string, hash []byte, prefix string) (APIKey, error)
	// APIKeyByHash returns the active (not revoked) key with that hash and its
	// team, or ErrNotFound.
	APIKeyByHash(ctx context.Context, hash []byte) (APIKey, Team, error)
	// RevokeAPIKey marks a key revoked; ErrNotFound if unknown. Revoking a
	// revoked key succeeds and keeps the first revocation time.
	RevokeAPIKey(ctx context.Context, id string) error
	// ListAPIKeys lists a team's keys, revoked ones included, newest first;
	// ErrNotFound if the team does not exist.
	ListAPIKeys(ctx context.Context, teamID string) ([]APIKey, error)
	// CountAPIKeys counts active keys of all teams.
	CountAPIKeys(ctx context.Context) (int, error)
	// Ping checks the store is reachable.
	Ping(ctx context.Context) error
	// Close releases the store's resources.
	Close() error
}
