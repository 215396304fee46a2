package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/crawljob"
	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/search"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/webhook"
)

// POST /v2/extract runs as a batch scrape of its URLs with one json format
// (the caller's schema, systemPrompt and prompt), marked as an extract
// (crawljob.ExtractOptions: billed by tokens, extract.* webhooks); GET
// /v2/extract/{id} merges the pages' json results into one answer. The job
// is a batch on the durable queue, so GET /v2/batch/scrape/{id} shows the
// pages. enableWebSearch adds pages found by searching the web for the
// prompt.

// Bounds of an extract: urls (the reference's), and limit, the pages in
// all once globs are expanded.
const (
	maxExtractURLs      = 10
	defaultExtractLimit = 20
	maxExtractLimit     = 1000
)

// extractRequest is a decoded, validated POST /v2/extract body.
type extractRequest struct {
	URLs        []string
	InvalidURLs []string
	// Globs are the start URLs of urls written "<url>/*": their pages are
	// found by map and added to URLs (at most Limit in all).
	Globs       []string
	Limit       int
	Map         crawl.MapOptions // the map settings of the globs (URL unset)
	Schema      json.RawMessage
	ShowSources bool
	// WebSearch is the query of enableWebSearch (the prompt); "" = none.
	WebSearch string
	// Threat is the threatProtection member, else that of scrapeOptions;
	// nil for none.
	Threat  *scrape.ThreatProtection
	Options crawljob.JobOptions
}

func isExtractKey(k string) bool {
	switch k {
	case "urls", "prompt", "systemPrompt", "schema", "limit", "ignoreSitemap", "includeSubdomains",
		"allowExternalLinks", "enableWebSearch", "showSources", "scrapeOptions", "ignoreInvalidURLs",
		"timeout", "webhook", "urlTrace", "origin", "integration", "agent", "threatProtection", "__experimental_cacheMode":
		return true
	}
	return false
}

func extractUnsupported(field, msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "EXTRACT_OPTION_NOT_SUPPORTED", Message: msg,
		Details: []FieldError{{Path: []any{field}, Message: msg, Code: "not_supported"}}}
}

