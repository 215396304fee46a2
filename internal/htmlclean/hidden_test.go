package htmlclean

import (
	"strings"
	"testing"
)

// Hidden tab panels and streamed render segments are content; other hidden
// elements are not.
func TestHiddenContent(t *testing.T) {
	t.Parallel()
	prose := func(s string) string { return strings.Repeat(s+", with enough words to count as prose. ", 4) }
	tests := []struct {
		name       string
		body       string
		keep, drop []string
	}{
		{
			name: "hidden tab panels by role",
			body: `<main><h1>Install</h1><p>` + prose("Pick your language") + `</p>
<div role="tablist"><button role="tab">Python</button><button role="tab">Go</button></div>
<div role="tabpanel"><p>` + prose("Install Python first") + `</p></div>
<div role="tabpanel" hidden style="display:none"><p>` + prose("Install Go first") + `</p></div></main>`,
			keep: []string{"Install Python first", "Install Go first"},
		},
		{
			name: "tab panes named by id are not navigation",
			body: `<main><h1>Plans</h1><p>` + prose("Three plans for every team") + `</p>
<div id="tabs-3-tabpanel-1" class="hide"><p>` + prose("The team plan adds shared folders") + `</p></div>
<div class="tab-content"><p>` + prose("The solo plan is free") + `</p></div></main>`,
			keep: []string{"shared folders", "solo plan is free"},
		},
		{
			name: "collapsed accordion panels",
			body: `<main><h1>Roof repair</h1><p>` + prose("We fix leaks and replace shingles") + `</p>
<div class="accordion-item"><h3>How long does it take?</h3><div class="accordion-item__dropdown" role="region" aria-hidden="true"><p>` +
				prose("Most repairs take one day") + `</p></div></div></main>`,
			keep: []string{"Most repairs take one day"},
		},
		{
			name: "a read-more expander is content, a collapsing menu is not",
			body: `<main><h1>Cast iron pan</h1><p>` + prose("Pre-seasoned and oven safe") + `</p>
<div class="a-expander-content" style="display:none"><p>` + prose("Made in one piece from recycled iron") + `</p></div></main>
<div class="navbar-collapse collapse"><ul><li><a href="/a">Shop all pans and pots</a></li><li><a href="/b">Our story</a></li></ul></div>`,
			keep: []string{"recycled iron"},
			drop: []string{"Shop all pans"},
		},
		{
			name: "search results are content, the search box is not",
			body: `<div class="site-search"><p>` + prose("Trending searches will appear here") + `</p></div>
<main><h1>Kayaks</h1><div id="search-page-wrapper"><ul>` + strings.Repeat(`<li><a href="/p/1">Sea kayak 13 ft</a><p>`+prose("Stable touring hull")+`</p></li>`, 3) + `</ul></div></main>`,
			keep: []string{"Stable touring hull"},
			drop: []string{"Trending searches"},
		},
		{
			name: "streamed render segment",
			body: `<main><h1>Our services</h1><template id="B:0"></template><p>Loading…</p></main>
<div hidden id="S:0"><section><p>` + prose("We repair roofs in every season") + `</p></section></div>`,
			keep: []string{"repair roofs"},
		},
		{
			name: "a link hidden from screen readers is visible (a teaser repeating the title link)",
			body: `<main><h1>Headphones</h1>` + strings.Repeat(`<article class="river"><h2><a href="/a/1">New firmware for the studio headphones</a></h2><p><a href="/a/1" aria-hidden="true" tabindex="-1">`+
				prose("The update improves noise cancelling")+`</a></p></article>`, 2) + `<div aria-hidden="true"><span>Decorative clone of the menu</span></div></main>`,
			keep: []string{"improves noise cancelling"},
			drop: []string{"Decorative clone"},
		},
		{
			name: "other hidden blocks stay hidden",
			body: `<main><h1>Post</h1><p>` + prose("The visible article text") + `</p>
<div hidden id="modal"><p>` + prose("Sign in to continue") + `</p></div><div hidden id="S:x1"><p>` + prose("Not a segment") + `</p></div></main>`,
			keep: []string{"visible article text"},
			drop: []string{"Sign in to continue", "Not a segment"},
		},
	}
	for _, tc := range tests {
		got, err := cleanString(t, `<html><body>`+tc.body+`</body></html>`, Options{OnlyMainContent: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range tc.keep {
			if !strings.Contains(got, k) {
				t.Errorf("%s: lost %q: %s", tc.name, k, got)
			}
		}
		for _, d := range tc.drop {
			if strings.Contains(got, d) {
				t.Errorf("%s: kept %q: %s", tc.name, d, got)
			}
		}
	}
}
