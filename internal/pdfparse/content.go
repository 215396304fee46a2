package pdfparse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/ledongthuc/pdf"
)

// Limits that keep one hostile page from exhausting memory or time.
const (
	maxRunsPerPage  = 200_000
	maxFormDepth    = 8
	ctxCheckEvery   = 4096
	defaultPageW    = 612.0
	defaultPageH    = 792.0
	maxStackedState = 1024
)

// affine is a PDF transformation matrix [a b c d e f].
type affine [6]float64

// identity is the identity transformation.
func identity() affine { return affine{1, 0, 0, 1, 0, 0} }

// mul returns m followed by n (m × n in PDF row-vector convention).
func (m affine) mul(n affine) affine {
	return affine{
		m[0]*n[0] + m[1]*n[2],
		m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2],
		m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4],
		m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

// apply transforms the point (x, y).
func (m affine) apply(x, y float64) (float64, float64) {
	return x*m[0] + y*m[2] + m[4], x*m[1] + y*m[3] + m[5]
}

// run is one piece of text shown by a text operator, in page space
// (points, y up).
type run struct {
	x0, x1 float64 // horizontal extent
	base   float64 // baseline y
	size   float64 // effective font size in points
	space  float64 // the font's space width in points
	text   string
	bold   bool
	italic bool
	// spaceBefore and spaceAfter: a space glyph was drawn just before or
	// after the run.
	spaceBefore, spaceAfter bool
}

// rect is an axis-aligned rectangle in page space (points, y up).
type rect struct{ x0, y0, x1, y1 float64 }

// pageContent is what the interpreter extracts from one page.
type pageContent struct {
	box    rect // crop box (or media box)
	runs   []run
	images []rect
}

// fontInfo caches what the interpreter needs from a font dictionary.
type fontInfo struct {
	enc      pdf.TextEncoding
	first    int
	widths   []float64
	cidW     map[int]float64
	dw       float64
	twoByte  bool
	std      [95]float64 // fallback widths for standard fonts without /Widths
	fixedW   float64     // fixed width (Courier) when > 0
	bold     bool
	italic   bool
	hasWidth bool
	spaceW   float64           // width of the space glyph, 0 until known
	one      *[256]glyphText   // decoded single-byte codes
	two      map[int]glyphText // decoded two-byte codes
}

// width returns the advance of code in thousandths of an em.
func (f *fontInfo) width(code int) float64 {
	if f.twoByte {
		if w, ok := f.cidW[code]; ok {
			return w
		}
		return f.dw
	}
	if f.hasWidth {
		if i := code - f.first; i >= 0 && i < len(f.widths) && f.widths[i] > 0 {
			return f.widths[i]
		}
	}
	if f.fixedW > 0 {
		return f.fixedW
	}
	if code >= 32 && code < 127 {
		return f.std[code-32]
	}
	return 500
}

// gstate is the part of the graphics and text state the interpreter tracks.
type gstate struct {
	ctm   affine
	tc    float64
	tw    float64
	th    float64
	tl    float64
	tfs   float64
	trise float64
	font  *fontInfo
}

// interp interprets the content streams of one page.
type interp struct {
	b     *budget
	out   *pageContent
	fonts map[string]*fontInfo
	ops   int
	err   error
	cur   runBuilder
}

// abort carries a context or budget error out of the interpreter through
// panic.
type abort struct{ err error }

