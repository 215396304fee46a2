// Package apierr is the one table that turns domain errors into the API's
// status, code and message; the HTTP layer renders it as the envelope and
// the crawl job runner records it for failed pages.
package apierr

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/interact"
	"github.com/firegate/firegate/internal/scrape"
)

// Mapped is what the API answers for an error.
type Mapped struct {
	Status  int
	Code    string
	Message string
	// Unsupported marks an option this server does not support; Feature
	// is the request field or format it is about.
	Unsupported bool
	Feature     string
}

// mapping is one row of the error table: a domain error and what the API
// answers for it. Message "" means: use the wrapped error's text. A nil
// target stands for any errcode sentinel.
type mapping struct {
	target  error
	status  int
	code    string
	message string
}

// table is the only place domain errors become HTTP statuses, codes and
// messages. Order matters: the first row whose target matches wins.
var table = []mapping{
	// errcode sentinels: auth, billing, crawl, limits, media, monitor.
	{target: nil},
	{interact.ErrNotFound, http.StatusNotFound, "NOT_FOUND", "Browser session not found."},
	{interact.ErrDestroyed, http.StatusGone, "SESSION_DESTROYED", "Browser session has been destroyed."},
	{interact.ErrTooMany, http.StatusTooManyRequests, "TOO_MANY_SESSIONS", ""},
	{interact.ErrElsewhere, http.StatusConflict, "SESSION_ON_OTHER_SERVER", "Conflict: this browser session is held by another server process; send its requests to that process (sessions are not shared between replicas)."},
	{interact.ErrProfileBusy, http.StatusConflict, "PROFILE_IN_USE", ""},
	{interact.ErrCDPBusy, http.StatusTooManyRequests, "CDP_BUSY", ""},
	{interact.ErrLanguage, http.StatusBadRequest, "INTERACT_LANGUAGE_NOT_SUPPORTED", ""},
	{interact.ErrReplay, http.StatusBadGateway, "INTERACT_REPLAY_FAILED", ""},
	{interact.ErrNoModel, http.StatusBadRequest, "SCRAPE_LLM_NOT_CONFIGURED", "prompt-driven interaction needs a language model, and this server has none configured (set OPENAI_BASE_URL and MODEL_NAME); send code instead"},
	{interact.ErrUnavailable, http.StatusBadGateway, "BROWSER_UNAVAILABLE", ""},
}

// Map gives what the API answers for err. An unsupported feature is a 400
// naming it; unknown errors are 500 UNKNOWN_ERROR with an empty message (the
// caller logs them); a client that went away is 499.
func Map(err error) Mapped {
	var fe *scrape.FeatureError
	if errors.As(err, &fe) {
		return Mapped{Status: http.StatusBadRequest, Code: fe.Code, Message: fe.Reason, Unsupported: true, Feature: fe.Feature}
	}
	for _, m := range table {
		if m.target == nil {
			shown, ok := errcode.Lookup(err)
			if !ok {
				continue
			}
			return Mapped{Status: status(shown.Class), Code: shown.Code, Message: shown.Message}
		} else if !errors.Is(err, m.target) {
			continue
		}
		msg := m.message
		if msg == "" {
			msg = userMessage(err, m.target)
		}
		return Mapped{Status: m.status, Code: m.code, Message: msg}
	}
	if errors.Is(err, context.Canceled) {
		// The client went away; 499 is never seen by it, only logged.
		return Mapped{Status: 499, Code: "CLIENT_CLOSED_REQUEST", Message: "Client closed request"}
	}
	return Mapped{Status: http.StatusInternalServerError, Code: "UNKNOWN_ERROR"}
}

