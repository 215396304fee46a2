package cache

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// ResilientOptions tunes a Resilient cache. The zero value uses the defaults.
type ResilientOptions struct {
	// OpTimeout bounds each call to the backend; default 300 ms.
	OpTimeout time.Duration
	// Backoff is how long the backend is skipped after a failure before one
	// call probes it again; it doubles after each failed probe up to
	// MaxBackoff. Defaults 1 s and 30 s.
	Backoff    time.Duration
	MaxBackoff time.Duration
}

// Resilient wraps a Cache whose backend may go away (Redis): a failing Get is
// a miss and a failing Set is dropped, so callers work on without a cache.
// After a failure a circuit breaker opens: calls skip the backend entirely
// (no connection attempt, no timeout paid) until the backoff has passed, then
// a single call probes the backend while the others keep skipping. It logs
// "cache unavailable" once when an outage starts and "cache recovered" when
// a probe succeeds. It is safe for concurrent use.
type Resilient struct {
	next Cache
	log  *slog.Logger
	opts ResilientOptions
	now  func() time.Time

	mu      sync.Mutex
	down    bool          // an outage is in progress
	until   time.Time     // while down, skip the backend before this time
	backoff time.Duration // current backoff while down
	probing bool          // one call is probing the backend
}

var _ Cache = (*Resilient)(nil)

// NewResilient wraps next.
func NewResilient(next Cache, log *slog.Logger, opts ResilientOptions) *Resilient {
	if opts.OpTimeout <= 0 {
		opts.OpTimeout = 300 * time.Millisecond
	}
	if opts.Backoff <= 0 {
		opts.Backoff = time.Second
	}
	if opts.MaxBackoff < opts.Backoff {
		opts.MaxBackoff = max(30*time.Second, opts.Backoff)
	}
	return &Resilient{next: next, log: log, opts: opts, now: time.Now}
}

// Healthy reports whether the backend is believed reachable (no outage in
// progress).
func (r *Resilient) Healthy() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.down
}

// Ping checks the backend directly, past the breaker, when it has a Ping
// method (Redis does); otherwise it returns nil.
func (r *Resilient) Ping(ctx context.Context) error {
	p, ok := r.next.(interface{ Ping(context.Context) error })
	if !ok {
		return nil
	}
	return p.Ping(ctx)
}

// Get returns the backend's answer, or ErrMiss when the backend fails or is
// being skipped. A canceled ctx is returned as is.
func (r *Resilient) Get(ctx context.Context, key string) (Entry, error) {
	probe, ok := r.enter()
	if !ok {
		return Entry{}, ErrMiss
	}
	opCtx, cancel := context.WithTimeout(ctx, r.opts.OpTimeout)
	e, err := r.next.Get(opCtx, key)
	cancel()
	if err == nil || errors.Is(err, ErrMiss) {
		r.succeeded(ctx, probe)
		return e, err
	}
	if ctx.Err() != nil {
		r.abandoned(probe)
		return Entry{}, err
	}
	r.failed(ctx, probe, err)
	return Entry{}, ErrMiss
}

// Set stores through the backend; when the backend fails or is being skipped
// the value is dropped and Set returns nil. A canceled ctx is returned.
func (r *Resilient) Set(ctx context.Context, key string, e Entry, ttl time.Duration) error {
	probe, ok := r.enter()
	if !ok {
		return nil
	}
	opCtx, cancel := context.WithTimeout(ctx, r.opts.OpTimeout)
	err := r.next.Set(opCtx, key, e, ttl)
	cancel()
	if err == nil {
		r.succeeded(ctx, probe)
		return nil
	}
	if ctx.Err() != nil {
		r.abandoned(probe)
		return err
	}
	r.failed(ctx, probe, err)
	return nil
}

// enter decides whether a call may use the backend. While down it lets one
// call through as a probe once the backoff has passed.
func (r *Resilient) enter() (probe, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.down {
		return false, true
	}
	if r.probing || r.now().Before(r.until) {
		return false, false
	}
	r.probing = true
	return true, true
}

func (r *Resilient) succeeded(ctx context.Context, probe bool) {
	r.mu.Lock()
	if probe {
		r.probing = false
	}
	recovered := r.down
	r.down = false
	r.backoff = 0
	r.mu.Unlock()
	if recovered {
		r.log.InfoContext(ctx, "cache recovered")
	}
}

func (r *Resilient) failed(ctx context.Context, probe bool, err error) {
	r.mu.Lock()
	started := !r.down
	switch {
	case started:
		r.down = true
		r.backoff = r.opts.Backoff
	case probe:
		r.backoff = min(2*r.backoff, r.opts.MaxBackoff)
	}
	if probe {
		r.probing = false
	}
	// A call that entered before the outage began and fails now does not
	// extend the skip window set by the first failure.
	if started || probe {
		r.until = r.now().Add(r.backoff)
	}
	r.mu.Unlock()
	if started {
		r.log.WarnContext(ctx, "cache unavailable", "error", err)
	}
}

// abandoned releases a probe whose caller gave up; its outcome says nothing
// about the backend.
func (r *Resilient) abandoned(probe bool) {
	if !probe {
		return
	}
	r.mu.Lock()
	r.probing = false
	r.mu.Unlock()
}
