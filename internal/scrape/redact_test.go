package scrape

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/testenv"
)

const piiPage = `<html><head><title>Team</title></head><body><main><h1>Contact</h1>
<p>Write to <a href="mailto:jane.doe@example.com">jane.doe@example.com</a> or call +44 20 7946 0958.</p>
<p>Refunds to DE89 3704 0044 0532 0130 00. Order 1048576233 of 12.05.2024, version 2.1.0.</p>
</main></body></html>`

func TestRedactPII(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, piiPage)
	}))
	t.Cleanup(srv.Close)
	log := testenv.Logger(t)
	e := New(Config{Fetcher: fetch.New(fetch.Options{AllowPrivate: true}, log), Log: log})

	o := defaults(srv.URL, FormatMarkdown, FormatHTML, FormatRawHTML)
	o.RedactPII = &RedactPII{Mode: "accurate", ReplaceStyle: "tag", Entities: []string{"PERSON", "EMAIL", "PHONE", "LOCATION", "FINANCIAL", "SECRET"}}
	doc, err := e.Scrape(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	md := *doc.Markdown
	for _, leak := range []string{"jane.doe", "7946", "DE89"} {
		for name, out := range map[string]string{"markdown": md, "html": *doc.HTML, "rawHtml": *doc.RawHTML} {
			if strings.Contains(out, leak) {
				t.Errorf("%s still holds %q: %s", name, leak, out)
			}
		}
	}
	for _, keep := range []string{"<EMAIL>", "<PHONE>", "<FINANCIAL>", "Order 1048576233 of 12.05.2024, version 2.1.0."} {
		if !strings.Contains(md, keep) {
			t.Errorf("markdown lacks %q: %s", keep, md)
		}
	}
	if !strings.Contains(*doc.HTML, "&lt;EMAIL&gt;") {
		t.Errorf("html placeholder not escaped: %s", *doc.HTML)
	}
	if doc.Metadata.CreditsUsed != 5 {
		t.Errorf("credits = %d, want 1 + 4 for redactPII", doc.Metadata.CreditsUsed)
	}
	if doc.Warning == nil || !strings.Contains(*doc.Warning, "PERSON") {
		t.Errorf("warning = %v, want the PERSON/LOCATION note", doc.Warning)
	}

	// Only PHONE, masked: the e-mail stays, no model warning.
	o = defaults(srv.URL, FormatMarkdown)
	o.RedactPII = &RedactPII{Mode: "fast", ReplaceStyle: "mask", Entities: []string{"PHONE"}}
	doc, err = e.Scrape(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if md := *doc.Markdown; !strings.Contains(md, "jane.doe@example.com") || !strings.Contains(md, "call ****************.") {
		t.Errorf("markdown = %s", md)
	}
	if doc.Warning != nil {
		t.Errorf("warning = %q", *doc.Warning)
	}
}

func TestParseFileRedactPII(t *testing.T) {
	t.Parallel()
	e := New(Config{Log: testenv.Logger(t)})
	o := defaults("", FormatMarkdown)
	o.RedactPII = &RedactPII{Mode: "accurate", ReplaceStyle: "remove", Entities: []string{"EMAIL"}}
	doc, err := e.ParseFile(context.Background(), o, File{Name: "notes.md", ContentType: "text/markdown", Data: []byte("# Notes\n\nReach me at a.b@example.net today.\n")})
	if err != nil {
		t.Fatal(err)
	}
	if md := *doc.Markdown; strings.Contains(md, "example.net") || !strings.Contains(md, "Reach me at  today.") {
		t.Errorf("markdown = %q", md)
	}
	if doc.Metadata.CreditsUsed != 5 {
		t.Errorf("credits = %d", doc.Metadata.CreditsUsed)
	}
}

// TestRedactPIIPDF: PDF pages and blocks are redacted like the markdown,
// block spans are dropped, and each extra page adds the surcharge again.
func TestRedactPIIPDF(t *testing.T) {
	t.Parallel()
	pdf := makePDF("Mail anna@example.org today.", "Nothing personal here.", "Call +44 20 7946 0958 now.")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Write(pdf)
	}))
	t.Cleanup(srv.Close)
	e := newEngine(t, true)
	o := defaults(srv.URL+"/doc", FormatMarkdown)
	o.Parsers = []Parser{{Type: "pdf", Mode: "fast", Pages: true, Blocks: true}}
	o.RedactPII = &RedactPII{Mode: "accurate", ReplaceStyle: "tag", Entities: []string{"EMAIL", "PHONE"}}
	doc, err := e.Scrape(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	all := *doc.Markdown
	for _, p := range doc.Pages {
		all += "\n" + p.Markdown
	}
	for _, pb := range doc.Blocks {
		for _, it := range pb.Items {
			all += "\n" + it.Content
			if it.MarkdownSpan != nil {
				t.Errorf("block %s keeps a span into the unredacted text", it.ID)
			}
		}
	}
	if strings.Contains(all, "anna@") || strings.Contains(all, "7946") || strings.Count(all, "<EMAIL>") != 3 {
		t.Errorf("not redacted everywhere:\n%s", all)
	}
	// 3 pages: 3 credits, plus 4 for redactPII and 4 per extra page.
	if doc.Metadata.CreditsUsed != 3+4*3 {
		t.Errorf("credits = %d, want 15", doc.Metadata.CreditsUsed)
	}
}
