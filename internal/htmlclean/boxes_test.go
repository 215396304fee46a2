package htmlclean

import (
	"strings"
	"testing"
)

// The title of a box of links goes with its links, in any language; a
// heading whose section was only links goes too; a title over prose, and
// a heading over a section that goes on, stay.
func TestBoxTitles(t *testing.T) {
	t.Parallel()
	prose := strings.Repeat("Der Hafen wurde im Frühjahr Stein für Stein wieder aufgebaut, von allen im Dorf. ", 3)
	links := `<ul><li><a href="/a">Elbvertiefung: Die Bilanz nach fünf Jahren</a></li><li><a href="/b">Containerumschlag sinkt das dritte Jahr</a></li><li><a href="/c">Hafencity: Neubau am Baakenhafen verzögert</a></li></ul>`
	page := `<html><body><article><h1>Die Mauer</h1><p>` + prose + `</p>
<div class="q1"><div class="q2">Mehr zum Thema</div>` + links + `</div>
<p>` + prose + `</p>
<h2>Weitere Meldungen</h2>` + links + `
<h2>Die Kosten</h2><p>Rund 310 Millionen Euro, knapp im Plan, sagte der Senat am Donnerstag in Hamburg.</p>
<div class="q3"><div class="q4">Hintergrund</div><p>` + prose + `</p></div>
</article></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Mehr zum Thema", "Weitere Meldungen", "Elbvertiefung"} {
		if strings.Contains(got, s) {
			t.Errorf("kept %q: %s", s, got)
		}
	}
	for _, s := range []string{"Die Kosten", "310 Millionen", "Hintergrund", "Die Mauer"} {
		if !strings.Contains(got, s) {
			t.Errorf("lost %q: %s", s, got)
		}
	}
}

// An aside inside the article made mostly of links (a "read also" box,
// even of two links) goes; an aside of prose (a fact box) stays.
func TestAsideOfLinks(t *testing.T) {
	t.Parallel()
	prose := strings.Repeat("La ligne comptera quatorze stations sur un peu plus de huit kilomètres. ", 3)
	page := `<html><body><main><article><h1>Le tramway</h1><p>` + prose + `</p>
<aside><p>À lire aussi</p><ul><li><a href="/a">Métro E : le projet reporté à 2035</a></li><li><a href="/b">Vélo : record de fréquentation</a></li></ul></aside>
<p>` + prose + `</p><aside><p>Le T9 en chiffres : huit kilomètres, quatorze stations, trente mille voyageurs par jour attendus.</p></aside>
</article></main></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "Métro E") || strings.Contains(got, "À lire aussi") || !strings.Contains(got, "Le T9 en chiffres") {
		t.Errorf("asides: %s", got)
	}
}
