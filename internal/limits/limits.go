// Package limits enforces per-team limits: a concurrency limit that queues
// work (first come, first served) until a slot frees or the caller's context
// ends, and a per-minute rate limit. Redis shares both across server
// replicas; Local keeps them in process memory for a single node (and is the
// Redis limiter's fallback while Redis is unreachable).
package limits

import (
	"context"
	"time"

	"github.com/firegate/firegate/internal/errcode"
)

// ErrConcurrencyTimeout is returned by Acquire when the context ends while
// the caller is still queued for a slot.
var ErrConcurrencyTimeout = errcode.New("limits: concurrency limit reached", errcode.Exhausted, "CONCURRENCY_LIMIT_REACHED",
	"Concurrency limit reached")

// Window is the rate limit window.
const Window = time.Minute

// Limiter is implemented by Redis and Local.
type Limiter interface {
	// Acquire takes one of the team's limit concurrency slots, queueing
	// behind earlier callers while all are taken. It returns the release
	// function (idempotent; must be called when the work ends) and how long
	// the call queued: waited > 0 exactly when it had to wait. limit <= 0
	// means unlimited. When ctx ends while queued the error wraps
	// ErrConcurrencyTimeout and ctx.Err().
	Acquire(ctx context.Context, teamID string, limit int) (release func(), waited time.Duration, err error)
	// InUse returns how many of the team's slots are held.
	InUse(ctx context.Context, teamID string) (int, error)
	// Waiting returns how many callers are queued for the team's slots.
	Waiting(ctx context.Context, teamID string) (int, error)
	// Allow counts one request of the team against its perMinute limit for
	// class (a route group such as "scrape" or "crawl"; each class has its
	// own counter). A rejected request is not counted. perMinute <= 0 means
	// unlimited.
	Allow(ctx context.Context, teamID, class string, perMinute int) (Decision, error)
}

// Decision is the outcome of Allow.
type Decision struct {
	Allowed bool
	// Limit is the perMinute limit applied.
	Limit int
	// Consumed counts the requests of the current window, this one
	// included when allowed; Remaining is Limit - Consumed.
	Consumed  int
	Remaining int
	// RetryAfter, when not allowed, is how long until the window resets.
	RetryAfter time.Duration
	// ResetAt is when the current window ends.
	ResetAt time.Time
}

// decision builds the Decision of a window holding consumed requests that
// resets in resetIn.
func decision(allowed bool, limit, consumed int, resetIn time.Duration, now time.Time) Decision {
	d := Decision{
		Allowed:   allowed,
		Limit:     limit,
		Consumed:  consumed,
		Remaining: max(limit-consumed, 0),
		ResetAt:   now.Add(resetIn),
	}
	if !allowed {
		d.RetryAfter = resetIn
	}
	return d
}
