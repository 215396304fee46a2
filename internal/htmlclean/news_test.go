package htmlclean

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// newsPages are news articles in other languages than English
// (testdata/news: German, French, Polish, a Spanish live blog), each with
// the furniture that large news sites put
// around and inside an article: a related-stories rail of teaser cards, a
// "more on this" box of links inside the text, a video playlist, a
// newsletter box, an author's bio, a most-read list, a live blog's
// sidebar. Their class names are generated or in the page's language, so
// only language-independent signals (and the words of the page's
// language) can tell the furniture from the text. Each page keeps the
// strings of keep and drops those of drop; its word precision and recall
// against the page's .txt are logged.
var newsPages = []struct {
	name       string
	keep, drop []string
}{
	{name: "de-news",
		keep: []string{"Neue Kaimauer nach drei Jahren fertig", "kürzeren Liegezeiten", "elfhundert Meter", "Niedrigwasser festmachen",
			"310 Millionen Euro", "Kritik von Umweltverbänden", "Laichgebiete des Stints", "Schwimmponton"},
		drop: []string{"Politik", "Mehr zum Thema", "Elbvertiefung: Die Bilanz", "Anna Schmidt ist Redakteurin", "Der Morgen im Norden",
			"Ihrem Postfach", "Datenschutzerklärung", "So kommen die Riesenkräne", "Ein Tag mit den Elblotsen", "Das könnte Sie auch interessieren",
			"Reederei meldet Rekordgewinn", "Frachtraten", "Meistgelesen", "Stau auf der A7", "Impressum"}},
	{name: "fr-news",
		keep: []string{"Lyon : le tramway T9 entre en service à la rentrée", "vingt minutes", "quatorze stations", "trente mille voyageurs",
			"260 millions d'euros", "Des essais tout l'été", "vitesse réduite", "samedi 30 août"},
		drop: []string{"S'abonner", "Facebook", "À lire aussi", "Métro E : le projet", "est journaliste au service", "La lettre du matin",
			"Recevez chaque matin", "Nos vidéos", "premières images des essais", "Sur le même sujet", "Les tarifs TCL",
			"Les plus lus", "Canicule", "Mentions légales"}},
	{name: "pl-magazine",
		keep: []string{"Jak Gdańsk odzyskał Motławę", "dwadzieścia lat temu", "kładki dla pieszych", "odbudowa spichlerzy",
			"tramwaj wodny do Westerplatte"},
		drop: []string{"Prenumerata", "Udostępnij", "jest dziennikarzem", "Polecane", "Żuraw po remoncie", "Komentarze",
			"Pamiętam te nabrzeża", "strzał w dziesiątkę", "Wszelkie prawa zastrzeżone"}},
	{name: "es-liveblog",
		keep: []string{"Temporal en Valencia, en directo", "aviso rojo", "12:40", "polideportivo municipal", "Cortada la autovía A-7",
			"Metrovalencia suspende", "Buenos días. Comenzamos este directo"},
		drop: []string{"Deportes", "Claves", "Alzira abre el polideportivo para los desalojados", "Lo más leído", "presupuesto de las Fallas",
			"Suscríbete a nuestro boletín", "Aviso legal", "Un año después de la dana", "Qué significa cada color"}},
}

func TestNewsPages(t *testing.T) {
	t.Parallel()
	base, _ := url.Parse("https://news.example/artikel/1")
	var sum prf
	for _, p := range newsPages {
		t.Run(p.name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("testdata", "news", p.name+".html"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join("testdata", "news", p.name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := html.Parse(strings.NewReader(string(src)))
			if err != nil {
				t.Fatal(err)
			}
			root, err := Clean(doc, Options{BaseURL: base, OnlyMainContent: true})
			if err != nil {
				t.Fatal(err)
			}
			got := visibleText(root)
			flat := strings.Join(strings.Fields(got), " ")
			for _, k := range p.keep {
				if !strings.Contains(flat, k) {
					t.Errorf("lost %q", k)
				}
			}
			for _, d := range p.drop {
				if strings.Contains(flat, d) {
					t.Errorf("kept %q", d)
				}
			}
			s := score(got, string(want))
			sum.P, sum.R, sum.F = sum.P+s.P, sum.R+s.R, sum.F+s.F
			t.Logf("P %.3f R %.3f F1 %.3f", s.P, s.R, s.F)
			if t.Failed() {
				t.Logf("text:\n%s", got)
			}
		})
	}
	n := float64(len(newsPages))
	t.Logf("mean P %.3f R %.3f F1 %.3f", sum.P/n, sum.R/n, sum.F/n)
}
