package pdfparse

import (
	"cmp"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Layout thresholds, in ems of the local font size unless noted.
const (
	columnGapEm  = 1.5  // minimum width of a gutter between columns or table cells
	bandGapEm    = 0.45 // minimum vertical gap that separates bands of text
	sameLineEm   = 0.4  // baseline tolerance of one line
	paraGapRatio = 1.5  // line pitch (in font sizes) above which a paragraph ends
	maxCutDepth  = 24
	marginBand   = 0.07 // fraction of the page height treated as header or footer band
	maxTableCols = 20
	maxCellWords = 5.0
)

// Compiled patterns used by the layout analysis.
var (
	bulletRe     = regexp.MustCompile(`^([•◦▪▫●○■□‣⁃∙·*–-])\s+(\S.*)$`)
	orderedRe    = regexp.MustCompile(`^(\d{1,3})[.)]\s+(\S.*)$`)
	pageNumberRe = regexp.MustCompile(`(?i)^(page\s*)?[-–—]?\s*\d{1,5}\s*[-–—]?(\s*(of|/)\s*\d{1,5})?$`)
	mdLeadRe     = regexp.MustCompile(`^(#|>|[-*+]\s|\d+[.)]\s|={3,}|-{3,})`)
)

// item is a piece of text on one baseline, with its bounding box.
type item struct {
	x0, x1, y0, y1 float64
	base, size     float64
	space          float64 // the font's space width in points (0: unknown)
	text           string
	bold, italic   bool
	// spaceBefore and spaceAfter: a space glyph was drawn next to the item.
	spaceBefore, spaceAfter bool
}

// line is a row of items read left to right.
type line struct {
	x0, x1, y0, y1 float64
	base, size     float64
	text           string
	bold           bool
}

// block is one layout element of a page, in reading order.
type block struct {
	kind  string // a seed block type
	label string // raw layout label
	md    string // markdown fragment
	box   rect   // page space, points
	size  float64
	conf  float64
	ocr   float64 // mean OCR confidence 0..1, or -1 when not OCR
}

// segment is a leaf of the XY cut: a text region or a table.
type segment struct {
	items []item
	cols  [][]item // table columns, nil for text
}

// toItems turns runs into items. The interpreter has already cleaned the
// text and split runs at wide gaps and at runs of spaces.
func toItems(runs []run) []item {
	items := make([]item, 0, len(runs))
	for _, r := range runs {
		if strings.TrimSpace(r.text) == "" {
			continue
		}
		items = append(items, item{
			x0: r.x0, x1: r.x1, y0: r.base - 0.22*r.size, y1: r.base + 0.75*r.size,
			base: r.base, size: r.size, space: r.space, text: r.text, bold: r.bold, italic: r.italic,
			spaceBefore: r.spaceBefore, spaceAfter: r.spaceAfter,
		})
	}
	return items
}

// cleanRune maps control characters to spaces and drops zero-width ones.
func cleanRune(r rune) rune {
	switch {
	case r == '\u00a0' || r == '\t' || r == '\n' || r == '\r':
		return ' '
	case r == '\u00ad' || r == '\u200b' || r == '\ufeff':
		return -1
	case unicode.IsControl(r):
		return -1
	}
	return r
}

// bodySize returns the most common font size weighted by characters,
// rounded to half points, or 0 when there is no text.
func bodySize(items []item) float64 {
	count := map[float64]int{}
	for _, it := range items {
		count[math.Round(it.size*2)/2] += utf8.RuneCountInString(it.text)
	}
	best, bestN := 0.0, 0
	for s, n := range count {
		if n > bestN || n == bestN && s < best {
			best, bestN = s, n
		}
	}
	return best
}

// medianSize returns the median font size of the items.
func medianSize(items []item) float64 {
	sizes := make([]float64, len(items))
	for i, it := range items {
		sizes[i] = it.size
	}
	slices.Sort(sizes)
	return sizes[len(sizes)/2]
}

// interval is a closed range used for projections.
type interval struct{ lo, hi float64 }

// gaps returns the midpoints of uncovered gaps at least minGap wide between
// the intervals, in ascending order.
func gaps(iv []interval, minGap float64) []float64 {
	slices.SortFunc(iv, func(a, b interval) int { return cmp.Compare(a.lo, b.lo) })
	var cuts []float64
	hi := iv[0].hi
	for _, v := range iv[1:] {
		if v.lo-hi >= minGap {
			cuts = append(cuts, (v.lo+hi)/2)
		}
		hi = math.Max(hi, v.hi)
	}
	return cuts
}

// rows groups items by baseline, top to bottom.
func rows(items []item) [][]item {
	sorted := slices.Clone(items)
	slices.SortStableFunc(sorted, func(a, b item) int {
		if c := cmp.Compare(b.base, a.base); c != 0 {
			return c
		}
		return cmp.Compare(a.x0, b.x0)
	})
	var out [][]item
	for _, it := range sorted {
		if n := len(out); n > 0 {
			last := out[n-1]
			ref := last[0]
			if math.Abs(ref.base-it.base) <= sameLineEm*math.Min(ref.size, it.size) {
				out[n-1] = append(last, it)
				continue
			}
		}
		out = append(out, []item{it})
	}
	for _, r := range out {
		slices.SortStableFunc(r, func(a, b item) int { return cmp.Compare(a.x0, b.x0) })
	}
	return out
}

// cut splits items recursively into reading-ordered segments (XY cut):
// full-height gutters split columns (or mark a table), wide horizontal
// gaps split bands.
func cut(items []item, depth int) []segment {
	if len(items) <= 1 || depth > maxCutDepth {
		return []segment{{items: items}}
	}
	size := medianSize(items)
	xs := make([]interval, len(items))
	ys := make([]interval, len(items))
	top, bottom := math.Inf(-1), math.Inf(1)
	for i, it := range items {
		xs[i] = interval{it.x0, it.x1}
		ys[i] = interval{it.y0, it.y1}
		top, bottom = math.Max(top, it.y1), math.Min(bottom, it.y0)
	}
	vcuts := gaps(xs, columnGapEm*size)
	hcuts := gaps(ys, bandGapEm*size)
	nrows := len(rows(items))
	if len(vcuts) > 0 && nrows >= 2 {
		parts := splitBy(items, vcuts, func(it item) float64 { return (it.x0 + it.x1) / 2 })
		tall := true
		for _, p := range parts {
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, it := range p {
				lo, hi = math.Min(lo, it.y0), math.Max(hi, it.y1)
			}
			if hi-lo < 0.6*(top-bottom) {
				tall = false
			}
		}
		if tall || len(hcuts) == 0 {
			if isTable(items, parts) {
				return []segment{{items: items, cols: parts}}
			}
			var out []segment
			for _, p := range parts {
				out = append(out, cut(p, depth+1)...)
			}
			return out
		}
	}
	if len(hcuts) > 0 {
		parts := splitBy(items, hcuts, func(it item) float64 { return (it.y0 + it.y1) / 2 })
		var out []segment
		for i := len(parts) - 1; i >= 0; i-- { // top (high y) first
			out = append(out, cut(parts[i], depth+1)...)
		}
		return out
	}
	return []segment{{items: items}}
}

// splitBy distributes items into len(cuts)+1 parts by the key's position
// relative to the ascending cuts, dropping empty parts.
func splitBy(items []item, cuts []float64, key func(item) float64) [][]item {
	parts := make([][]item, len(cuts)+1)
	for _, it := range items {
		k := key(it)
		i, _ := slices.BinarySearch(cuts, k)
		parts[i] = append(parts[i], it)
	}
	return slices.DeleteFunc(parts, func(p []item) bool { return len(p) == 0 })
}

// isTable reports whether columns split by gutters look like a table rather
// than text columns: rows aligned across columns and short cells.
func isTable(items []item, cols [][]item) bool {
	if len(cols) < 2 || len(cols) > maxTableCols {
		return false
	}
	rs := rows(items)
	if len(rs) < 2 {
		return false
	}
	colOf := colIndex(cols)
	multi, cells, words := 0, 0, 0
	for _, r := range rs {
		seen := map[int]bool{}
		for _, it := range r {
			c := colOf(it)
			if !seen[c] {
				seen[c] = true
				cells++
			}
			words += len(strings.Fields(it.text))
		}
		if len(seen) >= 2 {
			multi++
		}
	}
	return multi*10 >= len(rs)*6 && float64(words)/float64(cells) <= maxCellWords
}

// colIndex returns a function giving the column of an item.
func colIndex(cols [][]item) func(item) int {
	bounds := make([]interval, len(cols))
	for i, c := range cols {
		bounds[i] = interval{math.Inf(1), math.Inf(-1)}
		for _, it := range c {
			bounds[i].lo = math.Min(bounds[i].lo, it.x0)
			bounds[i].hi = math.Max(bounds[i].hi, it.x1)
		}
	}
	return func(it item) int {
		mid := (it.x0 + it.x1) / 2
		for i, b := range bounds {
			if mid >= b.lo-0.5 && mid <= b.hi+0.5 {
				return i
			}
		}
		for i := len(bounds) - 1; i >= 0; i-- {
			if mid >= bounds[i].lo {
				return i
			}
		}
		return 0
	}
}

// joinItems joins the items of one row into text: a space where a space
// glyph was drawn next to an item or where the gap between items is wider
// than the word gap. In letter-spaced text the word gap grows by the letter
// spacing. Items that overlap by more than kerning does are different texts
// drawn over each other (a fixed banner printed over the page), kept apart.
func joinItems(r []item) string {
	track := tracking(r)
	var b strings.Builder
	var prev *item
	for i := range r {
		it := &r[i]
		if prev != nil {
			if it.text == prev.text && math.Abs(it.x0-prev.x0) < 1 {
				continue // text drawn twice to fake bold
			}
			gap := it.x0 - prev.x1
			if prev.spaceAfter || it.spaceBefore || gap > wordGap(prev, it)+track ||
				gap < -overlapEm*math.Min(prev.size, it.size) {
				b.WriteByte(' ')
			}
		}
		b.WriteString(it.text)
		prev = it
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// spaceOf returns an item's space width in points.
func spaceOf(it *item) float64 {
	if it.space > 0 {
		return it.space
	}
	return defaultSpaceEm * it.size
}

// wordGap returns the gap between two items of a row above which they are
// separate words.
func wordGap(a, b *item) float64 {
	return wordGapOfSpace * math.Min(spaceOf(a), spaceOf(b))
}

// tracking returns the letter spacing of a letter-spaced row, 0 for other
// rows. A producer that spaces letters apart draws each glyph on its own,
// so that most letters of the row are separated from the next by gaps wider
// than the word gap, all about the same and narrower than a space: the
// median of those gaps is the letter spacing. (Dot leaders, also drawn one
// glyph at a time, are not letters.) Where the producer draws its spaces
// (some in the row), positional gaps up to twice a space are letter spacing
// too; where it does not, a row of one-letter words would look the same,
// so the spacing must be narrower than a space.
func tracking(r []item) float64 {
	if len(r) < 4 {
		return 0
	}
	letters := 0
	for i := range r {
		for _, c := range r[i].text {
			if isAlnum(c) {
				letters++
			}
		}
	}
	if 2*(len(r)-1) < letters {
		return 0
	}
	gaps := make([]float64, 0, len(r))
	space := math.Inf(1)
	drawn := false // the producer draws its spaces
	for i := 1; i < len(r); i++ {
		a, b := &r[i-1], &r[i]
		space = math.Min(space, spaceOf(b))
		if a.spaceAfter || b.spaceBefore {
			drawn = true
			continue
		}
		last, _ := utf8.DecodeLastRuneInString(a.text)
		first, _ := utf8.DecodeRuneInString(b.text)
		if g := b.x0 - a.x1; g > wordGap(a, b) && isAlnum(last) && isAlnum(first) {
			gaps = append(gaps, g)
		}
	}
	if len(gaps) == 0 || 2*len(gaps) < letters {
		return 0
	}
	slices.Sort(gaps)
	limit := maxTrackingOfSpace * space
	if drawn {
		limit *= 2.5
	}
	if med := gaps[len(gaps)/2]; med < limit {
		return med
	}
	return 0
}

// isAlnum reports whether c is a letter or a digit.
func isAlnum(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) }

// toLines builds the lines of a text region, top to bottom.
func toLines(items []item) []line {
	rs := rows(items)
	out := make([]line, 0, len(rs))
	for _, r := range rs {
		l := line{x0: math.Inf(1), x1: math.Inf(-1), y0: math.Inf(1), y1: math.Inf(-1), bold: true}
		chars := map[float64]int{}
		for _, it := range r {
			l.x0, l.x1 = math.Min(l.x0, it.x0), math.Max(l.x1, it.x1)
			l.y0, l.y1 = math.Min(l.y0, it.y0), math.Max(l.y1, it.y1)
			chars[it.size] += len(it.text)
			l.bold = l.bold && it.bold
		}
		best := 0
		for s, n := range chars {
			if n > best || n == best && s > l.size {
				l.size, best = s, n
			}
		}
		l.base = r[0].base
		l.text = joinItems(r)
		if l.text != "" {
			out = append(out, l)
		}
	}
	return out
}

// headingLevel returns the markdown heading level of a line of the given
// size on a page whose body text has size body, or 0.
func headingLevel(size, body float64, text string) int {
	if body <= 0 || utf8.RuneCountInString(text) > 200 {
		return 0
	}
	switch r := size / body; {
	case r >= 1.9:
		return 1
	case r >= 1.45:
		return 2
	case r >= 1.15:
		return 3
	}
	return 0
}

// para accumulates the lines of one paragraph, heading or list.
type para struct {
	level   int    // heading level
	list    string // "-" or "1" for bullet or ordered lists, "" otherwise
	entries []string
	box     rect
	size    float64
	bold    bool
	last    line
}

// textBlocks turns a text region into paragraph, heading and list blocks.
func textBlocks(items []item, body float64) []block {
	lines := toLines(items)
	var out []block
	var cur *para
	flush := func() {
		if cur != nil {
			out = append(out, cur.block())
			cur = nil
		}
	}
	for _, l := range lines {
		level := headingLevel(l.size, body, l.text)
		listText, listKind := "", ""
		if level == 0 {
			if m := bulletRe.FindStringSubmatch(l.text); m != nil {
				listText, listKind = "- "+m[2], "-"
			} else if m := orderedRe.FindStringSubmatch(l.text); m != nil {
				listText, listKind = m[1]+". "+m[2], "1"
			}
		}
		isItem := listKind != ""
		if cur != nil {
			pitch := cur.last.base - l.base
			breaks := level != cur.level ||
				pitch > paraGapRatio*math.Max(l.size, cur.last.size) || pitch < 0 ||
				math.Abs(l.size-cur.size) > 0.15*cur.size ||
				(isItem && cur.list != listKind) || (cur.list != "" && !isItem && l.x0 < cur.box.x0-1)
			if breaks {
				flush()
			}
		}
		if cur == nil {
			cur = &para{level: level, list: listKind, box: rect{l.x0, l.y0, l.x1, l.y1}, size: l.size, bold: l.bold}
		}
		cur.box = rect{math.Min(cur.box.x0, l.x0), math.Min(cur.box.y0, l.y0), math.Max(cur.box.x1, l.x1), math.Max(cur.box.y1, l.y1)}
		cur.bold = cur.bold && l.bold
		cur.last = l
		switch {
		case isItem:
			cur.entries = append(cur.entries, listText)
		case len(cur.entries) == 0:
			cur.entries = append(cur.entries, l.text)
		default:
			n := len(cur.entries) - 1
			cur.entries[n] = joinLine(cur.entries[n], l.text)
		}
	}
	flush()
	return out
}

// joinLine appends a wrapped line to a paragraph, undoing end-of-line
// hyphenation of a lowercase word.
func joinLine(a, b string) string {
	if strings.HasSuffix(a, "-") && len(a) > 1 {
		prev, _ := utf8.DecodeLastRuneInString(a[:len(a)-1])
		next, _ := utf8.DecodeRuneInString(b)
		if unicode.IsLetter(prev) && unicode.IsLower(next) {
			return a[:len(a)-1] + b
		}
	}
	return a + " " + b
}

// block renders the paragraph as markdown.
func (p *para) block() block {
	b := block{box: p.box, size: p.size, conf: 0.9, ocr: -1}
	switch {
	case p.level > 0:
		b.kind, b.label = "section_header", "heading-"+strconv.Itoa(p.level)
		b.md = strings.Repeat("#", p.level) + " " + strings.Join(p.entries, " ")
	case p.list != "":
		b.kind, b.label = "text", "list"
		b.md = strings.Join(p.entries, "\n")
	default:
		b.kind, b.label = "text", "paragraph"
		text := strings.Join(p.entries, " ")
		if mdLeadRe.MatchString(text) {
			text = `\` + text
		}
		if p.bold && utf8.RuneCountInString(text) <= 120 {
			text = "**" + text + "**"
		}
		b.md = text
	}
	return b
}

// tableBlock renders a table segment as a markdown table.
func tableBlock(seg segment) block {
	colOf := colIndex(seg.cols)
	rs := rows(seg.items)
	grid := make([][]string, len(rs))
	box := rect{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
	for i, r := range rs {
		cells := make([][]item, len(seg.cols))
		for _, it := range r {
			c := colOf(it)
			cells[c] = append(cells[c], it)
			box = rect{math.Min(box.x0, it.x0), math.Min(box.y0, it.y0), math.Max(box.x1, it.x1), math.Max(box.y1, it.y1)}
		}
		grid[i] = make([]string, len(seg.cols))
		for c, its := range cells {
			grid[i][c] = strings.ReplaceAll(joinItems(its), "|", `\|`)
		}
	}
	var b strings.Builder
	for i, row := range grid {
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
		if i == 0 {
			b.WriteString("|" + strings.Repeat(" --- |", len(seg.cols)) + "\n")
		}
	}
	return block{kind: "table", label: "table", md: strings.TrimSuffix(b.String(), "\n"), box: box, size: medianSize(seg.items), conf: 0.7, ocr: -1}
}

// layoutPage analyses a page's text and returns its blocks in reading order.
// body is the body font size (0 to compute it from this page).
func layoutPage(pc *pageContent, items []item, body float64, first bool) []block {
	if body <= 0 && len(items) > 0 {
		body = bodySize(items)
	}
	var blocks []block
	if len(items) > 0 {
		for _, seg := range cut(items, 0) {
			if seg.cols != nil {
				blocks = append(blocks, tableBlock(seg))
				continue
			}
			blocks = append(blocks, textBlocks(seg.items, body)...)
		}
	}
	classifyMargins(blocks, pc.box, body)
	if first {
		markTitle(blocks)
	}
	pageArea := (pc.box.x1 - pc.box.x0) * (pc.box.y1 - pc.box.y0)
	for _, im := range pc.images {
		if (im.x1-im.x0)*(im.y1-im.y0) >= 0.02*pageArea {
			blocks = append(blocks, block{kind: "figure", label: "image", box: im, conf: 0.9, ocr: -1})
		}
	}
	return blocks
}

// classifyMargins types short blocks in the top and bottom bands of the
// page as page numbers, headers and footers.
func classifyMargins(blocks []block, box rect, body float64) {
	h := box.y1 - box.y0
	for i := range blocks {
		b := &blocks[i]
		if b.kind != "text" || b.label != "paragraph" || strings.Contains(b.md, "\n") ||
			utf8.RuneCountInString(b.md) > 80 || body > 0 && b.size > 1.1*body {
			continue
		}
		inTop := b.box.y0 >= box.y1-marginBand*h
		inBottom := b.box.y1 <= box.y0+marginBand*h
		switch {
		case (inTop || inBottom) && pageNumberRe.MatchString(strings.Trim(b.md, `*\`)):
			b.kind, b.label = "page_number", "page-number"
		case inTop:
			b.kind, b.label = "page_header", "page-header"
		case inBottom:
			b.kind, b.label = "page_footer", "page-footer"
		}
	}
}

// markTitle types the largest level-1 or level-2 heading as the title.
func markTitle(blocks []block) {
	best := -1
	for i, b := range blocks {
		if b.kind == "section_header" && (b.label == "heading-1" || b.label == "heading-2") &&
			(best < 0 || b.size > blocks[best].size) {
			best = i
		}
	}
	if best >= 0 {
		blocks[best].kind = "title"
	}
}

// garbage reports whether a text layer looks unusable: mostly unmapped,
// private-use or replacement characters.
func garbage(items []item) bool {
	bad, total := 0, 0
	for _, it := range items {
		for _, r := range it.text {
			if unicode.IsSpace(r) {
				continue
			}
			total++
			if r == utf8.RuneError || r == '\ufffd' || unicode.Is(unicode.Co, r) || !unicode.IsPrint(r) ||
				r < 32 || (r >= 0x80 && r < 0xa0) {
				bad++
			}
		}
	}
	return total == 0 || bad*10 > total*3
}
