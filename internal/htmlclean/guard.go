package htmlclean

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The final guard of OnlyMainContent: the main-content rules must never
// take (almost) all of a page's text. When they leave less than
// minKeptShare of what a reader sees, Clean starts again from a fresh parse
// of the page and keeps the best single block of content (under the page's
// title), else the page
// without its navigation, header and footer, whichever first holds at
// least twice the prose (text outside links) the rules kept; when the page
// holds no prose outside its chrome, the whole page.

// minKeptShare is the share of the page's visible text (non-space bytes)
// below which the rules' result is not trusted. On the WCXB development
// split, a fifth (the share first tried) set good extractions aside on 33
// pages for 18 it mended; below a tenth the fallback mends 8 pages for 2.
const minKeptShare = 0.1

// blockShare: the best single block is the smallest element holding at
// least this share of the prose of the page without its chrome.
const blockShare = 0.6

// Fallback names what Clean kept when the main-content rules kept too
// little of the page.
type Fallback uint8

const (
	// NoFallback: the main-content rules' result was kept.
	NoFallback Fallback = iota
	// FallbackBlock: the best single block of content.
	FallbackBlock
	// FallbackChrome: the page without navigation, header, footer,
	// dialogs and cookie banners.
	FallbackChrome
	// FallbackPage: the whole page (its prose is all in navigation,
	// header or footer).
	FallbackPage
)

// Report says what Clean did beyond its options.
type Report struct {
	// Fallback is set when OnlyMainContent's rules left less than a tenth
	// of the page's visible text and Clean kept something else (only with
	// Options.Reparse).
	Fallback Fallback
}

// visibleLen is the text of root a reader sees with the page: not in
// elements hidden by attribute, inline style or a hiding class, nor in
// modal dialogs (shown on demand). It reads attributes only, not what
// classes say (the rules work that out for the elements they visit).
func visibleLen(root *html.Node) int {
	return visibleLenBy(root, func(n *html.Node) bool { return len(n.Attr) > 0 && (hiddenByAttr(n) || isDialog(n)) })
}

// hiddenAwareLen is visibleLen as the rules read what is hidden, classes
// included (pg.isHidden): it costs a class reading of every element, so it
// runs only where visibleLen's cheaper count already says the rules kept
// too little, to confirm it. visibleLen counts at least as much (it skips
// less), so the two together decide as this count alone would.
func hiddenAwareLen(root *html.Node, pg *page) int {
	return visibleLenBy(root, func(n *html.Node) bool { return pg.isHidden(n) || isDialog(n) })
}

// visibleLenBy is the text of root outside the elements hidden says are
// hidden (and outside what is never shown: scripts, styles, templates).
func visibleLenBy(root *html.Node, hidden func(*html.Node) bool) int {
	t := 0
	for n := root; n != nil; {
		switch n.Type {
		case html.TextNode:
			k, _ := nonSpace(n.Data)
			t += k
		case html.ElementNode:
			if n != root && (skipSubtree(n.DataAtom) || hidden(n)) {
				n = next(n, root, true)
				continue
			}
		}
		n = next(n, root, false)
	}
	return t
}

// hiddenByAttr reports an element hidden by its hidden attribute (not a
// streamed segment's), an inline style or a hiding class.
func hiddenByAttr(n *html.Node) bool {
	for _, a := range n.Attr {
		switch a.Key {
		case "hidden":
			return !isStreamedSegment(n)
		case "style":
			if strings.Contains(a.Val, "none") || strings.Contains(a.Val, "hidden") {
				v := strings.ReplaceAll(strings.ToLower(a.Val), " ", "")
				if strings.Contains(v, "display:none") || strings.Contains(v, "visibility:hidden") {
					return true
				}
			}
		case "class":
			if (strings.Contains(a.Val, "hid") || strings.Contains(a.Val, "none")) && classHides(a.Val) {
				return true
			}
		}
	}
	return false
}

// classHides reports a class value with a display-none utility class and
// no responsive class that shows the element again (as the rules read it,
// without their cache).
func classHides(v string) bool {
	hides, shows := false, false
	for tok := range strings.FieldsSeq(v) {
		h, s := hidingToken(tok)
		hides, shows = hides || h, shows || s
	}
	return hides && !shows
}

// proseLen is the text of root outside links.
func proseLen(root *html.Node) int {
	t := 0
	for n := root; n != nil; {
		switch n.Type {
		case html.TextNode:
			k, _ := nonSpace(n.Data)
			t += k
		case html.ElementNode:
			if n != root && (skipSubtree(n.DataAtom) || n.DataAtom == atom.A) {
				n = next(n, root, true)
				continue
			}
		}
		n = next(n, root, false)
	}
	return t
}

// keptTooLittle reports whether kept text is too small a share of the
// visible text.
func keptTooLittle(kept, visible int) bool {
	return visible > 0 && float64(kept) < minKeptShare*float64(visible)
}

