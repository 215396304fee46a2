// Package htmlclean cleans a parsed golang.org/x/net/html tree for the
// scrape API's html and markdown formats.
//
// Clean removes non-content elements (script, style, head, ...), makes URLs
// absolute, resolves responsive images to their largest candidate, applies
// the caller's excludeTags and includeTags selectors and, when asked, keeps
// only the main content of the page with a deterministic, rule- and
// score-based filter. All walks are iterative, so arbitrarily deep trees
// neither exhaust the stack nor cost more than linear time.
package htmlclean

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/andybalholm/cascadia"
	"github.com/firegate/firegate/internal/exprlimit"
	"github.com/firegate/firegate/internal/htmlattr"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Options controls Clean.
type Options struct {
	// BaseURL is the final page URL, already resolved against <base href>.
	// Relative URLs are resolved against it; nil leaves them unchanged.
	BaseURL *url.URL
	// OnlyMainContent removes headers, navigation, footers, banners, share
	// widgets, related lists, comments and ads, keeping the main content.
	OnlyMainContent bool
	// IncludeTags are CSS selectors; when non-empty only matching elements
	// (outermost matches, in document order) are kept.
	IncludeTags []string
	// ExcludeTags are CSS selectors whose matching elements are removed.
	// They are applied before IncludeTags.
	ExcludeTags []string
	// Reparse returns a fresh parse of the same page, for OnlyMainContent's
	// final guard (guard.go): when the main-content rules leave less than a
	// tenth of the page's visible text, Clean cleans the fresh tree without
	// them and says so in its Report. Nil leaves the rules' result as it
	// is.
	Reparse func() (*html.Node, error)
	// Without names main-content rules (Rules) to switch off, to measure
	// what each one earns; the server leaves it empty. A name that is not
	// a rule's is an error.
	Without []string
}

// Clean cleans doc in place and returns the node to render and convert: the
// <body> element when there is one, otherwise doc itself. The error is
// non-nil only when a selector in IncludeTags or ExcludeTags is invalid or
// a name in Without is not a rule's; doc is left untouched in that case.
func Clean(doc *html.Node, opts Options) (*html.Node, error) {
	n, _, err := CleanReport(doc, opts)
	return n, err
}

// CleanReport is Clean that also reports what the final guard of
// OnlyMainContent did; the node it returns is under the tree of
// opts.Reparse when the guard fell back.
func CleanReport(doc *html.Node, opts Options) (*html.Node, Report, error) {
	var rep Report
	if doc == nil {
		return nil, rep, nil
	}
	exclude, err := compile(opts.ExcludeTags)
	if err != nil {
		return nil, rep, fmt.Errorf("htmlclean: excludeTags: %w", err)
	}
	include, err := compile(opts.IncludeTags)
	if err != nil {
		return nil, rep, fmt.Errorf("htmlclean: includeTags: %w", err)
	}
	off, err := ruleSetOf(opts.Without)
	if err != nil {
		return nil, rep, fmt.Errorf("htmlclean: without: %w", err)
	}
	root := findBody(doc)
	var pk pageKind
	if opts.OnlyMainContent {
		pk = detectKind(doc, opts.BaseURL) // before basic removes the scripts
	}
	expandNoscript(root)
	basic(doc, opts.BaseURL)
	if len(exclude) > 0 {
		removeMatching(root, exclude)
	}
	if len(include) > 0 {
		keepMatching(root, include)
	}
	if !opts.OnlyMainContent {
		return root, rep, nil
	}
	pg := newPage(pk)
	pg.off = off
	visible := 0
	if opts.Reparse != nil {
		visible = visibleLen(root)
	}
	mainContent(root, pg)
	if opts.Reparse == nil {
		return root, rep, nil
	}
	if kept := pg.textLen(root); keptTooLittle(kept, visible) {
		if fresh, err := opts.Reparse(); err == nil && fresh != nil {
			if n, fb := fallback(fresh, opts, pk, kept, proseLen(root)); n != nil {
				return n, Report{Fallback: fb}, nil
			}
		}
	}
	return root, rep, nil
}

func compile(sels []string) ([]cascadia.SelectorGroup, error) {
	var out []cascadia.SelectorGroup
	for _, s := range sels {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		g, err := exprlimit.Selector(s)
		if err != nil {
			return nil, fmt.Errorf("invalid selector %q: %w", s, err)
		}
		out = append(out, g)
	}
	return out, nil
}

func matchAny(gs []cascadia.SelectorGroup, n *html.Node) bool {
	for _, g := range gs {
		if g.Match(n) {
			return true
		}
	}
	return false
}

