package extracteval

import (
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
)

// Structure kinds scored against main_content_markdown. Each is a multiset
// of keys per page; a key is the element's words (lower-cased \w+ tokens,
// inline markup removed) with what the kind adds: a heading's level, a list
// item's depth, a row's cells, a link's target. A code block's key is its
// text with runs of white space collapsed (the ground truth often loses a
// block's indentation), every other character kept.
const (
	KindHeading     = "headings (text + level)"
	KindHeadingText = "headings (text only)"
	KindListItem    = "list items"
	KindListNesting = "list items (+ depth)"
	KindTableRow    = "table rows (all cells)"
	KindTableCell   = "table cells"
	KindCode        = "fenced code (text, spaces collapsed)"
	KindLink        = "links (text + target)"
	KindLinkTarget  = "link targets"
)

// StructureKinds is the report order of the kinds.
var StructureKinds = []string{KindHeading, KindHeadingText, KindListItem, KindListNesting,
	KindTableRow, KindTableCell, KindCode, KindLink, KindLinkTarget}

// Elements is the structure of one markdown text: kind -> key -> count.
type Elements struct {
	m    map[string]map[string]int
	base *url.URL // resolves link targets, when set
}

// Count is how many elements of kind have key.
func (e Elements) Count(kind, key string) int { return e.m[kind][key] }

// Keys is the multiset of kind's keys.
func (e Elements) Keys(kind string) map[string]int { return e.m[kind] }

func (e *Elements) add(kind, key string) {
	if key == "" {
		return
	}
	if e.m == nil {
		e.m = map[string]map[string]int{}
	}
	m := e.m[kind]
	if m == nil {
		m = map[string]int{}
		e.m[kind] = m
	}
	m[key]++
}

// Tally counts matched, predicted and reference elements of one kind.
type Tally struct{ Match, Pred, Ref int }

// Score is precision, recall and F1 of the tally (micro-averaged).
func (t Tally) Score() Score {
	var s Score
	if t.Pred > 0 {
		s.P = float64(t.Match) / float64(t.Pred)
	}
	if t.Ref > 0 {
		s.R = float64(t.Match) / float64(t.Ref)
	}
	if s.P+s.R > 0 {
		s.F = 2 * s.P * s.R / (s.P + s.R)
	}
	return s
}

// CompareStructure tallies got's elements against want's, kind by kind.
func CompareStructure(got, want Elements) map[string]Tally {
	out := make(map[string]Tally, len(StructureKinds))
	for _, k := range StructureKinds {
		var t Tally
		for key, n := range got.m[k] {
			t.Pred += n
			t.Match += min(n, want.m[k][key])
		}
		for _, n := range want.m[k] {
			t.Ref += n
		}
		out[k] = t
	}
	return out
}

// ParseStructure reads the headings, list items, table rows, fenced code
// blocks and links of a markdown text (the subset of CommonMark/GFM the
// ground truth and the converters write).
func ParseStructure(md string) Elements { return ParseStructureAt(md, "") }

