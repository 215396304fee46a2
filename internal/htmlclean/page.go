package htmlclean

import (
	"strings"

	"golang.org/x/net/html"
)

// page holds what the main-content rules of one Clean call share: the
// page's kind and the facts computed once per page and read by every rule
// instead of being worked out again for each element and each rule.
type page struct {
	kind pageKind
	// values caches what a class or id attribute value says, by value:
	// a page repeats the same few values on many elements; tokens what
	// one of their tokens says (values share tokens).
	values map[string]valueFacts
	tokens map[string]tokenFacts
	// texts holds the count of each text node (nonSpace of its data),
	// counted the first time a rule asks: every walk of the page counts
	// the same texts, and a text node's data does not change.
	texts map[*html.Node]textCount
	// off are the rules Options.Without switches off.
	off ruleSet
	// notices is removeNotices' walk.
	notices noticeWalk
}

func newPage(pk pageKind) *page {
	return &page{kind: pk, values: map[string]valueFacts{}, tokens: map[string]tokenFacts{}, texts: map[*html.Node]textCount{}}
}

// minCachedText is the length from which page.text keeps a text's count.
const minCachedText = 32

// textCount is nonSpace of a text node.
type textCount struct{ n, commas int32 }

// text is nonSpace(n.Data) for the text node n. Short texts (most are
// white space between tags) cost less to count than to look up.
func (pg *page) text(n *html.Node) (int, int) {
	if len(n.Data) < minCachedText {
		return nonSpaceShort(n.Data)
	}
	c, ok := pg.texts[n]
	if !ok {
		k, commas := nonSpace(n.Data)
		c = textCount{int32(k), int32(commas)}
		pg.texts[n] = c
	}
	return int(c.n), int(c.commas)
}

// textLen is textLen(n) from the page's counts.
func (pg *page) textLen(n *html.Node) int {
	t := 0
	for c := n; c != nil; c = next(c, n, false) {
		if c.Type == html.TextNode {
			k, _ := pg.text(c)
			t += k
		}
	}
	return t
}

// textLenBut is textLen(n) less the text under out: the text of n outside
// out when out is n or under it, all of n's text otherwise. One walk that
// steps over out costs less than measuring n and out apart.
func (pg *page) textLenBut(n, out *html.Node) int {
	t := 0
	for c := n; c != nil; {
		if c == out {
			c = next(c, n, true)
			continue
		}
		if c.Type == html.TextNode {
			k, _ := pg.text(c)
			t += k
		}
		c = next(c, n, false)
	}
	return t
}

// valueFacts is what one class or id attribute value says.
type valueFacts struct {
	hint   hint // the strongest hint of its tokens (classInfo)
	weight int  // the sum of its tokens' weights (classInfo)
	// tabPanel: a token names a tab panel or a collapsed section
	// (isTabPanel).
	tabPanel bool
	// productBoilerplate: a token holds a product boilerplate word.
	productBoilerplate bool
	// hidden: as a class, the value hides the element (hiddenByClass).
	hidden bool
}

// tokenFacts is what one token of a class or id value says.
type tokenFacts struct {
	hint   hint
	weight int
	// utility: an arbitrary value or variant ("has-[>[data-slot=banner]]:pt-0"),
	// which names no part of the page: no hint, no weight.
	utility            bool
	tabPanel           bool
	productBoilerplate bool
	// hides and showsAgain: a display-none utility class, and a
	// responsive class that may show the element again at some width
	// (hiddenByClass).
	hides, showsAgain bool
}

// facts returns the facts of an attribute value, computing them the first
// time the page shows it: its tokens' hints combine as the strongest, their
// weights add up (utility classes aside); it names a tab panel or holds a
// product boilerplate word when a token does; as a class it hides the
// element when a token hides it and none shows it again.
func (pg *page) facts(v string) valueFacts {
	if f, ok := pg.values[v]; ok {
		return f
	}
	var f valueFacts
	hides, shows := false, false
	for _, tok := range strings.Fields(v) {
		t, ok := pg.tokens[tok]
		if !ok {
			t = tokenFactsOf(tok, pg.kind)
			pg.tokens[tok] = t
		}
		if !t.utility {
			f.weight += t.weight
			f.hint = strongerHint(f.hint, t.hint)
		}
		f.tabPanel = f.tabPanel || t.tabPanel
		f.productBoilerplate = f.productBoilerplate || t.productBoilerplate
		hides, shows = hides || t.hides, shows || t.showsAgain
	}
	f.hidden = hides && !shows
	pg.values[v] = f
	return f
}

func tokenFactsOf(tok string, pk pageKind) tokenFacts {
	var t tokenFacts
	// A utility class with an arbitrary value or variant
	// ("has-[>[data-slot=banner]]:pt-0") names no part of the page.
	t.utility = strings.ContainsAny(tok, "[(")
	ws := splitWords(tok)
	if !t.utility {
		t.hint, t.weight = tokenInfo(tok, ws, pk)
	}
	t.tabPanel = isTabPanelWords(ws)
	t.productBoilerplate = isProductBoilerplateWords(ws)
	t.hides, t.showsAgain = hidingToken(tok)
	return t
}

// elem is what n's class and id values say together: the strongest hint,
// the sum of the weights, a tab panel or product boilerplate word in any;
// hidden when a class value hides it.
func (pg *page) elem(n *html.Node) valueFacts {
	var e valueFacts
	for _, a := range n.Attr {
		class := a.Key == "class"
		if !class && a.Key != "id" {
			continue
		}
		f := pg.facts(a.Val)
		e.hidden = e.hidden || class && f.hidden
		if a.Namespace != "" || !class && f.hint != hintNone && isHeadingSlug(n, a.Val) {
			// (An id made from the section's own heading,
			// "sharing-with-a-team", names its content.)
			continue
		}
		e.hint = strongerHint(e.hint, f.hint)
		e.weight += f.weight
		e.tabPanel = e.tabPanel || f.tabPanel
		e.productBoilerplate = e.productBoilerplate || f.productBoilerplate
	}
	return e
}

// classInfo reads the class and id of n: the strongest hint and a weight
// (+25 per positive token, -25 per negative token) for content scoring.
func (pg *page) classInfo(n *html.Node) (h hint, weight int) {
	e := pg.elem(n)
	return e.hint, e.weight
}

func (pg *page) classHint(n *html.Node) hint {
	h, _ := pg.classInfo(n)
	return h
}

func (pg *page) classWeight(n *html.Node) float64 {
	_, w := pg.classInfo(n)
	return float64(w)
}
