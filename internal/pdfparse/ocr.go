package pdfparse

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// OCR defaults.
const (
	DefaultOCRLanguage = "eng"
	DefaultOCRDPI      = 200
)

// OCRConfig locates and tunes the OCR tools.
type OCRConfig struct {
	// Pdftoppm and Tesseract are executable paths; empty looks them up on
	// PATH.
	Pdftoppm  string
	Tesseract string
	// Language is the tesseract language (default "eng").
	Language string
	// DPI is the render resolution (default 200).
	DPI int
}

// ocrRunner renders and recognises pages on demand. The PDF is written to a
// temporary directory on first use and removed by close.
type ocrRunner struct {
	cfg      OCRConfig
	lim      Limits // for the pdftoppm subprocess
	data     []byte
	checked  bool
	err      error
	dir      string
	pdfPath  string
	pdftoppm string
	tess     string
}

// newOCR returns a runner for the document data.
func newOCR(cfg OCRConfig, lim Limits, data []byte) *ocrRunner {
	if cfg.Language == "" {
		cfg.Language = DefaultOCRLanguage
	}
	if cfg.DPI <= 0 {
		cfg.DPI = DefaultOCRDPI
	}
	return &ocrRunner{cfg: cfg, lim: lim, data: data}
}

// available reports ErrOCRUnavailable when a tool is missing.
func (o *ocrRunner) available() error {
	if o.checked {
		return o.err
	}
	o.checked = true
	var missing []string
	find := func(path, name string) string {
		if path == "" {
			path = name
		}
		p, err := exec.LookPath(path)
		if err != nil {
			missing = append(missing, name)
		}
		return p
	}
	o.pdftoppm = find(o.cfg.Pdftoppm, "pdftoppm")
	o.tess = find(o.cfg.Tesseract, "tesseract")
	if len(missing) > 0 {
		o.err = fmt.Errorf("%w: %s not found", ErrOCRUnavailable, strings.Join(missing, ", "))
	}
	return o.err
}

// close removes the temporary files.
func (o *ocrRunner) close() {
	if o.dir != "" {
		_ = os.RemoveAll(o.dir)
		o.dir = ""
	}
}

// page renders and recognises one page (1-based).
func (o *ocrRunner) page(ctx context.Context, num int) (pageResult, error) {
	if err := o.available(); err != nil {
		return pageResult{}, err
	}
	if o.dir == "" {
		dir, err := os.MkdirTemp("", "pdfparse-*")
		if err != nil {
			return pageResult{}, fmt.Errorf("pdfparse: ocr temp dir: %w", err)
		}
		o.dir = dir
		o.pdfPath = filepath.Join(dir, "in.pdf")
		if err := os.WriteFile(o.pdfPath, o.data, 0o600); err != nil {
			return pageResult{}, fmt.Errorf("pdfparse: ocr temp file: %w", err)
		}
	}
	prefix := filepath.Join(o.dir, "page")
	png := prefix + ".png"
	defer os.Remove(png)
	n := strconv.Itoa(num)
	// pdftoppm decodes every image of the page: it runs under the same
	// CPU and memory limits as pdftotext (a page too large to render
	// fails its OCR, with a warning, instead of taking the machine).
	if _, err := runLimited(newBudget(ctx, o.lim), o.pdftoppm, "-f", n, "-l", n, "-r", strconv.Itoa(o.cfg.DPI),
		"-gray", "-png", "-singlefile", o.pdfPath, prefix); err != nil {
		if ctx.Err() != nil {
			return pageResult{}, ctx.Err()
		}
		return pageResult{}, fmt.Errorf("pdfparse: pdftoppm page %d: %w", num, err)
	}
	// tesseract too: a page image is as large as its DPI makes it.
	out, err := runLimitedEnv(newBudget(ctx, o.lim), append(os.Environ(), "OMP_THREAD_LIMIT=1"), o.tess,
		png, "stdout", "-l", o.cfg.Language, "--psm", "3", "tsv")
	if err != nil {
		if ctx.Err() != nil {
			return pageResult{}, ctx.Err()
		}
		return pageResult{}, fmt.Errorf("pdfparse: tesseract page %d: %w", num, err)
	}
	return parseTSV(out), nil
}

// ocrWord is one recognised word.
type ocrWord struct {
	block, par, line int
	x0, y0, x1, y1   float64
	conf             float64
	text             string
}

// parseTSV turns tesseract TSV output into a page of paragraph blocks.
// Boxes are in image pixels with y down; they are flipped into the page
// rect {0 0 w h} with y up so that normBox treats them like text-layer boxes.
func parseTSV(out []byte) pageResult {
	pr := pageResult{status: StatusOK, source: "ocr"}
	var words []ocrWord
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 12 {
			continue
		}
		num := func(i int) float64 { v, _ := strconv.ParseFloat(f[i], 64); return v }
		switch f[0] {
		case "1":
			pr.width, pr.height = num(8), num(9)
		case "5":
			text := strings.TrimSpace(f[11])
			if text == "" {
				continue
			}
			x, y := num(6), num(7)
			words = append(words, ocrWord{
				block: int(num(2)), par: int(num(3)), line: int(num(4)),
				x0: x, y0: y, x1: x + num(8), y1: y + num(9), conf: num(10), text: text,
			})
		}
	}
	pr.box = rect{0, 0, pr.width, pr.height}
	if len(words) == 0 {
		return pr
	}
	heights := make([]float64, len(words))
	for i, w := range words {
		heights[i] = w.y1 - w.y0
	}
	slices.Sort(heights)
	median := heights[len(heights)/2]
	pr.body = median

	flip := func(y float64) float64 { return pr.height - y }
	start := 0
	for i := 1; i <= len(words); i++ {
		if i < len(words) && words[i].block == words[start].block && words[i].par == words[start].par {
			continue
		}
		ws := words[start:i]
		start = i
		var text strings.Builder
		box := rect{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
		conf, sumH := 0.0, 0.0
		for j, w := range ws {
			if j > 0 {
				text.WriteByte(' ')
			}
			text.WriteString(w.text)
			box = rect{math.Min(box.x0, w.x0), math.Min(box.y0, flip(w.y1)), math.Max(box.x1, w.x1), math.Max(box.y1, flip(w.y0))}
			conf += math.Max(0, w.conf)
			sumH += w.y1 - w.y0
		}
		md := strings.Join(strings.Fields(text.String()), " ")
		b := block{kind: "text", label: "ocr-paragraph", box: box, conf: 0.5, ocr: roundTo(conf/float64(len(ws))/100, 3)}
		meanH := sumH / float64(len(ws))
		switch {
		case len(ws) <= 12 && meanH >= 2*median:
			b.kind, b.label, md = "section_header", "ocr-heading-1", "# "+md
		case len(ws) <= 12 && meanH >= 1.4*median:
			b.kind, b.label, md = "section_header", "ocr-heading-2", "## "+md
		default:
			if mdLeadRe.MatchString(md) {
				md = `\` + md
			}
		}
		b.md = md
		pr.blocks = append(pr.blocks, b)
		pr.chars += len(md)
	}
	return pr
}
