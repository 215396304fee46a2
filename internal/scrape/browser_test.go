package scrape

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

const spaPage = `<!doctype html><html><head><title>App</title><script src="/bundle.js"></script></head>
<body><div id="root"></div><script>setTimeout(()=>{document.getElementById("root").innerHTML="<h1>Rendered by script</h1><p>"+"Hello from the client. ".repeat(5)+"</p>"},300)</script></body></html>`

func TestLooksClientRendered(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		page string
		want bool
	}{
		{"spa root", spaPage, true},
		{"next root", `<html><body><div id="__next"></div><script src="/a.js"></script></body></html>`, true},
		{"noscript", `<html><body><noscript>You need to enable JavaScript to run this app.</noscript><p>Loading</p></body></html>`, true},
		{"script and almost no text", `<html><body><p>Loading…</p><script src="/a.js"></script></body></html>`, true},
		{"static article", articleHTML, false},
		{"static without scripts", `<html><body><p>Short.</p></body></html>`, false},
		{"root with server-rendered text", `<html><body><div id="root"><p>` + strings.Repeat("Real text. ", 60) + `</p></div><script src="/a.js"></script></body></html>`, false},
	} {
		root, err := html.Parse(strings.NewReader(tc.page))
		if err != nil {
			t.Fatal(err)
		}
		if got := looksClientRendered(root); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestClientRenderedWithoutBrowser keeps the static HTML and says why.
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
	if doc.Metadata.Error == nil || !strings.Contains(*doc.Metadata.Error, "JavaScript") || doc.Metadata.StatusCode != 200 {
		t.Errorf("metadata: %+v", doc.Metadata)
	}
}

func TestCountryTimezone(t *testing.T) {
	t.Parallel()
	if countryTimezone("de") != "Europe/Berlin" || countryTimezone("US") != "America/New_York" || countryTimezone("ZZ") != "" {
		t.Error("countryTimezone table")
	}
}
