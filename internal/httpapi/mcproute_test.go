package httpapi

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestMCPRoute: /mcp is served behind the key check, and a request the
// MCP handler sends to the API with the /mcp request's context is routed
// by its own path (not as what is left of /mcp's).
func TestMCPRoute(t *testing.T) {
	t.Parallel()
	var api *Server
	var inner int
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := httptest.NewRequestWithContext(r.Context(), http.MethodGet, "/v2/team/credit-usage", nil)
		req.Header.Set("Authorization", r.Header.Get("Authorization"))
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		inner = rec.Code
		w.WriteHeader(http.StatusAccepted)
	})
	api = New(Deps{Scraper: &fakeScraper{}, Auth: fakeAuth{}, MCP: mcp, Log: slog.New(slog.DiscardHandler)})

	rec, body := do(t, api, http.MethodPost, "/mcp", "", `{}`)
	if rec.Code != http.StatusUnauthorized || body["code"] != "UNAUTHORIZED" {
		t.Fatalf("without a key: %d %v", rec.Code, body)
	}
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+goodKey)
	w := httptest.NewRecorder()
	api.ServeHTTP(w, req)
	if w.Code != http.StatusAccepted || inner != http.StatusOK {
		t.Errorf("with a key: /mcp %d, the inner request %d", w.Code, inner)
	}
}