// decodeExtractRequest reads and validates a POST /v2/extract body.
func decodeExtractRequest(r *http.Request) (extractRequest, error) {
	m, apiErr := readJSONObject(r.Body)
	if apiErr != nil {
		return extractRequest{}, apiErr
	}
	var v validator
	v.checkKeys(nil, m, isExtractKey)
	var req extractRequest
	lenient := v.optBool(nil, m, "ignoreInvalidURLs", true)
	if p := []any{"urls"}; present(m, "urls") {
		if items, ok := v.array(p, m.get("urls")); ok {
			if len(items) > maxExtractURLs {
				v.add(p, codeTooBig, "Array must contain at most 10 element(s)")
			}
			for i, raw := range items {
				s, ok := v.str(at(p, i), raw)
				if !ok {
					continue
				}
				isGlob := strings.HasSuffix(s, "/*")
				u, ok := normalizeURL(strings.TrimSuffix(s, "/*"))
				switch {
				case ok && isGlob:
					req.Globs = append(req.Globs, u)
				case ok:
					req.URLs = append(req.URLs, u)
				case lenient:
					req.InvalidURLs = append(req.InvalidURLs, s)
				default:
					v.addCustom(at(p, i), codeInvalidString, msgInvalidURL)
				}
			}
		}
	}
	prompt, _ := v.optPrompt(nil, m, "prompt")
	system, _ := v.optPrompt(nil, m, "systemPrompt")
	req.Schema = v.schema(nil, m)
	req.ShowSources = v.optBool(nil, m, "showSources", false)
	if v.optBool(nil, m, "ignoreSitemap", false) {
		req.Map.Sitemap = crawl.SitemapSkip
	}
	req.Map.ExcludeSubdomains = !v.optBool(nil, m, "includeSubdomains", true)
	req.Map.AllowExternalLinks = v.optBool(nil, m, "allowExternalLinks", false)
	req.Limit = defaultExtractLimit
	if n, ok := v.optInt(nil, m, "limit", 1, maxExtractLimit); ok {
		req.Limit = int(n)
	}
	v.optBool(nil, m, "urlTrace", false)
	if present(m, "threatProtection") {
		req.Threat = v.threatProtection([]any{"threatProtection"}, m.get("threatProtection"))
	}
	webSearch := v.optBool(nil, m, "enableWebSearch", false)
	hook := v.webhook(m)
	if hook != nil {
		for i, e := range hook.Events {
			if e == webhook.EventPage || strings.HasSuffix(e, "."+webhook.EventPage) {
				v.addCustom([]any{"webhook", "events", i}, codeInvalidString,
					"An extract sends no page events: webhook.events may hold started, completed and failed")
			}
		}
	}
	origin, integration := v.bookkeeping(nil, m)
	var opts scrape.Options
	if present(m, "scrapeOptions") {
		opts = v.nestedScrapeOptions([]any{"scrapeOptions"}, m.get("scrapeOptions"))
	} else {
		opts = v.scrapeOptions([]any{"scrapeOptions"}, nil)
	}
	if present(m, "timeout") {
		opts.Timeout = v.timeout(nil, m)
	}
	if err := v.err(); err != nil {
		return req, err
	}
	switch {
	case prompt == "" && len(req.Schema) == 0:
		return req, &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: "Either prompt or schema is required",
			Details: []FieldError{{Path: []any{"prompt"}, Message: "Either prompt or schema is required", Code: codeCustom}}}
	case webSearch && prompt == "":
		return req, &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: "enableWebSearch needs a prompt: the web is searched for it",
			Details: []FieldError{{Path: []any{"prompt"}, Message: "prompt is required to search the web", Code: codeCustom}}}
	case !webSearch && len(req.URLs) == 0 && len(req.Globs) == 0:
		return req, &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: "urls is required unless enableWebSearch is true",
			Details: []FieldError{{Path: []any{"urls"}, Message: "urls is required", Code: codeCustom}}}
	}
	if webSearch {
		// The reference: web search also lets globs' maps leave the site.
		req.WebSearch = prompt
		req.Map.AllowExternalLinks = true
	}
	if len(req.Schema) > 0 {
		if err := scrape.CheckSchema(req.Schema); err != nil {
			var f *errcode.Failure
			errors.As(err, &f)
			return req, &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: f.Msg,
				Details: []FieldError{{Path: []any{"schema"}, Message: f.Msg, Code: codeCustom}}}
		}
	}
	if system != "" && prompt != "" {
		prompt = system + "\n\n" + prompt
	} else if system != "" {
		prompt = system
	}
	opts.Formats = []scrape.Format{{Type: scrape.FormatJSON, Schema: req.Schema, Prompt: prompt}}
	opts.Origin, opts.Integration = origin, integration
	// The top-level threatProtection also checks the pages' scrapes (and
	// their redirect hops) unless scrapeOptions has its own.
	if req.Threat == nil {
		req.Threat = opts.ThreatProtection
	} else if opts.ThreatProtection == nil {
		opts.ThreatProtection = req.Threat
	}
	req.Options.Scrape = opts
	req.Options.Webhook = hook
	req.Options.Extract = &crawljob.ExtractOptions{ShowSources: req.ShowSources}
	return req, nil
}

// deprecated marks a response of the deprecated extract routes.
func deprecated(w http.ResponseWriter) {
	w.Header().Set("Deprecation", "true")
	w.Header().Set("Link", `</v2/scrape>; rel="successor-version"`)
	w.Header().Set("Warning", `299 - "The extract endpoint is deprecated; use POST /v2/scrape with a json format."`)
}

var errExtractNoLLM = &Error{Status: http.StatusBadRequest, Code: "SCRAPE_LLM_NOT_CONFIGURED",
	Message: "extract needs a language model, and this server has none configured (set OPENAI_BASE_URL and MODEL_NAME)"}

