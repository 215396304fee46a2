package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// handlerFunc is an HTTP handler that returns its error instead of writing it.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle adapts a handlerFunc: a returned error is rendered as the envelope.
func (s *Server) handle(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	}
}

// envelope is the body of every non-2xx response (and of the rare 200 with
// success:false, e.g. DNS resolution failures).
type envelope struct {
	Success bool   `json:"success"`
	Code    string `json:"code,omitempty"`
	Error   string `json:"error"`
	Details any    `json:"details,omitempty"`
	// RequiresAction is set on a 403 that needs an out-of-band step
	// (THIRD_PARTY_DATA_TERMS_REQUIRED).
	RequiresAction bool `json:"requiresAction,omitempty"`
	// ChargeID names the original request's charge (409 duplicate_request).
	ChargeID string `json:"chargeId,omitempty"`
}

// writeError renders err through toAPIError and logs it.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := toAPIError(err)
	ctx := r.Context()
	switch {
	case e.Code == "UNKNOWN_ERROR":
		e.Message = s.unknown(ctx, err)
	case e.Status >= 500:
		s.log.WarnContext(ctx, "request failed", "status", e.Status, "code", e.Code, "err", err, "request_id", requestIDFrom(ctx))
	default:
		s.log.DebugContext(ctx, "request rejected", "status", e.Status, "code", e.Code, "err", err, "request_id", requestIDFrom(ctx))
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	writeJSON(w, e.Status, envelope{Success: false, Code: e.Code, Error: e.Message, Details: e.Details, RequiresAction: e.RequiresAction, ChargeID: e.ChargeID})
}

// writeJSON writes v as the JSON body with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"success":false,"code":"UNKNOWN_ERROR","error":"response could not be encoded"}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	_, _ = w.Write([]byte{'\n'})
}
