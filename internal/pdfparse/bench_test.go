package pdfparse

import (
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/firegate/firegate/internal/pdfparse/pdftest"
)

// BenchmarkParse compares fast mode with poppler's pdftotext on the same
// 300-page file (pages/s reported), and measures OCR per page.
func BenchmarkParse(b *testing.B) {
	data := longDoc(300)
	b.Run("fast300", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := Parse(b.Context(), data, Options{Mode: ModeFast, Blocks: true}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(300*b.N)/b.Elapsed().Seconds(), "pages/s")
	})
	b.Run("pdftotext300", func(b *testing.B) {
		path, err := exec.LookPath("pdftotext")
		if err != nil {
			b.Skip("pdftotext not installed")
		}
		f := b.TempDir() + "/in.pdf"
		if err := os.WriteFile(f, data, 0o600); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if err := exec.Command(path, f, os.DevNull).Run(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(300*b.N)/b.Elapsed().Seconds(), "pages/s")
	})
	b.Run("bomb256", func(b *testing.B) {
		// Issue 12's PDF bomb: refused, in time and memory that do not
		// depend on the 256 MiB it inflates to.
		bomb := pdftest.Bomb(256)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Parse(b.Context(), bomb, Options{Mode: ModeFast}); !errors.Is(err, ErrTooLarge) {
				b.Fatal(err)
			}
		}
	})
	b.Run("ocrPage", func(b *testing.B) {
		requireOCR(b)
		d := &testDoc{}
		d.page().lines(11, 72, 720, loremLines(1, 45)...)
		page := d.bytes()
		for b.Loop() {
			if _, err := Parse(b.Context(), page, Options{Mode: ModeOCR}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/page")
	})
}
