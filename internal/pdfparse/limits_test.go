package pdfparse

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/firegate/firegate/internal/testenv"

	"github.com/firegate/firegate/internal/pdfparse/pdftest"
)

// allocated runs f and returns the bytes it allocated on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestBombRefused(t *testing.T) {
	bomb := pdftest.Bomb(256)
	var err error
	alloc := allocated(func() { _, err = Parse(t.Context(), bomb, Options{Mode: ModeFast}) })
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	t.Logf("%d KB bomb: %v, %d MB allocated", len(bomb)>>10, err, alloc>>20)
	if alloc > 64<<20 {
		t.Errorf("allocated %d MB refusing the bomb, want under 64", alloc>>20)
	}
	// Raised token cap: the stream cap stops it while it inflates.
	_, err = Parse(t.Context(), bomb, Options{Mode: ModeFast, Limits: Limits{MaxTokenBytes: 1 << 30}})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "a stream inflates to more than 67108864 bytes") {
		t.Errorf("stream cap: err = %v", err)
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	long := longDoc(30)
	tests := []struct {
		name string
		data []byte
		lim  Limits
		want string // in the error; "" for success
	}{
		{"defaults", long, Limits{}, ""},
		{"token", pdftest.Bomb(2), Limits{MaxTokenBytes: 1 << 20}, "content stream string longer than 1048576 bytes"},
		{"token fits", pdftest.Bomb(2), Limits{MaxTokenBytes: 4 << 20}, ""},
		{"stream", pdftest.Bomb(2), Limits{MaxStreamBytes: 1 << 20}, "a stream inflates to more than 1048576 bytes"},
		{"document", long, Limits{MaxDocumentBytes: 20 << 10}, "its streams inflate to more than 20480 bytes"},
		{"text", long, Limits{MaxTextBytes: 10 << 10}, "more than 10240 bytes of text"},
		{"hex token", pdftest.FlateDoc(func(w io.Writer) {
			_, _ = io.WriteString(w, "BT /F1 12 Tf <"+strings.Repeat("41", 70<<10)+"> Tj ET")
		}), Limits{MaxTokenBytes: 64 << 10}, "string longer than 65536 bytes"},
		{"name token", pdftest.FlateDoc(func(w io.Writer) {
			_, _ = io.WriteString(w, "/"+strings.Repeat("N", 70<<10)+" gs")
		}), Limits{MaxTokenBytes: 64 << 10}, "name or keyword longer than 65536 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := Parse(t.Context(), tt.data, Options{Mode: ModeFast, Limits: tt.lim})
			if tt.want == "" {
				if err != nil || res.NumPages == 0 {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrTooLarge with %q", err, tt.want)
			}
		})
	}
}

// formDoc draws one form XObject n times on one page.
func formDoc(n int) []byte {
	form := "BT /F1 10 Tf 72 700 Td (" + strings.Repeat("form text ", 100) + ") Tj ET"
	var page strings.Builder
	for range n {
		page.WriteString("/X1 Do\n")
	}
	body := fmt.Sprintf(`%%PDF-1.4
1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj
2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj
3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> /XObject << /X1 6 0 R >> >> >> endobj
4 0 obj << /Length %d >> stream
%s
endstream endobj
5 0 obj << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> endobj
6 0 obj << /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Length %d >> stream
%s
endstream endobj
`, page.Len(), page.String(), len(form), form)
	return withXref(body)
}

// withXref appends a cross-reference table for the objects of body
// (numbered from 1, each starting a line with "N 0 obj").
func withXref(body string) []byte {
	var offs []int
	for i := 1; ; i++ {
		at := strings.Index(body, fmt.Sprintf("\n%d 0 obj", i))
		if at < 0 {
			break
		}
		offs = append(offs, at+1)
	}
	var b strings.Builder
	b.WriteString(body)
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offs)+1, xref)
	return []byte(b.String())
}

