package htmlclean

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"golang.org/x/net/html"

	"github.com/firegate/firegate/internal/markdown"
)

// benchPage builds a realistic article page of about size bytes: a large
// inline data script and mega-menu like real news sites, an article made of
// the corpus texts with links, emphasis, a table and code, comments, a
// related list and a footer.
func benchPage(tb testing.TB, size int) string {
	tb.Helper()
	texts, err := filepath.Glob(filepath.Join("testdata", "corpus", "article-*.txt"))
	if err != nil || len(texts) == 0 {
		tb.Fatal("no corpus texts")
	}
	var paras []string
	for _, f := range texts {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if len(l) > 80 {
				paras = append(paras, l)
			}
		}
	}
	var head, nav, art, tail strings.Builder
	head.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Bench article</title>`)
	head.WriteString(`<link rel="stylesheet" href="/static/main.css"><script id="__DATA__" type="application/json">{"props":{"items":[`)
	for i := 0; head.Len() < size/5; i++ {
		fmt.Fprintf(&head, `{"id":%d,"slug":"/news/story-%d","title":"Story number %d","tags":["a","b"]},`, i, i, i)
	}
	head.WriteString(`{}]}}</script></head><body class="article">`)
	nav.WriteString(`<header class="site-header"><a href="/" class="logo"><img src="/logo.svg" alt="Site"></a><nav class="mega-menu"><ul>`)
	for i := 0; nav.Len() < size/8; i++ {
		fmt.Fprintf(&nav, `<li class="menu-item"><a href="/section/%d">Section %d</a><ul class="sub-menu"><li><a href="/section/%d/a">Sub A</a></li><li><a href="/section/%d/b">Sub B</a></li></ul></li>`, i, i, i, i)
	}
	nav.WriteString(`</ul></nav></header><div class="ad-slot"><span>Advertisement</span></div>`)
	tail.WriteString(`<section class="comments"><h2>Comments</h2><ol>`)
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&tail, `<li class="comment"><b>reader%d</b><p>%s</p></li>`, i, paras[i%len(paras)][:60])
	}
	tail.WriteString(`</ol></section><aside class="related"><h2>Related</h2><ul>`)
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&tail, `<li><a href="/news/related-%d"><img src="/img/r%d.jpg" alt="">Related story %d</a></li>`, i, i, i)
	}
	tail.WriteString(`</ul></aside></main><footer class="site-footer"><a href="/about">About</a> <a href="/privacy">Privacy</a><p>© 2024</p></footer><script src="/app.js"></script></body></html>`)
	art.WriteString(`<main><article><h1>A long article for benchmarking</h1><p class="byline">By <a href="/a/x">Writer</a></p>`)
	budget := size - head.Len() - nav.Len() - tail.Len()
	for i := 0; art.Len() < budget; i++ {
		p := paras[i%len(paras)]
		switch i % 12 {
		case 3:
			fmt.Fprintf(&art, `<h2>Section %d</h2>`, i)
		case 5:
			fmt.Fprintf(&art, `<figure><img src="/media/%d.jpg" srcset="/media/%d-600.jpg 600w, /media/%d-1200.jpg 1200w" alt="Figure %d"><figcaption>Caption %d</figcaption></figure>`, i, i, i, i, i)
		case 7:
			art.WriteString(`<ul><li>First point with <em>emphasis</em></li><li>Second point with <code>code</code></li><li>Third point</li></ul>`)
		case 9:
			art.WriteString(`<table><thead><tr><th>Name</th><th>Value</th></tr></thead><tbody><tr><td>alpha</td><td>1</td></tr><tr><td>beta</td><td>2</td></tr></tbody></table>`)
		case 11:
			art.WriteString("<pre><code class=\"language-go\">for i := 0; i < n; i++ {\n\tfmt.Println(i)\n}</code></pre>")
		}
		words := strings.Fields(p)
		mid := len(words) / 2
		fmt.Fprintf(&art, `<p>%s <a href="/link/%d">%s</a> <strong>%s</strong> %s</p>`,
			strings.Join(words[:mid-2], " "), i, words[mid-2], words[mid-1], strings.Join(words[mid:], " "))
	}
	art.WriteString(`</article>`)
	return head.String() + nav.String() + art.String() + tail.String()
}

func benchOptions() Options {
	base, _ := url.Parse("https://news.example.com/2024/05/story.html")
	return Options{BaseURL: base, OnlyMainContent: true}
}

func parse(tb testing.TB, page string) *html.Node {
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		tb.Fatal(err)
	}
	return doc
}

// BenchmarkPipeline measures Clean+Convert on realistic pages, with the
// parse excluded (the engine parses once for all consumers) and included.
func BenchmarkPipeline(b *testing.B) {
	for _, size := range []int{20 << 10, 100 << 10} {
		page := benchPage(b, size)
		name := fmt.Sprintf("%dKB", size>>10)
		b.Run(name+"/parse-excluded", func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			docs := make([]*html.Node, 0, 64)
			for b.Loop() {
				if len(docs) == 0 {
					b.StopTimer()
					for i := 0; i < cap(docs); i++ {
						docs = append(docs, parse(b, page))
					}
					b.StartTimer()
				}
				doc := docs[len(docs)-1]
				docs = docs[:len(docs)-1]
				root, err := Clean(doc, benchOptions())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := markdown.Convert(root, markdown.Options{RemoveBase64Images: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/parse-included", func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			for b.Loop() {
				root, err := Clean(parse(b, page), benchOptions())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := markdown.Convert(root, markdown.Options{RemoveBase64Images: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkConverters compares markdown.Convert with html-to-markdown v2 on
// the same cleaned tree (parse and clean excluded).
func BenchmarkConverters(b *testing.B) {
	page := benchPage(b, 100<<10)
	root, err := Clean(parse(b, page), benchOptions())
	if err != nil {
		b.Fatal(err)
	}
	b.Run("firegate", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			if _, err := markdown.Convert(root, markdown.Options{RemoveBase64Images: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("html-to-markdown-v2", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			if _, err := htmltomarkdown.ConvertNode(root); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkClean measures Clean alone on the 100 KB page.
func BenchmarkClean(b *testing.B) {
	page := benchPage(b, 100<<10)
	for _, main := range []bool{false, true} {
		b.Run(fmt.Sprintf("onlyMain=%v", main), func(b *testing.B) {
			opts := benchOptions()
			opts.OnlyMainContent = main
			docs := make([]*html.Node, 0, 64)
			for b.Loop() {
				if len(docs) == 0 {
					b.StopTimer()
					for i := 0; i < cap(docs); i++ {
						docs = append(docs, parse(b, page))
					}
					b.StartTimer()
				}
				doc := docs[len(docs)-1]
				docs = docs[:len(docs)-1]
				if _, err := Clean(doc, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCorpus measures parse+Clean(onlyMainContent) per corpus page, the
// figure compared with other extractors in BENCHMARKS.md.
func BenchmarkCorpus(b *testing.B) {
	pages := loadCorpus(b)
	b.ResetTimer()
	for b.Loop() {
		for _, p := range pages {
			if _, err := Clean(parse(b, p.html), benchOptions()); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(pages))/1e3, "µs/page")
}
