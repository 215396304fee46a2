package htmlclean

import (
	"golang.org/x/net/html"
)

// page holds what the main-content rules of one Clean call share: the
// page's kind and the facts computed once per page and read by every rule
// instead of being worked out again for each element and each rule.
type page struct {
	kind pageKind
	// values caches what a class or id attribute value says, by value:
	// a page repeats the same few values on many elements.
	values map[string]valueFacts
}

func newPage(pk pageKind) *page {
	return &page{kind: pk, values: map[string]valueFacts{}}
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

// facts returns the facts of an attribute value, computing them the first
// time the page shows it.
func (pg *page) facts(v string) valueFacts {
	if f, ok := pg.values[v]; ok {
		return f
	}
	var f valueFacts
	f.hint, f.weight = valueInfo(v, pg.kind)
	f.tabPanel = tabPanelValue(v)
	f.productBoilerplate = productBoilerplateValue(v)
	f.hidden = hiddenByClass(v)
	pg.values[v] = f
	return f
}

// classInfo reads the class and id of n: the strongest hint and a weight
// (+25 per positive token, -25 per negative token) for content scoring.
func (pg *page) classInfo(n *html.Node) (h hint, weight int) {
	for _, a := range n.Attr {
		if a.Namespace != "" || (a.Key != "class" && a.Key != "id") {
			continue
		}
		f := pg.facts(a.Val)
		weight += f.weight
		h = strongerHint(h, f.hint)
	}
	return h, weight
}

func (pg *page) classHint(n *html.Node) hint {
	h, _ := pg.classInfo(n)
	return h
}

func (pg *page) classWeight(n *html.Node) float64 {
	_, w := pg.classInfo(n)
	return float64(w)
}

// productBoilerplate reports an element whose class or id holds a product
// boilerplate word.
func (pg *page) productBoilerplate(n *html.Node) bool {
	for _, a := range n.Attr {
		if a.Namespace != "" || (a.Key != "class" && a.Key != "id") {
			continue
		}
		if pg.facts(a.Val).productBoilerplate {
			return true
		}
	}
	return false
}
