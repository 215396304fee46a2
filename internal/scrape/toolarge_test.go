package scrape

import (
	"archive/zip"
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/firegate/firegate/internal/errcode"
)

// pdfBomb is a one-page PDF whose content stream inflates to one string of
// mib MiB.
func pdfBomb(mib int) []byte {
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	zw.Write([]byte("BT /F1 12 Tf 72 720 Td ("))
	chunk := bytes.Repeat([]byte("A"), 1<<20)
	for range mib {
		zw.Write(chunk)
	}
	zw.Write([]byte(") Tj ET"))
	zw.Close()
	var b bytes.Buffer
	var offs []int
	for i, body := range []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
		fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", z.Len(), z.Bytes()),
	} {
		if i == 0 {
			b.WriteString("%PDF-1.4\n")
		}
		offs = append(offs, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, body)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offs)+1, xref)
	return b.Bytes()
}

// TestParseFileTooLarge: a PDF bomb and a DOCX zip bomb fail with their
// own kinds and a message naming the limit.
func TestParseFileTooLarge(t *testing.T) {
	t.Parallel()
	e := newEngine(t, false)
	_, err := e.ParseFile(t.Context(), defaults("", FormatMarkdown), File{Name: "bomb.pdf", Data: pdfBomb(64)})
	var f *errcode.Failure
	if !errors.Is(err, ErrPDFTooLarge) || !errors.As(err, &f) || !strings.Contains(f.Msg, "string longer than 4194304 bytes") {
		t.Errorf("pdf bomb: %v", err)
	}
	if Outcome(err) != "unsupported" {
		t.Errorf("outcome %q", Outcome(err))
	}

	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, _ := zw.Create("word/document.xml")
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	for range 51 {
		w.Write(chunk)
	}
	zw.Close()
	_, err = e.ParseFile(t.Context(), defaults("", FormatMarkdown), File{Name: "bomb.docx", Data: zb.Bytes()})
	if !errors.Is(err, ErrFileTooLarge) || !errors.As(err, &f) || !strings.Contains(f.Msg, "word/document.xml") {
		t.Errorf("docx bomb: %v", err)
	}
}
