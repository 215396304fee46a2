package httpapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/testenv"
)

// changeStore adapts the store to scrape.ChangeStore as cmd/server does.
type changeStore struct{ st store.Store }

func (c changeStore) PreviousScrape(ctx context.Context, teamID, url, tag string) (scrape.Snapshot, bool, error) {
	s, err := c.st.PreviousScrape(ctx, teamID, url, tag)
	if errors.Is(err, store.ErrNotFound) {
		return scrape.Snapshot{}, false, nil
	}
	return scrape.Snapshot{Markdown: s.Markdown, ScrapedAt: s.ScrapedAt}, err == nil, err
}

func (c changeStore) SaveScrape(ctx context.Context, teamID, url, tag string, s scrape.Snapshot) error {
	return c.st.SaveScrape(ctx, store.ScrapeSnapshot{TeamID: teamID, URL: url, Tag: tag, Markdown: s.Markdown, ScrapedAt: s.ScrapedAt})
}

// TestScrapeChangeTracking drives changeTracking through POST /v2/scrape
// with the real engine and the SQLite store: first sight, then a changed
// page with its git diff; the json mode without a model is a clear 400.
// (Each changeTracking scrape waits the contract's 5 s waitFor.)
func TestScrapeChangeTracking(t *testing.T) {
	t.Parallel()
	var version atomic.Int32
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		price := "5"
		if version.Load() > 0 {
			price = "6"
		}
		io.WriteString(w, `<html><body><main><h1>Menu</h1><p>Coffee `+price+`</p></main></body></html>`)
	}))
	t.Cleanup(site.Close)
	b := setupBilled(t, LimitDefaults{})
	log := testenv.Logger(t)
	fc := fetch.New(fetch.Options{AllowPrivate: true}, log)
	t.Cleanup(fc.CloseIdleConnections)
	b.srv.scraper = scrape.New(scrape.Config{Fetcher: fc, Log: log, Changes: changeStore{b.st}})

	body := `{"url":"` + site.URL + `/menu","formats":["markdown",{"type":"changeTracking","modes":["git-diff"]}]}`
	rec, got := do(t, b.srv, http.MethodPost, "/v2/scrape", b.key, body)
	data, _ := got["data"].(map[string]any)
	ct, _ := data["changeTracking"].(map[string]any)
	if rec.Code != http.StatusOK || ct["changeStatus"] != "new" || ct["previousScrapeAt"] != nil || ct["visibility"] != "visible" {
		t.Fatalf("first: %d %v", rec.Code, got)
	}

	version.Store(1)
	rec, got = do(t, b.srv, http.MethodPost, "/v2/scrape", b.key, body)
	data, _ = got["data"].(map[string]any)
	ct, _ = data["changeTracking"].(map[string]any)
	diff, _ := ct["diff"].(map[string]any)
	text, _ := diff["text"].(string)
	if rec.Code != http.StatusOK || ct["changeStatus"] != "changed" || ct["previousScrapeAt"] == nil ||
		!strings.Contains(text, "-Coffee 5\n+Coffee 6\n") {
		t.Fatalf("second: %d %v", rec.Code, got)
	}
	files, _ := diff["json"].(map[string]any)["files"].([]any)
	if len(files) != 1 {
		t.Errorf("structured diff: %v", diff["json"])
	}

	rec, got = do(t, b.srv, http.MethodPost, "/v2/scrape", b.key,
		`{"url":"`+site.URL+`/menu","formats":["markdown",{"type":"changeTracking","modes":["json"],"schema":{"type":"object","properties":{"price":{"type":"string"}}}}]}`)
	if rec.Code != http.StatusBadRequest || got["code"] != "SCRAPE_LLM_NOT_CONFIGURED" || !strings.Contains(got["error"].(string), "json mode") {
		t.Errorf("json mode without a model: %d %v", rec.Code, got)
	}
}
