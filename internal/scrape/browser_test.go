package scrape

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

const spaPage = `<!doctype html><html><head><title>App</title><script src="/bundle.js"></script></head>
<body><div id="root"></div><script>setTimeout(()=>{document.getElementById("root").innerHTML="<h1>Rendered by script</h1><p>"+"Hello from the client. ".repeat(5)+"</p>"},300)</script></body></html>`

func TestRenderReason(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		page string
		want bool
	}{
		{"spa root", spaPage, true},
		{"next root", `<html><body><div id="__next"></div><script src="/a.js"></script></body></html>`, true},
		{"noscript", `<html><body><noscript>You need to enable JavaScript to run this app.</noscript><p>Loading</p></body></html>`, true},
		{"script and almost no text", `<html><body><p>Hi.</p><script src="/a.js"></script></body></html>`, true},
		{"static article", articleHTML, false},
		{"static without scripts", `<html><body><p>Short.</p></body></html>`, false},
		{"root with server-rendered text", `<html><body><div id="root"><p>` + strings.Repeat("Real text. ", 60) + `</p></div><script src="/a.js"></script></body></html>`, false},
		{"loading text in a sentence", `<html><body><p>Loading docks are at the rear of the building, open from six.</p><p>` + strings.Repeat("More text. ", 10) + `</p></body></html>`, false},
		{"hidden loading text", `<html><body><p>` + strings.Repeat("Real text. ", 10) + `</p><div hidden><p>Loading...</p></div><div style="display: none">Please wait</div></body></html>`, false},
		{"loading in German", `<html><body><p>` + strings.Repeat("Echter Text. ", 10) + `</p><div>Wird geladen…</div></body></html>`, true},
		{"declarative shadow dom", `<html><body><p>` + strings.Repeat("Real text. ", 10) + `</p><my-card><template shadowrootmode="open"><p>` + strings.Repeat("Shadow text. ", 30) + `</p></template></my-card></body></html>`, false},
		{"empty mount point", `<html><body><p>` + strings.Repeat("Real text. ", 10) + `</p><div id="reviewsApp"></div></body></html>`, true},
		{"react component placeholder", `<html><body><p>` + strings.Repeat("Real text. ", 10) + `</p><div data-react-class="Comments" data-react-props="{}"></div></body></html>`, true},
	} {
		root, err := html.Parse(strings.NewReader(tc.page))
		if err != nil {
			t.Fatal(err)
		}
		if got := renderReason(root); (got != "") != tc.want {
			t.Errorf("%s: reason %q, want a reason: %v", tc.name, got, tc.want)
		}
	}
}

// TestRenderReasonPages reads the hybrid and static pages of the
// browser test (testdata/hybrid, testdata/static): every hybrid page
// needs rendering, no static one does.
func TestRenderReasonPages(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"hybrid", "static"} {
		files, err := filepath.Glob(filepath.Join("testdata", dir, "*.html"))
		if err != nil || len(files) < 10 {
			t.Fatalf("%s: %d pages, %v", dir, len(files), err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			root, err := html.Parse(strings.NewReader(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			got := renderReason(root)
			if (got != "") != (dir == "hybrid") {
				t.Errorf("%s: reason %q", f, got)
			} else {
				t.Logf("%s: %q", f, got)
			}
		}
	}
}

// TestClientRenderedWithoutBrowser keeps the static HTML and says why, in
// the document's warning.
func TestClientRenderedWithoutBrowser(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, spaPage)
	}))
	t.Cleanup(srv.Close)
	doc, err := newEngine(t, true).Scrape(context.Background(), defaults(srv.URL, FormatMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Warning == nil || !strings.Contains(*doc.Warning, "JavaScript") || !strings.Contains(*doc.Warning, "no browser") ||
		doc.Metadata.StatusCode != 200 || doc.Metadata.Error != nil {
		t.Errorf("warning %v, metadata: %+v", doc.Warning, doc.Metadata)
	}
}

func TestCountryTimezone(t *testing.T) {
	t.Parallel()
	if countryTimezone("de") != "Europe/Berlin" || countryTimezone("US") != "America/New_York" || countryTimezone("ZZ") != "" {
		t.Error("countryTimezone table")
	}
}
