package htmlclean

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"unicode/utf8"
)

// textPattern is a regular expression anchored at the start of the text
// (^...) that the rules match against every text node or line of a page:
// almost every text fails within its first bytes, but regexp's backtracker
// tries every alternative of the expression at the first byte and clears a
// bitmap the size of the expression times the text for each call. A
// textPattern runs the same compiled program as a set of threads stepped
// in lockstep, from a table of the threads alive after each possible
// first byte, and stops as soon as none is left: most texts cost a table
// look-up. The answer is regexp's (it falls back to it for a text the
// fast path cannot take: an empty text, a non-ASCII first byte, more
// threads than it keeps).
type textPattern struct {
	re   *regexp.Regexp
	prog *syntax.Prog
	// anchored: every match starts at the start of the text; otherwise
	// MatchString is regexp's.
	anchored bool
	// after[b], for a text whose first byte is the ASCII byte b: the
	// instructions to continue from at the second byte; matchAfter[b]:
	// the text matches whatever follows b; tableOK[b]: after[b] was
	// computed (not too many threads).
	after      [utf8.RuneSelf][]uint32
	matchAfter [utf8.RuneSelf]bool
	tableOK    [utf8.RuneSelf]bool
	// second[b] tells, for the ASCII second bytes after b, which leave a
	// thread alive and after which the text matches whatever follows;
	// computed the first time a text starts with b.
	second [utf8.RuneSelf]struct {
		once          sync.Once
		alive, match2 [2]uint64 // bit c: second byte c
	}
	// matchesEmpty is regexp's answer for the empty text (many text
	// nodes are white space, empty once trimmed).
	matchesEmpty bool
	// literals: every match holds one of them (nil: no such set is
	// known); a text holding none cannot match. strongLiterals: they are
	// few and long enough to be looked for before the first step (a
	// weak set, "t" or nine words, is looked for only in a text still
	// alive after literalCheckAt bytes).
	literals       []string
	strongLiterals bool
}

// maxThreads bounds the threads a textPattern steps at once; an expression
// that needs more on a text ("x.{0,80}y" after the x) is left to regexp
// for that text.
const maxThreads = 64

// mustTextPattern compiles expr like regexp.MustCompile.
func mustTextPattern(expr string) *textPattern {
	p := &textPattern{re: regexp.MustCompile(expr)}
	p.matchesEmpty = p.re.MatchString("")
	// The same steps as regexp.Compile: parse as Perl, simplify, compile.
	sre, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		panic(err)
	}
	prog, err := syntax.Compile(sre.Simplify())
	if err != nil {
		panic(err)
	}
	p.prog = prog
	p.literals = requiredLiterals(sre.Simplify())
	p.strongLiterals = len(p.literals) > 0 && len(p.literals) <= 2
	for _, l := range p.literals {
		p.strongLiterals = p.strongLiterals && len(l) >= 4
	}
	p.anchored = prog.StartCond()&syntax.EmptyBeginText != 0
	if !p.anchored {
		return p
	}
	var c closer
	for b := range rune(utf8.RuneSelf) {
		pcs, matched := c.closure(prog, []uint32{uint32(prog.Start)}, syntax.EmptyOpContext(-1, b))
		if matched {
			p.matchAfter[b], p.tableOK[b] = true, true
			continue
		}
		var next []uint32
		for _, pc := range pcs {
			if i := &prog.Inst[pc]; i.MatchRune(b) && !containsPC(next, i.Out) {
				next = append(next, i.Out)
			}
		}
		if len(next) > maxThreads {
			continue
		}
		p.after[b], p.tableOK[b] = next, true
	}
	return p
}

// secondBytes fills p.second[b].
func (p *textPattern) secondBytes(b byte) {
	sec := &p.second[b]
	var cl closer
	for c := range rune(utf8.RuneSelf) {
		pcs, matched := cl.closure(p.prog, p.after[b], syntax.EmptyOpContext(rune(b), c))
		alive := matched
		for _, pc := range pcs {
			alive = alive || p.prog.Inst[pc].MatchRune(c)
		}
		if alive {
			sec.alive[c/64] |= 1 << (c % 64)
		}
		if matched {
			sec.match2[c/64] |= 1 << (c % 64)
		}
	}
}

