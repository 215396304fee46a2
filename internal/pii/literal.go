package pii

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Literal is a string found by someone else (a language model) to be of
// kind Entity, redacted wherever it occurs.
type Literal struct {
	Text   string
	Entity string
}

// Bounds of RedactLiterals.
const (
	maxLiterals   = 500
	maxLiteralLen = 200
)

// RedactLiterals replaces every whole-word occurrence of the literals in
// text as o.Style says (o.Entities is not consulted) and returns the
// number replaced. Literals shorter than two characters or longer than 200
// bytes, without a letter, or that are a placeholder already ("<EMAIL>")
// are ignored; at most 500 are used. Longer literals win over shorter
// ones they contain.
func RedactLiterals(text string, lits []Literal, o Options) (string, int) {
	lits = usableLiterals(lits)
	if len(lits) == 0 || text == "" {
		return text, 0
	}
	alts := make([]string, len(lits))
	kind := make(map[string]string, len(lits))
	for i, l := range lits {
		alts[i] = regexp.QuoteMeta(l.Text)
		kind[l.Text] = l.Entity
	}
	re := regexp.MustCompile(strings.Join(alts, "|")) // longest first: the alternation prefers earlier
	var b strings.Builder
	b.Grow(len(text))
	last, n := 0, 0
	for _, m := range re.FindAllStringIndex(text, -1) {
		if !wordEdge(text, m[0], true) || !wordEdge(text, m[1], false) {
			continue
		}
		b.WriteString(text[last:m[0]])
		entity := kind[text[m[0]:m[1]]]
		switch o.Style {
		case StyleMask:
			b.WriteString(strings.Repeat("*", utf8.RuneCountInString(text[m[0]:m[1]])))
		case StyleRemove:
		default:
			if o.HTML {
				b.WriteString("&lt;" + entity + "&gt;")
			} else {
				b.WriteString("<" + entity + ">")
			}
		}
		last = m[1]
		n++
	}
	b.WriteString(text[last:])
	return b.String(), n
}

// usableLiterals drops what RedactLiterals ignores and sorts the rest
// longest first.
func usableLiterals(in []Literal) []Literal {
	seen := map[string]bool{}
	var out []Literal
	for _, l := range in {
		t := strings.TrimSpace(l.Text)
		if utf8.RuneCountInString(t) < 2 || len(t) > maxLiteralLen || seen[t] || !strings.ContainsFunc(t, unicode.IsLetter) ||
			(strings.HasPrefix(t, "<") && strings.HasSuffix(t, ">")) {
			continue
		}
		seen[t] = true
		out = append(out, Literal{Text: t, Entity: l.Entity})
		if len(out) == maxLiterals {
			break
		}
	}
	slices.SortStableFunc(out, func(a, b Literal) int { return len(b.Text) - len(a.Text) })
	return out
}

// wordEdge reports whether position i of s is not inside a word: for a
// start, the character before is no letter or digit; for an end, the
// character after.
func wordEdge(s string, i int, start bool) bool {
	var r rune
	if start {
		if i == 0 {
			return true
		}
		r, _ = utf8.DecodeLastRuneInString(s[:i])
	} else {
		if i == len(s) {
			return true
		}
		r, _ = utf8.DecodeRuneInString(s[i:])
	}
	return !unicode.IsLetter(r) && !unicode.IsDigit(r)
}
