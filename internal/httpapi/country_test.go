package httpapi

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/firegate/firegate/internal/scrape"
)

// TestLocationCountryUpperCase checks the contract's pattern for
// location.country (two upper-case letters) over HTTP: "us" is a 400 in the
// envelope naming the field and never reaches the engine, "US" is scraped.
func TestLocationCountryUpperCase(t *testing.T) {
	t.Parallel()
	sc := &fakeScraper{doc: &scrape.Document{}}
	s, _ := setup(t, sc)
	rec, m := do(t, s, http.MethodPost, "/v2/scrape", goodKey, `{"url":"https://example.com","location":{"country":"us"}}`)
	want := map[string]any{"success": false, "code": "BAD_REQUEST", "error": msgCountryPattern,
		"details": []any{map[string]any{"path": []any{"location", "country"}, "code": "invalid_string", "message": msgCountryPattern}}}
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("status %d, want 400: %v", rec.Code, m)
	}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	if len(sc.got) != 0 {
		t.Errorf("the engine was called with %+v", sc.got)
	}
	rec, m = do(t, s, http.MethodPost, "/v2/scrape", goodKey, `{"url":"https://example.com","location":{"country":"US"}}`)
	if rec.Code != http.StatusOK || len(sc.got) != 1 || sc.got[0].Location.Country != "US" {
		t.Fatalf("US: status %d %v, engine got %+v", rec.Code, m, sc.got)
	}
}
