package httpapi

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/crawljob"
	"github.com/firegate/firegate/internal/testenv"
)

// changingSite is a small site in two versions. Version 1: the home page
// links /a, /b, /c and /e (its sitemap lists them too). Version 2: /a
// has a new price, /b answers 404, /d is new, /e is still there but no
// longer linked; the home page and sitemap list /a, /c and /d.
func changingSite(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var version atomic.Int32
	version.Store(1)
	pages := func() []string {
		if version.Load() == 1 {
			return []string{"/a", "/b", "/c", "/e"}
		}
		return []string{"/a", "/c", "/d"}
	}
	html := func(w http.ResponseWriter, status int, title, body string) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(status)
		fmt.Fprintf(w, "<html><head><title>%s</title></head><body><main><h1>%s</h1>%s</main></body></html>", title, title, body)
	}
	var base string
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		for _, p := range pages() {
			fmt.Fprintf(&b, `<p><a href="%s">Page %s</a></p>`, p, p)
		}
		html(w, 200, "Home", b.String())
	})
	mux.HandleFunc("/sitemap.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		var b strings.Builder
		for _, p := range pages() {
			fmt.Fprintf(&b, "<url><loc>%s%s</loc></url>", base, p)
		}
		fmt.Fprintf(w, "<urlset>%s</urlset>", b.String())
	})
	mux.HandleFunc("/{page}", func(w http.ResponseWriter, r *http.Request) {
		p := "/" + r.PathValue("page")
		switch {
		case p == "/a" && version.Load() == 1:
			html(w, 200, "Coffee", "<p>Espresso costs 2 euros.</p>")
		case p == "/a":
			html(w, 200, "Coffee", "<p>Espresso costs 3 euros.</p>")
		case p == "/e":
			html(w, 200, "Archive", "<p>Old news, unchanged.</p>")
		case slices.Contains(pages(), p):
			html(w, 200, "Page "+p, "<p>Text of "+p+".</p>")
		default:
			html(w, 404, "Not found", "<p>No such page.</p>")
		}
	})
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)
	base = site.URL
	return site, &version
}

// crawlChanges reads a finished crawl's documents through GET
// /v2/crawl/{id} (following next) as path -> changeTracking.
func (f *jobsFixture) crawlChanges(t *testing.T, id, base string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	next := "/v2/crawl/" + id
	for next != "" {
		st := f.status(t, next, fxKeyOne)
		data, _ := st["data"].([]any)
		for _, d := range data {
			doc, _ := d.(map[string]any)
			meta, _ := doc["metadata"].(map[string]any)
			ct, _ := doc["changeTracking"].(map[string]any)
			ct["statusCode"] = meta["statusCode"]
			p := strings.TrimPrefix(fmt.Sprint(meta["sourceURL"]), base)
			if _, dup := out[p]; dup {
				t.Errorf("%s twice among the results", p)
			}
			out[p] = ct
		}
		next, _ = st["next"].(string)
	}
	return out
}

