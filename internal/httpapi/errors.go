package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/firegate/firegate/internal/auth"
	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/interact"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/media"
	"github.com/firegate/firegate/internal/monitor"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/search"
)

// mapping is one row of the error table: a domain error and what the API
// answers for it. Message "" means: use the wrapped error's text.
type mapping struct {
	target  error
	status  int
	code    string
	message string
}

// errorTable is the only place domain errors become HTTP statuses, codes and
// messages. Order matters: the first row whose target matches wins.
var errorTable = []mapping{
	{auth.ErrInvalidKey, http.StatusUnauthorized, "UNAUTHORIZED", "Unauthorized: Invalid token"},
	{billing.ErrInsufficientCredits, http.StatusPaymentRequired, "insufficient_credits", "Payment Required: Insufficient credits"},
	{billing.ErrUnavailable, http.StatusServiceUnavailable, "billing_unavailable", "Service Unavailable: credits could not be checked or charged; retry later"},
	{limits.ErrConcurrencyTimeout, http.StatusTooManyRequests, "CONCURRENCY_LIMIT_REACHED", "Concurrency limit reached"},
	{media.ErrQuotaExceeded, http.StatusTooManyRequests, "MEDIA_QUOTA_EXCEEDED", "Media quota exceeded: this team's stored screenshots and PDFs reach its quota. They are kept 24 hours; retry once older ones have expired."},
	{scrape.ErrTimeout, http.StatusRequestTimeout, "SCRAPE_TIMEOUT", "Request timed out: the scrape took longer than the timeout. Raise timeout or simplify the request."},
	{scrape.ErrNoCachedData, http.StatusNotFound, "SCRAPE_NO_CACHED_DATA", "No cached data is available for this URL that satisfies minAge."},
	{scrape.ErrLockdownCacheMiss, http.StatusNotFound, "SCRAPE_LOCKDOWN_CACHE_MISS", "Lockdown mode: no cached data is available for this URL, and no request was made to it."},
	{scrape.ErrForbidden, http.StatusForbidden, "FORBIDDEN", ""},
	{scrape.ErrBlockedTarget, http.StatusForbidden, "SCRAPE_TARGET_NOT_ALLOWED", ""},
	{scrape.ErrUnsafeDomain, http.StatusForbidden, "unsafe_domain_blocked", ""},
	{scrape.ErrDNSResolution, http.StatusOK, "SCRAPE_DNS_RESOLUTION_ERROR", ""},
	{scrape.ErrProfileBusy, http.StatusConflict, "PROFILE_IN_USE", ""},
	{scrape.ErrUnsupportedFileType, http.StatusBadRequest, "UNSUPPORTED_FILE_TYPE", ""},
	{scrape.ErrPDFInsufficientTime, http.StatusInternalServerError, "SCRAPE_PDF_INSUFFICIENT_TIME_ERROR", ""},
	{scrape.ErrPDFTooLarge, http.StatusUnprocessableEntity, "SCRAPE_PDF_TOO_LARGE", ""},
	{scrape.ErrFileTooLarge, http.StatusUnprocessableEntity, "SCRAPE_FILE_TOO_LARGE", ""},
	{scrape.ErrAction, http.StatusInternalServerError, "SCRAPE_ACTION_ERROR", ""},
	{scrape.ErrSSL, http.StatusInternalServerError, "SCRAPE_SSL_ERROR", ""},
	{scrape.ErrUnsupportedFile, http.StatusInternalServerError, "SCRAPE_UNSUPPORTED_FILE_ERROR", ""},
	{scrape.ErrSite, http.StatusInternalServerError, "SCRAPE_SITE_ERROR", ""},
	{scrape.ErrInvalidSchema, http.StatusUnprocessableEntity, "SCRAPE_JSON_SCHEMA_INVALID", ""},
	{scrape.ErrLLMUnavailable, http.StatusBadGateway, "SCRAPE_LLM_UNAVAILABLE", ""},
	{scrape.ErrPromptInjection, http.StatusForbidden, "SCRAPE_PROMPT_INJECTION_DETECTED", ""},
	{crawl.ErrTimeout, http.StatusRequestTimeout, "MAP_TIMEOUT", "The map operation timed out before it finished. Raise timeout, lower limit, or set sitemap to skip or only."},
	{crawl.ErrBlocked, http.StatusForbidden, "MAP_TARGET_NOT_ALLOWED", "Forbidden: the URL resolves to a private or otherwise non-public address, which this server does not fetch."},
	{crawl.ErrUnreachable, http.StatusInternalServerError, "MAP_FAILED", "Map failed: the start URL could not be fetched and no sitemap of the site listed any URL."},
	{crawl.ErrInvalidOptions, http.StatusBadRequest, "BAD_REQUEST", ""},
	{monitor.ErrNotFound, http.StatusNotFound, "NOT_FOUND", "Monitor not found"},
	{monitor.ErrCheckNotFound, http.StatusNotFound, "NOT_FOUND", "Check not found"},
	{monitor.ErrGoalRequired, http.StatusBadRequest, "BAD_REQUEST", "goal is required when the monitor has a search target"},
	{monitor.ErrPaused, http.StatusConflict, "MONITOR_PAUSED", "Monitor is paused: set its status to active to run it"},
	{interact.ErrNotFound, http.StatusNotFound, "NOT_FOUND", "Browser session not found."},
	{interact.ErrDestroyed, http.StatusGone, "SESSION_DESTROYED", "Browser session has been destroyed."},
	{interact.ErrTooMany, http.StatusTooManyRequests, "TOO_MANY_SESSIONS", ""},
	{interact.ErrElsewhere, http.StatusConflict, "SESSION_ON_OTHER_SERVER", "Conflict: this browser session is held by another server process; send its requests to that process (sessions are not shared between replicas)."},
	{interact.ErrProfileBusy, http.StatusConflict, "PROFILE_IN_USE", ""},
	{interact.ErrLanguage, http.StatusBadRequest, "INTERACT_LANGUAGE_NOT_SUPPORTED", ""},
	{interact.ErrReplay, http.StatusBadGateway, "INTERACT_REPLAY_FAILED", ""},
	{interact.ErrNoModel, http.StatusBadRequest, "SCRAPE_LLM_NOT_CONFIGURED", "prompt-driven interaction needs a language model, and this server has none configured (set OPENAI_BASE_URL and MODEL_NAME); send code instead"},
	{interact.ErrUnavailable, http.StatusBadGateway, "BROWSER_UNAVAILABLE", ""},
	{search.ErrNotConfigured, http.StatusBadRequest, "SEARCH_NOT_CONFIGURED", "Search is not configured on this server: set SEARXNG_ENDPOINT to the URL of a SearXNG instance with the JSON format enabled (the compose file's search profile runs one)."},
	{search.ErrTimeout, http.StatusRequestTimeout, "SCRAPE_TIMEOUT", "Request timed out: the search engine did not answer within timeout. Raise timeout or retry."},
	{search.ErrNoEngines, http.StatusBadGateway, "SEARCH_ENGINE_UNAVAILABLE", ""},
	{search.ErrEngine, http.StatusBadGateway, "SEARCH_ENGINE_ERROR", ""},
}

