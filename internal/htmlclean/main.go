package htmlclean

import (
	"strings"

	"github.com/firegate/firegate/internal/htmlattr"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Main-content extraction works in two linear passes over the body:
//
//  1. score: paragraph-like blocks give points to their parent and
//     grandparent (more for longer text and more commas); the best-scoring
//     container, weighted by link density and class hints, is the anchor of
//     the main content.
//  2. prune: boilerplate is removed by tag, ARIA role, class/id words and
//     link density, except the anchor and its ancestors, which are never
//     removed (so an article inside a <header> or a "sidebar" div survives).
//     Inside the content (article, main, the anchor) link density removes
//     only blocks of links within prose: a listing keeps its link cards.
//
// If pruning would leave (almost) nothing, it is run again without the
// class/id words; if that too leaves nothing, the body is left as it is.
// When the anchor then holds most of the remaining text (an article, a
// documentation page), the blocks around it that hold no prose are removed
// (narrow.go). Last, sections introduced by a boilerplate heading ("Related articles",
// "Comments", ...) are removed (sections.go).

// kind is the verdict on an element at the time it is entered.
type kind uint8

const (
	keep        kind = iota
	remove           // boilerplate; its subtree is skipped
	removeNav        // navigation; also tells an enclosing header it held a nav
	checkHeader      // a header: kept only if it holds a title and no nav
	checkLinks       // a container: removed if made mostly of links
	checkAside       // an aside in the content: removed if mostly links
)

// frame holds the statistics of an open element during a walk.
type frame struct {
	n       *html.Node
	kind    kind
	text    int // non-space bytes of text (images count as imageWeight)
	link    int // part of text inside links
	links   int // number of links
	own     int // non-space bytes of direct text children
	commas  int
	score   float64
	block   bool // has a block-level child
	heading bool // holds an h1/h2
	hadNav  bool // a navigation element was removed inside
	content bool // inside article/main/anchor: link-density pruning is off
	// cld is the link density of the innermost content container (or 1
	// outside any).
	cld float64
	// chrome: inside page chrome (footer, navigation, a dialog).
	chrome bool
}

const (
	// cardGridShare: a grid of cards whose text, times this, is at least
	// the anchor's is kept with it.
	cardGridShare = 2
	imageWeight   = 20
	minParagraph  = 25
	// proseLinkDensity: a content container (article, main, the anchor)
	// whose text is less linked than this holds prose, not a listing.
	proseLinkDensity = 0.3
	// linkBlockDensity: a block of at least three links, with more of its
	// text in links than this, inside prose, is navigation.
	linkBlockDensity = 0.8
)

func isBlock(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Main, atom.Header, atom.Footer,
		atom.Nav, atom.Aside, atom.Ul, atom.Ol, atom.Dl, atom.Li, atom.Table, atom.Tr, atom.Td,
		atom.Th, atom.Pre, atom.Blockquote, atom.Figure, atom.Form, atom.H1, atom.H2, atom.H3,
		atom.H4, atom.H5, atom.H6, atom.Hr, atom.Br, atom.Dd, atom.Dt, atom.Address, atom.Details:
		return true
	}
	return false
}

func skipSubtree(a atom.Atom) bool {
	return a == atom.Svg || a == atom.Math || a == atom.Select || a == atom.Textarea
}

// nonSpace is the number of bytes of s that are not ASCII white space
// (space, \n, \t, \r, \f) and the number of its commas. Every walk counts
// every text with it: longer texts are counted with strings.Count, which
// reads many bytes at a time.
func nonSpace(s string) (n, commas int) {
	if len(s) >= 32 {
		return nonSpaceLong(s)
	}
	return nonSpaceShort(s)
}

// nonSpaceShort is nonSpace of a text shorter than 256 bytes, counted a
// byte at a time from byteCount: the low byte of the sum is n, the rest
// the commas. nonSpace gives it texts under 32 bytes, as does page.text,
// where it is inlined (most texts there are short).
func nonSpaceShort(s string) (n, commas int) {
	sum := 0
	for i := 0; i < len(s); i++ {
		sum += int(byteCount[s[i]])
	}
	return sum & 0xff, sum >> 8
}

