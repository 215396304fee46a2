package extracteval

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// ReadabilityURL is the address the pages of the Readability layout are
// served under: the one Readability's own tests give them.
const ReadabilityURL = "http://fakehost/test/page.html"

// IsReadabilityCorpus reports whether dir has the layout of Mozilla
// Readability's test pages: pages/NAME/source.html.gz with the expected
// article in pages/NAME/expected.html.
func IsReadabilityCorpus(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "pages"))
	return err == nil && st.IsDir()
}

// LoadReadabilityCorpus reads the pages of dir in the Readability layout,
// in name order. Every page is an article of the dev half (the corpus has
// no held-out split), its reference the text of expected.html.
func LoadReadabilityCorpus(dir string) ([]Page, error) {
	names, err := filepath.Glob(filepath.Join(dir, "pages", "*", "expected.html"))
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no pages/*/expected.html under %s", dir)
	}
	sort.Strings(names)
	pages := make([]Page, 0, len(names))
	for _, f := range names {
		d := filepath.Dir(f)
		want, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		src, err := readGzip(filepath.Join(d, "source.html.gz"))
		if err != nil {
			return nil, err
		}
		pages = append(pages, Page{ID: filepath.Base(d), URL: ReadabilityURL, Type: "article", HTML: src, Text: HTMLText(string(want))})
	}
	return pages, nil
}

// Load reads a corpus of either layout: WCXB's (ground-truth/, html/) or
// Readability's (pages/).
func Load(dir string) ([]Page, error) {
	if IsReadabilityCorpus(dir) {
		return LoadReadabilityCorpus(dir)
	}
	return LoadCorpus(dir)
}

func readGzip(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// HTMLText is the text of an HTML fragment with its tags removed: block
// elements and line breaks end a line, inline ones join their text to the
// words around them, as a browser lays them out.
func HTMLText(s string) string {
	root, err := html.Parse(strings.NewReader(s))
	if err != nil {
		return ""
	}
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
			return
		case html.ElementNode:
			switch n.DataAtom {
			case atom.Script, atom.Style, atom.Template, atom.Noscript:
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if n.Type == html.ElementNode && endsLine(n.DataAtom) {
			b.WriteByte('\n')
		}
	}
	walk(root)
	lines := strings.Split(b.String(), "\n")
	out := lines[:0]
	for _, l := range lines {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func endsLine(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Br, atom.Li, atom.Ul, atom.Ol, atom.Dl, atom.Dt, atom.Dd, atom.H1, atom.H2,
		atom.H3, atom.H4, atom.H5, atom.H6, atom.Pre, atom.Blockquote, atom.Table, atom.Tr, atom.Td, atom.Th,
		atom.Figure, atom.Figcaption, atom.Section, atom.Article, atom.Header, atom.Footer, atom.Hr, atom.Img,
		atom.Caption, atom.Details, atom.Summary, atom.Aside, atom.Main, atom.Nav, atom.Form, atom.Address:
		return true
	}
	return false
}
