package htmlclean

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

const (
	// anchorShare: when the anchor holds at least this share of the text
	// left after pruning, the page is one body of content and what sits
	// around the anchor is kept only if it is prose.
	anchorShare = 0.5
	// minProse is the length (non-space bytes) of the longest run of inline
	// text that makes a block around the anchor prose: a lead paragraph or
	// a sibling section is kept, a date line, a byline, "Back to blog", a
	// row of buttons or a copyright notice goes.
	minProse = 120
	// minProseBelow is minProse for a block below the anchor outside its
	// parent, where related posts, calls to action and sign-up boxes sit:
	// only a long run of prose stays there.
	minProseBelow = 400
	// minLeadProse is minProse for a paragraph next to the anchor.
	minLeadProse = 50
	// maxWalkDepth bounds the recursion of proseStats.walk; deeper content
	// counts as no text.
	maxWalkDepth = 512
)

// narrowAround removes, at every level from the anchor up to root, the
// siblings that hold no prose (keepSibling). The anchor and its ancestors
// stay.
func narrowAround(root, anchor *html.Node, pg *page) {
	for x := anchor; x != root && x.Parent != nil; x = x.Parent {
		var nx *html.Node
		after := false
		for s := x.Parent.FirstChild; s != nil; s = nx {
			nx = s.NextSibling
			if s == x {
				after = true
				continue
			}
			if !keepSibling(pg, s, x == anchor, after) {
				x.Parent.RemoveChild(s)
			}
		}
	}
}

// keepSibling reports whether s, a sibling of the anchor (adjacent) or of
// one of its ancestors, is kept: a page title (an h1, or a block holding
// one) anywhere; next to the anchor also headings, figures, images, code,
// tables and quotes; and anywhere a block whose longest inline run is prose
// (minProse; minLeadProse for a paragraph next to the anchor) and whose
// text is mostly not links.
func keepSibling(pg *page, s *html.Node, adjacent, after bool) bool {
	switch s.Type {
	case html.TextNode:
		n, _ := pg.text(s)
		return n == 0 || n >= minProse
	case html.ElementNode:
	default:
		return false
	}
	switch s.DataAtom {
	case atom.H1:
		return true
	case atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Figure, atom.Img, atom.Picture,
		atom.Pre, atom.Table, atom.Blockquote:
		if adjacent {
			return true
		}
	}
	if !after && isTitleBlock(s) {
		return true // the page title, marked by its class
	}
	st := proseStats{pg: pg}
	st.walk(s, false, 0)
	switch {
	case st.text == 0:
		return adjacent && st.image
	case st.h1:
		return true // the page title in a wrapper
	}
	if adjacent && s.DataAtom == atom.P {
		// A paragraph next to the anchor (a standfirst, a lead) needs
		// less.
		return st.prose >= minLeadProse && st.link*2 < st.text
	}
	min := minProse
	if after && !adjacent {
		min = minProseBelow
	}
	return st.prose >= min && st.link*2 < st.text
}

// maxTitleText bounds the text of a block taken for the page's title.
const maxTitleText = 200

// isTitleBlock reports a page title written as a plain block, as layouts
// without headings have it: a short block whose class or id is a title's
// ("post-title", "entryTitle", "page_title", "headline").
func isTitleBlock(n *html.Node) bool {
	if n.Type != html.ElementNode {
		return false
	}
	switch n.DataAtom {
	case atom.Div, atom.P, atom.Span:
	default:
		return false
	}
	for _, a := range n.Attr {
		if a.Namespace != "" || (a.Key != "class" && a.Key != "id") {
			continue
		}
		for _, tok := range strings.Fields(a.Val) {
			ws := splitWords(tok)
			switch {
			case len(ws) == 1 && ws[0] == "headline",
				len(ws) == 2 && ws[1] == "title" && (ws[0] == "post" || ws[0] == "entry" || ws[0] == "article" || ws[0] == "page" || ws[0] == "story"):
				t := textLen(n)
				return t > 0 && t <= maxTitleText
			}
		}
	}
	return false
}