// nonSpaceLong is nonSpace of a text of 32 bytes or more.
func nonSpaceLong(s string) (n, commas int) {
	spaces := strings.Count(s, " ") + strings.Count(s, "\n") + strings.Count(s, "\t") +
		strings.Count(s, "\r") + strings.Count(s, "\f")
	return len(s) - spaces, strings.Count(s, ",")
}

// byteCount is what nonSpace adds up for each byte of a short text: 1 for
// a byte that is not white space, 0x101 for a comma (one byte, one
// comma), 0 for white space. One table read and one addition cost fewer
// instructions than the comparisons of a switch.
var byteCount = func() (t [256]uint16) {
	for i := range t {
		t[i] = 1
	}
	for _, c := range []byte{' ', '\n', '\t', '\r', '\f'} {
		t[c] = 0
	}
	t[','] = 0x101
	return t
}()

// walker runs an iterative post-order walk with a frame per open element.
type walker struct {
	pg    *page // counts the texts
	stack []frame
	// enter classifies an element; returning remove skips it.
	enter func(w *walker, n *html.Node) kind
	// exit is called with the closed frame; it reports whether the element
	// is removed, in which case its statistics are not added to the parent.
	exit func(w *walker, f *frame) bool
	// isContent marks elements whose subtree is main content (optional).
	isContent func(n *html.Node) bool
	// containerLD gives the link density of a content container (optional).
	containerLD map[*html.Node]float64
	// isChrome marks page chrome, whose subtree is flagged (optional).
	isChrome func(n *html.Node) bool
}

func (w *walker) top() *frame { return &w.stack[len(w.stack)-1] }

func (w *walker) run(root *html.Node) frame {
	w.stack = append(w.stack[:0], frame{n: root, cld: 1})
	n := root.FirstChild
	for {
		if n != nil {
			switch n.Type {
			case html.TextNode:
				t, c := w.pg.text(n)
				f := w.top()
				f.text += t
				f.own += t
				f.commas += c
				n = n.NextSibling
				continue
			case html.ElementNode:
				if skipSubtree(n.DataAtom) {
					n = n.NextSibling
					continue
				}
				k := w.enter(w, n)
				if k == remove || k == removeNav {
					if k == removeNav {
						w.top().hadNav = true
					}
					n = n.NextSibling
					continue
				}
				content := w.top().content || (w.isContent != nil && w.isContent(n))
				cld := w.top().cld
				if v, ok := w.containerLD[n]; ok {
					cld = v
				}
				chrome := w.top().chrome || (w.isChrome != nil && w.isChrome(n))
				w.stack = append(w.stack, frame{n: n, kind: k, content: content, cld: cld, chrome: chrome})
				n = n.FirstChild
				continue
			default:
				n = n.NextSibling
				continue
			}
		}
		if len(w.stack) == 1 {
			return w.stack[0]
		}
		f := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		switch f.n.DataAtom {
		case atom.A:
			f.link = f.text
			f.links++
		case atom.Img:
			f.text += imageWeight
		case atom.H1, atom.H2:
			f.heading = true
		}
		removed := w.exit(w, &f)
		p := w.top()
		if !removed {
			p.text += f.text
			p.link += f.link
			p.links += f.links
			p.heading = p.heading || f.heading
			if isBlock(f.n.DataAtom) {
				p.block = true
			}
		}
		p.hadNav = p.hadNav || f.hadNav
		n = f.n.NextSibling
	}
}

// paragraphScore is the score a block gives to its ancestors, or 0.
func paragraphScore(f *frame) float64 {
	if f.text < minParagraph {
		return 0
	}
	switch f.n.DataAtom {
	case atom.P, atom.Pre, atom.Td, atom.Blockquote, atom.Dd:
	case atom.Div, atom.Section, atom.Article, atom.Span, atom.Font, atom.Center, atom.Li:
		if f.block || f.own < minParagraph {
			return 0
		}
	default:
		return 0
	}
	s := 1 + float64(f.commas)
	l := float64(f.text) / 100
	if l > 3 {
		l = 3
	}
	return s + l
}

