package httpapi

import (
	"net/http"
	"time"

	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/limits"
)

// handleCreditUsage serves GET /v2/team/credit-usage. An unlimited team
// reports -1 remaining and plan credits, and unlimited: true.
func (s *Server) handleCreditUsage(w http.ResponseWriter, r *http.Request) error {
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
	remaining, plan := cur.Balance.Remaining, cur.Balance.Plan
	if cur.Balance.Unlimited {
		remaining, plan = -1, -1
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "data": map[string]any{
		"remainingCredits":   remaining,
		"planCredits":        plan,
		"unlimited":          cur.Balance.Unlimited,
		"billingPeriodStart": cur.PeriodStart.UTC().Format(time.RFC3339),
		"billingPeriodEnd":   cur.PeriodEnd.UTC().Format(time.RFC3339),
	}})
	return nil
}

// usagePeriod is one entry of GET /v2/team/credit-usage/historical.
type usagePeriod struct {
	StartDate   string `json:"startDate"`
	EndDate     string `json:"endDate"`
	APIKey      string `json:"apiKey,omitempty"`
	CreditsUsed int64  `json:"creditsUsed"`
}

// handleCreditHistory serves GET /v2/team/credit-usage/historical.
func (s *Server) handleCreditHistory(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	t := teamFrom(ctx)
	if err := s.rateLimited(ctx, t, limits.ClassStatus); err != nil {
		return err
	}
	periods := []usagePeriod{}
	if s.ledger != nil && !t.Unlimited {
		byKey := r.URL.Query().Get("byApiKey") == "true"
		ps, err := s.ledger.History(ctx, t.ID, byKey)
		if err != nil {
			return err
		}
		for _, p := range ps {
			periods = append(periods, usagePeriod{StartDate: p.Start.UTC().Format(time.RFC3339), EndDate: p.End.UTC().Format(time.RFC3339),
				APIKey: p.APIKeyID, CreditsUsed: p.Credits})
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