// literalCheckAt is the position at which a text still being matched is
// checked for the pattern's literals: most texts have failed by then, and
// scanning a long text for them costs more than the first steps.
const literalCheckAt = 6

// maxLiterals bounds the set of literals a textPattern checks first.
const maxLiterals = 12

// requiredLiterals returns strings of which every match of re holds one,
// or nil when it finds no such set of at most maxLiterals.
func requiredLiterals(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil
		}
		return []string{string(re.Rune)}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		// Any part's set will do: take the smallest, of those the one
		// whose shortest literal is longest.
		var best []string
		bestLen := 0
		for _, sub := range re.Sub {
			ls := requiredLiterals(sub)
			if ls == nil {
				continue
			}
			short := len(ls[0])
			for _, l := range ls {
				short = min(short, len(l))
			}
			if best == nil || len(ls) < len(best) || len(ls) == len(best) && short > bestLen {
				best, bestLen = ls, short
			}
		}
		return best
	case syntax.OpAlternate:
		var all []string
		for _, sub := range re.Sub {
			ls := requiredLiterals(sub)
			if ls == nil || len(all)+len(ls) > maxLiterals {
				return nil
			}
			all = append(all, ls...)
		}
		return all
	}
	return nil
}

// holdsLiteral reports whether s holds one of p's literals (true when p has
// none).
func (p *textPattern) holdsLiteral(s string) bool {
	if p.literals == nil {
		return true
	}
	for _, l := range p.literals {
		if strings.Contains(s, l) {
			return true
		}
	}
	return false
}

// closer computes closures for the tables, reusing its buffers.
type closer struct {
	seen           []bool
	touched, stack []uint32
	runes          []uint32
}

// closure returns the rune instructions reached from pcs without reading
// a rune, under the empty-width conditions flag, and whether a match
// instruction is reached (for building the tables: no bound). The slice
// is valid until the next call.
func (c *closer) closure(prog *syntax.Prog, pcs []uint32, flag syntax.EmptyOp) (runes []uint32, matched bool) {
	if len(c.seen) < len(prog.Inst) {
		c.seen = make([]bool, len(prog.Inst))
	}
	for _, pc := range c.touched {
		c.seen[pc] = false
	}
	c.touched, c.runes = c.touched[:0], c.runes[:0]
	seen := c.seen
	stack := append(c.stack[:0], pcs...)
	defer func() { c.stack = stack }()
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[pc] {
			continue
		}
		seen[pc] = true
		c.touched = append(c.touched, pc)
		switch i := &prog.Inst[pc]; i.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, i.Arg, i.Out)
		case syntax.InstCapture, syntax.InstNop:
			stack = append(stack, i.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(i.Arg)&^flag == 0 {
				stack = append(stack, i.Out)
			}
		case syntax.InstMatch:
			matched = true
		case syntax.InstFail:
		default:
			c.runes = append(c.runes, pc)
		}
	}
	return c.runes, matched
}

