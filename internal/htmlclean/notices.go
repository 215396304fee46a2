package htmlclean

import (
	"fmt"
	"strings"

	"golang.org/x/net/html"
)

// maxNoticeText bounds the text of a block taken for a site notice.
const maxNoticeText = 160

// A noticeRule is one of the rules of removeNotices: each looks at every
// text node of the page (t is its lower-case text, trimmed) and may mark a
// small block around it for removal. The rules are tried in the table's
// order; the first that claims a text node (match reports true) ends the
// tries for it, whether or not it marked anything.
type noticeRule struct {
	name    string // for Options.Without and Rules
	removes string // what it removes
	why     string // why that is not content
	test    string // a test that fails with the rule switched off
	thread  bool   // tried only on a forum thread or a question page
	// alone: match only tests t, and the rule removes the element holding
	// t alone (wholeLabel); other rules mark what they remove themselves.
	alone bool
	match func(w *noticeWalk, n *html.Node, t string) bool
}

// noticeWalk is what the rules of one removeNotices call share.
type noticeWalk struct {
	root, anchor *html.Node
	notices      []*html.Node
	buf          [8]*html.Node // notices' first backing array
}

// noticeRules are removeNotices' rules, in the order they are tried.
var noticeRules = [...]noticeRule{
	{
		name:    "ad-label",
		removes: `an element holding only an ad slot's label ("Advertisement", "Anzeige", "Story continues below"), a "Was this helpful?" prompt, a shop card's control text ("Quick view"), a script placeholder ("Loading...") or a lone share label in another language ("Teilen")`,
		why:     "labels of slots and controls whose content is gone or is not the page's",
		test:    "TestContinuationLabels, TestLoadingPlaceholder, TestFurnitureWordsInOtherLanguages",
		alone:   true,
		match:   func(w *noticeWalk, n *html.Node, t string) bool { return adLabels[t] || intlAdLabels[t] },
	},
	{
		name:    "reading-time",
		removes: `an element holding only a reading time ("4 min read", "Reading time: 3 minutes")`,
		why:     "page furniture next to the title, not the text",
		test:    "TestReadingTimeLabel",
		alone:   true,
		match:   func(w *noticeWalk, n *html.Node, t string) bool { return readingTime.MatchString(t) },
	},
	{
		name:    "poster-label",
		removes: `an element holding only a line of a forum poster's card ("Well-known member", "Join date: Aug 2008", "Posts: 1,077")`,
		why:     "the poster's card beside each post, not the posts",
		test:    "TestPosterLabels",
		alone:   true,
		match:   func(w *noticeWalk, n *html.Node, t string) bool { return posterLabel.MatchString(t) },
	},
	{
		name:    "page-label",
		removes: `an element holding only a label of the page's controls or state ("Showing 24 of 291 results", "You are not logged in.", "Sent from my ... using ...", "Filter & sort", "Jump to")`,
		why:     "the controls' labels, their controls gone",
		test:    "TestPageLabels",
		alone:   true,
		match:   func(w *noticeWalk, n *html.Node, t string) bool { return pageLabel.MatchString(t) },
	},
	{
		name:    "card-label",
		removes: `an element holding only an empty review count ("0 reviews", "No reviews yet") or a carousel's slide counter ("1 of 13")`,
		why:     "a product card's or a carousel's counters",
		test:    "TestCardCounters",
		alone:   true,
		match:   func(w *noticeWalk, n *html.Node, t string) bool { return cardLabel.MatchString(t) },
	},
	{
		name:    "thread-poster-stat",
		removes: `on a thread, an element holding only a poster's statistic written without a colon ("Joined Feb 2019", "Posts 1,077")`,
		why:     "the poster's card; elsewhere such words may be content",
		test:    "TestThreadCardLabels/thread-poster-stat",
		thread:  true,
		alone:   true,
		match:   func(w *noticeWalk, n *html.Node, t string) bool { return posterStat.MatchString(t) },
	},
	{
		name:    "thread-counter",
		removes: `on a thread, an element holding only a post's counter or state ("12", "3 likes", "12 replies", "Offline")`,
		why:     "the controls beside each post",
		test:    "TestPostCounters",
		thread:  true,
		alone:   true,
		match:   func(w *noticeWalk, n *html.Node, t string) bool { return postCounter.MatchString(t) },
	},
	{
		name:    "thread-label",
		removes: `on a thread, an element holding only a label of the forum's software ("Last edited: Jul 6, 2024", "Click to expand...", "Post as a guest", "3 hours ago", "Moderator")`,
		why:     "the software's text around the posts",
		test:    "TestThreadCardLabels/thread-label",
		thread:  true,
		alone:   true,
		match:   func(w *noticeWalk, n *html.Node, t string) bool { return threadLabel.MatchString(t) },
	},
	{
		name:    "thread-poster-field",
		removes: `on a thread, an element holding only a poster's field with a colon ("Location: Sin", "Registered: 2024-01-27")`,
		why:     "the poster's card; elsewhere such fields may be content",
		test:    "TestThreadCardLabels/thread-poster-field",
		thread:  true,
		alone:   true,
		match:   func(w *noticeWalk, n *html.Node, t string) bool { return posterField.MatchString(t) },
	},
	{
		name:    "byline-label",
		removes: `a leaf block that is only a byline label ("Written by", "Reviewed by:") and the block after it when it holds only a name`,
		why:     "the author's credit is page furniture the main text leaves out",
		test:    "TestLoneLabels",
		match:   func(w *noticeWalk, n *html.Node, t string) bool { return bylineLabels[t] && w.labelLine(n) },
	},
	{
		name:    "line-label",
		removes: `a leaf block that is only a lone label of an article's or a shop's furniture ("Share", "Tags", "Table of contents", "Sort by", "In stock", "No credit card required")`,
		why:     "labels whose list or control is gone (a boilerplate heading is left to removeBoilerplateSections)",
		test:    "TestLoneLabels, TestContentsLabels, TestShopControlLabels, TestCardBadges",
		match:   func(w *noticeWalk, n *html.Node, t string) bool { return lineLabels[t] && w.labelLine(n) },
	},
	{
		name:    "written-by",
		removes: `a leaf block that is an author's credit line read across its inline elements ("Written by <a>Ann Smith</a>")`,
		why:     "the author's credit is page furniture",
		test:    "TestBylineLines",
		match: func(w *noticeWalk, n *html.Node, t string) bool {
			if !strings.HasPrefix(t, "written by") {
				return false
			}
			if b := leafLine(n, w.root, w.anchor, maxBylineLine); b != nil && bylineLine.MatchString(lineText(b)) {
				w.notices = append(w.notices, b)
			}
			return true
		},
	},
	{
		name:    "affiliate-disclosure",
		removes: `a leaf block that is an affiliate disclosure ("This post may contain affiliate links...", "As an Amazon Associate...") or a newsletter's sign-off ("Thanks for reading X!")`,
		why:     "lines around an article that are not its text",
		test:    "TestFurnitureLines",
		match: func(w *noticeWalk, n *html.Node, t string) bool {
			return w.mark(furnitureLine(n, t, w.root, w.anchor))
		},
	},
	{
		name:    "tags-line",
		removes: `a leaf block that is a label followed mostly by links ("Tags: <a>x</a>, <a>y</a>", "Filed under:", "Categories:")`,
		why:     "an article's tags and categories, links to other pages",
		test:    "TestFurnitureLines",
		match: func(w *noticeWalk, n *html.Node, t string) bool {
			return w.mark(tagsLine(n, t, w.root, w.anchor))
		},
	},
	{
		name:    "credit-line",
		removes: `a leaf block that is a picture's credit line ("Photo credit: <a>Ann Smith</a>", "Credit: Getty Images", "Image courtesy of the museum")`,
		why:     "a picture's credit, not the text",
		test:    "TestCreditLines",
		match: func(w *noticeWalk, n *html.Node, t string) bool {
			if !creditStart.MatchString(t) {
				return false
			}
			b := leafLine(n, w.root, w.anchor, maxCreditLine)
			return b != nil && creditLine.MatchString(lineText(b)) && w.mark(b)
		},
	},
	{
		name:    "caption-credit",
		removes: `the inline element of a figure's caption that is its credit line ("<figcaption>The kettle <span>Credit: Ann Smith</span></figcaption>")`,
		why:     "a picture's credit inside its caption, which stays",
		test:    "TestCaptionCredits",
		match: func(w *noticeWalk, n *html.Node, t string) bool {
			if !creditStart.MatchString(t) {
				return false
			}
			w.mark(captionCredit(n, w.anchor))
			return true
		},
	},
	{
		name:    "thread-poster-line",
		removes: `on a thread, a leaf block whose whole text across its inline elements is a line of a poster's card ("Join Date: <b>Aug 2008</b>")`,
		why:     "the poster's card beside each post",
		test:    "TestPosterLinesAcrossElements",
		thread:  true,
		match: func(w *noticeWalk, n *html.Node, t string) bool {
			return w.mark(posterLine(n, w.root, w.anchor))
		},
	},
	{
		name:    "cookie-notice",
		removes: `a short block opening with a cookie or captcha notice ("This site uses cookies to ...", "This site is protected by reCAPTCHA ...")`,
		why:     "a consent banner's text left in the page",
		test:    "TestCookieLines",
		match: func(w *noticeWalk, n *html.Node, t string) bool {
			if !cookieLine.MatchString(t) {
				return false
			}
			b := blockOf(n, w.root)
			if b != nil && b != w.root && !isAncestor(b, w.anchor) && firstText(b) == n && textLen(b) <= maxConsentText {
				w.notices = append(w.notices, b)
			}
			return true
		},
	},
	{
		name:    "consent-line",
		removes: `a short block opening with a form's legal line ("By continuing, you agree to our User Agreement...", "By subscribing you accept the terms"), with the form's box around it`,
		why:     "the small print of a sign-up, sign-in or subscription form",
		test:    "TestConsentLines",
		match: func(w *noticeWalk, n *html.Node, t string) bool {
			if !strings.HasPrefix(t, "by ") || !consentLine.MatchString(t) {
				return false
			}
			b := blockOf(n, w.root)
			// The anchor itself may be such a line (a page whose only
			// paragraph is a sign-up box's), not a block holding it.
			if b != nil && b != w.root && (b == w.anchor || !isAncestor(b, w.anchor)) && firstText(b) == n && textLen(b) <= maxConsentText {
				// The form's box around it (its prompt and buttons) goes
				// with it.
				for p := b.Parent; p != nil && p != w.root && p.Type == html.ElementNode && !isContentElement(p) &&
					(!isAncestor(p, w.anchor) || isAncestor(b, w.anchor)) && textLen(p) <= maxConsentBox; p = p.Parent {
					b = p
				}
				w.notices = append(w.notices, b)
			}
			return true
		},
	},
	{
		name:    "copyright",
		removes: `a short block (at most 160 bytes of text) opening with a copyright sign or "Copyright ©" ("© 2024 Acme Inc. All rights reserved.")`,
		why:     "a site notice, not content",
		test:    "TestSiteNotices/copyright",
		match: func(w *noticeWalk, n *html.Node, t string) bool {
			if !strings.HasPrefix(t, "©") && !strings.HasPrefix(t, "copyright ©") && !strings.HasPrefix(t, "copyright (c)") &&
				!strings.HasPrefix(t, "(c) copyright") {
				return false
			}
			w.siteNotice(n)
			return true
		},
	},
	{
		name:    "powered-by",
		removes: `a short block (at most 160 bytes of text) opening with "Powered by" ("Powered by WordPress")`,
		why:     "a site notice, not content",
		test:    "TestSiteNotices/powered-by",
		match: func(w *noticeWalk, n *html.Node, t string) bool {
			if !strings.HasPrefix(t, "powered by ") {
				return false
			}
			w.siteNotice(n)
			return true
		},
	},
}

