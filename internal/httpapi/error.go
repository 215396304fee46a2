package httpapi

import "fmt"

// Error is an API error ready to render as the contract's envelope:
// {success:false, error, code, details}. Handlers and validation return it;
// other errors go through the table in errors.go.
type Error struct {
	Status  int
	Code    string
	Message string
	Details any
	// RetryAfter, when positive, is sent as the Retry-After header (seconds).
	RetryAfter int
	// RequiresAction marks a 403 the team must act on first (terms).
	RequiresAction bool
	// ChargeID is the usage id of credits already charged for the
	// request (a catalog key reused with other parameters).
	ChargeID string
	err      error // cause, logged, never rendered
}

func (e *Error) Error() string {
	if e.err != nil {
		return fmt.Sprintf("%d %s: %s: %v", e.Status, e.Code, e.Message, e.err)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.err }

// FieldError is one entry of details in a validation error: the path of the
// failing field (e.g. ["formats", 2, "schema"]) and what is wrong with it.
type FieldError struct {
	Path    []any  `json:"path"`
	Message string `json:"message"`
	Code    string `json:"code,omitempty"`
}
