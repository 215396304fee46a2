package pdfparse

import (
	"math"
	"strings"
)

// Word placement. Text operators draw glyphs at positions; the words of a
// line are whatever the positions say, whether the producer drew space
// glyphs (Chromium ends each word with one and then moves the pen with Td
// for kerning or justification), moved the pen with TJ offsets or Td (TeX,
// many typesetters), or both. The interpreter follows each glyph's origin
// and advance (font widths, Tc, Tw, Tz, the text and transformation
// matrices) and gathers glyphs into runs: glyphs that continue where the
// previous one left off, on its baseline, in the same style. A run ends at
// a jump wider than a fraction of the font's space width (the layout then
// joins runs with a space where they are that far apart), at a second space
// glyph in a row (columns aligned with spaces), or at a change of baseline,
// size or style. A run's extent is its inked glyphs only, without the
// advance of trailing spaces, so the gap to the next run is the real one.

// Word gap thresholds.
const (
	// wordGapOfSpace is the fraction of the font's space width above which
	// a gap between glyphs is a space.
	wordGapOfSpace = 0.45
	// defaultSpaceEm is the space width (in ems) assumed for a font that
	// has no space glyph (or whose space is narrower); maxSpaceEm bounds
	// wide ones, so that a gap of a few ems always counts.
	defaultSpaceEm = 0.25
	maxSpaceEm     = 0.6
	// maxTrackingOfSpace bounds the letter spacing that is told apart from
	// word spaces, as a fraction of the space width, in rows without space
	// glyphs (2.5 times more in rows with some).
	maxTrackingOfSpace = 0.8
	// overlapEm is the overlap (in ems) of two items of a row beyond which
	// they are separate words.
	overlapEm = 0.5
	// baselineSlackEm is how far (in ems) a glyph may sit off a run's
	// baseline and still continue it.
	baselineSlackEm = 0.15
)

// glyphText is the decoded (and cleaned) text of one character code.
type glyphText struct {
	s     string
	space bool // only white space
	known bool // decoded already
}

// ligatures spells out the Latin ligatures that ToUnicode maps often give
// as one character, so that "ﬁnd" is found as "find".
var ligatures = strings.NewReplacer("\ufb00", "ff", "\ufb01", "fi", "\ufb02", "fl", "\ufb03", "ffi", "\ufb04", "ffl", "\ufb05", "st", "\ufb06", "st")

// isLigature reports whether c is one of the ligatures.
func isLigature(c rune) bool { return c >= '\ufb00' && c <= '\ufb06' }

// glyph returns the text of the code at raw[i:i+step], decoding it once
// per font.
func (f *fontInfo) glyph(raw string, i, step, code int) glyphText {
	if step == 1 {
		if f.one == nil {
			f.one = new([256]glyphText)
		}
		if g := f.one[code]; g.known {
			return g
		}
	} else if g, ok := f.two[code]; ok {
		return g
	}
	s := strings.Map(cleanRune, f.enc.Decode(raw[i:i+step]))
	if strings.ContainsFunc(s, isLigature) {
		s = ligatures.Replace(s)
	}
	g := glyphText{s: s, space: s != "" && strings.TrimSpace(s) == "", known: true}
	if g.space && f.spaceW == 0 {
		f.spaceW = f.width(code)
	}
	if step == 1 {
		f.one[code] = g
	} else {
		if f.two == nil {
			f.two = map[int]glyphText{}
		}
		f.two[code] = g
	}
	return g
}

// findSpace looks for the font's space glyph among the usual codes (32;
// in two-byte fonts also glyph 3, the space of most TrueType subsets) so
// that its width is known before the first space is drawn. A font whose
// space is elsewhere learns it when it is drawn.
func (f *fontInfo) findSpace() {
	if !f.twoByte {
		f.glyph(" ", 0, 1, ' ')
		return
	}
	for _, code := range []int{3, ' '} {
		if f.glyph(string([]byte{byte(code >> 8), byte(code)}), 0, 2, code); f.spaceW > 0 {
			return
		}
	}
}

// spaceEm returns the font's space width in ems, within the bounds.
func (f *fontInfo) spaceEm() float64 {
	if f.spaceW == 0 {
		return defaultSpaceEm
	}
	return min(maxSpaceEm, max(defaultSpaceEm, f.spaceW/1000))
}

// runBuilder gathers the glyphs of the run being drawn.
type runBuilder struct {
	active     bool
	text       []byte
	x0, x1     float64 // page-space x extent of the inked glyphs
	base, size float64
	space      float64 // the font's space width in points
	dir        [2]float64
	bold       bool
	italic     bool
	spaces     int     // space glyphs since the last inked one
	spaceFirst bool    // a space glyph came before the run's first glyph
	penX, penY float64 // where the next glyph continues the run
	pendingSp  bool    // a space glyph was drawn while no run was active
}