// proseStats measures a subtree: its text, the part in links, and the
// longest run of text not broken by a block element.
type proseStats struct {
	pg                *page // counts the texts
	text, link, prose int
	h1, image         bool // holds an h1, an image
}

// walk returns the length of n's trailing inline run and whether n is
// inline. Depth is bounded like the other walks (deeper content counts as
// nothing).
func (st *proseStats) walk(n *html.Node, inLink bool, depth int) (int, bool) {
	switch n.Type {
	case html.TextNode:
		k, _ := st.pg.text(n)
		st.text += k
		if inLink {
			st.link += k
		}
		return k, true
	case html.ElementNode:
	default:
		return 0, true
	}
	if depth > maxWalkDepth || skipSubtree(n.DataAtom) || n.DataAtom == atom.Script || n.DataAtom == atom.Style {
		return 0, true
	}
	switch n.DataAtom {
	case atom.H1:
		st.h1 = true
	case atom.Img:
		st.image = true
	}
	inLink = inLink || n.DataAtom == atom.A
	run, inline := 0, !isBlock(n.DataAtom)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		k, inl := st.walk(c, inLink, depth+1)
		if inl {
			run += k
			continue
		}
		inline = false
		st.prose = max(st.prose, run)
		run = 0
	}
	st.prose = max(st.prose, run)
	return run, inline
}

// textLen is the non-space text under n.
func textLen(n *html.Node) int {
	t := 0
	for c := n; c != nil; c = next(c, n, false) {
		if c.Type == html.TextNode {
			k, _ := nonSpace(c.Data)
			t += k
		}
	}
	return t
}

// ctaPhrases are the whole texts of call-to-action links and of the links
// that lead away from the page ("Back to blog"): they are controls, not
// content. They are English only; a link whose text merely contains one
// (a sentence that links "contact us") is kept.
var ctaPhrases = map[string]bool{
	"get started": true, "get started for free": true, "get started free": true, "start now": true,
	"learn more": true, "read more": true, "see more": true, "view more": true, "show more": true,
	"load more": true, "see all": true, "view all": true, "view all posts": true, "shop all": true, "sign up": true,
	"sign up for free": true, "sign up free": true, "sign in": true, "log in": true, "login": true,
	"register": true, "join now": true, "join now for free": true, "join for free": true,
	"book now": true, "buy now": true, "shop now": true, "order now": true, "add to cart": true,
	"add to bag": true, "add to basket": true, "download now": true, "try it free": true,
	"try for free": true, "try it for free": true, "start free trial": true, "start a free trial": true,
	"start your free trial": true, "free trial": true, "request a demo": true, "schedule a demo": true,
	"book a demo": true, "get a demo": true, "get a quote": true, "request a quote": true,
	"subscribe": true, "subscribe now": true, "back to top": true, "back to blog": true,
	"back to news": true, "back to all posts": true, "back to articles": true,
	"add to wishlist": true, "add to wish list": true, "add to favorites": true, "add to favourites": true,
	"quick view": true, "quick shop": true, "choose options": true, "select options": true,
	"notify me": true, "write a review": true, "compare": true, "add to compare": true,
	"reply": true, "reply with quote": true, "quote": true, "multi-quote": true, "multiquote": true,
	"apply now": true, "start building": true, "start building for free": true,
	"talk to sales": true, "request demo": true, "book a call": true,
	"schedule a call": true, "book a consultation": true, "schedule a consultation": true, "register now": true,
	"register today": true, "sign up now": true, "sign up today": true, "sign up for free trial": true,
	"get started today": true, "get started now": true, "get started - free": true, "see plans": true, "view plans": true,
	"see pricing": true, "view pricing": true, "see case studies": true, "view webinar": true, "watch webinar": true,
	"watch demo": true, "watch the demo": true, "book your free demo": true, "let's connect": true,
	"log in to reply": true, "login to reply": true, "sign in to reply": true, "reply to this topic": true,
	"reply to this thread": true, "start new topic": true, "new topic": true, "new thread": true, "post reply": true,
	"create post": true, "upvote": true, "downvote": true,
	"read full article": true, "read the full article": true, "read the review": true, "read full review": true,
	"read the full review": true, "read critic reviews": true, "see full item description": true, "check price": true,
	"view full details": true, "see full details": true, "add to list": true, "pre-order": true, "pre-order now": true,
	"preorder": true, "pre order now": true,
	"report": true, "report post": true, "permalink": true, "ask question": true, "ask a question": true,
}