// removeNotices removes the short blocks that are page furniture rather
// than content, by the rules of noticeRules: labels alone in their
// element, lone label lines, bylines, disclosures, credits, a poster's
// card, consent and cookie lines, copyright notices. A block that holds the
// anchor is kept. The rules in pg.off are not tried.
func removeNotices(root, anchor *html.Node, pg *page) {
	// The walk's state lives in pg, with room for a few notices: the rules
	// are called through func values, which would move a local one to the
	// heap.
	w := &pg.notices
	w.root, w.anchor, w.notices = root, anchor, w.buf[:0]
	off, thread := pg.off, pg.kind.isThread()
	for n := root; n != nil; n = next(n, root, false) {
		if n.Type != html.TextNode {
			continue
		}
		t := strings.ToLower(strings.TrimSpace(n.Data))
		if t == "" {
			continue // no rule matches an empty text
		}
		for i := range noticeRules {
			r := &noticeRules[i]
			if off.has(i) || r.thread && !thread || !r.match(w, n, t) {
				continue
			}
			if r.alone {
				w.wholeLabel(n, t)
			}
			break
		}
	}
	for _, b := range w.notices {
		if b.Parent != nil {
			b.Parent.RemoveChild(b)
		}
	}
	*w = noticeWalk{}
}

// mark marks b when it is not nil and reports whether it was.
func (w *noticeWalk) mark(b *html.Node) bool {
	if b == nil {
		return false
	}
	w.notices = append(w.notices, b)
	return true
}

