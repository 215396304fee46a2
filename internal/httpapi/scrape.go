package httpapi

import (
	"net/http"

	"github.com/firegate/firegate/internal/scrape"
)

// scrapeResponse is the 200 body of POST /v2/scrape.
type scrapeResponse struct {
	Success bool             `json:"success"`
	Data    *scrape.Document `json:"data"`
}

// handleScrape serves POST /v2/scrape.
func (s *Server) handleScrape(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeScrapeRequest(r.Body)
	if err != nil {
		return err
	}
	if req.Catalog != nil {
		return errCatalogNotEnabled
	}
	ctx := r.Context()
	doc, err := s.scraper.Scrape(ctx, req.Options)
	if err != nil {
		return err
	}
	if !req.Options.ZeroDataRetention {
		s.log.InfoContext(ctx, "scrape done", "request_id", requestIDFrom(ctx), "team_id", teamFrom(ctx).ID,
			"url", req.Options.URL, "status_code", doc.Metadata.StatusCode)
	}
	writeJSON(w, http.StatusOK, scrapeResponse{Success: true, Data: doc})
	return nil
}

// errCatalogNotEnabled answers catalog calls: this server has no provider
// catalog, which the contract treats as catalog access not enabled (403).
var errCatalogNotEnabled = &Error{Status: http.StatusForbidden, Code: "CATALOG_NOT_ENABLED",
	Message: "Forbidden: catalog calls are not enabled on this server (it has no provider catalog)"}
