// Package markdown converts a cleaned golang.org/x/net/html tree into
// GitHub-flavoured markdown.
//
// The converter walks the tree once and appends to a single byte buffer: ATX
// headings, paragraphs, emphasis, inline code, fenced code blocks, nested
// lists, blockquotes, links, images, GFM pipe tables, rules and hard breaks.
// Whitespace is collapsed the way a browser does outside <pre>. It performs no
// I/O and keeps no state between calls, so it is safe for concurrent use.
package markdown

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/firegate/firegate/internal/htmlattr"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Base64ImagePlaceholder replaces the URL of a data: image when
// Options.RemoveBase64Images is set.
const Base64ImagePlaceholder = "<Base64-Image-Removed>"

const (
	// maxDepth bounds the recursion of the structured walk; deeper content
	// is rendered as flat text so that pathological nesting stays linear and
	// cannot exhaust the stack.
	maxDepth = 400
	// maxPrefixDepth bounds how many blockquote/list indentation levels are
	// reflected in line prefixes, which keeps the output linear in the input.
	maxPrefixDepth = 24
)

// Options controls the conversion.
type Options struct {
	// RemoveBase64Images replaces the URL of images whose src is a data: URI
	// with Base64ImagePlaceholder, keeping the alt text.
	RemoveBase64Images bool
}

// Convert renders n and its descendants as markdown. n may be a document, an
// element such as <body>, or any subtree. The error is always nil today; it
// is kept so that limits can be reported later without an API change.
func Convert(n *html.Node, opts Options) (string, error) {
	if n == nil {
		return "", nil
	}
	c := converter{opts: opts}
	c.out = make([]byte, 0, 4096)
	c.children(n, 0)
	return string(trimSpaceBytes(c.out)), nil
}

// inlineFrame is an inline construct (emphasis, link, heading marker) whose
// opening marker is written lazily, when its first content arrives, so that
// empty elements produce nothing.
type inlineFrame struct {
	open  string
	close string
}

type converter struct {
	opts Options
	out  []byte

	prefix       []byte // line prefix: blockquote markers and list indentation
	prefixLevels int    // nesting levels reflected in prefix

	// item is a list marker waiting for the first line of its item; it is
	// written after prefix[:itemPrefixLen] instead of the full prefix.
	item          string
	itemPrefixLen int

	newlines     int  // line breaks owed before the next content (2 = blank line)
	blankPrefix  int  // length of the prefix written on owed blank lines
	pendingSpace bool // a collapsed space owed before the next inline content
	started      bool // something was written to out

	frames []inlineFrame
	opened int // frames[:opened] have had their opening marker written

	inline int // >0 inside links, headings and table cells: blocks become spaces
	inLink int
}

// block requests a blank line before the next content.
func (c *converter) block() {
	if c.inline > 0 {
		c.pendingSpace = true
		return
	}
	if c.newlines < 2 {
		c.blankPrefix = len(c.prefix)
	}
	c.newlines = 2
	c.pendingSpace = false
}

// lineBreak requests a line break before the next content.
func (c *converter) lineBreak() {
	if c.inline > 0 {
		c.pendingSpace = true
		return
	}
	if c.newlines < 1 {
		c.newlines = 1
	}
	c.pendingSpace = false
}

// startLine writes owed newlines and the prefix of the new line.
func (c *converter) startLine() {
	if c.newlines == 0 {
		return
	}
	if c.started {
		bp := c.prefix
		if c.blankPrefix < len(bp) {
			bp = bp[:c.blankPrefix]
		}
		bp = bytes.TrimRight(bp, " ")
		for i := 1; i < c.newlines; i++ {
			c.out = append(c.out, '\n')
			c.out = append(c.out, bp...)
		}
		c.out = append(c.out, '\n')
	}
	if c.item != "" {
		c.out = append(c.out, c.prefix[:c.itemPrefixLen]...)
		c.out = append(c.out, c.item...)
		c.item = ""
	} else {
		c.out = append(c.out, c.prefix...)
	}
	c.newlines = 0
	c.pendingSpace = false
	c.started = true
}

// beforeContent prepares the buffer for inline content: line start, owed
// space, and lazily opened inline markers.
func (c *converter) beforeContent() {
	if c.newlines > 0 || !c.started {
		if !c.started && c.newlines == 0 {
			c.newlines = 1
		}
		c.startLine()
	} else if c.pendingSpace {
		c.out = append(c.out, ' ')
	}
	c.pendingSpace = false
	for c.opened < len(c.frames) {
		c.out = append(c.out, c.frames[c.opened].open...)
		c.opened++
	}
}

