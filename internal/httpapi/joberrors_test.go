package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/firegate/firegate/internal/crawljob"
	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/scrape"
)

// internalLeaks are pieces of the internal error failingScraper returns,
// none of which a client may see. A port is looked for with the text
// around it, never bare: a response's timestamps (12:53:07) and the test
// site's address (127.0.0.1:53124) contain ":53" and ":5432".
var internalLeaks = []string{"10.1.2.3", "5432: connect", "9222/devtools", "53: no such host", "no such host",
	"connection refused", "scrape:", "browser:", "store:", "dial tcp", "devtools"}

const knownDNSMsg = "DNS resolution failed for hostname: nowhere.invalid. Check that the URL is correct and the site exists."

// failingScraper fails /internal with an error no errcode sentinel
// describes (internal addresses and package prefixes) and /dns with a known one
// (whose cause is internal); it scrapes the other pages.
type failingScraper struct{ next crawljob.Scraper }

func (f failingScraper) Scrape(ctx context.Context, opts scrape.Options) (*scrape.Document, error) {
	switch {
	case strings.HasSuffix(opts.URL, "/internal"):
		return nil, fmt.Errorf("scrape: browser: devtools ws://10.1.2.3:9222/devtools/browser: %w",
			errors.New("store: dial tcp 10.1.2.3:5432: connect: connection refused"))
	case strings.HasSuffix(opts.URL, "/dns"):
		return nil, &errcode.Failure{Kind: scrape.ErrDNSResolution, Msg: knownDNSMsg,
			Cause: errors.New("lookup nowhere.invalid on 10.1.2.3:53: no such host")}
	}
	return f.next.Scrape(ctx, opts)
}

var errorIDMsg = regexp.MustCompile(`error id ([0-9a-f-]{36})$`)

// checkShown fails when the response m shows any internal text.
func checkShown(t *testing.T, what string, m map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(m)
	for _, leak := range internalLeaks {
		if strings.Contains(string(raw), leak) {
			t.Errorf("%s shows %q: %s", what, leak, raw)
		}
	}
}

// isGeneric reports whether msg is the unexpected error's message.
func isGeneric(msg string) bool {
	id := errorIDMsg.FindStringSubmatch(msg)
	return id != nil && msg == errcode.UnknownMessage(id[1])
}

// TestJobErrorsShowNoInternalError: GET /v2/crawl/{id}/errors, GET
// /v2/batch/scrape/{id}/errors and a failed crawl's GET /v2/crawl/{id} show
// a page that failed with an internal error as UNKNOWN_ERROR with the
// generic message naming an error id, and nothing of the error's text;
// known errors keep their codes and messages.
func TestJobErrorsShowNoInternalError(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<html><head><title>home</title></head><body><p>home</p>
<a href="/fine">fine</a> <a href="/internal">i</a> <a href="/dns">d</a> <a href="/missing">m</a></body></html>`)
		case "/robots.txt", "/missing":
			http.NotFound(w, r)
		default:
			fmt.Fprintf(w, "<html><head><title>%s</title></head><body><p>page %s</p></body></html>", r.URL.Path, r.URL.Path)
		}
	}))
	t.Cleanup(site.Close)
	for _, kind := range fxStores {
		t.Run(kind, func(t *testing.T) {
			f := newJobsFixture(t, kind, fxOptions{wrapScraper: func(s crawljob.Scraper) crawljob.Scraper { return failingScraper{next: s} }})
			want := map[string][2]string{
				site.URL + "/dns":     {"SCRAPE_DNS_RESOLUTION_ERROR", knownDNSMsg},
				site.URL + "/missing": {"SCRAPE_SITE_ERROR", "The page answered HTTP 404 Not Found."},
			}
			check := func(path string, want map[string][2]string) {
				t.Helper()
				m := f.status(t, path, fxKeyOne)
				checkShown(t, path, m)
				items, _ := m["errors"].([]any)
				if len(items) != len(want)+1 {
					t.Errorf("%s: %d errors, want %d: %v", path, len(items), len(want)+1, m)
				}
				for _, it := range items {
					e, _ := it.(map[string]any)
					u, _ := e["url"].(string)
					msg, _ := e["error"].(string)
					if u == site.URL+"/internal" {
						if e["code"] != "UNKNOWN_ERROR" || !isGeneric(msg) {
							t.Errorf("%s: internal failure shown as %v %q; want UNKNOWN_ERROR and the generic message", path, e["code"], msg)
						}
						continue
					}
					if w := want[u]; e["code"] != w[0] || msg != w[1] {
						t.Errorf("%s: %s shown as %v %q; want %s %q", path, u, e["code"], msg, w[0], w[1])
					}
				}
			}

			id := f.start(t, "/v2/crawl", `{"url":"`+site.URL+`/","sitemap":"skip","limit":10}`)
			f.waitDone(t, "/v2/crawl/"+id)
			check("/v2/crawl/"+id+"/errors", want)

			id = f.start(t, "/v2/batch/scrape", `{"urls":["`+site.URL+`/fine","`+site.URL+`/internal","`+site.URL+`/dns"]}`)
			f.waitDone(t, "/v2/batch/scrape/"+id)
			delete(want, site.URL+"/missing")
			check("/v2/batch/scrape/"+id+"/errors", want)

			id = f.start(t, "/v2/crawl", `{"url":"`+site.URL+`/internal","sitemap":"skip","limit":10}`)
			st := f.waitDone(t, "/v2/crawl/"+id)
			checkShown(t, "failed crawl", st)
			if msg, _ := st["error"].(string); st["status"] != "failed" || !isGeneric(msg) {
				t.Errorf("failed crawl: status %v error %q; want failed with the generic message", st["status"], msg)
			}
		})
	}
}
