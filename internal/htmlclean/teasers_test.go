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
