package htmlclean

import (
	"net/url"
	"testing"
)

var resolveBases = []string{"https://www.example.com/a/page.html?x=1#f", "http://[::1]:8080/x/", "https://user:pw@h.com/",
	"https://ex\u00e4mple.com/", "file:///tmp/x", "mailto:a@b.c", "https://h.com", "http://h.com:80", "//h.com/x", "/relative/base"}

var resolveRefs = []string{"/", "/a", "/story/12", "/img/a-1.jpg", "/a//b", "/a/./b", "/a/../b", "/.", "/..", "/a/.", "/a/..",
	"/.hidden", "/a.b/c~d_e", "//cdn.example.com/x.js", "/a b", " /a ", "/a?b", "/a#b", "/a%20b", "/a!b", "/a:b", "/a@b",
	"/\u00e9", "a/b", "./a", "../a", "", "  ", "#top", "?q=1", "https://other.org/x", "javascript:void(0)", "/a\tb", "/A/B"}

// TestResolverFastPath checks the resolver's fast path against resolve on
// references of every kind, for bases of every kind.
func TestResolverFastPath(t *testing.T) {
	fast := 0
	for _, b := range resolveBases {
		base, err := url.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		r := newResolver(base)
		for _, ref := range resolveRefs {
			if got, want := r.resolve(ref), resolve(base, ref); got != want {
				t.Errorf("base %q, ref %q: %q, resolve says %q", b, ref, got, want)
			}
			if r.origin != "" && plainAbsPath(ref) {
				fast++
			}
		}
	}
	if fast < 20 {
		t.Errorf("the fast path was taken %d times", fast)
	}
	if r := newResolver(nil); r.resolve(" /a ") != " /a " {
		t.Error("no base: the reference must stay as it is")
	}
}

func FuzzResolver(f *testing.F) {
	for _, ref := range resolveRefs {
		f.Add(ref)
	}
	var rs []*resolver
	for _, b := range resolveBases {
		base, _ := url.Parse(b)
		rs = append(rs, newResolver(base))
	}
	f.Fuzz(func(t *testing.T, ref string) {
		for _, r := range rs {
			if got, want := r.resolve(ref), resolve(r.base, ref); got != want {
				t.Errorf("base %v, ref %q: %q, resolve says %q", r.base, ref, got, want)
			}
		}
	})
}
