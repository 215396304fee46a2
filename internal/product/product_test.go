package product

import (
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
)

func extractFile(t *testing.T, name, pageURL string) *Product {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	return Extract(doc, u)
}

func price(a float64, cur, f string) *Price { return &Price{Amount: a, Currency: cur, Formatted: f} }

func sale(a float64, cur, f string) *Sale {
	return &Sale{OriginalPrice: Price{Amount: a, Currency: cur, Formatted: f}}
}

func TestExtractShopPages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file, url string
		want      *Product
	}{
		{
			// Shopify's ProductGroup with hasVariant and variesBy, a raw
			// line break inside a JSON string, a discount as a
			// StrikethroughPrice, prices in the header and related
			// products that are not this product's.
			file: "shopify.html", url: "https://northwind.example/products/heavyweight-tee",
			want: &Product{
				Title: "Heavyweight Tee", Brand: "Northwind", Category: "Apparel > Tees",
				URL:         "https://northwind.example/products/heavyweight-tee",
				Description: "A boxy 240 gsm cotton tee. Garment dyed, pre-shrunk.",
				Variants: []Variant{{
					ID: "41234567890", SKU: "NW-TEE-BLK-M", Title: "Heavyweight Tee - Black / M",
					Values:       map[string]string{"color": "Black", "size": "M"},
					Price:        price(19, "USD", "$19.00"),
					Sale:         sale(25, "USD", "$25.00"),
					Availability: Availability{InStock: true, Text: "In stock"},
					Images:       []Image{{URL: "https://northwind.example/cdn/shop/files/tee-black.jpg?v=1700000000&width=1920"}},
				}, {
					ID: "41234567891", SKU: "NW-TEE-WHT-L", Title: "Heavyweight Tee - White / L",
					Values:       map[string]string{"color": "White", "size": "L"},
					Price:        price(25, "USD", "$25.00"),
					Availability: Availability{InStock: false, Text: "Out of stock"},
					Images:       []Image{{URL: "https://northwind.example/cdn/shop/files/tee-white.jpg?v=1700000000&width=1920"}},
				}},
			},
		},
		{
			// WooCommerce with Yoast: the breadcrumb in an @graph, out of
			// position order; the Product in a second script; the old
			// price only in <del> markup.
			file: "woocommerce.html", url: "https://kettle.example/product/ceramic-pour-over-set/",
			want: &Product{
				Title: "Ceramic Pour-Over Set", Brand: "Kettle & Co.", Category: "Brewing > Pour-Over",
				URL: "https://kettle.example/product/ceramic-pour-over-set/", Description: "Hand-glazed dripper and 600 ml carafe.",
				Variants: []Variant{{
					ID: "KC-PO-01", SKU: "KC-PO-01", Title: "Ceramic Pour-Over Set",
					Price:        price(39, "USD", "$39.00"),
					Sale:         sale(48, "USD", "$48.00"),
					Availability: Availability{InStock: true, Text: "In stock"},
					Images:       []Image{{URL: "https://kettle.example/wp-content/uploads/2024/03/pour-over.jpg"}},
				}},
			},
		},
		{
			// Magento (Luma, German store view): no product JSON-LD,
			// prices in data-price-amount boxes with old-price, a
			// breadcrumb list, stock wording and SKU in the page.
			file: "magento.html", url: "https://luma.example/fusion-rucksack.html",
			want: &Product{
				Title: "Fusion Rucksack", Category: "Ausrüstung > Taschen", URL: "https://luma.example/fusion-rucksack.html",
				Variants: []Variant{{
					ID: "24-MB02", SKU: "24-MB02", Title: "Fusion Rucksack",
					Price:        price(45, "EUR", "45,00 €"),
					Sale:         sale(56, "EUR", "56,00 €"),
					Availability: Availability{InStock: true, Text: "Auf Lager"},
					Images:       []Image{{URL: "https://luma.example/media/catalog/product/cache/1/image/mb02-gray-0.jpg"}},
				}},
			},
		},
		{
			// Microdata only: nested Brand, Offer with link availability,
			// a content price beside a Swiss-formatted display, a
			// microdata BreadcrumbList.
			file: "microdata.html", url: "https://pixelhaus.example/computers/monitors/aurora-27",
			want: &Product{
				Title: `Aurora 27" Monitor`, Brand: "Pixelhaus", Category: "Computers > Monitors",
				URL: "https://pixelhaus.example/computers/monitors/aurora-27", Description: "27-inch IPS panel, 2560×1440, 165 Hz.",
				Variants: []Variant{{
					ID: "aurora-27", SKU: "PX-AU27", Title: `Aurora 27" Monitor`,
					Price:        price(1299, "CHF", "1,299.00 CHF"),
					Availability: Availability{InStock: false, Text: "Out of stock"},
					Images: []Image{
						{URL: "https://pixelhaus.example/img/aurora-27-front.jpg"},
						{URL: "https://pixelhaus.example/img/aurora-27-side.jpg"},
					},
				}},
			},
		},
		{
			// No markup at all: the h1 and the prices in running text,
			// with a delivery threshold above the heading to ignore.
			file: "visible.html", url: "https://lamproom.example/brass-desk-lamp",
			want: &Product{
				Title: "Brass Desk Lamp", URL: "https://lamproom.example/brass-desk-lamp",
				Variants: []Variant{{
					Title:        "Brass Desk Lamp",
					Price:        price(39.99, "GBP", "£39.99"),
					Sale:         sale(49.99, "GBP", "£49.99"),
					Availability: Availability{InStock: true, Text: "In stock"},
				}},
			},
		},
		{
			// RDFa Lite with an AggregateOffer (lowPrice).
			file: "rdfa.html", url: "https://ridgeline.example/tr3",
			want: &Product{
				Title: "Trail Runner 3", Brand: "Ridgeline", Category: "Footwear > Running", URL: "https://ridgeline.example/tr3",
				Description: "Lightweight trail shoe with a rock plate.",
				Variants: []Variant{{
					ID: "trail-runner-3", Title: "Trail Runner 3",
					Price:        price(119.95, "EUR", "119,95 €"),
					Availability: Availability{InStock: true, Text: "In stock"},
					Images:       []Image{{URL: "https://ridgeline.example/shoes/tr3.jpg"}},
				}},
			},
		},
		{
			// Older Shopify themes: one Product, one Offer per variant, a
			// top-level JSON-LD array, a trailing comma, CAD shown as "$".
			file: "legacy-offers.html", url: "https://caps.example/products/wool-beanie",
			want: &Product{
				Title: "Wool Beanie", Brand: "Caps & Co", Category: "Hats", URL: "https://caps.example/products/wool-beanie",
				Description: "Merino rib knit.",
				Variants: []Variant{{
					ID: "111", SKU: "BEANIE-NAVY", Title: "Navy",
					Price:        price(29, "CAD", "$29.00"),
					Availability: Availability{InStock: true, Text: "In stock"},
					Images:       []Image{{URL: "https://caps.example/cdn/beanie-1.jpg"}, {URL: "https://caps.example/cdn/beanie-2.jpg"}},
				}, {
					ID: "112", SKU: "BEANIE-RUST", Title: "Rust",
					Price:        price(29, "CAD", "$29.00"),
					Availability: Availability{InStock: false, Text: "Sold out"},
					Images:       []Image{{URL: "https://caps.example/cdn/beanie-1.jpg"}, {URL: "https://caps.example/cdn/beanie-2.jpg"}},
				}},
			},
		},
		{
			// Open Graph product tags only, with a sale price.
			file: "og-only.html", url: "https://paper.example/p/field-notebook?ref=x",
			want: &Product{
				Title: "Field Notebook, 3-pack", Brand: "Paperfield", URL: "https://paper.example/p/field-notebook",
				Description: "Kraft cover, 48 dot-grid pages.",
				Variants: []Variant{{
					ID: "PF-3PK", SKU: "PF-3PK", Title: "Field Notebook, 3-pack",
					Price:        price(11.2, "GBP", "£11.20"),
					Sale:         sale(14, "GBP", "£14.00"),
					Availability: Availability{InStock: true, Text: "In stock"},
					Images:       []Image{{URL: "https://paper.example/i/field-notebook.jpg"}},
				}},
			},
		},
		{
			// An article with numbers but no product and no price.
			file: "article.html", url: "https://blog.example/coffee", want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			got := extractFile(t, tt.file, tt.url)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Extract(%s) mismatch (-want +got):\n%s", tt.file, diff)
			}
		})
	}
}

