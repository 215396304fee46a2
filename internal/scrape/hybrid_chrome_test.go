package scrape

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hybridSite serves testdata/hybrid and testdata/static, and the JSON
// some hybrid pages fetch after load.
func hybridSite(t *testing.T) *httptest.Server {
	t.Helper()
	api := map[string]string{
		"/api/replies.json": `[{"user":"crumb_queen","text":"A dried starter from a shop is fine: rehydrate it and feed it twice a day for a week before you bake."},` +
			`{"user":"rye_guy","text":"Take the one your friend offers. A mature starter raises bread from the first day."},` +
			`{"user":"dough_nut","text":"Thank you both, I will ask my friend for a spoonful this weekend."}]`,
		"/api/sailings.json": `[{"dep":"07:10","arr":"07:55","ship":"MV Isle of Mull"},{"dep":"09:45","arr":"10:30","ship":"MV Coruisk"}]`,
		"/api/specs.json":    `["Weight: 1.9 kg with pegs and poles","Packed size: 45 by 15 centimetres","Hydrostatic head: 3000 mm fly sheet"]`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if body, ok := api[r.URL.Path]; ok {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(body))
			return
		}
		path := r.URL.Path
		if path == threadPath {
			path = "/hybrid/replies-spinner.html"
		}
		dir, name := filepath.Split(strings.TrimPrefix(path, "/"))
		if dir != "hybrid/" && dir != "static/" {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile(filepath.Join("testdata", dir, name))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// threadPath is where the forum thread (replies-spinner.html) is served:
// a topic address of common forum software, which makes the replies the
// page's content.
const threadPath = "/t/which-sourdough-starter/4821"

// hybridPages are complete only once their scripts have run: what the
// scripts add (want) and the placeholder they replace (gone).
var hybridPages = []struct {
	file       string
	want, gone []string
}{
	{"pricing-json.html", []string{"Harbor plan", "$12 per seat", "Lighthouse plan", "hourly backups"}, []string{"Loading prices"}},
	{"next-data.html", []string{"How tides work", "The moon pulls the ocean", "two high tides and two low tides"}, nil},
	{"initial-state.html", []string{"Silver estate with a full service history", "eleven thousand miles", "soft top was renewed"}, nil},
	{"rsc-stream.html", []string{"offline mode", "merged with one click", "fonts and page breaks"}, nil},
	{"replies-spinner.html", []string{"dried starter from a shop", "rehydrate it and feed it", "raises bread from the first day", "a spoonful this weekend"}, nil},
	{"skeleton.html", []string{"Conversational Italian", "Furniture restoration", "Double-entry accounts"}, nil},
	{"aria-busy.html", []string{"07:10", "MV Isle of Mull", "MV Coruisk"}, nil},
	{"mount-point.html", []string{"1,112 a month", "monthly payment moves"}, nil},
	{"template-faq.html", []string{"How often should I water seedlings?", "potash fertiliser", "away from radiators"}, nil},
	{"noscript-timetable.html", []string{"Lane swimming", "06:30 to 09:00", "10:00 to 13:00"}, []string{"enable JavaScript"}},
	{"script-heavy.html", []string{"Charging points near you", "nearest rapid charger"}, nil},
	{"tabs-loading.html", []string{"Weight: 1.9 kg", "Packed size", "Hydrostatic head"}, []string{"Loading…"}},
	{"please-wait.html", []string{"left the Bristol depot", "between 10:00 and 12:00"}, []string{"Please wait"}},
}

// TestHybridPagesRendered scrapes each hybrid page with the API's
// defaults (no waitFor): the engine sees it is incomplete, renders it in
// Chromium, and the main content keeps what the scripts added.
func TestHybridPagesRendered(t *testing.T) {
	t.Parallel()
	e, cr := browserEngine(t)
	srv := hybridSite(t)
	for _, p := range hybridPages {
		t.Run(strings.TrimSuffix(p.file, ".html"), func(t *testing.T) {
			t.Parallel()
			u := srv.URL + "/hybrid/" + p.file
			if p.file == "replies-spinner.html" {
				u = srv.URL + threadPath
			}
			o := defaults(u, FormatMarkdown)
			doc, err := e.Scrape(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			md := unescapeMarkdown(*doc.Markdown)
			for _, w := range p.want {
				if !strings.Contains(md, w) {
					t.Errorf("lacks %q", w)
				}
			}
			for _, g := range p.gone {
				if strings.Contains(md, g) {
					t.Errorf("still has %q", g)
				}
			}
			if doc.Warning != nil {
				t.Errorf("warning: %s", *doc.Warning)
			}
			if t.Failed() {
				t.Logf("markdown:\n%s", *doc.Markdown)
			}
		})
	}
	t.Cleanup(func() {
		if n := cr.count(); !t.Failed() && n != len(hybridPages) {
			t.Errorf("%d renders for %d hybrid pages", n, len(hybridPages))
		}
	})
}

// TestStaticPagesNotRendered scrapes static pages with ordinary scripts
// (analytics, a theme toggle, a cookie banner, a search box, a preloader,
// a chat widget, framework data that the HTML already shows): none goes to
// the browser, and each keeps its text.
func TestStaticPagesNotRendered(t *testing.T) {
	t.Parallel()
	e, cr := browserEngine(t)
	srv := hybridSite(t)
	files, err := filepath.Glob(filepath.Join("testdata", "static", "*.html"))
	if err != nil || len(files) < 10 {
		t.Fatalf("%d static pages, %v", len(files), err)
	}
	for _, f := range files {
		doc, err := e.Scrape(context.Background(), defaults(srv.URL+"/static/"+filepath.Base(f), FormatMarkdown))
		if err != nil {
			t.Fatal(err)
		}
		if doc.Markdown == nil || len(strings.Fields(*doc.Markdown)) < 20 || doc.Warning != nil {
			t.Errorf("%s: warning %v, markdown %v", f, doc.Warning, doc.Markdown)
		}
	}
	if n := cr.count(); n != 0 {
		t.Errorf("%d static pages were rendered", n)
	}
}

// TestRenderPolicyAlways renders a static page too.
func TestRenderPolicyAlways(t *testing.T) {
	t.Parallel()
	e, cr := browserEngine(t)
	e.renderAlways = true
	srv := hybridSite(t)
	doc, err := e.Scrape(context.Background(), defaults(srv.URL+"/static/theme-toggle.html", FormatMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	if n := cr.count(); n != 1 || !strings.Contains(*doc.Markdown, "Range-over-func") || doc.Warning != nil {
		t.Errorf("renders %d, warning %v, markdown %q", n, doc.Warning, *doc.Markdown)
	}
}
