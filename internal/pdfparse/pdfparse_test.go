package pdfparse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/firegate/firegate/internal/testenv"
)

// layoutDoc has a full-width title over two text columns (page 1), a
// table, lists and a page number (page 2), and a third page of prose.
func layoutDoc() []byte {
	d := &testDoc{title: "Annual Report", author: "Jane Doe"}
	p := d.page()
	p.text("F2", 24, 72, 720, "Annual Report")
	p.lines(10, 72, 690, "The left column starts here and talks", "about many things in a row of words", "that continue down the left side.")
	p.lines(10, 330, 690, "The right column begins after that", "and holds other words that belong", "to the second column of text.")
	p2 := d.page()
	p2.text("F2", 14, 72, 720, "Prices")
	for i, row := range [][]string{{"Item", "Qty", "Price"}, {"Apple", "3", "1.20"}, {"Pear", "10", "0.80"}, {"Fig", "7", "2.50"}} {
		for j, c := range row {
			p2.text("F1", 10, 72+float64(j)*120, 690-float64(i)*14, c)
		}
	}
	p2.lines(10, 72, 600, "- first bullet", "- second bullet")
	p2.lines(10, 72, 560, "1. one", "2. two")
	p2.text("F1", 9, 300, 30, "2")
	p3 := d.page()
	p3.lines(10, 72, 720, "Closing words of the report,", "spread over two lines.")
	p3.lines(10, 72, 680, "A second paragraph.")
	return d.bytes()
}

const layoutPage1 = "# Annual Report\n\n" +
	"The left column starts here and talks about many things in a row of words that continue down the left side.\n\n" +
	"The right column begins after that and holds other words that belong to the second column of text."

const layoutPage2 = "### Prices\n\n" +
	"| Item | Qty | Price |\n| --- | --- | --- |\n| Apple | 3 | 1.20 |\n| Pear | 10 | 0.80 |\n| Fig | 7 | 2.50 |\n\n" +
	"- first bullet\n- second bullet\n\n1. one\n2. two\n\n2"

const layoutPage3 = "Closing words of the report, spread over two lines.\n\nA second paragraph."

func TestParseFastLayout(t *testing.T) {
	t.Parallel()
	data := layoutDoc()
	tests := []struct {
		name    string
		opts    Options
		want    string
		wantNum int
	}{
		{"plain", Options{Mode: ModeFast}, layoutPage1 + "\n\n" + layoutPage2 + "\n\n" + layoutPage3, 3},
		{"markers", Options{Mode: ModeFast, PageMarkers: true},
			layoutPage1 + "\n\n---\n<!-- page 2 -->\n\n" + layoutPage2 + "\n\n---\n<!-- page 3 -->\n\n" + layoutPage3, 3},
		{"maxPages", Options{Mode: ModeFast, PageMarkers: true, MaxPages: 2},
			layoutPage1 + "\n\n---\n<!-- page 2 -->\n\n" + layoutPage2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := Parse(t.Context(), data, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, res.Markdown); diff != "" {
				t.Errorf("markdown (-want +got):\n%s", diff)
			}
			if res.NumPages != tt.wantNum || res.TotalPages != 3 {
				t.Errorf("NumPages, TotalPages = %d, %d; want %d, 3", res.NumPages, res.TotalPages, tt.wantNum)
			}
			wantPages := []Page{{1, layoutPage1}, {2, layoutPage2}, {3, layoutPage3}}[:tt.wantNum]
			if diff := cmp.Diff(wantPages, res.Pages); diff != "" {
				t.Errorf("pages (-want +got):\n%s", diff)
			}
			if res.Title != "Annual Report" || res.Author != "Jane Doe" {
				t.Errorf("Title, Author = %q, %q", res.Title, res.Author)
			}
		})
	}
}

// checkSpans asserts that every block's span slices the markdown (in code
// points) to its content, and that ids and reading orders are consistent.
func checkSpans(t *testing.T, res *Result) {
	t.Helper()
	md := []rune(res.Markdown)
	last := -1
	for _, pb := range res.Blocks {
		for i, it := range pb.Items {
			if want := fmt.Sprintf("p%d.b%d", pb.PageNumber, i); it.ID != want || it.ReadingOrder != i {
				t.Errorf("block %s order %d; want %s, %d", it.ID, it.ReadingOrder, want, i)
			}
			if it.BBox != nil {
				for _, v := range it.BBox {
					if v < 0 || v > 1 {
						t.Errorf("block %s bbox %v outside 0..1", it.ID, *it.BBox)
					}
				}
			}
			if it.MarkdownSpan == nil {
				if it.Content != "" {
					t.Errorf("block %s has content %q but no span", it.ID, it.Content)
				}
				continue
			}
			s := *it.MarkdownSpan
			if s[0] < last || s[0] > s[1] || s[1] > len(md) {
				t.Errorf("block %s span %v out of order or range (last %d, len %d)", it.ID, s, last, len(md))
				continue
			}
			last = s[1]
			if got := string(md[s[0]:s[1]]); got != it.Content {
				t.Errorf("block %s span %v slices %q, content %q", it.ID, s, got, it.Content)
			}
		}
	}
}

