package htmlclean

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The small block around an e-mail field (a mailing-list box) goes; a
// large one (a contact page whose form sits among its prose) and the
// content around it stay.
func TestSignupBoxes(t *testing.T) {
	t.Parallel()
	prose := strings.Repeat("<p>Grind fresh, weigh the beans, and pour slowly in circles, for an even extraction.</p>", 6)
	page := `<html><body><article><h1>Brewing</h1>` + prose + `
<div class="box"><h3>Stay in the loop</h3><p>The best brewing stories, straight to you each week.</p>
<form><label>Your address</label><input type="text" name="EMAIL"><button>Go</button></form></div></article></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "even extraction") || strings.Contains(got, "Stay in the loop") || strings.Contains(got, "straight to you") {
		t.Errorf("mailing-list box: %s", got)
	}
	contact := `<html><body><main><h1>Contact</h1><div class="c"><p>Write to us about orders, wholesale and events, and we answer within a day, on weekdays; for returns, tell us your order number and what went wrong, and we send a label.</p>
<form><label>Email</label><input type="email"><label>Message</label><textarea></textarea></form>
<p>Our roastery is open for visits on Saturdays, from nine to one, at the old mill by the river, with tastings on the hour.</p></div></main></body></html>`
	got, err = cleanString(t, contact, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "within a day") || !strings.Contains(got, "tastings on the hour") {
		t.Errorf("contact page: %s", got)
	}
}

// A call-to-action link is recognised with an arrow on either side,
// up and down arrows included ("Back to top ↑").
func TestCTALinkArrows(t *testing.T) {
	t.Parallel()
	checkCTALinks(t, map[string]bool{
		`<a href="#top">Back to top ↑</a>`:  true,
		`<a href="/x">↓ Download now</a>`:   true,
		`<a href="/x">Learn more →</a>`:     true,
		`<a href="/t">Back to topics ↑</a>`: false,
	})
}

// The label over an ad slot inside an article ("Article continues below"),
// a feedback prompt left alone by its buttons and a card control that is
// not a link ("Quick shop") go.
func TestContinuationLabels(t *testing.T) {
	t.Parallel()
	p := "<p>Grind fresh, weigh the beans, and pour slowly in circles, for an even extraction.</p>"
	page := `<html><body><article><h1>Brewing</h1>` + p + p + `<div class="slot"><span>Article continues below</span></div>` + p + `<div class="card-actions"><span>Quick shop</span></div>` + p +
		`<div class="feedback"><p>Was this helpful?</p><button>Yes</button><button>No</button></div></article></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "even extraction") || strings.Contains(got, "continues below") || strings.Contains(got, "Was this helpful") || strings.Contains(got, "Quick shop") {
		t.Errorf("labels kept: %s", got)
	}
}

// When no pruning leaves enough of a page, the body is kept but its chrome
// goes: skip links, header, navigation, footer.
func TestFallbackDropsChrome(t *testing.T) {
	t.Parallel()
	page := `<html><body><a href="#main">Skip to content</a><header><a href="/">Home</a> <a href="/shop">Shop the range</a></header>
<nav><a href="/a">All coffee</a> <a href="/b">All merch</a></nav>
<div id="main"><div><a href="/p/1">Dark roast coffee, 12 oz bag</a> <a href="/p/2">Medium roast coffee, 12 oz bag</a></div></div>
<footer><a href="/privacy">Privacy policy</a> <a href="/terms">Terms of service</a></footer></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "Dark roast coffee") || !strings.Contains(got, "Medium roast coffee") {
		t.Errorf("lost the content: %s", got)
	}
	for _, d := range []string{"Skip to content", "Shop the range", "All merch", "Privacy policy"} {
		if strings.Contains(got, d) {
			t.Errorf("kept %q: %s", d, got)
		}
	}
}

// checkCTALinks checks isCTALink on the first link of each HTML snippet.
func checkCTALinks(t *testing.T, cases map[string]bool) {
	t.Helper()
	for src, want := range cases {
		doc, err := html.Parse(strings.NewReader(src))
		if err != nil {
			t.Fatal(err)
		}
		if got := isCTALink(findElement(doc, atom.A)); got != want {
			t.Errorf("%s: %v, want %v", src, got, want)
		}
	}
}
