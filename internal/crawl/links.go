package crawl

import (
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/firegate/firegate/internal/htmlattr"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/publicsuffix"
)

// anchors returns the http(s) targets of the <a href> and <area href>
// elements of doc, resolved against base, in page order, each with its
// anchor text (else its title or aria-label attribute) as title.
func anchors(doc *html.Node, base *url.URL) []Link {
	var out []Link
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Script, atom.Style, atom.Template:
				return
			case atom.A, atom.Area:
				if href, ok := htmlattr.Lookup(n, "href"); ok {
					if u, ok := resolve(base, href); ok {
						title := collapse(text(n))
						if title == "" {
							t, _ := htmlattr.Lookup(n, "title")
							title = collapse(t)
						}
						if title == "" {
							t, _ := htmlattr.Lookup(n, "aria-label")
							title = collapse(t)
						}
						out = append(out, Link{URL: u, Title: truncate(title, maxTitleLen)})
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out
}

// resolve resolves href against base and keeps http(s) results.
func resolve(base *url.URL, href string) (string, bool) {
	href = strings.TrimSpace(href)
	if href == "" {
		return "", false
	}
	var u *url.URL
	var err error
	if base != nil {
		u, err = base.Parse(href)
	} else {
		u, err = url.Parse(href)
	}
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	return u.String(), true
}

// text concatenates the text below n.
func text(n *html.Node) string {
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch c.Type {
			case html.TextNode:
				b.WriteString(c.Data)
				b.WriteByte(' ')
			case html.ElementNode:
				if c.DataAtom != atom.Script && c.DataAtom != atom.Style {
					walk(c)
				}
			}
		}
	}
	walk(n)
	return b.String()
}

// collapse trims s and folds runs of white space to one space.
func collapse(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// registrable returns the registrable domain (eTLD+1) of host, "" when it
// has none (IP literals, single labels such as localhost).
func registrable(host string) string {
	host = strings.TrimSuffix(host, ".")
	if host == "" || strings.ContainsAny(host, ":[") || isIPv4(host) {
		return ""
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return ""
	}
	return d
}

func isIPv4(h string) bool {
	for _, c := range h {
		if (c < '0' || c > '9') && c != '.' {
			return false
		}
	}
	return true
}

// rank orders links by relevance to search: every word found in the URL
// scores 2, in the title or description 1, and the whole phrase found adds
// 3. Links that match nothing keep their order after those that do.
func rank(links []Link, search string) []Link {
	phrase := strings.ToLower(strings.TrimSpace(search))
	words := strings.Fields(phrase)
	if len(words) == 0 {
		return links
	}
	scores := make([]int, len(links))
	for i, l := range links {
		u := strings.ToLower(l.URL)
		if decoded, err := url.PathUnescape(u); err == nil {
			u = decoded
		}
		t := strings.ToLower(l.Title + " " + l.Description)
		s := 0
		for _, w := range words {
			if strings.Contains(u, w) {
				s += 2
			}
			if strings.Contains(t, w) {
				s++
			}
		}
		if len(words) > 1 && (strings.Contains(u, phrase) || strings.Contains(t, phrase) ||
			strings.Contains(u, strings.Join(words, "-"))) {
			s += 3
		}
		scores[i] = s
	}
	idx := make([]int, len(links))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
	out := make([]Link, len(links))
	for i, j := range idx {
		out[i] = links[j]
	}
	return out
}
