// Package cache stores scrape results by key: one Cache interface with a Redis
// implementation (shared by replicas), a bounded in-memory LRU (the embedded
// default), a Resilient wrapper that bypasses an unreachable backend, and the
// pure age rules of the API (maxAge, minAge, lockdown).
//
// The embedded default keeps entries in process memory, bounded by bytes: it
// is lost on restart, which a cache may be, and it costs no disk I/O.
package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"
)

// ErrMiss is returned by Get when the key has no (live, readable) entry.
var ErrMiss = errors.New("cache: miss")

// Entry is one cached value and the time it was made. Values are opaque
// bytes; the caller encodes and decodes them.
type Entry struct {
	Value     []byte
	CreatedAt time.Time
}

// Cache is a key-value store with expiry. Implementations are safe for
// concurrent use; a Set replaces the whole entry atomically, so a Get never
// sees a mix of two concurrent Sets.
type Cache interface {
	// Get returns the entry of key, or an error wrapping ErrMiss when there is
	// none. The returned Value belongs to the caller.
	Get(ctx context.Context, key string) (Entry, error)
	// Set stores e under key for ttl; ttl <= 0 means no expiry. The cache
	// keeps its own copy of e.Value.
	Set(ctx context.Context, key string, e Entry, ttl time.Duration) error
}

// Key returns a fixed-length cache key (64 hex digits, the SHA-256) of a
// canonical description of a request: the caller builds canonical from the
// normalized URL and every option that changes the result.
func Key(canonical string) string {
	sum := sha256.Sum256([]byte(canonical))
	return hex.EncodeToString(sum[:])
}