// TestFormReuseCounted: a form drawn many times counts each time it is
// interpreted, so reuse cannot multiply the work past the document cap.
func TestFormReuseCounted(t *testing.T) {
	t.Parallel()
	res, err := Parse(t.Context(), formDoc(3), Options{Mode: ModeFast})
	if err != nil || !strings.Contains(res.Markdown, "form text") {
		t.Fatalf("3 draws: %v", err)
	}
	_, err = Parse(t.Context(), formDoc(5000), Options{Mode: ModeFast, Limits: Limits{MaxDocumentBytes: 1 << 20}})
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("5000 draws of a 1 KB form under a 1 MB cap: err = %v", err)
	}
}

// TestObjectStreamChecked: an object stream, which the reader library
// inflates itself, is measured before the library sees it.
func TestObjectStreamChecked(t *testing.T) {
	t.Parallel()
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	chunk := make([]byte, 1<<20)
	for range 80 {
		_, _ = zw.Write(chunk)
	}
	_ = zw.Close()
	data := withXref(fmt.Sprintf("%%PDF-1.5\n1 0 obj << /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode /Length %d >> stream\n%s\nendstream endobj\n", z.Len(), z.Bytes()))
	_, err := Parse(t.Context(), data, Options{Mode: ModeFast})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "a stream inflates to more than") {
		t.Errorf("80 MB object stream: err = %v", err)
	}
	if _, err := PageCount(data); !errors.Is(err, ErrTooLarge) {
		t.Errorf("PageCount: %v", err)
	}
	b := newBudget(t.Context(), Limits{})
	if err := checkStreams(b, data); !errors.Is(err, ErrTooLarge) {
		t.Errorf("checkStreams: %v", err)
	}
	if b.read > DefaultMaxStreamBytes+64<<10 {
		t.Errorf("inflated %d bytes before stopping", b.read)
	}
}

// expiringCtx reports DeadlineExceeded from the nth call of Err on, to
// show where the parser checks its deadline without timing anything.
type expiringCtx struct {
	context.Context
	calls, n atomic.Int64
}

func (c *expiringCtx) Err() error {
	if c.calls.Add(1) >= c.n.Load() {
		return context.DeadlineExceeded
	}
	return nil
}

// TestDeadlineInsideToken: the deadline is checked while one long string
// is read, not only between operators.
func TestDeadlineInsideToken(t *testing.T) {
	t.Parallel()
	data := "BT (" + strings.Repeat("A", 16<<20) + ") Tj ET"
	ctx := &expiringCtx{Context: context.Background()}
	ctx.n.Store(10)
	b := newBudget(ctx, Limits{MaxTokenBytes: 1 << 30, MaxStreamBytes: 1 << 30})
	lx := newLexer(&countReader{r: strings.NewReader(data), b: b, max: b.lim.MaxStreamBytes}, b.lim.MaxTokenBytes)
	if o, err := lx.next(); err != nil || o.kind != kOp || o.s != "BT" {
		t.Fatalf("first token %+v %v", o, err)
	}
	_, err := lx.next()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline inside the string", err)
	}
	if b.read >= int64(len(data)) || b.read > 1<<20 {
		t.Errorf("read %d of %d bytes before stopping", b.read, len(data))
	}

	// Through Parse: no operator completes before the deadline is seen.
	doc := pdftest.Bomb(64)
	ctx2 := &expiringCtx{Context: context.Background()}
	ctx2.n.Store(50)
	_, err = Parse(ctx2, doc, Options{Mode: ModeFast, Limits: Limits{MaxTokenBytes: 1 << 30, MaxStreamBytes: 1 << 30}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Parse: err = %v, want deadline exceeded", err)
	}
}

