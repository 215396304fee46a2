package httpapi

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/store"
)

// tokensPerCredit converts credits to the token view of usage, as the
// reference does (GET /v2/team/token-usage: 15 tokens = 1 credit).
const tokensPerCredit = 15

// handleCreditUsage serves GET /v2/team/credit-usage. An unlimited team
// reports -1 remaining and plan credits, and unlimited: true.
func (s *Server) handleCreditUsage(w http.ResponseWriter, r *http.Request) error {
	return s.currentUsage(w, r, 1, "remainingCredits", "planCredits")
}

// handleTokenUsage serves GET /v2/team/token-usage: the credit balance in
// tokens.
func (s *Server) handleTokenUsage(w http.ResponseWriter, r *http.Request) error {
	return s.currentUsage(w, r, tokensPerCredit, "remainingTokens", "planTokens")
}

// currentUsage writes the team's balance, multiplied by unit, under the
// given names.
func (s *Server) currentUsage(w http.ResponseWriter, r *http.Request, unit int64, remainingKey, planKey string) error {
	ctx := r.Context()
	t := teamFrom(ctx)
	if err := s.rateLimited(ctx, t, limits.ClassStatus); err != nil {
		return err
	}
	var cur billing.CurrentUsage
	if s.ledger != nil && !t.Unlimited {
		var err error
		if cur, err = s.ledger.Current(ctx, t.ID); err != nil {
			return err
		}
	} else {
		cur.Balance.Unlimited = true
		cur.PeriodStart, cur.PeriodEnd = billing.Period(time.Now())
	}
	remaining, plan := cur.Balance.Remaining*unit, cur.Balance.Plan*unit
	if cur.Balance.Unlimited {
		remaining, plan = -1, -1
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "data": map[string]any{
		remainingKey:         remaining,
		planKey:              plan,
		"unlimited":          cur.Balance.Unlimited,
		"billingPeriodStart": cur.PeriodStart.UTC().Format(time.RFC3339),
		"billingPeriodEnd":   cur.PeriodEnd.UTC().Format(time.RFC3339),
	}})
	return nil
}

// handleCreditHistory serves GET /v2/team/credit-usage/historical.
func (s *Server) handleCreditHistory(w http.ResponseWriter, r *http.Request) error {
	return s.usageHistory(w, r, 1, "creditsUsed")
}

// handleTokenHistory serves GET /v2/team/token-usage/historical.
func (s *Server) handleTokenHistory(w http.ResponseWriter, r *http.Request) error {
	return s.usageHistory(w, r, tokensPerCredit, "tokensUsed")
}

// defaultUsageDays is how many days period=day reports without days.
const defaultUsageDays = 30

// usageHistory writes the team's usage per billing period (per API key
// with byApiKey=true), multiplied by unit, under usedKey. With period=day
// (this server's extension, for the console's chart) it is the usage per
// UTC day of the last days days (default 30), days without usage left out.
func (s *Server) usageHistory(w http.ResponseWriter, r *http.Request, unit int64, usedKey string) error {
	ctx := r.Context()
	t := teamFrom(ctx)
	if err := s.rateLimited(ctx, t, limits.ClassStatus); err != nil {
		return err
	}
	q := r.URL.Query()
	daily := false
	days := defaultUsageDays
	switch q.Get("period") {
	case "", "month":
	case "day":
		daily = true
		if q.Has("days") {
			n, err := strconv.Atoi(q.Get("days"))
			if err != nil || n < 1 || n > billing.MaxDailyDays {
				return badQuery("days", fmt.Sprintf("days must be an integer from 1 to %d", billing.MaxDailyDays))
			}
			days = n
		}
	default:
		return badQuery("period", "period must be month (the default) or day")
	}
	periods := []map[string]any{}
	if s.ledger != nil && !t.Unlimited {
		var ps []store.UsagePeriod
		var err error
		if daily {
			ps, err = s.ledger.Daily(ctx, t.ID, days)
		} else {
			ps, err = s.ledger.History(ctx, t.ID, q.Get("byApiKey") == "true")
		}
		if err != nil {
			return err
		}
		for _, p := range ps {
			period := map[string]any{"startDate": p.Start.UTC().Format(time.RFC3339), "endDate": p.End.UTC().Format(time.RFC3339),
				usedKey: p.Credits * unit}
			if p.APIKeyID != "" {
				period["apiKey"] = p.APIKeyID
			}
			periods = append(periods, period)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "periods": periods})
	return nil
}

// handleConcurrencyCheck serves GET /v2/concurrency-check.
func (s *Server) handleConcurrencyCheck(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	t := teamFrom(ctx)
	if err := s.rateLimited(ctx, t, limits.ClassStatus); err != nil {
		return err
	}
	inUse := 0
	if s.limiter != nil {
		var err error
		if inUse, err = s.limiter.InUse(ctx, t.ID); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "concurrency": inUse, "maxConcurrency": s.concurrencyLimit(t)})
	return nil
}

// handleQueueStatus serves GET /v2/team/queue-status: scrapes running and
// waiting for a concurrency slot. mostRecentSuccess is this replica's view.
func (s *Server) handleQueueStatus(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	t := teamFrom(ctx)
	if err := s.rateLimited(ctx, t, limits.ClassStatus); err != nil {
		return err
	}
	active, waiting := 0, 0
	if s.limiter != nil {
		var err error
		if active, err = s.limiter.InUse(ctx, t.ID); err != nil {
			return err
		}
		if waiting, err = s.limiter.Waiting(ctx, t.ID); err != nil {
			return err
		}
	}
	var recent any
	if v, ok := s.lastOK.Load(t.ID); ok {
		recent = v.(time.Time).UTC().Format(time.RFC3339Nano)
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"success": true, "jobsInQueue": active + waiting, "activeJobsInQueue": active, "waitingJobsInQueue": waiting,
		"maxConcurrency": s.concurrencyLimit(t), "mostRecentSuccess": recent,
	})
	return nil
}