// findAnchor returns the best-scoring content container (or nil), the total
// text of root and the single <main> element, if any.
func findAnchor(root *html.Node, pg *page) (anchor *html.Node, total int, main *html.Node, lds map[*html.Node]float64) {
	var best, anchorLD, bestChrome, chromeLD float64
	var chromeAnchor *html.Node
	lds = map[*html.Node]float64{}
	mains := 0
	w := walker{
		pg:       pg,
		isChrome: isChrome,
		enter: func(w *walker, n *html.Node) kind {
			if n.DataAtom == atom.Main || attrIs(n, "role", "main") {
				mains++
				main = n
			}
			return keep
		},
		exit: func(w *walker, f *frame) bool {
			if s := paragraphScore(f); s > 0 {
				d := len(w.stack)
				w.stack[d-1].score += s
				if d >= 2 {
					w.stack[d-2].score += s / 2
				}
				if d >= 3 {
					w.stack[d-3].score += s / 6
				}
			}
			if isContentElement(f.n) {
				lds[f.n] = ld(f)
			}
			if f.score > 0 {
				adj := f.score + pg.classWeight(f.n)
				if f.text > 0 {
					adj *= 1 - float64(f.link)/float64(f.text)
				}
				switch {
				case f.chrome && adj > bestChrome:
					bestChrome, chromeAnchor, chromeLD = adj, f.n, ld(f)
				case !f.chrome && adj > best:
					best, anchor, anchorLD = adj, f.n, ld(f)
				}
			}
			return false
		},
	}
	r := w.run(root)
	if mains != 1 {
		main = nil
	}
	if anchor == nil {
		// Text only in the chrome (a page that is all footer, say).
		anchor, anchorLD = chromeAnchor, chromeLD
	}
	if anchor != nil {
		lds[anchor] = anchorLD
	}
	return anchor, r.text, main, lds
}

// ld is the link density of a closed frame.
func ld(f *frame) float64 {
	if f.text == 0 {
		return 0
	}
	return float64(f.link) / float64(f.text)
}

func mainContent(root *html.Node, pg *page) {
	pk := pg.kind
	anchor, total, main, lds := findAnchor(root, pg)
	if pk != kindProduct {
		// (A product page's e-mail box, "Notify me when back in stock",
		// sits among its options.)
		removeSignupBoxes(root, anchor)
	}
	protected := map[*html.Node]bool{}
	if anchor != nil {
		for p := anchor; p != nil && p != root; p = p.Parent {
			protected[p] = true
		}
	}
	grid, gridText := findCardGrid(root, pg)
	var cards map[*html.Node]bool
	if grid != nil && (anchor == nil || gridWins(pg, anchor, grid, gridText, anchorRest(pg, anchor, grid))) {
		// The page is a grid of cards (products, results, listings)
		// more than the prose around it: the grid is content, and
		// the link density of its cards does not remove them.
		for p := grid; p != nil && p != root; p = p.Parent {
			protected[p] = true
		}
		cards = gridCards(grid, pg)
		st := proseStats{pg: pg}
		st.walk(grid, false, 0)
		lds[grid] = float64(st.link) / float64(max(st.text, 1))
	} else {
		grid = nil
	}
	removals, remaining := prune(root, anchor, grid, protected, cards, lds, pg, false)
	if nearEmpty(remaining, total) {
		// A page's modal windows (its privacy policy and terms, opened
		// from the footer) can hold far more text than the page shows:
		// they do not count.
		total = max(total-dialogText(root), 0)
	}
	if nearEmpty(remaining, total) {
		// The class words removed (almost) everything: some sites mark
		// their content with words that usually mean boilerplate. Prune
		// again by tags, roles and link density only.
		removals, remaining = prune(root, anchor, grid, protected, cards, lds, pg, true)
		if nearEmpty(remaining, total) {
			// Keep the whole body but its chrome.
			removeChrome(root, protected, pg)
			return
		}
	}
	// (A product's or a card grid's boxes keep their labels: "Maker:",
	// a price.)
	articleLike := pk != kindProduct && grid == nil
	removeWithTitles(root, anchor, removals, articleLike)
	if articleLike {
		removeWithTitles(root, anchor, findTeaserRails(root, anchor, pg), true)
	}
	if main != nil && (anchor == nil || isAncestor(main, anchor)) && (grid == nil || isAncestor(main, grid)) && isAncestor(root, main) {
		narrow(root, main)
	}
	if anchor != nil && (grid == nil || isAncestor(anchor, grid)) && isAncestor(root, anchor) {
		a := pg.textLen(anchor)
		r := a + pg.textLenBut(root, anchor)
		if r > 0 && a < r && float64(a) >= anchorShare*float64(r) {
			narrowAround(root, anchor, pg)
		}
	}
	if pk == kindProduct && isAncestor(root, anchor) {
		removeProductCards(root, anchor, grid)
	}
	removeNotices(root, anchor, pg)
	removeBoilerplateSections(root, anchor, pk)
	removeAuthorBios(root, pg)
	removeDuplicateBlocks(root, anchor, grid, pg)
}