// status is the HTTP status of an errcode class.
func status(c errcode.Class) int {
	switch c {
	case errcode.Invalid:
		return http.StatusBadRequest
	case errcode.Unauthenticated:
		return http.StatusUnauthorized
	case errcode.NoCredits:
		return http.StatusPaymentRequired
	case errcode.Forbidden:
		return http.StatusForbidden
	case errcode.NotFound:
		return http.StatusNotFound
	case errcode.Timeout:
		return http.StatusRequestTimeout
	case errcode.Conflict:
		return http.StatusConflict
	case errcode.Gone:
		return http.StatusGone
	case errcode.Unprocessable:
		return http.StatusUnprocessableEntity
	case errcode.Exhausted:
		return http.StatusTooManyRequests
	case errcode.Unresolved:
		return http.StatusOK
	case errcode.Upstream:
		return http.StatusBadGateway
	case errcode.Unavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// ClientMessager is an error that carries the message a client is shown
// (search.Error, interact.Error): its Error text, which may name internal
// hosts, addresses and paths, is for logs only.
type ClientMessager interface {
	error
	ClientMessage() string
}

// userMessage is the text for the API user of err, which matched the
// sentinel target: a *errcode.Failure or a ClientMessager carries one
// written for them; other errors show their own text as a sentence without
// the package prefixes of Go error chains: the sentinel's text and what
// precedes it become the sentinel's lead ("scrape: browser: scrape:
// unsupported file: content type ..." reads "Unsupported file: content type
// ....").
func userMessage(err, target error) string {
	var f *errcode.Failure
	if errors.As(err, &f) && f.Msg != "" {
		return f.Msg
	}
	var cm ClientMessager
	if errors.As(err, &cm) {
		if msg := cm.ClientMessage(); msg != "" {
			return sentence(msg)
		}
	}
	text := err.Error()
	if target != nil {
		if i := strings.Index(text, target.Error()); i >= 0 {
			text = lead(target) + text[i+len(target.Error()):]
		} else if f != nil {
			text = lead(target)
		}
	}
	return sentence(text)
}

// leads name the sentinels whose text, without its package prefix, does not
// read as the start of a sentence.
var leads = map[error]string{
	interact.ErrProfileBusy: "The browser profile is in use",
	interact.ErrTooMany:     "Too many browser sessions",
}

// lead is how a message about the sentinel target starts: its lead, else
// its text without the package prefix ("scrape: unsupported file" is
// "Unsupported file").
func lead(target error) string {
	if l, ok := leads[target]; ok {
		return l
	}
	text := target.Error()
	if i := strings.Index(text, ": "); i >= 0 && !strings.ContainsAny(text[:i], " \t") {
		text = text[i+2:]
	}
	return text
}

// sentence is text with a capital first letter and a full stop.
func sentence(text string) string {
	text = strings.TrimSpace(text)
	if text == "" {
		return text
	}
	r, n := utf8.DecodeRuneInString(text)
	text = string(unicode.ToUpper(r)) + text[n:]
	if !strings.HasSuffix(text, ".") && !strings.HasSuffix(text, "!") && !strings.HasSuffix(text, "?") {
		text += "."
	}
	return text
}

// UnknownMessage is the message of an unexpected error: it names the id
// under which the error's full text was logged, and nothing of the text.
func UnknownMessage(errorID string) string {
	return "An unexpected error occurred. Please contact support, error id " + errorID
}

// Describe gives the API error code and message of err as the table maps
// it, for errors reported outside a response (the failed pages of a crawl
// or batch scrape, stored and sent in webhooks). An error the table does not
// know (nor a cancelled context: there is no client to have gone away) is
// UNKNOWN_ERROR with UnknownMessage of a new errorID; the caller logs err
// with that id. errorID is "" for known errors.
func Describe(err error) (code, message, errorID string) {
	m := Map(err)
	if m.Code == "UNKNOWN_ERROR" || m.Code == "CLIENT_CLOSED_REQUEST" {
		id := uuid.NewString()
		return "UNKNOWN_ERROR", UnknownMessage(id), id
	}
	return m.Code, m.Message, ""
}
