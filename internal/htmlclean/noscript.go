package htmlclean

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// minNoscriptText is the non-space text a <noscript> fallback must hold to
// stand in for a page whose visible body is empty.
const minNoscriptText = 200

// expandNoscript makes a script-only page readable the way a client without
// JavaScript sees it. The parser keeps a <noscript>'s content as raw text (it
// parses as a browser with scripting does); when the rest of the body holds
// less text than the <noscript> fallbacks, each fallback with at least
// minNoscriptText of text is parsed and put in its place. Pages that render
// their content server-side are left alone.
func expandNoscript(root *html.Node) {
	var nos []*html.Node
	scriptlessText(root, func(n *html.Node) { nos = append(nos, n) })
	if len(nos) == 0 {
		return
	}
	type fallback struct {
		at    *html.Node
		nodes []*html.Node
	}
	var fbs []fallback
	hidden := 0
	for _, ns := range nos {
		raw := ns.FirstChild
		if raw == nil || raw.Type != html.TextNode || raw.NextSibling != nil || !strings.Contains(raw.Data, "<") {
			continue
		}
		ctx := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
		nodes, err := html.ParseFragment(strings.NewReader(raw.Data), ctx)
		if err != nil {
			continue
		}
		t := 0
		for _, c := range nodes {
			t += textSize(c)
		}
		if t >= minNoscriptText {
			fbs = append(fbs, fallback{ns, nodes})
			hidden += t
		}
	}
	// The body's own text is counted only when there is a fallback to
	// weigh it against (most noscripts hold a tracking image).
	if hidden == 0 || hidden <= scriptlessText(root, nil) {
		return
	}
	for _, fb := range fbs {
		for _, c := range fb.nodes {
			fb.at.Parent.InsertBefore(c, fb.at)
		}
		fb.at.Parent.RemoveChild(fb.at)
	}
}

// scriptlessText is the non-space text of root outside noscripts, scripts,
// styles, templates, svg and math; each noscript is given to noscript
// (when not nil) instead.
func scriptlessText(root *html.Node, noscript func(*html.Node)) int {
	visible := 0
	for n := root; n != nil; {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Noscript:
				if noscript != nil {
					noscript(n)
				}
				n = next(n, root, true)
				continue
			case atom.Script, atom.Style, atom.Template, atom.Svg, atom.Math:
				n = next(n, root, true)
				continue
			}
		}
		if n.Type == html.TextNode && noscript == nil {
			t, _ := nonSpace(n.Data)
			visible += t
		}
		n = next(n, root, false)
	}
	return visible
}

// textSize is the non-space text of n outside scripts and styles.
func textSize(n *html.Node) int {
	size := 0
	for c := n; c != nil; {
		if c.Type == html.ElementNode && (c.DataAtom == atom.Script || c.DataAtom == atom.Style) {
			c = next(c, n, true)
			continue
		}
		if c.Type == html.TextNode {
			t, _ := nonSpace(c.Data)
			size += t
		}
		c = next(c, n, false)
	}
	return size
}
