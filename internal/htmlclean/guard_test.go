package htmlclean

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// cleanGuarded runs Clean with the final guard on page.
func cleanGuarded(t *testing.T, page string) (string, Report) {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	out, rep, err := CleanReport(doc, Options{OnlyMainContent: true, Reparse: func() (*html.Node, error) {
		return html.Parse(strings.NewReader(page))
	}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := html.Render(&b, out); err != nil {
		t.Fatal(err)
	}
	return b.String(), rep
}

// megaNav is a long navigation menu, as large shops and news sites have.
func megaNav() string {
	var b strings.Builder
	b.WriteString(`<header><nav><ul>`)
	for i := 0; i < 60; i++ {
		b.WriteString(`<li><a href="/section">Section of the site number ` + strings.Repeat("x", i%5) + `</a></li>`)
	}
	b.WriteString(`</ul></nav></header>`)
	return b.String()
}

const guardProse = `<p>The mill was built in 1790 on the site of an older one, and ground corn for the village until 1952, when the last miller, Arthur Pike, retired.</p>
<p>The wheel was restored by volunteers in the nineteen-nineties and turns again on open days, driving the original stones through wooden gears.</p>
<p>Visitors can see flour milled, buy a bag of it in the shop, and walk the mill race to the weir, where kingfishers nest in the bank.</p>`

// misfiledPage has its text in a block whose class the rules take for
// comments, beside a short introduction.
func misfiledPage() string {
	return `<html><body>` + megaNav() + `<main><h1>Pike's Mill</h1><p>A working watermill on the River Test, open to visitors on summer weekends and bank holidays.</p></main>` +
		`<div class="comments-wrapper"><h2>History</h2>` + guardProse + guardProse + `</div><footer><p>Friends of Pike's Mill, registered charity</p></footer></body></html>`
}

// finderPage is an everyday page of the scrape engine's tests whose
// content the rules lose: its wrapper's id says "related".
func finderPage(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "scrape", "testdata", "everyday", "finder.html"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFallbackBlock: the fallback keeps the best single block of a fresh
// parse, with its heading, without the page's chrome.
func TestFallbackBlock(t *testing.T) {
	t.Parallel()
	doc, err := html.Parse(strings.NewReader(misfiledPage()))
	if err != nil {
		t.Fatal(err)
	}
	out, fb := fallback(doc, Options{OnlyMainContent: true}, kindUnknown, 0, 60)
	if fb != FallbackBlock || out == nil {
		t.Fatalf("fallback %v", fb)
	}
	text := textOf(out)
	for _, want := range []string{"History", "Arthur Pike", "wooden gears", "kingfishers"} {
		if !strings.Contains(text, want) {
			t.Errorf("lost %q: %s", want, text)
		}
	}
	for _, gone := range []string{"Section of the site", "registered charity"} {
		if strings.Contains(text, gone) {
			t.Errorf("kept %q: %s", gone, text)
		}
	}
	// What the rules kept was more than half of it: no fallback.
	doc, _ = html.Parse(strings.NewReader(misfiledPage()))
	if out, fb := fallback(doc, Options{OnlyMainContent: true}, kindUnknown, 0, 1000); fb != NoFallback || out != nil {
		t.Errorf("fallback %v for a result the block does not double", fb)
	}
}

// TestGuardFallsBack: the rules keep the finder page's title and
// summary, under a tenth of its text; the guard returns its steps under
// the title.
func TestGuardFallsBack(t *testing.T) {
	t.Parallel()
	out, rep := cleanGuarded(t, finderPage(t))
	if rep.Fallback != FallbackBlock {
		t.Errorf("fallback %v, want FallbackBlock:\n%s", rep.Fallback, out)
	}
	for _, want := range []string{"Find legal help", "Tell us where you live", "free and confidential"} {
		if !strings.Contains(out, want) {
			t.Errorf("lost %q:\n%s", want, out)
		}
	}
}

// TestFallbackWholePage: when all of the page's prose is in its chrome,
// the fallback is the whole page.
func TestFallbackWholePage(t *testing.T) {
	t.Parallel()
	page := `<html><body><header><nav><a href="/">Home</a> <a href="/visit">Visit</a></nav>
<p>Open every day from ten until four, except on Christmas Day and Boxing Day.</p></header>
<main><ul><li><a href="/roses">Old roses</a></li><li><a href="/herbs">Herb beds</a></li></ul></main>
<footer><p>The walled garden is cared for by the parish council.</p></footer></body></html>`
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	out, fb := fallback(doc, Options{OnlyMainContent: true, Reparse: func() (*html.Node, error) {
		return html.Parse(strings.NewReader(page))
	}}, kindUnknown, 0, 0)
	if fb != FallbackPage || out == nil {
		t.Fatalf("fallback %v", fb)
	}
	if text := textOf(out); !strings.Contains(text, "from ten until four") || !strings.Contains(text, "parish council") || !strings.Contains(text, "Old roses") {
		t.Errorf("lost the text: %s", text)
	}
}

func TestGuardKeepsGoodExtraction(t *testing.T) {
	t.Parallel()
	for name, page := range map[string]string{
		"article": `<html><body>` + megaNav() + `<article><h1>Pike's Mill</h1>` + guardProse + `</article><footer>Friends of the mill</footer></body></html>`,
		// The content is a small part of the page, but nothing holds
		// more prose than what the rules kept.
		"short product": `<html><body>` + megaNav() + `<main><h1>Oak stool</h1><p>Hand-turned oak stool, 45 cm high, oiled.</p><p>£85</p></main>` +
			`<footer><ul><li><a href="/a">Delivery</a></li><li><a href="/b">Returns</a></li><li><a href="/c">Contact</a></li></ul></footer></body></html>`,
	} {
		out, rep := cleanGuarded(t, page)
		if rep.Fallback != NoFallback {
			t.Errorf("%s: fallback %v:\n%s", name, rep.Fallback, out)
		}
	}
}

// TestGuardNeedsReparse: without Options.Reparse, Clean keeps the rules'
// result however little it is.
func TestGuardNeedsReparse(t *testing.T) {
	t.Parallel()
	doc, _ := html.Parse(strings.NewReader(finderPage(t)))
	out, rep, err := CleanReport(doc, Options{OnlyMainContent: true})
	if err != nil || rep.Fallback != NoFallback {
		t.Fatalf("fallback %v, err %v", rep.Fallback, err)
	}
	if strings.Contains(textOf(out), "free and confidential") {
		t.Error("the steps came back without the guard")
	}
}

// TestFallbackDeepTree: the fallback's block search stays linear on deep
// nesting (deeper than the parser builds).
func TestFallbackDeepTree(t *testing.T) {
	t.Parallel()
	doc, err := html.Parse(strings.NewReader(misfiledPage()))
	if err != nil {
		t.Fatal(err)
	}
	var block *html.Node
	for n := doc; n != nil; n = next(n, doc, false) {
		if n.Type == html.ElementNode && attrIs(n, "class", "comments-wrapper") {
			block = n
			break
		}
	}
	parent, after := block.Parent, block.NextSibling
	parent.RemoveChild(block)
	outer := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	inner := outer
	for i := 1; i < 100000; i++ {
		d := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
		inner.AppendChild(d)
		inner = d
	}
	inner.AppendChild(block)
	parent.InsertBefore(outer, after)
	out, fb := fallback(doc, Options{OnlyMainContent: true}, kindUnknown, 0, 60)
	if fb != FallbackBlock || !strings.Contains(textOf(out), "kingfishers") {
		t.Errorf("fallback %v", fb)
	}
}