// next returns the node after n in a pre-order walk of root; with skip it
// does not descend into n.
func next(n, root *html.Node, skip bool) *html.Node {
	if !skip && n.FirstChild != nil {
		return n.FirstChild
	}
	for n != root {
		if n.NextSibling != nil {
			return n.NextSibling
		}
		n = n.Parent
		if n == nil {
			return nil
		}
	}
	return nil
}

func findBody(doc *html.Node) *html.Node {
	if doc.Type == html.ElementNode && doc.DataAtom == atom.Body {
		return doc
	}
	for n := doc; n != nil; n = next(n, doc, false) {
		if n.Type == html.ElementNode && n.DataAtom == atom.Body {
			return n
		}
	}
	return doc
}

// removeMatching removes the elements under root matching any selector.
func removeMatching(root *html.Node, gs []cascadia.SelectorGroup) {
	for n := root.FirstChild; n != nil; {
		if n.Type == html.ElementNode && matchAny(gs, n) {
			nx := next(n, root, true)
			n.Parent.RemoveChild(n)
			n = nx
			continue
		}
		n = next(n, root, false)
	}
}

// keepMatching replaces the children of root with the outermost elements
// matching any selector, in document order.
func keepMatching(root *html.Node, gs []cascadia.SelectorGroup) {
	if root.Type == html.ElementNode && matchAny(gs, root) {
		return
	}
	var keep []*html.Node
	for n := root.FirstChild; n != nil; {
		if n.Type == html.ElementNode && matchAny(gs, n) {
			keep = append(keep, n)
			n = next(n, root, true)
			continue
		}
		n = next(n, root, false)
	}
	for _, k := range keep {
		k.Parent.RemoveChild(k)
	}
	for root.FirstChild != nil {
		root.RemoveChild(root.FirstChild)
	}
	for _, k := range keep {
		root.AppendChild(k)
	}
}

// alwaysRemoved reports elements that never belong in the cleaned output.
func alwaysRemoved(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Meta, atom.Head, atom.Template,
		atom.Link, atom.Iframe, atom.Object, atom.Embed, atom.Base, atom.Frame,
		atom.Frameset, atom.Noframes, atom.Applet, atom.Param:
		return true
	}
	return false
}

// basic removes unwanted elements and comments, resolves URLs and
// responsive images, in one walk over the whole document.
func basic(doc *html.Node, base *url.URL) {
	r := newResolver(base)
	for n := doc; n != nil; {
		switch n.Type {
		case html.CommentNode:
			nx := next(n, doc, true)
			n.Parent.RemoveChild(n)
			n = nx
			continue
		case html.ElementNode:
			if n.Parent != nil && alwaysRemoved(n.DataAtom) {
				nx := next(n, doc, true)
				n.Parent.RemoveChild(n)
				n = nx
				continue
			}
			switch n.DataAtom {
			case atom.Svg, atom.Math:
				n = next(n, doc, true)
				continue
			case atom.Img:
				fixImage(n, r)
			case atom.Picture:
				fixPicture(n, r)
			}
			if base != nil {
				resolveAttrs(n, r)
			}
		}
		n = next(n, doc, false)
	}
}

func isURLAttr(key string) bool {
	switch key {
	case "href", "src", "poster", "cite", "action", "formaction", "background", "longdesc":
		return true
	}
	return false
}

func resolveAttrs(n *html.Node, r *resolver) {
	for i := range n.Attr {
		a := &n.Attr[i]
		if a.Namespace != "" || !isURLAttr(a.Key) {
			continue
		}
		a.Val = r.resolve(a.Val)
	}
}

// resolver is resolve for one base, with a fast path for the references
// most pages are made of: an absolute path of unreserved characters
// ("/story/12", "/img/a-1.jpg"), which net/url resolves to the base's
// scheme and host followed by the path unchanged.
type resolver struct {
	base *url.URL
	// origin is "scheme://host" of base when the fast path applies (a
	// base with a scheme and a host, no user information), else "".
	origin string
}

func newResolver(base *url.URL) *resolver {
	r := &resolver{base: base}
	if base != nil && base.Scheme != "" && base.Host != "" && base.Opaque == "" && base.User == nil {
		r.origin = (&url.URL{Scheme: base.Scheme, Host: base.Host}).String()
	}
	return r
}

func (r *resolver) resolve(ref string) string {
	if r.origin != "" {
		if p := strings.TrimSpace(ref); plainAbsPath(p) {
			return r.origin + p
		}
	}
	return resolve(r.base, ref)
}

// plainAbsPath reports an absolute path ("/a/b", not "//host") made of
// letters, digits, '-', '_', '~', '.' and '/' only, with no dot segment (no
// "/." at all): net/url neither escapes nor rewrites it.
func plainAbsPath(p string) bool {
	if p == "" || p[0] != '/' || len(p) > 1 && p[1] == '/' || strings.Contains(p, "/.") {
		return false
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '_', c == '~', c == '.', c == '/':
		default:
			return false
		}
	}
	return true
}

