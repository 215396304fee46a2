package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"
)

// FuzzDecodeScrapeRequest checks that decoding never panics and always ends
// in a valid request or a well-formed 400: malformed JSON exactly when
// encoding/json says the body is not one object, details on every
// validation error, and options within their bounds on success. Seeds live
// in testdata/fuzz/FuzzDecodeScrapeRequest.
func FuzzDecodeScrapeRequest(f *testing.F) {
	f.Add([]byte(`{"url":"https://example.com"}`))
	f.Add([]byte(`{"url":"example.com","formats":["markdown",{"type":"json","schema":{"type":"object","properties":{"a":{}},"required":["a","b"]}}],"actions":[{"type":"wait","milliseconds":100}]}`))
	f.Add([]byte(`{"catalog":[{"provider":"a","capability":"b","options":{"x":[1,2]}}],"timeout":5000}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeScrapeRequest(bytes.NewReader(body))
		var generic map[string]json.RawMessage
		isObject := json.Unmarshal(body, &generic) == nil && generic != nil
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not *Error", err)
			}
			if e.Status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400", e.Status)
			}
			switch e.Code {
			case "BAD_REQUEST_INVALID_JSON":
				if isObject {
					t.Fatalf("valid JSON object %q reported as malformed", body)
				}
			case "BAD_REQUEST":
				if !isObject {
					t.Fatalf("non-object %q got past JSON decoding", body)
				}
				if d, ok := e.Details.([]FieldError); !ok || len(d) == 0 || e.Message == "" {
					t.Fatalf("validation error without details or message: %+v", e)
				}
			default:
				t.Fatalf("unexpected code %q", e.Code)
			}
			return
		}
		if !isObject {
			t.Fatalf("non-object %q accepted", body)
		}
		o := req.Options
		if o.Timeout < time.Second || o.Timeout > 300*time.Second {
			t.Fatalf("timeout %v out of bounds", o.Timeout)
		}
		if req.Catalog != nil {
			if len(req.Catalog) < 1 || len(req.Catalog) > 10 {
				t.Fatalf("%d catalog calls", len(req.Catalog))
			}
			return
		}
		if _, ok := normalizeURL(o.URL); !ok {
			t.Fatalf("accepted URL %q does not validate again", o.URL)
		}
		if len(o.Actions) > 50 || o.WaitFor < 0 || o.WaitFor > 60*time.Second {
			t.Fatalf("actions %d, waitFor %v out of bounds", len(o.Actions), o.WaitFor)
		}
		for _, fm := range o.Formats {
			if fm.Schema != nil && !json.Valid(fm.Schema) {
				t.Fatalf("invalid normalized schema %s", fm.Schema)
			}
		}
	})
}
