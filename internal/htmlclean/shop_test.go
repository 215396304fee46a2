package htmlclean

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// A page's modal windows (its privacy policy and terms, opened from the
// footer) do not count in the text the page shows: twenty times the text
// of its content in them made every pruning look near-empty, and the whole
// page, menus and policies, was kept.
func TestModalTextNotShown(t *testing.T) {
	t.Parallel()
	policy := strings.Repeat("<p>We collect the data you give us, keep it for as long as the law asks, and share it with no one but our carriers.</p>", 120)
	page := `<html><body><header><nav><a href="/m">Men</a> <a href="/w">Women</a> <a href="/s">Sale</a></nav></header>
<main><div class="pdp"><h1>Wool Runner</h1><p>A true original, our runner combines soft merino wool with a cushioned sole, for all-day wear.</p>
<p>Machine washable: remove the insoles and laces and wash them apart.</p></div></main>
<footer><a href="/privacy">Privacy policy</a><div id="modal-privacy" aria-modal="true" class="fixed">` + policy + `</div></footer></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "soft merino wool") || !strings.Contains(got, "Machine washable") {
		t.Errorf("lost the content: %s", got)
	}
	for _, d := range []string{"We collect the data", "Privacy policy", "Sale"} {
		if strings.Contains(got, d) {
			t.Errorf("kept %q: %.300s", d, got)
		}
	}
}

// A page without product markup whose buy button ("Add to cart", or a
// button whose id says so) is its only one, or has one copy (a sticky bar), is a product page: its
// reviews go like those of marked-up product pages. Two buy buttons in
// alike cards are a short collection's.
func TestBuyButtonMakesProduct(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]pageKind{
		`<form><button type="submit"> Add to Cart </button></form>`:                                                                                               kindProduct,
		`<form><input type="submit" value="Add to basket"></form><div class="sticky"><button>Add to cart</button></div>`:                                          kindProduct,
		`<div class="tile"><a href="/p/1">Dark</a><button>Add to cart</button></div><div class="tile"><a href="/p/2">Light</a><button>Add to cart</button></div>`: kindUnknown,
		`<button>Add to cart</button><button>Add to cart</button><button>Add to cart</button>`:                                                                    kindUnknown,
		`<button>Add to cart and more</button>`:                                                                                                                   kindUnknown,
		`<span><input type="submit" id="add-to-cart-button"><span>Add to Basket</span></span>`:                                                                    kindProduct,
		`<button id="product-addtocart-button"><span>Buy</span></button>`:                                                                                         kindProduct,
		`<button id="add-to-calendar">Save the date</button>`:                                                                                                     kindUnknown,
	} {
		doc, err := html.Parse(strings.NewReader(`<html><body>` + body + `</body></html>`))
		if err != nil {
			t.Fatal(err)
		}
		if got := detectKind(doc, nil); got != want {
			t.Errorf("%s: kind %d, want %d", body, got, want)
		}
	}
	desc := `<p>A tumbler made of stainless steel, with double-wall vacuum insulation to keep your coffee hot, and a lid that slides shut.</p>`
	page := `<html><body><main><h1>Tumbler</h1>` + desc + desc + `<form><button>Add to cart</button></form>
<div class="reviews-widget"><h3>What people say</h3><p>Great tumbler, it keeps my coffee hot all morning long, even in the car on cold days.</p></div></main></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "double-wall vacuum") || strings.Contains(got, "Great tumbler") {
		t.Errorf("product page without markup: %s", got)
	}
}

// Links that send the reader to a full article, a review, a shop's price
// or a post's comments ("Read full article", "Read the review", "Check
// price at ...", "See full item description", "12 comments") are calls to
// action.
func TestReadOnLinks(t *testing.T) {
	t.Parallel()
	checkCTALinks(t, map[string]bool{
		`<a href="/x">Read full article</a>`:                  true,
		`<a href="/x">Read the review »</a>`:                  true,
		`<a href="/x">Check price at Shopmart</a>`:            true,
		`<a href="/x">Check Price</a>`:                        true,
		`<a href="/x">See full item description</a>`:          true,
		`<a href="/x">Check prices before you travel</a>`:     false,
		`<a href="/x">View full details</a>`:                  true,
		`<a href="/x">Add to List</a>`:                        true,
		`<a href="/x">Pre-order</a>`:                          true,
		`<a href="/p#comments">12 comments</a>`:               true,
		`<a href="/p#respond">No comments</a>`:                true,
		`<a href="/p#comments">12 comments on the recipe</a>`: false,
		`<a href="/x">Read the review guidelines</a>`:         false,
	})
}

