package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/auth"
	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/search"
)

// Searcher runs one query of one source for POST /v2/search;
// *search.Searcher implements it.
type Searcher interface {
	Search(ctx context.Context, q search.Query) ([]search.Result, error)
}

// Bounds, defaults and messages of the search body (reference §5.7).
const (
	maxSearchQueryLen    = 500
	defaultSearchLimit   = 10
	maxSearchLocationLen = 500
	defaultSearchLang    = "en"
	defaultSearchCountry = "US"
	// maxSearchScrapes is how many results of one search are scraped at
	// once (fewer when the team's concurrency limit is lower).
	maxSearchScrapes       = 8
	msgSearchInvalidBody   = "Invalid request body"
	msgSearchDomainsBoth   = "includeDomains and excludeDomains cannot both be specified"
	msgSearchDuplicateSrc  = "Duplicate source types are not allowed"
	msgSearchDeveloper     = "The developer category needs a developer-documentation index, which this server does not have"
	msgSearchDeveloperOnly = "The developer category must be the only category"
	msgSearchFormat        = "This format is not available in search scrapeOptions"
	msgSearchLang          = "Expected a language code such as en, de or pt-BR"
)

// searchLangPattern matches the language codes lang accepts.
var searchLangPattern = regexp.MustCompile(`^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?$`)

// searchSource is one requested source with its settings resolved.
type searchSource struct {
	Type              string
	Time              search.TimeRange
	Language, Country string
}

// searchRequest is a decoded, validated POST /v2/search body.
type searchRequest struct {
	Query                          string
	Limit                          int
	Sources                        []searchSource
	Categories                     []string
	IncludeDomains, ExcludeDomains []string
	Safe                           bool
	Timeout                        time.Duration
	IgnoreInvalidURLs              bool
	// Scrape holds the scrape options; no formats = do not scrape.
	Scrape        scrape.Options
	ZDR           bool
	Enterprise    []string
	AsyncScraping bool
	// Catalog is set for the alexandria source or domainTools: the
	// catalog's tools that match the query (CatalogSource) or the results'
	// domains (DomainTools), in data.tools at ToolDetail.
	Catalog, CatalogSource, DomainTools bool
	ToolDetail                          string
	// Threat is the threatProtection member; nil for none.
	Threat *scrape.ThreatProtection
}

// isSearchRequestKey reports whether k is a top-level key of POST /v2/search.
func isSearchRequestKey(k string) bool {
	switch k {
	case "query", "limit", "sources", "categories", "includeDomains", "excludeDomains", "tbs", "filter",
		"lang", "country", "location", "safe", "timeout", "ignoreInvalidURLs", "highlights", "enterprise",
		"scrapeOptions", "asyncScraping", "zeroDataRetention", "origin", "integration",
		"threatProtection", "domainTools", "toolDetail":
		return true
	}
	return false
}

// decodeSearchRequest reads, decodes and validates a POST /v2/search body.
// Validation failures answer 400 BAD_REQUEST with error "Invalid request
// body" (the reference's text for this route) and per-field details.
//
// Fields honoured trivially: filter (results are always de-duplicated),
// highlights (the snippets are the engine's, already about the query),
// location (SearXNG has no location parameter; as in the reference it
// only drops the default country), origin and integration (bookkeeping).
func decodeSearchRequest(r io.Reader) (searchRequest, error) {
	fields, apiErr := readJSONObject(r)
	if apiErr != nil {
		return searchRequest{}, apiErr
	}
	var v validator
	req := v.searchRequest(fields)
	if err := v.err(); err != nil {
		err.Message = msgSearchInvalidBody
		return searchRequest{}, err
	}
	return req, nil
}

// searchSettings are the per-source settings a body may give at the top
// level or in a source object.
type searchSettings struct {
	tbs           *search.TimeRange
	lang, country *string
	location      bool
}

