package scrape

import (
	"errors"
	"fmt"
)

// Sentinel errors of the engine. httpapi maps each to status, code and
// message; wrap them with %w to add detail.
var (
	ErrTimeout           = errors.New("scrape: timed out")
	ErrDNSResolution     = errors.New("scrape: dns resolution failed")
	ErrSSL               = errors.New("scrape: tls error")
	ErrSite              = errors.New("scrape: site error")
	ErrBlockedTarget     = errors.New("scrape: target address not allowed")
	ErrUnsupportedFile   = errors.New("scrape: unsupported file")
	ErrNoCachedData      = errors.New("scrape: no cached data")
	ErrLockdownCacheMiss = errors.New("scrape: lockdown cache miss")
	ErrForbidden         = errors.New("scrape: forbidden")
	ErrAction            = errors.New("scrape: action failed")
	// ErrProfileBusy: another session is saving the same browser profile.
	ErrProfileBusy = errors.New("scrape: profile in use")
	// ErrPDFInsufficientTime: the PDF cannot be parsed within the timeout.
	ErrPDFInsufficientTime = errors.New("scrape: pdf needs more time")
	// ErrPDFTooLarge: the PDF expands beyond the parser's limits (a PDF
	// bomb: decompressed streams, one string, the text, or pdftotext's CPU,
	// memory or output).
	ErrPDFTooLarge = errors.New("scrape: pdf expands beyond the limits")
	// ErrFileTooLarge: an uploaded document expands beyond the converter's
	// limits (a zip bomb).
	ErrFileTooLarge = errors.New("scrape: file expands beyond the limits")
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

// Failure is an engine error with a message written for the API user. It
// matches its Kind (one of the sentinels above) and its Cause with errors.Is.
type Failure struct {
	Kind  error
	Msg   string
	Cause error
}

func (f *Failure) Error() string { return f.Msg }

// Unwrap returns the kind and the cause.
func (f *Failure) Unwrap() []error { return []error{f.Kind, f.Cause} }
