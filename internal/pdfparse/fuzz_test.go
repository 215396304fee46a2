package pdfparse

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fuzzSeeds returns small generated PDFs exercising the interpreter.
func fuzzSeeds() [][]byte {
	odd := &testDoc{}
	p := odd.page()
	p.ops.WriteString("Q Q q 2 0 0 2 10 10 cm BT /F9 12 Tf (unknown font) Tj ET Q\n")
	p.ops.WriteString("BT /F1 0 Tf (zero size) Tj /F1 10 Tf 2 Tz 14 TL [(a) -300 (b) 5 (c)] TJ T* (next) ' 1 2 (quote) \" ET\n")
	p.ops.WriteString("BT /F1 10 Tf 0 1 -1 0 300 300 Tm (rotated) Tj ET /Im9 Do 1 0 0 RG 0 0 10 10 re f\n")
	small := &testDoc{compress: true}
	small.page().lines(10, 72, 720, "Hello, fuzz.", "- item")
	return [][]byte{layoutDoc(), odd.bytes(), small.bytes(), longDoc(2)}
}

// TestWriteFuzzSeeds rewrites testdata/fuzz/FuzzParse when
// PDFPARSE_WRITE_SEEDS=1.
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("PDFPARSE_WRITE_SEEDS") != "1" {
		t.Skip("set PDFPARSE_WRITE_SEEDS=1 to rewrite the committed fuzz seeds")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzParse")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	seeds := fuzzSeeds()
	good := seeds[0]
	seeds = append(seeds, good[:len(good)/3], good[:len(good)-10], []byte("%PDF-2.0\n%%EOF"))
	for i, s := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed%02d", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		opts := Options{Mode: ModeAuto, Blocks: true, PageMarkers: true, MaxPages: 20,
			OCR: OCRConfig{Pdftoppm: "/nonexistent/pdftoppm"}, Pdftotext: "-"}
		res, err := Parse(ctx, data, opts)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrEncrypted) && !errors.Is(err, ErrTooLarge) && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		checkSpans(t, res)
		if _, err := PageCount(data); err != nil {
			t.Fatalf("Parse succeeded but PageCount failed: %v", err)
		}
	})
}