// postControls are the whole texts of the controls beside each post of a
// thread; elsewhere a link reading "share" or "save" may be content.
var postControls = map[string]bool{"save": true, "hide": true, "embed": true, "parent": true, "share": true,
	"edit": true, "delete": true, "flag": true, "bookmark": true, "follow": true, "ignore": true, "context": true,
	"full comments": true, "give award": true, "copy link": true, "like": true, "unlike": true,
	"select all": true, "copy code": true}

// isPostControlLink reports a link whose whole text is a post's control.
func isPostControlLink(n *html.Node) bool {
	raw, ok := shortText(n, 20)
	if !ok {
		return false
	}
	return postControls[strings.ToLower(strings.Join(strings.Fields(raw), " "))]
}

// isCTALink reports a link whose whole text is a call to action.
func isCTALink(n *html.Node) bool {
	var rawBuf, lineBuf [128]byte
	raw, ok := appendShortText(rawBuf[:0], n, 40)
	if !ok {
		return false
	}
	t := bytes.Trim(appendLine(lineBuf[:0], raw), " →»›>←«‹<!.:-–—↑↓")
	// An author's archive link under the article ("View all posts by
	// Ann Smith").
	return ctaPhrases[string(t)] || intlCTAPhrases[string(t)] || bytes.HasPrefix(t, []byte("view all posts by ")) || bytes.HasPrefix(t, []byte("check price at ")) ||
		commentCount.mayStartWith(t) && commentCount.MatchString(string(t))
}

// isPostNumberLink reports a link whose whole text is a post's number in
// its thread ("#12", "Post #3"): the permalink beside each post of a forum.
func isPostNumberLink(n *html.Node) bool {
	raw, ok := shortText(n, 16)
	if !ok {
		return false
	}
	t := strings.ToLower(strings.TrimSpace(raw))
	t = strings.TrimSpace(strings.TrimPrefix(t, "post"))
	if len(t) < 2 || t[0] != '#' {
		return false
	}
	for i := 1; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return true
}

// maxPosterLine bounds the text of a poster card's line read across its
// inline elements.
const maxPosterLine = 60

// posterLine returns, on a thread, the leaf block that t (a text node)
// opens when the block's whole text, across its inline elements, is a line
// of a poster's card ("Join Date: <b>Aug 2008</b>", "Location: <i>Sin</i>"),
// or nil.
func posterLine(t, root, anchor *html.Node) *html.Node {
	b := t.Parent
	for b != nil && b != root && b.Type == html.ElementNode && !isBlock(b.DataAtom) {
		b = b.Parent
	}
	if b == nil || b == root || b.Type != html.ElementNode || firstText(b) != t {
		return nil
	}
	raw, ok := shortText(b, maxPosterLine)
	if !ok || hasBlockChild(b) || isAncestor(b, anchor) {
		return nil
	}
	l := strings.ToLower(strings.Join(strings.Fields(raw), " "))
	l = strings.ReplaceAll(l, " :", ":")
	if posterLabel.MatchString(l) || posterStat.MatchString(l) || posterField.MatchString(l) || threadLabel.MatchString(l) {
		return b
	}
	return nil
}

// maxBylineLine bounds the text of an author's credit line.
const maxBylineLine = 80

// bylineLine matches the lower-case credit line of an article's author,
// read across its inline elements ("Written by <a>Ann Smith</a>",
// "Written By: Jo Lee, Senior Analyst"): page furniture the main text
// leaves out.
var bylineLine = mustTextPattern(`^written by:? ?\S.{0,70}$`)

