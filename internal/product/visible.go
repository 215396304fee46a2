package product

import (
	"regexp"
	"strings"

	"github.com/firegate/firegate/internal/htmlattr"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// readVisible reads the rendered page: breadcrumbs, price elements (or
// prices in the text), stock wording, the product image and the page's
// currency.
func readVisible(pg *page) {
	findCrumbs(pg, pg.body)
	v := visibleWalk{pg: pg, h1At: -1}
	v.walk(pg.body, false, false)
	pg.prices = v.prices
	if len(pg.prices) == 0 {
		text := v.text.String()
		// Prices above the product's heading belong to banners and
		// navigation ("free delivery over £50").
		if v.h1At >= 0 && len(findMoney(text[v.h1At:])) > 0 {
			text = text[v.h1At:]
		}
		pricesInText(pg, text)
	}
	pg.sku = v.sku
	for _, p := range pg.prices {
		pg.shown = append(pg.shown, p.money)
	}
	pg.stock = stockOf(v.text.String(), v.cartButton)
	pg.currencyHint = currencyCode(firstNonEmpty(pg.meta["product:price:currency"], pg.meta["og:price:currency"], pg.meta["pricecurrency"]))
	if pg.currencyHint == "" {
		for _, p := range pg.prices {
			if p.currency != "" {
				pg.currencyHint = p.currency
				break
			}
		}
	}
	if dollars[pg.currencyHint] && pg.currencyHint != "USD" {
		for i := range pg.prices {
			if pg.prices[i].currency == "USD" && strings.HasPrefix(pg.prices[i].text, "$") {
				pg.prices[i].currency = pg.currencyHint
			}
		}
		for i := range pg.shown {
			if pg.shown[i].currency == "USD" && strings.HasPrefix(pg.shown[i].text, "$") {
				pg.shown[i].currency = pg.currencyHint
			}
		}
	}
	pg.image = v.image
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// classID is an element's class, id and data-price-type in lower case.
func classID(n *html.Node) string {
	return strings.ToLower(htmlattr.Get(n, "class") + " " + htmlattr.Get(n, "id") + " " + htmlattr.Get(n, "data-price-type"))
}

// skipSection reports whether an element holds page furniture whose
// prices and images are not the product's: site header, navigation,
// footer, cart, related and recommended products.
func skipSection(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Header, atom.Nav, atom.Footer, atom.Aside, atom.Script, atom.Style, atom.Template, atom.Noscript, atom.Select, atom.Option:
		return true
	}
	c := classID(n)
	for _, w := range []string{"minicart", "mini-cart", "cart-drawer", "related", "upsell", "up-sell", "cross-sell", "crosssell", "recommend", "recently", "newsletter", "site-header", "site-footer"} {
		if strings.Contains(c, w) {
			return true
		}
	}
	return false
}

// originalCues in a class or id mark an element as showing the price
// before a discount.
var originalCues = []string{"old", "was", "regular", "compare", "original", "strike", "crossed", "listprice", "list-price", "rrp", "msrp", "before"}

// originalCue reports whether class-and-id text c carries an originalCue.
func originalCue(c string) bool {
	for _, w := range originalCues {
		if strings.Contains(c, w) {
			return true
		}
	}
	return false
}

// cartLabel is the wording of an add-to-cart button.
var cartLabel = regexp.MustCompile(`add[ -]to[ -](cart|bag|basket)|buy now|in den warenkorb|ajouter au panier`)

// visibleWalk gathers the visible facts in one walk.
type visibleWalk struct {
	pg         *page
	prices     []shownPrice
	text       strings.Builder
	cartButton bool
	image      *Image
	h1At       int // offset in text of the first h1, -1 before it
	sku        string
	skuByProp  bool // sku came from itemprop="sku"
}

// walk visits n; orig says an ancestor marks an old price, gallery that an
// ancestor is a product gallery. It reports whether n's subtree recorded a
// price.
func (w *visibleWalk) walk(n *html.Node, orig, gallery bool) bool {
	switch n.Type {
	case html.TextNode:
		w.text.WriteString(n.Data)
		return false
	case html.ElementNode:
	default:
		if n.Type != html.DocumentNode {
			return false
		}
	}
	if n.Type == html.ElementNode {
		if skipSection(n) {
			return false
		}
		switch n.DataAtom {
		case atom.Del, atom.S, atom.Strike:
			orig = true
		case atom.H1:
			if w.h1At < 0 {
				w.h1At = w.text.Len()
			}
			w.text.WriteByte(' ')
		case atom.Br, atom.P, atom.Div, atom.Li, atom.Td, atom.H2, atom.H3, atom.Tr, atom.Span:
			w.text.WriteByte(' ')
		case atom.Button, atom.Input:
			label := strings.ToLower(textOf(n) + " " + htmlattr.Get(n, "value") + " " + htmlattr.Get(n, "name"))
			if !hasAttr(n, "disabled") && cartLabel.MatchString(label) {
				w.cartButton = true
			}
		case atom.Img:
			if gallery && w.image == nil {
				src := firstNonEmpty(htmlattr.Get(n, "data-large_image"), htmlattr.Get(n, "data-zoom-image"), htmlattr.Get(n, "data-src"), htmlattr.Get(n, "src"))
				if u := (reader{pg: w.pg}).absURL(src); u != "" && !strings.HasPrefix(src, "data:") {
					w.image = &Image{URL: u, Alt: htmlattr.Get(n, "alt")}
				}
			}
		}
		c := classID(n)
		switch {
		case strings.EqualFold(htmlattr.Get(n, "itemprop"), "sku") && !w.skuByProp:
			w.sku, w.skuByProp = clean(textOf(n)), true
		case w.sku == "" && hasClass(n, "sku"):
			w.sku = clean(textOf(n))
		}
		if originalCue(c) && !strings.Contains(c, "special") {
			orig = true
		}
		if strings.Contains(c, "gallery") || strings.Contains(c, "product-image") || strings.Contains(c, "product__media") || strings.Contains(c, "product-media") {
			gallery = true
		}
	}
	found := false
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if w.walk(c, orig, gallery) {
			found = true
		}
	}
	if found || n.Type != html.ElementNode || !isPriceElement(n) {
		return found
	}
	ms := findMoney(clean(textOf(n)))
	if len(ms) == 0 {
		a, ok := parseAmount(htmlattr.Get(n, "data-price-amount"))
		if !ok {
			a, ok = parseAmount(htmlattr.Get(n, "content"))
		}
		if !ok {
			return false
		}
		ms = []moneyAt{{money: money{amount: a}}}
	}
	w.prices = append(w.prices, shownPrice{money: ms[0].money, original: orig})
	return true
}

