package htmlclean

import (
	"fmt"
	"strings"
	"testing"
)

func productCards(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `<div class="item-container"><a href="/p/%d"><img src="/i/%d.jpg" alt=""> Trail runner model %d, mesh upper</a><a href="/p/%d">Quick view</a><span>$%d.99</span></div>`, i, i, i, i, 50+i)
	}
	return b.String()
}

// A grid of linked cards that outweighs the prose of the page is its
// content, even though its cards are mostly links; a grid in a sidebar or
// smaller than the prose is not.
func TestCardGrid(t *testing.T) {
	t.Parallel()
	seo := `<div class="seo-copy"><p>` + strings.Repeat("Our running shoes are tested on trails, roads and tracks, for comfort and grip. ", 2) + `</p></div>`
	collection := `<html><body><header><nav><a href="/">Home</a><a href="/shop">Shop</a></nav></header>
<h1>Trail running shoes</h1><div class="wrap"><div class="results">` + productCards(12) + `</div></div><section class="about"><div>` + seo + `</div></section>
<footer><a href="/privacy">Privacy</a></footer></body></html>`
	got, err := cleanString(t, collection, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Trail runner model 0,", "Trail runner model 11,", "$61.99", "tested on trails"} {
		if !strings.Contains(got, want) {
			t.Errorf("collection lost %q: %s", want, got)
		}
	}
	article := `<html><body><article><h1>How to pick a trail shoe</h1><p>` + strings.Repeat("Grip, drop and cushioning decide how a trail shoe feels on a long descent, more than its weight. ", 12) +
		`</p></article><div class="sidebar"><div class="grid">` + productCards(8) + `</div></div></body></html>`
	got, err = cleanString(t, article, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "long descent") || strings.Contains(got, "Trail runner model") {
		t.Errorf("article with a sidebar grid: %s", got)
	}
}

// promoCards are shop cards whose wrapper carries a boilerplate class word
// as a modifier ("promo-eligible").
func promoCards(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `<li class="grid__item"><div class="card-wrapper promo-eligible"><div class="card__content"><a href="/p/%d">Dark roast coffee blend %d</a><span>$%d.99</span></div></div></li>`, i, i, 10+i)
	}
	return b.String()
}

// The cards of a grid are kept even when their wrappers carry a class word
// that elsewhere marks boilerplate, and a grid inside the anchor (a shop's
// <main> with its intro and its products) is weighed against the rest of
// the anchor, not against itself; a menu's entries are not cards.
func TestCardGridClassWords(t *testing.T) {
	t.Parallel()
	intro := strings.Repeat(`<p>Bold, smooth and strong, our coffee is roasted in small batches, for a rich cup.</p>`, 3)
	page := `<html><body><header><nav><a href="/">Home</a><a href="/shop">Shop</a></nav></header>
<main><h1>Coffee</h1>` + intro + `<ul class="product-grid">` + promoCards(8) + `</ul></main>
<footer><a href="/privacy">Privacy</a></footer></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Dark roast coffee blend 0", "Dark roast coffee blend 7", "$17.99", "small batches"} {
		if !strings.Contains(got, want) {
			t.Errorf("lost %q: %s", want, got)
		}
	}
	if strings.Contains(got, "Privacy") {
		t.Errorf("kept the footer: %s", got)
	}
	var menu strings.Builder
	for i := range 8 {
		fmt.Fprintf(&menu, `<li class="menu-item"><div class="menu-promo"><a href="/c/%d">Coffee category number %d</a> <span>Save 10%% on category %d</span></div></li>`, i, i, i)
	}
	page = `<html><body><article><h1>Brewing</h1>` + strings.Repeat(`<p>Grind fresh, weigh the beans, and pour slowly in circles, for an even extraction.</p>`, 8) +
		`</article><div class="wrap"><ul class="menu">` + menu.String() + `</ul></div></body></html>`
	got, err = cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "even extraction") || strings.Contains(got, "Save 10%") {
		t.Errorf("menu entries kept as cards: %s", got)
	}
}

// A shopping bag or basket drawer is boilerplate: its shipping notes are
// the longest prose of a small collection page and must not become its
// content.
func TestShoppingBagDrawer(t *testing.T) {
	t.Parallel()
	for _, class := range []string{"bag__content", "minicart-content", "basket-drawer__body"} {
		page := `<html><body><header><a href="/">Shop</a></header><h1>Skincare sets</h1>
<ul class="products"><li><a href="/p/1"><h3>The Super Pack</h3></a><p>All three serums</p><span>£88</span></li>
<li><a href="/p/2"><h3>Balm Trio</h3></a><p>Original formula</p><span>£42</span></li></ul>
<aside class="drawer"><form><div class="` + class + `"><h2>Shopping Bag</h2><p>Subtotal £0.00. Tax calculated in checkout.</p>
<p>Sales tax amount shown in checkout is a best estimate, and may differ from the amount actually charged, and shown on the order confirmation email.</p></div></form></aside></body></html>`
		got, err := cleanString(t, page, Options{OnlyMainContent: true})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got, "The Super Pack") || !strings.Contains(got, "Balm Trio") || strings.Contains(got, "best estimate") {
			t.Errorf("%s: %s", class, got)
		}
	}
}

// A short grid, three to five cards, is the page's content when every card
// has a picture and a price (a shop's small collection); a short row of
// unpriced cards is not a grid.
func TestPricedCardGrid(t *testing.T) {
	t.Parallel()
	cards := func(priced bool) string {
		var b strings.Builder
		for i := range 4 {
			p := ""
			if priced {
				p = fmt.Sprintf(`<span class="price">%d,00 €</span>`, 20+i)
			}
			fmt.Fprintf(&b, `<div class="item"><a href="/p/%d"><img src="/i/%d.jpg" alt=""></a><a href="/p/%d">Smart bird feeder kit %d</a>%s</div>`, i, i, i, i, p)
		}
		return b.String()
	}
	for _, priced := range []bool{true, false} {
		page := `<html><body><header><nav><a href="/">Home</a><a href="/shop">Shop</a></nav></header>
<div class="intro"><p>Feeders and add-ons for your garden, with cameras that see every visitor, all year round.</p></div>
<div class="products">` + cards(priced) + `</div><footer><a href="/privacy">Privacy</a></footer></body></html>`
		got, err := cleanString(t, page, Options{OnlyMainContent: true})
		if err != nil {
			t.Fatal(err)
		}
		if kept := strings.Contains(got, "Smart bird feeder kit 0") && strings.Contains(got, "Smart bird feeder kit 3"); kept != priced {
			t.Errorf("priced %v: cards kept %v: %s", priced, kept, got)
		}
	}
}
