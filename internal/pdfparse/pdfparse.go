// Package pdfparse converts PDF files to markdown, page by page.
//
// Parse reads the embedded text layer (mode "fast"), renders and
// recognises pages with poppler's pdftoppm and tesseract (mode "ocr"), or
// reads the text layer and falls back to OCR for pages without usable text
// (mode "auto", the default). Besides the markdown it returns per-page
// markdown and layout blocks shaped like the API's `pages` and `blocks`
// fields.
//
// Fast mode orders text by an XY cut of the page: full-height gutters split
// columns (or, when the rows line up and the cells are short, a table),
// wide horizontal gaps split bands; within a band lines become paragraphs,
// headings (by font size relative to the body text) and lists. Words are
// placed by glyph positions and widths, not by the space characters a
// producer may or may not draw (see words.go).
//
// Offsets in MarkdownSpan count Unicode code points (characters), not
// bytes, so that API clients can slice the markdown directly.
package pdfparse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// Modes accepted in Options.Mode.
const (
	ModeFast = "fast"
	ModeAuto = "auto"
	ModeOCR  = "ocr"
)

// Sentinel errors returned by Parse and PageCount (wrapped).
var (
	// ErrEncrypted means the PDF needs a password or uses an unsupported
	// security handler.
	ErrEncrypted = errors.New("pdfparse: encrypted PDF")
	// ErrCorrupt means the file is not a readable PDF (also truncated files).
	ErrCorrupt = errors.New("pdfparse: corrupt or truncated PDF")
	// ErrOCRUnavailable means mode "ocr" was asked but pdftoppm or
	// tesseract is not installed.
	ErrOCRUnavailable = errors.New("pdfparse: OCR tools not installed")
	// ErrMode means Options.Mode is not one of the modes.
	ErrMode = errors.New("pdfparse: unknown mode")
)

// errPartial marks a page whose content stream could only be read in part.
var errPartial = errors.New("pdfparse: page content partially read")

// Limits on the document structure.
const (
	maxPages     = 100_000
	maxTreeDepth = 64
)

// Options controls Parse.
type Options struct {
	// Mode is "fast", "auto" (default when empty) or "ocr".
	Mode string
	// MaxPages caps the pages parsed; 0 parses all.
	MaxPages int
	// Blocks fills Result.Blocks.
	Blocks bool
	// PageMarkers joins pages with "\n\n---\n<!-- page N -->\n\n", N being
	// the 1-based physical page that follows.
	PageMarkers bool
	// OCR configures the OCR tools.
	OCR OCRConfig
	// Limits bound the decompressed data, the text and the pdftotext
	// subprocess; zero fields take the defaults.
	Limits Limits
	// Pdftotext is the path of poppler's pdftotext, which reads (as plain
	// text) files the built-in reader cannot open; empty looks it up on
	// PATH, "-" disables the fallback.
	Pdftotext string
}

// Page is the markdown of one physical page (the API's `pages` item).
type Page struct {
	PageNumber int    `json:"pageNumber"`
	Markdown   string `json:"markdown"`
}

// PageBlocks is the layout of one page (the API's `blocks` item).
type PageBlocks struct {
	PageNumber int `json:"pageNumber"`
	// Width and Height are the render size in pixels, nil when the page was
	// not rendered (text layer only).
	Width  *float64 `json:"width"`
	Height *float64 `json:"height"`
	// Status is "ok", "partial" (content read in part, or OCR needed but
	// unavailable) or "failed".
	Status string      `json:"status"`
	Items  []BlockItem `json:"items"`
}

// Block statuses.
const (
	StatusOK      = "ok"
	StatusPartial = "partial"
	StatusFailed  = "failed"
)

// BlockItem is one layout block of a page.
type BlockItem struct {
	// ID is "p<page>.b<index in reading order>".
	ID string `json:"id"`
	// Type is title, section_header, text, table, figure, page_number,
	// page_header or page_footer.
	Type string `json:"type"`
	// Label is the raw layout label (paragraph, list, heading-2, ...).
	Label *string `json:"label"`
	// BBox is [x0, y0, x1, y1] normalized to 0..1 from the top-left corner.
	BBox *[4]float64 `json:"bbox"`
	// Content is the block's markdown fragment.
	Content string `json:"content"`
	// MarkdownSpan is the half-open range of Content in Result.Markdown, in
	// code points; nil when the block is not in the markdown (figures).
	MarkdownSpan *[2]int    `json:"markdownSpan"`
	ReadingOrder int        `json:"readingOrder"`
	Source       *string    `json:"source"`
	Confidence   Confidence `json:"confidence"`
}