// A cookie or captcha notice left in the page ("Shopname uses cookies to
// ...", "This site is protected by reCAPTCHA ...") goes; a long paragraph
// that opens the same way is prose and stays.
func TestCookieLines(t *testing.T) {
	t.Parallel()
	p := "<p>Grind fresh, weigh the beans, and pour slowly in circles, for an even extraction.</p>"
	long := "<p>Brewshop uses cookies in its loyalty scheme only: " + strings.Repeat("every purchase adds a stamp to your card, and ten stamps buy a bag of beans, ", 5) + "which we think is fair.</p>"
	page := `<html><body><article><h1>Brewing</h1>` + p + p + long + p + `<div class="note"><p>Brewshop uses cookies to enhance site functionality and analyze traffic. By using our site, you agree to our <a href="/privacy">Privacy Policy</a>.</p></div>
<p><small>This site is protected by reCAPTCHA and the Google <a href="/p">Privacy Policy</a> apply.</small></p></article></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "even extraction") || !strings.Contains(got, "loyalty scheme") {
		t.Errorf("lost the content: %s", got)
	}
	if strings.Contains(got, "enhance site functionality") || strings.Contains(got, "reCAPTCHA") {
		t.Errorf("notices kept: %s", got)
	}
}

// A shop's control labels alone on their line ("Filters", "Sort by:",
// "Quantity", "Compare") go with their controls; a sentence that opens
// with one of the words stays.
func TestShopControlLabels(t *testing.T) {
	t.Parallel()
	card := `<li><a href="/p/%d">Dark roast coffee, a 12 oz bag of whole beans</a><span>$14</span><div class="cmp"><label><input type="checkbox"> Compare</label></div></li>`
	var cards strings.Builder
	for i := range 6 {
		cards.WriteString(strings.ReplaceAll(card, "%d", string(rune('1'+i))))
	}
	page := `<html><body><main><h1>Coffee</h1><div class="bar"><span>Filters</span><button>Roast</button></div><div><label>Sort by:</label></div><select><option>Price</option></select>
<ul class="grid">` + cards.String() + `</ul><p>Sort by origin first, then by roast: our buyers taste every lot before it joins the range.</p>
<div><span>Quantity</span><input type="number"></div></main></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "Dark roast coffee") || !strings.Contains(got, "Sort by origin first") {
		t.Errorf("lost the content: %s", got)
	}
	for _, d := range []string{"Filters", "Sort by:", "Quantity", "Compare"} {
		if strings.Contains(got, d) {
			t.Errorf("kept %q: %s", d, got)
		}
	}
}

// A product card's badges alone on their line ("Best Seller", "New",
// "Top Rated", "Low stock") go; the cards stay.
func TestCardBadges(t *testing.T) {
	t.Parallel()
	badges := []string{"Best Seller", "New", "Top Rated", "Low stock", "New Arrival", "Free shipping"}
	var cards strings.Builder
	for i, b := range badges {
		cards.WriteString(`<li><div class="badge">` + b + `</div><a href="/p/` + string(rune('1'+i)) + `">Medium roast coffee, a 12 oz bag of whole beans</a><span>$14</span></li>`)
	}
	page := `<html><body><main><h1>Coffee</h1><ul class="grid">` + cards.String() + `</ul></main></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(got, "Medium roast coffee") != len(badges) {
		t.Errorf("lost cards: %s", got)
	}
	for _, b := range badges {
		if strings.Contains(got, ">"+b+"<") {
			t.Errorf("kept %q: %s", b, got)
		}
	}
}

// A card's empty review count ("0 reviews", "No reviews yet") and a
// carousel's slide counter ("1 of 13") alone in their element go; a
// review count with reviews ("12 reviews") is left (listings of recipes
// keep it).
func TestCardCounters(t *testing.T) {
	t.Parallel()
	p := "<p>Grind fresh, weigh the beans, and pour slowly in circles, for an even extraction.</p>"
	page := `<html><body><article><h1>Brewing</h1>` + p + `<div class="slides"><span>1 of 13</span></div>` + p +
		`<div><span>0 reviews</span></div><div><span>No reviews yet</span></div><div><span>12 reviews</span></div>` + p + `</article></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "even extraction") || !strings.Contains(got, "12 reviews") {
		t.Errorf("lost the content: %s", got)
	}
	for _, d := range []string{"1 of 13", "0 reviews", "No reviews yet"} {
		if strings.Contains(got, d) {
			t.Errorf("kept %q: %s", d, got)
		}
	}
}