// atLineStart reports whether the next content starts a markdown line.
func (c *converter) atLineStart() bool {
	return c.newlines > 0 || !c.started
}

func (c *converter) pushFrame(open, close string) {
	c.frames = append(c.frames, inlineFrame{open: open, close: close})
}

func (c *converter) popFrame() {
	i := len(c.frames) - 1
	if i < c.opened {
		if c.newlines > 0 && bytes.HasSuffix(c.out, hardBreak) {
			// The content ended with a <br>: close before the break's
			// spaces, or "**text  **" would leave the emphasis open.
			c.out = append(c.out[:len(c.out)-len(hardBreak)], c.frames[i].close...)
			c.out = append(c.out, hardBreak...)
		} else {
			c.out = append(c.out, c.frames[i].close...)
		}
		c.opened = i
	}
	c.frames = c.frames[:i]
}

// hardBreak is what br writes at the end of a line: a hard line break.
var hardBreak = []byte("  ")

func (c *converter) pushPrefix(p string) bool {
	if c.prefixLevels >= maxPrefixDepth {
		return false
	}
	c.prefix = append(c.prefix, p...)
	c.prefixLevels++
	return true
}

func (c *converter) popPrefix(n int) {
	c.prefix = c.prefix[:len(c.prefix)-n]
	c.prefixLevels--
}

// text writes a text node, collapsing whitespace and escaping markdown. The
// node is processed in one pass: words are appended directly and runs of
// whitespace become a single pending space.
func (c *converter) text(s string) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i > 0 && (c.started || c.newlines > 0 || len(c.frames) > c.opened) {
		c.pendingSpace = true
	}
	if i == len(s) {
		return
	}
	s = s[i:]
	// The first word may start a markdown line and needs line-start escaping.
	j := 0
	for j < len(s) && !isSpace(s[j]) {
		j++
	}
	lineStart := c.atLineStart()
	c.beforeContent()
	c.out = appendEscaped(c.out, s[:j], lineStart)
	s = s[j:]
	for len(s) > 0 {
		i = 0
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) {
			c.pendingSpace = true
			return
		}
		c.out = append(c.out, ' ')
		s = s[i:]
		j = 0
		for j < len(s) && !isSpace(s[j]) {
			j++
		}
		c.out = appendEscaped(c.out, s[:j], false)
		s = s[j:]
	}
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\n' || b == '\t' || b == '\r' || b == '\f'
}

// appendEscaped appends word (no whitespace inside) escaping the characters
// that markdown would otherwise interpret.
func appendEscaped(dst []byte, w string, lineStart bool) []byte {
	if lineStart && len(w) > 0 {
		switch w[0] {
		case '#', '>', '+', '=':
			dst = append(dst, '\\')
		case '-':
			if len(w) == 1 || strings.Trim(w, "-") == "" {
				dst = append(dst, '\\')
			}
		default:
			if w[0] >= '0' && w[0] <= '9' {
				k := 0
				for k < len(w) && w[k] >= '0' && w[k] <= '9' {
					k++
				}
				if k < len(w) && k == len(w)-1 && (w[k] == '.' || w[k] == ')') {
					dst = append(dst, w[:k]...)
					dst = append(dst, '\\')
					w = w[k:]
				}
			}
		}
	}
	k := 0
	for k < len(w) && !special(w[k]) {
		k++
	}
	dst = append(dst, w[:k]...)
	for i := k; i < len(w); i++ {
		b := w[i]
		switch b {
		case '\\':
			if i+1 < len(w) && isPunct(w[i+1]) {
				dst = append(dst, '\\')
			}
		case '*', '`':
			dst = append(dst, '\\')
		case '_':
			if i == 0 || i == len(w)-1 || !isAlnum(w[i-1]) || !isAlnum(w[i+1]) {
				dst = append(dst, '\\')
			}
		case '[', ']':
			dst = append(dst, '\\')
		case '<':
			if i+1 < len(w) && (isAlpha(w[i+1]) || w[i+1] == '/' || w[i+1] == '!') {
				dst = append(dst, '\\')
			}
		case '~':
			if i+1 < len(w) && w[i+1] == '~' {
				dst = append(dst, '\\')
			}
		case '|':
			dst = append(dst, '\\')
		}
		dst = append(dst, b)
	}
	return dst
}

