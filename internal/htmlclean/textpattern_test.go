package htmlclean

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// textPatterns are the package's textPatterns, checked against regexp.
func textPatterns() map[string]*textPattern {
	return map[string]*textPattern{
		"bylineLine": bylineLine, "creditStart": creditStart, "creditLine": creditLine,
		"posterField": posterField, "cookieLine": cookieLine, "consentLine": consentLine,
		"commentCount": commentCount, "cardLabel": cardLabel, "readingTime": readingTime,
		"posterLabel": posterLabel, "posterStat": posterStat, "postCounter": postCounter,
		"threadLabel": threadLabel, "pageLabel": pageLabel, "furnitureStart": furnitureStart,
		"furniture": furniture, "linkedLabel": linkedLabel, "bioStart": bioStart, "intlBioStart": intlBioStart,
	}
}

// patternTexts are texts each pattern is meant for, with near misses.
var patternTexts = []string{
	"", " ", "a", "4 min read", "4 min read time", "15 minute read time", "reading time: 3 minutes",
	"estimated read time 4-5 mins.", "4-5 min. read", "12 comments", "no comments", "1,204 comment",
	"0 reviews", "(0) ratings", "no reviews yet", "1 of 13", "11 of 1300", "well-known member",
	"2+ years member", "original poster", "join date: aug 2008", "posts: 1,077", "joined feb 2019",
	"posts 1,077", "3 likes", "12 replies", "1.2k views", "offline", "likes", "last edited: jul 6, 2024",
	"click to expand...", "click to shrink…", "thread starter", "super moderator", "posted 3 hours ago",
	"2y", "3 hours ago", "an hour ago", "a day", "showing 24 of 291 results", "33 results", "1-24 of 300 products",
	"you are not logged in.", "sent from my iphone using tapatalk", "filter & sort", "no products in the cart.",
	"jump to", "location: sin", "registered: 2024-01-27", "karma: 12", "we use cookies to improve",
	"this website uses cookies", "ifixit uses cookies to", "this site is protected by recaptcha and",
	"by continuing, you agree to our user agreement", "by subscribing you accept the terms",
	"by clicking below you acknowledge", "written by ann smith", "written by: jo lee, senior analyst",
	"written by", "photo credit: ann smith", "credit: getty images", "image courtesy of the museum",
	"photo by jo lee", "photos: ap", "courtesy of", "picture source x", "disclosure: this post may contain affiliate links",
	"this post may contain affiliate links", "as an amazon associate we earn", "thanks for reading x!",
	"tags: a, b", "tagged with: x", "filed under: news", "posted in", "categories:", "tags", "tagsy",
	"-- disclosure", "our reviews may earn affiliate", "we earn a commission from affiliate links",
	"the harbour lights were dim when the boats came in", "thisisnotalabel", "x uses cookies\u00e9",
	"\u00e9t\u00e9 uses cookies", "\xff uses cookies", "4\xffmin read", "posts: \xe2\x82", "1\u00a0of 3",
	"12 comments\n", "\n12 comments", "moderator\u2028", "by continuing" + strings.Repeat(" x", 60) + " you agree",
	"sent from my " + strings.Repeat("a", 59) + " using " + strings.Repeat("b", 60),
	"sent from my " + strings.Repeat("a", 61) + " using b",
	"Ann Smith is a freelance writer", "Joe is the co-founder of", "Jo Lee (JL) was an editor", "O'Neil has been our",
	"Ann Smith is alone", "ann smith is a writer", "Émile Zola is a writer", "Anna Schmidt ist Redakteurin",
	"Łukasz Nowak jest dziennikarzem", "Zoë Dupont écrit pour", "Anna Schmidt istanbul",
}

// TestTextPatternsAgreeWithRegexp checks every textPattern against the
// regexp it is compiled from on the texts above, all their prefixes, and
// every text node (lower-cased, trimmed, and as it is) of the golden and
// benchmark pages and the WCXB sample of internal/extracteval.
func TestTextPatternsAgreeWithRegexp(t *testing.T) {
	texts := append([]string(nil), patternTexts...)
	for _, s := range patternTexts {
		for i := range s {
			texts = append(texts, s[:i], s[i:])
		}
	}
	var pages []string
	golden, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.html"))
	for _, f := range golden {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, string(b))
	}
	sample, _ := filepath.Glob(filepath.Join("..", "extracteval", "testdata", "wcxb-sample", "html", "*.html.gz"))
	for _, f := range sample {
		pages = append(pages, gunzip(t, f))
	}
	pages = append(pages, benchPage(t, 20<<10))
	for _, p := range pages {
		doc, err := html.Parse(strings.NewReader(p))
		if err != nil {
			t.Fatal(err)
		}
		for n := doc; n != nil; n = next(n, doc, false) {
			if n.Type == html.TextNode {
				texts = append(texts, n.Data, strings.ToLower(strings.TrimSpace(n.Data)))
			} else if n.Type == html.ElementNode && isBlock(n.DataAtom) {
				if _, ok := shortText(n, 400); ok {
					texts = append(texts, lineText(n))
				}
			}
		}
	}
	if len(sample) == 0 || len(texts) < 10000 {
		t.Fatalf("only %d texts (%d sample pages)", len(texts), len(sample))
	}
	for name, p := range textPatterns() {
		if !p.anchored {
			t.Errorf("%s: not anchored, so never takes the fast path", name)
		}
		matched := 0
		for _, s := range texts {
			want := p.re.MatchString(s)
			if got := p.MatchString(s); got != want {
				t.Errorf("%s.MatchString(%q) = %v, regexp says %v", name, s, got, want)
			}
			if want {
				matched++
			}
		}
		if matched == 0 {
			t.Errorf("%s: no text matched: the check shows nothing", name)
		}
	}
}