// anchorRest is the anchor's text that is not the grid's: a grid inside
// the anchor (a shop's <main> holding its filters, banner and products) is
// weighed against the rest of the anchor, not against itself.
func anchorRest(pg *page, anchor, grid *html.Node) int {
	return pg.textLenBut(anchor, grid)
}

func nearEmpty(remaining, total int) bool {
	return remaining*20 < total || (remaining < 20 && remaining < total)
}

// prune finds the boilerplate under root without removing it: the elements
// to remove and the text that would remain. Elements in protected are never
// removed. With mild, class and id words are ignored; they are ignored on
// the elements in cards too.
func prune(root, anchor, grid *html.Node, protected, cards map[*html.Node]bool, lds map[*html.Node]float64, pg *page, mild bool) ([]*html.Node, int) {
	var removals []*html.Node
	w := walker{
		pg:          pg,
		containerLD: lds,
		isContent:   func(n *html.Node) bool { return n == anchor || n == grid || isContentElement(n) },
		enter: func(w *walker, n *html.Node) kind {
			if protected[n] {
				return keep
			}
			e := pg.elem(n)
			k := pg.classify(n, e, w.top().content, mild || cards[n])
			if k != remove && k != removeNav && pg.kind == kindProduct && !mild && e.productBoilerplate {
				k = remove
			}
			if k == remove || k == removeNav {
				removals = append(removals, n)
			}
			return k
		},
		exit: func(w *walker, f *frame) bool {
			var rm bool
			switch f.kind {
			case checkHeader:
				rm = f.hadNav || !f.heading || f.link*2 > f.text
			case checkAside:
				// A box beside the text, in any language ("Read
				// also", "À lire aussi"): its links lead away.
				rm = f.links > 0 && f.link*2 > f.text && f.n != anchor
			case checkLinks:
				if !f.content && f.text > 0 {
					rm = (f.links >= 2 && f.link*2 > f.text) ||
						(f.links == 1 && f.link*10 > f.text*9 && f.text < 40)
				} else if f.content && f.text > 0 && f.cld < proseLinkDensity {
					// Inside prose, a block made of links (related
					// stories, a table of contents, a tag list) is not
					// part of it; a listing's link cards are kept.
					rm = f.links >= 3 && float64(f.link) > linkBlockDensity*float64(f.text) && f.n != anchor
				}
			}
			if rm {
				removals = append(removals, f.n)
			}
			return rm
		},
	}
	return removals, w.run(root).text
}

func isContentElement(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Article, atom.Main:
		return true
	}
	return attrIs(n, "role", "main") || attrIs(n, "itemprop", "articleBody")
}

func isAncestor(a, n *html.Node) bool {
	for p := n; p != nil; p = p.Parent {
		if p == a {
			return true
		}
	}
	return false
}

// narrow keeps only main (and a page title h1 outside it when main has none)
// under root.
func narrow(root, main *html.Node) {
	var title *html.Node
	if findElement(main, atom.H1) == nil {
		if h := findElement(root, atom.H1); h != nil && !isAncestor(main, h) {
			title = h
		}
	}
	if title != nil {
		title.Parent.RemoveChild(title)
	}
	main.Parent.RemoveChild(main)
	for root.FirstChild != nil {
		root.RemoveChild(root.FirstChild)
	}
	if title != nil {
		root.AppendChild(title)
	}
	root.AppendChild(main)
}

