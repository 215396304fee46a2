package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/auth"
	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/crawljob"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/logsafe"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/webhook"
)

// Jobs starts and cancels crawls and batch scrapes; *crawljob.Runner
// implements it.
type Jobs interface {
	StartCrawl(ctx context.Context, j store.Job, o crawljob.JobOptions) error
	StartBatch(ctx context.Context, j store.Job, o crawljob.JobOptions, urls []string) error
	AppendBatch(ctx context.Context, teamID, id string, urls []string) error
	Cancel(ctx context.Context, teamID, id string) error
}

// Bounds and messages of the crawl body (reference §5.5).
const (
	defaultCrawlLimit  = 10000
	maxCrawlDelay      = 60
	maxPromptChars     = 10000
	msgCrawlDelay      = "The delay parameter is measured in seconds and cannot exceed 60 seconds."
	msgPromptNoLLM     = "prompt needs an LLM to turn it into crawl options, and this server has none configured. Send the crawl options (includePaths, limit, ...) instead."
	defaultStatusLimit = 100
	maxStatusBytes     = 10 << 20
)

// crawlRequest is a decoded, validated POST /v2/crawl body.
type crawlRequest struct {
	URL     string
	Limit   int
	Options crawljob.JobOptions
	ZDR     bool
	Prompt  string
}

// isCrawlRequestKey reports whether k is a top-level key of POST /v2/crawl.
func isCrawlRequestKey(k string) bool {
	switch k {
	case "url", "prompt", "includePaths", "excludePaths", "regexOnFullURL", "maxDiscoveryDepth",
		"limit", "sitemap", "crawlEntireDomain", "allowSubdomains", "allowExternalLinks",
		"ignoreRobotsTxt", "robotsUserAgent", "deduplicateSimilarURLs", "ignoreQueryParameters",
		"delay", "maxConcurrency", "scrapeOptions", "webhook", "zeroDataRetention", "origin", "integration":
		return true
	}
	return false
}

func (v *validator) crawlRequest(m jsonObject) crawlRequest {
	v.checkKeys(nil, m, isCrawlRequestKey)
	var req crawlRequest
	origin, integration := v.bookkeeping(nil, m)
	req.URL = v.url(nil, m)
	if present(m, "prompt") {
		req.Prompt, _ = v.strLen([]any{"prompt"}, m.get("prompt"), 0, maxPromptChars)
	}
	o := &req.Options
	rules := &o.Rules
	rules.IncludePaths = v.pathPatterns(nil, m, "includePaths")
	rules.ExcludePaths = v.pathPatterns(nil, m, "excludePaths")
	rules.RegexOnFullURL = v.optBool(nil, m, "regexOnFullURL", false)
	if d, ok := v.optInt(nil, m, "maxDiscoveryDepth", 0, math.MaxInt32); ok {
		depth := int(d)
		rules.MaxDiscoveryDepth = &depth
	}
	req.Limit = defaultCrawlLimit
	if n, ok := v.optInt(nil, m, "limit", 1, math.MaxInt32); ok {
		req.Limit = int(n)
	}
	o.Sitemap = crawl.SitemapMode(v.optEnum(nil, m, "sitemap", "include", "include", "skip", "only"))
	rules.CrawlEntireDomain = v.optBool(nil, m, "crawlEntireDomain", false)
	rules.AllowSubdomains = v.optBool(nil, m, "allowSubdomains", false)
	rules.AllowExternalLinks = v.optBool(nil, m, "allowExternalLinks", false)
	o.IgnoreRobots = v.optBool(nil, m, "ignoreRobotsTxt", false)
	v.optString(nil, m, "robotsUserAgent")
	rules.DeduplicateSimilarURLs = v.optBool(nil, m, "deduplicateSimilarURLs", true)
	rules.IgnoreQueryParameters = v.optBool(nil, m, "ignoreQueryParameters", false)
	o.Delay = v.delaySeconds(m)
	if n, ok := v.optInt(nil, m, "maxConcurrency", 1, math.MaxInt32); ok {
		o.MaxConcurrency = int(n)
	}
	if present(m, "scrapeOptions") {
		o.Scrape = v.nestedScrapeOptions([]any{"scrapeOptions"}, m.get("scrapeOptions"))
	} else {
		o.Scrape = v.scrapeOptions([]any{"scrapeOptions"}, nil)
	}
	o.Scrape.Origin, o.Scrape.Integration = origin, integration
	// Zero data retention asked for at the top or in scrapeOptions: either
	// needs the team's permission.
	o.Scrape.ZeroDataRetention = o.Scrape.ZeroDataRetention || v.optBool(nil, m, "zeroDataRetention", false)
	req.ZDR = o.Scrape.ZeroDataRetention
	o.Webhook = v.webhook(m)
	if !v.failed() && req.URL != "" {
		if _, err := crawl.NewRules(req.URL, *rules); err != nil {
			v.addCustom([]any{"includePaths"}, codeInvalidString, err.Error())
		}
	}
	return req
}