// special reports bytes that appendEscaped may need to escape.
func special(b byte) bool {
	switch b {
	case '\\', '*', '`', '_', '[', ']', '<', '~', '|':
		return true
	}
	return false
}

func isAlpha(b byte) bool { return b|0x20 >= 'a' && b|0x20 <= 'z' }
func isAlnum(b byte) bool { return isAlpha(b) || (b >= '0' && b <= '9') || b >= 0x80 }
func isPunct(b byte) bool {
	return (b >= '!' && b <= '/') || (b >= ':' && b <= '@') || (b >= '[' && b <= '`') || (b >= '{' && b <= '~')
}

func (c *converter) children(n *html.Node, depth int) {
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		c.node(ch, depth+1)
	}
}

func (c *converter) node(n *html.Node, depth int) {
	switch n.Type {
	case html.TextNode:
		c.text(n.Data)
		return
	case html.DocumentNode:
		c.children(n, depth)
		return
	case html.ElementNode:
	default:
		return
	}
	if depth > maxDepth {
		c.flat(n)
		return
	}
	switch n.DataAtom {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Head, atom.Title,
		atom.Meta, atom.Link, atom.Svg, atom.Math, atom.Iframe, atom.Object, atom.Embed,
		atom.Select, atom.Option, atom.Textarea, atom.Button, atom.Canvas, atom.Audio,
		atom.Video, atom.Source, atom.Track, atom.Map, atom.Area, atom.Dialog:
		return
	case atom.Input:
		c.input(n)
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		c.heading(n, depth)
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Main, atom.Header, atom.Footer,
		atom.Nav, atom.Aside, atom.Address, atom.Figure, atom.Figcaption, atom.Form,
		atom.Fieldset, atom.Details, atom.Summary, atom.Dl, atom.Dt, atom.Dd, atom.Center,
		atom.Hgroup, atom.Body, atom.Html, atom.Legend, atom.Caption, atom.Tbody, atom.Thead,
		atom.Tfoot, atom.Tr, atom.Frameset, atom.Noframes:
		c.block()
		c.children(n, depth)
		c.block()
	case atom.Td, atom.Th:
		c.children(n, depth)
		c.pendingSpace = true
	case atom.Br:
		c.br()
	case atom.Hr:
		if c.inline > 0 {
			c.pendingSpace = true
			return
		}
		c.block()
		c.beforeContent()
		c.out = append(c.out, "---"...)
		c.block()
	case atom.Em, atom.I, atom.Cite, atom.Dfn, atom.Var:
		c.wrap(n, depth, "*", "*")
	case atom.Strong, atom.B:
		c.wrap(n, depth, "**", "**")
	case atom.Del, atom.S, atom.Strike:
		c.wrap(n, depth, "~~", "~~")
	case atom.Code, atom.Kbd, atom.Samp, atom.Tt:
		c.inlineCode(n)
	case atom.Pre:
		c.pre(n)
	case atom.A:
		c.link(n, depth)
	case atom.Img:
		c.image(n)
	case atom.Ul, atom.Ol, atom.Menu:
		c.list(n, depth)
	case atom.Li:
		// An item outside a list: render as a bullet.
		c.item0(n, depth, "- ")
	case atom.Blockquote:
		c.blockquote(n, depth)
	case atom.Table:
		c.table(n, depth)
	default:
		c.children(n, depth)
	}
}

// flat renders a subtree as plain collapsed text without recursion.
func (c *converter) flat(root *html.Node) {
	n := root
	for n != nil {
		if n.Type == html.TextNode {
			c.text(n.Data)
		} else if n.Type == html.ElementNode && skipFlat(n.DataAtom) {
			// skip subtree
		} else if n.FirstChild != nil {
			n = n.FirstChild
			continue
		}
		for n != root && n.NextSibling == nil {
			n = n.Parent
		}
		if n == root {
			return
		}
		n = n.NextSibling
	}
}

func skipFlat(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Head, atom.Svg, atom.Math,
		atom.Select, atom.Textarea, atom.Button, atom.Iframe, atom.Object:
		return true
	}
	return false
}

