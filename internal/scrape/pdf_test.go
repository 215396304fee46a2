package scrape

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// makePDF writes a PDF with one Helvetica line of text per page.
func makePDF(lines ...string) []byte {
	var b bytes.Buffer
	var offsets []int
	obj := func(body string) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offsets), body)
	}
	b.WriteString("%PDF-1.4\n")
	n := len(lines)
	kids := make([]string, n)
	for i := range lines {
		kids[i] = fmt.Sprintf("%d 0 R", 4+2*i)
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	for i, line := range lines {
		stream := fmt.Sprintf("BT /F1 14 Tf 72 720 Td (%s) Tj ET", line)
		obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*i))
		obj(fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(stream), stream))
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes()
}

func TestScrapePDF(t *testing.T) {
	t.Parallel()
	pdf := makePDF("The first page speaks of tides.", "The second page speaks of wind.", "The third page speaks of stars.")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream") // detected by its magic bytes
		w.Write(pdf)
	}))
	t.Cleanup(srv.Close)
	e := newEngine(t, true)
	ctx := context.Background()

	o := defaults(srv.URL+"/doc", FormatMarkdown)
	o.Parsers = []Parser{{Type: "pdf", Mode: "fast", Pages: true, Blocks: true, PageMarkers: true}}
	doc, err := e.Scrape(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	md := *doc.Markdown
	for _, want := range []string{"The first page speaks of tides.", "\n\n---\n<!-- page 2 -->\n\n", "\n\n---\n<!-- page 3 -->\n\n", "stars"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "page 1 -->") {
		t.Errorf("a marker before page 1:\n%s", md)
	}
	if len(doc.Pages) != 3 || doc.Pages[1].PageNumber != 2 || !strings.Contains(doc.Pages[1].Markdown, "wind") {
		t.Errorf("pages: %+v", doc.Pages)
	}
	if len(doc.Blocks) != 3 || len(doc.Blocks[0].Items) == 0 || doc.Blocks[0].Items[0].ID != "p1.b0" {
		t.Errorf("blocks: %+v", doc.Blocks)
	}
	runes := []rune(md)
	for _, pb := range doc.Blocks {
		for _, it := range pb.Items {
			if it.MarkdownSpan != nil && string(runes[it.MarkdownSpan[0]:it.MarkdownSpan[1]]) != it.Content {
				t.Errorf("span of %s does not slice to its content", it.ID)
			}
		}
	}
	if *doc.Metadata.NumPages != 3 || *doc.Metadata.TotalPages != 3 || doc.Metadata.CreditsUsed != 3 {
		t.Errorf("metadata: pages %d/%d credits %d", *doc.Metadata.NumPages, *doc.Metadata.TotalPages, doc.Metadata.CreditsUsed)
	}

	o.Parsers = []Parser{{Type: "pdf", Mode: "fast", MaxPages: 2}}
	doc, err = e.Scrape(ctx, o)
	if err != nil || *doc.Metadata.NumPages != 2 || *doc.Metadata.TotalPages != 3 || strings.Contains(*doc.Markdown, "stars") || doc.Pages != nil {
		t.Errorf("maxPages 2: %v %+v", err, doc.Metadata)
	}

	// OCR of 3 pages cannot fit in 2 s: refused before any work.
	o.Parsers = []Parser{{Type: "pdf", Mode: "ocr"}}
	o.Timeout = 2 * time.Second
	if _, err := e.Scrape(ctx, o); !errors.Is(err, ErrPDFInsufficientTime) || !strings.Contains(err.Error(), "3 pages") {
		t.Errorf("ocr within 2s: %v", err)
	}
}

func TestScrapeCorruptPDF(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Write(makePDF("truncated")[:60])
	}))
	t.Cleanup(srv.Close)
	if _, err := newEngine(t, true).Scrape(context.Background(), defaults(srv.URL, FormatMarkdown)); !errors.Is(err, ErrUnsupportedFile) {
		t.Errorf("corrupt pdf: %v", err)
	}
}
