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
