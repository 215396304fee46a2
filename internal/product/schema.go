package product

import (
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// obj is one schema.org item as a JSON-LD object. Microdata and RDFa items
// are converted to the same shape, so one reader serves all three.
type obj = map[string]any

// localName strips a vocabulary prefix: "https://schema.org/InStock",
// "schema:InStock" and "InStock" all become "InStock".
func localName(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexAny(s, "/#"); i >= 0 && strings.Contains(s, "schema.org") {
		return s[i+1:]
	}
	if i := strings.IndexByte(s, ':'); i >= 0 && !strings.Contains(s, "//") {
		return s[i+1:]
	}
	return s
}

// types returns an item's local type names.
func types(o obj) []string {
	var out []string
	for _, t := range list(o["@type"]) {
		if s, ok := t.(string); ok {
			for f := range strings.FieldsSeq(s) {
				out = append(out, localName(f))
			}
		}
	}
	return out
}

func isType(o obj, names ...string) bool {
	for _, t := range types(o) {
		if slices.Contains(names, t) {
			return true
		}
	}
	return false
}

// list returns v as a slice: nil for nil, itself for a slice, else [v].
func list(v any) []any {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return x
	default:
		return []any{x}
	}
}

// text returns a scalar as a trimmed string: strings, numbers, booleans,
// {"@value": x}, or an item's name; the first of a list.
func text(v any) string {
	switch x := v.(type) {
	case string:
		return clean(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case []any:
		for _, e := range x {
			if s := text(e); s != "" {
				return s
			}
		}
	case obj:
		if s := text(x["@value"]); s != "" {
			return s
		}
		return text(x["name"])
	}
	return ""
}

// graph indexes JSON-LD items by @id so references resolve.
type graph struct {
	byID map[string]obj
}

// resolve follows an {"@id": ...} reference to its full item.
func (g *graph) resolve(v any) any {
	o, ok := v.(obj)
	if !ok || g == nil {
		return v
	}
	if id, ok := o["@id"].(string); ok && len(o) == 1 {
		if full, ok := g.byID[id]; ok {
			return full
		}
	}
	return o
}

// objs returns the items of v (a value or list), references resolved.
func (g *graph) objs(v any) []obj {
	var out []obj
	for _, e := range list(v) {
		if o, ok := g.resolve(e).(obj); ok {
			out = append(out, o)
		}
	}
	return out
}

// collect walks a decoded JSON-LD value and returns every typed item in
// document order, nested ones included, and indexes them by @id.
func collect(v any, g *graph, out []obj) []obj {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			out = collect(e, g, out)
		}
	case obj:
		if x["@type"] != nil {
			out = append(out, x)
			if id, ok := x["@id"].(string); ok && id != "" {
				if _, seen := g.byID[id]; !seen {
					g.byID[id] = x
				}
			}
		}
		for k, e := range x {
			if k == "@type" || k == "@context" {
				continue
			}
			out = collect(e, g, out)
		}
	}
	return out
}

// productTypes are the schema.org types read as products.
var productTypes = []string{"Product", "ProductGroup", "IndividualProduct", "ProductModel", "SomeProducts", "Vehicle", "Car"}

// fromItems builds the product of one source's items: its ProductGroup
// when it has one, else its first product that is not a variant of
// another.
func fromItems(items []obj, pg *page) *Product {
	g := &graph{byID: map[string]obj{}}
	var all []obj
	for _, it := range items {
		all = collect(it, g, all)
	}
	for _, o := range all {
		if isType(o, "BreadcrumbList") && len(pg.crumbs) == 0 {
			pg.crumbs = breadcrumbNames(o, g)
		}
	}
	var main obj
	for _, o := range all {
		if isType(o, "ProductGroup") {
			main = o
			break
		}
	}
	if main == nil {
		for _, o := range all {
			if isType(o, productTypes...) && o["isVariantOf"] == nil {
				main = o
				break
			}
		}
	}
	if main == nil {
		for _, o := range all {
			if isType(o, productTypes...) {
				main = o
				break
			}
		}
	}
	if main == nil {
		return nil
	}
	r := reader{g: g, pg: pg}
	p := &Product{
		Title:       text(main["name"]),
		Brand:       r.brand(main),
		Description: text(main["description"]),
		URL:         r.absURL(text(main["url"])),
		Category:    r.category(main["category"]),
	}
	images := r.images(main["image"])
	if isType(main, "ProductGroup") {
		axes := varyBy(main)
		variants := g.objs(main["hasVariant"])
		if len(variants) == 0 { // variants that point to the group instead
			id, _ := main["@id"].(string)
			gid := text(main["productGroupID"])
			for _, o := range all {
				if !isType(o, productTypes...) || isType(o, "ProductGroup") {
					continue
				}
				for _, ref := range list(o["isVariantOf"]) {
					ro, _ := ref.(obj)
					if ro != nil && ((id != "" && ro["@id"] == id) || (gid != "" && text(ro["productGroupID"]) == gid)) {
						variants = append(variants, o)
					}
				}
			}
		}
		for _, v := range variants {
			p.Variants = append(p.Variants, r.variantOf(v, axes, images)...)
		}
		if len(p.Variants) == 0 {
			p.Variants = r.variantOf(main, axes, images)
		}
	} else {
		p.Variants = r.variantOf(main, nil, images)
	}
	return p
}

