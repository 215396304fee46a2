package markdown

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// benchDoc is a page of about size bytes mixing what the converter meets
// on real pages: article paragraphs with inline markup and links, nested
// lists, a data table, a code block and cards (links holding a heading,
// a summary and an image).
func benchDoc(tb testing.TB, size int) *html.Node {
	tb.Helper()
	var b strings.Builder
	b.WriteString("<html><body><main>")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `<h2>Section %d</h2><p>Some <em>text</em> with a <a href="/p/%d">link</a>, <code>code()</code> and <strong>bold words</strong> that run on for a while, as prose does.</p>`, i, i)
		fmt.Fprintf(&b, `<ul><li>First item %d<ul><li>nested <a href="/n/%d">one</a></li><li>nested two</li></ul></li><li>Second item</li></ul>`, i, i)
		fmt.Fprintf(&b, `<table><tr><th>Name</th><th>Value</th></tr><tr><td>a%d</td><td>1</td></tr><tr><td>b</td><td>2</td></tr></table>`, i)
		fmt.Fprintf(&b, "<pre><code class=\"language-go\">func f%d() {\n\treturn\n}</code></pre>", i)
		fmt.Fprintf(&b, `<div class="cards"><a href="/c/%d"><img src="/i/%d.png" alt="c"><h3>Card %d</h3><p>A short summary of the card.</p><span>$30</span></a></div>`, i, i, i)
	}
	b.WriteString("</main></body></html>")
	doc, err := html.Parse(strings.NewReader(b.String()))
	if err != nil {
		tb.Fatal(err)
	}
	return doc
}

func BenchmarkConvert(b *testing.B) {
	for _, size := range []int{20 << 10, 100 << 10} {
		doc := benchDoc(b, size)
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, err := Convert(doc, Options{RemoveBase64Images: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
