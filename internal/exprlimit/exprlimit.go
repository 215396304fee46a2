// Package exprlimit compiles the expressions a request carries (CSS
// selectors and regular expressions) within bounds, so that no request can
// make the server spend unbounded stack, memory or CPU on one.
//
// The parsers below us have none of these bounds: cascadia parses nested
// parentheses by recursion (a selector of a million nested ":not(" ends the
// whole process with a stack overflow, which no recover catches), and
// matches ":has" inside ":has" in time that multiplies with the page's
// size at every level; Go's regexp compiles a 450 KB alternation into a
// program that takes 180 MB and 2 s per 2 KB path it is matched against.
package exprlimit

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/andybalholm/cascadia"
)

const (
	// MaxSelectorLen is the longest CSS selector accepted, in bytes.
	MaxSelectorLen = 1024
	// MaxSelectorNesting is the deepest nesting of parentheses accepted
	// in a selector (":not(:is(...))" is two).
	MaxSelectorNesting = 16
	// MaxRegexpLen is the longest regular expression accepted, in bytes.
	MaxRegexpLen = 4096
	// MaxRegexpInsts bounds the compiled size of a list of regular
	// expressions (the sum of their programs' instructions): their memory,
	// and the worst time to match one path. A 200-word alternation of
	// literal paths needs about 3,600 and matches a 2 KB path in 0.1 ms;
	// an ambiguous pattern of 300 optional classes needs 600 and takes
	// 40 ms on the same path, so the worst list costs about 0.3 s per 2
	// KB path (paths are rarely a tenth of that).
	MaxRegexpInsts = 5000
)

// slowPseudo names the pseudo-classes whose cost grows with the subtree
// or the text under every candidate: one is fine, one inside another
// multiplies.
var slowPseudo = map[string]bool{
	"has": true, "contains": true, "containsown": true, "matches": true, "matchesown": true,
}

// Error is a refused expression; its text says why, for the client.
type Error struct{ Reason string }

func (e *Error) Error() string { return e.Reason }

// CheckSelector checks the bounds of a CSS selector without parsing it:
// its length, its nesting of parentheses, and that the costly
// pseudo-classes (:has, :contains, :matches and their variants) are not
// nested in one another. It suits selectors another engine parses (the
// browser's, for actions).
func CheckSelector(s string) error {
	if len(s) > MaxSelectorLen {
		return &Error{fmt.Sprintf("the selector is longer than %d characters", MaxSelectorLen)}
	}
	var open []bool // per open parenthesis: does it belong to a costly pseudo-class?
	slowOpen := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			i++ // an escaped character is never syntax
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(':
			slow := slowPseudo[pseudoBefore(s, i)]
			if slow && slowOpen > 0 {
				return &Error{"the selector nests :has, :contains or :matches inside one another"}
			}
			if len(open) == MaxSelectorNesting {
				return &Error{fmt.Sprintf("the selector nests parentheses deeper than %d levels", MaxSelectorNesting)}
			}
			open = append(open, slow)
			if slow {
				slowOpen++
			}
		case c == ')' && len(open) > 0:
			if open[len(open)-1] {
				slowOpen--
			}
			open = open[:len(open)-1]
		}
	}
	return nil
}

// pseudoBefore returns the lower-cased name of the pseudo-class whose
// argument list opens at s[i] ("" when s[i] does not follow ":name").
func pseudoBefore(s string, i int) string {
	j := i
	for j > 0 && (isNameByte(s[j-1])) {
		j--
	}
	if j == i || j == 0 || s[j-1] != ':' {
		return ""
	}
	return strings.ToLower(s[j:i])
}

func isNameByte(c byte) bool {
	return c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// Selector checks s with CheckSelector and parses it as a CSS selector
// group.
func Selector(s string) (cascadia.SelectorGroup, error) {
	if err := CheckSelector(s); err != nil {
		return nil, err
	}
	return cascadia.ParseGroup(s)
}

// Regexps compiles patterns, refusing one longer than MaxRegexpLen and a
// list whose programs together exceed MaxRegexpInsts instructions. On
// failure it returns the index of the pattern at fault with the error; a
// pattern that does not compile yields the compiler's error.
func Regexps(patterns []string) ([]*regexp.Regexp, int, error) {
	out := make([]*regexp.Regexp, 0, len(patterns))
	insts := 0
	for i, s := range patterns {
		if len(s) > MaxRegexpLen {
			return nil, i, &Error{fmt.Sprintf("the regular expression is longer than %d characters", MaxRegexpLen)}
		}
		n, err := programSize(s)
		if err != nil {
			return nil, i, err
		}
		if insts += n; insts > MaxRegexpInsts {
			return nil, i, &Error{fmt.Sprintf("the regular expressions compile to more than %d instructions together: use simpler ones", MaxRegexpInsts)}
		}
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, i, err
		}
		out = append(out, re)
	}
	return out, -1, nil
}

// programSize estimates the number of instructions s compiles to, from
// its parsed tree and without compiling it: a compiled program is what
// takes the memory (a 4 KB pattern of counted repeats compiles to half a
// million instructions), so it is sized before it exists. The estimate
// follows the compiler's shapes closely enough to bound it: a literal is
// one instruction a rune, a repeat multiplies its body by its count.
func programSize(s string) (int, error) {
	re, err := syntax.Parse(s, syntax.Perl)
	if err != nil {
		return 0, err
	}
	return treeSize(re), nil
}

// treeSize is programSize's estimate for one node; it saturates instead
// of overflowing.
func treeSize(re *syntax.Regexp) int {
	const inf = 1 << 40
	sum := func(subs []*syntax.Regexp) int {
		n := 0
		for _, sub := range subs {
			n = min(n+treeSize(sub), inf)
		}
		return n
	}
	switch re.Op {
	case syntax.OpLiteral:
		return max(len(re.Rune), 1)
	case syntax.OpConcat:
		return sum(re.Sub)
	case syntax.OpAlternate:
		return min(sum(re.Sub)+len(re.Sub), inf)
	case syntax.OpCapture:
		return min(treeSize(re.Sub[0])+2, inf)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		return min(treeSize(re.Sub[0])+1, inf)
	case syntax.OpRepeat:
		n := re.Max
		if n < 0 {
			n = re.Min + 1
		}
		return min(treeSize(re.Sub[0])*max(n, 1)+n, inf)
	default:
		return 1
	}
}
