package htmlclean

import (
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxRecCard bounds the text of a card of other products.
const maxRecCard = 300

// removeProductCards removes, on a product page, the rows of other
// products: a container of at least minPriceCards alike children, each a
// short card with a link and a price (a carousel of recommendations,
// "frequently bought together"), that does not hold the anchor and is not
// the page's card grid or in it (a listing marked up as products).
func removeProductCards(root, anchor, grid *html.Node) {
	var rows []*html.Node
	examined := 0
	for n := root; n != nil; {
		if n.Type != html.ElementNode || n == root {
			n = next(n, root, false)
			continue
		}
		sig, count := commonChild(n, minPriceCards)
		if count >= minPriceCards && !holdsNode(n, anchor) && !holdsNode(n, grid) && !holdsNode(grid, n) {
			if examined++; examined > maxCardGroups {
				break
			}
			cards, linked := 0, 0
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type != html.ElementNode || signature(c) != sig {
					continue
				}
				cards++
				if textLen(c) <= maxRecCard && findElement(c, atom.A) != nil && hasPrice(c) {
					linked++
				}
			}
			if linked == cards {
				rows = append(rows, n)
				n = next(n, root, true)
				continue
			}
		}
		n = next(n, root, false)
	}
	for _, r := range rows {
		if r.Parent != nil {
			r.Parent.RemoveChild(r)
		}
	}
}

// holdsNode reports whether n is or holds x.
func holdsNode(n, x *html.Node) bool {
	return x != nil && isAncestor(n, x)
}
