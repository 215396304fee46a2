// Package product extracts a product (title, brand, category, variants with
// prices, sale prices, availability and images) from a parsed HTML page
// without a language model.
//
// Sources, in order of trust: schema.org Product, ProductGroup, Offer and
// AggregateOffer in JSON-LD (including @graph, arrays and @id references),
// the same vocabulary in microdata and RDFa, Open Graph and product:* meta
// tags, and last the visible page (h1, price markup, breadcrumbs, stock
// wording). A later source only fills fields the earlier ones left empty.
// Everything here is a pure function of the *html.Node tree.
package product

import (
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// Product is the product format of a scrape.
type Product struct {
	Title       string    `json:"title,omitempty"`
	Brand       string    `json:"brand,omitempty"`
	Category    string    `json:"category,omitempty"`
	URL         string    `json:"url,omitempty"`
	Description string    `json:"description,omitempty"`
	Variants    []Variant `json:"variants"`
}

// Variant is one purchasable variant (or the product itself when it has
// none). Availability is always present.
type Variant struct {
	ID           string            `json:"id,omitempty"`
	SKU          string            `json:"sku,omitempty"`
	Title        string            `json:"title,omitempty"`
	Values       map[string]string `json:"values,omitempty"`
	Price        *Price            `json:"price,omitempty"`
	Sale         *Sale             `json:"sale,omitempty"`
	Availability Availability      `json:"availability"`
	Images       []Image           `json:"images,omitempty"`
}

// Price is an amount in a currency (ISO 4217 code) and as displayed.
type Price struct {
	Amount    float64 `json:"amount"`
	Currency  string  `json:"currency,omitempty"`
	Formatted string  `json:"formatted,omitempty"`
}

// Sale is present when a variant is discounted: OriginalPrice is the price
// before the discount, Price of the variant the price now.
type Sale struct {
	OriginalPrice Price `json:"originalPrice"`
}

// Availability says whether a variant can be bought now; Text is the
// wording (schema.org's, or the page's).
type Availability struct {
	InStock bool   `json:"inStock"`
	Text    string `json:"text,omitempty"`
}

// Image is one product image.
type Image struct {
	URL string `json:"url"`
	Alt string `json:"alt,omitempty"`
}

// Extract returns the page's product, or nil when the page shows none
// (no product markup, no product meta tags and no visible price).
// pageURL resolves relative URLs; it may be nil.
func Extract(doc *html.Node, pageURL *url.URL) *Product {
	pg := scanPage(doc, pageURL)
	var found []*Product
	for _, items := range [][]obj{pg.jsonld, pg.microdata, pg.rdfa} {
		if p := fromItems(items, pg); p != nil {
			found = append(found, p)
		}
	}
	if p := fromMeta(pg); p != nil {
		found = append(found, p)
	}
	if vis := fromVisible(pg); vis != nil && (len(found) > 0 || hasPrice(vis)) {
		found = append(found, vis)
	}
	if len(found) == 0 {
		return nil
	}
	p := found[0]
	for _, q := range found[1:] {
		merge(p, q)
	}
	finish(p, pg)
	return p
}

// Complete reports whether p has a title and a price on every variant,
// so a model has nothing essential to add.
func Complete(p *Product) bool {
	if p == nil || p.Title == "" || len(p.Variants) == 0 {
		return false
	}
	for _, v := range p.Variants {
		if v.Price == nil {
			return false
		}
	}
	return true
}

// Fill completes p with what q has and p lacks: empty strings, missing
// variants, and per variant (when both list the same number, or p has a
// single one) empty ids, prices, availability wording and images. A
// field p has is never changed.
func Fill(p, q *Product) {
	if p == nil || q == nil {
		return
	}
	if len(p.Variants) > 1 && len(q.Variants) == len(p.Variants) {
		fillStrings(p, q)
		for i := range p.Variants {
			one := &Product{Variants: []Variant{q.Variants[i]}}
			tmp := &Product{Variants: []Variant{p.Variants[i]}}
			merge(tmp, one)
			p.Variants[i] = tmp.Variants[0]
		}
		return
	}
	merge(p, q)
}

func fillStrings(p, q *Product) {
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&p.Title, q.Title}, {&p.Brand, q.Brand}, {&p.Category, q.Category}, {&p.URL, q.URL}, {&p.Description, q.Description},
	} {
		if *f.dst == "" {
			*f.dst = f.src
		}
	}
}