func gunzip(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func FuzzTextPatterns(f *testing.F) {
	for _, s := range patternTexts {
		f.Add(s)
	}
	ps := textPatterns()
	f.Fuzz(func(t *testing.T, s string) {
		for name, p := range ps {
			if got, want := p.MatchString(s), p.re.MatchString(s); got != want {
				t.Errorf("%s.MatchString(%q) = %v, regexp says %v", name, s, got, want)
			}
		}
	})
}

// TestTextPatternOddExpressions covers what the package's patterns do not
// use: empty loops, a match at the start, word boundaries at the ends,
// case folding and an unanchored expression.
func TestTextPatternOddExpressions(t *testing.T) {
	exprs := []string{`^(?:|a)*b`, `^a*`, `^(?:x|)`, `^\bab\b`, `^(?i)straße\b`, `^k`, `(?i)^k`, `a+b`,
		`^(?:a|b)*c$`, `^.{0,3}z`, `^\B`, `^(?:ab|a)(?:c|bc)$`, `^$`, `^(?m)a$`, `^[^ ]+ x\b`}
	texts := []string{"", "a", "b", "ab", "aab", "abc", "x", "abz", "STRASSE", "straße", "Straße!", "\u212a",
		"k", "K", "xab", "cc", "aaaz", "aaaaz", "a\nb", "ab c", "ab x", "ab xy", "\xff x", "é x!", "a\n"}
	for _, e := range exprs {
		p := mustTextPattern(e)
		for _, s := range texts {
			if got, want := p.MatchString(s), p.re.MatchString(s); got != want {
				t.Errorf("%s on %q: %v, regexp says %v", e, s, got, want)
			}
		}
	}
}

func TestNonSpace(t *testing.T) {
	texts := []string{"", " ", "a,b", " \n\t\r\f,", strings.Repeat("the harbour, lights\n\t\r\f ", 9),
		strings.Repeat("x", 31), strings.Repeat(", ", 16), strings.Repeat("é\u00a0,\v", 20)}
	// Every byte, alone and in a short and a long text of it.
	for b := 0; b < 256; b++ {
		c := string([]byte{byte(b)})
		texts = append(texts, c, strings.Repeat(c, 31), "a "+strings.Repeat(c, 40))
	}
	// The longest texts nonSpaceShort counts: its sum's low byte full.
	texts = append(texts, strings.Repeat(",", 255), strings.Repeat("x", 255), strings.Repeat(" ", 255))
	// Texts of every length around the short and long counts' boundary.
	for l := 0; l <= 70; l++ {
		var b []byte
		for i := 0; i < l; i++ {
			b = append(b, " \n,\t\r\fa\x00\xff\v"[(i*7+l)%10])
		}
		texts = append(texts, string(b))
	}
	for _, s := range texts {
		wantN, wantC := 0, 0
		for i := 0; i < len(s); i++ {
			switch s[i] {
			case ' ', '\n', '\t', '\r', '\f':
			case ',':
				wantN++
				wantC++
			default:
				wantN++
			}
		}
		if n, c := nonSpace(s); n != wantN || c != wantC {
			t.Errorf("nonSpace(%q) = %d, %d, want %d, %d", s, n, c, wantN, wantC)
		}
		if n, c := nonSpaceShort(s); len(s) < 256 && (n != wantN || c != wantC) {
			t.Errorf("nonSpaceShort(%q) = %d, %d, want %d, %d", s, n, c, wantN, wantC)
		}
	}
}

func TestAppendLine(t *testing.T) {
	for _, s := range append([]string{"  Read   MORE\n", "\u00a0Ünïcode\u2003Wörds\v", "K\u212a", "a\xffb \xe2\x82",
		"İstanbul", "\u0085x\u0085", "ẞ", "\ufffd"}, patternTexts...) {
		checkAppendLine(t, s)
	}
}

func checkAppendLine(t *testing.T, s string) {
	t.Helper()
	want := strings.ToLower(strings.Join(strings.Fields(s), " "))
	if got := string(appendLine([]byte("x"), []byte(s))); got != "x"+want {
		t.Errorf("appendLine(%q) = %q, want %q", s, got[1:], want)
	}
	want = strings.Join(strings.Fields(s), " ")
	if got := string(appendFields([]byte("x"), []byte(s), false)); got != "x"+want {
		t.Errorf("appendFields(%q) = %q, want %q", s, got[1:], want)
	}
}

func FuzzAppendLine(f *testing.F) {
	f.Add("  Read   MORE\n")
	f.Add("a\xffb İ")
	f.Fuzz(checkAppendLine)
}
