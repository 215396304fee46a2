package htmlclean

import (
	"strings"
	"testing"
)

// An author's credit line ("Written by <a>Ann</a>") and the archive link
// under an article ("View all posts by Ann") go; a sentence that merely
// says who wrote something, and the article, stay.
func TestBylineLines(t *testing.T) {
	t.Parallel()
	p := "<p>Grind fresh, weigh the beans, and pour slowly in circles, for an even extraction every time.</p>"
	page := `<html><body><article><h1>Brewing</h1><div class="meta"><span>Written By</span> <a href="/a/ann">Ann Smith</a></div>` + p + p + p +
		`<p>The guide was written by a barista who has poured ten thousand cups.</p>` + p +
		`<div class="bio"><p><strong>Written by:</strong> Jo Lee, Senior Analyst</p><a href="/author/jo">View all posts by Jo Lee</a> <a href="/author">View all posts</a></div></article></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"Written", "Ann Smith", "Senior Analyst", "View all posts"} {
		if strings.Contains(got, gone) {
			t.Errorf("%q kept: %s", gone, got)
		}
	}
	if !strings.Contains(got, "was written by a barista") || !strings.Contains(got, "even extraction") {
		t.Errorf("content lost: %s", got)
	}
}

// An author's bio under the article ("Ann Smith is a freelance writer...")
// goes; a sentence of the article of the same shape ("Agriculture is a
// major contributor", one word and no pronoun), and a bio-shaped paragraph
// high in the text, stay.
func TestAuthorBios(t *testing.T) {
	t.Parallel()
	p := "<p>Grind fresh, weigh the beans, and pour slowly in circles, for an even extraction every time you brew.</p>"
	page := `<html><body><article><h1>Brewing</h1><p>Maria Lopez is the head roaster here, and a writer on the side; she picks the beans.</p>` + strings.Repeat(p, 8) +
		`<p>Agriculture is a major contributor to the taste of coffee, through soil and altitude.</p>
<div><p><a href="/a/ann">Ann Smith</a> is a freelance writer who covers coffee and tea. She lives in Lisbon with two cats and too many grinders.</p>
<p>Joe is the co-founder of a roastery. He has roasted for twenty years.</p></div></article></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"freelance writer", "co-founder"} {
		if strings.Contains(got, gone) {
			t.Errorf("%q kept: %s", gone, got)
		}
	}
	for _, kept := range []string{"head roaster", "major contributor", "even extraction"} {
		if !strings.Contains(got, kept) {
			t.Errorf("%q lost: %s", kept, got)
		}
	}
}

// A picture's credit line goes when it is the whole line ("Photo credit:
// <a>Ann</a>", "Credit: Getty Images", "Image courtesy of ..."); a caption
// that merely ends with a credit, and a sentence about photos, stay.
func TestCreditLines(t *testing.T) {
	t.Parallel()
	p := "<p>Grind fresh, weigh the beans, and pour slowly in circles, for an even extraction every time you brew.</p>"
	page := `<html><body><article><h1>Brewing</h1>` + p + `<figure><img src="a.jpg"><figcaption><span>Photo credit:</span> <a href="/x">Ann Smith</a></figcaption></figure>` + p +
		`<p><em>Credit: Getty Images</em></p>` + p + `<p>Image courtesy of the roastery</p>` + p +
		`<figure><img src="b.jpg"><figcaption>A pour-over kettle on the bench. Photo: Jo Lee</figcaption></figure>` +
		`<p>Photographs by our readers fill the next issue, so send yours.</p>` + p + `</article></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"Ann Smith", "Getty", "courtesy"} {
		if strings.Contains(got, gone) {
			t.Errorf("%q kept: %s", gone, got)
		}
	}
	for _, kept := range []string{"pour-over kettle", "Photographs by our readers", "even extraction"} {
		if !strings.Contains(got, kept) {
			t.Errorf("%q lost: %s", kept, got)
		}
	}
}

// An article's furniture lines go: an affiliate disclosure, a newsletter's
// sign-off, a line of tag links; a sentence about affiliate links inside
// a paragraph, and a "Tags:" line that is mostly text, stay.
func TestFurnitureLines(t *testing.T) {
	t.Parallel()
	p := "<p>Grind fresh, weigh the beans, and pour slowly in circles, for an even extraction every time you brew.</p>"
	page := `<html><body><article><h1>Brewing</h1><p><em>This post may contain affiliate links; see my <a href="/d">disclosure policy</a>.</em></p>` + p + p +
		`<p>Shops pay bloggers through affiliate links, and this post may contain affiliate links too, the author says.</p>` + p +
		`<p>Thanks for reading Brew Notes! This post is public so feel free to share it.</p>` +
		`<p>Tags: <a href="/t/coffee">coffee</a>, <a href="/t/brewing">brewing</a>, <a href="/t/kettles">kettles</a></p>` +
		`<p>Tags: the labels on the jars say which roast is which, so read them before you grind.</p>` + p + `</article></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"disclosure policy", "Thanks for reading", "kettles"} {
		if strings.Contains(got, gone) {
			t.Errorf("%q kept: %s", gone, got)
		}
	}
	for _, kept := range []string{"Shops pay bloggers", "labels on the jars", "even extraction"} {
		if !strings.Contains(got, kept) {
			t.Errorf("%q lost: %s", kept, got)
		}
	}
}

