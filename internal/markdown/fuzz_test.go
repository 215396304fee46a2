package markdown

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// FuzzConvert checks that Convert never panics and that its output stays
// bounded by a linear function of the input size.
func FuzzConvert(f *testing.F) {
	for _, s := range []string{
		"<p>hello <b>world</b></p>",
		"<ul><li>a<ol><li>b</li></ol></li></ul>",
		"<table><tr><th>a</th></tr><tr><td>b|c</td></tr></table>",
		"<blockquote><pre><code class=language-go>x</code></pre></blockquote>",
		"<a href=x><img src=data:image/png;base64,AA alt=y></a>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		doc, err := html.Parse(strings.NewReader(src))
		if err != nil {
			return
		}
		md, err := Convert(doc, Options{RemoveBase64Images: true})
		if err != nil {
			t.Fatal(err)
		}
		if limit := 64*len(src) + 1024; len(md) > limit {
			t.Fatalf("output %d bytes for %d bytes of input", len(md), len(src))
		}
	})
}

// deepTree builds depth nested elements of type a without the parser.
func deepTree(depth int, a atom.Atom, leaf string) *html.Node {
	root := &html.Node{Type: html.ElementNode, DataAtom: atom.Body, Data: "body"}
	n := root
	for i := 0; i < depth; i++ {
		c := &html.Node{Type: html.ElementNode, DataAtom: a, Data: a.String()}
		n.AppendChild(c)
		n = c
	}
	n.AppendChild(&html.Node{Type: html.TextNode, Data: leaf})
	return root
}

func TestConvertDeep(t *testing.T) {
	t.Parallel()
	for _, a := range []atom.Atom{atom.Div, atom.Blockquote, atom.Ul, atom.Li, atom.Em, atom.Table, atom.A} {
		t.Run(a.String(), func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			md, err := Convert(deepTree(100_000, a, "deep text"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(md, "deep text") {
				t.Errorf("leaf text lost: %.80q", md)
			}
			if len(md) > 1<<20 {
				t.Errorf("output %d bytes", len(md))
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}
