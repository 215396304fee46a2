// Package billing is the credits ledger: the pre-check that refuses work a
// team cannot pay for, the charge made after the work (recorded with its
// usage in one store transaction), usage reports by billing period, and the
// pure credit cost functions of the API.
package billing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/store"
)

// ErrInsufficientCredits is returned when a team's balance is below what a
// request needs.
var ErrInsufficientCredits = errcode.New("billing: insufficient credits", errcode.NoCredits, "insufficient_credits",
	"Payment Required: Insufficient credits")

// ErrUnavailable is returned when credits could not be checked or charged
// because the store failed.
var ErrUnavailable = errcode.New("billing: credits could not be charged", errcode.Unavailable, "billing_unavailable",
	"Service Unavailable: credits could not be checked or charged; retry later")

// Store is the part of store.Store the ledger uses.
type Store interface {
	CreditBalance(ctx context.Context, teamID string) (store.Balance, error)
	ChargeCredits(ctx context.Context, c store.Charge) (store.ChargeResult, error)
	CreditUsageByPeriod(ctx context.Context, teamID string, from, to time.Time, byAPIKey bool) ([]store.UsagePeriod, error)
	CreditUsageByDay(ctx context.Context, teamID string, from, to time.Time) ([]store.UsagePeriod, error)
}

// Ledger checks and charges team credits. It is safe for concurrent use.
type Ledger struct {
	st       Store
	log      *slog.Logger
	now      func() time.Time
	b        batch
	onCharge func(kind string, credits int64) // nil: none
}

// NewLedger returns a ledger over st.
func NewLedger(st Store, log *slog.Logger) *Ledger {
	return &Ledger{st: st, log: log, now: time.Now}
}

// ObserveCharges makes the ledger call f with the kind and the credits
// actually taken of every successful charge (not of duplicates), for a
// metrics counter. Call it before the ledger is used; nil removes it.
func (l *Ledger) ObserveCharges(f func(kind string, credits int64)) {
	l.onCharge = f
}

// charged reports a successful charge to the observer.
func (l *Ledger) charged(kind string, credits int64) {
	if l.onCharge != nil && credits > 0 {
		l.onCharge(kind, credits)
	}
}

// Check returns nil when the team may start work needing minimum credits:
// an unlimited team always may, a limited one when its remaining balance is
// at least minimum. Otherwise it returns an error wrapping
// ErrInsufficientCredits; store.ErrNotFound for an unknown team; ErrUnavailable
// when the store fails.
func (l *Ledger) Check(ctx context.Context, teamID string, minimum int64) error {
	if l.knownUnlimited(teamID) {
		return nil
	}
	b, err := l.st.CreditBalance(ctx, teamID)
	if err != nil {
		return fmt.Errorf("billing: check: %w", classify(ctx, err))
	}
	l.markUnlimited(teamID, b.Unlimited)
	if b.Unlimited || b.Remaining >= minimum {
		return nil
	}
	return fmt.Errorf("billing: check: %w: %d remaining, %d needed", ErrInsufficientCredits, b.Remaining, minimum)
}

// Charge debits c.Credits from the team and records the usage in one
// transaction (see store.Store.ChargeCredits for Clamp and IdempotencyKey).
// Errors wrap ErrInsufficientCredits when the balance is short (and c.Clamp
// is unset), store.ErrNotFound for an unknown team or key, the context's
// error when ctx ended, and ErrUnavailable otherwise.
//
// With Run going, a charge of a team known to be unlimited (and without an
// idempotency key) is recorded at the next flush instead, and returns at
// once with the unlimited balance.
func (l *Ledger) Charge(ctx context.Context, c store.Charge) (store.ChargeResult, error) {
	if l.deferCharge(c) {
		l.charged(c.Kind, c.Credits)
		return store.ChargeResult{Usage: store.Usage{TeamID: c.TeamID, APIKeyID: c.APIKeyID, Credits: c.Credits, Kind: c.Kind},
			Balance: store.Balance{Unlimited: true}}, nil
	}
	res, err := l.st.ChargeCredits(ctx, c)
	if err != nil {
		err = classify(ctx, err)
		if errors.Is(err, ErrUnavailable) {
			l.log.ErrorContext(ctx, "credit charge failed", "team_id", c.TeamID, "credits", c.Credits, "kind", c.Kind, "error", err)
		}
		return store.ChargeResult{}, fmt.Errorf("billing: charge: %w", err)
	}
	if res.Usage.Credits < c.Credits && !res.Balance.Unlimited && !res.Duplicate {
		l.log.WarnContext(ctx, "credit charge clamped", "team_id", c.TeamID, "credits", c.Credits, "charged", res.Usage.Credits)
	}
	if !res.Duplicate {
		l.charged(c.Kind, res.Usage.Credits)
	}
	return res, nil
}

