package htmlclean

import (
	"regexp"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxBioText bounds the text of a block taken for an author's bio.
const maxBioText = 900

// bioTailShare is the share of the page's text that may follow an author's
// bio: a bio sits at the end of the article, after its text.
const bioTailShare = 0.2

// bioStart matches the opening of an author's bio: a name of one to four
// capitalised words, then "is a", "is the"... ("Ann Smith is a freelance
// writer", "Joe is the co-founder of").
var bioStart = mustTextPattern(`^(?:[A-Z][\p{L}.'’-]*\.? ){0,3}[A-Z][\p{L}.'’-]*(?: \([^)]{1,40}\))? (?:is|was|has been) (?:a|an|the|currently|also|our|one)\b`)

// bioRole matches, in a bio's first sentences, the trade of a writer or of
// the person behind a business.
var bioRole = regexp.MustCompile(`(?i)\b(?:writer|editor|author|journalist|reporter|contributor|founder|co-founder|ceo|manager|specialist|expert|director|marketer|blogger|analyst|consultant|freelance|columnist|strategist|researcher|owner)\b`)

// removeAuthorBios removes, near the end of the page's text, the leaf
// blocks that present the article's author ("Ann Smith is a freelance
// writer who covers..."): page furniture under the article, not its text.
// Forum threads keep them (a post may introduce its poster), and so does a
// page whose text is mostly the bio: a writer's "About me" page.
func removeAuthorBios(root *html.Node, pg *page) {
	if pg.kind.isThread() {
		return
	}
	total := pg.textLen(root)
	if total == 0 {
		return
	}
	var bios []*html.Node
	var rawBuf, lineBuf []byte
	seen := 0
	// inTail reports whether a block after seen bytes of text may end in
	// the tail: a block of at most maxBioText, the most a bio holds.
	// Before that, leaf blocks need not be measured: their text nodes are
	// counted on the way down, as their length would be.
	inTail := func(seen int) bool { return float64(total-seen-maxBioText) <= bioTailShare*float64(total) }
	for n := root; n != nil; {
		if n.Type == html.TextNode {
			k, _ := pg.text(n)
			seen += k
			n = next(n, root, false)
			continue
		}
		if n != root && n.Type == html.ElementNode && isBlock(n.DataAtom) && inTail(seen) && !hasBlockChild(n) {
			l := pg.textLen(n)
			if l > 0 && l <= maxBioText && 2*l <= total && float64(total-seen-l) <= bioTailShare*float64(total) {
				rawBuf, _ = appendShortText(rawBuf[:0], n, maxBioText)
				lineBuf = appendFields(lineBuf[:0], rawBuf, false)
				if isBio(string(lineBuf)) {
					bios = append(bios, n)
				}
			}
			seen += l
			n = next(n, root, true)
			continue
		}
		n = next(n, root, false)
	}
	for _, b := range bios {
		if b.Parent != nil {
			b.Parent.RemoveChild(b)
		}
	}
}

// personWord matches the pronouns that say a one-word subject is a person
// ("Joe is the founder of ... He has ...").
var personWord = regexp.MustCompile(`\b(?:[Hh]e|[Ss]he|[Hh]is|[Hh]er|[Tt]hey|[Tt]heir)\b`)

// isBio reports an author's bio: a name opening "is a ..." with a writer's
// or founder's trade in its first 200 bytes; a one-word subject must be
// shown to be a person by a pronoun ("Agriculture is a major contributor"
// is not one).
func isBio(t string) bool {
	// Most blocks fail within their first bytes: the test first, then
	// the match's end from regexp.
	var m []int
	if bioStart.MatchString(t) {
		m = bioStart.re.FindStringIndex(t)
	}
	if m == nil || !bioRole.MatchString(t[:min(len(t), 200)]) {
		return isIntlBio(t)
	}
	subject := t[:m[1]]
	if i := strings.Index(subject, " is "); i >= 0 {
		subject = subject[:i]
	} else if i := strings.Index(subject, " was "); i >= 0 {
		subject = subject[:i]
	} else if i := strings.Index(subject, " has "); i >= 0 {
		subject = subject[:i]
	}
	return strings.Contains(subject, " ") || personWord.MatchString(t)
}

// maxFurnitureLine bounds the text of an article's furniture line.
const maxFurnitureLine = 400

// furnitureStart matches the lower-case text node that may open one of the
// lines around an article that are not its text; furniture the whole line:
// an affiliate disclosure ("This post may contain affiliate links...", "As
// an Amazon Associate we earn..."), a newsletter's sign-off ("Thanks for
// reading X! This post is public..."). tagsStart and linkedLabel match the
// label of a line whose rest is links: tags and categories ("Tags:
// <a>x</a>, <a>y</a>", "Filed under:"). A pointer to another article ("Read
// more: <a>...</a>") is not one: the text of many articles keeps those.
var (
	furnitureStart = mustTextPattern(`^(?:\W*(?:affiliate )?disclosure|this|our|we|as an amazon|thanks for reading)`)
	furniture      = mustTextPattern(`^(?:(?:\W*(?:affiliate )?disclosure:?\s*)?(?:this (?:post|article|page|site|website|content|guide|review|story)|our (?:site|content|reviews?)|we) (?:may )?(?:contains?|includes?|uses?|earns?|receives?|may earn)\b.{0,60}\baffiliate|as an amazon associate\b|thanks for reading\b)`)
	tagsStart      = mustTextPattern(`^(?:tags?\b|tagged|filed under|posted in|categories)`)
	linkedLabel    = mustTextPattern(`^(?:tags?|tagged(?: with| as)?|filed under|posted in|categories)\s?:`)
)

// furnitureLine returns the leaf block that t (the lower-case text of the
// text node n) opens when the block is an affiliate disclosure or a
// newsletter's sign-off, or nil.
func furnitureLine(n *html.Node, t string, root, anchor *html.Node) *html.Node {
	if !furnitureStart.MatchString(t) {
		return nil
	}
	b := leafLine(n, root, anchor, maxFurnitureLine)
	if b == nil || !furniture.MatchString(lineText(b)) {
		return nil
	}
	return b
}

// tagsLine returns the leaf block that t (the lower-case text of the text
// node n) opens when the block is a label followed mostly by links (an
// article's tags or categories), or nil.
func tagsLine(n *html.Node, t string, root, anchor *html.Node) *html.Node {
	if !tagsStart.MatchString(t) {
		return nil
	}
	b := leafLine(n, root, anchor, maxFurnitureLine)
	if b == nil || !linkedLabel.MatchString(lineText(b)) || 2*linkTextLen(b) < textLen(b) {
		return nil
	}
	return b
}

// linkTextLen is the non-space text under n's links.
func linkTextLen(n *html.Node) int {
	k := 0
	for c := n; c != nil; {
		if c.Type == html.ElementNode && c.DataAtom == atom.A {
			k += textLen(c)
			c = next(c, n, true)
			continue
		}
		c = next(c, n, false)
	}
	return k
}

// bylineLabels are the whole texts of the label blocks over an article's
// author or reviewer ("Written by" on a line of its own, the name on the
// next); lineLabels those of other lone labels of an article's furniture
// ("Share", "Tags", a table of contents' "Table of contents"). A block holding only one goes, and a byline label's
// name block after it.
var (
	bylineLabels = map[string]bool{"written by": true, "written by:": true, "author": true, "author:": true,
		"authors": true, "reviewed by": true, "reviewed by:": true, "medically reviewed by": true,
		"fact checked by": true, "fact-checked by": true, "edited by": true, "edited by:": true}
	lineLabels = map[string]bool{"share": true, "share:": true, "tags": true, "tags:": true, "published": true,
		"published:": true, "last updated": true, "last updated:": true, "updated": true, "updated:": true,
		// a table of contents' toggle, its list gone by link density
		"table of contents": true, "table of contents:": true, "in this article": true, "in this article:": true,
		"on this page": true, "on this page:": true, "in this post": true,
		// the small print under a sign-up button
		"no credit card required": true, "no credit card required.": true,
		// a shop's list controls and form labels, their controls gone
		"filters": true, "filter": true, "filter by": true, "filter by:": true, "sort by": true, "sort by:": true,
		"sort": true, "sort:": true, "filter & sort": true, "sort & filter": true, "filter and sort": true,
		"refine by": true, "more options": true, "close": true, "compare": true, "quantity": true,
		"quantity:": true, "qty": true, "qty:": true,
		// a product card's badges
		"top rated": true, "new arrival": true, "best seller": true, "bestseller": true, "best-seller": true,
		"new": true, "low stock": true, "in stock": true, "free shipping": true, "limited edition": true,
		"new color": true, "new colors": true, "bestselling": true, "award winner": true,
		// controls whose link or button is gone, and a form builder's note
		"read more": true, "show more": true, "learn more": true, "sorted by": true, "sorted by:": true,
		"this field is hidden when viewing the form": true}
)

// maxNameLine bounds the text of an author's name block after a byline
// label.
const maxNameLine = 40

// nameAfter returns the leaf block after the label block b when it holds
// only a name (at most five words, 40 bytes), or nil.
func nameAfter(b, anchor *html.Node) *html.Node {
	s := b.NextSibling
	for s != nil && (s.Type == html.TextNode && strings.TrimSpace(s.Data) == "" || s.Type == html.CommentNode) {
		s = s.NextSibling
	}
	if s == nil || s.Type != html.ElementNode || !isBlock(s.DataAtom) || hasBlockChild(s) {
		return nil
	}
	raw, ok := shortText(s, maxNameLine)
	if !ok || holds(s, anchor) {
		return nil
	}
	f := strings.Fields(raw)
	if len(f) == 0 || len(f) > 5 {
		return nil
	}
	return s
}
