package scrape

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/firegate/firegate/internal/browser"
	"github.com/firegate/firegate/internal/media"
	"github.com/firegate/firegate/internal/testenv"
)

// TestHybridWithoutBrowser: a hybrid page on a server without a browser
// is built from its HTML, and the warning says why it may lack content.
func TestHybridWithoutBrowser(t *testing.T) {
	t.Parallel()
	srv := hybridSite(t)
	doc, err := newEngine(t, true).Scrape(context.Background(), defaults(srv.URL+"/hybrid/pricing-json.html", FormatMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Warning == nil || !strings.Contains(*doc.Warning, `"Loading prices..."`) || !strings.Contains(*doc.Warning, "no browser") {
		t.Errorf("warning %v", doc.Warning)
	}
	if !strings.Contains(*doc.Markdown, "Pick the plan") {
		t.Errorf("markdown %q", *doc.Markdown)
	}
}

// failingRenderer is a browser whose every render fails to load the page.
type failingRenderer struct{ err error }

func (failingRenderer) Available() error { return nil }
func (f failingRenderer) Render(context.Context, browser.Request) (*browser.Result, error) {
	return nil, f.err
}

// TestHybridRenderFails: when the render of a page that looked hybrid
// fails, the page is built from its HTML with a warning; a proxy that
// failed stays an error (the engine tries another).
func TestHybridRenderFails(t *testing.T) {
	t.Parallel()
	srv := hybridSite(t)
	ms, err := media.New(media.Options{Dir: t.TempDir()}, testenv.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		err     error
		wantErr bool
	}{
		{"navigation", fmt.Errorf("browser: navigate %s: net::ERR_ABORTED: %w", srv.URL, browser.ErrNavigation), false},
		{"proxy", fmt.Errorf("browser: %w", browser.ErrProxy), true},
	} {
		e := newEngine(t, true)
		e.browser, e.media = failingRenderer{tc.err}, ms
		e.mediaURL = func(id string) string { return "http://media.test/" + id }
		doc, err := e.Scrape(context.Background(), defaults(srv.URL+"/hybrid/skeleton.html", FormatMarkdown))
		if tc.wantErr {
			if err == nil || !errors.Is(err, browser.ErrProxy) {
				t.Errorf("%s: err %v, want the proxy's", tc.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if doc.Warning == nil || !strings.Contains(*doc.Warning, "could not render") || !strings.Contains(*doc.Markdown, "Evening courses") {
			t.Errorf("%s: warning %v, markdown %q", tc.name, doc.Warning, *doc.Markdown)
		}
	}
}
