package htmlclean

import (
	"bytes"
	"strings"

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
// (minProductDuplicate).
func removeDuplicateBlocks(root, grid *html.Node, pg *page) {
	pk := pg.kind
	min := minDuplicateText
	if pk == kindProduct || grid != nil {
		min = minProductDuplicate
	}
	removeReplyTitles(root)
	seen := map[string]bool{}
	var dups []*html.Node
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
		if textLen(n) < min {
			n = next(n, root, true)
			continue
		}
		t := strings.Join(strings.Fields(textOf(n)), " ")
		if nonSpaceLen(t) >= min {
			if seen[t] {
				dups = append(dups, n)
			}
			seen[t] = true
		}
		n = next(n, root, true)
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