func findElement(root *html.Node, a atom.Atom) *html.Node {
	for n := root; n != nil; n = next(n, root, false) {
		if n.Type == html.ElementNode && n.DataAtom == a {
			return n
		}
	}
	return nil
}

func attrIs(n *html.Node, key, val string) bool {
	v, ok := htmlattr.Lookup(n, key)
	return ok && strings.EqualFold(strings.TrimSpace(v), val)
}

// classify decides what to do with an element on entry; e is pg.elem(n).
func (pg *page) classify(n *html.Node, e valueFacts, inContent, mild bool) kind {
	pk := pg.kind
	tabPanel := isTabPanelOf(n, e)
	if isHiddenOf(n, e, tabPanel) {
		return remove
	}
	switch n.DataAtom {
	case atom.Nav, atom.Menu:
		return removeNav
	case atom.Dialog, atom.Button, atom.Input, atom.Select, atom.Textarea, atom.Footer:
		return remove
	case atom.A:
		if isSkipLink(n) || isCTALink(n) || pk.isThread() && (isPostNumberLink(n) || isPostControlLink(n)) {
			return remove
		}
	case atom.Aside:
		if !inContent {
			return remove
		}
	case atom.Header:
		if !inContent {
			return checkHeader
		}
	}
	if role, ok := htmlattr.Lookup(n, "role"); ok {
		switch strings.ToLower(strings.TrimSpace(role)) {
		case "navigation", "menu", "menubar":
			return removeNav
		case "search", "dialog", "alertdialog", "complementary", "contentinfo", "toolbar":
			return remove
		case "banner":
			if !inContent {
				return checkHeader
			}
		}
	}
	h := hintNone
	if !mild && !tabPanel {
		h = e.hint
	}
	switch h {
	case hintNav:
		return removeNav
	case hintNegative:
		return remove
	case hintHeader:
		if !inContent {
			return checkHeader
		}
	}
	switch n.DataAtom {
	case atom.Div, atom.Section, atom.Ul, atom.Ol, atom.Dl, atom.Table, atom.Form, atom.P, atom.Span, atom.Td:
		return checkLinks
	case atom.Aside:
		return checkAside
	}
	return keep
}

func (pg *page) isHidden(n *html.Node) bool {
	e := pg.elem(n)
	return isHiddenOf(n, e, isTabPanelOf(n, e))
}

// isHiddenOf is isHidden with what n's class and id say (e) and whether n
// is a tab panel.
func isHiddenOf(n *html.Node, e valueFacts, tabPanel bool) bool {
	if tabPanel || isStreamedSegment(n) {
		// The panels of a tab set are all content; the page shows one at
		// a time.
		return false
	}
	for _, a := range n.Attr {
		switch a.Key {
		case "hidden":
			return true
		case "aria-hidden":
			// A link hidden from screen readers is still on screen: a
			// card's teaser repeating its title link, skipped by them.
			if a.Val == "true" && n.DataAtom != atom.A {
				return true
			}
		case "style":
			if strings.Contains(a.Val, "none") || strings.Contains(a.Val, "hidden") {
				v := strings.ReplaceAll(strings.ToLower(a.Val), " ", "")
				if strings.Contains(v, "display:none") || strings.Contains(v, "visibility:hidden") {
					return true
				}
			}
		}
	}
	return e.hidden
}

// hidingToken reports the display-none utility classes of the common CSS
// frameworks ("hidden", "d-none", "is-hidden", ...), and the responsive
// classes that may show the element again at some width ("md:block",
// "d-lg-flex", ...): a class hides the element when a token hides it and
// none shows it again (page.facts).
func hidingToken(tok string) (hides, showsAgain bool) {
	switch tok {
	case "hidden", "d-none", "is-hidden", "hide", "u-hidden", "display-none":
		return true, false
	}
	return false, strings.Contains(tok, ":") || strings.HasPrefix(tok, "d-") ||
		strings.HasPrefix(tok, "visible-") || strings.HasPrefix(tok, "show-")
}

