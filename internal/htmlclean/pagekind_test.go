package htmlclean

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func TestDetectKind(t *testing.T) {
	t.Parallel()
	ld := func(s string) string { return `<script type="application/ld+json">` + s + `</script>` }
	tests := []struct {
		name string
		head string
		body string
		want pageKind
	}{
		{"nothing", ``, `<p>x</p>`, kindUnknown},
		{"og product", `<meta property="og:type" content="product">`, ``, kindProduct},
		{"og product group is a collection", `<meta property="og:type" content="product.group">`, ``, kindUnknown},
		{"json-ld product", ld(`{"@context":"https://schema.org","@type" : "Product","name":"Tent","offers":{"@type":"Offer"}}`), ``, kindProduct},
		{"json-ld product in a type list", ld(`{"@type":["Product","Thing"]}`), ``, kindProduct},
		{"json-ld item list of many products", ld(`{"@type":"ItemList","itemListElement":[` +
			strings.Repeat(`{"@type":"Product","name":"a"},`, 9) + `{"@type":"Product","name":"b"}]}`), ``, kindUnknown},
		{"json-ld article", ld(`{"@type":"NewsArticle"}`), ``, kindUnknown},
		{"microdata product", ``, `<div itemscope itemtype="https://schema.org/Product"><h1 itemprop="name">Tent</h1></div>`, kindProduct},
	}
	for _, tc := range tests {
		doc, err := html.Parse(strings.NewReader(`<html><head>` + tc.head + `</head><body>` + tc.body + `</body></html>`))
		if err != nil {
			t.Fatal(err)
		}
		if got := detectKind(doc); got != tc.want {
			t.Errorf("%s: kind %d, want %d", tc.name, got, tc.want)
		}
	}
}

// On a product page the reviews, ratings and recommendations around the
// product go; the same blocks on a page that is not a product stay.
func TestProductPageDropsReviews(t *testing.T) {
	t.Parallel()
	desc := `<p>` + strings.Repeat("A freestanding, double-wall tent for two, light and roomy, with two doors. ", 6) + `</p>`
	body := `<main><h1>Fjord Tent</h1><div class="product-description">` + desc + `</div>
<section class="product-reviews"><p>` + strings.Repeat("Stayed dry through two days of sideways rain, great tent. ", 4) + `</p></section>
<section><h2>Customers also bought</h2><p>` + strings.Repeat("Trail stakes, a footprint and a lantern for the tent. ", 4) + `</p></section></main>`
	product := `<html><head><meta property="og:type" content="product"></head><body>` + body + `</body></html>`
	got, err := cleanString(t, product, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "double-wall tent") {
		t.Errorf("product description lost: %s", got)
	}
	for _, gone := range []string{"sideways rain", "Customers also bought", "Trail stakes"} {
		if strings.Contains(got, gone) {
			t.Errorf("product page keeps %q: %s", gone, got)
		}
	}
	other, err := cleanString(t, `<html><head></head><body>`+body+`</body></html>`, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(other, "sideways rain") {
		t.Errorf("a page that is not a product lost its review section: %s", other)
	}
}