func (c *converter) br() {
	if c.inline > 0 {
		c.pendingSpace = true
		return
	}
	if !c.started || c.newlines > 0 {
		return
	}
	c.out = append(c.out, hardBreak...)
	c.lineBreak()
}

func (c *converter) wrap(n *html.Node, depth int, open, close string) {
	c.pushFrame(open, close)
	c.children(n, depth)
	c.popFrame()
}

func (c *converter) heading(n *html.Node, depth int) {
	if c.inline > 0 {
		c.wrap(n, depth, "**", "**")
		return
	}
	level := int(n.Data[1] - '0')
	c.block()
	c.pushFrame("######"[:level]+" ", "")
	c.inline++
	c.children(n, depth)
	c.inline--
	c.popFrame()
	c.block()
}

func (c *converter) input(n *html.Node) {
	if !strings.EqualFold(htmlattr.Get(n, "type"), "checkbox") {
		return
	}
	c.beforeContent()
	if hasAttr(n, "checked") {
		c.out = append(c.out, "[x]"...)
	} else {
		c.out = append(c.out, "[ ]"...)
	}
	c.pendingSpace = true
}

// textContent returns the raw text of a subtree without recursion; <br>
// becomes a newline.
func textContent(root *html.Node) string {
	var b strings.Builder
	nl := false // a line block (div, p) opened or closed: its text starts a line
	n := root.FirstChild
	for n != nil {
		switch {
		case n.Type == html.TextNode:
			if nl && b.Len() > 0 && n.Data != "" {
				// Only when the line holds more than indentation.
				s := b.String()
				if line := s[strings.LastIndexByte(s, '\n')+1:]; strings.TrimLeft(line, " \t") != "" && n.Data[0] != '\n' {
					b.WriteByte('\n')
				}
			}
			nl = nl && n.Data == ""
			b.WriteString(n.Data)
		case n.Type == html.ElementNode && n.DataAtom == atom.Br:
			b.WriteByte('\n')
			nl = false
		case n.Type == html.ElementNode && (n.DataAtom == atom.Script || n.DataAtom == atom.Style):
		case n.FirstChild != nil:
			if lineBlock(n) {
				nl = true
			}
			n = n.FirstChild
			continue
		}
		for n != root && n.NextSibling == nil {
			if lineBlock(n) {
				nl = true
			}
			n = n.Parent
		}
		if n == root {
			break
		}
		if lineBlock(n) {
			nl = true
		}
		n = n.NextSibling
	}
	return b.String()
}

// lineBlock reports the elements that lay out one line each inside a code
// block written without line breaks (per-line divs of highlighters).
func lineBlock(n *html.Node) bool {
	return n.Type == html.ElementNode && (n.DataAtom == atom.Div || n.DataAtom == atom.P)
}

func (c *converter) inlineCode(n *html.Node) {
	s := collapse(textContent(n))
	if s == "" {
		return
	}
	c.beforeContent()
	fence := backtickFence(s, 1)
	c.out = append(c.out, fence...)
	if s[0] == '`' || s[len(s)-1] == '`' {
		c.out = append(c.out, ' ')
		c.out = append(c.out, s...)
		c.out = append(c.out, ' ')
	} else {
		c.out = append(c.out, s...)
	}
	c.out = append(c.out, fence...)
}

// collapse collapses runs of HTML whitespace to one space and trims.
func collapse(s string) string {
	var b []byte
	space := false
	for i := 0; i < len(s); i++ {
		if isSpace(s[i]) {
			space = len(b) > 0
			continue
		}
		if space {
			b = append(b, ' ')
			space = false
		}
		b = append(b, s[i])
	}
	return string(b)
}

// backtickFence returns a run of backticks longer than any run in s and at
// least min long.
func backtickFence(s string, min int) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			if run > longest {
				longest = run
			}
		} else {
			run = 0
		}
	}
	if longest+1 > min {
		min = longest + 1
	}
	return strings.Repeat("`", min)
}