// A control whose link or button is gone leaves its label alone on a
// line ("READ MORE", "Show more", "Sorted by:"), and a form builder leaves
// its note ("This field is hidden when viewing the form"): they go.
func TestControlLeftovers(t *testing.T) {
	t.Parallel()
	p := "<p>Grind fresh, weigh the beans, and pour slowly in circles, for an even extraction.</p>"
	page := `<html><body><article><h1>Brewing</h1>` + p + `<div class="more"><span>READ MORE</span></div>` + p + `<div><span>Sorted by:</span></div><select><option>Votes</option></select>` + p +
		`<div class="gfield"><div class="desc">This field is hidden when viewing the form</div></div><p>Read more about roasting in our guide to the beans we buy.</p></article></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "even extraction") || !strings.Contains(got, "Read more about roasting") {
		t.Errorf("lost the content: %s", got)
	}
	for _, d := range []string{"READ MORE", "Sorted by:", "This field is hidden"} {
		if strings.Contains(got, d) {
			t.Errorf("kept %q: %s", d, got)
		}
	}
}

// A lone label is read without the text of the controls beside it that
// are not shown as text (a select's options, a button's label): "Sort by:"
// next to its select goes.
func TestLabelBesideSelect(t *testing.T) {
	t.Parallel()
	p := "<p>Grind fresh, weigh the beans, and pour slowly in circles, for an even extraction.</p>"
	page := `<html><body><article><h1>Brewing</h1>` + p + `<div><label>Sort by:</label><select><option>Price</option><option>Newest</option></select><button>Go</button></div>` + p + `</article></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "even extraction") || strings.Contains(got, "Sort by") {
		t.Errorf("%s", got)
	}
}

// On a product page a shorter block written again (its name and price in
// a sticky bar) is a copy too; elsewhere such short repeats stay.
func TestProductShortCopies(t *testing.T) {
	t.Parallel()
	desc := `<p>A tumbler made of stainless steel, with double-wall vacuum insulation to keep your coffee hot, and a lid that slides shut.</p>`
	body := `<main><div class="buy"><h1>Steel Tumbler 20 oz</h1><div>Steel tumbler, 20 oz, navy</div></div>` + desc + desc +
		`<div class="sticky"><div>Steel tumbler, 20 oz, navy</div></div></main>`
	for head, copies := range map[string]int{`<meta property="og:type" content="product">`: 1, ``: 2} {
		got, err := cleanString(t, `<html><head>`+head+`</head><body>`+body+`</body></html>`, Options{OnlyMainContent: true})
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(got, "Steel tumbler, 20 oz, navy"); n != copies || !strings.Contains(got, "double-wall") {
			t.Errorf("%q: %d copies, want %d: %s", head, n, copies, got)
		}
	}
}

// On a page whose content is a card grid, a shorter block written again
// outside the grid (a promotion line in a mobile and a desktop copy) is a
// copy too; the cards themselves are left alone.
func TestGridPageShortCopies(t *testing.T) {
	t.Parallel()
	var cards strings.Builder
	for i := range 6 {
		cards.WriteString(`<li><a href="/p/` + string(rune('1'+i)) + `">Medium roast coffee, a 12 oz bag</a><div>Roasted this week</div></li>`)
	}
	promo := `<div class="note"><div>Free returns on every order</div></div>`
	page := `<html><body><main><h1>Coffee</h1>` + promo + `<ul class="grid">` + cards.String() + `</ul>` + promo + `</main></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(got, "Free returns on every order"); n != 1 {
		t.Errorf("%d copies of the promotion: %s", n, got)
	}
	if n := strings.Count(got, "Roasted this week"); n != 6 {
		t.Errorf("%d cards' notes: %s", n, got)
	}
}

// On a product page a row of three or more short cards of other products,
// each with a link and a price, goes (a carousel of recommendations
// without a telling class or heading); the product's own text stays.
func TestProductPageOtherProducts(t *testing.T) {
	t.Parallel()
	desc := `<p>A tumbler made of stainless steel, with double-wall vacuum insulation to keep your coffee hot, and a lid that slides shut.</p>`
	var row strings.Builder
	for i := range 4 {
		row.WriteString(`<div class="tile"><a href="/p/` + string(rune('1'+i)) + `">Straw lid for tumblers</a><span>$10.00</span></div>`)
	}
	page := `<html><head><meta property="og:type" content="product"></head><body><main><h1>Tumbler</h1>` + desc + desc +
		`<p>Dishwasher safe, and it fits in most cupholders, so it goes everywhere with you, all day long.</p><section><h3>Add the essentials</h3><div class="row">` + row.String() + `</div></section></main></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "double-wall") || !strings.Contains(got, "Dishwasher safe") || strings.Contains(got, "Straw lid") {
		t.Errorf("%s", got)
	}
}
