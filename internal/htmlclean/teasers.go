package htmlclean

import (
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

const (
	// minTeasers is the number of alike cards that make a rail of
	// teasers.
	minTeasers = 3
	// maxTeaserText bounds the text of one teaser card: a kicker, a
	// headline, a line of summary, a date.
	maxTeaserText = 300
	// minTeaserHeadline is the shortest headline link of a teaser.
	minTeaserHeadline = 15
	// maxTeaserNodes bounds the nodes of one teaser card.
	maxTeaserNodes = 200
)

// findTeaserRails returns the rails of teaser cards around an article, in
// any language: containers of at least minTeasers alike children (same
// tag and first class) that are all teasers (teaserCard), holding less than
// half the anchor's text and not holding the anchor: related stories,
// "more from", a video playlist, a most-read list with pictures.
func findTeaserRails(root, anchor *html.Node, pg *page) []*html.Node {
	if anchor == nil {
		return nil
	}
	anchorText := pg.textLen(anchor)
	var rails []*html.Node
	examined := 0
	for n := root; n != nil; {
		if n.Type != html.ElementNode || n == root {
			n = next(n, root, false)
			continue
		}
		if !firstIsTeaser(n) {
			n = next(n, root, false)
			continue
		}
		sig, count := commonChild(n, minTeasers)
		if count < minTeasers || holdsNode(n, anchor) {
			n = next(n, root, false)
			continue
		}
		if examined++; examined > maxCardGroups {
			break
		}
		cards, teasers, text := 0, 0, 0
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode || signature(c) != sig {
				continue
			}
			cards++
			if t, ok := teaserCard(c); ok {
				teasers++
				text += t
			}
		}
		if teasers == cards && 2*text < anchorText {
			rails = append(rails, n)
			n = next(n, root, true)
			continue
		}
		n = next(n, root, false)
	}
	return rails
}

// teaserCard reports a card that points to another story (one with a
// price is a product's), and its text: at
// most maxTeaserText of text, with a headline link of at least
// minTeaserHeadline that is a third of the card or more, in a heading or
// beside a picture.
func teaserCard(c *html.Node) (int, bool) {
	var t teaser
	if !t.walk(c, nil, false) {
		return 0, false
	}
	if t.headline < minTeaserHeadline || 3*t.headline < t.text || !t.image && !t.inHeading {
		return 0, false
	}
	// The price is read across the card's texts ("$<!-- -->30").
	return t.text, !price.Match(t.buf)
}

// teaser is what teaserCard gathers in one walk of a card.
type teaser struct {
	text, headline, nodes int
	image, inHeading      bool
	buf                   []byte // the card's text
}

// walk adds n's subtree; linkText, when n is in a link, counts that link's
// text; heading: n is in a heading. It reports false as soon as the card is too big to
// be a teaser.
func (t *teaser) walk(n *html.Node, linkText *int, heading bool) bool {
	if t.nodes++; t.nodes > maxTeaserNodes {
		return false
	}
	switch n.Type {
	case html.TextNode:
		k := nonSpaceLen(n.Data)
		if t.text += k; t.text > maxTeaserText {
			return false
		}
		if linkText != nil {
			*linkText += k
		}
		t.buf = append(t.buf, n.Data...)
		return true
	case html.ElementNode:
	default:
		return true
	}
	switch n.DataAtom {
	case atom.Img, atom.Picture:
		t.image = true
	}
	if isHeading(n.DataAtom) {
		heading = true
	}
	if n.DataAtom == atom.A {
		k, hd := 0, false
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if !t.walk(c, &k, heading) {
				return false
			}
			hd = hd || c.Type == html.ElementNode && isHeading(c.DataAtom)
		}
		if linkText != nil {
			*linkText += k
		}
		if k > t.headline {
			t.headline, t.inHeading = k, heading || hd
		}
		return true
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if !t.walk(c, linkText, heading) {
			return false
		}
	}
	return true
}

// firstIsTeaser reports whether n has minTeasers element children or more,
// the first of them a teaser: a cheap test before the children are
// compared.
func firstIsTeaser(n *html.Node) bool {
	var first *html.Node
	kids := 0
	for c := n.FirstChild; c != nil && kids < minTeasers; c = c.NextSibling {
		if c.Type == html.ElementNode {
			if kids++; first == nil {
				first = c
			}
		}
	}
	if kids < minTeasers {
		return false
	}
	_, ok := teaserCard(first)
	return ok
}

// minColumnLevels is the number of levels between an article's anchor and
// the element it shares with a card grid from which the two are in
// different columns of the page (the article's and a rail's).
const minColumnLevels = 4

// gridWins reports whether a card grid with gridText of text is the page's
// content rather than the anchor's rest of text: when the grid holds half
// as much; on an article (by its markup) whose grid stands in another
// column than the anchor, only when it holds twice as much: beside an
// article, grids are rails of other stories.
func gridWins(pg *page, anchor, grid *html.Node, gridText, rest int) bool {
	if pg.kind == kindArticle && levelsApart(anchor, grid) >= minColumnLevels {
		return gridText >= cardGridShare*rest
	}
	return gridText*cardGridShare >= rest
}

// levelsApart is the number of levels from a up to the nearest element
// that holds b.
func levelsApart(a, b *html.Node) int {
	k := 0
	for p := a; p != nil; p = p.Parent {
		if isAncestor(p, b) {
			return k
		}
		k++
	}
	return k
}