// maxCreditLine bounds the text of a picture's credit line.
const maxCreditLine = 100

// creditStart matches the lower-case text node that may open a picture's
// credit line; creditLine the whole line, read across its inline elements
// ("Photo credit: <a>Ann Smith</a>", "Credit: Getty Images", "Image
// courtesy of the museum", "Photo by Jo Lee"). A caption's own text is not
// one: the credit must open its block.
var (
	creditStart = mustTextPattern(`^(?:photo|image|picture|credit|courtesy)`)
	creditLine  = mustTextPattern(`^(?:(?:photo|image|picture)s? ?(?:credits?|courtesy(?: of)?|by|source)|(?:photo|picture)s?:|credits?:|courtesy of) ?:? ?\S`)
)

// captionCredit returns the inline element of a figure's caption that t (a
// text node) opens when its whole text is a credit line ("<figcaption>The
// kettle <span>Credit: Ann Smith</span></figcaption>"), or nil.
func captionCredit(t, anchor *html.Node) *html.Node {
	e := t.Parent
	if e == nil || e.Type != html.ElementNode || isBlock(e.DataAtom) || firstText(e) != t {
		return nil
	}
	in := false
	for p, i := e, 0; p != nil && i < 4; p, i = p.Parent, i+1 {
		if p.Type == html.ElementNode && p.DataAtom == atom.Figcaption {
			in = true
			break
		}
	}
	if !in || holds(e, anchor) {
		return nil
	}
	if _, ok := shortText(e, maxCreditLine); !ok || !creditLine.MatchString(lineText(e)) {
		return nil
	}
	return e
}

// leafLine returns the leaf block that t (a text node) opens when its whole
// text has at most limit non-space bytes and it does not hold the anchor,
// or nil.
func leafLine(t, root, anchor *html.Node, limit int) *html.Node {
	b := t.Parent
	for b != nil && b != root && b.Type == html.ElementNode && !isBlock(b.DataAtom) && b.DataAtom != atom.Figcaption {
		b = b.Parent
	}
	if b == nil || b == root || b.Type != html.ElementNode || firstText(b) != t {
		return nil
	}
	if _, ok := shortText(b, limit); !ok || hasBlockChild(b) || holds(b, anchor) {
		return nil
	}
	return b
}

// holds reports whether the small block b (at most 32 nodes, as shortText
// checked) is or holds n: a walk of b, not of n's ancestors, so that deep
// pages stay linear.
func holds(b, n *html.Node) bool {
	for c := b; c != nil; c = next(c, b, false) {
		if c == n {
			return true
		}
	}
	return false
}

// lineText is the lower-case text of a short block, its white space
// collapsed.
func lineText(b *html.Node) string {
	var rawBuf, lineBuf [256]byte
	raw, _ := appendShortText(rawBuf[:0], b, 1<<20)
	l := appendLine(lineBuf[:0], raw)
	if bytes.Contains(l, []byte(" :")) {
		l = bytes.ReplaceAll(l, []byte(" :"), []byte(":"))
	}
	return string(l)
}

// posterField matches, on a thread, the lower-case fields of a poster's
// card that other pages use too, so only with a colon and only there
// ("Location: Sin", "Registered: 2024-01-27").
var posterField = mustTextPattern(`^(?:location|from|registered|member since|age|gender|reputation|credits|points|karma): [\w ,.:/-]{1,30}$`)

// cookieLine matches the lower-case start of a cookie or captcha notice
// left in the page ("iFixit uses cookies to ...", "This site uses cookies
// to ...", "This site is protected by reCAPTCHA and the Google Privacy
// Policy ...").
var cookieLine = mustTextPattern(`^(?:(?:we|this (?:site|website)|[^ ]+) uses? cookies\b|this (?:site|website|page|form) is protected by recaptcha\b)`)

// maxConsentText bounds the text of a block taken for a consent line.
const maxConsentText = 300