// fatal reports errors that end the whole parse, not only a page: the
// context's and the budget's.
func fatal(err error) bool {
	return errors.Is(err, ErrTooLarge) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// readPage extracts text runs and image placements from a page.
func readPage(b *budget, page pdf.Value) (pc *pageContent, err error) {
	pc = &pageContent{box: pageBox(page)}
	in := &interp{b: b, out: pc, fonts: map[string]*fontInfo{}}
	in.run(page.Key("Contents"), inherited(page, "Resources"), gstate{ctm: identity(), th: 1}, 0)
	in.flush()
	return pc, in.err
}

// inherited returns a page attribute, looking up the page tree.
func inherited(page pdf.Value, key string) pdf.Value {
	for i := 0; i < 32 && !page.IsNull(); i++ {
		if v := page.Key(key); !v.IsNull() {
			return v
		}
		page = page.Key("Parent")
	}
	return pdf.Value{}
}

// pageBox returns the crop box (or media box) of a page.
func pageBox(page pdf.Value) rect {
	for _, key := range []string{"CropBox", "MediaBox"} {
		v := inherited(page, key)
		if v.Kind() != pdf.Array || v.Len() != 4 {
			continue
		}
		r := rect{v.Index(0).Float64(), v.Index(1).Float64(), v.Index(2).Float64(), v.Index(3).Float64()}
		if r.x0 > r.x1 {
			r.x0, r.x1 = r.x1, r.x0
		}
		if r.y0 > r.y1 {
			r.y0, r.y1 = r.y1, r.y0
		}
		if r.x1-r.x0 > 1 && r.y1-r.y0 > 1 && !math.IsInf(r.x1-r.x0, 0) {
			return r
		}
	}
	return rect{0, 0, defaultPageW, defaultPageH}
}

// run interprets one content stream (or array of streams) with the given
// resources. A malformed stream stops its own interpretation only.
func (in *interp) run(contents, res pdf.Value, g gstate, depth int) {
	if contents.IsNull() || in.err != nil {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			if a, ok := r.(abort); ok {
				in.err = a.err
				return
			}
			if in.err == nil {
				in.err = errPartial
			}
		}
	}()
	var (
		stack []gstate
		tm    = identity()
		tlm   = identity()
		fonts = in.fonts
	)
	if depth > 0 {
		fonts = map[string]*fontInfo{} // form XObjects have their own resources
	}
	show := func(raw string) {
		if g.font == nil || g.tfs == 0 {
			return
		}
		adv := in.show(raw, &g, tm)
		tm = affine{1, 0, 0, 1, adv, 0}.mul(tm)
	}
	exec := func(op string, args []object) {
		num := func(i int) float64 {
			if i < len(args) {
				return args[i].Float64()
			}
			return 0
		}
		switch op {
		case "q":
			if len(stack) < maxStackedState {
				stack = append(stack, g)
			}
		case "Q":
			if len(stack) > 0 {
				g = stack[len(stack)-1]
				stack = stack[:len(stack)-1]
			}
		case "cm":
			if len(args) == 6 {
				g.ctm = affine{num(0), num(1), num(2), num(3), num(4), num(5)}.mul(g.ctm)
			}
		case "BT":
			tm, tlm = identity(), identity()
		case "Tc":
			g.tc = num(0)
		case "Tw":
			g.tw = num(0)
		case "Tz":
			g.th = num(0) / 100
		case "TL":
			g.tl = num(0)
		case "Ts":
			g.trise = num(0)
		case "Tf":
			if len(args) == 2 {
				g.font = in.font(fonts, res, args[0].Name())
				g.tfs = num(1)
			}
		case "Td", "TD":
			if len(args) == 2 {
				if op == "TD" {
					g.tl = -num(1)
				}
				tlm = affine{1, 0, 0, 1, num(0), num(1)}.mul(tlm)
				tm = tlm
			}
		case "Tm":
			if len(args) == 6 {
				tlm = affine{num(0), num(1), num(2), num(3), num(4), num(5)}
				tm = tlm
			}
		case "T*":
			tlm = affine{1, 0, 0, 1, 0, -g.tl}.mul(tlm)
			tm = tlm
		case "Tj":
			if len(args) == 1 {
				show(args[0].s)
			}
		case "'", "\"":
			if op == "\"" && len(args) == 3 {
				g.tw, g.tc = num(0), num(1)
				args = args[2:]
			}
			tlm = affine{1, 0, 0, 1, 0, -g.tl}.mul(tlm)
			tm = tlm
			if len(args) == 1 {
				show(args[0].s)
			}
		case "TJ":
			if len(args) != 1 {
				return
			}
			for _, x := range args[0].arr {
				if x.kind == kStr {
					show(x.s)
					continue
				}
				tm = affine{1, 0, 0, 1, -x.Float64() / 1000 * g.tfs * g.th, 0}.mul(tm)
			}
		case "Do":
			if len(args) == 1 {
				in.xobject(res, args[0].Name(), g, depth)
			}
		}
	}
	lx := newLexer(&contentReader{b: in.b, streams: streamList(contents)}, in.b.lim.MaxTokenBytes)
	var (
		args     []object
		overflow bool
	)
	for {
		o, err := lx.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return
			}
			if fatal(err) {
				in.err = err
			} else if in.err == nil {
				in.err = errPartial
			}
			return
		}
		if o.kind != kOp {
			if o.kind == kEndArr || o.kind == kEndDic {
				continue
			}
			if len(args) < maxOperands {
				args = append(args, o)
			} else {
				overflow = true
			}
			continue
		}
		op := o.s
		if op == "BI" {
			if err := lx.skipInlineImage(); err != nil {
				if fatal(err) {
					in.err = err
				} else if in.err == nil && !errors.Is(err, io.EOF) {
					in.err = errPartial
				}
				return
			}
			args, overflow = args[:0], false
			continue
		}
		in.ops++
		if in.ops%ctxCheckEvery == 0 {
			if err := in.b.ctx.Err(); err != nil {
				in.err = err
				return
			}
		}
		if !overflow {
			exec(op, args)
			if in.err != nil && fatal(in.err) {
				return
			}
		}
		args, overflow = args[:0], false
	}
}

