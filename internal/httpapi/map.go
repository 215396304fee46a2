package httpapi

import (
	"context"
	"io"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/exprlimit"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/logsafe"
	"github.com/firegate/firegate/internal/scrape"
)

// Mapper lists the URLs of a site for POST /v2/map; *crawl.Mapper
// implements it.
type Mapper interface {
	Map(ctx context.Context, o crawl.MapOptions) (crawl.MapResult, error)
}

// Bounds and messages of the map body (reference §5.6 and the crawler
// filters of §5.5 it also accepts).
const (
	maxMapDelaySeconds = 60
	msgMapDelay        = "The delay parameter is measured in seconds and cannot exceed 60 seconds."
	msgMapSubdomains   = "includeSubdomains and allowSubdomains disagree; send only one of them"
)

// mapRequest is a decoded, validated POST /v2/map body.
type mapRequest struct {
	Options             crawl.MapOptions
	Origin, Integration string
	Threat              *scrape.ThreatProtection
	Audit               *scrape.AuditMetadata
}

// isMapRequestKey reports whether k is a top-level key of POST /v2/map.
func isMapRequestKey(k string) bool {
	switch k {
	case "url", "search", "sitemap", "includeSubdomains", "ignoreQueryParameters", "ignoreCache",
		"limit", "timeout", "location", "headers", "threatProtection", "auditMetadata",
		"origin", "integration",
		// Crawler filters the reference accepts on map too.
		"includePaths", "excludePaths", "regexOnFullURL", "allowExternalLinks", "crawlEntireDomain",
		"allowSubdomains", "maxDiscoveryDepth", "deduplicateSimilarURLs", "ignoreRobotsTxt", "delay",
		"useIndex", "filterByPath":
		return true
	}
	return false
}

// decodeMapRequest reads, decodes and validates a POST /v2/map body. The
// error is always an *Error: 413 for a body over the router's limit, 400
// BAD_REQUEST_INVALID_JSON for a body that is not one JSON object, 400
// BAD_REQUEST with per-field details for a body that breaks the contract.
//
// Fields this server honours trivially: ignoreCache (there is no sitemap
// cache, every map is live), useIndex (there is no URL index, results
// always come from the site), ignoreRobotsTxt (map reads robots.txt only
// for its Sitemap lines, never to drop URLs), auditMetadata, origin and
// integration (bookkeeping). location.country picks the start page's
// proxy (PROXY_URLS); its languages set Accept-Language.
func decodeMapRequest(r io.Reader) (mapRequest, error) {
	fields, apiErr := readJSONObject(r)
	if apiErr != nil {
		return mapRequest{}, apiErr
	}
	var v validator
	req := v.mapRequest(fields)
	if err := v.err(); err != nil {
		return mapRequest{}, err
	}
	return req, nil
}

// mapRequest validates the members of a map body and applies defaults.
func (v *validator) mapRequest(m jsonObject) mapRequest {
	v.checkKeys(nil, m, isMapRequestKey)
	var req mapRequest
	req.Origin, req.Integration = v.bookkeeping(nil, m)
	o := &req.Options
	o.URL = v.url(nil, m)
	o.Search, _ = v.optString(nil, m, "search")
	o.Sitemap = crawl.SitemapMode(v.optEnum(nil, m, "sitemap", "include", "include", "skip", "only"))

	includeSub := v.optBool(nil, m, "includeSubdomains", true)
	if present(m, "allowSubdomains") {
		allow := v.optBool(nil, m, "allowSubdomains", false)
		if present(m, "includeSubdomains") && allow != includeSub {
			v.addCustom([]any{"allowSubdomains"}, codeCustom, msgMapSubdomains)
		}
		includeSub = allow
	}
	o.ExcludeSubdomains = !includeSub
	o.KeepQueryParameters = !v.optBool(nil, m, "ignoreQueryParameters", true)
	v.optBool(nil, m, "ignoreCache", false)
	if n, ok := v.optInt(nil, m, "limit", 1, crawl.MaxLimit); ok {
		o.Limit = int(n)
	} else {
		o.Limit = crawl.DefaultLimit
	}
	o.Timeout = v.positiveMs(nil, m, "timeout")
	if present(m, "location") {
		loc := v.location([]any{"location"}, m.get("location"))
		o.Languages = loc.Languages
		if loc.CountryNamed {
			o.Country = loc.Country
		}
	}
	o.Headers = v.headers(nil, m)
	if present(m, "threatProtection") {
		req.Threat = v.threatProtection([]any{"threatProtection"}, m.get("threatProtection"))
	}
	if present(m, "auditMetadata") {
		req.Audit = v.auditMetadata([]any{"auditMetadata"}, m.get("auditMetadata"))
	}

	o.IncludePaths = v.pathPatterns(nil, m, "includePaths")
	o.ExcludePaths = v.pathPatterns(nil, m, "excludePaths")
	o.RegexOnFullURL = v.optBool(nil, m, "regexOnFullURL", false)
	o.AllowExternalLinks = v.optBool(nil, m, "allowExternalLinks", false)
	entireDomain := v.optBool(nil, m, "crawlEntireDomain", false)
	o.NoPathFilter = !v.optBool(nil, m, "filterByPath", true) || entireDomain
	if d, ok := v.optInt(nil, m, "maxDiscoveryDepth", 0, math.MaxInt32); ok && d == 0 {
		o.SkipPageLinks = true
	}
	o.KeepSimilarURLs = !v.optBool(nil, m, "deduplicateSimilarURLs", true)
	v.optBool(nil, m, "ignoreRobotsTxt", false)
	v.optBool(nil, m, "useIndex", true)
	if present(m, "delay") {
		if f, ok := v.number([]any{"delay"}, m.get("delay")); ok {
			switch {
			case f <= 0:
				v.add([]any{"delay"}, codeTooSmall, "Number must be greater than 0")
			case f > maxMapDelaySeconds:
				v.addCustom([]any{"delay"}, codeTooBig, msgMapDelay)
			default:
				o.Delay = time.Duration(f * float64(time.Second))
			}
		}
	}
	return req
}