// fallback cleans fresh, a new parse of the page, without the main-content
// rules: it returns the node to render and what it holds, or nil when the
// rules' text (keptText) is not too little of the page's visible text as
// the rules see it (hiddenAwareLen), or when no fallback holds at least
// twice kept, the prose the rules kept.
func fallback(fresh *html.Node, opts Options, pk pageKind, keptText, kept int) (*html.Node, Fallback) {
	root := prepare(fresh, opts)
	if !keptTooLittle(keptText, hiddenAwareLen(root, newPage(pk))) {
		return nil, NoFallback
	}
	whole := textLen(root) > 0
	removePageChrome(root, newPage(kindUnknown))
	rest := proseLen(root)
	if rest == 0 {
		if !whole {
			return nil, NoFallback
		}
		// All of the page's prose is in its chrome: the whole page, from
		// a fresh copy.
		if again, err := opts.Reparse(); err == nil && again != nil {
			return prepare(again, opts), FallbackPage
		}
		return nil, NoFallback
	}
	better := func(t int) bool { return t >= 2*kept }
	if b, t := bestBlock(root, rest); b != root && better(t) {
		// The block, under the page's title when it is outside it.
		title := findElement(root, atom.H1)
		if title != nil && isAncestor(b, title) {
			title = nil
		}
		b.Parent.RemoveChild(b)
		if title != nil {
			title.Parent.RemoveChild(title)
		}
		for root.FirstChild != nil {
			root.RemoveChild(root.FirstChild)
		}
		if title != nil {
			root.AppendChild(title)
		}
		root.AppendChild(b)
		return root, FallbackBlock
	}
	if better(rest) {
		return root, FallbackChrome
	}
	return nil, NoFallback
}

// prepare applies to a fresh parse what Clean does before the main-content
// rules, and returns its body.
func prepare(doc *html.Node, opts Options) *html.Node {
	include, _ := compile(opts.IncludeTags) // both compiled by Clean already
	exclude, _ := compile(opts.ExcludeTags)
	root := findBody(doc)
	expandNoscript(root)
	basic(doc, opts.BaseURL)
	if len(exclude) > 0 {
		removeMatching(root, exclude)
	}
	if len(include) > 0 {
		keepMatching(root, include)
	}
	return root
}

// removePageChrome removes what marks itself as the chrome of the page:
// navigation, header and footer (by tag or role), dialogs, hidden elements
// and cookie banners.
func removePageChrome(root *html.Node, pg *page) {
	var chrome []*html.Node
	for n := root.FirstChild; n != nil; {
		if n.Type == html.ElementNode && (pg.isHidden(n) || isDialog(n) || isPageChrome(n) || isCookieBanner(n)) {
			chrome = append(chrome, n)
			n = next(n, root, true)
			continue
		}
		n = next(n, root, false)
	}
	for _, n := range chrome {
		n.Parent.RemoveChild(n)
	}
}

func isPageChrome(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Nav, atom.Header, atom.Footer, atom.Menu:
		return true
	}
	return attrIs(n, "role", "navigation") || attrIs(n, "role", "banner") || attrIs(n, "role", "contentinfo")
}

// isCookieBanner reports a cookie or consent notice by a word of its class
// or id.
func isCookieBanner(n *html.Node) bool {
	for _, a := range n.Attr {
		if a.Namespace != "" || (a.Key != "class" && a.Key != "id") {
			continue
		}
		for _, tok := range strings.Fields(a.Val) {
			for _, w := range splitWords(tok) {
				switch w {
				case "cookie", "cookies", "consent", "gdpr", "onetrust", "cookiebanner", "cookieconsent":
					return true
				}
			}
		}
	}
	return false
}

// bestBlock is the smallest container under root that holds at least
// blockShare of total, root's prose, and its prose: from root, the child
// holding the most, as long as it holds that much. It stops above a
// paragraph (an element without block children), so that a section's
// heading stays with its text.
func bestBlock(root *html.Node, total int) (*html.Node, int) {
	sizes := proseSizes(root)
	b, bt := root, total
	for total > 0 {
		var best *html.Node
		bestText := 0
		for c := b.FirstChild; c != nil; c = c.NextSibling {
			if t := sizes[c]; c.Type == html.ElementNode && t > bestText && holdsBlocks(c) {
				best, bestText = c, t
			}
		}
		if best == nil || float64(bestText) < blockShare*float64(total) {
			return b, bt
		}
		b, bt = best, bestText
	}
	return b, bt
}

// holdsBlocks reports whether n has a block-level element among its
// children.
func holdsBlocks(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && isBlock(c.DataAtom) {
			return true
		}
	}
	return false
}

// proseSizes is the text outside links (non-space bytes) of every
// element under root, in one post-order walk.
func proseSizes(root *html.Node) map[*html.Node]int {
	sizes := map[*html.Node]int{}
	leave := func(n *html.Node) {
		if n == root || n.Parent == nil {
			return
		}
		if n.Type == html.TextNode {
			k, _ := nonSpace(n.Data)
			sizes[n.Parent] += k
		} else if t := sizes[n]; t > 0 && n.DataAtom != atom.A {
			sizes[n.Parent] += t
		}
	}
	n := root
	for {
		if n.FirstChild != nil && !skipSubtree(n.DataAtom) {
			n = n.FirstChild
			continue
		}
		for {
			leave(n)
			if n == root {
				return sizes
			}
			if n.NextSibling != nil {
				n = n.NextSibling
				break
			}
			n = n.Parent
		}
	}
}