func (c *converter) pre(n *html.Node) {
	code := textContent(n)
	if c.inline > 0 {
		s := collapse(code)
		if s != "" {
			c.beforeContent()
			f := backtickFence(s, 1)
			c.out = append(c.out, f...)
			c.out = append(c.out, s...)
			c.out = append(c.out, f...)
		}
		return
	}
	code = strings.TrimPrefix(code, "\n")
	code = strings.TrimRight(code, " \t\r\n")
	lang := codeLanguage(n)
	fence := backtickFence(code, 3)
	c.block()
	c.beforeContent()
	c.out = append(c.out, fence...)
	c.out = append(c.out, lang...)
	for code != "" || fence != "" {
		c.out = append(c.out, '\n')
		c.out = append(c.out, c.prefix...)
		if code == "" {
			break
		}
		line := code
		if i := strings.IndexByte(code, '\n'); i >= 0 {
			line, code = code[:i], code[i+1:]
		} else {
			code = ""
		}
		c.out = append(c.out, strings.TrimSuffix(line, "\r")...)
	}
	c.out = append(c.out, fence...)
	c.block()
}

// codeLanguage reads language-x / lang-x from the class of a <pre> or of its
// first <code> child.
func codeLanguage(pre *html.Node) string {
	if l := langFromClass(htmlattr.Get(pre, "class")); l != "" {
		return l
	}
	for ch := pre.FirstChild; ch != nil; ch = ch.NextSibling {
		if ch.Type == html.ElementNode && ch.DataAtom == atom.Code {
			return langFromClass(htmlattr.Get(ch, "class"))
		}
	}
	return ""
}

func langFromClass(class string) string {
	for _, f := range strings.Fields(class) {
		var l string
		switch {
		case strings.HasPrefix(f, "language-"):
			l = f[len("language-"):]
		case strings.HasPrefix(f, "lang-"):
			l = f[len("lang-"):]
		default:
			continue
		}
		if l != "" && !strings.ContainsAny(l, "`~") {
			return l
		}
	}
	return ""
}

func (c *converter) link(n *html.Node, depth int) {
	href := strings.TrimSpace(htmlattr.Get(n, "href"))
	if c.inLink > 0 || href == "" || hasPrefixFold(href, "javascript:") {
		c.children(n, depth)
		return
	}
	if selfAnchor(n, href) {
		return
	}
	if c.inline == 0 {
		if level, ok := blockContent(n); ok {
			c.blockLink(n, href, level, depth)
			return
		}
	}
	c.linkFrame(n, href, depth)
}

func (c *converter) linkFrame(n *html.Node, href string, depth int) {
	c.linkRun(n.FirstChild, nil, href, depth)
}

// linkRun writes the siblings from first up to stop (nil: the last) as the
// text of one link to href.
func (c *converter) linkRun(first, stop *html.Node, href string, depth int) {
	c.pushFrame("[", "]("+escapeURL(href)+")")
	c.inline++
	c.inLink++
	for ch := first; ch != stop; ch = ch.NextSibling {
		c.node(ch, depth+1)
	}
	c.inLink--
	c.inline--
	c.popFrame()
}

// blockLink writes a link that holds a heading, a list or two blocks of
// text (a card: its image, title, summary, features, price) block by
// block. A markdown link holds inline content only, so as one link the
// heading became bold text and the list and paragraphs words on the link's
// line; instead each heading, paragraph and list keeps its kind, and the
// card's main heading (the first of the highest level), or without a
// heading its first text, holds the link: "## [Title](href)", then the
// summary as a paragraph.
func (c *converter) blockLink(n *html.Node, href string, level, depth int) {
	linked := false
	c.inLink++
	c.blockLinkChildren(n, href, level, &linked, depth)
	c.inLink--
}

func (c *converter) blockLinkChildren(n *html.Node, href string, level int, linked *bool, depth int) {
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		switch {
		case !holdsBlock(ch):
			if level > 0 || *linked {
				c.node(ch, depth+1)
				continue
			}
			// No heading: the first text holds the link.
			end := ch.NextSibling
			for end != nil && !holdsBlock(end) {
				end = end.NextSibling
			}
			if runHasText(ch, end) {
				c.linkRun(ch, end, href, depth)
				*linked = true
			} else {
				for ; ch != end; ch = ch.NextSibling {
					c.node(ch, depth+1)
				}
			}
			if end == nil {
				return
			}
			ch = end.PrevSibling
		case isHeadingAtom(ch.DataAtom):
			l := int(ch.Data[1] - '0')
			c.block()
			c.pushFrame("######"[:l]+" ", "")
			c.inline++
			if l == level && !*linked {
				*linked = true
				c.linkRun(ch.FirstChild, nil, href, depth+1)
			} else {
				c.children(ch, depth+1)
			}
			c.inline--
			c.popFrame()
			c.block()
		case ch.DataAtom == atom.Hr || ch.DataAtom == atom.Ul || ch.DataAtom == atom.Ol || ch.DataAtom == atom.Menu:
			c.node(ch, depth+1)
		default:
			c.block()
			c.blockLinkChildren(ch, href, level, linked, depth+1)
			c.block()
		}
	}
}

