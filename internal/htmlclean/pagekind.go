package htmlclean

import (
	"net/url"
	"regexp"
	"strings"
	"unicode"

	"github.com/firegate/firegate/internal/htmlattr"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// pageKind is what the page's own markup says it is, read from its
// structured data (JSON-LD, Open Graph, microdata) before the scripts are
// removed.
type pageKind uint8

const (
	kindUnknown pageKind = iota
	kindProduct          // a single product (schema.org Product, og:type product)
	kindForum            // a discussion thread (schema.org DiscussionForumPosting, Comment)
	kindQA               // a question and its answers (schema.org QAPage)
	// kindArticle: a news or blog article (schema.org Article and its
	// kinds, og:type article), when no other kind applies.
	kindArticle
)

// isThread reports the kinds whose content is a run of posts by several
// people: a forum thread, a question and its answers.
func (k pageKind) isThread() bool { return k == kindForum || k == kindQA }

var ldForumType = regexp.MustCompile(`"@type"\s*:\s*(\[\s*)?"DiscussionForumPosting"`)

var ldQAType = regexp.MustCompile(`"@type"\s*:\s*(\[\s*)?"QAPage"`)

var ldArticleType = regexp.MustCompile(`"@type"\s*:\s*(\[\s*)?"(Article|NewsArticle|BlogPosting|ReportageNewsArticle|AnalysisNewsArticle|OpinionNewsArticle|LiveBlogPosting|TechArticle|ScholarlyArticle)"`)

var ldProductType = regexp.MustCompile(`"@type"\s*:\s*(\[\s*)?"(Product|ProductGroup|IndividualProduct)"`)

// detectKind reads doc's structured data for the kind of page: og:type
// product, or one to maxProductObjects schema.org Product objects (JSON-LD,
// else microdata), make a product page; og:type product.group, or more
// products, a collection of them. A page without markup but with one buy
// button ("Add to cart", or an id saying so; perhaps with a copy in a
// sticky bar) is a product page too.
func detectKind(doc *html.Node, u *url.URL) pageKind {
	products, og, group, micro, forum, qa := 0, false, false, 0, false, false
	article := false
	var carts []*html.Node
	for n := doc; n != nil; {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Button:
				if isAddToCart(textOf(n)) || addToCartID(n) {
					carts = append(carts, n)
				}
			case atom.Input:
				if v, _ := htmlattr.Lookup(n, "value"); isAddToCart(v) || addToCartID(n) {
					carts = append(carts, n)
				}
			case atom.Script:
				if t, _ := htmlattr.Lookup(n, "type"); strings.Contains(strings.ToLower(t), "ld+json") && n.FirstChild != nil {
					products += len(ldProductType.FindAllStringIndex(n.FirstChild.Data, -1))
					forum = forum || ldForumType.MatchString(n.FirstChild.Data)
					qa = qa || ldQAType.MatchString(n.FirstChild.Data)
					article = article || ldArticleType.MatchString(n.FirstChild.Data)
				}
				n = next(n, doc, true)
				continue
			case atom.Meta:
				if p, _ := htmlattr.Lookup(n, "property"); strings.EqualFold(p, "og:type") {
					c, _ := htmlattr.Lookup(n, "content")
					switch c = strings.ToLower(strings.TrimSpace(c)); {
					case strings.HasPrefix(c, "product.group"), strings.HasPrefix(c, "product:group"):
						group = true
					case c == "product" || c == "product.item" || strings.HasSuffix(c, ":product"):
						og = true
					case c == "article":
						article = true
					}
				}
			case atom.Style, atom.Svg, atom.Template:
				n = next(n, doc, true)
				continue
			}
			if it, ok := htmlattr.Lookup(n, "itemtype"); ok {
				switch it = strings.TrimRight(it, "/ "); {
				case strings.HasSuffix(it, "schema.org/Product"):
					micro++
				case strings.HasSuffix(it, "schema.org/DiscussionForumPosting"), strings.HasSuffix(it, "schema.org/Comment"):
					forum = true
				case strings.HasSuffix(it, "schema.org/QAPage"):
					qa = true
				case strings.HasSuffix(it, "schema.org/Article"), strings.HasSuffix(it, "schema.org/NewsArticle"),
					strings.HasSuffix(it, "schema.org/BlogPosting"):
					article = true
				}
			}
		}
		n = next(n, doc, false)
	}
	switch {
	case forum && !qa:
		// A question-and-answer page's comments are comments on its
		// posts, not posts.
		return kindForum
	case group:
		return kindUnknown
	case !forum && products == 0 && !og && micro == 0 && threadURL(u):
		// No thread markup, but the address names a thread: a
		// question-and-answer page of forum software whose answers
		// are its comments, or a page without markup.
		return kindForum
	case og, products >= 1 && products <= maxProductObjects, products == 0 && micro >= 1 && micro <= maxProductObjects:
		return kindProduct
	case qa:
		return kindQA
	case !forum && (len(carts) == 1 || len(carts) == 2 && !alikeCards(carts[0], carts[1])):
		return kindProduct
	case article:
		return kindArticle
	}
	return kindUnknown
}

