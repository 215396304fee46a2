package cache

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
)

// Stored entry layout: one format byte, the creation time as big-endian Unix
// nanoseconds, then the value. One Redis string per entry, written with one
// SET, so concurrent writers replace each other whole.
const (
	formatV1   byte = 1
	headerSize      = 1 + 8
)

// Redis is a Cache on a Redis server, shared by every replica using the same
// server and prefix. It reports connection failures as errors; wrap it in a
// Resilient to bypass an unreachable server.
type Redis struct {
	client *redis.Client
	prefix string
	log    *slog.Logger
}

var _ Cache = (*Redis)(nil)

// NewRedis returns a cache storing entries under prefix+key in client's
// database. The client is owned by the caller, who closes it.
func NewRedis(client *redis.Client, prefix string, log *slog.Logger) *Redis {
	return &Redis{client: client, prefix: prefix, log: log}
}

// RedisOptions parses a redis:// URL into client options suited to a cache on
// the request path: context deadlines are honoured, dials time out after a
// second and failed commands are not retried, so that an outage costs a
// request little before Resilient opens its breaker.
func RedisOptions(url string) (*redis.Options, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("cache: parse redis url: %w", err)
	}
	opts.ContextTimeoutEnabled = true
	opts.DialTimeout = time.Second
	opts.DialerRetries = 1
	opts.MaxRetries = -1
	return opts, nil
}

// Ping checks that the Redis server answers, for readiness probes.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("cache: ping redis: %w", err)
	}
	return nil
}

// Get returns the entry of key, or ErrMiss when absent. An entry this binary
// cannot decode is logged and reported as a miss.
func (r *Redis) Get(ctx context.Context, key string) (Entry, error) {
	b, err := r.client.Get(ctx, r.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return Entry{}, ErrMiss
	}
	if err != nil {
		return Entry{}, fmt.Errorf("cache: redis get: %w", err)
	}
	e, err := decode(b)
	if err != nil {
		r.log.WarnContext(ctx, "cache entry unreadable", "error", err)
		return Entry{}, fmt.Errorf("cache: redis get: %w: %w", ErrMiss, err)
	}
	return e, nil
}

// Set stores e under key for ttl (ttl <= 0: no expiry).
func (r *Redis) Set(ctx context.Context, key string, e Entry, ttl time.Duration) error {
	if ttl < 0 {
		ttl = 0
	}
	if err := r.client.Set(ctx, r.prefix+key, encode(e), ttl).Err(); err != nil {
		return fmt.Errorf("cache: redis set: %w", err)
	}
	return nil
}

func encode(e Entry) []byte {
	b := make([]byte, headerSize+len(e.Value))
	b[0] = formatV1
	var nanos int64
	if !e.CreatedAt.IsZero() {
		nanos = e.CreatedAt.UnixNano()
	}
	binary.BigEndian.PutUint64(b[1:headerSize], uint64(nanos)) //nolint:gosec // round-trips through int64
	copy(b[headerSize:], e.Value)
	return b
}

func decode(b []byte) (Entry, error) {
	if len(b) < headerSize || b[0] != formatV1 {
		return Entry{}, fmt.Errorf("unknown entry format (%d bytes)", len(b))
	}
	nanos := int64(binary.BigEndian.Uint64(b[1:headerSize])) //nolint:gosec // written from an int64
	var created time.Time
	if nanos != 0 {
		created = time.Unix(0, nanos).UTC()
	}
	return Entry{Value: b[headerSize:], CreatedAt: created}, nil
}
