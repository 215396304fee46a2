package htmlclean

import (
	"strings"
	"testing"
)

// A rail of teaser cards after the article (a picture, a kicker, a
// headline link, a line of summary) goes with its title, whatever the
// language and the class names; cards with prices (products the article
// recommends) and items with paragraphs of their own stay.
func TestTeaserRails(t *testing.T) {
	t.Parallel()
	prose := strings.Repeat("Die Reederei rechnet mit deutlich kürzeren Liegezeiten für große Containerschiffe im Hafen. ", 6)
	teaser := func(i string) string {
		return `<div class="c7"><a href="/t` + i + `"><img src="/t.jpg" alt=""></a><span>Schifffahrt</span><h3><a href="/t` + i +
			`">Reederei meldet Rekordgewinn trotz Flaute ` + i + `</a></h3><p>Die Frachtraten sind gefallen.</p></div>`
	}
	product := func(i string) string {
		return `<li><a href="/p` + i + `"><img src="/p.jpg" alt=""><span>Wetterfeste Jacke Modell ` + i + `</span></a><span>€</span><span>89,00</span> <span>inkl. MwSt.</span></li>`
	}
	item := func(i string) string {
		return `<div class="c9"><h3><a href="/i` + i + `">Der dritte Kran am Kai ` + i + `</a></h3><p>` + prose + `</p></div>`
	}
	page := `<html><body><div class="c1"><h1>Neue Kaimauer</h1><p>` + prose + `</p>
<div class="c8">` + item("1") + item("2") + item("3") + `</div>
<ul class="c5">` + product("1") + product("2") + product("3") + `</ul>
<p>` + prose + `</p>
<div class="c6"><h2>Das könnte Sie auch interessieren</h2><div class="c2">` + teaser("1") + teaser("2") + teaser("3") + teaser("4") + `</div></div>
</div></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Rekordgewinn", "Das könnte Sie", "Frachtraten"} {
		if strings.Contains(got, s) {
			t.Errorf("kept %q: %s", s, got)
		}
	}
	for _, s := range []string{"Neue Kaimauer", "Wetterfeste Jacke Modell 3", "89,00", "Der dritte Kran am Kai 2"} {
		if !strings.Contains(got, s) {
			t.Errorf("lost %q: %s", s, got)
		}
	}
}

// On a page marked as an article, a grid of cards in another column than
// the article's text is a rail of other stories, not the content, unless
// it holds twice the article's text; a hub page marked as an article
// whose grid follows its intro in the same column keeps the grid.
func TestArticleGridInAnotherColumn(t *testing.T) {
	t.Parallel()
	prose := strings.Repeat("Le conseil municipal a voté le budget de la nouvelle médiathèque jeudi soir. ", 5)
	cards := ""
	for i := range 8 {
		n := string(rune('a' + i))
		cards += `<li class="c3"><a href="/r` + n + `"><img src="/r.jpg" alt=""></a><h2><a href="/r` + n + `">Une autre histoire du quartier, numéro ` + n + ` de la série</a></h2></li>`
	}
	article := `<html><head><meta property="og:type" content="article"></head><body><div class="w"><div class="c1"><div class="c2"><div class="c4"><div class="c5"><h1>La médiathèque</h1><p>` +
		prose + `</p></div></div></div></div><div class="c6"><ul class="c7">` + cards + `</ul></div></div></body></html>`
	got, err := cleanString(t, article, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "médiathèque jeudi") || strings.Contains(got, "Une autre histoire") {
		t.Errorf("article: %s", got)
	}
	hub := `<html><head><meta property="og:type" content="article"></head><body><div class="w"><h1>Nos séries</h1><p>` +
		prose + `</p><ul class="c7">` + cards + `</ul></div></body></html>`
	got, err = cleanString(t, hub, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "Une autre histoire du quartier, numéro h") {
		t.Errorf("hub: %s", got)
	}
}
