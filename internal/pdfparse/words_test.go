package pdfparse

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// helvAdvance returns the advance of s in Helvetica at size points.
func helvAdvance(s string, size float64) float64 {
	w := helveticaWidths()
	adv := 0.0
	for _, c := range []byte(s) {
		adv += w[c-32] * size / 1000
	}
	return adv
}

// placed draws each piece of s with its own Tj, moving the pen with Td by
// the piece's advance plus the extra points that follow it (Chromium's way
// of kerning and justifying).
func placed(size float64, pieces ...any) string {
	var b strings.Builder
	fmt.Fprintf(&b, "BT /F1 %g Tf 72 700 Td ", size)
	for _, p := range pieces {
		switch p := p.(type) {
		case string:
			fmt.Fprintf(&b, "(%s) Tj %g 0 Td ", p, helvAdvance(p, size))
		case float64:
			fmt.Fprintf(&b, "%g 0 Td ", p)
		}
	}
	b.WriteString("ET\n")
	return b.String()
}

// condensed draws s one glyph at a time at 50 % horizontal scaling (Tz),
// each glyph where the previous one ends, without drawing the spaces.
func condensed(s string) string {
	var b strings.Builder
	b.WriteString("BT /F1 12 Tf 50 Tz 72 700 Td ")
	for _, c := range s {
		adv := helvAdvance(string(c), 12) * 0.5
		if c != ' ' {
			fmt.Fprintf(&b, "(%c) Tj ", c)
		}
		fmt.Fprintf(&b, "%g 0 Td ", adv)
	}
	b.WriteString("ET\n")
	return b.String()
}

// identityFont is a Type0 font (Identity-H) whose CIDs 1..26 are a..z, 500
// units wide; it has no space glyph.
var identityFont = testFont{
	dict: "/Type /Font /Subtype /Type0 /BaseFont /TestSans /Encoding /Identity-H /DescendantFonts [<< /Type /Font " +
		"/Subtype /CIDFontType2 /BaseFont /TestSans /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> " +
		"/DW 500 /W [1 26 500] >>]",
	cmap: "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n/CMapName /Test-UCS def\n/CMapType 2 def\n" +
		"1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n1 beginbfrange\n<0001> <001A> <0061>\nendbfrange\n" +
		"endcmap\nCMapName currentdict /CMapName get exch /CMap defineresource pop\nend\nend\n",
}

// cids returns the Identity-H hex string of lowercase s in identityFont.
func cids(s string) string {
	var b strings.Builder
	b.WriteByte('<')
	for _, c := range s {
		fmt.Fprintf(&b, "%04X", c-'a'+1)
	}
	b.WriteByte('>')
	return b.String()
}

// TestWordPlacement checks that words come out whole and apart however the
// content stream positions them.
func TestWordPlacement(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fonts []testFont
		ops   string
		want  string
	}{
		{
			// Chromium: a word ends with a space glyph, then Td moves the
			// pen for the kerning of the next letter.
			name: "space glyph then Td",
			ops:  placed(24, "Quarterly ", -0.4, "W", 0.3, "idget Report"),
			want: "# Quarterly Widget Report",
		},
		{
			name: "space glyph at the start",
			ops:  placed(12, "sold 4,200 units.", " West grew"),
			want: "sold 4,200 units. West grew",
		},
		{
			// Justified by moving each word a little further than its
			// advance (space glyph included).
			name: "justified by Td",
			ops:  placed(12, "Justified ", 1.1, "text ", 0.9, "stretches ", 1.3, "spaces"),
			want: "Justified text stretches spaces",
		},
		{
			name: "TJ word spaces without space glyphs",
			ops:  "BT /F1 12 Tf 72 700 Td [(Quarterly)-250(Widget)-250(Report)] TJ ET",
			want: "Quarterly Widget Report",
		},
		{
			name: "TJ kerning inside words",
			ops:  "BT /F1 12 Tf 72 700 Td [(W)80(a)40(ve)-20(s)-300(T)70(o)60(y)] TJ ET",
			want: "Waves Toy",
		},
		{
			name: "Tc letter spacing and Tw word spacing",
			ops:  "BT /F1 12 Tf 1.5 Tc 4 Tw 72 700 Td [(Trac)(ked words)] TJ ET",
			want: "Tracked words",
		},
		{
			name: "Tc split word and TJ space",
			ops:  "BT /F1 12 Tf 2 Tc 72 700 Td [(Let)(ter)-400(spaced)] TJ ET",
			want: "Letter spaced",
		},
		{
			// At 50 % scaling a space is 1.7 points, less than 0.15 em.
			name: "Tz glyph by glyph",
			ops:  condensed("narrow words set apart"),
			want: "narrow words set apart",
		},
		{
			name: "Tm scaled text",
			ops: fmt.Sprintf("BT /F1 1 Tf 12 0 0 12 72 700 Tm (Scaled) Tj 12 0 0 12 %g 700 Tm (text) Tj ET",
				72+helvAdvance("Scaled ", 12)),
			want: "Scaled text",
		},
		{
			name: "Tm per glyph without spaces",
			ops: fmt.Sprintf("BT /F1 12 Tf 1 0 0 1 72 700 Tm (o) Tj 1 0 0 1 %g 700 Tm (n) Tj 1 0 0 1 %g 700 Tm (e) Tj "+
				"1 0 0 1 %g 700 Tm (two) Tj ET", 72+helvAdvance("o", 12), 72+helvAdvance("on", 12), 72+helvAdvance("one ", 12)),
			want: "one two",
		},
		{
			name:  "font without a space glyph",
			fonts: []testFont{identityFont},
			ops: fmt.Sprintf("BT /F3 12 Tf 72 700 Td [%s 40 %s -300 %s] TJ ET",
				cids("two"), cids("kerned"), cids("words")),
			want: "twokerned words",
		},
		{
			// A banner printed over the text on the same baseline.
			name: "overlapping texts",
			ops:  "BT /F1 12 Tf 72 700 Td (alpha bravo charlie delta) Tj ET BT /F1 12 Tf 110 700 Td (BANNER) Tj ET",
			want: "alpha bravo charlie delta BANNER",
		},
		{
			// Dot leaders drawn one dot at a time are not letter spacing.
			name: "dot leaders",
			ops:  "BT /F1 12 Tf 72 700 Td (Introduction) Tj 70 0 Td (.) Tj 5 0 Td (.) Tj 5 0 Td (.) Tj 5 0 Td (.) Tj 5 0 Td (.) Tj 8 0 Td (1) Tj ET",
			want: "Introduction . . . . . 1",
		},
		{
			name: "new baseline, new line",
			ops:  "BT /F1 12 Tf 72 700 Td (first line) Tj 0 -14 Td (second line) Tj ET",
			want: "first line second line",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := &testDoc{fonts: tt.fonts}
			p := d.page()
			p.ops.WriteString(tt.ops)
			if strings.HasPrefix(tt.want, "# ") {
				p.lines(10, 72, 600, "Body text at ten points sets the body size of the page.")
				tt.want += "\n\nBody text at ten points sets the body size of the page."
			}
			data := d.bytes()
			res, err := Parse(t.Context(), data, Options{Mode: ModeFast})
			if err != nil {
				t.Fatal(err)
			}
			if res.Markdown != tt.want {
				t.Errorf("markdown = %q, want %q", res.Markdown, tt.want)
			}
			// The same words as pdftotext's (in any order: it reads the
			// overlapping texts apart).
			got, want := normWords(res.Markdown), normWords(pdftotext(t, data))
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("words %q, pdftotext's %q", got, want)
			}
		})
	}
}