func TestExtractFragments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, html string
		want       *Product
	}{
		{
			name: "graph references and ProductGroup variants pointing at the group",
			html: `<script type="application/ld+json">{"@context":"https://schema.org","@graph":[
				{"@type":"ProductGroup","@id":"#g","name":"Mug","productGroupID":"MUG","variesBy":"https://schema.org/color","brand":{"@id":"#b"}},
				{"@type":"Brand","@id":"#b","name":"Clayworks"},
				{"@type":"Product","name":"Mug blue","sku":"MUG-B","color":"Blue","isVariantOf":{"@id":"#g"},"offers":{"@id":"#o1"}},
				{"@type":"Offer","@id":"#o1","price":12.5,"priceCurrency":"eur","availability":"https://schema.org/PreOrder"}]}</script>`,
			want: &Product{Title: "Mug", Brand: "Clayworks", URL: "https://x.example/p", Variants: []Variant{{
				ID: "MUG-B", SKU: "MUG-B", Title: "Mug blue", Values: map[string]string{"color": "Blue"},
				Price: price(12.5, "EUR", "€12.50"), Availability: Availability{InStock: false, Text: "Pre-order"},
			}}},
		},
		{
			name: "AggregateOffer with nested offers takes the outer currency",
			html: `<script type="application/ld+json">{"@type":"Product","name":"Kit","offers":{"@type":"AggregateOffer","priceCurrency":"JPY","lowPrice":"1200","offers":[{"@type":"Offer","sku":"K1","price":"1200"},{"@type":"Offer","sku":"K2","price":"1500"}]}}</script>`,
			want: &Product{Title: "Kit", URL: "https://x.example/p", Variants: []Variant{
				{ID: "K1", SKU: "K1", Title: "Kit", Price: price(1200, "JPY", "¥1,200")},
				{ID: "K2", SKU: "K2", Title: "Kit", Price: price(1500, "JPY", "¥1,500")},
			}},
		},
		{
			name: "broken JSON-LD is skipped, microdata still read",
			html: `<script type="application/ld+json">{"@type":"Product","name":</script>
				<div itemscope itemtype="http://schema.org/Product"><span itemprop="name">Lamp</span>
				<div itemprop="offers" itemscope itemtype="http://schema.org/Offer"><span itemprop="price">49.90</span><meta itemprop="priceCurrency" content="USD"></div></div>`,
			want: &Product{Title: "Lamp", URL: "https://x.example/p", Variants: []Variant{{Title: "Lamp", Price: price(49.9, "USD", "$49.90")}}},
		},
		{
			name: "sale price not above the price is no sale",
			html: `<meta property="og:type" content="product"><meta property="og:title" content="Pen"><meta property="product:price:amount" content="5"><meta property="product:original_price:amount" content="5"><meta property="product:price:currency" content="USD">`,
			want: &Product{Title: "Pen", URL: "https://x.example/p", Variants: []Variant{{Title: "Pen", Price: price(5, "USD", "$5.00")}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc, err := html.Parse(strings.NewReader(tt.html))
			if err != nil {
				t.Fatal(err)
			}
			u, _ := url.Parse("https://x.example/p")
			if diff := cmp.Diff(tt.want, Extract(doc, u)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseAmount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"19.99", 19.99, true},
		{"1,299.00", 1299, true},
		{"1.299,00", 1299, true},
		{"19,95", 19.95, true},
		{"1 299,00 €", 1299, true},
		{"CHF 1'299.50", 1299.5, true},
		{"$1,299", 1299, true},
		{"0.999", 0.999, true},
		{"1.234.567", 1234567, true},
		{"free", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseAmount(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseAmount(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestFindMoney(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string // amount currency
	}{
		{"Now only £39.99 (was £49.99)", []string{"39.99 GBP", "49.99 GBP"}},
		{"Preis: 1.299,00 € inkl. MwSt.", []string{"1299 EUR"}},
		{"US$ 12 or CA$15.50 or 20 CHF", []string{"12 USD", "15.5 CAD", "20 CHF"}},
		// Look-alikes: versions, dates, quantities, SKUs, codes that are
		// no currency.
		{"Version 2.10, 12.05.2024, 15 g per 250 ml, SKU ABC123, 3 XYZ 4", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, m := range findMoney(tt.in) {
			got = append(got, strings.TrimSpace(formatFloat(m.amount)+" "+m.currency))
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("findMoney(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// FuzzExtract: any page parses without a panic, and a product found has
// variants (never nil) each with a non-negative price.
func FuzzExtract(f *testing.F) {
	for _, name := range []string{"shopify", "woocommerce", "magento", "microdata", "visible", "rdfa", "legacy-offers", "og-only"} {
		b, err := os.ReadFile("testdata/" + name + ".html")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add(`<script type="application/ld+json">{"@type":"Product","offers":{"@id":"#o"},"@graph":[{"@id":"#o","offers":{"@id":"#o"}}]}</script>`)
	u, _ := url.Parse("https://x.example/p")
	f.Fuzz(func(t *testing.T, page string) {
		doc, err := html.Parse(strings.NewReader(page))
		if err != nil {
			return
		}
		p := Extract(doc, u)
		if p == nil {
			return
		}
		if p.Variants == nil {
			t.Fatal("nil variants")
		}
		for _, v := range p.Variants {
			if v.Price != nil && (v.Price.Amount < 0 || v.Price.Amount != v.Price.Amount) {
				t.Fatalf("bad price %+v", v.Price)
			}
		}
	})
}