// wholeLabel marks the parent of the text node n when its whole text is t.
func (w *noticeWalk) wholeLabel(n *html.Node, t string) {
	if b := n.Parent; b != nil && b != w.root && b.Type == html.ElementNode && !isAncestor(b, w.anchor) && textLen(b) == nonSpaceLen(t) {
		w.notices = append(w.notices, b)
	}
}

// labelLine marks the leaf block that the text node n opens when the
// block's whole text is a byline label or a lone label line (and, after a
// byline label, the name block after it), and reports whether it did. A
// boilerplate heading is left to the boilerplate sections, which remove
// what it opens too ("Tags", "Table of contents").
func (w *noticeWalk) labelLine(n *html.Node) bool {
	b := leafLine(n, w.root, w.anchor, 48)
	if b == nil {
		return false
	}
	l := lineText(b)
	if isHeading(b.DataAtom) && isBoilerplateHeading(l) || !bylineLabels[l] && !lineLabels[l] {
		return false
	}
	w.notices = append(w.notices, b)
	if bylineLabels[l] {
		if name := nameAfter(b, w.anchor); name != nil {
			w.notices = append(w.notices, name)
		}
	}
	return true
}

// siteNotice marks the block that the text node n opens when it does not
// hold the anchor and its text is short (maxNoticeText).
func (w *noticeWalk) siteNotice(n *html.Node) {
	b := blockOf(n, w.root)
	if b == nil || b == w.root || isAncestor(b, w.anchor) || firstText(b) != n {
		return
	}
	if textLen(b) <= maxNoticeText {
		w.notices = append(w.notices, b)
	}
}