// Balance returns the team's balance.
func (l *Ledger) Balance(ctx context.Context, teamID string) (store.Balance, error) {
	b, err := l.st.CreditBalance(ctx, teamID)
	if err != nil {
		return store.Balance{}, fmt.Errorf("billing: balance: %w", classify(ctx, err))
	}
	return b, nil
}

// CurrentUsage is a team's balance in the current billing period, as
// GET /v2/team/credit-usage reports it.
type CurrentUsage struct {
	Balance     store.Balance
	PeriodStart time.Time
	PeriodEnd   time.Time
	// Used is the credits recorded in the current period.
	Used int64
}

// Current returns the team's balance and its usage in the current billing
// period.
func (l *Ledger) Current(ctx context.Context, teamID string) (CurrentUsage, error) {
	b, err := l.st.CreditBalance(ctx, teamID)
	if err != nil {
		return CurrentUsage{}, fmt.Errorf("billing: current usage: %w", classify(ctx, err))
	}
	start, end := Period(l.now())
	periods, err := l.st.CreditUsageByPeriod(ctx, teamID, start, end, false)
	if err != nil {
		return CurrentUsage{}, fmt.Errorf("billing: current usage: %w", classify(ctx, err))
	}
	u := CurrentUsage{Balance: b, PeriodStart: start, PeriodEnd: end}
	for _, p := range periods {
		u.Used += p.Credits
	}
	return u, nil
}

// History returns the credits used per billing period, ascending, up to and
// including the current one, optionally split by API key, as
// GET /v2/team/credit-usage/historical reports them. Periods without usage
// are omitted.
func (l *Ledger) History(ctx context.Context, teamID string, byAPIKey bool) ([]store.UsagePeriod, error) {
	_, end := Period(l.now())
	periods, err := l.st.CreditUsageByPeriod(ctx, teamID, time.Time{}, end, byAPIKey)
	if err != nil {
		return nil, fmt.Errorf("billing: history: %w", classify(ctx, err))
	}
	return periods, nil
}

// MaxDailyDays is the most days Daily reports.
const MaxDailyDays = 366

// Daily returns the credits used per UTC day over the last days days
// (today included, 1 to MaxDailyDays), ascending; days without usage are
// omitted.
func (l *Ledger) Daily(ctx context.Context, teamID string, days int) ([]store.UsagePeriod, error) {
	days = min(max(days, 1), MaxDailyDays)
	end := l.now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)
	periods, err := l.st.CreditUsageByDay(ctx, teamID, end.AddDate(0, 0, -days), end)
	if err != nil {
		return nil, fmt.Errorf("billing: daily usage: %w", classify(ctx, err))
	}
	return periods, nil
}

// Period returns the billing period holding t: the calendar month in UTC,
// [start, end).
func Period(t time.Time) (start, end time.Time) {
	start = store.MonthStart(t)
	return start, start.AddDate(0, 1, 0)
}

// classify keeps the errors callers act on (insufficient credits, unknown
// team, ended context) and marks every other store failure ErrUnavailable.
func classify(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, store.ErrInsufficientCredits):
		return fmt.Errorf("%w: %w", ErrInsufficientCredits, err)
	case errors.Is(err, store.ErrNotFound),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case ctx.Err() != nil:
		return fmt.Errorf("%w: %w", ctx.Err(), err)
	default:
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
}
