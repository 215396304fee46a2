package scrape

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/cache"
	"github.com/firegate/firegate/internal/fetch"
)

// benchPage builds an article page of about size bytes.
func benchPage(size int) string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="en"><head><title>Bench</title><meta name="description" content="d"></head><body>
<header><nav><a href="/">Home</a><a href="/news">News</a><a href="/about">About</a></nav></header><main><article><h1>Bench article</h1>`)
	for i := 0; b.Len() < size-200; i++ {
		fmt.Fprintf(&b, `<p>Paragraph %d of the harbour story, with <a href="/story/%d">a link</a> and <strong>some bold words</strong> in between the plain ones that fill the line.</p>`, i, i)
		if i%8 == 7 {
			fmt.Fprintf(&b, "<h2>Section %d</h2><ul><li>one</li><li>two</li></ul>", i/8)
		}
	}
	b.WriteString(`</article></main><footer>© Bench</footer></body></html>`)
	return b.String()
}

func benchServer(b *testing.B, size int) string {
	page := benchPage(size)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(page))
	}))
	b.Cleanup(srv.Close)
	return srv.URL + "/"
}

// BenchmarkScrape compares a fresh scrape of a local 20 KB page (fetch,
// parse, clean, markdown) with the same scrape answered by the cache.
func BenchmarkScrape(b *testing.B) {
	url := benchServer(b, 20<<10)
	f := fetch.New(fetch.Options{AllowPrivate: true}, nil)
	for _, tc := range []struct {
		name  string
		cache cache.Cache
		opts  func(*Options)
	}{
		{"fresh", nil, func(o *Options) {}},
		{"cache-hit-memory", cache.NewMemory(64 << 20), func(o *Options) { o.MaxAge, o.StoreInCache = time.Hour, true }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e := New(Config{Fetcher: f, Cache: tc.cache, Log: discardLogger()})
			o := defaults(url, FormatMarkdown)
			tc.opts(&o)
			if _, err := e.Scrape(context.Background(), o); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := e.Scrape(context.Background(), o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRender is the pipeline without the network: parse, metadata,
// clean, markdown, on 20 KB and 100 KB pages.
func BenchmarkRender(b *testing.B) {
	for _, size := range []int{20 << 10, 100 << 10} {
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			page := benchPage(size)
			resp := &fetch.Response{URL: "https://example.com/a", StatusCode: 200, ContentType: "text/html",
				Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}}, Body: []byte(page)}
			e := New(Config{Log: discardLogger()})
			o := defaults(resp.URL, FormatMarkdown)
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.render(context.Background(), &o, resp, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// BenchmarkRenderReason measures the engine choice on parsed pages: the
// 20 and 100 KB articles of benchPage with analytics and a theme script,
// and a server-rendered page with 60 KB of framework state whose text the
// HTML shows (the blob is scanned and its text looked up).
func BenchmarkRenderReason(b *testing.B) {
	scripts := `<script async src="https://www.googletagmanager.com/gtag/js?id=G-1"></script><script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}gtag('js',new Date());</script>`
	withScripts := func(p string) string { return strings.Replace(p, "</head>", scripts+"</head>", 1) }
	var state strings.Builder
	state.WriteString(`<script id="__NEXT_DATA__" type="application/json">{"props":{"pageProps":{"items":[`)
	for i := 0; state.Len() < 60<<10; i++ {
		fmt.Fprintf(&state, `{"id":%d,"text":"Paragraph %d of the harbour story, with"},`, i, i)
	}
	state.WriteString(`{}]}}}</script>`)
	next := strings.Replace(benchPage(100<<10), "</body>", state.String()+"</body>", 1)
	for _, tc := range []struct{ name, page string }{
		{"static-20KB", withScripts(benchPage(20 << 10))},
		{"static-100KB", withScripts(benchPage(100 << 10))},
		{"next-ssr-100KB+60KB-state", next},
	} {
		root, err := parseHTML(tc.page)
		if err != nil {
			b.Fatal(err)
		}
		if r := renderReason(root); r != "" {
			b.Fatalf("%s: %s", tc.name, r)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				renderReason(root)
			}
		})
	}
}
