package pdfparse

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// testDoc is a minimal PDF writer for tests: Helvetica text at given
// positions, optional raster images, an info dictionary.
type testDoc struct {
	pages    []*testPage
	title    string
	author   string
	compress bool
	encrypt  bool       // adds a Standard security handler needing a password
	fonts    []testFont // more fonts, named F3, F4, ...
}

// testFont is a font dictionary's entries (without << >>) and, when cmap
// is set, the ToUnicode CMap written as a stream for it.
type testFont struct {
	dict, cmap string
}

// testPage is one page of a testDoc.
type testPage struct {
	w, h  float64
	ops   strings.Builder
	image *image.Gray
}

// page adds a US Letter page.
func (d *testDoc) page() *testPage {
	p := &testPage{w: 612, h: 792}
	d.pages = append(d.pages, p)
	return p
}

// text shows s at (x, y) in font F1 (Helvetica) or F2 (Helvetica-Bold).
func (p *testPage) text(fontName string, size, x, y float64, s string) *testPage {
	r := strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`)
	fmt.Fprintf(&p.ops, "BT /%s %g Tf %g %g Td (%s) Tj ET\n", fontName, size, x, y, r.Replace(s))
	return p
}

// lines shows each line 14pt below the previous, starting at (x, y).
func (p *testPage) lines(size, x, y float64, lines ...string) *testPage {
	for i, l := range lines {
		p.text("F1", size, x, y-float64(i)*size*1.2, l)
	}
	return p
}

// picture places an image covering the rectangle (x, y, w, h).
func (p *testPage) picture(img *image.Gray, x, y, w, h float64) {
	p.image = img
	fmt.Fprintf(&p.ops, "q %g 0 0 %g %g %g cm /Im1 Do Q\n", w, h, x, y)
}

// textImage renders lines of text in Go Regular at px pixels, black on
// white.
func textImage(px float64, lines ...string) *image.Gray {
	ft, err := opentype.Parse(goregular.TTF)
	if err != nil {
		panic(err)
	}
	face, err := opentype.NewFace(ft, &opentype.FaceOptions{Size: px, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		panic(err)
	}
	defer face.Close()
	d := font.Drawer{Src: image.NewUniform(color.Black), Face: face}
	width := 0
	for _, l := range lines {
		width = max(width, d.MeasureString(l).Ceil())
	}
	lineH := int(px * 1.5)
	img := image.NewGray(image.Rect(0, 0, width+int(px)*2, len(lines)*lineH+int(px)*2))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	d.Dst = img
	for i, l := range lines {
		d.Dot = fixed.P(int(px), int(px)+(i+1)*lineH-lineH/3)
		d.DrawString(l)
	}
	return img
}

// bytes serialises the document.
func (d *testDoc) bytes() []byte {
	var buf bytes.Buffer
	var offsets []int
	obj := func(body string) int {
		offsets = append(offsets, buf.Len())
		n := len(offsets)
		fmt.Fprintf(&buf, "%d 0 obj\n%s\nendobj\n", n, body)
		return n
	}
	stream := func(dict string, data []byte, flate bool) int {
		if flate {
			var z bytes.Buffer
			w := zlib.NewWriter(&z)
			_, _ = w.Write(data)
			_ = w.Close()
			data = z.Bytes()
			dict += " /Filter /FlateDecode"
		}
		return obj(fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data))
	}
	buf.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	offsets = append(offsets, 0) // 2: Pages, written last
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>")
	fonts := "/F1 3 0 R /F2 4 0 R"
	for i, f := range d.fonts {
		dict := f.dict
		if f.cmap != "" {
			dict += fmt.Sprintf(" /ToUnicode %d 0 R", stream("", []byte(f.cmap), false))
		}
		fonts += fmt.Sprintf(" /F%d %d 0 R", i+3, obj("<< "+dict+" >>"))
	}
	var kids []string
	for _, p := range d.pages {
		content := stream("", []byte(p.ops.String()), d.compress)
		xobj := ""
		if p.image != nil {
			b := p.image.Bounds()
			im := stream(fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8",
				b.Dx(), b.Dy()), p.image.Pix, true)
			xobj = fmt.Sprintf(" /XObject << /Im1 %d 0 R >>", im)
		}
		n := obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %g %g] /Contents %d 0 R /Resources << /Font << %s >>%s >> >>",
			p.w, p.h, content, fonts, xobj))
		kids = append(kids, fmt.Sprintf("%d 0 R", n))
	}
	offsets[1] = buf.Len()
	fmt.Fprintf(&buf, "2 0 obj\n<< /Type /Pages /Kids [%s] /Count %d >>\nendobj\n", strings.Join(kids, " "), len(kids))
	info := obj(fmt.Sprintf("<< /Title (%s) /Author (%s) /Producer (pdfparse test) >>", d.title, d.author))
	trailerExtra := ""
	if d.encrypt {
		enc := obj("<< /Filter /Standard /V 1 /R 2 /O <" + strings.Repeat("4f", 32) + "> /U <" + strings.Repeat("55", 32) + "> /P -44 >>")
		trailerExtra = fmt.Sprintf(" /Encrypt %d 0 R /ID [<00112233445566778899aabbccddeeff> <00112233445566778899aabbccddeeff>]", enc)
	}
	xref := buf.Len()
	fmt.Fprintf(&buf, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&buf, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&buf, "trailer\n<< /Size %d /Root 1 0 R /Info %d 0 R%s >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, info, trailerExtra, xref)
	return buf.Bytes()
}

// loremLines returns n lines of simple prose, distinct per page and line.
func loremLines(page, n int) []string {
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"}
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		fmt.Fprintf(&b, "Page %d line %d", page, i+1)
		for j := range 9 {
			b.WriteString(" " + words[(page+i*3+j)%len(words)])
		}
		out[i] = b.String()
	}
	return out
}

// longDoc returns a document of n text pages of 40 lines each.
func longDoc(n int) []byte {
	d := &testDoc{compress: true, title: "Long", author: "Tester"}
	for i := range n {
		p := d.page()
		p.text("F2", 16, 72, 740, fmt.Sprintf("Section %d", i+1))
		p.lines(10, 72, 710, loremLines(i+1, 40)...)
	}
	return d.bytes()
}