// hasClass reports whether n has the class token c.
func hasClass(n *html.Node, c string) bool {
	for f := range strings.FieldsSeq(htmlattr.Get(n, "class")) {
		if f == c {
			return true
		}
	}
	return false
}

// isPriceElement reports whether an element is marked as a price by its
// class, id, itemprop or data attributes.
func isPriceElement(n *html.Node) bool {
	if hasAttr(n, "data-price-amount") || strings.EqualFold(htmlattr.Get(n, "itemprop"), "price") {
		return true
	}
	c := strings.ToLower(htmlattr.Get(n, "class") + " " + htmlattr.Get(n, "id"))
	return strings.Contains(c, "price") && !strings.Contains(c, "label") && !strings.Contains(c, "currency")
}

// wasCue precedes an old price in running text.
var wasCue = regexp.MustCompile(`(?i)(was|rrp|msrp|regular(ly)?|previously|list price|instead of|original(ly)?|statt|uvp|before|compare at)\W*$`)

// pricesInText finds prices in the page's text when no element is marked
// as one.
func pricesInText(pg *page, text string) {
	for _, m := range findMoney(text) {
		pre := text[max(0, m.start-30):m.start]
		pg.prices = append(pg.prices, shownPrice{money: m.money, original: wasCue.MatchString(pre)})
	}
}

var (
	outOfStock = regexp.MustCompile(`(?i)\b(out of stock|sold out|currently unavailable|not available|unavailable|nicht verfügbar|ausverkauft|épuisé|agotado)\b`)
	inStock    = regexp.MustCompile(`(?i)\b(in stock|available now|only \d+ left|ready to ship|auf lager|en stock)\b`)
)

// stockOf reads the page's stock wording; a usable add-to-cart button
// counts as in stock.
func stockOf(text string, cartButton bool) *Availability {
	if m := outOfStock.FindString(text); m != "" {
		return &Availability{InStock: false, Text: m}
	}
	if m := inStock.FindString(text); m != "" {
		return &Availability{InStock: true, Text: m}
	}
	if cartButton {
		return &Availability{InStock: true}
	}
	return nil
}

// findCrumbs reads a breadcrumb trail from the page when the markup gave
// none: an element whose class, id or aria-label says breadcrumb.
func findCrumbs(pg *page, n *html.Node) {
	if len(pg.htmlCrumbs) > 0 || n == nil {
		return
	}
	if n.Type == html.ElementNode {
		c := strings.ToLower(htmlattr.Get(n, "class") + " " + htmlattr.Get(n, "id") + " " + htmlattr.Get(n, "aria-label"))
		if strings.Contains(c, "breadcrumb") && n.DataAtom != atom.Li && n.DataAtom != atom.A && n.DataAtom != atom.Span {
			if names := crumbNames(n); len(names) > 0 {
				pg.htmlCrumbs = names
				return
			}
		}
	}
	for c := n.FirstChild; c != nil && len(pg.htmlCrumbs) == 0; c = c.NextSibling {
		findCrumbs(pg, c)
	}
}