// TestLexer checks the content stream syntax the interpreter relies on.
func TestLexer(t *testing.T) {
	t.Parallel()
	in := `% comment
/F1 12 Tf [(a\)b) -120 <4142 4> (\101\n\
x)] TJ /Na#6De 1.5 -.5 --2 true null << /K [1 2] >> BI /W 2 /H 1 ID ` + "\x00EI\xff" + ` EI (nested (parens) ok) Tj`
	lx := newLexer(strings.NewReader(in), 1<<20)
	var got []string
	for {
		o, err := lx.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if o.kind == kOp && o.s == "BI" {
			if err := lx.skipInlineImage(); err != nil {
				t.Fatal(err)
			}
			got = append(got, "<image>")
			continue
		}
		got = append(got, describeObj(o))
	}
	want := []string{"/F1", "12", "Tf", `[("a)b") -120 ("AB@") ("A\nx")]`, "TJ", "/Name", "1.5", "-0.5", "-2", "true", "null",
		"<</K [1 2]>>", "<image>", `("nested (parens) ok")`, "Tj"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("tokens\n got %q\nwant %q", got, want)
	}
}

// describeObj renders an object for TestLexer.
func describeObj(o object) string {
	switch o.kind {
	case kNum:
		return fmt.Sprint(o.num)
	case kStr:
		return fmt.Sprintf("(%q)", o.s)
	case kName:
		return "/" + o.s
	case kBool:
		return o.s
	case kNull:
		return "null"
	case kArray, kDict:
		var parts []string
		for _, e := range o.arr {
			parts = append(parts, describeObj(e))
		}
		if o.kind == kDict {
			return "<<" + strings.Join(parts, " ") + ">>"
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return o.s
}

// requirePoppler skips (fails under REQUIRE_INTEGRATION) without pdftotext
// and pdfunite.
func requirePoppler(tb testing.TB) {
	tb.Helper()
	for _, tool := range []string{"pdftotext", "pdfunite"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Unavailable(tb, "%s not installed", tool)
		}
	}
}

// mergedDoc joins two documents with pdfunite, whose trailer /Size is
// smaller than its object numbers.
func mergedDoc(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	a := &testDoc{compress: true}
	a.page().lines(12, 72, 720, "First document opening line", "with a second line")
	b := &testDoc{}
	b.page().lines(12, 72, 720, "Second document closing words")
	pa, pb, out := filepath.Join(dir, "a.pdf"), filepath.Join(dir, "b.pdf"), filepath.Join(dir, "merged.pdf")
	_ = os.WriteFile(pa, a.bytes(), 0o600)
	_ = os.WriteFile(pb, b.bytes(), 0o600)
	if msg, err := exec.Command("pdfunite", pa, pb, out).CombinedOutput(); err != nil {
		t.Fatalf("pdfunite: %v %s", err, msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestPopplerFallback(t *testing.T) {
	t.Parallel()
	requirePoppler(t)
	merged := mergedDoc(t)
	if _, err := Parse(t.Context(), merged, Options{Mode: ModeFast, Pdftotext: "-"}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("built-in reader on the merged file: %v, want ErrCorrupt (else this test proves nothing)", err)
	}
	res, err := Parse(t.Context(), merged, Options{Mode: ModeAuto, Blocks: true, PageMarkers: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "First document opening line with a second line\n\n---\n<!-- page 2 -->\n\nSecond document closing words"
	if res.Markdown != want {
		t.Errorf("markdown %q, want %q", res.Markdown, want)
	}
	if res.NumPages != 2 || res.TotalPages != 2 || len(res.Pages) != 2 || len(res.Blocks) != 2 {
		t.Errorf("pages %d/%d, %d pages, %d blocks", res.NumPages, res.TotalPages, len(res.Pages), len(res.Blocks))
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "pdftotext") {
		t.Errorf("warnings %q", res.Warnings)
	}
	checkSpans(t, res)
	one, err := Parse(t.Context(), merged, Options{MaxPages: 1})
	if err != nil || one.NumPages != 1 || one.TotalPages != 0 || strings.Contains(one.Markdown, "Second") {
		t.Errorf("maxPages 1: %+v %v", one, err)
	}

	// Damaged files of TestParseErrors that poppler still reads.
	good := layoutDoc()
	for name, data := range map[string][]byte{
		"truncated tail": good[:len(good)-30],
		"bad xref":       []byte(strings.Replace(string(good), "xref", "xxxx", 1)),
	} {
		res, err := Parse(t.Context(), data, Options{})
		if err != nil || !strings.Contains(res.Markdown, "Annual Report") || res.NumPages != 3 {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Neither reader: still corrupt, naming both failures.
	_, err = Parse(t.Context(), good[:len(good)/2], Options{})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "pdftotext") {
		t.Errorf("half a file: %v", err)
	}
}

// TestPopplerLimits feeds the bomb to the subprocess path: its memory,
// CPU and output limits stop it.
func TestPopplerLimits(t *testing.T) {
	t.Parallel()
	requirePoppler(t)
	bomb := pdftest.Bomb(256)
	tests := []struct {
		name string
		data []byte
		lim  Limits
		want string
	}{
		{"memory", bomb, Limits{ToolMemoryBytes: 128 << 20}, "stopped at its memory limit of 128 MB"},
		{"cpu", bomb, Limits{ToolCPUSeconds: 1}, "stopped at its CPU limit of 1 s"},
		{"output", longDoc(20), Limits{MaxTextBytes: 4 << 10}, "wrote more than 4096 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBudget(t.Context(), tt.lim)
			_, err := popplerText(b, tt.data, Options{})
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrTooLarge %q", err, tt.want)
			}
		})
	}
	// A done context kills the tool.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := popplerText(newBudget(ctx, Limits{}), bomb, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}

// TestCMapChecked: a font's ToUnicode CMap, which the reader library reads
// whole, is measured first; small ones (provably under the cap from their
// stored length) are not inflated twice.
func TestCMapChecked(t *testing.T) {
	t.Parallel()
	doc := func(mib int) []byte {
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		_, _ = io.WriteString(zw, "/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n")
		chunk := bytes.Repeat([]byte(" "), 1<<20)
		for range mib {
			_, _ = zw.Write(chunk)
		}
		_, _ = io.WriteString(zw, "1 begincodespacerange <00> <FF> endcodespacerange\n1 beginbfchar <41> <0042> endbfchar\nendcmap end end\n")
		_ = zw.Close()
		content := "BT /F1 12 Tf 72 700 Td (AAA) Tj ET"
		return withXref(fmt.Sprintf(`%%PDF-1.4
1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj
2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj
3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >> endobj
4 0 obj << /Length %d >> stream
%s
endstream endobj
5 0 obj << /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >> endobj
6 0 obj << /Length %d /Filter /FlateDecode >> stream
%s
endstream endobj
`, len(content), content, z.Len(), z.Bytes()))
	}
	res, err := Parse(t.Context(), doc(0), Options{Mode: ModeFast})
	if err != nil || res.Markdown != "BBB" {
		t.Fatalf("small CMap: %q %v", res.Markdown, err)
	}
	_, err = Parse(t.Context(), doc(20), Options{Mode: ModeFast})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "more than 8388608 bytes") {
		t.Errorf("20 MB CMap: err = %v", err)
	}
}

// TestOCRRenderLimited: pdftoppm runs under the memory limit, so a page
// too large to render fails its OCR with a warning.
func TestOCRRenderLimited(t *testing.T) {
	t.Parallel()
	requireOCR(t)
	d := &testDoc{}
	p := d.page()
	p.w, p.h = 3000, 3000 // 8,333 px square at 200 DPI: 69 MB of gray
	p.text("F1", 12, 72, 720, "x")
	res, err := Parse(t.Context(), d.bytes(), Options{Mode: ModeOCR, Blocks: true, Limits: Limits{ToolMemoryBytes: 64 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "OCR failed on pages 1") || res.Blocks[0].Status != StatusFailed {
		t.Errorf("warnings %q, status %q", res.Warnings, res.Blocks[0].Status)
	}
}