// searchSettings reads tbs, filter, lang, country and location of m (at
// path); unknown keys are left to the caller's key check.
func (v *validator) searchSettings(path []any, m jsonObject) searchSettings {
	var s searchSettings
	if str, ok := v.optString(path, m, "tbs"); ok {
		if tr, err := search.ParseTBS(str); err != nil {
			v.add(at(path, "tbs"), codeInvalidString, "Invalid tbs: "+err.Error())
		} else {
			s.tbs = &tr
		}
	}
	v.optString(path, m, "filter")
	if str, ok := v.optString(path, m, "lang"); ok {
		if !searchLangPattern.MatchString(str) {
			v.add(at(path, "lang"), codeInvalidString, msgSearchLang)
		} else {
			s.lang = &str
		}
	}
	if str, ok := v.optString(path, m, "country"); ok {
		if c, ok := normalizeCountry(str); !ok || c == "US-GENERIC" {
			v.add(at(path, "country"), codeInvalidString, msgInvalidCountry)
		} else {
			s.country = &c
		}
	}
	if present(m, "location") {
		if _, ok := v.strLen(at(path, "location"), m.get("location"), 1, maxSearchLocationLen); ok {
			s.location = true
		}
	}
	return s
}

// resolve is the language and country of a source: its own, else the
// body's, else en and US (no country when a location is given).
func (s searchSettings) resolve(top searchSettings) (lang, country string, tr search.TimeRange) {
	lang = defaultSearchLang
	switch {
	case s.lang != nil:
		lang = *s.lang
	case top.lang != nil:
		lang = *top.lang
	}
	switch {
	case s.country != nil:
		country = *s.country
	case top.country != nil:
		country = *top.country
	case !s.location && !top.location:
		country = defaultSearchCountry
	}
	switch {
	case s.tbs != nil:
		tr = *s.tbs
	case top.tbs != nil:
		tr = *top.tbs
	}
	return lang, country, tr
}

// searchFormatAllowed reports whether a format may be asked of search
// results (reference §5.7).
func searchFormatAllowed(t string) bool {
	switch t {
	case scrape.FormatMarkdown, scrape.FormatHTML, scrape.FormatRawHTML, scrape.FormatLinks, scrape.FormatImages,
		scrape.FormatSummary, scrape.FormatProduct, scrape.FormatMenu, scrape.FormatJSON, scrape.FormatQuestion,
		scrape.FormatHighlights, scrape.FormatQuery, scrape.FormatScreenshot:
		return true
	}
	return false
}

func (v *validator) searchRequest(m jsonObject) searchRequest {
	v.checkKeys(nil, m, isSearchRequestKey)
	var req searchRequest
	v.bookkeeping(nil, m)
	req.Query, _ = v.reqString(nil, m, "query", 1, maxSearchQueryLen)
	if strings.TrimSpace(req.Query) == "" && req.Query != "" {
		v.add([]any{"query"}, codeTooSmall, "String must contain at least 1 non-space character(s)")
	}
	req.Limit = defaultSearchLimit
	if n, ok := v.optInt(nil, m, "limit", 1, search.MaxLimit); ok {
		req.Limit = int(n)
	}
	top := v.searchSettings(nil, m)
	req.Sources = v.searchSources(m, top, &req.CatalogSource)
	req.Categories = v.searchCategories(m)
	req.IncludeDomains = v.domainList(nil, m, "includeDomains")
	req.ExcludeDomains = v.domainList(nil, m, "excludeDomains")
	if len(req.IncludeDomains) > 0 && len(req.ExcludeDomains) > 0 {
		v.add([]any{"excludeDomains"}, codeCustom, msgSearchDomainsBoth)
	}
	req.Safe = v.optBool(nil, m, "safe", false)
	req.Timeout = v.positiveMs(nil, m, "timeout")
	if req.Timeout == 0 {
		req.Timeout = defaultTimeoutMs * time.Millisecond
	}
	req.IgnoreInvalidURLs = v.optBool(nil, m, "ignoreInvalidURLs", false)
	v.optBool(nil, m, "highlights", true)
	if present(m, "enterprise") {
		p := []any{"enterprise"}
		if list, ok := v.stringList(p, m.get("enterprise"), 3); ok {
			for i, e := range list {
				if !slices.Contains([]string{"default", "anon", "zdr"}, e) {
					v.add(at(p, i), codeInvalidEnum, "Invalid enum value. Expected 'default' | 'anon' | 'zdr', received '"+e+"'")
				}
			}
			req.Enterprise = list
		}
	}
	req.AsyncScraping = v.optBool(nil, m, "asyncScraping", false)
	if present(m, "threatProtection") {
		req.Threat = v.threatProtection([]any{"threatProtection"}, m.get("threatProtection"))
	}
	req.DomainTools = v.optBool(nil, m, "domainTools", false)
	req.Catalog = req.CatalogSource || req.DomainTools
	req.ToolDetail = v.optEnum(nil, m, "toolDetail", "compact", "compact", "summary", "full")

	if present(m, "scrapeOptions") {
		p := []any{"scrapeOptions"}
		req.Scrape = v.nestedScrapeOptions(p, m.get("scrapeOptions"))
		if so, ok := splitObject(m.get("scrapeOptions")); !ok || !present(so, "formats") {
			req.Scrape.Formats = nil // search's default: do not scrape
		}
		for i, f := range req.Scrape.Formats {
			if !searchFormatAllowed(f.Type) {
				v.add(at(p, "formats", i), codeInvalidEnum, msgSearchFormat+": "+f.Type)
			}
		}
	}
	req.ZDR = v.optBool(nil, m, "zeroDataRetention", false) || req.Scrape.ZeroDataRetention ||
		slices.Contains(req.Enterprise, "zdr")
	req.Scrape.ZeroDataRetention = req.ZDR
	return req
}