// toAPIError turns any error into the envelope to render. Unknown errors
// become 500 UNKNOWN_ERROR; the caller logs them with the returned id.
func toAPIError(err error) *Error {
	var apiErr *Error
	if errors.As(err, &apiErr) {
		return apiErr
	}
	var fe *scrape.FeatureError
	if errors.As(err, &fe) {
		return &Error{Status: http.StatusBadRequest, Code: fe.Code, Message: fe.Reason,
			Details: []FieldError{{Path: []any{fe.Feature}, Message: fe.Reason, Code: "not_supported"}}, err: err}
	}
	for _, m := range errorTable {
		if errors.Is(err, m.target) {
			msg := m.message
			if msg == "" {
				msg = userMessage(err)
			}
			return &Error{Status: m.status, Code: m.code, Message: msg, err: err}
		}
	}
	if errors.Is(err, context.Canceled) {
		// The client went away; 499 is never seen by it, only logged.
		return &Error{Status: 499, Code: "CLIENT_CLOSED_REQUEST", Message: "Client closed request", err: err}
	}
	return &Error{Status: http.StatusInternalServerError, Code: "UNKNOWN_ERROR", err: err}
}

// userMessage is the text for the API user: a *scrape.Failure carries one
// written for them; other errors show their own text.
func userMessage(err error) string {
	var f *scrape.Failure
	if errors.As(err, &f) {
		return f.Msg
	}
	return err.Error()
}

// Describe gives the API error code and message of err as this table maps
// it, for errors reported outside a response (the failed pages of a crawl).
func Describe(err error) (code, message string) {
	e := toAPIError(err)
	if e.Message == "" {
		return e.Code, err.Error()
	}
	return e.Code, e.Message
}