// crumbSep splits a breadcrumb written as plain text.
var crumbSep = regexp.MustCompile(`\s*(?:›|»|>|/|\||→|·)\s*`)

// crumbNames returns the names of a breadcrumb element: its items' texts,
// else its links' texts and the trailing text, else its text split at
// the separators.
func crumbNames(n *html.Node) []string {
	var lis, links []string
	var walk func(*html.Node)
	walk = func(c *html.Node) {
		for ; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.DataAtom {
			case atom.Li:
				if s := strings.Trim(clean(textOf(c)), "›»>/|→· "); s != "" {
					lis = append(lis, s)
				}
				continue
			case atom.A:
				if s := clean(textOf(c)); s != "" {
					links = append(links, s)
				}
				continue
			}
			walk(c.FirstChild)
		}
	}
	walk(n.FirstChild)
	if len(lis) > 0 {
		return lis
	}
	var out []string
	for _, part := range crumbSep.Split(clean(textOf(n)), -1) {
		if part != "" {
			out = append(out, part)
		}
	}
	if len(out) > 1 {
		return out
	}
	return links
}

// fromMeta builds a product from Open Graph and product:* meta tags; nil
// unless they describe a product.
func fromMeta(pg *page) *Product {
	m := pg.meta
	amountKey := firstNonEmpty(m["product:price:amount"], m["og:price:amount"])
	if !strings.HasPrefix(m["og:type"], "product") && amountKey == "" && m["product:sale_price:amount"] == "" {
		return nil
	}
	r := reader{pg: pg}
	p := &Product{
		Title:       m["og:title"],
		Description: m["og:description"],
		Brand:       firstNonEmpty(m["product:brand"], m["og:brand"]),
		URL:         r.absURL(m["og:url"]),
		Category:    m["product:category"],
	}
	v := Variant{ID: m["product:retailer_item_id"], SKU: firstNonEmpty(m["product:sku"], m["product:retailer_item_id"])}
	cur := currencyCode(firstNonEmpty(m["product:price:currency"], m["og:price:currency"]))
	if a, ok := parseAmount(m["product:sale_price:amount"]); ok {
		v.Price = &Price{Amount: a, Currency: firstNonEmpty(currencyCode(m["product:sale_price:currency"]), cur)}
		if o, ok := parseAmount(amountKey); ok {
			v.Sale = &Sale{OriginalPrice: Price{Amount: o, Currency: cur}}
		}
	} else if a, ok := parseAmount(amountKey); ok {
		v.Price = &Price{Amount: a, Currency: cur}
	}
	if o, ok := parseAmount(m["product:original_price:amount"]); ok && v.Price != nil && v.Sale == nil {
		v.Sale = &Sale{OriginalPrice: Price{Amount: o, Currency: firstNonEmpty(currencyCode(m["product:original_price:currency"]), cur)}}
	}
	if av := firstNonEmpty(m["product:availability"], m["og:availability"]); av != "" {
		v.Availability = schemaAvailability(av)
	}
	if img := r.absURL(firstNonEmpty(m["og:image:secure_url"], m["og:image"])); img != "" {
		v.Images = []Image{{URL: img, Alt: m["og:image:alt"]}}
	}
	p.Variants = []Variant{v}
	return p
}

// fromVisible builds a product from the visible page: the h1 and the
// first current and old price.
func fromVisible(pg *page) *Product {
	title := firstNonEmpty(pg.h1, pg.title)
	var cur, orig *money
	for i := range pg.prices {
		sp := &pg.prices[i]
		switch {
		case !sp.original && cur == nil:
			cur = &sp.money
		case sp.original && orig == nil:
			orig = &sp.money
		}
	}
	if cur == nil && orig != nil { // the only price is the regular one
		cur, orig = orig, nil
	}
	v := Variant{SKU: pg.sku, ID: pg.sku}
	if cur != nil {
		v.Price = &Price{Amount: cur.amount, Currency: cur.currency, Formatted: cur.text}
		if orig != nil && orig.amount > cur.amount {
			v.Sale = &Sale{OriginalPrice: Price{Amount: orig.amount, Currency: firstNonEmpty(orig.currency, cur.currency), Formatted: orig.text}}
		}
	}
	if pg.image != nil {
		v.Images = []Image{*pg.image}
	}
	return &Product{Title: title, Variants: []Variant{v}}
}
