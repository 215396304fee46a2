package htmlclean

import (
	"bytes"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

func render(t testing.TB, n *html.Node) string {
	t.Helper()
	var b bytes.Buffer
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if err := html.Render(&b, c); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func cleanString(t testing.TB, src string, opts Options) (string, error) {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	root, err := Clean(doc, opts)
	if err != nil {
		return "", err
	}
	return render(t, root), nil
}

func TestClean(t *testing.T) {
	t.Parallel()
	base, _ := url.Parse("https://example.com/dir/page.html")
	tests := []struct {
		name string
		in   string
		opts Options
		want string
	}{
		{
			name: "removes non-content elements",
			in:   `<head><title>t</title><meta name=x><link rel=stylesheet href=a.css></head><body><script>x()</script><style>p{}</style><noscript>n</noscript><!-- c --><p>Hi</p><iframe src=x></iframe></body>`,
			want: `<p>Hi</p>`,
		},
		{
			name: "absolute urls",
			in:   `<a href="../up">u</a><a href="/root">r</a><a href="#frag">f</a><a href="mailto:a@b.c">m</a><img src="img.png">`,
			opts: Options{BaseURL: base},
			want: `<a href="https://example.com/up">u</a><a href="https://example.com/root">r</a><a href="https://example.com/dir/page.html#frag">f</a><a href="mailto:a@b.c">m</a><img src="https://example.com/dir/img.png"/>`,
		},
		{
			name: "srcset largest width",
			in:   `<img src="s.jpg" srcset="m.jpg 800w, l.jpg 1600w, s.jpg 400w" sizes="100vw">`,
			opts: Options{BaseURL: base},
			want: `<img src="https://example.com/dir/l.jpg"/>`,
		},
		{
			name: "srcset density",
			in:   `<img srcset="a.jpg, b.jpg 2x, c.jpg 1.5x">`,
			want: `<img src="b.jpg"/>`,
		},
		{
			name: "picture sources",
			in:   `<picture><source type="image/webp" srcset="w-1x.webp 1x, w-3x.webp 3x"><source srcset="big.jpg 2000w"><img src="small.jpg" alt="p"></picture>`,
			want: `<picture><img src="big.jpg" alt="p"/></picture>`,
		},
		{
			name: "lazy image",
			in:   `<img src="data:image/gif;base64,R0lGOD" data-src="/real.jpg">`,
			opts: Options{BaseURL: base},
			want: `<img src="https://example.com/real.jpg" data-src="/real.jpg"/>`,
		},
		{
			name: "exclude then include",
			in:   `<div class="a"><p>keep</p><p class="ad">drop</p></div><div class="b">other</div><p class="a">second</p>`,
			opts: Options{IncludeTags: []string{".a"}, ExcludeTags: []string{".ad"}},
			want: `<div class="a"><p>keep</p></div><p class="a">second</p>`,
		},
		{
			name: "include by tag name",
			in:   `<header>h</header><article><p>x</p></article><footer>f</footer>`,
			opts: Options{IncludeTags: []string{"article"}},
			want: `<article><p>x</p></article>`,
		},
		{
			name: "main content keeps article in header",
			in:   `<header><nav><a href=/a>A</a> <a href=/b>B</a></nav><article><h1>Title</h1><p>` + strings.Repeat("Body text, with commas, goes here. ", 10) + `</p></article></header><footer>foot</footer>`,
			opts: Options{OnlyMainContent: true},
			want: `<header><article><h1>Title</h1><p>` + strings.Repeat("Body text, with commas, goes here. ", 10) + `</p></article></header>`,
		},
		{
			name: "main content falls back when empty",
			in:   `<nav><a href=/a>Only</a> <a href=/b>links</a></nav>`,
			opts: Options{OnlyMainContent: true},
			want: `<nav><a href="/a">Only</a> <a href="/b">links</a></nav>`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := cleanString(t, tt.in, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Clean mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCleanInvalidSelector(t *testing.T) {
	t.Parallel()
	for _, opts := range []Options{{IncludeTags: []string{"div["}}, {ExcludeTags: []string{"::"}}} {
		if _, err := cleanString(t, "<p>x</p>", opts); err == nil {
			t.Errorf("Clean(%+v): want error", opts)
		}
	}
}

func TestLargest(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"a.jpg 100w, b.jpg 300w, c.jpg 200w", "b.jpg"},
		{"a.jpg 1x,b.jpg 2x", "b.jpg"},
		{"https://cdn/x.jpg?w=1,2 500w, y.jpg 10w", "https://cdn/x.jpg?w=1,2"},
		{"only.jpg", "only.jpg"},
		{"", ""},
	}
	for _, tt := range tests {
		if got, _ := largest(tt.in); got != tt.want {
			t.Errorf("largest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{
		`<header><nav><a href=/>x</a></nav><article><p>Body, text.</p></article></header>`,
		`<picture><source srcset="a 1x, b 2x"><img src=c></picture>`,
		`<div class="sidebar"><main><p>x</p></main></div><footer>f</footer>`,
		`<table><tr><td><div class="comments"><p>c</p></div></td></tr></table>`,
	} {
		f.Add(s, true)
	}
	base, _ := url.Parse("https://example.com/a/")
	f.Fuzz(func(t *testing.T, src string, main bool) {
		doc, err := html.Parse(strings.NewReader(src))
		if err != nil {
			return
		}
		root, err := Clean(doc, Options{BaseURL: base, OnlyMainContent: main, ExcludeTags: []string{".ad"}})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := html.Render(&b, root); err != nil {
			t.Fatal(err)
		}
		if limit := 16*len(src) + 4096; b.Len() > limit {
			t.Fatalf("output %d bytes for %d bytes of input", b.Len(), len(src))
		}
	})
}

func deepTree(depth int, a atom.Atom) *html.Node {
	doc := &html.Node{Type: html.DocumentNode}
	body := &html.Node{Type: html.ElementNode, DataAtom: atom.Body, Data: "body"}
	doc.AppendChild(body)
	n := body
	for i := 0; i < depth; i++ {
		c := &html.Node{Type: html.ElementNode, DataAtom: a, Data: a.String(),
			Attr: []html.Attribute{{Key: "class", Val: "content"}}}
		n.AppendChild(c)
		n = c
	}
	n.AppendChild(&html.Node{Type: html.TextNode, Data: strings.Repeat("deep text, ", 20)})
	return doc
}

func TestCleanDeep(t *testing.T) {
	t.Parallel()
	for _, a := range []atom.Atom{atom.Div, atom.Header, atom.A, atom.P} {
		t.Run(a.String(), func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			root, err := Clean(deepTree(100_000, a), Options{OnlyMainContent: true, IncludeTags: []string{"div, p, header, a"}})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(visibleText(root), "deep text") {
				t.Error("leaf text lost")
			}
			// A hang guard, not a timing test: linear work on 100k levels
			// takes milliseconds, quadratic work would take hours.
			if d := time.Since(start); d > time.Minute {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestCleanDeepHeadings: 100k levels, each opened by a boilerplate heading,
// stay linear and keep the text at the bottom.
func TestCleanDeepHeadings(t *testing.T) {
	t.Parallel()
	doc := &html.Node{Type: html.DocumentNode}
	body := &html.Node{Type: html.ElementNode, DataAtom: atom.Body, Data: "body"}
	doc.AppendChild(body)
	n := body
	for i := 0; i < 100_000; i++ {
		h := &html.Node{Type: html.ElementNode, DataAtom: atom.H2, Data: "h2"}
		h.AppendChild(&html.Node{Type: html.TextNode, Data: "Related stories"})
		c := &html.Node{Type: html.ElementNode, DataAtom: atom.Div, Data: "div"}
		n.AppendChild(h)
		n.AppendChild(c)
		n = c
	}
	n.AppendChild(&html.Node{Type: html.TextNode, Data: strings.Repeat("deep text, ", 20)})
	start := time.Now()
	root, err := Clean(doc, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(visibleText(root), "deep text") {
		t.Error("leaf text lost")
	}
	// A hang guard, not a timing test (see TestCleanDeep).
	if d := time.Since(start); d > time.Minute {
		t.Errorf("took %v", d)
	}
}

func TestBoilerplateHeading(t *testing.T) {
	for text, want := range map[string]bool{
		"Related posts":                           true,
		"You may also like…":                      true,
		"🔥 Recommended Posts":                     true,
		"Add A Comment":                           true,
		"Relatedness of species":                  false,
		"Recommendations for a cold start":        false,
		"Comments on the draft law":               true,
		"Commentary":                              false,
		"Create an account or sign in to comment": true,
		"Sign in":                                 true,
		"Signing a lease":                         false,
		"Contact us":                              true,
		"Contact usage limits":                    false,
		"Advertisement: new course":               true,
		"Featured brands:":                        true,
		"Why trust us?":                           true,
		"Follow the author":                       true,
		"Customer Reviews (4,567)":                true,
		"Need help finding the right chair?":      true,
		"Needless to say":                         false,
	} {
		if got := isBoilerplateHeading(text); got != want {
			t.Errorf("%q: %v, want %v", text, got, want)
		}
	}
}