// maxConsentBox bounds the text of the box around a consent line that goes
// with it.
const maxConsentBox = 400

// consentLine matches the lower-case start of the legal line under a
// sign-up, sign-in or subscription form ("By continuing, you agree to our
// User Agreement...", "By subscribing you accept the terms").
var consentLine = mustTextPattern(`^by (?:continuing|signing up|signing in|subscribing|clicking|creating an account|registering|submitting|proceeding)\b.{0,80}?\byou (?:agree|accept|acknowledge|consent)`)

// adLabels are the texts of the labels over ad slots, and of the
// placeholders of script-loaded content; an element holding only one of
// them is removed.
var adLabels = map[string]bool{"advertisement": true, "advertisements": true, "sponsored": true,
	"ad": true, "sponsored content": true, "paid content": true,
	"article continues below": true, "story continues below": true, "continue reading below": true,
	"content continues below": true, "scroll to continue with content": true,
	"was this helpful?": true, "was this page helpful?": true, "was this article helpful?": true,
	// a shop card's controls, when they are not links
	"quick shop": true, "quick view": true, "quick add": true, "choose options": true, "select options": true,
	// placeholders of content loaded by script
	"loading": true, "loading...": true, "loading…": true}

// commentCount matches the lower-case text of a link to a post's comments
// ("12 comments", "No comments") under each teaser of a listing.
var commentCount = mustTextPattern(`^(?:\d[\d,]*|no) comments?$`)

// cardLabel matches the lower-case counters of a product card or a
// carousel alone in their element: an empty review count ("0 reviews",
// "No reviews yet"), a slide counter ("1 of 13").
var cardLabel = mustTextPattern(`^(?:\(?0\)? (?:reviews?|ratings?)|no (?:reviews|ratings)(?: yet)?|\d+ of \d+)$`)

// readingTime matches a lower-case reading-time label ("4 min read",
// "15 minute read time", "reading time: 3 minutes"): a block holding only
// one is removed like an ad label.
var readingTime = mustTextPattern(`^(?:(?:estimated )?read(?:ing)? time:? *\d+(?:-\d+)? *(?:min|mins|minutes?)\.?|\d+(?:-\d+)? *(?:min|mins|minutes?)\.? (?:read|reading)(?: time)?)$`)

// posterLabel matches the lower-case lines of a forum poster's card: a
// member rank ("Well-known member", "2+ year member", "Original poster")
// or a statistic ("Join date: Aug 2008", "Posts: 1,077"). A block holding
// only one is removed.
var posterLabel = mustTextPattern(`^(?:(?:\d+\+? years? )?(?:new|senior|junior|active|well-known|premium|established|valued|registered|full|supporting|elite|veteran|trusted|verified|regular) member|original poster|(?:join date|joined|posts|threads|messages|reaction score|likes received): [\w ,.]{1,20})$`)

// posterStat matches, on a forum thread, a poster's statistic written
// without a colon ("Joined Feb 2019", "Posts 1,077").
var posterStat = mustTextPattern(`^(?:join date|joined|posts|threads|messages|reaction score|likes received) [\w ,.]{1,20}$`)

// postCounter matches, on a forum thread, the counters and states beside a
// post or a thread: a bare number (votes, likes), "3 likes", "12 replies",
// "Offline".
var postCounter = mustTextPattern(`^(?:\d[\d,.]*k?(?: (?:likes?|replies|reply|views?|votes?|points?|posts?))?|likes?|replies|views|offline|online)$`)

// threadLabel matches, on a thread, the lower-case labels of its software
// around the posts: an edit note ("Last edited: Jul 6, 2024"), a quote's
// "Click to expand...", a question page's answer form and prompts
// ("Post as a guest", "Explore related questions"), a post's age ("2y",
// "3 hours ago"), a poster's role ("Thread starter", "Moderator").
var threadLabel = mustTextPattern(`^(?:last edited:? [\w ,.:]{1,40}|click to (?:expand|shrink)(?:\.{3}|…)?|post as a guest|required, but never shown|sign up using (?:google|facebook|github|email and password)|find the answer to your question by asking\.?|see similar questions with these tags\.?|start asking to get answers|explore related questions|(?:thread|topic|discussion) starter|staff member|(?:global |super )?moderator|administrator|code:|wrote on|posted (?:by|on)|posted (?:\d+|an?) [a-z]+ ago|(?:\d+|an?) ?(?:y|yr|yrs|years?|mo|months?|w|wk|weeks?|d|days?|h|hr|hrs|hours?|min|mins|minutes?)(?: ago)?)$`)