// A credit in a figure's caption goes too: the caption's own credit
// element after its text, and a caption holding only the credit in a
// figure whose picture sits in a wrapper block; the caption's text stays.
func TestCaptionCredits(t *testing.T) {
	t.Parallel()
	p := "<p>Grind fresh, weigh the beans, and pour slowly in circles, for an even extraction every time you brew.</p>"
	page := `<html><body><article><h1>Brewing</h1>` + p +
		`<figure><div class="img"><img src="a.jpg"></div><figcaption><span class="owner">Credit: Ann Smith</span></figcaption></figure>` + p +
		`<figure><img src="b.jpg"><figcaption>The kettle on the bench. <span class="credit">Photo by Jo Lee</span></figcaption></figure>` + p + `</article></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"Ann Smith", "Jo Lee"} {
		if strings.Contains(got, gone) {
			t.Errorf("%q kept: %s", gone, got)
		}
	}
	if !strings.Contains(got, "kettle on the bench") || !strings.Contains(got, "even extraction") {
		t.Errorf("content lost: %s", got)
	}
}

// A lone byline label ("Written by" on a line of its own) goes with the
// name block after it; lone furniture labels ("Share", "Tags") go; a "by"
// line stays (card lists repeat it with their authors), and so does a long
// block after a label.
func TestLoneLabels(t *testing.T) {
	t.Parallel()
	p := "<p>Grind fresh, weigh the beans, and pour slowly in circles, for an even extraction every time you brew.</p>"
	page := `<html><body><article><h1>Brewing</h1><div class="meta"><div>Written by</div> <div><a href="/a">Ann Smith</a></div></div>` + p + p +
		`<div><div>Reviewed by</div><div>Grind size matters more than the kettle, and the scale matters more than both, in every brew.</div></div>` + p +
		`<div><div>Share</div></div><div><div>by</div><div>Jo Lee</div></div>` + p + `</article></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"Written", "Ann Smith", "Reviewed", "Share"} {
		if strings.Contains(got, gone) {
			t.Errorf("%q kept: %s", gone, got)
		}
	}
	for _, kept := range []string{"Grind size matters", "Jo Lee", "even extraction"} {
		if !strings.Contains(got, kept) {
			t.Errorf("%q lost: %s", kept, got)
		}
	}
}

// A table of contents' lone label ("Table of contents" on a toggle) goes,
// and so does "No credit card required" under a button; a boilerplate
// heading of the same words still removes the section it opens.
func TestContentsLabels(t *testing.T) {
	t.Parallel()
	p := "<p>Grind fresh, weigh the beans, and pour slowly in circles, for an even extraction every time you brew.</p>"
	page := `<html><body><article><h1>Brewing</h1><div class="bar"><div>Table of contents</div></div>` + p + p + p +
		`<div><p>No credit card required.</p></div>` + p +
		`<h2>Tags</h2><p>Kettles, scales and the long argument about water temperature, all filed here.</p></article></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"Table of contents", "credit card", "Tags", "long argument"} {
		if strings.Contains(got, gone) {
			t.Errorf("%q kept: %s", gone, got)
		}
	}
	if !strings.Contains(got, "even extraction") {
		t.Errorf("content lost: %s", got)
	}
}