// xobject handles the Do operator: images are recorded, forms interpreted.
func (in *interp) xobject(res pdf.Value, name string, g gstate, depth int) {
	xo := res.Key("XObject").Key(name)
	switch xo.Key("Subtype").Name() {
	case "Image":
		var r rect
		for i, p := range [4][2]float64{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
			x, y := g.ctm.apply(p[0], p[1])
			if i == 0 {
				r = rect{x, y, x, y}
				continue
			}
			r = rect{math.Min(r.x0, x), math.Min(r.y0, y), math.Max(r.x1, x), math.Max(r.y1, y)}
		}
		if len(in.out.images) < 1000 {
			in.out.images = append(in.out.images, r)
		}
	case "Form":
		if depth >= maxFormDepth {
			return
		}
		if m := xo.Key("Matrix"); m.Len() == 6 {
			g.ctm = affine{
				m.Index(0).Float64(), m.Index(1).Float64(), m.Index(2).Float64(),
				m.Index(3).Float64(), m.Index(4).Float64(), m.Index(5).Float64(),
			}.mul(g.ctm)
		}
		sub := xo.Key("Resources")
		if sub.IsNull() {
			sub = res
		}
		in.run(xo, sub, g, depth+1)
	}
}

// font returns the cached description of the named font resource.
func (in *interp) font(cache map[string]*fontInfo, res pdf.Value, name string) *fontInfo {
	if f, ok := cache[name]; ok {
		return f
	}
	fv := res.Key("Font").Key(name)
	if tu := fv.Key("ToUnicode"); tu.Kind() == pdf.Stream && !smallStream(tu, maxCMapBytes) {
		// The library reads the CMap whole: bound it first.
		if rd, err := openStream(tu); err == nil {
			if _, err := streamSize(in.b, rd, maxCMapBytes); err != nil {
				panic(abort{err})
			}
		}
	}
	pf := pdf.Font{V: fv}
	f := &fontInfo{enc: pf.Encoder(), std: helveticaWidths(), dw: 1000}
	base := fv.Key("BaseFont").Name()
	lower := strings.ToLower(base)
	f.bold = strings.Contains(lower, "bold") || strings.Contains(lower, "black") || strings.Contains(lower, "heavy")
	f.italic = strings.Contains(lower, "italic") || strings.Contains(lower, "oblique")
	if strings.Contains(lower, "courier") || strings.Contains(lower, "mono") {
		f.fixedW = 600
	}
	if fv.Key("Subtype").Name() == "Type0" {
		f.twoByte = true
		desc := fv.Key("DescendantFonts").Index(0)
		if dw := desc.Key("DW"); dw.Kind() == pdf.Integer || dw.Kind() == pdf.Real {
			f.dw = dw.Float64()
		}
		f.cidW = cidWidths(desc.Key("W"))
	} else if w := fv.Key("Widths"); w.Kind() == pdf.Array {
		f.first = int(fv.Key("FirstChar").Int64())
		n := min(w.Len(), 1<<16)
		f.widths = make([]float64, n)
		for i := range n {
			f.widths[i] = w.Index(i).Float64()
		}
		f.hasWidth = n > 0
	}
	if f.enc == nil {
		f.enc = rawEncoding{}
	}
	f.findSpace()
	cache[name] = f
	return f
}