// searchSources reads sources (default ["web"]): strings or objects, each
// type at most once, with the top-level settings copied into web and news.
func (v *validator) searchSources(m jsonObject, top searchSettings, catalog *bool) []searchSource {
	mk := func(t string, own searchSettings) searchSource {
		src := searchSource{Type: t}
		lang, country, tr := own.resolve(top)
		src.Language, src.Country = lang, country
		if t != search.SourceImages {
			src.Time = tr
		}
		return src
	}
	if !present(m, "sources") {
		return []searchSource{mk(search.SourceWeb, searchSettings{})}
	}
	p := []any{"sources"}
	items, ok := v.array(p, m.get("sources"))
	if !ok {
		return nil
	}
	if len(items) == 0 {
		v.add(p, codeTooSmall, "Array must contain at least 1 element(s)")
		return nil
	}
	types := []string{search.SourceWeb, search.SourceImages, search.SourceNews, "alexandria"}
	var out []searchSource
	for i, item := range items {
		ip := at(p, i)
		var t string
		var own searchSettings
		switch kindOf(item) {
		case kindString:
			s, ok := v.enum(ip, item, types...)
			if !ok {
				continue
			}
			t = s
		case kindObject:
			om, _ := v.object(ip, item)
			if !present(om, "type") {
				v.required(at(ip, "type"), "'web' | 'images' | 'news'")
				continue
			}
			s, ok := v.enum(at(ip, "type"), om.get("type"), types...)
			if !ok {
				continue
			}
			t = s
			switch t {
			case search.SourceWeb:
				v.checkKeys(ip, om, keysIn("type", "tbs", "filter", "lang", "country", "location"))
			case search.SourceNews:
				v.checkKeys(ip, om, keysIn("type", "tbs", "lang", "country", "location"))
			default:
				v.checkKeys(ip, om, keysIn("type"))
			}
			own = v.searchSettings(ip, om)
		default:
			v.typeMismatch(ip, "string or object", kindOf(item))
			continue
		}
		if t == "alexandria" {
			*catalog = true
			continue
		}
		if slices.ContainsFunc(out, func(s searchSource) bool { return s.Type == t }) {
			v.add(ip, codeCustom, msgSearchDuplicateSrc)
			continue
		}
		out = append(out, mk(t, own))
	}
	return out
}

