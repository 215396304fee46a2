package scrape

import (
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

// Errors of valid requests for capabilities this server does not provide
// (yet, or in this configuration): each is an errcode.Failure naming the
// request field (unsupported); its Msg says why.
var (
	// ErrActionsNotSupported: actions need the browser engine.
	ErrActionsNotSupported = errcode.New("scrape: actions not supported", errcode.Unsupported,
		"SCRAPE_ACTIONS_NOT_SUPPORTED", "")
	// ErrScreenshotNotSupported: the screenshot format needs the browser
	// engine.
	ErrScreenshotNotSupported = errcode.New("scrape: screenshots not supported", errcode.Unsupported,
		"SCRAPE_SCREENSHOT_NOT_SUPPORTED", "")
	// ErrBrandingNotSupported: the branding format needs the browser engine.
	ErrBrandingNotSupported = errcode.New("scrape: branding not supported", errcode.Unsupported,
		"SCRAPE_BRANDING_NOT_SUPPORTED", "")
	// ErrLLMNotConfigured: a format or option needs a language model.
	ErrLLMNotConfigured = errcode.New("scrape: no language model is configured", errcode.Unsupported,
		"SCRAPE_LLM_NOT_CONFIGURED", "")
	// ErrFormatNotSupported: a format this server does not produce.
	ErrFormatNotSupported = errcode.New("scrape: format not supported", errcode.Unsupported,
		"SCRAPE_FORMAT_NOT_SUPPORTED", "")
	// ErrZDRViolation: an option that would keep data past a zero data
	// retention (or lockdown) request.
	ErrZDRViolation = errcode.New("scrape: not allowed under zero data retention", errcode.Unsupported,
		"SCRAPE_ZDR_VIOLATION_ERROR", "")
	// ErrProfileNotSupported: browser profiles need the browser engine and
	// a profile store.
	ErrProfileNotSupported = errcode.New("scrape: profiles not supported", errcode.Unsupported,
		"SCRAPE_PROFILE_NOT_SUPPORTED", "")
	// ErrMediaNotSupported: the audio and video formats need ffmpeg and a
	// fresh request.
	ErrMediaNotSupported = errcode.New("scrape: media formats not supported", errcode.Unsupported,
		"SCRAPE_MEDIA_NOT_SUPPORTED", "")
	// ErrChangeTrackingNotSupported: change tracking needs the durable store.
	ErrChangeTrackingNotSupported = errcode.New("scrape: change tracking not supported", errcode.Unsupported,
		"SCRAPE_CHANGE_TRACKING_NOT_SUPPORTED", "")
	// ErrOCRNotAvailable: OCR needs pdftoppm and tesseract.
	ErrOCRNotAvailable = errcode.New("scrape: ocr not available", errcode.Unsupported,
		"SCRAPE_OCR_NOT_AVAILABLE", "")
)

// unsupported is a request for a capability this server does not provide:
// kind, the request field it is about, and reason, one sentence for the
// user.
func unsupported(kind *errcode.Sentinel, field, reason string) error {
	return &errcode.Failure{Kind: kind, Field: field, Msg: reason}
}
