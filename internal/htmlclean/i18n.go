package htmlclean

import "regexp"

// The words of the rules that need words, in the major European languages
// besides English (German, French, Spanish, Italian, Polish, Portuguese,
// Dutch): the language-independent rules (link density, teaser rails,
// boxes' titles, asides, card grids) come first; these catch what they
// leave, on pages whose furniture is written in the page's language.

// intlBoilerplateHeadings are the starts of headings that introduce a
// section outside the main content (isBoilerplateHeading), lower-case.
var intlBoilerplateHeadings = []string{
	// de
	"mehr zum thema", "das könnte sie auch interessieren", "das könnte dich auch interessieren",
	"auch interessant", "weitere artikel", "weitere nachrichten", "lesen sie auch", "lies auch",
	"verwandte artikel", "ähnliche artikel", "meistgelesen", "meist gelesen", "am meisten gelesen",
	"kommentare", "leserkommentare", "diskutieren sie mit", "artikel teilen", "über den autor",
	"über die autorin", "newsletter abonnieren", "empfohlene artikel", "unsere empfehlungen",
	// fr
	"à lire aussi", "a lire aussi", "lire aussi", "à lire également", "sur le même sujet",
	"sur le même thème", "dans la même rubrique", "les plus lus", "les plus partagés", "articles similaires",
	"articles liés", "vous aimerez aussi", "vous aimerez peut-être", "vous pourriez aussi aimer",
	"commentaires", "réagissez", "partager cet article", "à propos de l'auteur", "à propos de l’auteur",
	"inscrivez-vous", "abonnez-vous", "les dernières actualités",
	// es
	"te puede interesar", "le puede interesar", "también te puede interesar", "quizás te interese",
	"noticias relacionadas", "artículos relacionados", "lo más leído", "lo más visto", "más leídas",
	"más noticias", "comentarios", "compartir", "sobre el autor", "suscríbete", "lee también",
	"lea también", "últimas noticias",
	// it
	"leggi anche", "potrebbe interessarti", "ti potrebbe interessare", "articoli correlati",
	"notizie correlate", "i più letti", "più letti", "commenti", "condividi", "iscriviti",
	"ultime notizie",
	// pl
	"czytaj także", "czytaj też", "zobacz także", "zobacz też", "polecane", "polecamy",
	"najczęściej czytane", "najpopularniejsze", "powiązane artykuły", "podobne artykuły", "komentarze",
	"udostępnij", "o autorze", "zapisz się", "najnowsze artykuły",
	// pt
	"leia também", "veja também", "você pode gostar", "notícias relacionadas", "artigos relacionados",
	"mais lidas", "mais lidos", "comentários", "compartilhe", "sobre o autor", "inscreva-se",
	"últimas notícias",
	// nl
	"lees ook", "gerelateerde artikelen", "meest gelezen", "reacties", "deel dit artikel",
	"over de auteur", "schrijf je in", "ook interessant", "meer nieuws",
}

// intlPostsHeadings are the headings that, on a forum thread, open its
// posts (isPostsHeading), lower-case.
var intlPostsHeadings = map[string]bool{"kommentare": true, "antworten": true, "commentaires": true,
	"réponses": true, "comentarios": true, "respuestas": true, "commenti": true, "risposte": true,
	"komentarze": true, "odpowiedzi": true, "comentários": true, "respostas": true, "reacties": true}

// intlCTAPhrases are the whole texts of call-to-action links (isCTALink),
// lower-case.
var intlCTAPhrases = map[string]bool{
	"weiterlesen": true, "mehr lesen": true, "mehr erfahren": true, "jetzt abonnieren": true, "abonnieren": true,
	"jetzt anmelden": true, "zum artikel": true, "alle artikel": true,
	"lire la suite": true, "en savoir plus": true, "s'abonner": true, "s’abonner": true, "je m'abonne": true,
	"je m’abonne": true, "je m'inscris": true, "voir tout": true, "voir plus": true,
	"leer más": true, "seguir leyendo": true, "saber más": true, "suscríbete": true, "ver más": true,
	"leggi di più": true, "continua a leggere": true, "scopri di più": true, "abbonati": true, "leggi tutto": true,
	"czytaj więcej": true, "czytaj dalej": true, "dowiedz się więcej": true, "subskrybuj": true, "zobacz więcej": true,
	"leia mais": true, "continuar lendo": true, "saiba mais": true, "assine": true, "assine já": true, "ver mais": true,
	"lees meer": true, "verder lezen": true, "meer lezen": true, "abonneer": true, "bekijk meer": true,
}

// intlAdLabels are the whole texts of the labels over ad slots and of a
// lone share label (removeNotices), lower-case.
var intlAdLabels = map[string]bool{
	"anzeige": true, "werbung": true, "publicité": true, "publicidad": true, "pubblicità": true,
	"reklama": true, "publicidade": true, "advertentie": true,
	"artikel wird nach der anzeige fortgesetzt": true, "weiter nach der anzeige": true,
	"la suite après la publicité": true, "l'article continue ci-dessous": true,
	"teilen": true, "partager": true, "partagez": true, "compartir": true, "condividi": true,
	"udostępnij": true, "compartilhar": true, "compartilhe": true, "partilhar": true, "delen": true,
}

// intlBioStart matches the opening of an author's bio in those languages:
// a name of two to four capitalised words, then "ist", "est", "es", "è",
// "jest", "é", "is" or a verb of working ("Anna Schmidt ist Redakteurin",
// "Marie Dupont est journaliste"); intlBioRole a journalist's trade in its
// first sentences.
var (
	intlBioStart = mustTextPattern(`^(?:\p{Lu}[\p{L}.'’-]*\.? ){1,3}\p{Lu}[\p{L}.'’-]* (?:ist|est|es|è|jest|é|is|war|était|fue|era|był|była|foi|arbeitet|travaille|trabaja|lavora|pracuje|trabalha|werkt|schreibt|écrit|escribe|scrive|pisze|escreve|schrijft)\b`)
	intlBioRole  = regexp.MustCompile(`(?i)(?:redakteur|journalist|autor|autorin|korrespondent|reporter|kolumnist|chefredakt|ressortleit|volontär|rédact|correspondant|chroniqueu|éditorialiste|pigiste|periodista|redactor|corresponsal|columnista|giornalista|redattor|corrispondente|inviat[oa]|editorialista|dziennikar|redaktor|publicyst|korespondent|jornalista|redator|repórter|colunista|correspondente|redacteur|verslaggever|correspondent|columnist)`)
)

// isIntlBio reports an author's bio in one of those languages.
func isIntlBio(t string) bool {
	return intlBioStart.MatchString(t) && intlBioRole.MatchString(t[:min(len(t), 200)])
}