// MatchString reports whether s matches, as regexp's MatchString does.
func (p *textPattern) MatchString(s string) bool {
	if len(s) == 0 {
		return p.matchesEmpty
	}
	if !p.anchored || s[0] >= utf8.RuneSelf || !p.tableOK[s[0]] {
		return p.holdsLiteral(s) && p.re.MatchString(s)
	}
	if p.matchAfter[s[0]] {
		return true
	}
	start := p.after[s[0]]
	if len(start) == 0 {
		return false
	}
	if len(s) > 1 && s[1] < utf8.RuneSelf {
		// The second byte: most texts stop here too.
		sec := &p.second[s[0]]
		sec.once.Do(func() { p.secondBytes(s[0]) })
		c := s[1]
		if sec.alive[c/64]&(1<<(c%64)) == 0 {
			return false
		}
		if sec.match2[c/64]&(1<<(c%64)) != 0 {
			return true
		}
	}
	if p.strongLiterals && !p.holdsLiteral(s) {
		return false
	}
	var lists [2]threadList
	cur, next := &lists[0], &lists[1]
	pos := 1
	r, w := runeAt(s, pos)
	flag := syntax.EmptyOpContext(rune(s[0]), r)
	for _, pc := range start {
		if !cur.add(p.prog, pc, flag) {
			return p.re.MatchString(s)
		}
	}
	for {
		if cur.matched {
			return true
		}
		if cur.n == 0 || r < 0 {
			return false
		}
		if pos == literalCheckAt && !p.strongLiterals && !p.holdsLiteral(s) {
			// Still alive after a few bytes (a leading "[^ ]+" or
			// "\W*"): the literals every match needs decide faster.
			return false
		}
		pos += w
		nr, nw := runeAt(s, pos)
		flag := syntax.EmptyOpContext(r, nr)
		next.n, next.nseen, next.matched = 0, 0, false
		for _, pc := range cur.pcs[:cur.n] {
			if i := &p.prog.Inst[pc]; i.MatchRune(r) && !next.add(p.prog, i.Out, flag) {
				return p.re.MatchString(s)
			}
		}
		cur, next = next, cur
		r, w = nr, nw
	}
}

// mayStartWith reports whether a text starting as b starts might match: false
// only when the table says no text starting with b's first two bytes
// does (a cheap test before b is made a string).
func (p *textPattern) mayStartWith(b []byte) bool {
	if !p.anchored || len(b) == 0 || b[0] >= utf8.RuneSelf || !p.tableOK[b[0]] {
		return true
	}
	if p.matchAfter[b[0]] {
		return true
	}
	if len(p.after[b[0]]) == 0 {
		return false
	}
	if len(b) > 1 && b[1] < utf8.RuneSelf {
		sec := &p.second[b[0]]
		sec.once.Do(func() { p.secondBytes(b[0]) })
		return sec.alive[b[1]/64]&(1<<(b[1]%64)) != 0
	}
	return true
}

// runeAt decodes the rune at pos as regexp does: -1 at the end, an invalid
// byte as utf8.RuneError of width 1.
func runeAt(s string, pos int) (rune, int) {
	if pos >= len(s) {
		return -1, 0
	}
	if c := s[pos]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[pos:])
}

// threadList is the set of rune instructions waiting for the next rune,
// built by add; seen holds every instruction reached at this position.
type threadList struct {
	pcs     [maxThreads]uint32
	n       int
	seen    [2 * maxThreads]uint32
	nseen   int
	matched bool // a match instruction was reached
}

// add adds pc and what it leads to without reading a rune, under the
// empty-width conditions flag. It reports false when the list would hold
// more than it keeps.
func (l *threadList) add(prog *syntax.Prog, pc uint32, flag syntax.EmptyOp) bool {
	var stack [maxThreads]uint32
	stack[0] = pc
	sp := 1
	for sp > 0 {
		sp--
		pc := stack[sp]
		if containsPC(l.seen[:l.nseen], pc) {
			continue
		}
		if l.nseen == len(l.seen) {
			return false
		}
		l.seen[l.nseen] = pc
		l.nseen++
		i := &prog.Inst[pc]
		switch i.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			if sp+2 > len(stack) {
				return false
			}
			stack[sp], stack[sp+1] = i.Arg, i.Out
			sp += 2
		case syntax.InstCapture, syntax.InstNop:
			stack[sp] = i.Out
			sp++
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(i.Arg)&^flag == 0 {
				stack[sp] = i.Out
				sp++
			}
		case syntax.InstMatch:
			l.matched = true
		case syntax.InstFail:
		default: // a rune instruction
			if l.n == len(l.pcs) {
				return false
			}
			l.pcs[l.n] = pc
			l.n++
		}
	}
	return true
}

func containsPC(pcs []uint32, pc uint32) bool {
	for _, x := range pcs {
		if x == pc {
			return true
		}
	}
	return false
}