// varyBy returns the property names a ProductGroup's variants differ in.
func varyBy(group obj) []string {
	var out []string
	for _, v := range list(group["variesBy"]) {
		if s := localName(text(v)); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// commonAxes are variant properties read even when variesBy is absent.
var commonAxes = []string{"color", "size", "material", "pattern", "width", "height", "depth", "weight", "suggestedGender", "suggestedAge"}

// reader turns items into product fields.
type reader struct {
	g  *graph
	pg *page
}

func (r reader) absURL(s string) string {
	if s == "" || r.pg == nil || r.pg.url == nil {
		return s
	}
	u, err := r.pg.url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	return u.String()
}

func (r reader) brand(o obj) string {
	for _, k := range []string{"brand", "manufacturer"} {
		for _, b := range list(o[k]) {
			if s := text(r.g.resolve(b)); s != "" {
				return s
			}
		}
	}
	return ""
}

// category reads schema.org category: a string (Google's "A > B" paths
// included), a list of them, or Thing items.
func (r reader) category(v any) string {
	var parts []string
	for _, c := range list(v) {
		if s := text(r.g.resolve(c)); s != "" && !strings.HasPrefix(s, "http") {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " > ")
}

func (r reader) images(v any) []Image {
	var out []Image
	seen := map[string]bool{}
	for _, e := range list(v) {
		var u, alt string
		switch x := r.g.resolve(e).(type) {
		case string:
			u = x
		case obj:
			u = text(x["contentUrl"])
			if u == "" {
				u = text(x["url"])
			}
			alt = text(x["caption"])
			if alt == "" {
				alt = text(x["name"])
			}
		}
		if u = r.absURL(strings.TrimSpace(u)); u != "" && !seen[u] {
			seen[u] = true
			out = append(out, Image{URL: u, Alt: alt})
		}
	}
	return out
}

// variantOf returns the variants of item o: one per offer when a plain
// product lists several offers (how Shopify themes describe variants),
// else one carrying the product's first offer.
func (r reader) variantOf(o obj, axes []string, fallbackImages []Image) []Variant {
	base := Variant{
		ID:    text(o["productID"]),
		SKU:   text(o["sku"]),
		Title: text(o["name"]),
	}
	if base.ID == "" {
		ref := text(o["@id"])
		base.ID = firstNonEmpty(variantParam(ref), idFromRef(ref))
	}
	base.Values = map[string]string{}
	for _, k := range append(slices.Clone(axes), commonAxes...) {
		if _, done := base.Values[k]; done {
			continue
		}
		if s := text(r.g.resolve(o[k])); s != "" {
			base.Values[k] = s
		}
	}
	for _, ap := range r.g.objs(o["additionalProperty"]) {
		if n, v := text(ap["name"]), text(ap["value"]); n != "" && v != "" && len(axes) > 0 && slices.Contains(axes, n) {
			base.Values[n] = v
		}
	}
	if len(base.Values) == 0 {
		base.Values = nil
	}
	base.Images = r.images(o["image"])
	if len(base.Images) == 0 {
		base.Images = fallbackImages
	}
	offers := r.offers(o["offers"])
	if len(offers) <= 1 || len(axes) > 0 || isType(o, "ProductGroup") {
		v := base
		if len(offers) > 0 {
			r.applyOffer(&v, offers[0])
		} else {
			v.Availability = Availability{}
		}
		return []Variant{v}
	}
	out := make([]Variant, 0, len(offers))
	for _, of := range offers {
		v := base
		if s := text(of["sku"]); s != "" {
			v.SKU = s
		}
		if s := text(of["name"]); s != "" {
			v.Title = s
		}
		v.ID = ""
		r.applyOffer(&v, of)
		if v.ID == "" {
			v.ID = v.SKU
		}
		out = append(out, v)
	}
	return out
}

// offers flattens offers: AggregateOffers with an offers list expand to
// it, one without stands for itself (its lowPrice read as the price).
func (r reader) offers(v any) []obj {
	var out []obj
	for _, of := range r.g.objs(v) {
		if isType(of, "AggregateOffer") {
			if inner := r.g.objs(of["offers"]); len(inner) > 0 {
				for _, in := range inner {
					if in["priceCurrency"] == nil && of["priceCurrency"] != nil {
						in = mapsClone(in)
						in["priceCurrency"] = of["priceCurrency"]
					}
					out = append(out, in)
				}
				continue
			}
		}
		out = append(out, of)
	}
	return out
}

func mapsClone(o obj) obj {
	c := make(obj, len(o)+1)
	for k, v := range o {
		c[k] = v
	}
	return c
}

// applyOffer sets a variant's price, sale, availability and id from an
// offer.
func (r reader) applyOffer(v *Variant, of obj) {
	cur := currencyCode(text(of["priceCurrency"]))
	amount, ok := priceValue(of["price"])
	if !ok {
		amount, ok = priceValue(of["lowPrice"])
	}
	var original *Price
	for _, spec := range r.g.objs(of["priceSpecification"]) {
		a, aok := priceValue(spec["price"])
		if !aok {
			continue
		}
		c := currencyCode(text(spec["priceCurrency"]))
		if c == "" {
			c = cur
		}
		switch localName(text(spec["priceType"])) {
		case "ListPrice", "StrikethroughPrice", "SRP", "MSRP", "RegularPrice":
			original = &Price{Amount: a, Currency: c}
		case "SalePrice", "":
			if !ok {
				amount, ok, cur = a, true, c
			}
		}
	}
	if ok {
		v.Price = &Price{Amount: amount, Currency: cur}
	}
	if original == nil {
		// Some shops put the pre-discount price beside the price.
		for _, k := range []string{"listPrice", "priceBeforeDiscount", "regularPrice"} {
			if a, aok := priceValue(of[k]); aok {
				original = &Price{Amount: a, Currency: cur}
				break
			}
		}
	}
	if original != nil && v.Price != nil {
		v.Sale = &Sale{OriginalPrice: *original}
	}
	if av := text(of["availability"]); av != "" {
		v.Availability = schemaAvailability(av)
	}
	if v.SKU == "" {
		v.SKU = text(of["sku"])
	}
	if u := text(of["url"]); u != "" {
		if id := variantParam(u); id != "" {
			v.ID = id
		}
	}
	if v.ID == "" {
		v.ID = v.SKU
	}
	if imgs := r.images(of["image"]); len(imgs) > 0 && len(v.Images) == 0 {
		v.Images = imgs
	}
}

// variantParam reads the variant id Shopify puts in offer URLs.
func variantParam(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Query().Get("variant")
}

// idFromRef turns an @id like "https://shop/p#variant-123" into
// "variant-123"; an @id without a fragment, or with a bare word fragment
// like "#product" that every page of the shop has, is no id of its own.
func idFromRef(ref string) string {
	i := strings.LastIndexByte(ref, '#')
	if i < 0 || !strings.ContainsAny(ref[i+1:], "0123456789") {
		return ""
	}
	return ref[i+1:]
}

// schemaAvailability maps schema.org ItemAvailability (or the bare words
// shops write) to Availability.
func schemaAvailability(s string) Availability {
	name := localName(s)
	key := strings.ToLower(strings.NewReplacer(" ", "", "_", "", "-", "").Replace(name))
	switch key {
	case "instock", "instoreonly", "onlineonly", "limitedavailability", "available":
		return Availability{InStock: true, Text: availabilityText[key]}
	case "outofstock", "soldout", "discontinued", "preorder", "presale", "backorder", "oos", "unavailable", "madetoorder", "reserved":
		return Availability{InStock: false, Text: availabilityText[key]}
	}
	return Availability{Text: clean(name)}
}

var availabilityText = map[string]string{
	"instock": "In stock", "instoreonly": "In store only", "onlineonly": "Online only",
	"limitedavailability": "Limited availability", "available": "In stock",
	"outofstock": "Out of stock", "soldout": "Sold out", "discontinued": "Discontinued",
	"preorder": "Pre-order", "presale": "Pre-sale", "backorder": "Back order", "oos": "Out of stock",
	"unavailable": "Unavailable", "madetoorder": "Made to order", "reserved": "Reserved",
}

// breadcrumbNames returns the names of a BreadcrumbList in position order.
func breadcrumbNames(o obj, g *graph) []string {
	type crumb struct {
		pos  float64
		name string
	}
	var crumbs []crumb
	for i, e := range g.objs(o["itemListElement"]) {
		name := text(e["name"])
		if name == "" {
			if it, ok := g.resolve(e["item"]).(obj); ok {
				name = text(it["name"])
			}
		}
		pos, err := strconv.ParseFloat(text(e["position"]), 64)
		if err != nil {
			pos = float64(i + 1)
		}
		if name != "" {
			crumbs = append(crumbs, crumb{pos, name})
		}
	}
	slices.SortStableFunc(crumbs, func(a, b crumb) int {
		switch {
		case a.pos < b.pos:
			return -1
		case a.pos > b.pos:
			return 1
		}
		return 0
	})
	names := make([]string, len(crumbs))
	for i, c := range crumbs {
		names[i] = c.name
	}
	return names
}

// crumbPath joins breadcrumb names, trimming "Home" and the product.
func crumbPath(names []string, title string) string {
	if len(names) > 0 && isHome(names[0]) {
		names = names[1:]
	}
	if n := len(names); n > 0 && title != "" && strings.EqualFold(names[n-1], title) {
		names = names[:n-1]
	}
	return strings.Join(names, " > ")
}

func isHome(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "home", "homepage", "start", "startseite", "accueil", "inicio", "home page", "shop", "store":
		return true
	}
	return false
}
