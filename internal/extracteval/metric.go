package extracteval

import (
	"strings"
	"unicode"
)

// Score is the word-level comparison of one prediction with its reference.
type Score struct {
	P, R, F float64
}

// isWord reports the characters of Python's Unicode \w: letters, numbers
// and the underscore.
func isWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

// words returns the lower-cased \w+ tokens of s.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !isWord(r) })
}

// WordF1 scores got against want as the corpus README defines it: tokens
// counted as multisets, overlap the sum of per-word minimum counts. An empty
// prediction scores 0; an empty reference scores 1 only for an empty
// prediction.
func WordF1(got, want string) Score {
	g, w := words(got), words(want)
	if len(w) == 0 {
		if len(g) == 0 {
			return Score{1, 1, 1}
		}
		return Score{}
	}
	if len(g) == 0 {
		return Score{}
	}
	counts := make(map[string]int, len(w))
	for _, t := range w {
		counts[t]++
	}
	overlap := 0
	for _, t := range g {
		if counts[t] > 0 {
			counts[t]--
			overlap++
		}
	}
	if overlap == 0 {
		return Score{}
	}
	p := float64(overlap) / float64(len(g))
	r := float64(overlap) / float64(len(w))
	return Score{p, r, 2 * p * r / (p + r)}
}

// normalize lower-cases s and collapses every run of white space to one
// space, for snippet matching.
func normalize(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

// snippets counts how many of snips occur in the normalised text.
func snippets(text string, snips []string) (found int) {
	for _, s := range snips {
		if n := normalize(s); n != "" && strings.Contains(text, n) {
			found++
		}
	}
	return found
}
