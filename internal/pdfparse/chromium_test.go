package pdfparse

import (
	"context"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/testenv"
)

// printedPage is an HTML page that Chromium prints to PDF, with the
// phrases the parse must keep whole.
type printedPage struct {
	name    string
	html    string
	phrases []string
}

// printedPages returns pages set in serif, sans-serif and monospace fonts
// (the machine's defaults: Liberation and DejaVu) and a table, with what makes a producer place words by position:
// kerning pairs, justified lines, letter and word spacing, styled words
// inside sentences.
func printedPages() []printedPage {
	prose := `<p>The widget division sold 4,200 units. West region grew by 12 percent while the East region stayed flat.
Travel, AVAST, Wave, Toyota and "quoted" words keep their kerning; an <em>italic phrase</em> and
<strong>bold words</strong> sit inside the sentence, and a <a href="https://example.com/">linked name</a> too.
The official offer was difficult to refuse: flexible, efficient and final.</p>
<p style="text-align: justify; width: 330px">Justified text that wraps across several lines makes the browser stretch the
spaces between the words so that every line fills the column completely, from the left margin to the
right margin, except for the last line of the paragraph.</p>
<p style="letter-spacing: 0.15em">Letter spaced words across one line</p>
<p style="word-spacing: 0.6em">Words set with extra room between them</p>
<ul><li>First point of the list</li><li>Second point, with a comma</li></ul>`
	return []printedPage{
		{
			name: "serif",
			html: `<body style="font-family: serif"><h1>Quarterly Widget Report</h1>` + prose + `</body>`,
			phrases: []string{"# Quarterly Widget Report", "units. West region", "Justified text that wraps",
				"italic phrase and bold words sit", "Letter spaced words across one line",
				"The official offer was difficult to refuse: flexible, efficient and final."},
		},
		{
			name: "sans",
			// DejaVu Sans sets ligatures, which ToUnicode maps to U+FB01...
			html: `<body style="font-family: 'DejaVu Sans', sans-serif"><h2>Annual Travel Survey</h2>` + prose + `</body>`,
			phrases: []string{"## Annual Travel Survey", "units. West region", "Words set with extra room between them",
				"The official offer was difficult to refuse: flexible, efficient and final."},
		},
		{
			name: "mono",
			html: `<body style="font-family: monospace"><h3>Build Log Summary</h3>` + prose +
				`<pre>func main() {
	fmt.Println("hello world")
}</pre></body>`,
			phrases: []string{"### Build Log Summary", "units. West region", `fmt.Println("hello world")`},
		},
		{
			name: "table",
			html: `<body style="font-family: sans-serif"><h2>Regional Sales</h2>
<table border="1" style="border-collapse: collapse">
<tr><th>Region name</th><th>Units sold</th><th>Growth rate</th><th>Lead contact</th></tr>
<tr><td>West Coast</td><td>1,900</td><td>12 %</td><td>Ava Waters</td></tr>
<tr><td>East Coast</td><td>2,300</td><td>0 %</td><td>Tom Yates</td></tr>
<tr><td>Central Plains</td><td>870</td><td>-3 %</td><td>Vera Lowe</td></tr>
</table><p>Figures are in thousands of units, rounded to the nearest ten.</p></body>`,
			phrases: []string{"## Regional Sales", "West Coast", "Ava Waters", "Central Plains", "rounded to the nearest ten."},
		},
	}
}

// printToPDF prints an HTML page with Chromium's print-to-PDF.
func printToPDF(t *testing.T, chrome, page string) []byte {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "page.html"), filepath.Join(dir, "page.pdf")
	doc := `<!DOCTYPE html><html><head><meta charset="utf-8"></head>` + page + `</html>`
	if err := os.WriteFile(in, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Patient(60*time.Second))
	defer cancel()
	cmd := exec.CommandContext(ctx, chrome, "--headless", "--no-sandbox", "--disable-gpu",
		"--no-first-run", "--no-pdf-header-footer", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--print-to-pdf="+out, "file://"+in)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium print-to-pdf: %v\n%s", err, msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

var tagRe = regexp.MustCompile(`<[^>]*>`)

// htmlWords returns the words of an HTML fragment's text.
func htmlWords(s string) []string {
	return normWords(html.UnescapeString(tagRe.ReplaceAllString(s, " ")))
}

// recall is the share of want's words (as a multiset) found in got.
func recall(want, got []string) float64 {
	have := map[string]int{}
	for _, w := range got {
		have[w]++
	}
	found := 0
	for _, w := range want {
		if have[w] > 0 {
			have[w]--
			found++
		}
	}
	return float64(found) / float64(len(want))
}

// TestChromiumPrintedWords parses PDFs printed by Chromium, whose word
// spaces are partly positions rather than space glyphs: every word of the
// page must come out whole, with at least pdftotext's word recall on the
// same file.
func TestChromiumPrintedWords(t *testing.T) {
	t.Parallel()
	chrome := testenv.ChromePath(t)
	for _, pg := range printedPages() {
		t.Run(pg.name, func(t *testing.T) {
			t.Parallel()
			data := printToPDF(t, chrome, pg.html)
			res, err := Parse(t.Context(), data, Options{Mode: ModeFast})
			if err != nil {
				t.Fatal(err)
			}
			want := htmlWords(pg.html)
			ours := recall(want, normWords(res.Markdown))
			poppler := recall(want, normWords(pdftotext(t, data)))
			t.Logf("word recall: ours %.3f, pdftotext %.3f (%d words)", ours, poppler, len(want))
			if ours < poppler {
				t.Errorf("word recall %.3f below pdftotext's %.3f", ours, poppler)
			}
			if ours < 0.99 {
				t.Errorf("word recall %.3f, want >= 0.99", ours)
			}
			for _, p := range pg.phrases {
				if !strings.Contains(res.Markdown, p) {
					t.Errorf("markdown lacks %q", p)
				}
			}
			if t.Failed() {
				t.Logf("markdown:\n%s", res.Markdown)
			}
		})
	}
}
