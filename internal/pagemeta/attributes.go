package pagemeta

import (
	"fmt"
	"strings"

	"github.com/andybalholm/cascadia"
	"github.com/firegate/firegate/internal/exprlimit"
	"github.com/firegate/firegate/internal/htmlattr"
	"golang.org/x/net/html"
)

// AttributeSelector asks for the values of Attribute on every element
// matching the CSS selector Selector.
type AttributeSelector struct {
	Selector, Attribute string
}

// AttributeValues is the answer to one AttributeSelector.
type AttributeValues struct {
	Selector, Attribute string
	// Values holds the attribute value of each matching element that has
	// the attribute, in document order; never nil.
	Values []string
}

// Attributes evaluates sels against doc, one result per selector in the
// same order. Elements lacking the attribute are skipped; values are
// returned verbatim. An invalid selector fails the whole call with an error
// naming it.
func Attributes(doc *html.Node, sels []AttributeSelector) ([]AttributeValues, error) {
	out := make([]AttributeValues, 0, len(sels))
	for _, s := range sels {
		sel, err := exprlimit.Selector(s.Selector)
		if err != nil {
			return nil, fmt.Errorf("pagemeta: selector %q: %w", s.Selector, err)
		}
		key := strings.ToLower(strings.TrimSpace(s.Attribute)) // the parser lower-cases names
		vals := []string{}
		if doc != nil {
			for _, n := range cascadia.QueryAll(doc, sel) {
				if v, ok := htmlattr.Lookup(n, key); ok {
					vals = append(vals, v)
				}
			}
		}
		out = append(out, AttributeValues{Selector: s.Selector, Attribute: s.Attribute, Values: vals})
	}
	return out, nil
}