// isSkipLink reports the accessibility links that jump past the navigation
// ("Skip to content", "Jump to main content").
func isSkipLink(n *html.Node) bool {
	href, _ := htmlattr.Lookup(n, "href")
	if !strings.Contains(href, "#") {
		return false
	}
	t := strings.ToLower(strings.Join(strings.Fields(textOf(n)), " "))
	return len(t) < 40 && (strings.HasPrefix(t, "skip to") || strings.HasPrefix(t, "skip navigation") ||
		strings.HasPrefix(t, "jump to main") || strings.HasPrefix(t, "jump to content") || strings.HasPrefix(t, "skip main"))
}

// isChrome reports page chrome (footer, navigation, dialog by tag or role):
// a text block inside it is not taken as the anchor while there is a
// candidate elsewhere (a privacy policy in a footer modal is long prose, but
// not the page's content, and as the anchor it would protect the footer).
func isChrome(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Footer, atom.Nav, atom.Dialog:
		return true
	}
	if role, ok := htmlattr.Lookup(n, "role"); ok {
		switch strings.ToLower(strings.TrimSpace(role)) {
		case "contentinfo", "navigation", "dialog", "alertdialog":
			return true
		}
	}
	return false
}

// isDialog reports a dialog (a modal window) by tag, role or aria-modal.
func isDialog(n *html.Node) bool {
	if n.DataAtom == atom.Dialog || attrIs(n, "aria-modal", "true") {
		return true
	}
	return attrIs(n, "role", "dialog") || attrIs(n, "role", "alertdialog")
}

// dialogText is the text of root's dialogs, which are not shown with the
// page.
func dialogText(root *html.Node) int {
	t := 0
	for n := root; n != nil; {
		if n.Type == html.ElementNode && n != root && isDialog(n) {
			t += textLen(n)
			n = next(n, root, true)
			continue
		}
		n = next(n, root, false)
	}
	return t
}

// isTabPanel reports a panel of a tab set or a collapsed section (an
// accordion's, a "read more" expander's): by ARIA role, or by a class or id
// word "tabpanel", "accordion", "collapse", "expander"..., or "tab"/"tabs"
// followed by "pane", "panel" or "content"; not in a token that names
// navigation.
func (pg *page) isTabPanel(n *html.Node) bool {
	return isTabPanelOf(n, pg.elem(n))
}

// isTabPanelOf is isTabPanel with what n's class and id say (e).
func isTabPanelOf(n *html.Node, e valueFacts) bool {
	return e.tabPanel || attrIs(n, "role", "tabpanel")
}

// isTabPanelWords reports the words of a class or id token (splitWords)
// that name a tab panel or a collapsed section (page.isTabPanel).
func isTabPanelWords(ws []string) bool {
	prevTab, panel := false, false
	for _, w := range ws {
		switch {
		case strings.HasPrefix(w, "nav") || w == "menu" || w == "submenu":
			// A collapsing menu ("navbar-collapse") is navigation.
			return false
		case w == "tabpanel" || w == "tabpane" || w == "accordion" || w == "accordian" ||
			w == "collapse" || w == "collapsible" || w == "expander" || w == "expandable":
			panel = true
		case prevTab && (w == "pane" || w == "panel" || w == "content" || w == "panels"):
			panel = true
		}
		prevTab = w == "tab" || w == "tabs"
	}
	return panel
}

// isStreamedSegment reports a segment of a streamed server render (React's
// <div hidden id="S:0">): the page's scripts move it into place, so its
// content is visible content.
func isStreamedSegment(n *html.Node) bool {
	if n.DataAtom != atom.Div {
		return false
	}
	id, _ := htmlattr.Lookup(n, "id")
	if len(id) < 3 || id[0] != 'S' || id[1] != ':' {
		return false
	}
	for i := 2; i < len(id); i++ {
		if id[i] < '0' || id[i] > '9' {
			return false
		}
	}
	return true
}
