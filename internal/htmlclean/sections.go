package htmlclean

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// boilerplateHeadings are the starts of headings that introduce a section
// which is not part of the main content: recirculation, comments, sharing and
// sign-up prompts. They are English only.
var boilerplateHeadings = []string{
	"related", "you may also like", "you might also like", "you may like", "recommended",
	"more from", "more stories", "more articles", "more posts", "read next", "read more",
	"what to read next", "popular", "most popular", "most read", "trending", "recent posts",
	"latest posts", "comments", "leave a reply", "leave a comment", "join the discussion",
	"discussion", "share this", "share on", "subscribe", "sign up for", "newsletter",
	"follow us", "about the author", "was this helpful", "was this page helpful",
	"did you find this", "tags", "categories", "other posts", "other articles", "other stories",
	"more like this", "like this", "keep reading", "continue reading", "up next", "next up",
	"you might be interested", "you may be interested", "don't miss", "editor's picks",
	"latest news", "latest articles", "latest stories", "recent articles", "recent stories",
	"popular posts", "related posts", "join our newsletter", "stay in touch", "stay connected",
	"add a comment", "post a comment", "write a comment", "table of contents", "in this article", "on this page", "share this article", "share this post",
	"create an account", "sign in", "log in", "already have an account",
	"customers also", "trending searches", "popular searches", "recently viewed",
	"contact us", "advertisement", "featured brands", "why trust us", "follow the author",
	"customer reviews", "need help",
}

// maxBoilerplateSections bounds the work on pages with very many headings.
const maxBoilerplateSections = 64

func isBoilerplateHeading(text string) bool {
	t := strings.ToLower(strings.Join(strings.Fields(text), " "))
	// Leading marks and emoji ("🔥 Recommended posts") are not words.
	t = strings.TrimLeftFunc(t, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if t == "" || len(t) > 60 {
		return false
	}
	for _, hs := range [2][]string{boilerplateHeadings, intlBoilerplateHeadings} {
		for _, h := range hs {
			if strings.HasPrefix(t, h) && (len(t) == len(h) || !startsWithLetter(t[len(h):])) {
				return true
			}
		}
	}
	return false
}

// isPostsHeading reports a heading that, on a forum thread, opens its posts
// ("Comments", "Discussion"): the replies are the thread, not boilerplate.
func isPostsHeading(text string) bool {
	t := strings.ToLower(strings.Join(strings.Fields(text), " "))
	t = strings.TrimFunc(t, func(r rune) bool { return !unicode.IsLetter(r) })
	return t == "comments" || t == "discussion" || t == "replies" || intlPostsHeadings[t]
}

// startsWithLetter reports whether s opens with a letter ("you may also
// like…" ends the phrase, "relatedness" does not).
func startsWithLetter(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r)
}

func isHeading(a atom.Atom) bool {
	switch a {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return true
	}
	return false
}

func headingLevel(a atom.Atom) int {
	switch a {
	case atom.H1:
		return 1
	case atom.H2:
		return 2
	case atom.H3:
		return 3
	case atom.H4:
		return 4
	case atom.H5:
		return 5
	}
	return 6
}

// removeBoilerplateSections removes the sections introduced by a
// boilerplate heading ("Related articles", "Comments", ...): the heading's
// own container when the heading opens it, otherwise the heading and the
// siblings after it up to the next heading of the same or a higher level.
// Containers holding the anchor, and content elements (article, main), are
// never removed whole. The page's own title (its first h1) opens no such
// section, however it reads: "Contact us", "Sign in", "Subscribe to our
// newsletter" are the titles of those pages. (A section holding most of
// the page's text is not spared: on WCXB such sections are reviews and
// comments far longer than the content they follow.)
func removeBoilerplateSections(root, anchor *html.Node, pk pageKind) {
	var heads []*html.Node
	for n := root; n != nil; {
		if n.Type == html.ElementNode && isHeading(n.DataAtom) {
			if t := textOf(n); isBoilerplateHeading(t) && !(pk == kindForum && isPostsHeading(t)) ||
				pk == kindProduct && isProductBoilerplateHeading(t) {
				heads = append(heads, n)
				if len(heads) == maxBoilerplateSections {
					break
				}
			}
			n = next(n, root, true)
			continue
		}
		n = next(n, root, false)
	}
	if len(heads) == 0 {
		return
	}
	title := findElement(root, atom.H1)
	holdsAnchor := map[*html.Node]bool{}
	for p := anchor; p != nil; p = p.Parent {
		holdsAnchor[p] = true
	}
	for _, h := range heads {
		if h == title || h.Parent == nil || holdsAnchor[h] || !isAncestor(root, h) {
			continue // the title, removed with an earlier section, or holds the content
		}
		c := h
		for c.Parent != nil && c.Parent != root && opens(c.Parent, c) && !isContentElement(c.Parent) &&
			!holdsAnchor[c.Parent] {
			c = c.Parent
		}
		if c != h {
			c.Parent.RemoveChild(c)
			continue
		}
		level := headingLevel(h.DataAtom)
		for s := h.NextSibling; s != nil; {
			if s.Type == html.ElementNode && (isHeading(s.DataAtom) && headingLevel(s.DataAtom) <= level ||
				holdsAnchor[s]) {
				break
			}
			nx := s.NextSibling
			h.Parent.RemoveChild(s)
			s = nx
		}
		h.Parent.RemoveChild(h)
	}
}

// opens reports whether child is the first child of p with any text.
func opens(p, child *html.Node) bool {
	for c := p.FirstChild; c != nil; c = c.NextSibling {
		if c == child {
			return true
		}
		if c.Type == html.TextNode && strings.TrimSpace(c.Data) != "" {
			return false
		}
		if c.Type == html.ElementNode && textSize(c) > 0 {
			return false
		}
	}
	return false
}

// textOf is the text of n's subtree.
func textOf(n *html.Node) string {
	var b strings.Builder
	for c := n; c != nil; c = next(c, n, false) {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
			b.WriteByte(' ')
		}
	}
	return b.String()
}
