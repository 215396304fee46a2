package crawljob_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/crawljob"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/queue/queuetest"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/testenv"
)

// poisonScraper panics on every page whose path is /poison (a page that
// makes its worker fail on every attempt), with an internal-looking value,
// and scrapes the others.
type poisonScraper struct{ next crawljob.Scraper }

func (p poisonScraper) Scrape(ctx context.Context, opts scrape.Options) (*scrape.Document, error) {
	if strings.HasSuffix(opts.URL, "/poison") {
		panic("browser: devtools ws://10.1.2.3:9222: poisoned page")
	}
	return p.next.Scrape(ctx, opts)
}

// poisonSite's start page links to /fine and /poison.
func poisonSite(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html")
	if r.URL.Path == "/" {
		fmt.Fprint(w, `<html><head><title>home</title></head><body><p>home</p><a href="/fine">fine</a> <a href="/poison">poison</a></body></html>`)
		return
	}
	if r.URL.Path == "/robots.txt" {
		http.NotFound(w, r)
		return
	}
	fmt.Fprintf(w, "<html><head><title>%s</title></head><body><h1>%s</h1><p>page</p></body></html>", r.URL.Path, r.URL.Path)
}

// TestDiscardedPageFails: a page whose worker fails on every attempt (its
// scraper panics) ends as a failed page of its crawl, batch scrape or
// extract, and the job completes; both when the failure is on the last
// attempt in a live worker and when the job is found already discarded by
// River (its process down at the time) by Reconcile. The page's error
// quotes the last attempt's error by an error id, logged with its text,
// and shows none of that text.
func TestDiscardedPageFails(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(poisonSite))
	t.Cleanup(site.Close)
	const maxAttempts = 5 // the queue's default
	for _, kind := range stores {
		for _, job := range []string{"crawl", "batch", "extract"} {
			for _, mode := range []string{"live", "repair"} {
				t.Run(kind+"/"+job+"/"+mode, func(t *testing.T) {
					log, book := testenv.NewLogBook(t)
					engine := scrape.New(scrape.Config{Fetcher: fetch.New(fetch.Options{AllowPrivate: true}, log), Log: log})
					st := openStore(t, kind)
					h := newHarness(t, st, harnessOptions{workers: 4, scraper: poisonScraper{next: engine}, log: log})
					id := crawljob.NewJobID()
					var err error
					switch job {
					case "crawl":
						o := defaultOptions()
						o.Sitemap = crawl.SitemapSkip
						err = h.runner.StartCrawl(t.Context(), store.Job{ID: id, TeamID: h.team.ID, URL: site.URL + "/", Limit: 10}, o)
					case "batch":
						err = h.runner.StartBatch(t.Context(), store.Job{ID: id, TeamID: h.team.ID}, defaultOptions(),
							[]string{site.URL + "/fine", site.URL + "/poison"})
					case "extract":
						err = h.runner.StartBatch(t.Context(), store.Job{ID: id, TeamID: h.team.ID}, extractOptions(""),
							[]string{site.URL + "/poison"})
					}
					if err != nil {
						t.Fatal(err)
					}
					poison := site.URL + "/poison"
					reason := "poisoned page"
					if mode == "live" {
						// Its next run is the last attempt, which panics too.
						queuetest.StageNextAttempt(t, st, "page", "url", poison, maxAttempts-1)
					} else {
						reason = "store: dial tcp 10.1.2.3:5432: the worker's process crashed"
						queuetest.StageDiscarded(t, st, "page", "url", poison, reason)
						if err := h.runner.Reconcile(t.Context()); err != nil {
							t.Fatal(err)
						}
					}
					j := h.wait(t, id, 20*time.Second)
					wantStatus, wantDocs := store.JobCompleted, map[string]int{"crawl": 2, "batch": 1, "extract": 0}[job]
					if job == "extract" {
						wantStatus = store.JobFailed // no page yielded a document
					}
					if j.Status != wantStatus || j.Documents != wantDocs || j.Completed != j.Total {
						t.Errorf("job %s: %d/%d done, %d documents; want %s, all done, %d documents",
							j.Status, j.Completed, j.Total, j.Documents, wantStatus, wantDocs)
					}
					errs, err := st.JobErrors(t.Context(), id)
					if err != nil {
						t.Fatal(err)
					}
					want := fmt.Sprintf("failed on all of its %d attempts", maxAttempts)
					if len(errs) != 1 || errs[0].URL != poison || !strings.Contains(errs[0].Error, want) || errs[0].Code != "SCRAPE_SITE_ERROR" {
						t.Fatalf("job errors %+v; want %s given up with %q", errs, poison, want)
					}
					checkInternal(t, "given-up page", errs[0].Error, book, reason)
				})
			}
		}
	}
}
