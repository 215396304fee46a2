package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/errcode"
)

// toAPIError turns any error into the envelope to render: an *Error as it
// is; an error the domain packages declared with errcode by its class's
// status, its code and message (an unsupported feature with the field's
// not_supported detail); a client that went away 499; anything else 500
// UNKNOWN_ERROR with an empty message (see unknown). It is the one place
// errors become statuses.
func toAPIError(err error) *Error {
	var apiErr *Error
	if errors.As(err, &apiErr) {
		return apiErr
	}
	if shown, ok := errcode.Lookup(err); ok {
		e := &Error{Status: status(shown.Class), Code: shown.Code, Message: shown.Message, err: err}
		if shown.Class == errcode.Unsupported {
			e.Details = []FieldError{{Path: []any{shown.Field}, Message: shown.Message, Code: "not_supported"}}
		}
		return e
	}
	if errors.Is(err, context.Canceled) {
		// The client went away; 499 is never seen by it, only logged.
		return &Error{Status: 499, Code: "CLIENT_CLOSED_REQUEST", Message: "Client closed request", err: err}
	}
	return &Error{Status: http.StatusInternalServerError, Code: errcode.UnknownCode, err: err}
}

// status is the HTTP status of an errcode class: the contract's, including
// its 200 for a host that does not resolve.
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

// unknown logs err, an error no sentinel describes (whose text may name
// internal hosts, addresses and packages), under a new error id and returns
// the message a client is shown instead: the generic one naming that id.
func (s *Server) unknown(ctx context.Context, err error) string {
	id := uuid.NewString()
	s.log.ErrorContext(ctx, "unhandled error", "error_id", id, "err", err, "request_id", requestIDFrom(ctx))
	return errcode.UnknownMessage(id)
}

// describe gives the API error code and message of err, for errors
// reported inside a result rather than as the response (a search result
// whose scrape failed): as the envelope shows it, an unknown error by the
// generic message naming the error id it is logged under.
func (s *Server) describe(ctx context.Context, err error) (code, message string) {
	e := toAPIError(err)
	if e.Code == errcode.UnknownCode || e.Message == "" {
		return e.Code, s.unknown(ctx, err)
	}
	return e.Code, e.Message
}
