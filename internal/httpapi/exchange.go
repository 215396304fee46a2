package httpapi

import (
	"net/http"
	"strings"

	"github.com/firegate/firegate/internal/limits"
)

// handleExchangeDiscover serves GET /exchange/discover, the catalog's
// categories as firecrawl-mcp's firecrawl_find_tools reads them for its
// first level (called without arguments): {cohorts: [{cohort, about}]},
// for teams with catalog access.
func (s *Server) handleExchangeDiscover(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	team := teamFrom(ctx)
	if err := s.catalogAccess(team); err != nil {
		return err
	}
	if err := s.rateLimited(ctx, team, limits.ClassStatus); err != nil {
		return err
	}
	cohorts := []map[string]any{}
	for _, c := range s.catalog.Categories() {
		cohorts = append(cohorts, map[string]any{"cohort": c.Name, "about": "Providers: " + strings.Join(c.Providers, ", "),
			"providers": len(c.Providers)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "cohorts": cohorts})
	return nil
}