// handleExtract serves POST /v2/extract.
func (s *Server) handleExtract(w http.ResponseWriter, r *http.Request) error {
	deprecated(w)
	if s.jobs == nil {
		return handleNotImplemented(w, r)
	}
	if s.model == nil {
		return errExtractNoLLM
	}
	req, err := decodeExtractRequest(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	team := teamFrom(ctx)
	if req.Options.Scrape.ZeroDataRetention || team.Limits.ZeroDataRetentionForced {
		return errZDRNotSupported
	}
	if err := s.checkTargets(req.Threat, append(append([]string(nil), req.URLs...), req.Globs...)...); err != nil {
		return err
	}
	if err := s.rateLimited(ctx, team, limits.ClassAgent); err != nil {
		return err
	}
	s.recordActivity(r, team, "extract", extractTarget(&req), req.Options.Scrape.AuditMetadata, false)
	if err := s.checkCredits(ctx, team, billing.MinExtract); err != nil {
		return err
	}
	if len(req.Globs) > 0 {
		if err := s.expandGlobs(r, &req); err != nil {
			return err
		}
	}
	if req.WebSearch != "" {
		if err := s.searchExtractURLs(r, &req); err != nil {
			return err
		}
	}
	if len(req.URLs) == 0 {
		return &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: "No URL to extract from: the globs and the web search found no page",
			Details: []FieldError{{Path: []any{"urls"}, Message: "no page found", Code: codeCustom}}}
	}
	req.Options.TeamConcurrency = s.concurrencyLimit(team)
	id := crawljob.NewJobID()
	job := store.Job{ID: id, TeamID: team.ID, APIKeyID: team.APIKeyID}
	if err := s.jobs.StartBatch(ctx, job, req.Options, req.URLs); err != nil {
		return err
	}
	s.log.InfoContext(ctx, "extract queued", "request_id", requestIDFrom(ctx), "team_id", team.ID, "job_id", id, "urls", len(req.URLs))
	resp := map[string]any{"success": true, "id": id, "urlTrace": []string{}}
	if req.InvalidURLs != nil {
		resp["invalidURLs"] = req.InvalidURLs
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// extractTarget is an extract's target in the team's activity: its URLs
// and globs as asked for, else the web search's prompt.
func extractTarget(req *extractRequest) string {
	asked := append([]string(nil), req.URLs...)
	for _, g := range req.Globs {
		asked = append(asked, strings.TrimSuffix(g, "/")+"/*")
	}
	if len(asked) == 0 {
		return req.WebSearch
	}
	return batchTarget(asked)
}

// expandGlobs maps each glob's site (pages under its path, the sitemap
// and the start page's links, as POST /v2/map finds them) and adds the
// pages to req.URLs, at most req.Limit URLs in all.
func (s *Server) expandGlobs(r *http.Request, req *extractRequest) error {
	if s.mapper == nil {
		return extractUnsupported("urls", "URL globs (/*) need map, which this server does not serve; list the pages to extract from")
	}
	seen := make(map[string]bool, req.Limit)
	urls := make([]string, 0, req.Limit)
	add := func(u string) {
		// A site's root with and without its slash is one page (a glob
		// on a site names it without, its map lists it with).
		k := u
		if p, err := url.Parse(u); err == nil && p.Path == "" {
			p.Path = "/"
			k = p.String()
		}
		if len(urls) < req.Limit && !seen[k] {
			seen[k] = true
			urls = append(urls, u)
		}
	}
	for _, u := range req.URLs {
		add(u)
	}
	for _, g := range req.Globs {
		o := req.Map
		o.URL, o.Limit, o.Timeout = g, req.Limit, req.Options.Scrape.Timeout
		o.CheckHop = s.hopCheck(req.Threat)
		res, err := s.mapper.Map(r.Context(), o)
		if err != nil {
			return err
		}
		add(g)
		for _, l := range res.Links {
			if s.threatAllows(req.Threat, l.URL) {
				add(l.URL)
			}
		}
	}
	req.URLs = urls
	return nil
}

// extractSearchTimeout bounds the web search of enableWebSearch.
const extractSearchTimeout = 30 * time.Second

// searchExtractURLs adds the pages a web search for req.WebSearch finds to
// req.URLs: up to maxExtractURLs results, at most req.Limit URLs in all.
func (s *Server) searchExtractURLs(r *http.Request, req *extractRequest) error {
	if s.searcher == nil {
		return extractUnsupported("enableWebSearch", "enableWebSearch needs a search engine, and this server has none configured (set SEARXNG_ENDPOINT); send the urls to extract from")
	}
	room := req.Limit - len(req.URLs)
	if room <= 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(r.Context(), extractSearchTimeout)
	defer cancel()
	text := req.WebSearch
	if len(text) > maxSearchQueryLen {
		text = clipUTF8(text, maxSearchQueryLen)
	}
	found, err := s.searcher.Search(ctx, search.Query{Text: text, Source: search.SourceWeb, Limit: min(room, maxExtractURLs), Language: "en"})
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && !errors.Is(err, search.ErrTimeout) {
			err = fmt.Errorf("%w: %w", search.ErrTimeout, err)
		}
		return err
	}
	// The search is billed as POST /v2/search bills its results, when it
	// ran: the extract's creditsUsed counts it.
	cost := billing.SearchCost(len(found), false)
	s.charge(ctx, teamFrom(ctx), cost, "extract")
	req.Options.Extract.SearchCredits = cost
	seen := make(map[string]bool, len(req.URLs)+len(found))
	for _, u := range req.URLs {
		seen[u] = true
	}
	for _, f := range found {
		u, ok := normalizeURL(f.URL)
		if !ok || seen[u] || len(req.URLs) >= req.Limit || !s.threatAllows(req.Threat, u) {
			continue
		}
		seen[u] = true
		req.URLs = append(req.URLs, u)
	}
	return nil
}

// clipUTF8 cuts s to at most n bytes on a rune boundary.
func clipUTF8(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

var errExtractNotFound = &Error{Status: http.StatusNotFound, Code: "NOT_FOUND", Message: "Extract job not found"}

// extractStatus is the body of GET /v2/extract/{id}.
type extractStatus struct {
	Success     bool                `json:"success"`
	Status      string              `json:"status"`
	Data        json.RawMessage     `json:"data"`
	Error       string              `json:"error,omitempty"`
	ExpiresAt   string              `json:"expiresAt"`
	Sources     map[string][]string `json:"sources,omitempty"`
	TokensUsed  int64               `json:"tokensUsed,omitempty"`
	CreditsUsed int64               `json:"creditsUsed"`
	Warning     string              `json:"warning,omitempty"`
}

// handleExtractStatus serves GET /v2/extract/{id}.
func (s *Server) handleExtractStatus(w http.ResponseWriter, r *http.Request) error {
	deprecated(w)
	ctx := r.Context()
	j, err := s.ownJob(r, store.JobBatch)
	if errors.Is(err, errCrawlNotFound) {
		return errExtractNotFound
	}
	if err != nil {
		return err
	}
	var o crawljob.JobOptions
	if err := json.Unmarshal(j.Options, &o); err != nil || o.Extract == nil {
		return errExtractNotFound // a batch scrape, not an extract
	}
	resp := extractStatus{Success: true, Data: json.RawMessage("null"), ExpiresAt: isoTime(j.ExpiresAt), CreditsUsed: j.CreditsUsed + o.Extract.SearchCredits}
	switch j.Status {
	case store.JobScraping:
		resp.Status = "processing"
	case store.JobCompleted:
		resp.Status = "completed"
	case store.JobCancelled:
		resp.Status = "cancelled"
	default:
		resp.Status, resp.Success, resp.Error = "failed", false, j.Error
	}
	if resp.Status == "processing" {
		writeJSON(w, http.StatusOK, resp)
		return nil
	}
	res, err := crawljob.ExtractOutcome(ctx, s.jobStore, j, o)
	if err != nil {
		return err
	}
	resp.TokensUsed = res.TokensUsed
	if resp.Status == "completed" {
		resp.Data, resp.Warning = res.Data, res.Warning
		if o.Extract.ShowSources {
			resp.Sources = res.Sources
		}
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}
