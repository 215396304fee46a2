package fetch

import "testing"

func TestAcceptLanguage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"de-DE"}, "de-DE"},
		{[]string{"de-DE", "en"}, "de-DE,en;q=0.9"},
		{[]string{"a", "b", "c"}, "a,b;q=0.9,c;q=0.8"},
		{[]string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"}, "a,b;q=0.9,c;q=0.8,d;q=0.7,e;q=0.6,f;q=0.5,g;q=0.4,h;q=0.3,i;q=0.2,j;q=0.1,k;q=0.1"},
	} {
		if got := AcceptLanguage(tc.in); got != tc.want {
			t.Errorf("AcceptLanguage(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
