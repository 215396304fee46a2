package httpapi

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/apierr"
)

// toAPIError turns any error into the envelope to render: an *Error as it
// is, any other through the error table (apierr). Unknown errors become 500
// UNKNOWN_ERROR with an empty message: see unknown.
func toAPIError(err error) *Error {
	var apiErr *Error
	if errors.As(err, &apiErr) {
		return apiErr
	}
	m := apierr.Map(err)
	e := &Error{Status: m.Status, Code: m.Code, Message: m.Message, err: err}
	if m.Unsupported {
		e.Details = []FieldError{{Path: []any{m.Feature}, Message: m.Message, Code: "not_supported"}}
	}
	return e
}

// unknown logs err, an error the table does not know (whose text may name
// internal hosts, addresses and packages), under a new error id and returns
// the message a client is shown instead: the generic one naming that id.
func (s *Server) unknown(ctx context.Context, err error) string {
	id := uuid.NewString()
	s.log.ErrorContext(ctx, "unhandled error", "error_id", id, "err", err, "request_id", requestIDFrom(ctx))
	return apierr.UnknownMessage(id)
}

// describe gives the API error code and message of err, for errors
// reported inside a result rather than as the response (a search result
// whose scrape failed): as the envelope shows it, an unknown error by the
// generic message naming the error id it is logged under.
func (s *Server) describe(ctx context.Context, err error) (code, message string) {
	e := toAPIError(err)
	if e.Code == "UNKNOWN_ERROR" || e.Message == "" {
		return e.Code, s.unknown(ctx, err)
	}
	return e.Code, e.Message
}
