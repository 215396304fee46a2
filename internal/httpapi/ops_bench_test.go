package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/firegate/firegate/internal/metrics"
	"github.com/firegate/firegate/internal/scrape"
)

// staticScraper answers every scrape with one document and records nothing.
type staticScraper struct{ doc *scrape.Document }

func (s staticScraper) Scrape(context.Context, scrape.Options) (*scrape.Document, error) {
	return s.doc, nil
}

// BenchmarkRequestMetrics measures the router and middleware on
// POST /v2/scrape (fake scraper, no store) with and without metrics: the
// difference is the cost of recording a request.
func BenchmarkRequestMetrics(b *testing.B) {
	md := "# Hi"
	doc := &scrape.Document{Markdown: &md, Metadata: scrape.Metadata{StatusCode: 200, CreditsUsed: 1}}
	body := `{"url":"https://example.com","formats":["markdown"]}`
	for _, tc := range []struct {
		name string
		m    Metrics
	}{
		{"metrics=off", nil},
		{"metrics=on", metrics.New(metrics.Options{})},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := New(Deps{Scraper: staticScraper{doc}, Auth: fakeAuth{}, Metrics: tc.m, Log: slog.New(slog.DiscardHandler)})
			s.SetReady(true)
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/v2/scrape", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+goodKey)
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d", rec.Code)
				}
			}
		})
	}
}