// delaySeconds reads the optional delay (seconds, > 0, <= 60).
func (v *validator) delaySeconds(m jsonObject) time.Duration {
	if !present(m, "delay") {
		return 0
	}
	f, ok := v.number([]any{"delay"}, m.get("delay"))
	switch {
	case !ok:
	case f <= 0:
		v.add([]any{"delay"}, codeTooSmall, "Number must be greater than 0")
	case f > maxCrawlDelay:
		v.addCustom([]any{"delay"}, codeTooBig, msgCrawlDelay)
	default:
		return time.Duration(f * float64(time.Second))
	}
	return 0
}

// webhook reads the optional webhook (a URL string or an object).
func (v *validator) webhook(m jsonObject) *webhook.Spec {
	if !present(m, "webhook") {
		return nil
	}
	spec, err := webhook.ParseSpec(m.get("webhook"))
	if err != nil {
		var se *webhook.SpecError
		path := []any{"webhook"}
		if errors.As(err, &se) {
			v.addCustom(path, codeCustom, se.Error())
		} else {
			v.addCustom(path, codeCustom, err.Error())
		}
		return nil
	}
	return &spec
}

// startResponse is the body of a started crawl or batch.
type startResponse struct {
	Success     bool     `json:"success"`
	ID          string   `json:"id"`
	URL         string   `json:"url"`
	InvalidURLs []string `json:"invalidURLs,omitzero"` // nil: absent; empty: []
	// With a crawl prompt: what the model derived, and the options used
	// (the caller's own fields win).
	PromptGeneratedOptions json.RawMessage `json:"promptGeneratedOptions,omitempty"`
	FinalCrawlerOptions    json.RawMessage `json:"finalCrawlerOptions,omitempty"`
	// Warning says the crawl's limit was lowered to the remaining credits.
	Warning string `json:"warning,omitempty"`
}