// pageLabel matches lower-case labels of a page's controls and state: a
// result count ("Showing 24 of 291 results", "33 results"), a forum's
// notices ("You are not logged in.", "Not open for further replies.", a
// post's "Sent from my ... using ..." line), "Filter & sort", an empty cart.
var pageLabel = mustTextPattern(`^(?:(?:showing )?\d[\d,]*(?: ?[-–] ?\d[\d,]*)?(?: of \d[\d,]*)? (?:results?|products?|items?)|you are not logged in\.?|not open for further replies\.?|sent from my .{1,60} using .{1,60}|filter (?:and|&) sort|sort (?:and|&) filter|no products in the cart\.?|jump to)$`)

// firstText is the first non-blank text node under n.
func firstText(n *html.Node) *html.Node {
	for c := n; c != nil; c = next(c, n, false) {
		if c.Type == html.TextNode && strings.TrimSpace(c.Data) != "" {
			return c
		}
	}
	return nil
}

// shortText is the text under n when it has at most limit non-space bytes
// in at most 32 nodes; it looks no further (nested links stay linear).
func shortText(n *html.Node, limit int) (string, bool) {
	b, ok := appendShortText(nil, n, limit)
	return string(b), ok
}

// appendShortText appends shortText's text to buf (buf unchanged when it
// reports false).
func appendShortText(buf []byte, n *html.Node, limit int) ([]byte, bool) {
	start := len(buf)
	size, nodes := 0, 0
	for c := n; c != nil; {
		if nodes++; nodes > 32 {
			return buf[:start], false
		}
		if c != n && c.Type == html.ElementNode && (c.DataAtom == atom.Select || c.DataAtom == atom.Textarea || c.DataAtom == atom.Button) {
			// Not shown as text (the markdown leaves them out).
			c = next(c, n, true)
			continue
		}
		if c.Type == html.TextNode {
			k, _ := nonSpace(c.Data)
			if size += k; size > limit {
				return buf[:start], false
			}
			buf = append(buf, c.Data...)
			buf = append(buf, ' ')
		}
		c = next(c, n, false)
	}
	return buf, true
}

// appendLine appends to buf the lower-case text of raw with its white
// space collapsed, strings.ToLower(strings.Join(strings.Fields(raw), " "))
// without the strings in between: the key the rules look short texts up
// by.
func appendLine(buf, raw []byte) []byte {
	return appendFields(buf, raw, true)
}

// appendFields appends to buf strings.Join(strings.Fields(raw), " "), in
// lower case with lower (as strings.ToLower writes it).
func appendFields(buf, raw []byte, lower bool) []byte {
	space := false
	start := len(buf)
	for i := 0; i < len(raw); {
		r, w := rune(raw[i]), 1
		if r >= utf8.RuneSelf {
			r, w = utf8.DecodeRune(raw[i:])
		}
		i += w
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && len(buf) > start {
			buf = append(buf, ' ')
		}
		space = false
		switch {
		case !lower:
			buf = append(buf, raw[i-w:i]...)
		case 'A' <= r && r <= 'Z':
			buf = append(buf, byte(r)+'a'-'A')
		case r < utf8.RuneSelf:
			buf = append(buf, byte(r))
		default:
			// An invalid byte decodes to utf8.RuneError and is written
			// as U+FFFD, as strings.ToLower writes it.
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
		}
	}
	return buf
}

func nonSpaceLen(s string) int {
	n, _ := nonSpace(s)
	return n
}