// ParseStructureAt is ParseStructure with link targets resolved against
// pageURL (the ground truth keeps some links relative, the server writes
// them absolute).
func ParseStructureAt(md, pageURL string) Elements {
	e := Elements{}
	if u, err := url.Parse(pageURL); err == nil && u.Host != "" {
		e.base = u
	}
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	var (
		fence       string // the open fence's marker, "" outside code
		fenceIndent int
		fenceQuoted bool // the fence opened inside a blockquote: its lines carry "> "
		code        []string
		listIndents []int // indentation of the open list items, outermost first
		prevText    bool  // the previous line was paragraph text (setext)
		prevLine    string
	)
	for _, raw := range lines {
		line := strings.ReplaceAll(raw, "\t", "    ")
		if fence != "" {
			if fenceQuoted {
				line = stripQuote(line)
			}
			t := strings.TrimSpace(line)
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				e.add(KindCode, codeKey(code))
				fence, code = "", nil
				continue
			}
			code = append(code, strings.TrimRight(dropIndent(line, fenceIndent), " "))
			continue
		}
		body := stripQuote(line)
		indent := len(body) - len(strings.TrimLeft(body, " "))
		t := strings.TrimSpace(body)
		if t == "" {
			prevText = false
			continue
		}
		if f := fenceMarker(t); f != "" {
			fence, fenceIndent, code = f, indent, nil
			fenceQuoted = body != line
			prevText = false
			continue
		}
		// A list item closes the items it is not nested in.
		if marker, text, ok := listItem(t); ok {
			for len(listIndents) > 0 && indent <= listIndents[len(listIndents)-1] {
				listIndents = listIndents[:len(listIndents)-1]
			}
			depth := len(listIndents)
			listIndents = append(listIndents, indent)
			_ = marker
			// An item may open with a heading or a task box.
			text = strings.TrimPrefix(strings.TrimPrefix(text, "[ ] "), "[x] ")
			if lvl, h := atxHeading(text); lvl > 0 {
				addHeading(&e, lvl, h)
				text = h
			}
			k := wordsKey(text)
			e.add(KindListItem, k)
			if k != "" {
				e.add(KindListNesting, strconv.Itoa(depth)+":"+k)
			}
			addLinks(&e, text)
			prevText = false
			continue
		}
		if indent == 0 {
			listIndents = listIndents[:0]
		}
		if lvl, h := atxHeading(t); lvl > 0 {
			addHeading(&e, lvl, h)
			addLinks(&e, h)
			prevText = false
			continue
		}
		if prevText && (strings.Trim(t, "=") == "" || strings.Trim(t, "-") == "" && len(t) >= 2) {
			lvl := 1
			if t[0] == '-' {
				lvl = 2
			}
			addHeading(&e, lvl, prevLine)
			prevText = false
			continue
		}
		if strings.HasPrefix(t, "|") {
			if !isTableRule(t) {
				cells := splitRow(t)
				keys := make([]string, 0, len(cells))
				for _, c := range cells {
					k := wordsKey(c)
					e.add(KindTableCell, k)
					keys = append(keys, k)
				}
				if strings.Trim(strings.Join(keys, ""), " ") != "" {
					e.add(KindTableRow, strings.Join(keys, " | "))
				}
				addLinks(&e, t)
			}
			prevText = false
			continue
		}
		addLinks(&e, t)
		prevText, prevLine = !isThematicBreak(t), t
	}
	if fence != "" {
		e.add(KindCode, codeKey(code)) // an unclosed fence runs to the end
	}
	return e
}

func addHeading(e *Elements, level int, text string) {
	k := wordsKey(text)
	if k == "" {
		return
	}
	e.add(KindHeading, strconv.Itoa(level)+":"+k)
	e.add(KindHeadingText, k)
}

// atxHeading returns the level and text of an ATX heading line, or 0.
func atxHeading(t string) (int, string) {
	n := 0
	for n < len(t) && t[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(t) && t[n] != ' ') {
		return 0, ""
	}
	h := strings.TrimSpace(t[n:])
	if s := strings.TrimRight(h, "#"); s != h && (s == "" || strings.HasSuffix(s, " ")) {
		h = strings.TrimSpace(s)
	}
	return n, h
}

// listItem returns the marker and text of a list item line.
func listItem(t string) (marker, text string, ok bool) {
	if len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && t[1] == ' ' {
		if isThematicBreak(t) {
			return "", "", false
		}
		return t[:1], strings.TrimSpace(t[2:]), true
	}
	i := 0
	for i < len(t) && i < 9 && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && t[i+1] == ' ' {
		return t[:i+1], strings.TrimSpace(t[i+2:]), true
	}
	return "", "", false
}

func fenceMarker(t string) string {
	for _, c := range []string{"`", "~"} {
		n := 0
		for n < len(t) && t[n:n+1] == c {
			n++
		}
		if n >= 3 && (c != "`" || !strings.Contains(t[n:], "`")) {
			return t[:n]
		}
	}
	return ""
}

func stripQuote(line string) string {
	for {
		t := strings.TrimLeft(line, " ")
		if !strings.HasPrefix(t, ">") {
			return line
		}
		line = strings.TrimPrefix(t[1:], " ")
	}
}

func dropIndent(line string, n int) string {
	i := 0
	for i < n && i < len(line) && line[i] == ' ' {
		i++
	}
	return line[i:]
}

