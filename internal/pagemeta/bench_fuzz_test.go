package pagemeta

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// page100KB builds a realistic ~100 KB page: a busy head and a body with
// navigation, article text, images and many links.
func page100KB() string {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Benchmark page</title>`)
	b.WriteString(`<meta name="viewport" content="width=device-width"><meta name="description" content="desc">`)
	for i := range 30 {
		fmt.Fprintf(&b, `<meta property="og:x%d" content="value %d"><meta name="twitter:y%d" content="v">`, i, i, i)
	}
	b.WriteString(`<link rel="icon" href="/favicon.ico"><link rel="stylesheet" href="/s.css"></head><body><nav><ul>`)
	for i := range 60 {
		fmt.Fprintf(&b, `<li><a href="/section/%d">Section %d</a></li>`, i, i)
	}
	b.WriteString(`</ul></nav><main><article>`)
	for i := 0; b.Len() < 100_000; i++ {
		fmt.Fprintf(&b, `<p>Paragraph %d with some <strong>bold</strong> text and a <a href="/article/%d?ref=p#c">link</a>`+
			` plus an <a href="https://other.example.org/page/%d">external one</a>. Lorem ipsum dolor sit amet,`+
			` consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore.</p>`, i, i, i%50)
		if i%10 == 0 {
			fmt.Fprintf(&b, `<figure><img src="/img/%d.jpg" srcset="/img/%d-480.jpg 480w, /img/%d-960.jpg 960w" alt=""></figure>`, i, i, i)
		}
	}
	b.WriteString(`</article></main><footer><a href="mailto:hi@example.com">mail</a></footer></body></html>`)
	return b.String()
}

func benchDoc(b *testing.B) (*html.Node, *url.URL) {
	b.Helper()
	src := page100KB()
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	return doc, &url.URL{Scheme: "https", Host: "example.com", Path: "/news/story"}
}

func BenchmarkExtract100KB(b *testing.B) {
	doc, u := benchDoc(b)
	for b.Loop() {
		Extract(doc, u)
	}
}

func BenchmarkMetadataAndLinks100KB(b *testing.B) {
	doc, u := benchDoc(b)
	for b.Loop() {
		base := BaseURL(doc, u)
		Metadata(doc, base)
		Links(doc, base)
	}
}

func BenchmarkMetadata100KB(b *testing.B) {
	doc, u := benchDoc(b)
	for b.Loop() {
		Metadata(doc, u)
	}
}

func BenchmarkLinks100KB(b *testing.B) {
	doc, u := benchDoc(b)
	for b.Loop() {
		Links(doc, u)
	}
}

// FuzzExtract checks that extraction never panics and that its results
// keep their documented shape. Seeds live in testdata/fuzz/FuzzExtract.
func FuzzExtract(f *testing.F) {
	f.Add(`<html lang="en"><head><title>t</title><meta property="og:locale:alternate" content="x"></head><body><a href="/a">a</a><img srcset="a.jpg 2x"></body></html>`)
	f.Fuzz(func(t *testing.T, src string) {
		doc, err := html.Parse(strings.NewReader(src))
		if err != nil {
			return
		}
		pageURL := &url.URL{Scheme: "https", Host: "example.com", Path: "/p"}
		page := Extract(doc, pageURL)
		if page.Base == nil || (page.Base.Scheme != "http" && page.Base.Scheme != "https") {
			t.Fatalf("base %v is not http(s)", page.Base)
		}
		for k, v := range page.Metadata {
			switch v := v.(type) {
			case string:
				if k == "ogLocaleAlternate" {
					t.Fatalf("ogLocaleAlternate is a string")
				}
				if v == "" || v != strings.TrimSpace(v) {
					t.Fatalf("%s = %q: empty or untrimmed", k, v)
				}
			case []string:
				if len(v) == 0 {
					t.Fatalf("%s is an empty array", k)
				}
			default:
				t.Fatalf("%s has type %T", k, v)
			}
		}
		checkURLs(t, "link", page.Links, true)
		checkURLs(t, "image", page.Images, false)
		if _, err := Attributes(doc, []AttributeSelector{{Selector: "a[href]", Attribute: "href"}}); err != nil {
			t.Fatal(err)
		}
	})
}

func checkURLs(t *testing.T, kind string, urls []string, mailto bool) {
	t.Helper()
	seen := map[string]bool{}
	for _, s := range urls {
		if seen[s] {
			t.Fatalf("duplicate %s %q", kind, s)
		}
		seen[s] = true
		if mailto && hasSchemeFold(s, "mailto") {
			continue
		}
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			t.Fatalf("%s %q is not an absolute http(s) URL (%v)", kind, s, err)
		}
	}
}

// FuzzFastResolve checks that the url.Parse-free fast path agrees with the
// full resolver whenever it answers.
func FuzzFastResolve(f *testing.F) {
	for _, s := range []string{"/a/b?c=d#e", "https://x.example/p", "http://x.example/a/../b", "/!$&'()*+,;=:@", "/p#f?g"} {
		f.Add("https://Example.com:8443/base/", s)
	}
	f.Fuzz(func(t *testing.T, baseStr, raw string) {
		base, err := url.Parse(baseStr)
		if err != nil {
			return
		}
		got, ok := fastResolve(originPrefix(base), raw)
		if !ok {
			return
		}
		want, wantOK := resolveHTTP(base, raw)
		if !wantOK || got != want {
			t.Fatalf("fastResolve(%q, %q) = %q; resolveHTTP = %q, %v", baseStr, raw, got, want, wantOK)
		}
	})
}
