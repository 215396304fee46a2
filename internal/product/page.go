package product

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/firegate/firegate/internal/htmlattr"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// page is what one pass over the document gathers for the sources.
type page struct {
	url        *url.URL
	jsonld     []obj
	microdata  []obj
	rdfa       []obj
	meta       map[string]string // property or name (lower case) -> first content
	h1         string
	title      string
	crumbs     []string // breadcrumb names from schema.org markup
	htmlCrumbs []string // breadcrumb names read from the page
	sku        string   // a SKU shown on the page
	// prices are the visible price elements, in document order.
	prices []shownPrice
	// shown are every money amount displayed on the page, for Formatted.
	shown        []money
	stock        *Availability // stock wording of the page, if any
	currencyHint string        // the currency the page's prices are in
	image        *Image        // the first image of a product gallery
	body         *html.Node
}

// shownPrice is a price element: its amount and whether it is the old
// price of a discount (struck through or labelled so).
type shownPrice struct {
	money
	original bool
}

// scanPage walks the document once for the structured sources, then reads
// the visible page.
func scanPage(doc *html.Node, pageURL *url.URL) *page {
	pg := &page{url: pageURL, meta: map[string]string{}}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Script:
				if strings.EqualFold(strings.TrimSpace(strings.Split(htmlattr.Get(n, "type"), ";")[0]), "application/ld+json") {
					pg.jsonld = append(pg.jsonld, parseJSONLD(textOf(n))...)
				}
				return
			case atom.Style, atom.Template, atom.Noscript:
				return
			case atom.Meta:
				k := strings.ToLower(htmlattr.Get(n, "property"))
				if k == "" {
					k = strings.ToLower(htmlattr.Get(n, "name"))
				}
				if k == "" {
					k = strings.ToLower(htmlattr.Get(n, "itemprop"))
				}
				if _, seen := pg.meta[k]; k != "" && !seen {
					pg.meta[k] = strings.TrimSpace(htmlattr.Get(n, "content"))
				}
			case atom.Title:
				if pg.title == "" {
					pg.title = clean(textOf(n))
				}
			case atom.H1:
				if pg.h1 == "" {
					pg.h1 = clean(textOf(n))
				}
			case atom.Body:
				pg.body = n
			}
			if hasAttr(n, "itemscope") && !hasAttr(n, "itemprop") {
				pg.microdata = append(pg.microdata, itemOf(n, microdataAttrs))
			}
			if hasAttr(n, "typeof") && !hasAttr(n, "property") {
				pg.rdfa = append(pg.rdfa, itemOf(n, rdfaAttrs))
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if pg.body == nil {
		pg.body = doc
	}
	readVisible(pg)
	return pg
}

// parseJSONLD decodes one JSON-LD script, tolerating what shops emit:
// HTML comment wrappers, raw line breaks inside strings and trailing
// commas. Unreadable scripts are skipped.
func parseJSONLD(s string) []obj {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(strings.TrimSuffix(s, "-->"), "<!--")
	s = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(s), "//<![CDATA["), "//]]>")
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		if err := json.Unmarshal(repairJSON(s), &v); err != nil {
			return nil
		}
	}
	var out []obj
	for _, e := range list(v) {
		if o, ok := e.(obj); ok {
			out = append(out, o)
		}
	}
	return out
}

// repairJSON escapes control characters inside strings and drops commas
// before a closing bracket.
func repairJSON(s string) []byte {
	var b bytes.Buffer
	b.Grow(len(s))
	inStr, esc := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			case c == '\n':
				b.WriteString(`\n`)
				continue
			case c == '\r':
				b.WriteString(`\r`)
				continue
			case c == '\t':
				b.WriteString(`\t`)
				continue
			case c < 0x20:
				continue
			}
			b.WriteByte(c)
			continue
		}
		if c == '"' {
			inStr = true
		}
		if c == ',' {
			j := i + 1
			for j < len(s) && (s[j] == ' ' || s[j] == '\n' || s[j] == '\r' || s[j] == '\t') {
				j++
			}
			if j < len(s) && (s[j] == '}' || s[j] == ']') {
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.Bytes()
}

// itemAttrs names the attributes of an item syntax.
type itemAttrs struct {
	scope, typ, prop string
}

var (
	microdataAttrs = itemAttrs{scope: "itemscope", typ: "itemtype", prop: "itemprop"}
	rdfaAttrs      = itemAttrs{scope: "typeof", typ: "typeof", prop: "property"}
)

// itemOf converts a microdata or RDFa item to the JSON-LD shape: its type,
// and each property's values (a nested item for a nested scope).
func itemOf(n *html.Node, a itemAttrs) obj {
	o := obj{"@type": strings.Fields(htmlattr.Get(n, a.typ))}
	if a.prop == "property" {
		if id := htmlattr.Get(n, "resource"); id != "" {
			o["@id"] = id
		}
	} else if id := htmlattr.Get(n, "itemid"); id != "" {
		o["@id"] = id
	}
	// @type as []any so types() reads it like JSON-LD.
	ts := o["@type"].([]string)
	anyTypes := make([]any, len(ts))
	for i, t := range ts {
		anyTypes[i] = t
	}
	o["@type"] = anyTypes
	var walk func(c *html.Node)
	walk = func(c *html.Node) {
		for ; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			nested := hasAttr(c, a.scope)
			if props := htmlattr.Get(c, a.prop); props != "" {
				var v any
				if nested {
					v = itemOf(c, a)
				} else {
					v = propValue(c)
				}
				for _, name := range strings.Fields(props) {
					name = localName(name)
					switch old := o[name].(type) {
					case nil:
						o[name] = v
					case []any:
						o[name] = append(old, v)
					default:
						o[name] = []any{old, v}
					}
				}
			}
			if !nested {
				walk(c.FirstChild)
			}
		}
	}
	walk(n.FirstChild)
	return o
}

// propValue is a property element's value as microdata defines it, plus
// the content attribute on any element (common in shop themes and RDFa).
func propValue(n *html.Node) any {
	if v, ok := htmlattr.Lookup(n, "content"); ok {
		return strings.TrimSpace(v)
	}
	switch n.DataAtom {
	case atom.Audio, atom.Embed, atom.Iframe, atom.Img, atom.Source, atom.Track, atom.Video:
		return htmlattr.Get(n, "src")
	case atom.A, atom.Area, atom.Link:
		if h := htmlattr.Get(n, "href"); h != "" {
			return h
		}
	case atom.Object:
		return htmlattr.Get(n, "data")
	case atom.Data, atom.Meter:
		return htmlattr.Get(n, "value")
	case atom.Time:
		if d := htmlattr.Get(n, "datetime"); d != "" {
			return d
		}
	}
	if h := htmlattr.Get(n, "resource"); h != "" && n.DataAtom != atom.Span && n.DataAtom != atom.Div {
		return h
	}
	return clean(textOf(n))
}

func hasAttr(n *html.Node, key string) bool {
	_, ok := htmlattr.Lookup(n, key)
	return ok
}

// textOf is the text content of n, scripts and styles excluded.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
			return
		case html.ElementNode:
			switch n.DataAtom {
			case atom.Style, atom.Template:
				return
			case atom.Br, atom.P, atom.Div, atom.Li:
				b.WriteByte(' ')
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && c.DataAtom == atom.Script {
				continue
			}
			walk(c)
		}
	}
	walk(n)
	return b.String()
}