// handleCrawl serves POST /v2/crawl.
func (s *Server) handleCrawl(w http.ResponseWriter, r *http.Request) error {
	if s.jobs == nil {
		return handleNotImplemented(w, r)
	}
	fields, apiErr := readJSONObject(r.Body)
	if apiErr != nil {
		return apiErr
	}
	var v validator
	req := v.crawlRequest(fields)
	if err := v.err(); err != nil {
		return err
	}
	ctx := r.Context()
	var generated json.RawMessage
	if req.Prompt != "" {
		if s.model == nil {
			return &Error{Status: http.StatusBadRequest, Code: "CRAWL_PROMPT_NOT_SUPPORTED", Message: msgPromptNoLLM,
				Details: []FieldError{{Path: []any{"prompt"}, Message: msgPromptNoLLM, Code: "not_supported"}}}
		}
		gen, raw, err := s.crawlOptionsFromPrompt(ctx, req.URL, req.Prompt)
		if err != nil {
			return err
		}
		var v validator
		req = v.crawlRequest(mergeUnder(fields, gen))
		if err := v.err(); err != nil {
			return err
		}
		generated = raw
	}
	team := teamFrom(ctx)
	if err := applyTeamZDR(team, &req.ZDR); err != nil {
		return err
	}
	req.Options.Scrape.ZeroDataRetention = req.ZDR
	if !req.ZDR && !req.Options.Scrape.ZeroDataRetention {
		noteTargetURL(ctx, req.URL)
	}
	if err := s.checkTargets(req.Options.Scrape.ThreatProtection, req.URL); err != nil {
		return err
	}
	idem, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	if err := s.rateLimited(ctx, team, limits.ClassCrawl); err != nil {
		return err
	}
	s.recordActivity(r, team, "crawl", req.URL, req.Options.Scrape.AuditMetadata, req.ZDR || req.Options.Scrape.ZeroDataRetention)
	if err := s.checkCredits(ctx, team, 1); err != nil {
		return err
	}
	limit, remaining, err := s.clampToCredits(ctx, team, req.Limit)
	if err != nil {
		return err
	}
	req.Options.TeamConcurrency = s.concurrencyLimit(team)
	if req.Options.MaxConcurrency > 0 && req.Options.TeamConcurrency > 0 {
		req.Options.MaxConcurrency = min(req.Options.MaxConcurrency, req.Options.TeamConcurrency)
	}
	req.Options.Request = crawlEcho(req)
	id := crawljob.NewJobID()
	job := store.Job{ID: id, TeamID: team.ID, APIKeyID: team.APIKeyID, URL: req.URL, Limit: limit,
		ZeroDataRetention: req.ZDR, IdempotencyKey: idem}
	if err := s.jobs.StartCrawl(ctx, job, req.Options); errors.Is(err, crawljob.ErrIdempotencyKeyUsed) {
		return errIdempotencyKeyUsed
	} else if err != nil {
		return err
	}
	s.log.InfoContext(ctx, "crawl queued", "request_id", requestIDFrom(ctx), "team_id", team.ID, "job_id", id,
		"url", logURL(req.URL, req.ZDR), "limit", limit)
	resp := startResponse{Success: true, ID: id, URL: s.baseURL(r) + "/v2/crawl/" + id}
	if limit < req.Limit {
		resp.Warning = clampWarning(req.Limit, limit, remaining)
		s.log.InfoContext(ctx, "crawl limit lowered to the remaining credits", "request_id", requestIDFrom(ctx),
			"team_id", team.ID, "job_id", id, "requested_limit", req.Limit, "limit", limit)
	}
	if generated != nil {
		resp.PromptGeneratedOptions, resp.FinalCrawlerOptions = generated, req.Options.Request
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// logURL is the URL as logged: hidden under zero data retention.
func logURL(u string, zdr bool) string {
	if zdr {
		return ""
	}
	return logsafe.URL(u)
}

// crawlEcho is the crawler options as GET /v2/crawl/active shows them.
func crawlEcho(req crawlRequest) json.RawMessage {
	rules := req.Options.Rules
	echo := map[string]any{
		"includePaths": nonNil(rules.IncludePaths), "excludePaths": nonNil(rules.ExcludePaths),
		"regexOnFullURL": rules.RegexOnFullURL, "limit": req.Limit, "sitemap": sitemapName(req.Options.Sitemap),
		"crawlEntireDomain": rules.CrawlEntireDomain, "allowSubdomains": rules.AllowSubdomains,
		"allowExternalLinks": rules.AllowExternalLinks, "ignoreRobotsTxt": req.Options.IgnoreRobots,
		"deduplicateSimilarURLs": rules.DeduplicateSimilarURLs, "ignoreQueryParameters": rules.IgnoreQueryParameters,
	}
	if rules.MaxDiscoveryDepth != nil {
		echo["maxDiscoveryDepth"] = *rules.MaxDiscoveryDepth
	}
	if req.Options.Delay > 0 {
		echo["delay"] = req.Options.Delay.Seconds()
	}
	if req.Options.MaxConcurrency > 0 {
		echo["maxConcurrency"] = req.Options.MaxConcurrency
	}
	b, _ := json.Marshal(echo) // cannot fail: strings, string slices, ints, floats of durations and bools
	return b
}

func sitemapName(m crawl.SitemapMode) string {
	if m == "" {
		return string(crawl.SitemapInclude)
	}
	return string(m)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// idempotencyKey reads the optional x-idempotency-key header, which must be
// a UUID (409, as for a reused key, otherwise).
func idempotencyKey(r *http.Request) (string, error) {
	k := r.Header.Get("x-idempotency-key")
	if k == "" {
		return "", nil
	}
	if _, err := uuid.Parse(k); err != nil {
		return "", errIdempotencyKeyUsed
	}
	return k, nil
}

var errIdempotencyKeyUsed = &Error{Status: http.StatusConflict, Code: "IDEMPOTENCY_KEY_USED", Message: "Idempotency key already used"}

// clampToCredits lowers a crawl limit to the team's remaining credits. It
// returns the limit to use and the credits remaining (-1 when the team is
// unlimited).
func (s *Server) clampToCredits(ctx context.Context, t auth.Team, limit int) (int, int64, error) {
	if s.ledger == nil || t.Unlimited {
		return limit, -1, nil
	}
	cur, err := s.ledger.Current(ctx, t.ID)
	if err != nil {
		return 0, 0, err
	}
	if cur.Balance.Unlimited {
		return limit, -1, nil
	}
	return int(max(1, min(int64(limit), cur.Balance.Remaining))), cur.Balance.Remaining, nil
}

// clampWarning is the warning of a crawl whose limit was lowered from asked
// to limit because the team had remaining credits left.
func clampWarning(asked, limit int, remaining int64) string {
	return fmt.Sprintf("The crawl limit was lowered from %d to %d pages: the team had %d credits remaining "+
		"(1 credit per page at least). Add credits to crawl more.", asked, limit, remaining)
}

// startClampWarning is clampWarning for a stored crawl: its limit below the
// one it was asked for (the echo of its request) means it was clamped.
func startClampWarning(j store.Job) string {
	if j.Limit <= 0 {
		return ""
	}
	var o crawljob.JobOptions
	if json.Unmarshal(j.Options, &o) != nil {
		return ""
	}
	var echo struct {
		Limit int `json:"limit"`
	}
	if json.Unmarshal(o.Request, &echo) != nil || echo.Limit <= j.Limit {
		return ""
	}
	return fmt.Sprintf("The crawl limit was lowered from %d to %d pages: the team's remaining credits when it started. "+
		"Add credits to crawl more.", echo.Limit, j.Limit)
}

// baseURL is this server's public base URL, for the url of started jobs.
func (s *Server) baseURL(r *http.Request) string {
	if s.publicURL != "" {
		return s.publicURL
	}
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// ownJob counts a status read against the caller's rate limit and loads
// the job at the route's id for the caller's team: 400 for an id that is
// not a UUID, 404 for an unknown job, one of another kind or another
// team's, 404 "Job expired" past its expiry.
func (s *Server) ownJob(r *http.Request, kind string) (store.Job, error) {
	if err := s.rateLimited(r.Context(), teamFrom(r.Context()), limits.ClassStatus); err != nil {
		return store.Job{}, err
	}
	id := chi.URLParam(r, "id")
	if _, err := uuid.Parse(id); err != nil {
		return store.Job{}, errInvalidJobID
	}
	j, err := s.jobStore.Job(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && j.Kind != kind) {
		return store.Job{}, errCrawlNotFound
	}
	if err != nil {
		return store.Job{}, err
	}
	if j.TeamID != teamFrom(r.Context()).ID {
		return store.Job{}, errCrawlNotFound
	}
	if !j.ExpiresAt.IsZero() && time.Now().After(j.ExpiresAt) {
		return store.Job{}, errJobExpired
	}
	return j, nil
}

var (
	errCrawlNotFound  = &Error{Status: http.StatusNotFound, Code: "NOT_FOUND", Message: "Job not found"}
	errJobExpired     = &Error{Status: http.StatusNotFound, Code: "NOT_FOUND", Message: "Job expired"}
	errCrawlCompleted = &Error{Status: http.StatusConflict, Code: "CONFLICT", Message: "Crawl is already completed"}
)

// statusResponse is the body of GET /v2/crawl/{id} and
// GET /v2/batch/scrape/{id}.
type statusResponse struct {
	Success     bool              `json:"success"`
	Status      string            `json:"status"`
	Error       string            `json:"error,omitempty"`
	Total       int               `json:"total"`
	Completed   int               `json:"completed"`
	CreditsUsed int64             `json:"creditsUsed"`
	ExpiresAt   string            `json:"expiresAt"`
	CreatedAt   string            `json:"createdAt"`
	CompletedAt string            `json:"completedAt,omitempty"`
	Duration    float64           `json:"duration"`
	Next        string            `json:"next,omitempty"`
	Warning     string            `json:"warning,omitempty"`
	Data        []json.RawMessage `json:"data"`
}

// jobStatus builds the status body of j with the page of documents from
// skip, at most limit documents and maxStatusBytes of them.
func (s *Server) jobStatus(ctx context.Context, r *http.Request, j store.Job, skip, limit int) (statusResponse, error) {
	docs, err := s.jobStore.Documents(ctx, j.ID, skip, limit+1)
	if err != nil {
		return statusResponse{}, err
	}
	more := len(docs) > limit
	docs = docs[:min(len(docs), limit)]
	size := 0
	for i, d := range docs {
		size += len(d)
		if size > maxStatusBytes && i > 0 {
			docs, more = docs[:i], true
			break
		}
	}
	resp := statusResponse{
		Success: true, Status: j.Status, Total: j.Total, Completed: j.Completed, CreditsUsed: j.CreditsUsed,
		ExpiresAt: isoTime(j.ExpiresAt), CreatedAt: isoTime(j.CreatedAt), Data: make([]json.RawMessage, len(docs)),
	}
	for i, d := range docs {
		resp.Data[i] = d
	}
	end := time.Now()
	if j.CompletedAt != nil {
		resp.CompletedAt = isoTime(*j.CompletedAt)
		end = *j.CompletedAt
	}
	resp.Duration = math.Round(end.Sub(j.CreatedAt).Seconds()*1000) / 1000
	if j.Status == store.JobFailed {
		// The reference's failed form: no counts, no duration.
		resp.Success, resp.Error = false, j.Error
		resp.Total, resp.Completed, resp.Duration = 0, 0, 0
		if resp.Error == "" {
			resp.Error = "The crawl failed."
		}
	}
	terminal := j.Status != store.JobScraping
	if more || (!terminal && len(docs) > 0) {
		next := s.baseURL(r) + r.URL.Path + "?skip=" + strconv.Itoa(skip+len(docs))
		if r.URL.Query().Get("limit") != "" {
			next += "&limit=" + strconv.Itoa(limit)
		}
		resp.Next = next
	}
	if j.Kind == store.JobCrawl {
		var warnings []string
		if w := startClampWarning(j); w != "" {
			warnings = append(warnings, w)
		}
		if terminal {
			if w := s.crawlWarning(ctx, j); w != "" {
				warnings = append(warnings, w)
			}
		}
		resp.Warning = strings.Join(warnings, " ")
	}
	return resp, nil
}

// crawlWarning is the reference's hint for a finished crawl: URLs robots.txt
// blocked, or at most one page found from a start URL below the site root.
func (s *Server) crawlWarning(ctx context.Context, j store.Job) string {
	blocked, err := s.jobStore.RobotsBlocked(ctx, j.ID)
	if err == nil && len(blocked) > 0 {
		return "Some URLs were blocked by robots.txt (" + strconv.Itoa(len(blocked)) +
			"; see GET /v2/crawl/" + j.ID + "/errors). Use /scrape for a page you are allowed to fetch."
	}
	if u, err := url.Parse(j.URL); err == nil && j.Documents <= 1 && strings.Trim(u.Path, "/") != "" {
		root := u.Scheme + "://" + u.Host + "/"
		return "Only " + strconv.Itoa(j.Documents) + " result(s) found. For more results, try crawlEntireDomain=true " +
			"or a higher-level path like " + root
	}
	return ""
}

func isoTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// pageParams reads the skip and limit query parameters of a status request.
func pageParams(r *http.Request) (skip, limit int, err error) {
	q := r.URL.Query()
	limit = defaultStatusLimit
	if v := q.Get("skip"); v != "" {
		n, convErr := strconv.Atoi(v)
		if convErr != nil || n < 0 {
			return 0, 0, badQuery("skip", "skip must be a non-negative integer")
		}
		skip = n
	}
	if v := q.Get("limit"); v != "" {
		n, convErr := strconv.Atoi(v)
		if convErr != nil || n < 1 {
			return 0, 0, badQuery("limit", "limit must be a positive integer")
		}
		limit = min(n, 10000)
	}
	return skip, limit, nil
}

func badQuery(field, msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: msg,
		Details: []FieldError{{Path: []any{field}, Message: msg, Code: codeCustom}}}
}

// handleJobStatus serves GET /v2/crawl/{id} and GET /v2/batch/scrape/{id}
// (a WebSocket upgrade request is handed to the watcher).
func (s *Server) handleJobStatus(kind string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		skip, limit, err := pageParams(r)
		if err != nil {
			return err
		}
		j, err := s.ownJob(r, kind)
		if err != nil {
			return err
		}
		resp, err := s.jobStatus(ctx, r, j, skip, limit)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, resp)
		return nil
	}
}

// handleJobCancel serves DELETE /v2/crawl/{id} and /v2/batch/scrape/{id}.
func (s *Server) handleJobCancel(kind string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		j, err := s.ownJob(r, kind)
		if err != nil {
			return err
		}
		switch err := s.jobs.Cancel(ctx, j.TeamID, j.ID); {
		case errors.Is(err, crawljob.ErrJobNotFound):
			return errCrawlNotFound
		case errors.Is(err, crawljob.ErrJobFinished):
			return errCrawlCompleted
		case err != nil:
			return err
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "cancelled"})
		return nil
	}
}