// Confidence holds a block's layout and OCR confidences (0..1 or nil).
type Confidence struct {
	Layout *float64 `json:"layout"`
	OCR    *float64 `json:"ocr"`
}

// Result is the outcome of Parse.
type Result struct {
	// Markdown is the document markdown.
	Markdown string
	// Pages holds every parsed physical page.
	Pages []Page
	// Blocks is set when Options.Blocks is.
	Blocks []PageBlocks
	// NumPages is the number of pages parsed (capped by MaxPages).
	NumPages int
	// TotalPages is the page count of the document.
	TotalPages int
	// Title and Author come from the document information dictionary.
	Title, Author string
	// Warnings describe degraded results.
	Warnings []string
}

// PageCount returns the number of pages of a PDF without parsing them. It
// checks the object and cross-reference streams against the default
// Limits first (ErrTooLarge).
func PageCount(data []byte) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = 0, fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
	}()
	if err := checkStreams(newBudget(context.Background(), Limits{}), data); err != nil {
		return 0, err
	}
	r, err := open(data)
	if err != nil {
		return 0, err
	}
	if c := r.NumPage(); c > 0 && c <= maxPages {
		return c, nil
	}
	pages := collectPages(context.Background(), r)
	if len(pages) == 0 {
		return 0, fmt.Errorf("%w: no pages", ErrCorrupt)
	}
	return len(pages), nil
}

// headerFix presents a PDF whose header the reader library rejects (PDF 2.0,
// a space after the version) as a PDF 1.7 header; offsets are unchanged.
type headerFix struct {
	data []byte
}

