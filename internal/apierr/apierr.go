// Package apierr turns domain errors into the API's status, code and
// message (errcode's sentinels); the HTTP layer
// renders it as the envelope and the crawl job runner records it for
// failed pages.
package apierr

import (
	"context"
	"errors"
	"net/http"

	"github.com/firegate/firegate/internal/errcode"
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

// Map gives what the API answers for err. An unsupported feature is a 400
// naming it; an errcode sentinel answers its class's status, its code and
// message; unknown errors are 500 UNKNOWN_ERROR with an empty message (the
// caller logs them); a client that went away is 499.
func Map(err error) Mapped {
	if shown, ok := errcode.Lookup(err); ok {
		m := Mapped{Status: status(shown.Class), Code: shown.Code, Message: shown.Message}
		if shown.Class == errcode.Unsupported {
			m.Unsupported, m.Feature = true, shown.Field
		}
		return m
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
	case errcode.Invalid, errcode.Unsupported:
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

// UnknownMessage is errcode.UnknownMessage.
func UnknownMessage(errorID string) string { return errcode.UnknownMessage(errorID) }

// Describe gives the API error code and message of err, for errors
// reported outside a response: errcode.Describe.
func Describe(err error) (code, message, errorID string) {
	return errcode.Describe(err)
}
