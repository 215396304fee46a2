// Package htmlattr reads the attributes of an x/net/html element.
package htmlattr

import "golang.org/x/net/html"

// Lookup returns the value of n's attribute key (not namespaced) and
// whether n has it.
func Lookup(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key && a.Namespace == "" {
			return a.Val, true
		}
	}
	return "", false
}

// Get returns the value of n's attribute key (not namespaced), "" when n
// has none.
func Get(n *html.Node, key string) string {
	v, _ := Lookup(n, key)
	return v
}
