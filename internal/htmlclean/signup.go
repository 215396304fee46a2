package htmlclean

import (
	"strings"

	"github.com/firegate/firegate/internal/htmlattr"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxSignupText bounds the text (non-space bytes) of the block around an
// e-mail field that is taken for a sign-up box: its heading, a line of
// pitch, the field's label and a button.
const maxSignupText = 250

// removeSignupBoxes removes the small blocks built around an e-mail field
// ("Join our mailing list", "Get the best of ..., directly in your inbox"):
// from each field, the outermost ancestor that still holds at most
// maxSignupText of text and not the anchor, nor the page's title (its
// first h1) or most of its text: on a newsletter's own page the box is the
// page. A sign-in form (one with a password field) is no sign-up box.
func removeSignupBoxes(root, anchor *html.Node) {
	var boxes []*html.Node
	title, total := (*html.Node)(nil), -1
	for n := root; n != nil; n = next(n, root, false) {
		if n.Type != html.ElementNode || n.DataAtom != atom.Input || !isEmailField(n) || inPasswordForm(n) {
			continue
		}
		if total < 0 {
			title, total = findElement(root, atom.H1), textLen(root)
		}
		var box *html.Node
		for p := n.Parent; p != nil && p != root && p.Type == html.ElementNode; p = p.Parent {
			t := textLen(p)
			if (anchor != nil && isAncestor(p, anchor)) || t > maxSignupText ||
				(title != nil && isAncestor(p, title)) || 2*t > total {
				break
			}
			box = p
		}
		if box != nil {
			boxes = append(boxes, box)
		}
	}
	for _, b := range boxes {
		if b.Parent != nil {
			b.Parent.RemoveChild(b)
		}
	}
}

// inPasswordForm reports whether the field's form has a password field.
func inPasswordForm(n *html.Node) bool {
	f := n.Parent
	for f != nil && f.DataAtom != atom.Form {
		f = f.Parent
	}
	if f == nil {
		return false
	}
	for c := f; c != nil; c = next(c, f, false) {
		if c.Type == html.ElementNode && c.DataAtom == atom.Input && attrIs(c, "type", "password") {
			return true
		}
	}
	return false
}

// isEmailField reports an <input> for an e-mail address: by type, or by a
// name, id or placeholder that says e-mail.
func isEmailField(n *html.Node) bool {
	if t, _ := htmlattr.Lookup(n, "type"); strings.EqualFold(strings.TrimSpace(t), "email") {
		return true
	}
	for _, k := range []string{"name", "id", "placeholder", "autocomplete"} {
		v, _ := htmlattr.Lookup(n, k)
		v = strings.ToLower(v)
		if strings.Contains(v, "email") || strings.Contains(v, "e-mail") {
			return true
		}
	}
	return false
}

// removeChrome removes, when no pruning leaves enough of a page, what its
// tags and roles alone mark as page chrome (navigation, header, footer,
// dialogs, asides, hidden blocks, skip links), except protected elements:
// the rest of the body is kept whole. A page that is all chrome is kept
// whole.
func removeChrome(root *html.Node, protected map[*html.Node]bool, pg *page) {
	var chrome []*html.Node
	for n := root.FirstChild; n != nil; {
		if n.Type == html.ElementNode && !protected[n] && (isChrome(n) || pg.isHidden(n) ||
			n.DataAtom == atom.Header || n.DataAtom == atom.Aside || n.DataAtom == atom.Menu ||
			attrIs(n, "role", "banner") || attrIs(n, "role", "complementary") || (n.DataAtom == atom.A && isSkipLink(n))) {
			chrome = append(chrome, n)
			n = next(n, root, true)
			continue
		}
		n = next(n, root, false)
	}
	total, gone := textLen(root), 0
	for _, n := range chrome {
		gone += textLen(n)
	}
	if nearEmpty(total-gone, total-dialogText(root)) {
		return // the page is all chrome: keep it
	}
	for _, n := range chrome {
		n.Parent.RemoveChild(n)
	}
}
