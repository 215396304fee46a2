// Package pagemeta extracts page-level facts from a parsed HTML document:
// the base URL, the metadata object of the scrape API (title, description,
// Open Graph, Dublin Core, article and every other <meta> tag), outgoing
// links, images and CSS-selected attribute values.
//
// All functions only read the *html.Node tree. Extract gathers everything
// in a single walk; the single-purpose functions are thin wrappers for
// callers that need one piece.
package pagemeta

import (
	"net/url"
	"strings"

	"github.com/firegate/firegate/internal/htmlattr"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Page is the result of Extract.
type Page struct {
	// Base is the document base URL: <base href> resolved against the
	// page URL, or the page URL itself.
	Base *url.URL
	// Metadata is the API metadata object; see Metadata.
	Metadata map[string]any
	// Links are the outgoing links; see Links.
	Links []string
	// Images are the image URLs; see Images.
	Images []string
}

// what selects the parts a walk collects.
type what uint8

const (
	wantMeta what = 1 << iota
	wantLinks
	wantImages
	wantAll = wantMeta | wantLinks | wantImages
)

// Extract returns base URL, metadata, links and images of doc in one tree
// walk. pageURL is the (final) URL the document was fetched from; it may be
// nil, in which case relative URLs are dropped.
func Extract(doc *html.Node, pageURL *url.URL) Page {
	w := walk(doc, wantAll)
	base := w.base(pageURL)
	return Page{
		Base:     base,
		Metadata: w.metadata(base),
		Links:    w.links(base),
		Images:   w.images(base),
	}
}

// BaseURL returns the document base URL: the href of the first <base>
// element that has one, resolved against pageURL; pageURL when there is
// none or it does not resolve to an http(s) URL.
func BaseURL(doc *html.Node, pageURL *url.URL) *url.URL {
	return walk(doc, 0).base(pageURL)
}

// Metadata returns the metadata object of the scrape API. base (usually
// BaseURL's result) resolves the favicon; it may be nil.
//
// Keys: title (<title>, else og:title, else <meta name=title>), description,
// keywords, robots, language (<html lang>, else the Content-Language
// http-equiv), favicon (absolute URL of the first rel=icon / shortcut icon,
// else apple-touch-icon), ogTitle, ogDescription, ogUrl, ogImage, ogAudio,
// ogDeterminer, ogLocale, ogLocaleAlternate (always []string), ogSiteName,
// ogVideo, dcTermsCreated, dcDateCreated, dcDate, dcTermsType, dcType,
// dcTermsAudience, dcTermsSubject, dcSubject, dcDescription,
// dcTermsKeywords, modifiedTime, publishedTime, articleTag, articleSection.
// The tag names behind these keys match case-insensitively.
//
// Every other <meta> with a name, property or itemprop attribute and a
// non-blank content appears under that attribute value as written (for
// example "og:type", "twitter:card", "viewport"); a tag with several of
// those attributes is listed under each. Names that only differ in case from
// description, keywords and robots fold into those keys, and a name equal
// to a key already computed above (such as "title") never overrides it.
// Metas carrying charset or http-equiv are never listed.
//
// Values are trimmed strings; a key seen with several distinct values maps
// to []string in document order (exact duplicates are dropped). Absent
// facts are absent keys. Callers add request-level keys (sourceURL, url,
// statusCode, ...) afterwards, overwriting any page-provided value.
func Metadata(doc *html.Node, base *url.URL) map[string]any {
	return walk(doc, wantMeta).metadata(base)
}

// Links returns the targets of <a href> and <area href>, resolved against
// base, in page order without duplicates. Only http and https targets are
// kept, plus mailto: links (verbatim, as the hosted API returns them);
// javascript:, tel:, data: and other schemes are dropped. Fragment-only
// links resolve to the base URL plus fragment. Empty hrefs and hrefs that
// do not parse are skipped. base may be nil; then only absolute links are
// kept.
func Links(doc *html.Node, base *url.URL) []string {
	return walk(doc, wantLinks).links(base)
}

// Images returns image URLs in page order without duplicates, resolved
// against base: og:image and twitter:image metas, <img src> (or its lazy
// loading data-src / data-lazy-src / data-original when src is missing or a
// data: placeholder), the largest candidate of each <img srcset> and
// <picture><source srcset>. data: URIs and non-http(s) URLs are dropped.
func Images(doc *html.Node, base *url.URL) []string {
	return walk(doc, wantImages).images(base)
}

// metaTag is one <meta> with a key attribute and content.
type metaTag struct {
	keys    [3]string // name, property, itemprop (trimmed; may be empty)
	content string
}

// icon is a <link rel=...icon...>.
type icon struct {
	href  string
	touch bool // apple-touch-icon and friends: used only without a plain icon
}

// walker accumulates raw findings during the tree walk; resolution happens
// afterwards, once the base URL is known.
type walker struct {
	want            what
	baseHref        string
	haveBase        bool
	title           string
	haveTitle       bool
	lang            string
	contentLanguage string
	icons           []icon
	metas           []metaTag
	hrefs           []string
	imgs            []string
}

func walk(doc *html.Node, want what) *walker {
	w := &walker{want: want}
	if doc == nil {
		return w
	}
	// Iterative pre-order walk: no recursion depth limits on deep trees.
	n := doc
	for n != nil {
		descend := true
		if n.Type == html.ElementNode {
			descend = w.element(n)
		}
		if descend && n.FirstChild != nil {
			n = n.FirstChild
			continue
		}
		for n != nil && n != doc && n.NextSibling == nil {
			n = n.Parent
		}
		if n == nil || n == doc {
			break
		}
		n = n.NextSibling
	}
	return w
}

// element records what n contributes and reports whether to descend.
func (w *walker) element(n *html.Node) bool {
	if n.Namespace != "" {
		return false // svg/math: their <title>, <a>, <image> are not page-level
	}
	switch n.DataAtom {
	case atom.Template, atom.Script, atom.Style:
		return false
	case atom.Html:
		if w.lang == "" {
			w.lang = strings.TrimSpace(htmlattr.Get(n, "lang"))
		}
	case atom.Base:
		if !w.haveBase {
			if href, ok := htmlattr.Lookup(n, "href"); ok {
				w.baseHref, w.haveBase = href, true
			}
		}
	case atom.Title:
		if w.want&wantMeta != 0 && !w.haveTitle {
			w.title, w.haveTitle = collapseSpace(textOf(n)), true
		}
		return false
	case atom.Meta:
		if w.want&(wantMeta|wantImages) != 0 {
			w.meta(n)
		}
	case atom.Link:
		if w.want&wantMeta != 0 {
			w.link(n)
		}
	case atom.A, atom.Area:
		if w.want&wantLinks != 0 {
			if href, ok := htmlattr.Lookup(n, "href"); ok {
				w.hrefs = append(w.hrefs, href)
			}
		}
	case atom.Img:
		if w.want&wantImages != 0 {
			w.img(n)
		}
	case atom.Source:
		if w.want&wantImages != 0 && n.Parent != nil && n.Parent.DataAtom == atom.Picture {
			if best := largestCandidate(htmlattr.Get(n, "srcset")); best != "" {
				w.imgs = append(w.imgs, best)
			}
		}
	}
	return true
}

func (w *walker) meta(n *html.Node) {
	var m metaTag
	var httpEquiv string
	hasContent, skip := false, false
	for _, a := range n.Attr {
		if a.Namespace != "" {
			continue
		}
		switch a.Key {
		case "name":
			m.keys[0] = strings.TrimSpace(a.Val)
		case "property":
			m.keys[1] = strings.TrimSpace(a.Val)
		case "itemprop":
			m.keys[2] = strings.TrimSpace(a.Val)
		case "content":
			m.content, hasContent = strings.TrimSpace(a.Val), true
		case "charset":
			skip = true
		case "http-equiv":
			httpEquiv, skip = a.Val, true
		}
	}
	if skip {
		if hasContent && w.contentLanguage == "" && strings.EqualFold(strings.TrimSpace(httpEquiv), "content-language") {
			w.contentLanguage = m.content
		}
		return
	}
	if m.content == "" || (m.keys[0] == "" && m.keys[1] == "" && m.keys[2] == "") {
		return
	}
	// Same key in two attributes (name="og:title" property="og:title"):
	// list it once.
	if strings.EqualFold(m.keys[1], m.keys[0]) {
		m.keys[1] = ""
	}
	if strings.EqualFold(m.keys[2], m.keys[0]) || strings.EqualFold(m.keys[2], m.keys[1]) {
		m.keys[2] = ""
	}
	if w.want&wantImages != 0 && isImageMeta(m) {
		w.imgs = append(w.imgs, m.content)
	}
	if w.want&wantMeta != 0 {
		w.metas = append(w.metas, m)
	}
}

// isImageMeta reports og:image / twitter:image style metas.
func isImageMeta(m metaTag) bool {
	for _, k := range m.keys {
		switch asciiLower(k) {
		case "og:image", "og:image:url", "og:image:secure_url", "twitter:image", "twitter:image:src":
			return true
		}
	}
	return false
}

func (w *walker) link(n *html.Node) {
	href, ok := htmlattr.Lookup(n, "href")
	if !ok || strings.TrimSpace(href) == "" {
		return
	}
	for tok := range strings.FieldsSeq(htmlattr.Get(n, "rel")) {
		switch strings.ToLower(tok) {
		case "icon":
			w.icons = append(w.icons, icon{href: href})
			return
		case "apple-touch-icon", "apple-touch-icon-precomposed":
			w.icons = append(w.icons, icon{href: href, touch: true})
			return
		}
	}
}

func (w *walker) img(n *html.Node) {
	var src, srcset, lazy string
	for _, a := range n.Attr {
		switch a.Key {
		case "src":
			src = strings.TrimSpace(a.Val)
		case "srcset":
			srcset = a.Val
		case "data-src", "data-lazy-src", "data-original":
			if lazy == "" {
				lazy = strings.TrimSpace(a.Val)
			}
		}
	}
	if (src == "" || hasSchemeFold(src, "data")) && lazy != "" {
		src = lazy
	}
	if src != "" {
		w.imgs = append(w.imgs, src)
	}
	if best := largestCandidate(srcset); best != "" {
		w.imgs = append(w.imgs, best)
	}
}

func (w *walker) base(pageURL *url.URL) *url.URL {
	if !w.haveBase {
		return pageURL
	}
	href := cleanURL(w.baseHref)
	var u *url.URL
	var err error
	if pageURL != nil {
		u, err = pageURL.Parse(href)
	} else {
		u, err = url.Parse(href)
	}
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return pageURL
	}
	return u
}

// textOf concatenates the text below n.
func textOf(n *html.Node) string {
	if c := n.FirstChild; c != nil && c.NextSibling == nil && c.Type == html.TextNode {
		return c.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch c.Type {
		case html.TextNode:
			b.WriteString(c.Data)
		case html.ElementNode:
			b.WriteString(textOf(c))
		}
	}
	return b.String()
}

// collapseSpace trims s and folds runs of white space to one space.
func collapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