// searchCategories reads categories: strings or {type} objects; developer
// (and its aliases) is known but not available here.
func (v *validator) searchCategories(m jsonObject) []string {
	if !present(m, "categories") {
		return nil
	}
	p := []any{"categories"}
	items, ok := v.array(p, m.get("categories"))
	if !ok {
		return nil
	}
	var out []string
	for i, item := range items {
		ip := at(p, i)
		raw := item
		if kindOf(item) == kindObject {
			om, _ := v.object(ip, item)
			v.checkKeys(ip, om, keysIn("type"))
			if !present(om, "type") {
				v.required(at(ip, "type"), "string")
				continue
			}
			ip, raw = at(ip, "type"), om.get("type")
		}
		s, ok := v.str(ip, raw)
		if !ok {
			continue
		}
		switch s {
		case search.CategoryGitHub, search.CategoryResearch, search.CategoryPDF:
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		case "developer", "repo", "code", "docs", "devdex", "repo_search", "developer_index":
			if len(items) > 1 {
				v.add(ip, codeCustom, msgSearchDeveloperOnly)
			} else {
				v.add(ip, codeCustom, msgSearchDeveloper)
			}
		default:
			v.add(ip, codeInvalidEnum, "Invalid enum value. Expected 'github' | 'research' | 'pdf' | 'developer', received '"+s+"'")
		}
	}
	return out
}

// Errors of valid search requests this server cannot honour.
var (
	errSearchAsync = &Error{Status: http.StatusBadRequest, Code: "SEARCH_ASYNC_SCRAPING_NOT_SUPPORTED",
		Message: "asyncScraping is not supported on this server: results are scraped before the search answers. Remove the field or set it to false.",
		Details: []FieldError{{Path: []any{"asyncScraping"}, Message: "not supported", Code: "not_supported"}}}
	errSearchEnterprise = &Error{Status: http.StatusForbidden, Code: "FORBIDDEN",
		Message: "Forbidden: enterprise search options are not enabled for this team"}
)

// searchItem is one result of the response: its fields for its source,
// plus the scraped document (or the scrape's failure) when scraped.
type searchItem struct {
	fields any
	doc    *scrape.Document
	failed *searchFailure
}

// searchFailure is the metadata of a result whose scrape failed.
type searchFailure struct {
	SourceURL string `json:"sourceURL"`
	URL       string `json:"url"`
	Error     string `json:"error"`
	Code      string `json:"code"`
}

func (it searchItem) MarshalJSON() ([]byte, error) {
	base, err := json.Marshal(it.fields)
	if err != nil {
		return nil, err
	}
	var extra []byte
	switch {
	case it.doc != nil:
		extra, err = json.Marshal(it.doc)
	case it.failed != nil:
		extra, err = json.Marshal(map[string]any{"metadata": it.failed})
	default:
		return base, nil
	}
	if err != nil {
		return nil, err
	}
	if len(extra) <= 2 {
		return base, nil
	}
	out := make([]byte, 0, len(base)+len(extra))
	out = append(out, base[:len(base)-1]...)
	out = append(out, ',')
	return append(out, extra[1:]...), nil
}

