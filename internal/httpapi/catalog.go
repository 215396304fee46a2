package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/auth"
	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/catalog"
	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/search"
	"github.com/firegate/firegate/internal/store"
)

// Catalog mode of POST /v2/scrape (seed "Catalog mode rules"). The checks
// run in this order: the x-request-id header (400), the body (400),
// catalog access and zero data retention (403), the rate limit (429), the
// idempotency key (replay, 409, 503), the calls' providers (404), the
// third-party terms (403), the options against each inputSchema (400),
// credits (402); then the calls run concurrently within timeout.

// isCatalogRequest reports whether a scrape body is a catalog call: it has
// catalog, or the SDK's alexandria (the same thing).
func isCatalogRequest(fields jsonObject) bool {
	return present(fields, "catalog") || present(fields, "alexandria")
}

const (
	msgCatalogBoth = "catalog and alexandria are the same member; send only one"
	// retryUnresolvedSeconds is the Retry-After of request_unresolved.
	retryUnresolvedSeconds = 5
)

var (
	errRequestIDInvalid = &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST",
		Message: "Invalid x-request-id header: it must be 1 to 128 characters of letters, digits, '.', '_', ':' and '-'",
		Details: []FieldError{{Path: []any{"x-request-id"}, Message: "Expected 1 to 128 characters of letters, digits, '.', '_', ':', '-'", Code: codeInvalidString}}}
	errCatalogTeamNotEnabled = &Error{Status: http.StatusForbidden, Code: "CATALOG_NOT_ENABLED",
		Message: "Forbidden: catalog access is not enabled for this team (an operator enables it with: server limits set --catalog)"}
	errCatalogZDR = &Error{Status: http.StatusForbidden, Code: "CATALOG_ZDR_NOT_SUPPORTED",
		Message: "Forbidden: catalog calls and domainTools are not available under zero data retention"}
	errThirdPartyTerms = &Error{Status: http.StatusForbidden, Code: "THIRD_PARTY_DATA_TERMS_REQUIRED",
		Message:        "Forbidden: THIRD_PARTY_DATA_TERMS_REQUIRED: this team has not accepted the third-party data terms that calls to operator tools need (an operator accepts them with: server limits set --accept-third-party-terms)",
		RequiresAction: true}
	errRequestInFlight = &Error{Status: http.StatusConflict, Code: "request_in_flight",
		Message: "Conflict: a request with this x-request-id is still being processed; retry later with the same x-request-id"}
	errDuplicateRequest = &Error{Status: http.StatusConflict, Code: "duplicate_request",
		Message: "Conflict: this x-request-id was already used for a request with different parameters; use a new x-request-id"}
	errRequestUnresolved = &Error{Status: http.StatusServiceUnavailable, Code: "request_unresolved", RetryAfter: retryUnresolvedSeconds,
		Message: "Service Unavailable: the outcome of the earlier request with this x-request-id is not known yet; retry with the same x-request-id"}
)

// catalogRequest is a validated catalog body.
type catalogRequest struct {
	member              string // "catalog" or "alexandria"
	single              bool   // one call object rather than an array
	calls               []catalogCall
	timeout             time.Duration
	origin, integration string
}

// decodeCatalogRequest validates a catalog body: the calls, and only
// timeout, origin and integration beside them.
func decodeCatalogRequest(fields jsonObject) (catalogRequest, error) {
	var v validator
	var req catalogRequest
	if present(fields, "catalog") && present(fields, "alexandria") {
		v.addCustom([]any{"alexandria"}, codeCustom, msgCatalogBoth)
	}
	for _, f := range fields {
		switch k := f.key; {
		case k == "catalog" || k == "alexandria" || isCatalogSibling(k):
		case isScrapeRequestKey(k):
			if present(fields, k) {
				v.addCustom([]any{k}, codeCustom, msgCatalogCombined)
			}
		default:
			v.addCustom([]any{k}, codeUnrecognizedKeys, msgUnrecognized)
		}
	}
	req.member = "catalog"
	if !present(fields, "catalog") {
		req.member = "alexandria"
	}
	raw := fields.get(req.member)
	req.single = kindOf(raw) == kindObject
	req.calls = v.catalog([]any{req.member}, raw)
	req.timeout = v.timeout(nil, fields)
	req.origin, req.integration = v.bookkeeping(nil, fields)
	if err := v.err(); err != nil {
		return catalogRequest{}, err
	}
	return req, nil
}

