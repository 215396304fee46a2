package pagemeta

import (
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
)

func parse(t testing.TB, s string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestExtractArticle(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("testdata/article.html")
	if err != nil {
		t.Fatal(err)
	}
	doc := parse(t, string(src))
	page := Extract(doc, mustURL(t, "https://example.com/news/rivers?ref=x"))

	if got := page.Base.String(); got != "https://cdn.example.com/news/" {
		t.Errorf("Base = %q", got)
	}
	wantMeta := map[string]any{
		"title":             "Rivers of the North | Example News",
		"description":       "A long read about northern rivers.",
		"keywords":          "rivers, north, water",
		"robots":            "index, follow",
		"language":          "en-GB",
		"favicon":           "https://cdn.example.com/news/favicon.ico",
		"ogTitle":           "Rivers of the North",
		"ogDescription":     "A long read.",
		"ogUrl":             "https://example.com/news/rivers",
		"ogImage":           []string{"https://img.example.com/rivers-1.jpg", "https://img.example.com/rivers-2.jpg"},
		"ogSiteName":        "Example News",
		"ogLocale":          "en_GB",
		"ogLocaleAlternate": []string{"de_DE"},
		"publishedTime":     "2024-03-01T10:00:00Z",
		"modifiedTime":      "2024-03-02T08:30:00Z",
		"articleSection":    "Nature",
		"articleTag":        []string{"rivers", "travel"},
		"dcDate":            "2024-03-01",
		"dcTermsCreated":    "2024-02-28",
		"dcSubject":         "Geography",

		"viewport":               "width=device-width, initial-scale=1",
		"og:title":               "Rivers of the North",
		"og:description":         "A long read.",
		"og:url":                 "https://example.com/news/rivers",
		"og:image":               []string{"https://img.example.com/rivers-1.jpg", "https://img.example.com/rivers-2.jpg"},
		"og:image:width":         "1200",
		"og:type":                "article",
		"og:site_name":           "Example News",
		"og:locale":              "en_GB",
		"og:locale:alternate":    "de_DE",
		"article:published_time": "2024-03-01T10:00:00Z",
		"article:modified_time":  "2024-03-02T08:30:00Z",
		"article:section":        "Nature",
		"article:tag":            []string{"rivers", "travel"},
		"article:author":         "https://example.com/people/ann",
		"twitter:card":           "summary_large_image",
		"twitter:image":          "/img/tw.jpg",
		"DC.date":                "2024-03-01",
		"DCTERMS.created":        "2024-02-28",
		"dc.subject":             "Geography",
		"name":                   "Rivers",
		"price":                  "12.50",
	}
	if diff := cmp.Diff(wantMeta, page.Metadata); diff != "" {
		t.Errorf("Metadata (-want +got):\n%s", diff)
	}
	wantLinks := []string{
		"https://cdn.example.com/about",
		"https://cdn.example.com/news/story?id=2#top",
		"https://cdn.example.com/news/#comments",
		"https://other.example.org/",
		"mailto:desk@example.com",
		"https://cdn.example.com/area",
	}
	if diff := cmp.Diff(wantLinks, page.Links); diff != "" {
		t.Errorf("Links (-want +got):\n%s", diff)
	}
	wantImages := []string{
		"https://img.example.com/rivers-1.jpg",
		"https://img.example.com/rivers-2.jpg",
		"https://cdn.example.com/img/tw.jpg",
		"https://cdn.example.com/img/a.jpg",
		"https://cdn.example.com/img/a-1080.jpg",
		"https://cdn.example.com/img/lazy.jpg",
		"https://cdn.example.com/img/p@2x.webp",
		"https://cdn.example.com/img/p.jpg",
	}
	if diff := cmp.Diff(wantImages, page.Images); diff != "" {
		t.Errorf("Images (-want +got):\n%s", diff)
	}

	// The single-purpose wrappers agree with Extract.
	if diff := cmp.Diff(page.Metadata, Metadata(doc, page.Base)); diff != "" {
		t.Errorf("Metadata wrapper differs:\n%s", diff)
	}
	if diff := cmp.Diff(page.Links, Links(doc, page.Base)); diff != "" {
		t.Errorf("Links wrapper differs:\n%s", diff)
	}
	if diff := cmp.Diff(page.Images, Images(doc, page.Base)); diff != "" {
		t.Errorf("Images wrapper differs:\n%s", diff)
	}
}

func TestMetadata(t *testing.T) {
	t.Parallel()
	base := "https://example.com/dir/page.html"
	tests := []struct {
		name string
		html string
		want map[string]any
	}{
		{
			name: "empty document",
			html: "",
			want: map[string]any{},
		},
		{
			name: "title falls back to og:title",
			html: `<head><meta property="og:title" content="OG"></head>`,
			want: map[string]any{"title": "OG", "ogTitle": "OG", "og:title": "OG"},
		},
		{
			name: "empty title falls back to og:title",
			html: `<head><title>  </title><meta property="og:title" content="OG"></head>`,
			want: map[string]any{"title": "OG", "ogTitle": "OG", "og:title": "OG"},
		},
		{
			name: "meta title is last resort and never overrides",
			html: `<head><meta name="title" content="Meta"></head>`,
			want: map[string]any{"title": "Meta"},
		},
		{
			name: "title element wins over meta title",
			html: `<head><title>Doc</title><meta name="title" content="Meta"></head>`,
			want: map[string]any{"title": "Doc"},
		},
		{
			name: "entities and nested whitespace in title",
			html: "<title>\n Tom &amp; Jerry\t&mdash; cartoons </title>",
			want: map[string]any{"title": "Tom & Jerry — cartoons"},
		},
		{
			name: "uppercase tags, names and attributes",
			html: `<HEAD><META NAME="DESCRIPTION" CONTENT="Shouting"><META PROPERTY="OG:TITLE" CONTENT="Loud"></HEAD>`,
			want: map[string]any{
				"description": "Shouting",
				"ogTitle":     "Loud",
				"title":       "Loud",
				"OG:TITLE":    "Loud",
			},
		},
		{
			name: "duplicate description becomes array, exact duplicates dropped",
			html: `<meta name="description" content="one"><meta name="description" content="two"><meta name="description" content="one">`,
			want: map[string]any{"description": []string{"one", "two"}},
		},
		{
			name: "same key in name and property listed once",
			html: `<meta name="og:title" property="og:title" content="T">`,
			want: map[string]any{"title": "T", "ogTitle": "T", "og:title": "T"},
		},
		{
			name: "name and property differ: both listed",
			html: `<meta name="description" property="og:description" content="D">`,
			want: map[string]any{"description": "D", "ogDescription": "D", "og:description": "D"},
		},
		{
			name: "charset and http-equiv never listed",
			html: `<meta charset="utf-8"><meta http-equiv="refresh" content="5"><meta http-equiv="content-type" name="x" content="text/html">`,
			want: map[string]any{},
		},
		{
			name: "content-language as language fallback",
			html: `<meta http-equiv="Content-Language" content="fr">`,
			want: map[string]any{"language": "fr"},
		},
		{
			name: "html lang beats content-language",
			html: `<html lang=" de "><meta http-equiv="content-language" content="fr">`,
			want: map[string]any{"language": "de"},
		},
		{
			name: "missing or blank content skipped",
			html: `<meta name="a"><meta name="b" content=""><meta name="c" content=" 	"><meta content="x">`,
			want: map[string]any{},
		},
		{
			name: "whitespace trimmed in names and values",
			html: `<meta name="  theme-color " content="  #fff
			">`,
			want: map[string]any{"theme-color": "#fff"},
		},
		{
			name: "og locale alternate always array",
			html: `<meta property="og:locale:alternate" content="fr_FR"><meta property="og:locale:alternate" content="es_ES">`,
			want: map[string]any{
				"ogLocaleAlternate":   []string{"fr_FR", "es_ES"},
				"og:locale:alternate": []string{"fr_FR", "es_ES"},
			},
		},
		{
			name: "dublin core",
			html: `<meta name="dcterms.type" content="Text"><meta name="DC.Type" content="Article">` +
				`<meta name="dcterms.audience" content="All"><meta name="dcterms.subject" content="S1">` +
				`<meta name="dc.description" content="Desc"><meta name="dcterms.keywords" content="k">` +
				`<meta name="dc.date.created" content="2020">`,
			want: map[string]any{
				"dcTermsType": "Text", "dcType": "Article", "dcTermsAudience": "All", "dcTermsSubject": "S1",
				"dcDescription": "Desc", "dcTermsKeywords": "k", "dcDateCreated": "2020",
				"dcterms.type": "Text", "DC.Type": "Article", "dcterms.audience": "All", "dcterms.subject": "S1",
				"dc.description": "Desc", "dcterms.keywords": "k", "dc.date.created": "2020",
			},
		},
		{
			name: "og audio video determiner",
			html: `<meta property="og:audio" content="https://a.example/x.mp3"><meta property="og:video" content="https://v.example/x.mp4"><meta property="og:determiner" content="the">`,
			want: map[string]any{
				"ogAudio": "https://a.example/x.mp3", "ogVideo": "https://v.example/x.mp4", "ogDeterminer": "the",
				"og:audio": "https://a.example/x.mp3", "og:video": "https://v.example/x.mp4", "og:determiner": "the",
			},
		},
		{
			name: "favicon prefers icon over apple-touch-icon",
			html: `<link rel="apple-touch-icon" href="/t.png"><link rel="ICON" type="image/png" href="fav.png">`,
			want: map[string]any{"favicon": "https://example.com/dir/fav.png"},
		},
		{
			name: "favicon falls back to apple-touch-icon, data uri skipped",
			html: `<link rel="icon" href="data:image/png;base64,AAAA"><link rel="apple-touch-icon-precomposed" href="//cdn.example.net/t.png">`,
			want: map[string]any{"favicon": "https://cdn.example.net/t.png"},
		},
		{
			name: "svg title ignored",
			html: `<body><svg><title>icon</title></svg></body>`,
			want: map[string]any{},
		},
		{
			name: "meta in body via itemprop",
			html: `<body><div itemscope><meta itemprop="ratingValue" content="4.5"></div></body>`,
			want: map[string]any{"ratingValue": "4.5"},
		},
		{
			name: "custom name colliding with computed key is dropped",
			html: `<html lang="en"><meta name="language" content="English"><meta name="favicon" content="x">`,
			want: map[string]any{"language": "en", "favicon": "x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Metadata(parse(t, tt.html), mustURL(t, base))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Metadata (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMetadataHugeHead(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("<html><head><title>Big</title>")
	for i := range 5000 {
		b.WriteString(`<meta name="x-repeat" content="v`)
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(`"><meta property="og:image" content="https://img.example.com/same.jpg">`)
	}
	b.WriteString("</head><body>" + strings.Repeat("<div>", 500) + "deep" + "</body></html>")
	md := Metadata(parse(t, b.String()), nil)
	if got := md["x-repeat"].([]string); len(got) != 26 {
		t.Errorf("x-repeat has %d values, want 26 distinct", len(got))
	}
	if got := md["ogImage"]; got != "https://img.example.com/same.jpg" {
		t.Errorf("ogImage = %v", got)
	}
	if md["title"] != "Big" {
		t.Errorf("title = %v", md["title"])
	}
}

func TestBaseURL(t *testing.T) {
	t.Parallel()
	page := "https://example.com/a/b.html"
	tests := []struct {
		name, html, want string
	}{
		{"none", `<p>x`, page},
		{"relative base", `<base href="/root/">`, "https://example.com/root/"},
		{"absolute base", `<base href="http://other.example/x/">`, "http://other.example/x/"},
		{"first base with href wins", `<base target="_blank"><base href="/one/"><base href="/two/">`, "https://example.com/one/"},
		{"javascript base ignored", `<base href="javascript:alert(1)">`, page},
		{"unparsable base ignored", `<base href="http://[::1">`, page},
		{"whitespace in base", "<base href=\"  /sp\nace/ \">", "https://example.com/space/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := BaseURL(parse(t, tt.html), mustURL(t, page))
			if got.String() != tt.want {
				t.Errorf("BaseURL = %q, want %q", got, tt.want)
			}
		})
	}
	if got := BaseURL(parse(t, "<p>"), nil); got != nil {
		t.Errorf("BaseURL with nil page URL and no base = %v, want nil", got)
	}
}

func TestLinks(t *testing.T) {
	t.Parallel()
	base := mustURL(t, "https://example.com/dir/page?q=1")
	tests := []struct {
		name string
		html string
		base *url.URL
		want []string
	}{
		{
			name: "resolution and filtering",
			html: `<a href="a">1</a><a href="../up">2</a><a href="//cdn.example.net/x">3</a><a href="?q=2">4</a>` +
				`<a href="#frag">5</a><a href="HTTPS://EXAMPLE.COM">6</a><a href="JavaScript:go()">7</a>` +
				`<a href="data:text/html,hi">8</a><a href="ftp://example.com/f">9</a><a href="MAILTO:x@example.com">10</a>` +
				`<a href="mailto:">11</a><a>12</a><a href="  ">13</a><a href="http:relative">14</a>`,
			base: base,
			want: []string{
				"https://example.com/dir/a",
				"https://example.com/up",
				"https://cdn.example.net/x",
				"https://example.com/dir/page?q=2",
				"https://example.com/dir/page?q=1#frag",
				"https://example.com/",
				"MAILTO:x@example.com",
			},
		},
		{
			name: "dedup keeps first position",
			html: `<a href="/x">1</a><a href="/y">2</a><a href="https://example.com/x">3</a>`,
			base: base,
			want: []string{"https://example.com/x", "https://example.com/y"},
		},
		{
			name: "newlines and tabs inside href removed",
			html: "<a href=\"/pa\n\tth\">1</a>",
			base: base,
			want: []string{"https://example.com/path"},
		},
		{
			name: "nil base keeps absolute only",
			html: `<a href="/rel">1</a><a href="http://abs.example/p">2</a>`,
			base: nil,
			want: []string{"http://abs.example/p"},
		},
		{
			name: "no links is empty, not nil",
			html: `<p>none</p>`,
			base: base,
			want: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, Links(parse(t, tt.html), tt.base)); diff != "" {
				t.Errorf("Links (-want +got):\n%s", diff)
			}
		})
	}
}

func TestImages(t *testing.T) {
	t.Parallel()
	base := mustURL(t, "https://example.com/p/")
	tests := []struct {
		name string
		html string
		want []string
	}{
		{
			name: "srcset density",
			html: `<img srcset="a.jpg, b.jpg 2x, c.jpg 1.5x">`,
			want: []string{"https://example.com/p/b.jpg"},
		},
		{
			name: "srcset widths beat densities",
			html: `<img srcset="a.jpg 3x, b.jpg 100w, c.jpg 50w">`,
			want: []string{"https://example.com/p/b.jpg"},
		},
		{
			name: "srcset urls with commas",
			html: `<img srcset="https://res.example.com/w_100,h_50/x.jpg 100w, https://res.example.com/w_900,h_450/x.jpg 900w">`,
			want: []string{"https://res.example.com/w_900,h_450/x.jpg"},
		},
		{
			name: "srcset trailing commas",
			html: `<img srcset="small.jpg,, big.jpg 2x,">`,
			want: []string{"https://example.com/p/big.jpg"},
		},
		{
			name: "data uris dropped everywhere",
			html: `<img src="data:image/png;base64,AA"><img srcset="data:image/png;base64,AA 2x, ok.jpg 1x">`,
			want: []string{"https://example.com/p/ok.jpg"},
		},
		{
			name: "lazy attributes",
			html: `<img data-lazy-src="/lazy1.jpg"><img src="/real.jpg" data-src="/ignored.jpg">`,
			want: []string{"https://example.com/lazy1.jpg", "https://example.com/real.jpg"},
		},
		{
			name: "source outside picture ignored",
			html: `<video><source src="/v.mp4" srcset="/v.jpg"></video>`,
			want: []string{},
		},
		{
			name: "twitter and og images in page order",
			html: `<meta name="twitter:image:src" content="/tw.png"><meta property="og:image:secure_url" content="https://s.example/og.png"><img src="/tw.png">`,
			want: []string{"https://example.com/tw.png", "https://s.example/og.png"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, Images(parse(t, tt.html), base)); diff != "" {
				t.Errorf("Images (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAttributes(t *testing.T) {
	t.Parallel()
	doc := parse(t, `<div class="item" data-id="1"></div><div class="item"></div><div class="item" data-id=""></div>`+
		`<a href="/x" rel="next">n</a>`)
	got, err := Attributes(doc, []AttributeSelector{
		{Selector: ".item", Attribute: "data-id"},
		{Selector: "a[rel=next]", Attribute: "HREF"},
		{Selector: "table", Attribute: "id"},
		{Selector: "div.item, a", Attribute: "data-id"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []AttributeValues{
		{Selector: ".item", Attribute: "data-id", Values: []string{"1", ""}},
		{Selector: "a[rel=next]", Attribute: "HREF", Values: []string{"/x"}},
		{Selector: "table", Attribute: "id", Values: []string{}},
		{Selector: "div.item, a", Attribute: "data-id", Values: []string{"1", ""}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Attributes (-want +got):\n%s", diff)
	}

	_, err = Attributes(doc, []AttributeSelector{{Selector: "div[", Attribute: "x"}})
	if err == nil || !strings.HasPrefix(err.Error(), `pagemeta: selector "div["`) {
		t.Errorf("invalid selector error = %v", err)
	}
}
