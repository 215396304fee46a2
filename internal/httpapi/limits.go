package httpapi

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/firegate/firegate/internal/auth"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/store"
)

// concurrencyLimit is the team's concurrent scrape limit; 0 = unlimited.
func (s *Server) concurrencyLimit(t auth.Team) int {
	if t.Unlimited {
		return 0
	}
	if t.Limits.ConcurrencyLimit != nil {
		return *t.Limits.ConcurrencyLimit
	}
	return s.defaults.Concurrency
}

// rateLimited answers 429 when the team has used its per-minute budget of
// class; nil when the request may go on.
func (s *Server) rateLimited(ctx context.Context, t auth.Team, class string) error {
	if s.limiter == nil || t.Unlimited {
		return nil
	}
	mult := s.defaults.RateMultiplier
	if t.Limits.RateMultiplier != nil {
		mult = *t.Limits.RateMultiplier
	}
	perMinute := limits.RatePerMinute(class, mult)
	if perMinute <= 0 {
		return nil
	}
	d, err := s.limiter.Allow(ctx, t.ID, class, perMinute)
	if err != nil {
		return fmt.Errorf("httpapi: rate limit: %w", err)
	}
	if d.Allowed {
		return nil
	}
	secs := int(math.Ceil(d.RetryAfter.Seconds()))
	return &Error{
		Status: http.StatusTooManyRequests, Code: "RATE_LIMIT_EXCEEDED", RetryAfter: max(secs, 1),
		Message: fmt.Sprintf("Rate limit exceeded. Consumed (req/min): %d, Remaining (req/min): %d. Please retry after %ds, resets at %s",
			d.Consumed, d.Remaining, max(secs, 1), d.ResetAt.UTC().Format(time.RFC1123)),
	}
}

// checkCredits answers 402 when the team's balance is below minimum.
func (s *Server) checkCredits(ctx context.Context, t auth.Team, minimum int64) error {
	if s.ledger == nil || t.Unlimited {
		return nil
	}
	return s.ledger.Check(ctx, t.ID, minimum)
}

// charge records credits used after the work is done: it takes what remains
// when the balance ran short meanwhile (the work is already delivered), and
// survives the client going away.
func (s *Server) charge(ctx context.Context, t auth.Team, credits int64, kind string) {
	if s.ledger == nil || t.Unlimited || credits <= 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if _, err := s.ledger.Charge(ctx, store.Charge{TeamID: t.ID, Credits: credits, Kind: kind, APIKeyID: t.APIKeyID, Clamp: true}); err != nil {
		s.log.ErrorContext(ctx, "charge failed", "team_id", t.ID, "credits", credits, "kind", kind, "err", err, "request_id", requestIDFrom(ctx))
	}
}

// defaultSlotWait is how long a request without a timeout of its own (a
// map without one) waits for a concurrency slot.
const defaultSlotWait = 60 * time.Second

// acquire waits for one of the team's concurrency slots, for at most wait;
// the returned release must be called. Every synchronous route that does
// work (scrape, map, parse) holds one while it works.
func (s *Server) acquire(ctx context.Context, t auth.Team, wait time.Duration) (func(), time.Duration, error) {
	limit := s.concurrencyLimit(t)
	if s.limiter == nil || limit <= 0 {
		return func() {}, 0, nil
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	return s.limiter.Acquire(wctx, t.ID, limit)
}