// hash identifies the request's parameters for its idempotency key.
func (req catalogRequest) hash() []byte {
	type call struct {
		Provider   string         `json:"provider"`
		Capability string         `json:"capability"`
		Options    map[string]any `json:"options"`
	}
	calls := make([]call, len(req.calls))
	for i, c := range req.calls {
		calls[i] = call(c)
	}
	// Cannot fail: strings, an int and options decoded from the body
	// (maps, slices, strings, json.Numbers, bools, nil).
	b, _ := json.Marshal(struct {
		Calls       []call `json:"calls"`
		TimeoutMs   int64  `json:"timeoutMs"`
		Origin      string `json:"origin"`
		Integration string `json:"integration"`
	}{calls, req.timeout.Milliseconds(), req.origin, req.integration})
	sum := sha256.Sum256(b)
	return sum[:]
}

// callPath is the body path of call i (of its options when sub is given).
func (req catalogRequest) callPath(i int, sub ...any) []any {
	p := []any{req.member}
	if !req.single {
		p = append(p, i)
	}
	return append(p, sub...)
}

// catalogAccess answers 403 when the team may not use the catalog.
func (s *Server) catalogAccess(t auth.Team) error {
	if s.catalog == nil {
		return errCatalogNotEnabled
	}
	if t.Unlimited {
		return nil
	}
	if !t.Limits.Catalog {
		return errCatalogTeamNotEnabled
	}
	if t.Limits.ZeroDataRetention || t.Limits.ZeroDataRetentionForced {
		return errCatalogZDR
	}
	return nil
}

// handleCatalog serves a catalog body of POST /v2/scrape.
func (s *Server) handleCatalog(w http.ResponseWriter, r *http.Request, fields jsonObject) error {
	key := r.Header.Get("X-Request-Id")
	_, sent := r.Header["X-Request-Id"]
	if sent && !validRequestID.MatchString(key) {
		return errRequestIDInvalid
	}
	req, err := decodeCatalogRequest(fields)
	if err != nil {
		return err
	}
	ctx := r.Context()
	team := teamFrom(ctx)
	if err := s.catalogAccess(team); err != nil {
		return err
	}
	if err := s.rateLimited(ctx, team, limits.ClassScrape); err != nil {
		return err
	}
	scrapeID := uuid.NewString()
	var begun catalog.Begun
	if sent && s.catalogKeys != nil {
		begun, err = s.catalogKeys.Begin(ctx, team.ID, key, req.hash(), scrapeID, req.timeout)
		if err != nil {
			return fmt.Errorf("httpapi: catalog request key: %w", err)
		}
		switch begun.Outcome {
		case catalog.Replay:
			writeRaw(w, begun.Record.Status, begun.Record.Response)
			return nil
		case catalog.InFlight:
			return errRequestInFlight
		case catalog.Duplicate:
			return duplicateRequest(begun.Record.Response)
		case catalog.Unresolved:
			return errRequestUnresolved
		}
		scrapeID = begun.Record.ScrapeID
	}
	keyed := sent && s.catalogKeys != nil
	ended := false
	defer func() {
		if keyed && !ended { // a panic: stop holding the key
			s.catalogKeys.Release(ctx, begun)
		}
	}()
	body, err := s.runCatalog(ctx, team, req, scrapeID)
	ended = true
	if err != nil {
		if keyed {
			s.catalogKeys.Release(ctx, begun)
		}
		return err
	}
	if keyed {
		if err := s.catalogKeys.Complete(ctx, begun, http.StatusOK, body); err != nil {
			s.log.ErrorContext(ctx, "catalog request done but its response could not be kept for replay",
				"team_id", team.ID, "request_id", key, "err", err)
		}
	}
	writeRaw(w, http.StatusOK, body)
	return nil
}