// textSpace describes how one text-showing operator maps to the page.
type textSpace struct {
	size  float64    // effective font size in points
	space float64    // the font's space width in points
	dir   [2]float64 // unit vector along the baseline in page space
}

// continues reports whether a glyph drawn at (x, y) with ts and the font f
// continues the active run.
func (c *runBuilder) continues(x, y float64, ts *textSpace, f *fontInfo) bool {
	if f.bold != c.bold || f.italic != c.italic || math.Abs(ts.size-c.size) > 0.01*c.size ||
		ts.dir[0]*c.dir[0]+ts.dir[1]*c.dir[1] < 0.99 {
		return false
	}
	dx, dy := x-c.penX, y-c.penY
	along := dx*c.dir[0] + dy*c.dir[1]
	across := dy*c.dir[0] - dx*c.dir[1]
	return math.Abs(across) <= baselineSlackEm*c.size && math.Abs(along) <= wordGapOfSpace*c.space
}

// start begins a run with the inked glyph drawn at (x, y).
func (c *runBuilder) start(x, y float64, ts *textSpace, f *fontInfo) {
	c.active = true
	c.text = c.text[:0]
	c.x0, c.x1 = x, x
	c.base, c.size, c.space, c.dir = y, ts.size, ts.space, ts.dir
	c.bold, c.italic = f.bold, f.italic
	c.spaces = 0
	c.spaceFirst = c.pendingSp
	c.pendingSp = false
}

// flush ends the active run and appends it to the page's runs.
func (in *interp) flush() {
	c := &in.cur
	if !c.active {
		return
	}
	c.active = false
	if len(c.text) == 0 || len(in.out.runs) >= maxRunsPerPage {
		return
	}
	in.out.runs = append(in.out.runs, run{
		x0: c.x0, x1: c.x1, base: c.base, size: c.size, space: c.space,
		text: string(c.text), bold: c.bold, italic: c.italic,
		spaceBefore: c.spaceFirst, spaceAfter: c.spaces > 0,
	})
}

// show draws the string raw in the current text state and returns the
// advance in unscaled text space units.
func (in *interp) show(raw string, g *gstate, tm affine) float64 {
	f := g.font
	step := 1
	if f.twoByte {
		step = 2
	}
	m := tm.mul(g.ctm)
	hx := math.Hypot(m[0], m[1])
	ts := textSpace{size: g.tfs * math.Hypot(m[2], m[3])}
	placeable := ts.size > 0 && hx > 0 && !math.IsInf(ts.size, 0) && !math.IsInf(hx, 0) && !math.IsNaN(ts.size+hx)
	if placeable {
		ts.dir = [2]float64{m[0] / hx, m[1] / hx}
		if g.th < 0 {
			ts.dir = [2]float64{-ts.dir[0], -ts.dir[1]}
		}
		ts.space = f.spaceEm() * math.Abs(g.tfs*g.th) * hx
	}
	c := &in.cur
	var adv float64
	added := 0
	first := true
	for i := 0; i+step <= len(raw); i += step {
		code := int(raw[i])
		if step == 2 {
			code = code<<8 | int(raw[i+1])
		}
		w := f.width(code) / 1000 * g.tfs
		a := w + g.tc
		if step == 1 && code == ' ' {
			a += g.tw
		}
		a *= g.th
		if !placeable {
			adv += a
			continue
		}
		gt := f.glyph(raw, i, step, code)
		x, y := m.apply(adv, g.trise)
		if first && c.active && !c.continues(x, y, &ts, f) {
			in.flush()
		}
		first = false
		adv += a
		switch {
		case gt.space:
			if !c.active {
				c.pendingSp = true
				continue
			}
			c.spaces++
			if c.spaces >= 2 {
				in.flush()
				c.pendingSp = true
			}
			continue
		case gt.s == "" && !c.active:
			continue
		case !c.active:
			c.start(x, y, &ts, f)
		case c.spaces > 0:
			c.text = append(c.text, ' ')
			added++
			c.spaces = 0
		}
		c.text = append(c.text, gt.s...)
		added += len(gt.s)
		ex, _ := m.apply(adv-a+w*g.th, g.trise)
		c.x0 = min(c.x0, x, ex)
		c.x1 = max(c.x1, x, ex)
	}
	if placeable && c.active {
		c.penX, c.penY = m.apply(adv, g.trise)
	}
	if added > 0 {
		if err := in.b.addText(added); err != nil {
			panic(abort{err})
		}
	}
	return adv
}
