package htmlclean

import (
	"strings"
	"testing"
)

// Where the rules need words, they know those of the major European
// languages: a comments section under its heading, an ad label, a
// "read more" link and an author's bio go in Italian, German, Polish and
// Portuguese as in English.
func TestFurnitureWordsInOtherLanguages(t *testing.T) {
	t.Parallel()
	prose := strings.Repeat("Il nuovo ponte sarà aperto al traffico entro la fine dell'anno, secondo la regione. ", 5)
	page := `<html><body><article><h1>Il ponte</h1><div><span>Anzeige</span></div><p>` + prose + `</p>
<p><a href="/weiter">Weiterlesen</a></p><p>` + prose + `</p>
<p>Jan Kowalski jest dziennikarzem działu gospodarczego i od 2012 roku pisze o transporcie w regionie.</p>
<h2>Commenti</h2><p>Finalmente, era ora! Lo aspettavamo da dieci anni e speriamo che non ci siano altri ritardi.</p>
<p>Vedremo se sarà davvero pronto per Natale, io non ci credo molto, onestamente.</p>
</article></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Anzeige", "Weiterlesen", "jest dziennikarzem", "Commenti", "Finalmente", "Natale"} {
		if strings.Contains(got, s) {
			t.Errorf("kept %q: %s", s, got)
		}
	}
	if !strings.Contains(got, "Il ponte") || !strings.Contains(got, "aperto al traffico") {
		t.Errorf("lost the article: %s", got)
	}
}