// alikeCards reports two elements inside alike siblings (same tag and
// first class): the cards of a short collection, each with its buy button,
// not a product page's button and its copy in a sticky bar.
func alikeCards(a, b *html.Node) bool {
	for x := a; x != nil && x.Parent != nil; x = x.Parent {
		for y := b; y != nil && y.Parent != nil; y = y.Parent {
			if x.Parent == y.Parent {
				return x != y && strings.Contains(signature(x), ".") && signature(x) == signature(y)
			}
		}
	}
	return false
}

// addToCartID reports an id naming a buy button ("add-to-cart-button",
// "AddToCart").
func addToCartID(n *html.Node) bool {
	id, ok := htmlattr.Lookup(n, "id")
	if !ok {
		return false
	}
	ws := splitWords(id)
	for i := 0; i+2 < len(ws); i++ {
		if ws[i] == "add" && ws[i+1] == "to" && (ws[i+2] == "cart" || ws[i+2] == "bag" || ws[i+2] == "basket") {
			return true
		}
	}
	for _, w := range ws {
		if w == "addtocart" || w == "addtobag" || w == "addtobasket" {
			return true
		}
	}
	return false
}

// isAddToCart reports the text of a shop's buy button.
func isAddToCart(t string) bool {
	switch strings.ToLower(strings.Join(strings.Fields(t), " ")) {
	case "add to cart", "add to bag", "add to basket", "add to trolley":
		return true
	}
	return false
}

// threadURL reports an address whose path has a segment naming a
// discussion thread ("/forum/...", "/threads/...", "viewtopic.php",
// "/comments/...", "/t/<title>/<id>", "thread-222085.html",
// "index.php?topic=..."): the convention of forum software, whatever the
// site.
func threadURL(u *url.URL) bool {
	if u == nil {
		return false
	}
	segs := strings.FieldsFunc(strings.ToLower(u.Path), func(r rune) bool { return r == '/' || r == '.' })
	if len(segs) >= 2 && segs[0] == "t" {
		// "/t/<title>/<id>": the topic address of a common forum
		// software.
		return true
	}
	if u.Query().Has("topic") {
		// "index.php?topic=589061.0"
		return true
	}
	for _, seg := range segs {
		if (strings.HasPrefix(seg, "thread-") || strings.HasPrefix(seg, "topic-")) && len(seg) > 7 && seg[len(seg)-1] >= '0' && seg[len(seg)-1] <= '9' {
			// "thread-222085.html"
			return true
		}
		switch seg {
		case "forum", "forums", "thread", "threads", "showthread", "viewtopic", "discussion", "discussions", "comments":
			return true
		}
	}
	return false
}

// maxProductObjects: a page describing more products than this is a
// collection of them, not a product page.
const maxProductObjects = 4

// isProductBoilerplateWord reports class/id words that mark, on a product page,
// the blocks around the product: its reviews and ratings, questions and
// answers, and recommendations of other products.
func isProductBoilerplateWord(w string) bool {
	switch w {
	case "review", "reviews", "rating", "ratings", "bazaarvoice", "yotpo", "okendo", "stamped",
		"recommendation", "recommendations", "upsell", "crosssell", "carousel", "recently", "viewed", "qa", "questions":
		return true
	}
	return false
}

// isProductBoilerplateWords reports the words of a class or id token
// (splitWords) holding a product boilerplate word.
func isProductBoilerplateWords(ws []string) bool {
	for _, w := range ws {
		if isProductBoilerplateWord(w) {
			return true
		}
	}
	return false
}

// splitWords splits a class token into lower-case words on '-', '_', ':'
// and camelCase boundaries.
func splitWords(tok string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(tok); i++ {
		boundary := i == len(tok) || tok[i] == '-' || tok[i] == '_' || tok[i] == ':' ||
			(i > start && tok[i] >= 'A' && tok[i] <= 'Z' && tok[i-1] >= 'a' && tok[i-1] <= 'z')
		if !boundary {
			continue
		}
		if i > start {
			out = append(out, strings.ToLower(tok[start:i]))
		}
		if i < len(tok) && (tok[i] == '-' || tok[i] == '_' || tok[i] == ':') {
			start = i + 1
		} else {
			start = i
		}
	}
	return out
}

// productBoilerplateHeadings are the starts of the headings that introduce,
// on a product page, its reviews, questions and recommendations.
var productBoilerplateHeadings = []string{
	"reviews", "customer reviews", "ratings", "ratings & reviews", "ratings and reviews", "reviews &",
	"questions & answers", "questions and answers", "customer questions", "customers also",
	"customers who", "people who", "frequently bought", "similar items", "similar products",
	"recently viewed", "featured products", "complete the look", "pair it with", "shop the look",
	"need help", "more from this", "explore related", "sponsored",
}

func isProductBoilerplateHeading(text string) bool {
	t := strings.ToLower(strings.Join(strings.Fields(text), " "))
	t = strings.TrimLeftFunc(t, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if t == "" || len(t) > 80 {
		return false
	}
	for _, h := range productBoilerplateHeadings {
		if strings.HasPrefix(t, h) && (len(t) == len(h) || !startsWithLetter(t[len(h):])) {
			return true
		}
	}
	return false
}
