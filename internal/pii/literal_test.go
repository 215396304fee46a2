package pii

import "testing"

func TestRedactLiterals(t *testing.T) {
	lits := []Literal{{"Tom", Person}, {"Tom Becker", Person}, {"Zoë", Person}, {"Gdańsk", Location}, {"<EMAIL>", Person}, {"42", Person}, {"x", Person}}
	for _, tc := range []struct {
		in, want string
		o        Options
		n        int
	}{
		{"Tom Becker met Tom in Gdańsk.", "<PERSON> met <PERSON> in <LOCATION>.", Options{}, 3},
		{"Tomography, Atom, Tom's", "Tomography, Atom, <PERSON>'s", Options{}, 1},
		{"Zoë and <EMAIL> at 42", "*** and <EMAIL> at 42", Options{Style: StyleMask}, 1},
		{"<p>Tom Becker</p>", "<p>&lt;PERSON&gt;</p>", Options{HTML: true}, 1},
		{"Ask Tom.", "Ask .", Options{Style: StyleRemove}, 1},
	} {
		got, n := RedactLiterals(tc.in, lits, tc.o)
		if got != tc.want || n != tc.n {
			t.Errorf("RedactLiterals(%q) = %q, %d; want %q, %d", tc.in, got, n, tc.want, tc.n)
		}
	}
	if got, n := RedactLiterals("nothing here", nil, Options{}); got != "nothing here" || n != 0 {
		t.Errorf("no literals: %q %d", got, n)
	}
}
