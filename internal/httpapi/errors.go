package httpapi

import (
	"errors"

	"github.com/firegate/firegate/internal/apierr"
)

// toAPIError turns any error into the envelope to render: an *Error as it
// is, any other through the error table (apierr). Unknown errors become 500
// UNKNOWN_ERROR; the caller logs them with the returned id.
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

// describe gives the API error code and message of err, for errors
// reported inside a result rather than as the response (a search result
// whose scrape failed).
func describe(err error) (code, message string) {
	e := toAPIError(err)
	if e.Message == "" {
		return e.Code, err.Error()
	}
	return e.Code, e.Message
}