// TestCrawlChangeTracking: two crawls with changeTracking of a site whose
// pages change between them, read through the crawl status route. The
// second reports the edited page changed (with its diff), the new page
// new, the unchanged one same, and the pages of the first crawl it did
// not find by links or sitemap as hidden: the one now answering 404 as
// removed (a result, not an error), the one still there as same. The
// removed page is then forgotten by the crawl memory.
func TestCrawlChangeTracking(t *testing.T) {
	t.Parallel()
	for _, kind := range fxStores {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			site, version := changingSite(t)
			f := newJobsFixture(t, kind, fxOptions{changeTracking: true})
			body := `{"url":"` + site.URL + `/","limit":20,"scrapeOptions":{"formats":["markdown",{"type":"changeTracking","modes":["git-diff"],"tag":"nightly"}]}}`

			id := f.start(t, "/v2/crawl", body)
			if st := f.waitDone(t, "/v2/crawl/"+id); st["status"] != "completed" {
				t.Fatalf("first crawl: %v", st)
			}
			first := f.crawlChanges(t, id, site.URL)
			for _, p := range []string{"/", "/a", "/b", "/c", "/e"} {
				if ct := first[p]; ct == nil || ct["changeStatus"] != "new" || ct["visibility"] != "visible" || ct["previousScrapeAt"] != nil {
					t.Errorf("first crawl, %s: %v", p, ct)
				}
			}
			if len(first) != 5 {
				t.Errorf("first crawl found %d pages: %v", len(first), first)
			}

			version.Store(2)
			id = f.start(t, "/v2/crawl", body)
			if st := f.waitDone(t, "/v2/crawl/"+id); st["status"] != "completed" {
				t.Fatalf("second crawl: %v", st)
			}
			second := f.crawlChanges(t, id, site.URL)
			want := map[string][2]string{ // path -> changeStatus, visibility
				"/": {"changed", "visible"}, "/a": {"changed", "visible"}, "/c": {"same", "visible"},
				"/d": {"new", "visible"}, "/b": {"removed", "hidden"}, "/e": {"same", "hidden"},
			}
			for p, w := range want {
				ct := second[p]
				if ct == nil || ct["changeStatus"] != w[0] || ct["visibility"] != w[1] {
					t.Errorf("second crawl, %s: %v, want %s and %s", p, ct, w[0], w[1])
				}
			}
			if len(second) != len(want) {
				t.Errorf("second crawl found %d pages: %v", len(second), second)
			}
			if ct := second["/b"]; ct == nil || ct["statusCode"] != float64(404) || ct["previousScrapeAt"] == nil {
				t.Errorf("removed page: %v", ct)
			}
			diff, _ := second["/a"]["diff"].(map[string]any)
			if text, _ := diff["text"].(string); !strings.Contains(text, "-Espresso costs 2 euros.\n+Espresso costs 3 euros.\n") {
				t.Errorf("diff of /a: %v", second["/a"]["diff"])
			}
			code, errs := f.send(t, http.MethodGet, "/v2/crawl/"+id+"/errors", fxKeyOne, "")
			if list, _ := errs["errors"].([]any); code != 200 || len(list) != 0 {
				t.Errorf("second crawl errors: %d %v", code, errs)
			}

			// The memory forgot /b and still knows /e; another tag's
			// memory is empty.
			mem := f.st.(crawljob.Memory)
			got, err := mem.CrawlMemory(t.Context(), f.teams[fxKeyOne].ID, "nightly", crawljob.MemoryScope(site.URL), 100)
			if err != nil {
				t.Fatal(err)
			}
			if slices.Contains(got, site.URL+"/b") || !slices.Contains(got, site.URL+"/e") || len(got) != 5 {
				t.Errorf("crawl memory after the second crawl: %v", got)
			}
			if other, _ := mem.CrawlMemory(t.Context(), f.teams[fxKeyOne].ID, "", crawljob.MemoryScope(site.URL), 100); len(other) != 0 {
				t.Errorf("untagged memory: %v", other)
			}
		})
	}
}

// TestCrawlChangeTrackingZDR: a crawl with changeTracking under zero data
// retention compares its pages but remembers nothing for the next crawl.
func TestCrawlChangeTrackingZDR(t *testing.T) {
	t.Parallel()
	site, _ := changingSite(t)
	f := newJobsFixture(t, "sqlite", fxOptions{changeTracking: true})
	id := f.startAs(t, fxKeyZDR, "/v2/crawl", `{"url":"`+site.URL+`/","limit":20,"zeroDataRetention":true,"sitemap":"skip",`+
		`"scrapeOptions":{"formats":["markdown",{"type":"changeTracking","modes":["git-diff"]}]}}`)
	var st map[string]any
	testenv.Eventually(t, time.Minute, func() bool {
		_, st = f.send(t, http.MethodGet, "/v2/crawl/"+id, fxKeyZDR, "")
		return st["status"] != "scraping"
	}, "still waiting for the crawl")
	if data, _ := st["data"].([]any); st["status"] != "completed" || len(data) != 5 {
		t.Fatalf("crawl: %v", st)
	}
	got, err := f.st.(crawljob.Memory).CrawlMemory(t.Context(), f.teams[fxKeyZDR].ID, "", crawljob.MemoryScope(site.URL), 100)
	if err != nil || len(got) != 0 {
		t.Errorf("crawl memory under zero data retention: %v %v", got, err)
	}
}