// hasPrice reports whether any variant of p has a price.
func hasPrice(p *Product) bool {
	for _, v := range p.Variants {
		if v.Price != nil {
			return true
		}
	}
	return false
}

// merge fills what p lacks from q.
func merge(p, q *Product) {
	fill := func(dst *string, src string) {
		if *dst == "" {
			*dst = src
		}
	}
	fillStrings(p, q)
	if len(p.Variants) == 0 {
		p.Variants = q.Variants
		return
	}
	if len(q.Variants) == 0 {
		return
	}
	// A lesser source describes the product as a whole: it can only
	// complete variants when there is no doubt which one it means.
	src := q.Variants[0]
	for i := range p.Variants {
		v := &p.Variants[i]
		if len(p.Variants) > 1 && (v.Price != nil || src.Price == nil) {
			if len(v.Images) == 0 {
				v.Images = src.Images
			}
			continue
		}
		fill(&v.ID, src.ID)
		fill(&v.SKU, src.SKU)
		if v.Price == nil {
			v.Price, v.Sale = src.Price, src.Sale
		} else if v.Sale == nil && src.Sale != nil && src.Price != nil && src.Price.Amount == v.Price.Amount {
			v.Sale = src.Sale
		}
		if v.Price != nil && v.Price.Currency == "" && src.Price != nil && src.Price.Amount == v.Price.Amount {
			v.Price.Currency = src.Price.Currency
		}
		if v.Price != nil && v.Price.Formatted == "" && src.Price != nil && src.Price.Amount == v.Price.Amount {
			v.Price.Formatted = src.Price.Formatted
		}
		if v.Availability.Text == "" && src.Availability.Text != "" {
			v.Availability = src.Availability
		}
		if len(v.Images) == 0 {
			v.Images = src.Images
		}
	}
}

// finish applies page-wide facts: the breadcrumb category, the page URL,
// currencies and display strings, and drops sale prices that are not
// higher than the price.
func finish(p *Product, pg *page) {
	crumbs := pg.crumbs
	if len(crumbs) == 0 {
		crumbs = pg.htmlCrumbs
	}
	if path := crumbPath(crumbs, p.Title); path != "" {
		p.Category = path
	}
	if p.URL == "" && pg.url != nil {
		p.URL = pg.url.String()
	}
	if p.Variants == nil {
		p.Variants = []Variant{}
	}
	for i := range p.Variants {
		v := &p.Variants[i]
		if v.Price != nil && v.Price.Currency == "" {
			v.Price.Currency = pg.currencyHint
		}
		if v.Sale != nil {
			if v.Sale.OriginalPrice.Currency == "" && v.Price != nil {
				v.Sale.OriginalPrice.Currency = v.Price.Currency
			}
			if v.Price == nil || v.Sale.OriginalPrice.Amount <= v.Price.Amount {
				v.Sale = nil
			}
		}
		formatPrice(v.Price, pg)
		if v.Sale != nil {
			formatPrice(&v.Sale.OriginalPrice, pg)
		}
		if v.Availability.Text == "" && pg.stock != nil {
			v.Availability = *pg.stock
		}
		if v.Title == "" && len(p.Variants) == 1 {
			v.Title = p.Title
		}
	}
}

// formatPrice sets Formatted from the page's own display of the amount
// when there is one, else writes it in the currency's usual form.
func formatPrice(pr *Price, pg *page) {
	if pr == nil || pr.Formatted != "" {
		return
	}
	for _, m := range pg.shown {
		sameCur := m.currency == pr.Currency || m.currency == "USD" && strings.HasPrefix(m.text, "$") && dollars[pr.Currency]
		if m.text != "" && m.amount == pr.Amount && (m.currency == "" || sameCur) {
			pr.Formatted = m.text
			return
		}
	}
	pr.Formatted = formatAmount(pr.Amount, pr.Currency)
}

// clean collapses white space.
func clean(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