// errorsResponse is the body of GET /v2/crawl/{id}/errors.
type errorsResponse struct {
	Errors        []jobErrorItem `json:"errors"`
	RobotsBlocked []string       `json:"robotsBlocked"`
}

type jobErrorItem struct {
	ID        string `json:"id"`
	Timestamp string `json:"timestamp,omitempty"`
	URL       string `json:"url"`
	Code      string `json:"code,omitempty"`
	Error     string `json:"error"`
}

// handleJobErrors serves GET /v2/crawl/{id}/errors and the batch twin.
func (s *Server) handleJobErrors(kind string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		j, err := s.ownJob(r, kind)
		if errors.Is(err, errInvalidJobID) && kind == store.JobBatch {
			// The reference checks no id format on this one route: an id
			// that is not a UUID is simply not found.
			err = errCrawlNotFound
		}
		if err != nil {
			return err
		}
		errs, err := s.jobStore.JobErrors(ctx, j.ID)
		if err != nil {
			return err
		}
		blocked, err := s.jobStore.RobotsBlocked(ctx, j.ID)
		if err != nil {
			return err
		}
		resp := errorsResponse{Errors: make([]jobErrorItem, len(errs)), RobotsBlocked: nonNil(blocked)}
		for i, e := range errs {
			resp.Errors[i] = jobErrorItem{ID: e.ID, Timestamp: isoTime(e.CreatedAt), URL: e.URL, Code: e.Code, Error: e.Error}
		}
		writeJSON(w, http.StatusOK, resp)
		return nil
	}
}

