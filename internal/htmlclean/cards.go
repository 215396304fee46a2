package htmlclean

import (
	"regexp"
	"strings"

	"github.com/firegate/firegate/internal/htmlattr"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

const (
	// minCards is the number of alike children that make a container a
	// grid of cards (products, listings, results).
	minCards = 6
	// minCardText is the mean text (non-space bytes) of a card.
	minCardText = 25
	// minPriceCards is the number of alike cards that make a grid when
	// every one has a picture and a price (a shop's short collection).
	minPriceCards = 3
	// maxCardGroups bounds the containers examined, for pathological pages.
	maxCardGroups = 4096
	// maxCardDepth bounds the wrappers protected inside a card.
	maxCardDepth = 8
)

// findCardGrid returns the container outside page chrome and
// blocks marked as boilerplate by their class (a sidebar) whose alike
// children (same tag and first class) form the largest grid of linked
// cards: at least minCards of them (minPriceCards when each has a
// picture and a price, on a page not marked as a single product), each with
// a link, with minCardText of text on average. It returns nil when there is none. The text of the grid
// is returned with it.
func findCardGrid(root *html.Node, pg *page) (*html.Node, int) {
	pk := pg.kind
	var best *html.Node
	bestText, examined := 0, 0
	for n := root; n != nil; {
		if n.Type == html.ElementNode && n != root && (isChrome(n) || n.DataAtom == atom.Header || n.DataAtom == atom.Aside ||
			n.DataAtom == atom.Menu || pg.classHint(n) == hintNegative) {
			n = next(n, root, true)
			continue
		}
		if n.Type == html.ElementNode {
			if sig, count := commonChild(n, minPriceCards); count >= minCards || (count >= minPriceCards && pk != kindProduct && firstPriced(n, sig)) {
				if examined++; examined > maxCardGroups {
					break
				}
				cards, text, priced := 0, 0, 0
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					if c.Type != html.ElementNode || signature(c) != sig {
						continue
					}
					st := proseStats{pg: pg}
					st.walk(c, false, 0)
					if st.link > 0 && st.text > 0 {
						cards++
						text += st.text
						if count < minCards && st.image && hasPrice(c) {
							priced++
						}
					}
				}
				enough := cards >= minCards || (cards >= minPriceCards && priced == cards)
				if enough && cards*5 >= count*4 && text >= minCardText*cards && text > bestText {
					best, bestText = n, text
				}
			}
		}
		n = next(n, root, false)
	}
	return best, bestText
}

// commonChild returns the most frequent signature among n's element
// children and its count.
func commonChild(n *html.Node, least int) (string, int) {
	kids := 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			kids++
		}
	}
	if kids < least {
		return "", 0
	}
	counts := map[string]int{}
	bestSig, best := "", 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		s := signature(c)
		counts[s]++
		if counts[s] > best {
			bestSig, best = s, counts[s]
		}
	}
	return bestSig, best
}

// signature is an element's tag and first class token.
func signature(n *html.Node) string {
	c, _ := htmlattr.Lookup(n, "class")
	f := strings.Fields(c)
	if len(f) == 0 {
		return n.Data
	}
	return n.Data + "." + f[0]
}

// gridCards returns, in every card of grid, the chain of wrappers that
// holds most of the card's text (a card's "card-wrapper", its "content"):
// a class word on them ("subscription-eligible", "promo-card") does not
// remove the cards the grid was kept for. Their tags, roles and visibility
// still count, and so does the rest of a card (a quick-shop form, a badge).
func gridCards(grid *html.Node, pg *page) map[*html.Node]bool {
	if pg.classHint(grid) == hintNav {
		// A menu's entries are not cards.
		return nil
	}
	cards := map[*html.Node]bool{}
	sig, _ := commonChild(grid, 1)
	for c := grid.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode || signature(c) != sig {
			continue
		}
		cards[c] = true
		// t is the text of n: the wrapper chosen at one depth is
		// measured once, as its parent's child.
		t := pg.textLen(c)
		for n, depth := c, 0; n != nil && depth < maxCardDepth; depth++ {
			var inner *html.Node
			innerText := 0
			for k := n.FirstChild; k != nil && t > 0; k = k.NextSibling {
				if k.Type != html.ElementNode {
					continue
				}
				if kt := pg.textLen(k); kt*5 >= t*4 {
					inner, innerText = k, kt
					break
				}
			}
			if inner != nil {
				cards[inner] = true
			}
			n, t = inner, innerText
		}
	}
	return cards
}

// price matches a price: a currency sign or code next to a number.
var price = regexp.MustCompile(`(?i)(?:[$€£¥₹]|\b(?:usd|eur|gbp|chf|cad|aud)\b) ?\d|\d(?:[.,]\d{2})? ?(?:[€£₹]|kr\b|zł|\b(?:usd|eur|gbp|chf)\b)`)

// firstPriced reports whether the first child of n with signature sig
// holds a price: a cheap test before a short group is measured.
func firstPriced(n *html.Node, sig string) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && signature(c) == sig {
			return hasPrice(c)
		}
	}
	return false
}

// hasPrice reports a price among the texts of n.
func hasPrice(n *html.Node) bool {
	for c := n; c != nil; c = next(c, n, false) {
		if c.Type == html.TextNode && price.MatchString(c.Data) {
			return true
		}
	}
	return false
}