// cidWidths parses a CIDFont /W array: c [w1 w2 ...] or c1 c2 w.
func cidWidths(w pdf.Value) map[int]float64 {
	out := map[int]float64{}
	n := w.Len()
	for i := 0; i < n && len(out) < 1<<16; {
		c := int(w.Index(i).Int64())
		if i+1 >= n {
			break
		}
		next := w.Index(i + 1)
		if next.Kind() == pdf.Array {
			for j := 0; j < next.Len() && j < 1<<16; j++ {
				out[c+j] = next.Index(j).Float64()
			}
			i += 2
			continue
		}
		if i+2 >= n {
			break
		}
		c2 := int(next.Int64())
		wv := w.Index(i + 2).Float64()
		for c1 := c; c1 <= c2 && c1-c < 1<<16; c1++ {
			out[c1] = wv
		}
		i += 3
	}
	return out
}

// rawEncoding passes bytes through when a font has no usable encoding.
type rawEncoding struct{}

// Decode returns raw unchanged.
func (rawEncoding) Decode(raw string) string { return raw }

// streamList returns the streams of a /Contents entry (a stream or an
// array of streams) or of a form XObject.
func streamList(contents pdf.Value) []pdf.Value {
	if contents.Kind() != pdf.Array {
		return []pdf.Value{contents}
	}
	n := min(contents.Len(), 1<<16)
	out := make([]pdf.Value, 0, n)
	for i := range n {
		out = append(out, contents.Index(i))
	}
	return out
}

// openStream returns the decoded data of a stream; the reader library
// panics on unknown filters and bad compression headers.
func openStream(v pdf.Value) (rd io.Reader, err error) {
	defer func() {
		if r := recover(); r != nil {
			rd, err = nil, fmt.Errorf("%w: %v", errSyntax, r)
		}
	}()
	if v.Kind() != pdf.Stream {
		return nil, fmt.Errorf("%w: contents is %v, not a stream", errSyntax, v.Kind())
	}
	return v.Reader(), nil
}

// contentReader reads a list of content streams as one, with a line break
// between them. Each stream is opened when the previous one ends and is
// counted against the budget (per stream and per document) as it inflates.
// A stream that cannot be opened is skipped and reported at the end.
type contentReader struct {
	b       *budget
	streams []pdf.Value
	cur     io.Reader
	started bool
	broken  error
}

// Read implements io.Reader.
func (c *contentReader) Read(p []byte) (int, error) {
	for len(p) > 0 {
		if c.cur == nil {
			if len(c.streams) == 0 {
				if c.broken != nil {
					return 0, c.broken
				}
				return 0, io.EOF
			}
			rd, err := openStream(c.streams[0])
			c.streams = c.streams[1:]
			if err != nil {
				c.broken = err
				continue
			}
			c.cur = &countReader{r: rd, b: c.b, max: c.b.lim.MaxStreamBytes}
			if c.started {
				p[0] = '\n'
				return 1, nil
			}
			c.started = true
		}
		n, err := c.cur.Read(p)
		if errors.Is(err, io.EOF) {
			c.cur = nil
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
	return 0, nil
}

// maxDeflateRatio is the most deflate can expand: 258 bytes from one
// symbol of about two bits, rounded up.
const maxDeflateRatio = 1032

// smallStream reports whether a stream provably decodes to at most max
// bytes from its stored /Length alone (the reader reads no more than
// /Length): unfiltered, or one FlateDecode filter.
func smallStream(v pdf.Value, max int64) bool {
	n := v.Key("Length").Int64()
	switch f := v.Key("Filter"); f.Kind() {
	case pdf.Null:
		return n <= max
	case pdf.Name:
		return f.Name() == "FlateDecode" && v.Key("DecodeParms").IsNull() && n <= max/maxDeflateRatio
	}
	return false
}
