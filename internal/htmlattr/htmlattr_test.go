package htmlattr

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func TestLookup(t *testing.T) {
	doc, err := html.Parse(strings.NewReader(`<a href="/x" title="">a</a><svg><use xlink:href="#i"/></svg>`))
	if err != nil {
		t.Fatal(err)
	}
	var a, use *html.Node
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		switch n.Data {
		case "a":
			a = n
		case "use":
			use = n
		}
	}
	if v, ok := Lookup(a, "href"); v != "/x" || !ok {
		t.Errorf("Lookup(a, href) = %q, %v; want /x, true", v, ok)
	}
	if v, ok := Lookup(a, "title"); v != "" || !ok {
		t.Errorf("Lookup(a, title) = %q, %v; want \"\", true", v, ok)
	}
	if v, ok := Lookup(a, "rel"); v != "" || ok {
		t.Errorf("Lookup(a, rel) = %q, %v; want \"\", false", v, ok)
	}
	if v, ok := Lookup(use, "href"); ok {
		t.Errorf("Lookup(use, href) = %q, true; a namespaced attribute must not match", v)
	}
	if Get(a, "href") != "/x" || Get(a, "rel") != "" {
		t.Errorf("Get: %q %q", Get(a, "href"), Get(a, "rel"))
	}
}