// blockContent reports whether link n holds a heading, a list or text in
// two blocks (paragraphs, divs, or the link's own text and a block), and no
// table, quote or code block (which keep the one-link rendering), and
// returns the highest level (smallest number) of its headings, 0 when it
// holds none. It looks at 256 nodes at most, which also bounds the work of
// blockLink.
func blockContent(n *html.Node) (level int, ok bool) {
	nodes, blocks := 0, 0
	var lastBlock *html.Node
	for c := n.FirstChild; c != nil; {
		if nodes++; nodes > 256 {
			return 0, false
		}
		if c.Type == html.TextNode && blocks < 2 && strings.TrimSpace(c.Data) != "" {
			b := c.Parent
			for b != n && !linkBlockAtom(b.DataAtom) {
				b = b.Parent
			}
			if blocks == 0 || b != lastBlock {
				blocks++
				lastBlock = b
			}
			if blocks >= 2 {
				ok = true
			}
		}
		if c.Type == html.ElementNode {
			switch {
			case isHeadingAtom(c.DataAtom):
				if l := int(c.Data[1] - '0'); level == 0 || l < level {
					level = l
				}
				ok = true
			case c.DataAtom == atom.Li:
				if p := c.Parent; p == nil || (p.DataAtom != atom.Ul && p.DataAtom != atom.Ol && p.DataAtom != atom.Menu) {
					return 0, false
				}
				ok = true
			case c.DataAtom == atom.Table || c.DataAtom == atom.Pre ||
				c.DataAtom == atom.Blockquote || c.DataAtom == atom.Dl:
				return 0, false
			}
		}
		if c.FirstChild != nil {
			c = c.FirstChild
			continue
		}
		c = nextSkip(c, n)
	}
	return level, ok
}

// selfAnchor reports whether link n is an anchor to a place in a page
// marked by a lone permalink sign ("¶", "§", "#", "🔗", "⚓"): the permalink that
// documentation and blog engines put beside each heading. The symbol says
// nothing without the hover it is made for, and as a link it would only
// repeat the heading's address; it is left out.
func selfAnchor(n *html.Node, href string) bool {
	if strings.IndexByte(href, '#') < 0 {
		return false
	}
	ch := n.FirstChild
	if ch == nil || ch.NextSibling != nil || ch.Type != html.TextNode {
		return false
	}
	switch strings.TrimSpace(ch.Data) {
	case "¶", "§", "#", "🔗", "⚓":
		return true
	}
	return false
}

// runHasText reports whether the siblings from first up to stop hold text.
func runHasText(first, stop *html.Node) bool {
	for ch := first; ch != stop; ch = ch.NextSibling {
		if ch.Type == html.TextNode && strings.TrimSpace(ch.Data) != "" {
			return true
		}
		if ch.Type == html.ElementNode && ch.FirstChild != nil && !skipFlat(ch.DataAtom) && runHasText(ch.FirstChild, nil) {
			return true
		}
	}
	return false
}

// holdsBlock reports whether n is, or holds, a heading or a block that
// blockLink writes as a paragraph of its own.
func holdsBlock(n *html.Node) bool {
	for c := n; c != nil; {
		if c.Type == html.ElementNode && (isHeadingAtom(c.DataAtom) || linkBlockAtom(c.DataAtom)) {
			return true
		}
		if c.FirstChild != nil && (c == n || c.Type == html.ElementNode) {
			c = c.FirstChild
			continue
		}
		if c == n {
			return false
		}
		c = nextSkip(c, n)
	}
	return false
}

func linkBlockAtom(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Main, atom.Header, atom.Footer,
		atom.Nav, atom.Aside, atom.Address, atom.Figure, atom.Figcaption, atom.Center,
		atom.Hgroup, atom.Details, atom.Summary, atom.Hr, atom.Ul, atom.Ol, atom.Menu:
		return true
	}
	return false
}

