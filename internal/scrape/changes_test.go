package scrape

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/cache"
	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/teststore"
	"github.com/firegate/firegate/internal/testenv"
)

// storeChanges adapts a real store to ChangeStore, as cmd/server does.
type storeChanges struct{ st store.Store }

func (c storeChanges) PreviousScrape(ctx context.Context, teamID, url, tag string) (Snapshot, bool, error) {
	s, err := c.st.PreviousScrape(ctx, teamID, url, tag)
	if errors.Is(err, store.ErrNotFound) {
		return Snapshot{}, false, nil
	}
	return Snapshot{Markdown: s.Markdown, JSON: s.JSON, ScrapedAt: s.ScrapedAt}, err == nil, err
}

func (c storeChanges) SaveScrape(ctx context.Context, teamID, url, tag string, s Snapshot) error {
	return c.st.SaveScrape(ctx, store.ScrapeSnapshot{TeamID: teamID, URL: url, Tag: tag, Markdown: s.Markdown, JSON: s.JSON, ScrapedAt: s.ScrapedAt})
}

// pageSite serves /page with settable body and status.
type pageSite struct {
	mu     sync.Mutex
	body   string
	status int
}

func (p *pageSite) set(status int, body string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status, p.body = status, body
}

func TestChangeTracking(t *testing.T) {
	t.Parallel()
	ps := &pageSite{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ps.mu.Lock()
		defer ps.mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(ps.status)
		io.WriteString(w, ps.body)
	}))
	t.Cleanup(srv.Close)
	st := teststore.SQLite(t)
	team, err := st.CreateTeam(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	log := testenv.Logger(t)
	// With a cache and maxAge: change tracking must still fetch afresh.
	e := New(Config{Fetcher: fetch.New(fetch.Options{AllowPrivate: true}, log), Log: log, Changes: storeChanges{st},
		Cache: cache.NewMemory(1 << 20)})
	clock := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	e.now = func() time.Time { return clock }

	scrape := func(t *testing.T, tag *string) *Document {
		t.Helper()
		o := defaults(srv.URL+"/page", FormatMarkdown)
		o.Formats = append(o.Formats, Format{Type: FormatChangeTracking, Modes: []string{ModeGitDiff}, Tag: tag})
		o.TeamID = team.ID
		o.MaxAge, o.StoreInCache = time.Hour, true
		doc, err := e.Scrape(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if doc.ChangeTracking == nil {
			t.Fatal("no changeTracking")
		}
		return doc
	}
	page := func(items ...string) string {
		return "<html><body><main><h1>Prices</h1><ul><li>" + strings.Join(items, "</li><li>") + "</li></ul></main></body></html>"
	}

	ps.set(200, page("Tea 4", "Coffee 5"))
	ct := scrape(t, nil).ChangeTracking
	if ct.ChangeStatus != "new" || ct.PreviousScrapeAt != nil || ct.Diff != nil || ct.Visibility != "visible" {
		t.Errorf("first scrape: %+v", ct)
	}

	clock = clock.Add(time.Hour)
	ct = scrape(t, nil).ChangeTracking
	if ct.ChangeStatus != "same" || ct.PreviousScrapeAt == nil || *ct.PreviousScrapeAt != "2026-05-01T10:00:00Z" || ct.Diff != nil {
		t.Errorf("unchanged page: %+v", ct)
	}

	ps.set(200, page("Tea 4", "Coffee 6"))
	clock = clock.Add(time.Hour)
	ct = scrape(t, nil).ChangeTracking
	if ct.ChangeStatus != "changed" || ct.Diff == nil || *ct.PreviousScrapeAt != "2026-05-01T11:00:00Z" {
		t.Fatalf("changed page: %+v", ct)
	}
	if !strings.Contains(ct.Diff.Text, "\n-- Coffee 5\n+- Coffee 6\n") {
		t.Errorf("diff text:\n%s", ct.Diff.Text)
	}
	var dels, adds int
	for _, c := range ct.Diff.JSON.Files[0].Chunks[0].Changes {
		switch c.Type {
		case "del":
			dels++
		case "add":
			adds++
		}
	}
	if dels != 1 || adds != 1 {
		t.Errorf("structured diff: %d del, %d add: %+v", dels, adds, ct.Diff.JSON)
	}

	// A tag keeps its own history: first sight again.
	tag := "weekly"
	if ct := scrape(t, &tag).ChangeTracking; ct.ChangeStatus != "new" {
		t.Errorf("tagged: %+v", ct)
	}

	// The page goes away: removed, and its last content stays the
	// comparison point when it comes back.
	ps.set(404, "<html><body>Not found</body></html>")
	if ct := scrape(t, nil).ChangeTracking; ct.ChangeStatus != "removed" {
		t.Errorf("404: %+v", ct)
	}
	ps.set(200, page("Tea 4", "Coffee 6"))
	if ct := scrape(t, nil).ChangeTracking; ct.ChangeStatus != "same" {
		t.Errorf("back after 404: %+v", ct)
	}
}

func TestChangeTrackingRejections(t *testing.T) {
	t.Parallel()
	log := testenv.Logger(t)
	o := defaults("http://127.0.0.1:1/", FormatMarkdown)
	o.Formats = append(o.Formats, Format{Type: FormatChangeTracking, Modes: []string{ModeJSON}})
	var fe *errcode.Failure
	e := New(Config{Log: log, Changes: storeChanges{teststore.SQLite(t)}})
	if _, err := e.Scrape(context.Background(), o); !errors.As(err, &fe) || fe.Kind.Code() != "SCRAPE_LLM_NOT_CONFIGURED" || fe.Field != "formats.changeTracking.modes" {
		t.Errorf("json mode without a model: %v", err)
	}
	o.Formats[1].Modes = []string{ModeGitDiff}
	if _, err := New(Config{Log: log}).Scrape(context.Background(), o); !errors.As(err, &fe) || fe.Kind.Code() != "SCRAPE_CHANGE_TRACKING_NOT_SUPPORTED" {
		t.Errorf("no store: %v", err)
	}
}
