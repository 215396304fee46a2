package scrape

import (
	"fmt"

	"github.com/firegate/firegate/internal/errcode"
)

// Sentinel errors of the engine, with what the API answers for each; wrap
// them with %w to add detail. Those without a message of their own show a
// Failure's Msg, or the detail their wrapping adds after their lead.
var (
	ErrTimeout = errcode.New("scrape: timed out", errcode.Timeout, "SCRAPE_TIMEOUT",
		"Request timed out: the scrape took longer than the timeout. Raise timeout or simplify the request.")

	ErrDNSResolution = errcode.New("scrape: dns resolution failed", errcode.Unresolved,
		"SCRAPE_DNS_RESOLUTION_ERROR", "").WithLead("DNS resolution failed")

	ErrSSL = errcode.New("scrape: tls error", errcode.Failed, "SCRAPE_SSL_ERROR", "").WithLead("TLS error")

	ErrSite = errcode.New("scrape: site error", errcode.Failed,
		"SCRAPE_SITE_ERROR", "").WithLead("The site could not be scraped")

	ErrBlockedTarget = errcode.New("scrape: target address not allowed", errcode.Forbidden,
		"SCRAPE_TARGET_NOT_ALLOWED", "")

	ErrUnsupportedFile = errcode.New("scrape: unsupported file", errcode.Failed,
		"SCRAPE_UNSUPPORTED_FILE_ERROR", "")

	ErrNoCachedData = errcode.New("scrape: no cached data", errcode.NotFound, "SCRAPE_NO_CACHED_DATA",
		"No cached data is available for this URL that satisfies minAge.")

	ErrLockdownCacheMiss = errcode.New("scrape: lockdown cache miss", errcode.NotFound, "SCRAPE_LOCKDOWN_CACHE_MISS",
		"Lockdown mode: no cached data is available for this URL, and no request was made to it.")

	ErrForbidden = errcode.New("scrape: forbidden", errcode.Forbidden, "FORBIDDEN", "")

	ErrAction = errcode.New("scrape: action failed", errcode.Failed, "SCRAPE_ACTION_ERROR", "")

	// ErrProfileBusy: another session is saving the same browser profile.
	ErrProfileBusy = errcode.New("scrape: profile in use", errcode.Conflict,
		"PROFILE_IN_USE", "").WithLead("The browser profile is in use")

	// ErrPDFInsufficientTime: the PDF cannot be parsed within the timeout.
	ErrPDFInsufficientTime = errcode.New("scrape: pdf needs more time", errcode.Failed,
		"SCRAPE_PDF_INSUFFICIENT_TIME_ERROR", "").WithLead("The PDF needs more time to be parsed")

	// ErrPDFTooLarge: the PDF expands beyond the parser's limits (a PDF
	// bomb: decompressed streams, one string, the text, or pdftotext's CPU,
	// memory or output).
	ErrPDFTooLarge = errcode.New("scrape: pdf expands beyond the limits", errcode.Unprocessable,
		"SCRAPE_PDF_TOO_LARGE", "").WithLead("The PDF expands beyond this server's limits")

	// ErrFileTooLarge: an uploaded document expands beyond the converter's
	// limits (a zip bomb).
	ErrFileTooLarge = errcode.New("scrape: file expands beyond the limits", errcode.Unprocessable,
		"SCRAPE_FILE_TOO_LARGE", "").WithLead("The file expands beyond this server's limits")
)

// FeatureError reports a valid request for a capability this server does not
// provide (yet, or in this configuration). Code is stable and documented.
type FeatureError struct {
	Code    string // e.g. SCRAPE_ACTIONS_NOT_SUPPORTED
	Feature string // the request field or format, e.g. "actions"
	Reason  string // one sentence for the user
}

func (e *FeatureError) Error() string {
	return fmt.Sprintf("scrape: %s: %s", e.Feature, e.Reason)
}
