package product

import (
	"net/url"
	"os"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// BenchmarkExtract measures extraction on parsed shop pages (parsing is
// the scrape's, done once for every format).
func BenchmarkExtract(b *testing.B) {
	for _, name := range []string{"shopify", "woocommerce", "magento", "visible"} {
		raw, err := os.ReadFile("testdata/" + name + ".html")
		if err != nil {
			b.Fatal(err)
		}
		doc, err := html.Parse(strings.NewReader(string(raw)))
		if err != nil {
			b.Fatal(err)
		}
		u, _ := url.Parse("https://shop.example/p")
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if Extract(doc, u) == nil {
					b.Fatal("no product")
				}
			}
		})
	}
}