// activeCrawl is one item of GET /v2/crawl/active.
type activeCrawl struct {
	ID        string          `json:"id"`
	TeamID    string          `json:"teamId"`
	URL       string          `json:"url"`
	CreatedAt string          `json:"created_at"`
	Options   json.RawMessage `json:"options"`
}

// handleActiveCrawls serves GET /v2/crawl/active (and /ongoing).
func (s *Server) handleActiveCrawls(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	team := teamFrom(ctx)
	if err := s.rateLimited(ctx, team, limits.ClassStatus); err != nil {
		return err
	}
	jobs, err := s.jobStore.ActiveJobs(ctx, team.ID, store.JobCrawl)
	if err != nil {
		return err
	}
	out := make([]activeCrawl, 0, len(jobs))
	for _, j := range jobs {
		// A stored row this server cannot read is logged, and its crawl is
		// still listed: with the options read so far, or none.
		var o crawljob.JobOptions
		if err := json.Unmarshal(j.Options, &o); err != nil {
			s.log.WarnContext(ctx, "active crawls: read job options", "request_id", requestIDFrom(ctx), "job_id", j.ID, "err", err)
		}
		var opts map[string]json.RawMessage
		if len(o.Request) > 0 {
			if err := json.Unmarshal(o.Request, &opts); err != nil {
				s.log.WarnContext(ctx, "active crawls: read crawl options", "request_id", requestIDFrom(ctx), "job_id", j.ID, "err", err)
			}
		}
		if opts == nil {
			opts = map[string]json.RawMessage{}
		}
		// Cannot fail: scrapeOptionsEcho holds strings, ints and bools, and
		// opts raw values decoded from JSON.
		so, _ := json.Marshal(scrapeOptionsEcho(o))
		opts["scrapeOptions"] = so
		raw, _ := json.Marshal(opts)
		out = append(out, activeCrawl{ID: j.ID, TeamID: j.TeamID, URL: j.URL, CreatedAt: isoTime(j.CreatedAt), Options: raw})
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "crawls": out})
	return nil
}

