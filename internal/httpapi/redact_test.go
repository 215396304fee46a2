package httpapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/testenv"
)

// TestScrapeRedactPII: POST /v2/scrape with redactPII through the real
// engine and ledger: the markdown comes back redacted and the team is
// charged 1 + 4 credits.
func TestScrapeRedactPII(t *testing.T) {
	t.Parallel()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<html><body><main><p>Mail ops@example.org, card 4111 1111 1111 1111, key sk_live_4eC39HqLyjWDarjtT1zdp7dc.</p></main></body></html>`)
	}))
	t.Cleanup(site.Close)
	b := setupBilled(t, LimitDefaults{})
	log := testenv.Logger(t)
	fc := fetch.New(fetch.Options{AllowPrivate: true}, log)
	t.Cleanup(fc.CloseIdleConnections)
	b.srv.scraper = scrape.New(scrape.Config{Fetcher: fc, Log: log})
	ctx := context.Background()
	if _, err := b.st.SetCredits(ctx, b.team.ID, 10); err != nil {
		t.Fatal(err)
	}
	rec, got := do(t, b.srv, http.MethodPost, "/v2/scrape", b.key,
		`{"url":"`+site.URL+`","redactPII":{"entities":["EMAIL","FINANCIAL","SECRET"],"replaceStyle":"tag"}}`)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %v", rec.Code, got)
	}
	data, _ := got["data"].(map[string]any)
	md, _ := data["markdown"].(string)
	if want := "Mail <EMAIL>, card <FINANCIAL>, key <SECRET>."; !strings.Contains(md, want) {
		t.Errorf("markdown = %q, want it to contain %q", md, want)
	}
	meta, _ := data["metadata"].(map[string]any)
	if meta["creditsUsed"] != float64(5) {
		t.Errorf("creditsUsed = %v, want 5", meta["creditsUsed"])
	}
	bal, err := b.st.CreditBalance(ctx, b.team.ID)
	if err != nil {
		t.Fatal(err)
	}
	if bal.Remaining != 5 {
		t.Errorf("balance %d after one redacted scrape from 10, want 5", bal.Remaining)
	}
}
