package billing

import (
	"context"
	"sync"
	"time"

	"github.com/firegate/firegate/internal/store"
)

// unlimitedTTL is how long a team seen unlimited is trusted to still be
// unlimited without asking the store. A team given credits starts being
// debited within this time; what it used meanwhile is charged at the next
// flush.
const unlimitedTTL = 5 * time.Second

// pendingKey groups usage of unlimited teams between flushes.
type pendingKey struct {
	team, apiKey, kind string
}

// batch holds the ledger's state for unlimited teams: which teams are
// unlimited, and the usage they ran up since the last flush. Usage of an
// unlimited team debits nothing, so it is recorded in one row per team,
// key and kind per flush instead of one write per request.
type batch struct {
	mu        sync.Mutex
	on        bool
	unlimited map[string]time.Time // team -> when seen unlimited
	pending   map[pendingKey]int64
}

func (l *Ledger) knownUnlimited(teamID string) bool {
	l.b.mu.Lock()
	defer l.b.mu.Unlock()
	seen, ok := l.b.unlimited[teamID]
	return ok && l.now().Sub(seen) < unlimitedTTL
}

func (l *Ledger) markUnlimited(teamID string, unlimited bool) {
	l.b.mu.Lock()
	defer l.b.mu.Unlock()
	if l.b.unlimited == nil {
		l.b.unlimited = map[string]time.Time{}
	}
	if unlimited {
		l.b.unlimited[teamID] = l.now()
	} else {
		delete(l.b.unlimited, teamID)
	}
}

// deferCharge records c for the next flush when batching is on, c has no
// idempotency key and its team is known to be unlimited.
func (l *Ledger) deferCharge(c store.Charge) bool {
	if c.IdempotencyKey != "" || !l.knownUnlimited(c.TeamID) {
		return false
	}
	l.b.mu.Lock()
	defer l.b.mu.Unlock()
	if !l.b.on {
		return false
	}
	if l.b.pending == nil {
		l.b.pending = map[pendingKey]int64{}
	}
	l.b.pending[pendingKey{c.TeamID, c.APIKeyID, c.Kind}] += c.Credits
	return true
}

// Run turns batching on and flushes the usage of unlimited teams every
// interval until ctx ends, then flushes once more.
func (l *Ledger) Run(ctx context.Context, interval time.Duration) {
	l.b.mu.Lock()
	l.b.on = true
	l.b.mu.Unlock()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			l.Flush(ctx)
		case <-ctx.Done():
			l.b.mu.Lock()
			l.b.on = false
			l.b.mu.Unlock()
			l.Flush(context.WithoutCancel(ctx))
			return
		}
	}
}

// Flush writes the pending usage of unlimited teams to the store.
func (l *Ledger) Flush(ctx context.Context) {
	l.b.mu.Lock()
	pending := l.b.pending
	l.b.pending = nil
	l.b.mu.Unlock()
	for k, credits := range pending {
		c := store.Charge{TeamID: k.team, APIKeyID: k.apiKey, Kind: k.kind, Credits: credits, Clamp: true}
		if _, err := l.st.ChargeCredits(ctx, c); err != nil {
			l.log.ErrorContext(ctx, "usage flush failed", "team_id", k.team, "credits", credits, "kind", k.kind, "error", err)
		}
	}
}