// positiveMs reads an optional positive, finite number of milliseconds
// (fractions allowed, as the reference's schema does); 0 when absent.
func (v *validator) positiveMs(path []any, m jsonObject, key string) time.Duration {
	if !present(m, key) {
		return 0
	}
	p := at(path, key)
	f, ok := v.number(p, m.get(key))
	if !ok {
		return 0
	}
	switch {
	case f <= 0:
		v.add(p, codeTooSmall, "Number must be greater than 0")
		return 0
	case math.IsInf(f, 0):
		v.add(p, codeTooBig, "Number must be finite")
		return 0
	}
	return msDuration(int64(math.Ceil(min(f, float64(maxDurationMs)))))
}

// pathPatterns reads an optional array of regular expressions; one that
// does not compile fails with the compiler's message as the error text,
// one past exprlimit's bounds with the bound it passes.
func (v *validator) pathPatterns(path []any, m jsonObject, key string) []string {
	if !present(m, key) {
		return nil
	}
	p := at(path, key)
	list, ok := v.stringList(p, m.get(key), math.MaxInt)
	if !ok {
		return nil
	}
	if _, i, err := exprlimit.Regexps(list); err != nil {
		v.addCustom(at(p, i), codeInvalidString, "Invalid regular expression in "+key+": "+err.Error())
	}
	return list
}

// mapResponse is the body of a successful POST /v2/map.
type mapResponse struct {
	Success bool         `json:"success"`
	ID      string       `json:"id"`
	Links   []crawl.Link `json:"links"`
	Warning string       `json:"warning,omitempty"`
}

// handleMap serves POST /v2/map: validate, rate limit (class map), credit
// pre-check, wait for a team concurrency slot (like a scrape), map, charge
// one credit.
func (s *Server) handleMap(w http.ResponseWriter, r *http.Request) error {
	if s.mapper == nil {
		return handleNotImplemented(w, r)
	}
	req, err := decodeMapRequest(r.Body)
	if err != nil {
		return err
	}
	ctx := r.Context()
	team := teamFrom(ctx)
	// A map keeps nothing; with zero data retention its URL is not logged.
	zdr := false
	if err := applyTeamZDR(team, &zdr); err != nil {
		return err
	}
	if !zdr {
		noteTargetURL(ctx, req.Options.URL)
	}
	if err := s.checkTargets(req.Threat, req.Options.URL); err != nil {
		return err
	}
	req.Options.CheckHop = s.hopCheck(req.Threat)
	if err := s.rateLimited(ctx, team, limits.ClassMap); err != nil {
		return err
	}
	s.recordActivity(r, team, "map", req.Options.URL, req.Audit, false)
	if err := s.checkCredits(ctx, team, billing.MinMap); err != nil {
		return err
	}
	wait := req.Options.Timeout
	if wait <= 0 {
		wait = defaultSlotWait
	}
	release, _, err := s.acquire(ctx, team, wait)
	if err != nil {
		return err
	}
	defer release()
	res, err := s.mapper.Map(ctx, req.Options)
	if err != nil {
		return err
	}
	cost := int64(billing.CostMap)
	if req.Threat.Active() {
		cost += billing.CostThreatScan
	}
	s.charge(ctx, team, cost, "map")
	id, err := uuid.NewV7()
	if err != nil {
		id = uuid.New()
	}
	// Links to blocked hosts are left out: the map does not fetch them,
	// but a caller would.
	links := slices.DeleteFunc(res.Links, func(l crawl.Link) bool { return !s.threatAllows(req.Threat, l.URL) })
	if links == nil {
		links = []crawl.Link{}
	}
	if !zdr {
		s.log.InfoContext(ctx, "map done", "request_id", requestIDFrom(ctx), "team_id", team.ID,
			"url", logsafe.URL(req.Options.URL), "links", len(links))
	}
	writeJSON(w, http.StatusOK, mapResponse{Success: true, ID: id.String(), Links: links, Warning: res.Warning})
	return nil
}