// webFields, newsFields and imageFields are a result as each source
// names its fields (reference §5.7).
type webFields struct {
	URL         string `json:"url"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Position    int    `json:"position"`
	Category    string `json:"category,omitempty"`
}

type newsFields struct {
	Title    string `json:"title"`
	URL      string `json:"url"`
	Snippet  string `json:"snippet"`
	Date     string `json:"date,omitempty"`
	ImageURL string `json:"imageUrl,omitempty"`
	Position int    `json:"position"`
}

type imageFields struct {
	Title       string `json:"title"`
	ImageURL    string `json:"imageUrl"`
	ImageWidth  int    `json:"imageWidth"`
	ImageHeight int    `json:"imageHeight"`
	URL         string `json:"url"`
	Position    int    `json:"position"`
}

// searchData is data of the response: the sources asked for, each an
// array (empty when nothing was found).
type searchData struct {
	Web    *[]searchItem `json:"web,omitempty"`
	News   *[]searchItem `json:"news,omitempty"`
	Images *[]searchItem `json:"images,omitempty"`
	// Tools are the catalog's tools (the alexandria source, domainTools).
	Tools *[]map[string]any `json:"tools,omitempty"`
}

// searchResponse is the body of a successful POST /v2/search.
type searchResponse struct {
	Success     bool       `json:"success"`
	Data        searchData `json:"data"`
	CreditsUsed int64      `json:"creditsUsed"`
	ID          string     `json:"id"`
	Warning     string     `json:"warning,omitempty"`
}

// sourceResults are the results of one source and, for web and news,
// their scraped documents (index for index).
type sourceResults struct {
	src     searchSource
	results []search.Result
	items   []searchItem
}

// handleSearch serves POST /v2/search: validate, rate limit (class
// search), credit pre-check (limit), wait for a team concurrency slot,
// search every source at once, scrape the web and news results when
// scrapeOptions has formats (each through the scrape engine and so the
// network policy; a failed scrape keeps its result with metadata.error),
// charge 2 credits per 10 results per source (10 with zero data
// retention) plus the scrapes.
func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeSearchRequest(r.Body)
	if err != nil {
		return err
	}
	if req.AsyncScraping {
		return errSearchAsync
	}
	ctx := r.Context()
	team := teamFrom(ctx)
	if slices.ContainsFunc(req.Enterprise, func(e string) bool { return e != "default" && e != "zdr" }) {
		return errSearchEnterprise
	}
	if err := applyTeamZDR(team, &req.ZDR); err != nil {
		return err
	}
	req.Scrape.ZeroDataRetention = req.ZDR
	warning, err := s.searchCatalogAccess(team, &req)
	if err != nil {
		return err
	}
	if len(req.Sources) == 0 {
		return s.searchCatalogOnly(w, r, team, req)
	}
	if s.searcher == nil {
		return search.ErrNotConfigured
	}
	if req.Threat == nil {
		req.Threat = req.Scrape.ThreatProtection
	} else if req.Scrape.ThreatProtection == nil {
		req.Scrape.ThreatProtection = req.Threat // checks the scrapes' redirect hops
	}
	if err := s.checkTargets(req.Threat); err != nil {
		return err
	}
	if err := s.rateLimited(ctx, team, limits.ClassSearch); err != nil {
		return err
	}
	s.recordActivity(r, team, "search", req.Query, req.Scrape.AuditMetadata, req.ZDR)
	if err := s.checkCredits(ctx, team, billing.MinimumForCount(req.Limit)); err != nil {
		return err
	}
	release, _, err := s.acquire(ctx, team, req.Timeout)
	if err != nil {
		return err
	}
	defer release()

	sctx, cancel := context.WithTimeout(ctx, req.Timeout)
	defer cancel()
	found, err := s.searchSources(sctx, req)
	if err != nil {
		if errors.Is(sctx.Err(), context.DeadlineExceeded) && !errors.Is(err, search.ErrTimeout) {
			err = fmt.Errorf("%w: %w", search.ErrTimeout, err)
		}
		return err
	}
	if len(req.Scrape.Formats) > 0 {
		if err := s.scrapeResults(sctx, team, req, found); err != nil {
			return err
		}
	}

	var credits int64
	var data searchData
	for i := range found {
		f := &found[i]
		credits += billing.SearchCost(len(f.results), req.ZDR)
		if req.Threat.Active() && len(req.Scrape.Formats) == 0 {
			// Each result's URL was scanned; a scraped result pays its
			// scan in its own credits.
			credits += int64(len(f.results)) * billing.CostThreatScan
		}
		for _, it := range f.items {
			if it.doc != nil {
				credits += int64(it.doc.Metadata.CreditsUsed)
			}
		}
		switch f.src.Type {
		case search.SourceWeb:
			data.Web = &f.items
		case search.SourceNews:
			data.News = &f.items
		case search.SourceImages:
			data.Images = &f.items
		}
	}
	if req.Catalog {
		tools := s.searchTools(req, found)
		data.Tools = &tools
	}
	s.charge(ctx, team, credits, "search")
	id := newSearchID()
	s.log.InfoContext(ctx, "search done", "request_id", requestIDFrom(ctx), "team_id", team.ID,
		"sources", len(found), "scraped", len(req.Scrape.Formats) > 0, "credits", credits)
	writeJSON(w, http.StatusOK, searchResponse{Success: true, Data: data, CreditsUsed: credits, ID: id, Warning: warning})
	return nil
}

func newSearchID() string {
	id, err := uuid.NewV7()
	if err != nil {
		id = uuid.New()
	}
	return id.String()
}

// searchCatalogAccess decides the catalog part of a search (the alexandria
// source, domainTools): kept for a team with catalog access; for one
// without, dropped with a warning when web, news or images are also asked
// (firecrawl-mcp asks for the catalog on every search), else refused.
func (s *Server) searchCatalogAccess(team auth.Team, req *searchRequest) (warning string, err error) {
	if !req.Catalog {
		return "", nil
	}
	err = s.catalogAccess(team)
	if err == nil && req.ZDR {
		err = errCatalogZDR
	}
	if err == nil {
		return "", nil
	}
	if len(req.Sources) == 0 {
		return "", err
	}
	req.Catalog, req.CatalogSource, req.DomainTools = false, false, false
	reason := "this server has no tool catalog"
	switch err {
	case errCatalogTeamNotEnabled:
		reason = "catalog access is not enabled for this team (an operator enables it with: server limits set --catalog)"
	case errCatalogZDR:
		reason = "catalog tools are not available under zero data retention"
	}
	return "The catalog part of this search (the alexandria source, domainTools) was left out: " + reason + ".", nil
}

// searchCatalogOnly answers a search of the alexandria source alone: the
// catalog's tools matching the query, free, without the search engine.
func (s *Server) searchCatalogOnly(w http.ResponseWriter, r *http.Request, team auth.Team, req searchRequest) error {
	ctx := r.Context()
	if err := s.rateLimited(ctx, team, limits.ClassSearch); err != nil {
		return err
	}
	s.recordActivity(r, team, "search", req.Query, req.Scrape.AuditMetadata, req.ZDR)
	tools := s.searchTools(req, nil)
	writeJSON(w, http.StatusOK, searchResponse{Success: true, Data: searchData{Tools: &tools}, ID: newSearchID()})
	return nil
}

// searchTools are data.tools of a search: the catalog's tools matching
// the query (the alexandria source) and those of the results' domains
// (domainTools), each once, at the request's toolDetail.
func (s *Server) searchTools(req searchRequest, found []sourceResults) []map[string]any {
	tools := []map[string]any{}
	seen := map[any]int{}
	add := func(item map[string]any, pageURL string) {
		if i, ok := seen[item["id"]]; ok {
			if pageURL != "" {
				prev := tools[i]
				prev["matchedBy"] = appendNew(prev["matchedBy"], "domain")
				prev["matchedUrls"] = appendNew(prev["matchedUrls"], pageURL)
			}
			return
		}
		seen[item["id"]] = len(tools)
		tools = append(tools, item)
	}
	if req.CatalogSource {
		for _, it := range s.catalog.MatchTools(req.Query, req.Limit) {
			add(it, "")
		}
	}
	if req.DomainTools {
		for _, f := range found {
			for _, res := range f.results {
				for _, it := range s.catalog.DomainTools(res.URL) {
					add(it, res.URL)
				}
			}
		}
	}
	for i, t := range tools {
		tools[i] = toolAtDetail(t, req.ToolDetail)
	}
	return tools
}

// appendNew adds s to a []string member unless it holds it.
func appendNew(v any, s string) []string {
	list, _ := v.([]string)
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// toolAtDetail cuts a discovered tool to a toolDetail: compact is what it
// is (provider, capability, description) and why it matched; summary adds
// its name, id and cost; full is the whole contract (options, execute).
func toolAtDetail(t map[string]any, detail string) map[string]any {
	if detail == "full" {
		return t
	}
	keep := []string{"provider", "capability", "description", "matchedBy", "matchedUrls"}
	if detail == "summary" {
		keep = append(keep, "id", "name", "creditsCost")
	}
	out := make(map[string]any, len(keep))
	for _, k := range keep {
		if v, ok := t[k]; ok {
			out[k] = v
		}
	}
	return out
}

// searchSources runs every source's query at once and builds their items.
func (s *Server) searchSources(ctx context.Context, req searchRequest) ([]sourceResults, error) {
	out := make([]sourceResults, len(req.Sources))
	errs := make([]error, len(req.Sources))
	var wg sync.WaitGroup
	for i, src := range req.Sources {
		wg.Go(func() {
			q := search.Query{Text: req.Query, Source: src.Type, Limit: req.Limit, Time: src.Time,
				Language: src.Language, Country: src.Country, Safe: req.Safe,
				IncludeDomains: req.IncludeDomains, ExcludeDomains: req.ExcludeDomains}
			if src.Type == search.SourceWeb {
				q.Categories = req.Categories
			}
			rs, err := s.searcher.Search(ctx, q)
			if err != nil {
				errs[i] = err
				return
			}
			if req.IgnoreInvalidURLs {
				rs = slices.DeleteFunc(rs, func(r search.Result) bool { _, ok := normalizeURL(r.URL); return !ok })
			}
			// Results on blocked hosts are left out (the server's blocklist
			// always, the request's threatProtection lists when given).
			rs = slices.DeleteFunc(rs, func(r search.Result) bool { return !s.threatAllows(req.Threat, r.URL) })
			out[i] = sourceResults{src: src, results: rs, items: make([]searchItem, len(rs))}
			for j, r := range rs {
				out[i].items[j] = searchItem{fields: resultFields(src.Type, r, j+1)}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err // the first failing source decides the answer
		}
	}
	return out, nil
}

// resultFields are r's fields as its source names them.
func resultFields(source string, r search.Result, position int) any {
	switch source {
	case search.SourceNews:
		f := newsFields{Title: r.Title, URL: r.URL, Snippet: r.Description, ImageURL: r.ImageURL, Position: position}
		if !r.Published.IsZero() {
			f.Date = r.Published.UTC().Format(time.RFC3339)
		}
		return f
	case search.SourceImages:
		return imageFields{Title: r.Title, ImageURL: r.ImageURL, ImageWidth: r.ImageWidth, ImageHeight: r.ImageHeight,
			URL: r.URL, Position: position}
	}
	return webFields{URL: r.URL, Title: r.Title, Description: r.Description, Position: position, Category: r.Category}
}

// scrapeResults scrapes every web and news result, at most
// maxSearchScrapes at once, within ctx's deadline. A result whose scrape
// fails keeps metadata.error; a request the engine cannot honour at all (a
// format or option this server does not support) fails the whole search.
func (s *Server) scrapeResults(ctx context.Context, team auth.Team, req searchRequest, found []sourceResults) error {
	parallel := maxSearchScrapes
	if l := s.concurrencyLimit(team); l > 0 {
		parallel = min(parallel, l)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i := range found {
		if found[i].src.Type == search.SourceImages {
			continue
		}
		for j := range found[i].items {
			it := &found[i].items[j]
			u := found[i].results[j].URL
			wg.Go(func() {
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
					it.failed = s.scrapeFailure(ctx, u, ctx.Err())
					return
				}
				defer func() { <-sem }()
				doc, err := s.scrapeResult(ctx, team, req.Scrape, u)
				if errcode.ClassOf(err) == errcode.Unsupported || errors.Is(err, scrape.ErrForbidden) {
					cancel(err)
					return
				}
				if err != nil {
					it.failed = s.scrapeFailure(ctx, u, err)
					return
				}
				it.doc = doc
			})
		}
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// scrapeResult scrapes one result URL with the search's scrape options,
// its timeout cut to what is left of the search's.
func (s *Server) scrapeResult(ctx context.Context, team auth.Team, base scrape.Options, rawURL string) (*scrape.Document, error) {
	u, ok := normalizeURL(rawURL)
	if !ok {
		return nil, errSearchResultURL
	}
	opts := base
	opts.URL, opts.TeamID = u, team.ID
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		if left <= 0 {
			return nil, scrape.ErrTimeout
		}
		opts.Timeout = min(opts.Timeout, left)
	}
	doc, err := s.scraper.Scrape(ctx, opts)
	if err != nil && ctx.Err() != nil && !errors.Is(err, scrape.ErrTimeout) {
		err = fmt.Errorf("%w: %w", scrape.ErrTimeout, err)
	}
	return doc, err
}

// errSearchResultURL is the scrape failure of a result whose URL this
// server does not fetch (not http(s), no real host).
var errSearchResultURL = &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: msgInvalidURL}

// scrapeFailure is the metadata of a result whose scrape failed with err.
func (s *Server) scrapeFailure(ctx context.Context, u string, err error) *searchFailure {
	if errors.Is(err, context.DeadlineExceeded) {
		err = scrape.ErrTimeout
	}
	code, msg := s.describe(ctx, err)
	return &searchFailure{SourceURL: u, URL: u, Error: msg, Code: code}
}
