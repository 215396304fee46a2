package crawljob_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/crawljob"
	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/testenv"
	"github.com/firegate/firegate/internal/webhook"
)

// internalLeaks are pieces of the internal errors the tests inject, none of
// which a client may see: addresses, ports, package prefixes.
var internalLeaks = []string{"10.1.2.3", ":5432", ":9222", ":53", "scrape:", "browser:", "store:", "dial tcp", "devtools", "panic"}

// Known failures and the messages a client must see for them, exactly.
const (
	timeoutMsg = "Request timed out: the scrape took longer than the timeout. Raise timeout or simplify the request."
	dnsMsg     = "DNS resolution failed for hostname: nowhere.invalid. Check that the URL is correct and the site exists."
	missingMsg = "The page answered HTTP 404 Not Found."
)

// faultScraper fails the pages whose path is /internal (an error the error
// table does not know, full of internal details), /timeout and /dns (known
// errors, the DNS one with an internal cause), and scrapes the others.
type faultScraper struct{ next crawljob.Scraper }

func (f faultScraper) Scrape(ctx context.Context, opts scrape.Options) (*scrape.Document, error) {
	switch {
	case strings.HasSuffix(opts.URL, "/internal"):
		return nil, testenv.InternalError("")
	case strings.HasSuffix(opts.URL, "/timeout"):
		return nil, fmt.Errorf("scrape: render: %w after 30s", scrape.ErrTimeout)
	case strings.HasSuffix(opts.URL, "/dns"):
		return nil, &errcode.Failure{Kind: scrape.ErrDNSResolution, Msg: dnsMsg,
			Cause: errors.New("lookup nowhere.invalid on 10.1.2.3:53: no such host")}
	}
	return f.next.Scrape(ctx, opts)
}

// faultSite's start page links to a fine page, the faulty ones and a
// missing one (404).
func faultSite(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html")
	switch r.URL.Path {
	case "/":
		fmt.Fprint(w, `<html><head><title>home</title></head><body><p>home</p><a href="/fine">fine</a> <a href="/internal">i</a>
<a href="/timeout">t</a> <a href="/dns">d</a> <a href="/missing">m</a></body></html>`)
	case "/robots.txt", "/missing":
		http.NotFound(w, r)
	default:
		fmt.Fprintf(w, "<html><head><title>%s</title></head><body><h1>%s</h1><p>page</p></body></html>", r.URL.Path, r.URL.Path)
	}
}

// checkInternal checks msg, shown to a client for an internal error, as
// CheckHidden does, against internalLeaks; it returns the error id.
func checkInternal(t *testing.T, where, msg string, book *testenv.LogBook, logged string) string {
	t.Helper()
	return book.CheckHidden(t, where, msg, "", internalLeaks, logged)
}

// failedPageEvents maps the source URL of each failed page event to its
// error.
func failedPageEvents(evs []map[string]any) map[string]string {
	out := map[string]string{}
	for _, ev := range evs {
		if !strings.HasSuffix(ev["type"].(string), ".page") || ev["success"] != false {
			continue
		}
		data, _ := ev["data"].([]any)
		if len(data) != 1 {
			continue
		}
		item, _ := data[0].(map[string]any)
		md, _ := item["metadata"].(map[string]any)
		u, _ := md["sourceURL"].(string)
		out[u], _ = ev["error"].(string)
	}
	return out
}

