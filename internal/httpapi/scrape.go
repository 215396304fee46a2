package httpapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/limits"

	"github.com/firegate/firegate/internal/scrape"
)

// scrapeResponse is the 200 body of POST /v2/scrape.
type scrapeResponse struct {
	Success bool             `json:"success"`
	Data    *scrape.Document `json:"data"`
}

// handleScrape serves POST /v2/scrape: validate, rate limit, credit
// pre-check, wait for a concurrency slot, scrape, charge.
func (s *Server) handleScrape(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeScrapeRequest(r.Body)
	if err != nil {
		return err
	}
	if req.Catalog != nil {
		return errCatalogNotEnabled
	}
	ctx := r.Context()
	team := teamFrom(ctx)
	opts := req.Options
	if opts.ZeroDataRetention && !team.Unlimited && !team.Limits.ZeroDataRetention {
		return errZDRNotEnabled
	}
	if err := s.rateLimited(ctx, team, limits.ClassScrape); err != nil {
		return err
	}
	if err := s.checkCredits(ctx, team, billing.MinScrape); err != nil {
		return err
	}
	release, waited, err := s.acquire(ctx, team, opts.Timeout)
	if err != nil {
		return err
	}
	defer release()

	doc, err := s.scraper.Scrape(ctx, opts)
	if errors.Is(err, scrape.ErrLockdownCacheMiss) {
		s.charge(ctx, team, billing.ScrapeCost(billing.ScrapeCostInput{Lockdown: true}), "scrape")
	}
	if err != nil {
		return err
	}
	s.charge(ctx, team, int64(doc.Metadata.CreditsUsed), "scrape")
	s.lastOK.Store(team.ID, time.Now())
	if waited > 0 {
		ms := waited.Milliseconds()
		doc.Metadata.Concurrency, doc.Metadata.ConcurrencyMS = true, &ms
	}
	if !opts.ZeroDataRetention && !opts.Lockdown {
		s.log.InfoContext(ctx, "scrape done", "request_id", requestIDFrom(ctx), "team_id", team.ID,
			"url", opts.URL, "status_code", doc.Metadata.StatusCode, "cache_state", doc.Metadata.CacheState)
	}
	writeJSON(w, http.StatusOK, scrapeResponse{Success: true, Data: doc})
	return nil
}

// errZDRNotEnabled answers zeroDataRetention from a team without it.
var errZDRNotEnabled = &Error{Status: http.StatusForbidden, Code: "ZDR_NOT_ENABLED",
	Message: "Forbidden: zero data retention is not enabled for this team"}

// errCatalogNotEnabled answers catalog calls: this server has no provider
// catalog, which the contract treats as catalog access not enabled (403).
var errCatalogNotEnabled = &Error{Status: http.StatusForbidden, Code: "CATALOG_NOT_ENABLED",
	Message: "Forbidden: catalog calls are not enabled on this server (it has no provider catalog)"}
