// Package pdftest builds small PDFs for tests: one page whose content
// stream is written FlateDecode-compressed as it is produced, so that a
// PDF bomb never exists inflated in the test.
package pdftest

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
)

// FlateDoc is a one-page PDF (Helvetica as /F1) whose content stream is
// what fill writes.
func FlateDoc(fill func(w io.Writer)) []byte {
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	fill(zw)
	_ = zw.Close()
	var b bytes.Buffer
	var offs []int
	obj := func(body string) {
		offs = append(offs, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offs), body)
	}
	b.WriteString("%PDF-1.4\n")
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	obj("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R /Resources << /Font << /F1 4 0 R >> >> >>")
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	obj(fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", z.Len(), z.Bytes()))
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offs)+1, xref)
	return b.Bytes()
}

// Bomb is the PDF bomb of issue 12: about 260 KB for 256 MiB, one
// content stream inflating to a single string of mib MiB shown with Tj.
func Bomb(mib int) []byte {
	return FlateDoc(func(w io.Writer) {
		_, _ = io.WriteString(w, "BT /F1 12 Tf 72 720 Td (")
		chunk := bytes.Repeat([]byte("A"), 1<<20)
		for range mib {
			_, _ = w.Write(chunk)
		}
		_, _ = io.WriteString(w, ") Tj ET\n")
	})
}
