package fetch

import (
	"fmt"
	"strings"
)

// AcceptLanguage builds an Accept-Language value from locale tags in
// priority order, first preferred, with decreasing q values:
// "de-DE,fr;q=0.9,en;q=0.8". No tags give "".
func AcceptLanguage(langs []string) string {
	var b strings.Builder
	q := 10
	for i, l := range langs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l)
		if i > 0 {
			if q > 1 {
				q--
			}
			fmt.Fprintf(&b, ";q=0.%d", q)
		}
	}
	return b.String()
}