// ReadAt implements io.ReaderAt.
func (h headerFix) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(h.data)) {
		return 0, io.EOF
	}
	n := copy(p, h.data[off:])
	for i := range n {
		if pos := off + int64(i); pos < 9 {
			p[i] = "%PDF-1.7\n"[pos]
		}
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// open opens the reader, mapping failures to the sentinel errors.
func open(data []byte) (r *pdf.Reader, err error) {
	defer func() {
		if rec := recover(); rec != nil {
			r, err = nil, fmt.Errorf("%w: %v", ErrCorrupt, rec)
		}
	}()
	if !bytes.HasPrefix(data, []byte("%PDF-")) {
		return nil, fmt.Errorf("%w: missing %%PDF header", ErrCorrupt)
	}
	var ra io.ReaderAt = bytes.NewReader(data)
	if len(data) > 9 && (data[8] != '\n' && data[8] != '\r' || data[5] != '1' || data[7] > '7') {
		ra = headerFix{data}
	}
	r, err = pdf.NewReader(ra, int64(len(data)))
	if err != nil {
		if errors.Is(err, pdf.ErrInvalidPassword) || bytes.Contains(data, []byte("/Encrypt")) {
			return nil, fmt.Errorf("%w: %v", ErrEncrypted, err)
		}
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return r, nil
}

// collectPages walks the page tree in order. Page dictionaries are small,
// so keeping them avoids the quadratic cost of looking pages up one by one.
// A done context ends the walk (through panic(abort)).
func collectPages(ctx context.Context, r *pdf.Reader) []pdf.Value {
	var out []pdf.Value
	var walk func(v pdf.Value, depth int)
	visits := 0
	walk = func(v pdf.Value, depth int) {
		visits++
		if depth > maxTreeDepth || len(out) >= maxPages || visits > 4*maxPages {
			return
		}
		if visits%256 == 0 {
			if err := ctx.Err(); err != nil {
				panic(abort{err})
			}
		}
		kids := v.Key("Kids")
		if v.Key("Type").Name() == "Page" || kids.Kind() != pdf.Array && v.Key("Contents").Kind() != pdf.Null {
			out = append(out, v)
			return
		}
		for i := 0; i < kids.Len(); i++ {
			walk(kids.Index(i), depth+1)
		}
	}
	walk(r.Trailer().Key("Root").Key("Pages"), 0)
	return out
}

// Parse converts a PDF to markdown. See the package documentation.
func Parse(ctx context.Context, data []byte, opts Options) (res *Result, err error) {
	mode := opts.Mode
	if mode == "" {
		mode = ModeAuto
	}
	if mode != ModeFast && mode != ModeAuto && mode != ModeOCR {
		return nil, fmt.Errorf("%w %q", ErrMode, opts.Mode)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b := newBudget(ctx, opts.Limits)
	if err := checkStreams(b, data); err != nil {
		return nil, err
	}
	r, err := open(data)
	var pages []pdf.Value
	var title, author string
	if err == nil {
		func() {
			defer func() {
				if rec := recover(); rec != nil {
					if a, ok := rec.(abort); ok {
						err = a.err
						return
					}
					err = fmt.Errorf("%w: page tree: %v", ErrCorrupt, rec)
				}
			}()
			pages = collectPages(ctx, r)
			info := r.Trailer().Key("Info")
			title, author = infoText(info.Key("Title")), infoText(info.Key("Author"))
		}()
		if err == nil && len(pages) == 0 {
			err = fmt.Errorf("%w: no pages", ErrCorrupt)
		}
	}
	if errors.Is(err, ErrCorrupt) && mode != ModeOCR && opts.Pdftotext != "-" {
		res, perr := popplerText(b, data, opts)
		if perr == nil {
			res.Warnings = append(res.Warnings, "The PDF's structure is damaged; its text was read with pdftotext, without layout ("+rootText(err)+").")
			return res, nil
		}
		if fatal(perr) {
			return nil, perr
		}
		return nil, fmt.Errorf("%w (pdftotext: %v)", err, perr)
	}
	if err != nil {
		return nil, err
	}
	res = &Result{TotalPages: len(pages), Title: title, Author: author}
	n := len(pages)
	if opts.MaxPages > 0 && opts.MaxPages < n {
		n = opts.MaxPages
	}
	res.NumPages = n

	ocr := newOCR(opts.OCR, opts.Limits, data)
	defer ocr.close()
	if mode == ModeOCR {
		if err := ocr.available(); err != nil {
			return nil, err
		}
	}

	doc := pageJoiner{res: res, opts: &opts}
	var (
		body      float64
		noOCR     []string
		failedOCR []string
	)
	for i := range n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		num := i + 1
		var pr pageResult
		if mode == ModeOCR {
			pr, err = ocr.page(ctx, num)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				failedOCR = append(failedOCR, strconv.Itoa(num))
				pr = pageResult{status: StatusFailed}
			}
		} else {
			pr, err = textPage(b, pages[i], body, num == 1)
			if err != nil {
				return nil, err
			}
			if pr.body > 0 && pr.chars >= 200 || body == 0 {
				body = pr.body
			}
			if mode == ModeAuto && pr.needsOCR {
				if ocr.available() != nil {
					noOCR = append(noOCR, strconv.Itoa(num))
					pr.status = StatusPartial
				} else if opr, oerr := ocr.page(ctx, num); oerr == nil {
					pr = opr
				} else if ctx.Err() != nil {
					return nil, ctx.Err()
				} else {
					failedOCR = append(failedOCR, strconv.Itoa(num))
					pr.status = StatusPartial
				}
			}
		}
		doc.add(num, pr)
		if int64(doc.md.Len()) > b.lim.MaxTextBytes {
			return nil, fmt.Errorf("%w: markdown longer than %d bytes", ErrTooLarge, b.lim.MaxTextBytes)
		}
	}
	res.Markdown = doc.md.String()
	if len(noOCR) > 0 {
		res.Warnings = append(res.Warnings, "OCR tools not installed: kept the text layer of pages "+strings.Join(noOCR, ", "))
	}
	if len(failedOCR) > 0 {
		res.Warnings = append(res.Warnings, "OCR failed on pages "+strings.Join(failedOCR, ", "))
	}
	return res, nil
}

// pageResult is one analysed page.
type pageResult struct {
	blocks   []block
	box      rect
	status   string
	width    float64 // render size in px, 0 when not rendered
	height   float64
	body     float64
	chars    int
	needsOCR bool
	source   string
}

// textPage reads a page's text layer. A malformed page yields a failed or
// partial page, never an error; only context errors are returned.
func textPage(b *budget, page pdf.Value, body float64, first bool) (pr pageResult, err error) {
	pr = pageResult{status: StatusOK, source: "text_layer"}
	defer func() {
		if rec := recover(); rec != nil {
			pr = pageResult{status: StatusFailed, source: "text_layer", needsOCR: true}
			err = nil
		}
	}()
	pc, rerr := readPage(b, page)
	if rerr != nil {
		if fatal(rerr) {
			return pr, rerr
		}
		if err := b.ctx.Err(); err != nil {
			return pr, err
		}
		pr.status = StatusPartial
	}
	pr.box = pc.box
	items := toItems(pc.runs)
	for _, it := range items {
		pr.chars += len(it.text)
	}
	pr.body = bodySize(items)
	if pr.chars < 200 && body > 0 {
		pr.body = body
	}
	pr.blocks = layoutPage(pc, items, pr.body, first)
	pr.needsOCR = garbage(items)
	return pr, nil
}

// pageJoiner builds the document markdown page by page, with each page's
// markdown and (when asked) blocks whose spans point into the document.
type pageJoiner struct {
	res    *Result
	opts   *Options
	md     strings.Builder
	offset int // code points written to md
}

// add appends the physical page num: a blank line (or the page marker)
// before it, its markdown, its Page and its blocks.
func (j *pageJoiner) add(num int, pr pageResult) {
	pageMD := joinBlocks(pr.blocks)
	if num > 1 && (j.opts.PageMarkers || pageMD != "" && j.md.Len() > 0) {
		sep := "\n\n"
		if j.opts.PageMarkers {
			sep = "\n\n---\n<!-- page " + strconv.Itoa(num) + " -->\n\n"
		}
		j.md.WriteString(sep)
		j.offset += len(sep)
	}
	j.res.Pages = append(j.res.Pages, Page{PageNumber: num, Markdown: pageMD})
	if j.opts.Blocks {
		j.res.Blocks = append(j.res.Blocks, pageBlocks(num, pr, j.offset))
	}
	j.md.WriteString(pageMD)
	j.offset += runeLen(pageMD)
}

// joinBlocks returns the page markdown: block fragments separated by blank
// lines.
func joinBlocks(blocks []block) string {
	var b strings.Builder
	for _, bl := range blocks {
		if bl.md == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(bl.md)
	}
	return b.String()
}

// pageBlocks builds the API blocks of a page whose markdown starts at the
// code point offset start of the document markdown.
func pageBlocks(num int, pr pageResult, start int) PageBlocks {
	pb := PageBlocks{PageNumber: num, Status: pr.status, Items: []BlockItem{}}
	if pr.width > 0 {
		w, h := pr.width, pr.height
		pb.Width, pb.Height = &w, &h
	}
	pos := start
	wrote := false
	for i, bl := range pr.blocks {
		item := BlockItem{
			ID:           "p" + strconv.Itoa(num) + ".b" + strconv.Itoa(i),
			Type:         bl.kind,
			Label:        ptr(bl.label),
			BBox:         normBox(bl.box, pr.box),
			Content:      bl.md,
			ReadingOrder: i,
			Source:       ptr(pr.source),
			Confidence:   Confidence{Layout: ptr(bl.conf)},
		}
		if bl.ocr >= 0 {
			item.Confidence.OCR = ptr(bl.ocr)
		}
		if bl.md != "" {
			if wrote {
				pos += 2
			}
			n := runeLen(bl.md)
			item.MarkdownSpan = &[2]int{pos, pos + n}
			pos += n
			wrote = true
		}
		pb.Items = append(pb.Items, item)
	}
	return pb
}

// normBox converts a page-space box to [x0 y0 x1 y1] in 0..1 from the
// top-left corner of the page box.
func normBox(b, page rect) *[4]float64 {
	w, h := page.x1-page.x0, page.y1-page.y0
	if w <= 0 || h <= 0 {
		return nil
	}
	c := func(v float64) float64 { return min(1, max(0, roundTo(v, 4))) }
	return &[4]float64{
		c((b.x0 - page.x0) / w), c((page.y1 - b.y1) / h),
		c((b.x1 - page.x0) / w), c((page.y1 - b.y0) / h),
	}
}

// roundTo rounds v to d decimals.
func roundTo(v float64, d int) float64 {
	p := 1.0
	for range d {
		p *= 10
	}
	return float64(int64(v*p+0.5)) / p
}

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }

// runeLen counts code points.
func runeLen(s string) int { return utf8.RuneCountInString(s) }

// infoText decodes an information dictionary string (PDFDocEncoding or
// UTF-16 with BOM).
func infoText(v pdf.Value) string {
	if v.Kind() != pdf.String {
		return ""
	}
	return strings.TrimSpace(strings.Map(cleanRune, v.Text()))
}