// runCatalog resolves, checks and executes the calls; an error means
// nothing ran.
func (s *Server) runCatalog(ctx context.Context, team auth.Team, req catalogRequest, scrapeID string) ([]byte, error) {
	calls := make([]catalog.Call, len(req.calls))
	for i, c := range req.calls {
		calls[i] = catalog.Call{Provider: c.Provider, Capability: c.Capability, Options: c.Options}
	}
	resolved, err := catalog.Resolve(s.catalog.Catalog(), calls)
	var unknown *catalog.UnknownError
	if errors.As(err, &unknown) {
		return nil, &Error{Status: http.StatusNotFound, Code: "unknown_provider",
			Message: fmt.Sprintf("Not Found: no catalogued provider %q with capability %q", unknown.Provider, unknown.Capability),
			Details: []FieldError{{Path: req.callPath(unknown.Index), Message: "Unknown provider or capability", Code: "unknown_provider"}}}
	}
	if err != nil {
		return nil, err
	}
	if !team.Unlimited && !team.Limits.ThirdPartyTerms {
		for _, c := range resolved {
			if !c.Provider.Builtin {
				return nil, errThirdPartyTerms
			}
		}
	}
	var oe *catalog.OptionsError
	if err := catalog.Validate(resolved); errors.As(err, &oe) {
		path := req.callPath(oe.Index, "options")
		for _, p := range oe.Path {
			path = append(path, p)
		}
		msg := "Invalid options: " + strings.Join(append([]string{"options"}, oe.Path...), ".") + ": " + oe.Message
		return nil, &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: msg,
			Details: []FieldError{{Path: path, Message: oe.Message, Code: codeCustom}}}
	} else if err != nil {
		return nil, err
	}
	if need := catalog.Credits(resolved); need > 0 {
		if err := s.checkCredits(ctx, team, need); err != nil {
			return nil, err
		}
	}
	// The timeout covers the wait for a concurrency slot and the calls.
	deadline := time.Now().Add(req.timeout)
	release, _, err := s.acquire(ctx, team, req.timeout)
	if err != nil {
		return nil, err
	}
	defer release()
	// The calls finish (and their response is kept for a retry) even when
	// the client goes away: a retry with the key must not run them again.
	rctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	results := s.catalog.Execute(rctx, team.ID, resolved)
	var credits int64
	for _, res := range results {
		credits += res.CreditsCost
	}
	var chargeID string
	if credits > 0 && s.ledger != nil && !team.Unlimited {
		// Keyed by the scrape id: a run reclaimed from a dead process that
		// had charged already charges nothing more.
		res, err := s.ledger.Charge(context.WithoutCancel(ctx), store.Charge{TeamID: team.ID, Credits: credits, Kind: "catalog",
			APIKeyID: team.APIKeyID, IdempotencyKey: "catalog:" + scrapeID, Clamp: true})
		if err != nil {
			s.log.ErrorContext(ctx, "charge failed", "team_id", team.ID, "credits", credits, "kind", "catalog", "err", err)
		}
		chargeID = res.Usage.ID
	}
	s.log.InfoContext(ctx, "catalog calls done", "request_id", requestIDFrom(ctx), "team_id", team.ID,
		"calls", len(results), "credits", credits, "scrape_id", scrapeID)
	body := map[string]any{
		"success":   true,
		"data":      map[string]any{"alexandria": results, "creditsCost": credits},
		"scrape_id": scrapeID,
	}
	if chargeID != "" {
		body["chargeId"] = chargeID
	}
	return json.Marshal(body)
}

// duplicateRequest is the 409 for a key reused with other parameters,
// naming the original request's charge when it had one.
func duplicateRequest(original []byte) error {
	var orig struct {
		ChargeID string `json:"chargeId"`
	}
	if json.Unmarshal(original, &orig) != nil || orig.ChargeID == "" {
		return errDuplicateRequest
	}
	e := *errDuplicateRequest
	e.ChargeID = orig.ChargeID
	return &e
}

// writeRaw writes an encoded JSON body with status.
func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// domainTools checks access for domainTools (403 without catalog access
// or with zero data retention) and clears the option, which the scrape
// engine does not serve; tools then lists the catalog tools of the page.
func (s *Server) domainTools(t auth.Team, opts *scrape.Options) error {
	if !opts.DomainTools {
		return nil
	}
	if err := s.catalogAccess(t); err != nil {
		return err
	}
	if opts.ZeroDataRetention {
		return errCatalogZDR
	}
	opts.DomainTools = false
	return nil
}

// catalogBuiltins are the firecrawl provider's capabilities that run this
// server's engine: scrape, and map when a mapper is configured.
func (s *Server) catalogBuiltins() []catalog.Builtin {
	b := []catalog.Builtin{{Path: "scrape", Credits: billing.MinScrape,
		Description: "Scrape one page with this server's engine; options are POST /v2/scrape's body (url and scrape options).",
		Run:         s.builtinScrape}}
	if s.mapper != nil {
		b = append(b, catalog.Builtin{Path: "map", Credits: billing.MinMap,
			Description: "List a site's URLs; options are POST /v2/map's body.", Run: s.builtinMap})
	}
	if s.searcher != nil {
		b = append(b, catalog.Builtin{Path: "search", Credits: billing.MinimumForCount(defaultSearchLimit),
			Description: "Search the web, news or images; options are POST /v2/search's body, without scrapeOptions formats.", Run: s.builtinSearch})
	}
	return b
}