func codeKey(lines []string) string {
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(strings.Fields(strings.Join(lines, "\n")), " ")
}

// splitRow splits a pipe-table row into its cells (escaped pipes kept).
func splitRow(t string) []string {
	t = strings.TrimSpace(t)
	t = strings.TrimPrefix(t, "|")
	if strings.HasSuffix(t, "|") && !strings.HasSuffix(t, `\|`) {
		t = t[:len(t)-1]
	}
	var cells []string
	start := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '\\':
			i++
		case '|':
			cells = append(cells, t[start:i])
			start = i + 1
		}
	}
	return append(cells, t[start:])
}

// wordsKey is the lower-cased words of a markdown fragment's visible text.
func wordsKey(s string) string { return strings.Join(words(inline(s)), " ") }

// addLinks adds the links of one line of markdown (images are not links;
// an image inside a link leaves its alt text out of the link's text).
func addLinks(e *Elements, s string) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
			continue
		case '[':
		default:
			continue
		}
		image := i > 0 && s[i-1] == '!'
		end := matchBracket(s, i)
		if end < 0 || end+1 >= len(s) || s[end+1] != '(' {
			continue
		}
		close := matchParen(s, end+1)
		if close < 0 {
			continue
		}
		if !image {
			target := linkTarget(s[end+2 : close])
			if target != "" && e.base != nil {
				if u, err := e.base.Parse(target); err == nil {
					target = u.String()
				}
			}
			if target != "" {
				text := wordsKey(s[i+1 : end])
				e.add(KindLink, text+" -> "+target)
				e.add(KindLinkTarget, target)
			}
			// Links inside the text (rare) are read by continuing there.
			continue
		}
		i = close
	}
}

func matchParen(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// linkTarget is the destination of a link's parenthesis, without its
// title, angle brackets and escapes, percent-decoded where that is valid.
func linkTarget(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "<") {
		if j := strings.IndexByte(s, '>'); j > 0 {
			s = s[1:j]
		}
	} else if j := strings.IndexAny(s, " \t"); j > 0 {
		s = s[:j]
	}
	s = strings.NewReplacer(`\(`, "(", `\)`, ")", `\_`, "_", `\*`, "*").Replace(s)
	if u, err := url.PathUnescape(s); err == nil {
		s = u
	}
	return s
}

// StructureSystem is one converter's markdown per page, for the side-by-side
// structure table.
type StructureSystem struct {
	Name     string
	Markdown map[string]string // page ID -> markdown
}

// WriteStructure prints, for the pages keep accepts that have a markdown
// ground truth, precision, recall and F1 per kind for each system.
func WriteStructure(w io.Writer, title string, pages []Page, systems []StructureSystem, keep func(*Page) bool) {
	tallies := make([]map[string]Tally, len(systems))
	for i := range tallies {
		tallies[i] = map[string]Tally{}
	}
	n := 0
	for i := range pages {
		p := &pages[i]
		if p.Markdown == "" || !keep(p) {
			continue
		}
		n++
		want := ParseStructureAt(p.Markdown, p.URL)
		for si, sys := range systems {
			for k, t := range CompareStructure(ParseStructureAt(sys.Markdown[p.ID], p.URL), want) {
				acc := tallies[si][k]
				acc.Match += t.Match
				acc.Pred += t.Pred
				acc.Ref += t.Ref
				tallies[si][k] = acc
			}
		}
	}
	fmt.Fprintf(w, "\n%s (%d pages with markdown ground truth; P/R/F1 over all elements)\n\n| element | in truth |", title, n)
	for _, s := range systems {
		fmt.Fprintf(w, " %s P / R / **F1** |", s.Name)
	}
	fmt.Fprint(w, "\n| - | -: |")
	for range systems {
		fmt.Fprint(w, " -: |")
	}
	fmt.Fprintln(w)
	for _, k := range StructureKinds {
		fmt.Fprintf(w, "| %s | %d |", k, tallies[0][k].Ref)
		for si := range systems {
			s := tallies[si][k].Score()
			fmt.Fprintf(w, " %.3f / %.3f / **%.3f** |", s.P, s.R, s.F)
		}
		fmt.Fprintln(w)
	}
}
