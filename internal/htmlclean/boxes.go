package htmlclean

import (
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxBoxTitle bounds the text of a box's title that is left alone when the
// box's links go: "More on this", "Videos", "À lire aussi", "Claves".
const maxBoxTitle = 80

// removeWithTitles removes the elements pruning found (removals) and then
// the titles they leave alone, in any language: a box (a div, a section,
// a list's wrapper) whose remaining text is only a short title without
// links or images, when at least twice as much link text went from it (its
// list of related stories, its video playlist); and a heading whose
// section was only such links (the next heading, or nothing, after them). Boxes holding
// the anchor, content elements and page titles (an h1, a title block)
// stay.
func removeWithTitles(root, anchor *html.Node, removals []*html.Node, titles bool) {
	type gone struct {
		n, parent, prev, next *html.Node
	}
	var gones []gone
	for _, n := range removals {
		if n.Parent == nil {
			continue // inside another removal
		}
		if titles && n.Type == html.ElementNode && isBlock(n.DataAtom) {
			gones = append(gones, gone{n: n, parent: n.Parent, prev: textSibling(n, false), next: textSibling(n, true)})
		}
		n.Parent.RemoveChild(n)
	}
	if len(gones) == 0 {
		return
	}
	holdsAnchor := map[*html.Node]bool{}
	for p := anchor; p != nil; p = p.Parent {
		holdsAnchor[p] = true
	}
	// The link text that went from a parent, counted when a title is
	// in question.
	byParent := map[*html.Node][]*html.Node{}
	for _, g := range gones {
		byParent[g.parent] = append(byParent[g.parent], g.n)
	}
	removedLinks := func(p *html.Node) int {
		k := 0
		for _, n := range byParent[p] {
			k += linkTextLen(n)
		}
		return k
	}
	for _, g := range gones {
		if g.prev == nil {
			continue // no title right before what went
		}
		if p := g.parent; p != root && p.Parent != nil && !holdsAnchor[p] && !isContentElement(p) && isAncestor(root, p) {
			rest, short := textUpTo(p, maxBoxTitle)
			t, _ := textUpTo(g.prev, maxBoxTitle)
			if short && rest > 0 && t == rest && g.prev.Parent == p && bareTitle(p) && removedLinks(p) >= 2*rest {
				// The box's text is only the title over what went.
				p.Parent.RemoveChild(p)
				continue
			}
		}
		if h := g.prev; h != nil && h.Parent != nil && isHeading(h.DataAtom) && h.DataAtom != atom.H1 &&
			(g.next == nil || g.next.Parent == nil || isHeading(g.next.DataAtom) && headingLevel(g.next.DataAtom) <= headingLevel(h.DataAtom)) {
			if t, short := textUpTo(h, maxBoxTitle); short && bareTitle(h) && !holdsAnchor[h] && linkTextLen(g.n) >= 2*t {
				h.Parent.RemoveChild(h)
			}
		}
	}
}

// bareTitle reports a short block of text alone: no links, images or
// media, no page title (an h1 or a title block).
func bareTitle(n *html.Node) bool {
	if isTitleBlock(n) {
		return false
	}
	for c := n; c != nil; c = next(c, n, false) {
		if c.Type != html.ElementNode {
			continue
		}
		switch c.DataAtom {
		case atom.A, atom.Img, atom.Picture, atom.Video, atom.Audio, atom.Iframe, atom.Table, atom.H1, atom.Form:
			return false
		}
	}
	return true
}

// textSibling returns the nearest element sibling of n before it (after
// it, with after) that holds text, skipping blank text and comments; nil
// when there is none, or when text stands between.
func textSibling(n *html.Node, after bool) *html.Node {
	s := n.PrevSibling
	if after {
		s = n.NextSibling
	}
	for s != nil {
		switch {
		case s.Type == html.ElementNode && firstText(s) != nil:
			return s
		case s.Type == html.TextNode && nonSpaceLen(s.Data) > 0:
			return nil
		}
		if after {
			s = s.NextSibling
		} else {
			s = s.PrevSibling
		}
	}
	return nil
}

// textUpTo is the non-space text under n when it is at most limit bytes;
// it stops counting past the limit (short false).
func textUpTo(n *html.Node, limit int) (int, bool) {
	t := 0
	for c := n; c != nil; c = next(c, n, false) {
		if c.Type == html.TextNode {
			if t += nonSpaceLen(c.Data); t > limit {
				return t, false
			}
		}
	}
	return t, true
}