// TestFailedPagesShowNoInternalError: a crawl's or batch scrape's page that
// fails with an error no errcode sentinel describes is listed in the job's
// errors (what GET /v2/crawl/{id}/errors and its batch twin serve) and sent
// in its failed page webhook with the generic message naming an error id,
// logged with the full error; none of the error's addresses or package
// prefixes reach either. Known errors keep their codes and exact messages.
func TestFailedPagesShowNoInternalError(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(faultSite))
	t.Cleanup(site.Close)
	rec := &recorder{}
	hook := httptest.NewServer(rec)
	t.Cleanup(hook.Close)
	for _, kind := range stores {
		for _, job := range []string{"crawl", "batch"} {
			t.Run(kind+"/"+job, func(t *testing.T) {
				rec.mu.Lock()
				rec.events = nil
				rec.mu.Unlock()
				log, book := testenv.NewLogBook(t)
				engine := scrape.New(scrape.Config{Fetcher: fetch.New(fetch.Options{AllowPrivate: true}, log), Log: log})
				sender := webhook.NewSender(webhook.Options{AllowPrivate: true}, log)
				st := openStore(t, kind)
				h := newHarness(t, st, harnessOptions{workers: 4, scraper: faultScraper{next: engine}, webhooks: sender, log: log})
				o := defaultOptions()
				o.Webhook = &webhook.Spec{URL: hook.URL}
				id := crawljob.NewJobID()
				var err error
				if job == "crawl" {
					o.Sitemap = crawl.SitemapSkip
					err = h.runner.StartCrawl(t.Context(), store.Job{ID: id, TeamID: h.team.ID, URL: site.URL + "/", Limit: 10}, o)
				} else {
					err = h.runner.StartBatch(t.Context(), store.Job{ID: id, TeamID: h.team.ID}, o,
						[]string{site.URL + "/fine", site.URL + "/internal", site.URL + "/timeout", site.URL + "/dns", site.URL + "/missing"})
				}
				if err != nil {
					t.Fatal(err)
				}
				if j := h.wait(t, id, 20*time.Second); j.Status != store.JobCompleted {
					t.Fatalf("job %s, want completed", j.Status)
				}
				type shown struct{ code, msg string }
				want := map[string]shown{
					site.URL + "/timeout": {"SCRAPE_TIMEOUT", timeoutMsg},
					site.URL + "/dns":     {"SCRAPE_DNS_RESOLUTION_ERROR", dnsMsg},
				}
				if job == "crawl" {
					// A batch reports what a missing page answered as its document.
					want[site.URL+"/missing"] = shown{"SCRAPE_SITE_ERROR", missingMsg}
				}
				errs, err := st.JobErrors(t.Context(), id)
				if err != nil {
					t.Fatal(err)
				}
				if len(errs) != len(want)+1 {
					t.Errorf("%d job errors, want %d: %+v", len(errs), len(want)+1, errs)
				}
				stored := map[string]string{}
				for _, e := range errs {
					stored[e.URL] = e.Error
					if e.URL == site.URL+"/internal" {
						if e.Code != "UNKNOWN_ERROR" {
							t.Errorf("internal error's code %q, want UNKNOWN_ERROR", e.Code)
						}
						if id := checkInternal(t, "job error", e.Error, book, "10.1.2.3:5432"); id != "" && e.Error != errcode.UnknownMessage(id) {
							t.Errorf("internal error's message %q is not the generic one", e.Error)
						}
						continue
					}
					if w, ok := want[e.URL]; !ok || e.Code != w.code || e.Error != w.msg {
						t.Errorf("job error %s: %s %q; want %s %q", e.URL, e.Code, e.Error, w.code, w.msg)
					}
				}
				events := failedPageEvents(rec.until(15*time.Second, typed(strings.Replace(job, "batch", "batch_scrape", 1)+".completed")))
				if len(events) != len(want)+1 {
					t.Errorf("failed page events %v; want %d", events, len(want)+1)
				}
				for u, msg := range events {
					if msg != stored[u] {
						t.Errorf("webhook of failed page %s: error %q; want the stored %q", u, msg, stored[u])
					}
				}
				checkInternal(t, "webhook", events[site.URL+"/internal"], book, "10.1.2.3:5432")
			})
		}
	}
}

// TestFailedJobShowsNoInternalError: a crawl whose start page fails with an
// internal error fails with the page's generic message (what GET
// /v2/crawl/{id} shows as its error), and so does an extract, in its failed
// webhook.
func TestFailedJobShowsNoInternalError(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(faultSite))
	t.Cleanup(site.Close)
	rec := &recorder{}
	hook := httptest.NewServer(rec)
	t.Cleanup(hook.Close)
	for _, kind := range stores {
		t.Run(kind, func(t *testing.T) {
			rec.mu.Lock()
			rec.events = nil
			rec.mu.Unlock()
			log, book := testenv.NewLogBook(t)
			engine := scrape.New(scrape.Config{Fetcher: fetch.New(fetch.Options{AllowPrivate: true}, log), Log: log})
			sender := webhook.NewSender(webhook.Options{AllowPrivate: true}, log)
			st := openStore(t, kind)
			h := newHarness(t, st, harnessOptions{workers: 4, scraper: faultScraper{next: engine}, webhooks: sender, log: log})

			o := defaultOptions()
			o.Sitemap = crawl.SitemapSkip
			crawlID := crawljob.NewJobID()
			if err := h.runner.StartCrawl(t.Context(), store.Job{ID: crawlID, TeamID: h.team.ID, URL: site.URL + "/internal", Limit: 10}, o); err != nil {
				t.Fatal(err)
			}
			j := h.wait(t, crawlID, 20*time.Second)
			if j.Status != store.JobFailed {
				t.Errorf("crawl %s, want failed", j.Status)
			}
			checkInternal(t, "failed crawl", j.Error, book, "10.1.2.3:5432")

			extractID := crawljob.NewJobID()
			if err := h.runner.StartBatch(t.Context(), store.Job{ID: extractID, TeamID: h.team.ID}, extractOptions(hook.URL),
				[]string{site.URL + "/internal"}); err != nil {
				t.Fatal(err)
			}
			if j := h.wait(t, extractID, 20*time.Second); j.Status != store.JobFailed {
				t.Errorf("extract %s, want failed", j.Status)
			}
			var failed map[string]any
			for _, ev := range rec.until(15*time.Second, typed("extract.failed")) {
				if ev["type"] == "extract.failed" {
					failed = ev
				}
			}
			if failed == nil {
				t.Fatal("no extract.failed event")
			}
			msg, _ := failed["error"].(string)
			if id := checkInternal(t, "extract.failed webhook", msg, book, "10.1.2.3:5432"); id != "" && msg != errcode.UnknownMessage(id) {
				t.Errorf("extract.failed error %q is not the generic message", msg)
			}
		})
	}
}