// blockOf is the nearest ancestor of n that is not an inline element, or
// root, or nil.
func blockOf(n, root *html.Node) *html.Node {
	b := n.Parent
	for b != nil && b != root && b.Type == html.ElementNode && !isBlock(b.DataAtom) {
		b = b.Parent
	}
	return b
}

// ruleSet is a set of noticeRules, bit i for noticeRules[i].
type ruleSet uint64

// The table fits a ruleSet.
var _ [64 - len(noticeRules)]struct{}

func (s ruleSet) has(i int) bool { return s&(1<<uint(i)) != 0 }

// Rule describes one of the main-content rules that Options.Without can
// switch off.
type Rule struct {
	Name    string
	Removes string // what it removes
	Why     string // why that is not content
	Test    string // a test of this package that fails with the rule off
}

// Rules lists the rules that Options.Without can switch off, in the order
// they are tried.
func Rules() []Rule {
	out := make([]Rule, len(noticeRules))
	for i, r := range noticeRules {
		out[i] = Rule{Name: r.name, Removes: r.removes, Why: r.why, Test: r.test}
	}
	return out
}

// ruleSetOf is the set of the rules named; a name that is not a rule's is
// an error naming it and the rules.
func ruleSetOf(names []string) (ruleSet, error) {
	var s ruleSet
	for _, name := range names {
		i := ruleIndex(name)
		if i < 0 {
			known := make([]string, len(noticeRules))
			for j, r := range noticeRules {
				known[j] = r.name
			}
			return 0, fmt.Errorf("unknown rule %q (the rules: %s)", name, strings.Join(known, ", "))
		}
		s |= 1 << uint(i)
	}
	return s, nil
}

func ruleIndex(name string) int {
	for i, r := range noticeRules {
		if r.name == name {
			return i
		}
	}
	return -1
}