// resolve makes ref absolute against base; values that already carry a
// scheme or do not parse are returned unchanged.
func resolve(base *url.URL, ref string) string {
	if base == nil {
		return ref
	}
	ref = strings.TrimSpace(ref)
	if ref == "" || hasScheme(ref) {
		return ref
	}
	u, err := base.Parse(ref)
	if err != nil {
		return ref
	}
	return u.String()
}

// hasScheme reports whether s starts with "scheme:".
func hasScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c|0x20 >= 'a' && c|0x20 <= 'z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case c == ':':
			return i > 0
		default:
			return false
		}
	}
	return false
}

func setAttr(n *html.Node, key, val string) {
	for i := range n.Attr {
		if n.Attr[i].Key == key && n.Attr[i].Namespace == "" {
			n.Attr[i].Val = val
			return
		}
	}
	n.Attr = append(n.Attr, html.Attribute{Key: key, Val: val})
}

func delAttr(n *html.Node, keys ...string) {
	out := n.Attr[:0]
	for _, a := range n.Attr {
		drop := false
		for _, k := range keys {
			if a.Key == k && a.Namespace == "" {
				drop = true
				break
			}
		}
		if !drop {
			out = append(out, a)
		}
	}
	n.Attr = out
}

// fixImage applies lazy-loading attributes and resolves srcset to the
// largest candidate, stored in src.
func fixImage(n *html.Node, r *resolver) {
	src, _ := htmlattr.Lookup(n, "src")
	if lazy, ok := htmlattr.Lookup(n, "data-src"); ok && strings.TrimSpace(lazy) != "" &&
		(strings.TrimSpace(src) == "" || strings.HasPrefix(src, "data:")) {
		src = lazy
		setAttr(n, "src", src)
	}
	set, ok := htmlattr.Lookup(n, "srcset")
	if !ok || strings.TrimSpace(set) == "" {
		set, ok = htmlattr.Lookup(n, "data-srcset")
	}
	if ok {
		if best, _ := largest(set); best != "" {
			setAttr(n, "src", r.resolve(best))
		}
		delAttr(n, "srcset", "sizes", "data-srcset")
	}
}

// fixPicture picks the largest candidate among a <picture>'s sources and its
// <img>, puts it in the img's src and drops the <source> elements.
func fixPicture(p *html.Node, r *resolver) {
	var img *html.Node
	best, bestSize := "", -1.0
	consider := func(set string) {
		if u, size := largest(set); u != "" && size > bestSize {
			best, bestSize = u, size
		}
	}
	var sources []*html.Node
	for c := p.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		switch c.DataAtom {
		case atom.Source:
			sources = append(sources, c)
			if s, ok := htmlattr.Lookup(c, "srcset"); ok {
				consider(s)
			} else if s, ok := htmlattr.Lookup(c, "data-srcset"); ok {
				consider(s)
			}
		case atom.Img:
			if img == nil {
				img = c
			}
		}
	}
	if img == nil {
		return
	}
	if s, ok := htmlattr.Lookup(img, "srcset"); ok {
		consider(s)
	}
	if best != "" {
		setAttr(img, "src", r.resolve(best))
		delAttr(img, "srcset", "sizes", "data-srcset")
	}
	for _, s := range sources {
		p.RemoveChild(s)
	}
}

// largest parses a srcset value and returns the URL of its largest candidate
// and a comparable size: width descriptors rank above density descriptors,
// and a candidate without descriptor counts as 1x.
func largest(set string) (string, float64) {
	best, bestSize := "", -1.0
	s := set
	for len(s) > 0 {
		s = strings.TrimLeft(s, " \t\n\r\f,")
		if s == "" {
			break
		}
		end := strings.IndexAny(s, " \t\n\r\f")
		if end < 0 {
			end = len(s)
		}
		u := s[:end]
		s = s[end:]
		desc := ""
		if strings.HasSuffix(u, ",") {
			u = strings.TrimRight(u, ",")
		} else {
			i := strings.IndexByte(s, ',')
			if i < 0 {
				i = len(s)
			}
			desc = strings.TrimSpace(s[:i])
			s = s[i:]
		}
		size := 1.0
		if desc != "" {
			f := strings.Fields(desc)[0]
			if len(f) > 1 {
				if v, err := strconv.ParseFloat(f[:len(f)-1], 64); err == nil {
					switch f[len(f)-1] {
					case 'w':
						size = 1e6 + v
					case 'x':
						size = v
					}
				}
			}
		}
		if u != "" && size > bestSize {
			best, bestSize = u, size
		}
	}
	return best, bestSize
}
