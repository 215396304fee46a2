package htmlclean

import (
	"strings"
	"unicode"

	"golang.org/x/net/html"
)

// maxSlugSearch bounds the nodes searched for a section's heading.
const maxSlugSearch = 64

// isHeadingSlug reports whether id is the slug of the first heading in n
// (its words lower-cased and joined by hyphens or underscores, as
// documentation generators and markdown renderers write a section's id):
// such an id says what the section is about ("sharing-with-a-team",
// "related-work"), not which part of the page it is. In any language.
func isHeadingSlug(n *html.Node, id string) bool {
	if !strings.ContainsAny(id, "-_") {
		return false
	}
	var h *html.Node
	seen := 0
	for c := n.FirstChild; c != nil && seen < maxSlugSearch; c = next(c, n, false) {
		seen++
		if c.Type == html.ElementNode && isHeading(c.DataAtom) {
			h = c
			break
		}
	}
	if h == nil {
		return false
	}
	t, ok := shortText(h, 200)
	if !ok {
		return false
	}
	words := strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) < 2 {
		return false
	}
	slug := strings.ToLower(strings.NewReplacer("_", "-").Replace(id))
	return slug == strings.Join(words, "-")
}
