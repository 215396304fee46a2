package htmlclean

import (
	"bytes"
	"strings"

	"github.com/firegate/firegate/internal/htmlattr"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// minDuplicateText is the length (non-space bytes) from which a block that
// repeats an earlier block word for word is taken for a copy.
const minDuplicateText = 40

// minProductDuplicate is minDuplicateText on a product page, whose name and
// price are written again in a sticky bar or a gallery, and on a card
// grid's page (a shop's promotion lines in a mobile and a desktop copy).
const minProductDuplicate = 16

// removeDuplicateBlocks removes the leaf blocks (blocks without a block
// inside) whose text repeats an earlier leaf block's: the copies of a
// carousel's slides, and the mobile and desktop versions of the same
// section. Table cells are left alone (a table keeps its shape), and so are
// quotes, tab panels and the card grid. On a product page, and on a page
// whose content is a card grid, a shorter block counts
// (minProductDuplicate); elsewhere a plain paragraph of the content's body
// (the anchor's article or main) that repeats another one stays, unless
// the copy goes on with the blocks that followed the first (a copied
// section): a text may say a thing twice, a page's copies come in runs.
func removeDuplicateBlocks(root, anchor, grid *html.Node, pg *page) {
	pk := pg.kind
	min := minDuplicateText
	if pk == kindProduct || grid != nil {
		min = minProductDuplicate
	}
	removeReplyTitles(root)
	type leaf struct {
		n    *html.Node
		orig int // index of the first leaf with the same text, or -1
	}
	seen := map[string]int{}
	var leaves []leaf
	for n := root; n != nil; {
		if n.Type == html.ElementNode && (n == grid || pg.isTabPanel(n)) {
			// A quote repeats on purpose; tab panels repeat each
			// other's steps, the cards of a grid each other's notes.
			n = next(n, root, true)
			continue
		}
		if n.Type != html.ElementNode || !isBlock(n.DataAtom) {
			n = next(n, root, false)
			continue
		}
		switch n.DataAtom {
		case atom.Table, atom.Tr, atom.Td, atom.Th, atom.Pre:
			n = next(n, root, true)
			continue
		}
		if hasBlockChild(n) {
			n = next(n, root, false)
			continue
		}
		// The collapsed text has no more non-space bytes than the text
		// under n: a short block is not worth building it.
		if pg.textLen(n) < min {
			n = next(n, root, true)
			continue
		}
		t := strings.Join(strings.Fields(textOf(n)), " ")
		if nonSpaceLen(t) >= min {
			o, ok := seen[t]
			if !ok {
				o = -1
				seen[t] = len(leaves)
			}
			leaves = append(leaves, leaf{n, o})
		}
		n = next(n, root, true)
	}
	var dups []*html.Node
	keepRepeats := pk != kindProduct && grid == nil
	body := anchor
	if body == nil {
		body = root // paragraphs straight in the body
	}
	for p := anchor; p != nil && p != root; p = p.Parent {
		if p.Type == html.ElementNode && isContentElement(p) {
			body = p
			break
		}
	}
	for i, l := range leaves {
		if l.orig < 0 {
			continue
		}
		// A paragraph written again as a paragraph is the text's own
		// repetition (a refrain, a pasted placeholder) unless it is part
		// of a copied run: the block before or after it copies the
		// block before or after its first copy (a section given twice,
		// for mobile and desktop).
		if keepRepeats && isProseCopy(l.n, body) && isProseCopy(leaves[l.orig].n, body) &&
			!(i > 0 && leaves[i-1].orig >= 0 && leaves[i-1].orig == l.orig-1) &&
			!(i+1 < len(leaves) && leaves[i+1].orig >= 0 && leaves[i+1].orig == l.orig+1) {
			continue
		}
		dups = append(dups, l.n)
	}
	for _, d := range dups {
		if d.Parent != nil {
			d.Parent.RemoveChild(d)
		}
	}
}

// hasBlockChild reports whether n has a block-level element among its
// descendants.
func hasBlockChild(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = next(c, n, false) {
		if c.Type == html.ElementNode && isBlock(c.DataAtom) {
			return true
		}
	}
	return false
}

// maxReplyTitle bounds the text of a forum post's subject line.
const maxReplyTitle = 160

// removeReplyTitles removes the subject lines of a thread's replies ("Re:
// <the thread's title>", in a leaf block) when two or more repeat: they
// repeat the title, not the posts.
func removeReplyTitles(root *html.Node) {
	replies := map[string][]*html.Node{}
	var rawBuf, lineBuf [256]byte
	for n := root; n != nil; {
		if n.Type != html.ElementNode || !isBlock(n.DataAtom) {
			n = next(n, root, false)
			continue
		}
		// shortText looks at 32 nodes at most, so hasBlockChild after it
		// does too.
		raw, ok := appendShortText(rawBuf[:0], n, maxReplyTitle)
		if !ok || hasBlockChild(n) {
			n = next(n, root, false)
			continue
		}
		if t := appendLine(lineBuf[:0], raw); len(t) > 4 && bytes.HasPrefix(t, []byte("re:")) {
			replies[string(t)] = append(replies[string(t)], n)
		}
		n = next(n, root, true)
	}
	for _, r := range replies {
		if len(r) < 2 {
			continue
		}
		for _, d := range r {
			if d.Parent != nil {
				d.Parent.RemoveChild(d)
			}
		}
	}
}

// isProseCopy reports a paragraph of the body's own text (a <p>, or a <div>
// of text, without class or id), not quoted: a
// copy of which the text may give again (a pull quote or a reply's quote
// repeats on purpose, and is not kept twice).
func isProseCopy(n, body *html.Node) bool {
	if n.DataAtom != atom.P && n.DataAtom != atom.Div || hasAttr(n, "class") || hasAttr(n, "id") {
		// A paragraph with a class of its own is a part of the page
		// (a summary, a standfirst) more than of the text.
		return false
	}
	if n.Parent != body && !hasOtherText(n) {
		// Alone in its wrapper, it is a copy of the wrapper (a
		// carousel's cloned slide).
		return false
	}
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && (p.DataAtom == atom.Blockquote || p.DataAtom == atom.Aside || p.DataAtom == atom.Figure) {
			return false
		}
		if p == body {
			return true
		}
	}
	return false
}

func hasAttr(n *html.Node, key string) bool {
	_, ok := htmlattr.Lookup(n, key)
	return ok
}

// hasOtherText reports whether n's siblings hold text.
func hasOtherText(n *html.Node) bool {
	for c := n.Parent.FirstChild; c != nil; c = c.NextSibling {
		if c == n {
			continue
		}
		if c.Type == html.TextNode && strings.TrimSpace(c.Data) != "" || c.Type == html.ElementNode && textSize(c) > 0 {
			return true
		}
	}
	return false
}
