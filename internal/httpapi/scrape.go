package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/logsafe"

	"github.com/firegate/firegate/internal/scrape"
)

// handleScrape serves POST /v2/scrape: validate, rate limit, credit
// pre-check, wait for a concurrency slot, scrape, charge.
func (s *Server) handleScrape(w http.ResponseWriter, r *http.Request) error {
	fields, apiErr := readJSONObject(r.Body)
	if apiErr != nil {
		return apiErr
	}
	if isCatalogRequest(fields) {
		return s.handleCatalog(w, r, fields)
	}
	req, err := validateScrapeRequest(fields)
	if err != nil {
		return err
	}
	ctx := r.Context()
	team := teamFrom(ctx)
	opts := req.Options
	opts.TeamID = team.ID
	if err := applyTeamZDR(team, &opts.ZeroDataRetention); err != nil {
		return err
	}
	withTools := opts.DomainTools
	if err := s.domainTools(team, &opts); err != nil {
		return err
	}
	if !opts.ZeroDataRetention {
		noteTargetURL(ctx, opts.URL)
	}
	if err := s.rateLimited(ctx, team, limits.ClassScrape); err != nil {
		return err
	}
	s.recordActivity(r, team, "scrape", opts.URL, opts.AuditMetadata, opts.ZeroDataRetention)
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
	if withTools {
		doc.Tools = s.catalog.DomainTools(opts.URL)
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("httpapi: encode document: %w", err)
	}
	if !opts.ZeroDataRetention && !opts.Lockdown {
		s.results.put(ctx, doc.Metadata.ScrapeID, team.ID, data)
		s.replays.put(ctx, doc.Metadata.ScrapeID, team.ID, opts)
		s.log.InfoContext(ctx, "scrape done", "request_id", requestIDFrom(ctx), "team_id", team.ID,
			"url", logsafe.URL(opts.URL), "status_code", doc.Metadata.StatusCode, "cache_state", doc.Metadata.CacheState)
	}
	writeData(w, data)
	return nil
}

// handleGetScrape serves GET /v2/scrape/{id}: the document of an earlier
// scrape of the caller's team, byte for byte, while it is kept.
func (s *Server) handleGetScrape(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	team := teamFrom(ctx)
	if err := s.rateLimited(ctx, team, limits.ClassStatus); err != nil {
		return err
	}
	id := chi.URLParam(r, "id")
	if _, err := uuid.Parse(id); err != nil {
		return errInvalidJobID
	}
	owner, data, err := s.results.get(ctx, id)
	if err != nil {
		return err
	}
	if owner != team.ID {
		return errNotYourJob
	}
	writeData(w, data)
	return nil
}

// writeData writes {"success":true,"data":<data>} with data already encoded.
func writeData(w http.ResponseWriter, data []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(`{"success":true,"data":`))
	_, _ = w.Write(data)
	_, _ = w.Write([]byte("}\n"))
}

var (
	errInvalidJobID = &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: "Invalid job ID format. Job ID must be a valid UUID."}
	errNotYourJob   = &Error{Status: http.StatusForbidden, Code: "FORBIDDEN", Message: "You are not allowed to access this resource."}
)

// errZDRNotEnabled answers zeroDataRetention from a team without it.
var errZDRNotEnabled = &Error{Status: http.StatusForbidden, Code: "ZDR_NOT_ENABLED",
	Message: "Forbidden: zero data retention is not enabled for this team"}

// errCatalogNotEnabled answers catalog calls where there is no catalog:
// a server built without one, and search (which offers no catalog tools
// yet); the contract treats it as catalog access not enabled (403).
var errCatalogNotEnabled = &Error{Status: http.StatusForbidden, Code: "CATALOG_NOT_ENABLED",
	Message: "Forbidden: catalog tools are not available for this request on this server"}