// builtinSearch runs a search without scraping its results; the
// request-level features search answers with an error stay refused.
func (s *Server) builtinSearch(ctx context.Context, _ string, options map[string]any) (any, int64, error) {
	fields, err := builtinOptions(options)
	if err != nil {
		return nil, 0, err
	}
	var v validator
	req := v.searchRequest(fields)
	if err := v.err(); err != nil {
		return nil, 0, callError(err)
	}
	switch {
	case len(req.Scrape.Formats) > 0:
		return nil, 0, &catalog.CallError{Code: "BAD_REQUEST", Status: http.StatusBadRequest,
			Message: "scrapeOptions formats are not available in a catalog search: call the scrape capability for the results you need"}
	case req.Catalog, req.AsyncScraping, req.ZDR, req.Threat != nil, len(req.Enterprise) > 0:
		return nil, 0, &catalog.CallError{Code: "BAD_REQUEST", Status: http.StatusBadRequest,
			Message: "alexandria, domainTools, asyncScraping, zeroDataRetention, threatProtection and enterprise are not available in a catalog search"}
	}
	found, err := s.searchSources(ctx, req)
	if err != nil {
		return nil, 0, callError(err)
	}
	var credits int64
	var data searchData
	for i := range found {
		f := &found[i]
		credits += billing.SearchCost(len(f.results), false)
		switch f.src.Type {
		case search.SourceWeb:
			data.Web = &f.items
		case search.SourceNews:
			data.News = &f.items
		case search.SourceImages:
			data.Images = &f.items
		}
	}
	return data, credits, nil
}

// builtinOptions re-reads a call's options as a request body.
func builtinOptions(options map[string]any) (jsonObject, error) {
	raw, err := json.Marshal(options)
	if err != nil {
		return nil, &catalog.CallError{Code: "BAD_REQUEST", Status: http.StatusBadRequest, Message: "options are not valid JSON"}
	}
	fields, apiErr := readJSONObject(bytes.NewReader(raw))
	if apiErr != nil {
		return nil, &catalog.CallError{Code: apiErr.Code, Status: apiErr.Status, Message: apiErr.Message}
	}
	return fields, nil
}

// callError turns an API error into a call's error.
func callError(err error) error {
	e := toAPIError(err)
	if e.Code == "UNKNOWN_ERROR" {
		return err
	}
	msg := e.Message
	if d, ok := e.Details.([]FieldError); ok && len(d) > 0 {
		msg += fmt.Sprintf(" (%v: %s)", d[0].Path, d[0].Message)
	}
	return &catalog.CallError{Code: e.Code, Status: e.Status, Message: msg}
}

func (s *Server) builtinScrape(ctx context.Context, teamID string, options map[string]any) (any, int64, error) {
	fields, err := builtinOptions(options)
	if err != nil {
		return nil, 0, err
	}
	if isCatalogRequest(fields) {
		return nil, 0, &catalog.CallError{Code: "BAD_REQUEST", Status: http.StatusBadRequest, Message: "a scrape call cannot hold catalog calls"}
	}
	var v validator
	req := v.scrapeRequest(fields)
	if err := v.err(); err != nil {
		return nil, 0, callError(err)
	}
	opts := req.Options
	opts.TeamID = teamID
	if opts.DomainTools || opts.ZeroDataRetention {
		return nil, 0, &catalog.CallError{Code: "BAD_REQUEST", Status: http.StatusBadRequest,
			Message: "domainTools and zeroDataRetention are not available inside a catalog call"}
	}
	doc, err := s.scraper.Scrape(ctx, opts)
	if err != nil {
		return nil, 0, callError(err)
	}
	return doc, int64(doc.Metadata.CreditsUsed), nil
}

func (s *Server) builtinMap(ctx context.Context, _ string, options map[string]any) (any, int64, error) {
	fields, err := builtinOptions(options)
	if err != nil {
		return nil, 0, err
	}
	var v validator
	req := v.mapRequest(fields)
	if err := v.err(); err != nil {
		return nil, 0, callError(err)
	}
	res, err := s.mapper.Map(ctx, req.Options)
	if err != nil {
		return nil, 0, callError(err)
	}
	links := res.Links
	if links == nil {
		links = []crawl.Link{}
	}
	data := map[string]any{"links": links}
	if res.Warning != "" {
		data["warning"] = res.Warning
	}
	return data, billing.CostMap, nil
}