func TestParseBlocks(t *testing.T) {
	t.Parallel()
	for _, markers := range []bool{false, true} {
		res, err := Parse(t.Context(), layoutDoc(), Options{Mode: ModeFast, Blocks: true, PageMarkers: markers})
		if err != nil {
			t.Fatal(err)
		}
		checkSpans(t, res)
		var types []string
		for _, pb := range res.Blocks {
			if pb.Status != StatusOK || pb.Width != nil {
				t.Errorf("page %d status %q width %v; want ok, nil", pb.PageNumber, pb.Status, pb.Width)
			}
			for _, it := range pb.Items {
				types = append(types, it.Type)
			}
		}
		want := []string{"title", "text", "text", "section_header", "table", "text", "text", "page_number", "text", "text"}
		if diff := cmp.Diff(want, types); diff != "" {
			t.Errorf("types (-want +got):\n%s", diff)
		}
		b, err := json.Marshal(res.Blocks[0].Items[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{`"id":"p1.b0"`, `"type":"title"`, `"label":"heading-1"`, `"bbox":[`, `"markdownSpan":[0,15]`, `"readingOrder":0`, `"source":"text_layer"`, `"confidence":{"layout":0.9,"ocr":null}`} {
			if !strings.Contains(string(b), key) {
				t.Errorf("block JSON %s lacks %s", b, key)
			}
		}
	}
}

func TestParseUnicodeSpans(t *testing.T) {
	t.Parallel()
	d := &testDoc{}
	// WinAnsi: 0xe9 é, 0x95 bullet, 0x80 euro.
	d.page().lines(10, 72, 720, "Caf\xe9 cr\xe8me \x80 5").lines(10, 72, 690, "\x95 na\xefve item")
	d.page().lines(10, 72, 720, "D\xe9j\xe0 vu")
	res, err := Parse(t.Context(), d.bytes(), Options{Mode: ModeFast, Blocks: true, PageMarkers: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "Café crème € 5\n\n- naïve item\n\n---\n<!-- page 2 -->\n\nDéjà vu"
	if res.Markdown != want {
		t.Errorf("markdown = %q, want %q", res.Markdown, want)
	}
	checkSpans(t, res)
}

func TestParseMaxPagesLong(t *testing.T) {
	t.Parallel()
	data := longDoc(300)
	n, err := PageCount(data)
	if err != nil || n != 300 {
		t.Fatalf("PageCount = %d, %v; want 300", n, err)
	}
	res, err := Parse(t.Context(), data, Options{Mode: ModeFast, MaxPages: 10, PageMarkers: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.NumPages != 10 || res.TotalPages != 300 || len(res.Pages) != 10 {
		t.Errorf("NumPages %d TotalPages %d pages %d; want 10, 300, 10", res.NumPages, res.TotalPages, len(res.Pages))
	}
	if got := strings.Count(res.Markdown, "<!-- page "); got != 9 {
		t.Errorf("%d markers, want 9", got)
	}
	start := time.Now()
	res, err = Parse(t.Context(), data, Options{Mode: ModeFast})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("300 pages in %v", time.Since(start))
	if res.NumPages != 300 || !strings.Contains(res.Pages[299].Markdown, "Page 300 line 40 ") {
		t.Errorf("NumPages %d, last page %q", res.NumPages, res.Pages[299].Markdown)
	}
	if !strings.HasPrefix(res.Pages[0].Markdown, "## Section 1\n\nPage 1 line 1 bravo") {
		t.Errorf("page 1 = %q", res.Pages[0].Markdown[:80])
	}
}

func TestParseDeadline(t *testing.T) {
	t.Parallel()
	// A deadline already past: no wait for it to expire.
	ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel()
	_, err := Parse(ctx, longDoc(20), Options{Mode: ModeFast})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want deadline exceeded", err)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	good := layoutDoc()
	encrypted := (&testDoc{encrypt: true, pages: []*testPage{{w: 612, h: 792}}}).bytes()
	tests := []struct {
		name string
		data []byte
		opts Options
		want error
	}{
		// Pdftotext "-": the built-in reader alone (TestPopplerFallback reads
		// damaged files through pdftotext).
		{"empty", nil, Options{}, ErrCorrupt},
		{"not pdf", []byte("<html>hello</html>"), Options{}, ErrCorrupt},
		{"header only", []byte("%PDF-1.4\n%%EOF\n"), Options{}, ErrCorrupt},
		{"truncated", good[:len(good)/2], Options{Pdftotext: "-"}, ErrCorrupt},
		{"truncated tail", good[:len(good)-30], Options{Pdftotext: "-"}, ErrCorrupt},
		{"bad xref", []byte(strings.Replace(string(good), "xref", "xxxx", 1)), Options{Pdftotext: "-"}, ErrCorrupt},
		{"encrypted", encrypted, Options{}, ErrEncrypted},
		{"mode", good, Options{Mode: "slow"}, ErrMode},
		{"ocr unavailable", good, Options{Mode: ModeOCR, OCR: OCRConfig{Pdftoppm: "/nonexistent/pdftoppm"}}, ErrOCRUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(t.Context(), tt.data, tt.opts)
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "pdfparse: ") {
				t.Errorf("error %q lacks prefix", err)
			}
		})
	}
	if _, err := PageCount(good[:100]); !errors.Is(err, ErrCorrupt) {
		t.Errorf("PageCount(truncated) = %v", err)
	}
}

// ocrDoc has a text page and an image-only page of rendered text.
func ocrDoc() []byte {
	d := &testDoc{}
	d.page().lines(12, 72, 720, "This page has a text layer.")
	img := textImage(40, "INVOICE NUMBER 4711", "Total amount due today")
	b := img.Bounds()
	d.page().picture(img, 72, 500, float64(b.Dx())/2, float64(b.Dy())/2)
	return d.bytes()
}

func TestParseAutoWithoutOCR(t *testing.T) {
	t.Parallel()
	res, err := Parse(t.Context(), ocrDoc(), Options{Blocks: true, OCR: OCRConfig{Tesseract: "/nonexistent/tesseract"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Markdown != "This page has a text layer." {
		t.Errorf("markdown = %q", res.Markdown)
	}
	if diff := cmp.Diff([]string{"OCR tools not installed: kept the text layer of pages 2"}, res.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if res.Blocks[1].Status != StatusPartial || res.Blocks[1].Items[0].Type != "figure" {
		t.Errorf("page 2 blocks = %+v", res.Blocks[1])
	}
}

// requireOCR skips (or fails under REQUIRE_INTEGRATION=1) without the tools.
func requireOCR(tb testing.TB) {
	tb.Helper()
	for _, tool := range []string{"pdftoppm", "tesseract"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Unavailable(tb, "%s not installed", tool)
		}
	}
}

func TestParseOCR(t *testing.T) {
	t.Parallel()
	requireOCR(t)
	data := ocrDoc()
	wordsRe := regexp.MustCompile(`(?i)invoice.*4711.*total amount`)
	for _, mode := range []string{ModeAuto, ModeOCR} {
		res, err := Parse(t.Context(), data, Options{Mode: mode, Blocks: true, PageMarkers: true})
		if err != nil {
			t.Fatal(err)
		}
		if !wordsRe.MatchString(strings.ReplaceAll(res.Pages[1].Markdown, "\n", " ")) {
			t.Errorf("%s: page 2 = %q", mode, res.Pages[1].Markdown)
		}
		if !strings.Contains(res.Pages[0].Markdown, "text layer") {
			t.Errorf("%s: page 1 = %q", mode, res.Pages[0].Markdown)
		}
		checkSpans(t, res)
		pb := res.Blocks[1]
		if pb.Width == nil || *pb.Width <= 0 || pb.Items[0].Confidence.OCR == nil || *pb.Items[0].Source != "ocr" {
			t.Errorf("%s: page 2 blocks = %+v", mode, pb)
		}
		if len(res.Warnings) != 0 {
			t.Errorf("%s: warnings %v", mode, res.Warnings)
		}
	}
}

// normWords reduces text to lowercase words without markdown syntax.
func normWords(s string) []string {
	s = strings.NewReplacer("#", " ", "**", " ", "|", " ", "---", " ").Replace(s)
	return strings.Fields(strings.ToLower(s))
}

// pdftotext runs poppler's pdftotext on data.
func pdftotext(tb testing.TB, data []byte, args ...string) string {
	tb.Helper()
	path, err := exec.LookPath("pdftotext")
	if err != nil {
		testenv.Unavailable(tb, "pdftotext not installed")
	}
	f := tb.TempDir() + "/in.pdf"
	if err := os.WriteFile(f, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	out, err := exec.Command(path, append(args, f, "-")...).Output()
	if err != nil {
		tb.Fatalf("pdftotext: %v", err)
	}
	return string(out)
}

func TestMatchesPdftotext(t *testing.T) {
	t.Parallel()
	data := longDoc(5)
	res, err := Parse(t.Context(), data, Options{Mode: ModeFast})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(normWords(pdftotext(t, data)), normWords(res.Markdown)); diff != "" {
		t.Errorf("words (-pdftotext +ours):\n%s", diff)
	}
}