// scrapeOptionsEcho is a crawl's scrape options as the API names them (the
// common ones; the full set is what the crawl was started with).
func scrapeOptionsEcho(o crawljob.JobOptions) map[string]any {
	so := o.Scrape
	formats := make([]string, len(so.Formats))
	for i, f := range so.Formats {
		formats[i] = f.Type
	}
	return map[string]any{
		"formats": formats, "onlyMainContent": so.OnlyMainContent, "waitFor": so.WaitFor.Milliseconds(),
		"mobile": so.Mobile, "timeout": so.Timeout.Milliseconds(), "removeBase64Images": so.RemoveBase64Images,
		"blockAds": so.BlockAds, "storeInCache": so.StoreInCache, "maxAge": so.MaxAge.Milliseconds(),
	}
}

// jobRoutes registers the crawl and batch scrape routes.
func (s *Server) jobRoutes(r chi.Router) {
	r.Post("/crawl", s.handle(s.handleCrawl))
	r.Post("/crawl/params-preview", s.handle(s.handleParamsPreview))
	r.Get("/crawl/active", s.handle(s.handleActiveCrawls))
	r.Get("/crawl/ongoing", s.handle(s.handleActiveCrawls))
	r.Get("/crawl/{id}", s.statusOrWatch(store.JobCrawl))
	r.Delete("/crawl/{id}", s.handle(s.handleJobCancel(store.JobCrawl)))
	r.Get("/crawl/{id}/errors", s.handle(s.handleJobErrors(store.JobCrawl)))
	r.Post("/batch/scrape", s.handle(s.handleBatchScrape))
	r.Get("/batch/scrape/{id}", s.statusOrWatch(store.JobBatch))
	r.Delete("/batch/scrape/{id}", s.handle(s.handleJobCancel(store.JobBatch)))
	r.Get("/batch/scrape/{id}/errors", s.handle(s.handleJobErrors(store.JobBatch)))
	r.Post("/extract", s.handle(s.handleExtract))
	r.Get("/extract/{id}", s.handle(s.handleExtractStatus))
}

// isJobRoute reports whether a notImplemented pattern is served by
// jobRoutes.
func isJobRoute(p string) bool {
	return strings.HasPrefix(p, "/crawl") || strings.HasPrefix(p, "/batch/scrape") || strings.HasPrefix(p, "/extract")
}

// statusOrWatch serves a job's status, or its watcher for a WebSocket
// upgrade.
func (s *Server) statusOrWatch(kind string) http.HandlerFunc {
	status := s.handle(s.handleJobStatus(kind))
	return func(w http.ResponseWriter, r *http.Request) {
		if isWebSocket(r) {
			s.watch(w, r, kind)
			return
		}
		status(w, r)
	}
}
