package htmlclean

import (
	"regexp"
	"strings"

	"golang.org/x/net/html"
)

// maxBioText bounds the text of a block taken for an author's bio.
const maxBioText = 900

// bioTailShare is the share of the page's text that may follow an author's
// bio: a bio sits at the end of the article, after its text.
const bioTailShare = 0.2

// bioStart matches the opening of an author's bio: a name of one to four
// capitalised words, then "is a", "is the"... ("Ann Smith is a freelance
// writer", "Joe is the co-founder of").
var bioStart = regexp.MustCompile(`^(?:[A-Z][\p{L}.'’-]*\.? ){0,3}[A-Z][\p{L}.'’-]*(?: \([^)]{1,40}\))? (?:is|was|has been) (?:a|an|the|currently|also|our|one)\b`)

// bioRole matches, in a bio's first sentences, the trade of a writer or of
// the person behind a business.
var bioRole = regexp.MustCompile(`(?i)\b(?:writer|editor|author|journalist|reporter|contributor|founder|co-founder|ceo|manager|specialist|expert|director|marketer|blogger|analyst|consultant|freelance|columnist|strategist|researcher|owner)\b`)

// removeAuthorBios removes, near the end of the page's text, the leaf
// blocks that present the article's author ("Ann Smith is a freelance
// writer who covers..."): page furniture under the article, not its text.
// Forum threads keep them (a post may introduce its poster).
func removeAuthorBios(root *html.Node, pk pageKind) {
	if pk.isThread() {
		return
	}
	total := textLen(root)
	if total == 0 {
		return
	}
	var bios []*html.Node
	seen := 0
	for n := root; n != nil; {
		if n.Type == html.TextNode {
			k, _ := nonSpace(n.Data)
			seen += k
			n = next(n, root, false)
			continue
		}
		if n != root && n.Type == html.ElementNode && isBlock(n.DataAtom) && !hasBlockChild(n) {
			l := textLen(n)
			if l > 0 && l <= maxBioText && float64(total-seen-l) <= bioTailShare*float64(total) {
				raw, _ := shortText(n, maxBioText)
				t := strings.Join(strings.Fields(raw), " ")
				if isBio(t) {
					bios = append(bios, n)
				}
			}
			seen += l
			n = next(n, root, true)
			continue
		}
		n = next(n, root, false)
	}
	for _, b := range bios {
		if b.Parent != nil {
			b.Parent.RemoveChild(b)
		}
	}
}

// personWord matches the pronouns that say a one-word subject is a person
// ("Joe is the founder of ... He has ...").
var personWord = regexp.MustCompile(`\b(?:[Hh]e|[Ss]he|[Hh]is|[Hh]er|[Tt]hey|[Tt]heir)\b`)

// isBio reports an author's bio: a name opening "is a ..." with a writer's
// or founder's trade in its first 200 bytes; a one-word subject must be
// shown to be a person by a pronoun ("Agriculture is a major contributor"
// is not one).
func isBio(t string) bool {
	m := bioStart.FindStringIndex(t)
	if m == nil || !bioRole.MatchString(t[:min(len(t), 200)]) {
		return false
	}
	subject := t[:m[1]]
	if i := strings.Index(subject, " is "); i >= 0 {
		subject = subject[:i]
	} else if i := strings.Index(subject, " was "); i >= 0 {
		subject = subject[:i]
	} else if i := strings.Index(subject, " has "); i >= 0 {
		subject = subject[:i]
	}
	return strings.Contains(subject, " ") || personWord.MatchString(t)
}
