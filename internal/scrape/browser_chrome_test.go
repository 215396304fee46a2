package scrape

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/browser"
	"github.com/firegate/firegate/internal/errcode"
)

func (c *countingRenderer) Render(ctx context.Context, req browser.Request) (*browser.Result, error) {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	return c.Pool.Render(ctx, req)
}

func (c *countingRenderer) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

func TestEngineChoice(t *testing.T) {
	t.Parallel()
	e, cr := browserEngine(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/spa", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, spaPage)
	})
	mux.HandleFunc("/static", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, articleHTML)
	})
	mux.HandleFunc("/form", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<html><body><input id="q"><button id="go" onclick="document.getElementById('out').textContent='You searched for '+document.getElementById('q').value">Go</button><p id="out"></p></body></html>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	ctx := context.Background()

	// A static page never starts the browser.
	if _, err := e.Scrape(ctx, defaults(srv.URL+"/static", FormatMarkdown)); err != nil {
		t.Fatal(err)
	}
	if n := cr.count(); n != 0 {
		t.Fatalf("static page used the browser %d times", n)
	}

	// A client-rendered page gets its rendered content.
	doc, err := e.Scrape(ctx, defaults(srv.URL+"/spa", FormatMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(*doc.Markdown, "Rendered by script") || doc.Metadata.Error != nil || cr.count() != 1 {
		t.Errorf("spa: calls=%d markdown=%q err=%v", cr.count(), *doc.Markdown, doc.Metadata.Error)
	}

	// Actions and a screenshot.
	o := defaults(srv.URL+"/form", FormatMarkdown, FormatScreenshot)
	o.Timeout = 30 * time.Second
	o.Actions = []Action{
		{Type: "click", Selector: "#q"},
		{Type: "write", Text: "lanterns"},
		{Type: "click", Selector: "#go"},
		{Type: "executeJavascript", Script: "document.getElementById('out').textContent.length"},
		{Type: "scrape"},
	}
	doc, err = e.Scrape(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(*doc.Markdown, "You searched for lanterns") {
		t.Errorf("markdown after actions: %q", *doc.Markdown)
	}
	if doc.Screenshot == nil || !strings.HasPrefix(*doc.Screenshot, "http://media.test/") {
		t.Errorf("screenshot: %v", doc.Screenshot)
	}
	a := doc.Actions
	if a == nil || len(a.JavascriptReturns) != 1 || a.JavascriptReturns[0].Type != "number" || len(a.Scrapes) != 1 ||
		!strings.Contains(a.Scrapes[0].HTML, "You searched for lanterns") {
		t.Errorf("actions: %+v", a)
	}

	// A failing action names its index.
	o.Actions = []Action{{Type: "click", Selector: "#missing"}}
	o.Formats = []Format{{Type: FormatMarkdown}}
	_, err = e.Scrape(ctx, o)
	var f *errcode.Failure
	if !errors.As(err, &f) || f.Kind != ErrAction || !strings.Contains(f.Msg, "Action 0 (click)") {
		t.Errorf("failing action: %v", err)
	}
}
