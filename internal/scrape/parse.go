package scrape

import (
	"fmt"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxParseDepth keeps nesting below the parser's hard limit of 512 open
// elements, leaving room for the html/body wrappers it adds.
const maxParseDepth = 480

// parseHTML parses a page. Pages nested deeper than the parser accepts
// (it refuses more than 512 open elements) are flattened first: elements
// below maxParseDepth lose their tags but keep their text, so the content
// survives instead of the scrape failing.
func parseHTML(raw string) (*html.Node, error) {
	root, err := html.Parse(strings.NewReader(raw))
	if err == nil {
		return root, nil
	}
	root, err2 := html.Parse(strings.NewReader(flattenDeep(raw, maxParseDepth)))
	if err2 != nil {
		return nil, fmt.Errorf("%w: parse html: %v", ErrSite, err)
	}
	return root, nil
}

// flattenDeep re-emits raw with every start and end tag deeper than max
// dropped. Depth is tracked the simple way (void elements and self-closing
// tags do not nest; an end tag closes back to its most recent open match),
// which is all that is needed to stay under the parser's limit.
func flattenDeep(raw string, limit int) string {
	z := html.NewTokenizer(strings.NewReader(raw))
	var b strings.Builder
	b.Grow(len(raw))
	type open struct {
		name string
		kept bool
	}
	var stack []open
	depth := 0 // kept elements on the stack
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return b.String()
		case html.StartTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if isVoid(a) {
				b.Write(z.Raw())
				continue
			}
			kept := depth < limit
			if kept {
				depth++
				b.Write(z.Raw())
			}
			stack = append(stack, open{name: string(name), kept: kept})
		case html.EndTagToken:
			name, _ := z.TagName()
			for i := len(stack) - 1; i >= 0; i-- {
				if stack[i].name == string(name) {
					for _, o := range stack[i:] {
						if o.kept {
							depth--
						}
					}
					if stack[i].kept {
						b.Write(z.Raw())
					}
					stack = stack[:i]
					break
				}
			}
		default:
			b.Write(z.Raw())
		}
	}
}

func isVoid(a atom.Atom) bool {
	switch a {
	case atom.Area, atom.Base, atom.Br, atom.Col, atom.Embed, atom.Hr, atom.Img, atom.Input,
		atom.Link, atom.Meta, atom.Source, atom.Track, atom.Wbr:
		return true
	}
	return false
}