// nextSkip is the node after c's subtree within root, or nil.
func nextSkip(c, root *html.Node) *html.Node {
	for c != nil && c != root {
		if c.NextSibling != nil {
			return c.NextSibling
		}
		c = c.Parent
	}
	return nil
}

func isHeadingAtom(a atom.Atom) bool {
	switch a {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return true
	}
	return false
}

func hasPrefixFold(s, p string) bool {
	return len(s) >= len(p) && strings.EqualFold(s[:len(p)], p)
}

// escapeURL makes a URL safe inside markdown link parentheses.
func escapeURL(u string) string {
	if !strings.ContainsAny(u, " ()<>\n\t") {
		return u
	}
	r := strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29", "<", "%3C", ">", "%3E", "\n", "", "\t", "")
	return r.Replace(u)
}

func (c *converter) image(n *html.Node) {
	src := strings.TrimSpace(htmlattr.Get(n, "src"))
	if src == "" {
		return
	}
	if c.opts.RemoveBase64Images && hasPrefixFold(src, "data:") {
		src = Base64ImagePlaceholder
	} else {
		src = escapeURL(src)
	}
	alt := collapse(htmlattr.Get(n, "alt"))
	c.beforeContent()
	c.out = append(c.out, "!["...)
	for i := 0; i < len(alt); i++ {
		if alt[i] == '[' || alt[i] == ']' || alt[i] == '\\' {
			c.out = append(c.out, '\\')
		}
		c.out = append(c.out, alt[i])
	}
	c.out = append(c.out, "]("...)
	c.out = append(c.out, src...)
	c.out = append(c.out, ')')
}

func (c *converter) list(n *html.Node, depth int) {
	if c.inline > 0 {
		c.children(n, depth)
		return
	}
	ordered := n.DataAtom == atom.Ol
	num := 1
	if ordered {
		if s := htmlattr.Get(n, "start"); s != "" {
			v := 0
			for i := 0; i < len(s) && i < 9 && s[i] >= '0' && s[i] <= '9'; i++ {
				v = v*10 + int(s[i]-'0')
			}
			if v > 0 {
				num = v
			}
		}
	}
	// A list nested in an item starts on the next line; elsewhere it is a
	// block of its own.
	if n.Parent != nil && n.Parent.Type == html.ElementNode && n.Parent.DataAtom == atom.Li {
		c.lineBreak()
	} else {
		c.block()
	}
	if c.item != "" {
		c.newlines = 1
	}
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		if ch.Type != html.ElementNode || ch.DataAtom != atom.Li {
			if ch.Type == html.ElementNode {
				c.node(ch, depth+1)
			}
			continue
		}
		marker := "- "
		if ordered {
			marker = strconv.Itoa(num) + ". "
			num++
		}
		c.item0(ch, depth+1, marker)
		if c.newlines < 1 {
			c.newlines = 1
		}
	}
	c.block()
}

func (c *converter) item0(n *html.Node, depth int, marker string) {
	if c.inline > 0 {
		// Inside a table cell, link or heading: items are words on the
		// same line, separated by a space (a line break would end a table
		// row).
		c.pendingSpace = true
		c.children(n, depth)
		c.pendingSpace = true
		return
	}
	if c.item != "" {
		// An empty item followed by another one: write the empty marker.
		c.startLine()
		c.newlines = 1
	}
	if c.newlines < 1 {
		c.newlines = 1
	}
	c.pendingSpace = false
	indent := "                    "[:len(marker)]
	pushed := c.pushPrefix(indent)
	if pushed {
		c.itemPrefixLen = len(c.prefix) - len(indent)
	} else {
		c.itemPrefixLen = len(c.prefix)
	}
	c.item = marker
	c.children(n, depth)
	if c.item != "" {
		// Empty item: drop its marker.
		c.item = ""
	}
	if pushed {
		c.popPrefix(len(indent))
	}
	// Blank lines inside an item are kept; between items a single break.
	if c.newlines > 1 {
		c.newlines = 1
	}
}

func (c *converter) blockquote(n *html.Node, depth int) {
	if c.inline > 0 {
		c.children(n, depth)
		return
	}
	c.block()
	pushed := c.pushPrefix("> ")
	c.children(n, depth)
	if pushed {
		c.popPrefix(2)
	}
	c.block()
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key && a.Namespace == "" {
			return true
		}
	}
	return false
}

func trimSpaceBytes(b []byte) []byte {
	return bytes.TrimSpace(b)
}
