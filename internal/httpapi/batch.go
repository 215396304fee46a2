package httpapi

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/crawljob"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/store"
)

// batchRequest is a decoded, validated POST /v2/batch/scrape body.
type batchRequest struct {
	URLs        []string
	InvalidURLs []string // only in lenient mode (ignoreInvalidURLs: true)
	Lenient     bool
	AppendToID  string
	Options     crawljob.JobOptions
	ZDR         bool
}

// isBatchRequestKey reports whether k is a top-level key of POST
// /v2/batch/scrape: the scrape options plus the batch's own.
func isBatchRequestKey(k string) bool {
	switch k {
	case "urls", "webhook", "appendToId", "ignoreInvalidURLs", "maxConcurrency", "zeroDataRetention",
		"origin", "integration":
		return true
	}
	return isScrapeOptionKey(k)
}

var errNoValidURLs = &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: "No valid URLs provided",
	Details: []FieldError{{Path: []any{"urls"}, Message: "No valid URLs provided", Code: codeCustom}}}

// decodeBatchRequest reads and validates a POST /v2/batch/scrape body. URL
// checks are lenient only when the body literally sends ignoreInvalidURLs:
// true (the reference's quirk): then bad entries are listed in invalidURLs
// instead of failing the body.
func decodeBatchRequest(r io.Reader) (batchRequest, error) {
	fields, apiErr := readJSONObject(r)
	if apiErr != nil {
		return batchRequest{}, apiErr
	}
	var v validator
	req := v.batchRequest(fields)
	if err := v.err(); err != nil {
		return batchRequest{}, err
	}
	if len(req.URLs) == 0 {
		return batchRequest{}, errNoValidURLs
	}
	return req, nil
}

func (v *validator) batchRequest(m jsonObject) batchRequest {
	v.checkKeys(nil, m, isBatchRequestKey)
	var req batchRequest
	origin, integration := v.bookkeeping(nil, m)
	req.Lenient = v.optBool(nil, m, "ignoreInvalidURLs", false)
	p := []any{"urls"}
	if !present(m, "urls") {
		v.required(p, "array")
	} else if items, ok := v.array(p, m.get("urls")); ok {
		if len(items) == 0 {
			v.add(p, codeTooSmall, "Array must contain at least 1 element(s)")
		}
		for i, raw := range items {
			s, ok := v.str(at(p, i), raw)
			if !ok {
				continue
			}
			u, ok := normalizeURL(s)
			switch {
			case ok:
				req.URLs = append(req.URLs, u)
			case req.Lenient:
				req.InvalidURLs = append(req.InvalidURLs, s)
			default:
				v.addCustom(at(p, i), codeInvalidString, msgInvalidURL)
			}
		}
	}
	if present(m, "appendToId") {
		if s, ok := v.str([]any{"appendToId"}, m.get("appendToId")); ok {
			if _, err := uuid.Parse(s); err != nil {
				v.addCustom([]any{"appendToId"}, codeInvalidString, "appendToId must be a UUID")
			}
			req.AppendToID = s
		}
	}
	if n, ok := v.optInt(nil, m, "maxConcurrency", 1, math.MaxInt32); ok {
		req.Options.MaxConcurrency = int(n)
	}
	req.Options.Scrape = v.scrapeOptions(nil, m)
	req.Options.Scrape.Origin, req.Options.Scrape.Integration = origin, integration
	req.ZDR = req.Options.Scrape.ZeroDataRetention
	req.Options.Webhook = v.webhook(m)
	return req
}

// handleBatchScrape serves POST /v2/batch/scrape.
func (s *Server) handleBatchScrape(w http.ResponseWriter, r *http.Request) error {
	if s.jobs == nil {
		return handleNotImplemented(w, r)
	}
	req, err := decodeBatchRequest(r.Body)
	if err != nil {
		return err
	}
	ctx := r.Context()
	team := teamFrom(ctx)
	if err := applyTeamZDR(team, &req.ZDR); err != nil {
		return err
	}
	req.Options.Scrape.ZeroDataRetention = req.ZDR
	if err := s.checkTargets(req.Options.Scrape.ThreatProtection, req.URLs...); err != nil {
		return err
	}
	idem, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	if err := s.rateLimited(ctx, team, limits.ClassCrawl); err != nil {
		return err
	}
	s.recordActivity(r, team, "batch_scrape", batchTarget(req.URLs), req.Options.Scrape.AuditMetadata, req.ZDR || req.Options.Scrape.ZeroDataRetention)
	if err := s.checkCredits(ctx, team, billing.MinimumForCount(len(req.URLs))); err != nil {
		return err
	}
	resp := startResponse{Success: true, InvalidURLs: req.InvalidURLs}
	if req.Lenient && resp.InvalidURLs == nil {
		resp.InvalidURLs = []string{}
	}
	if req.AppendToID != "" {
		if err := s.jobs.AppendBatch(ctx, team.ID, req.AppendToID, req.URLs); errors.Is(err, crawljob.ErrJobNotFound) {
			return errCrawlNotFound
		} else if err != nil {
			return err
		}
		resp.ID = req.AppendToID
	} else {
		req.Options.TeamConcurrency = s.concurrencyLimit(team)
		if req.Options.MaxConcurrency > 0 && req.Options.TeamConcurrency > 0 {
			req.Options.MaxConcurrency = min(req.Options.MaxConcurrency, req.Options.TeamConcurrency)
		}
		resp.ID = crawljob.NewJobID()
		job := store.Job{ID: resp.ID, TeamID: team.ID, APIKeyID: team.APIKeyID, ZeroDataRetention: req.ZDR, IdempotencyKey: idem}
		if err := s.jobs.StartBatch(ctx, job, req.Options, req.URLs); errors.Is(err, crawljob.ErrIdempotencyKeyUsed) {
			return errIdempotencyKeyUsed
		} else if err != nil {
			return err
		}
	}
	resp.URL = s.baseURL(r) + "/v2/batch/scrape/" + resp.ID
	s.log.InfoContext(ctx, "batch scrape queued", "request_id", requestIDFrom(ctx), "team_id", team.ID,
		"job_id", resp.ID, "urls", len(req.URLs))
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// batchTarget is a batch's target in the team's activity: its first URL,
// and how many more there are.
func batchTarget(urls []string) string {
	switch len(urls) {
	case 0:
		return ""
	case 1:
		return urls[0]
	}
	return fmt.Sprintf("%s (+%d more)", urls[0], len(urls)-1)
}
