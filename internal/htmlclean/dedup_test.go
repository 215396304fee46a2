package htmlclean

import (
	"strings"
	"testing"
)

// A block repeated word for word (a carousel's cloned slide, the mobile
// copy of a section) is kept once; repeated table cells and the cards of a
// grid stay.
func TestDuplicateBlocks(t *testing.T) {
	t.Parallel()
	slide := `<div class="slide"><p>Prompt to code anything you can imagine, then ship it to your team.</p></div>`
	page := `<html><body><main><h1>Design tools</h1><p>` + strings.Repeat("Design, prototype and hand off in one place, with your whole team. ", 4) + `</p>
<div class="carousel">` + slide + slide + slide + `</div>
<table><tr><td>Included in every plan, no extra charge at all</td><td>Yes</td></tr><tr><td>Included in every plan, no extra charge at all</td><td>No</td></tr></table></main></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(got, "Prompt to code anything"); n != 1 {
		t.Errorf("slide kept %d times, want 1: %s", n, got)
	}
	if n := strings.Count(got, "Included in every plan"); n != 2 {
		t.Errorf("table cell kept %d times, want 2: %s", n, got)
	}
}

// A block holding only a loading placeholder goes; a sentence about
// loading stays.
func TestLoadingPlaceholder(t *testing.T) {
	t.Parallel()
	page := `<html><body><main><h1>Kettle</h1><p>` + strings.Repeat("Boils a litre in three minutes and switches itself off. ", 4) + `</p>
<div class="reviews-slot"><span>Loading...</span></div><p>Loading the dishwasher is easier with the lid off, it says here.</p></main></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "Loading...") || !strings.Contains(got, "Loading the dishwasher") {
		t.Errorf("placeholder: %s", got)
	}
}

// A block holding only a reading-time label goes; a sentence giving the
// time and a recipe's cooking time stay.
func TestReadingTimeLabel(t *testing.T) {
	t.Parallel()
	page := `<html><body><main><h1>Kettle</h1><div class="meta"><span>4 min read</span></div><p>` + strings.Repeat("Boils a litre in three minutes and switches itself off. ", 4) + `</p>
<p><span>Reading time: 12 minutes</span></p><p>It takes a 5 min read of the manual to descale it.</p><p><span>15 minutes</span></p></main></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "4 min read") || strings.Contains(got, "Reading time") ||
		!strings.Contains(got, "5 min read of the manual") || !strings.Contains(got, "15 minutes") {
		t.Errorf("reading time: %s", got)
	}
}

// Sales calls to action go as whole links; a link that says more stays.
func TestServiceCallsToAction(t *testing.T) {
	t.Parallel()
	page := `<html><body><main><h1>Hosted inference</h1><p>` + strings.Repeat("Run open models on our GPUs with per-token pricing and no setup. ", 4) + `</p>
<p><a href="/signup">Start building</a> <a href="/call">Schedule a call</a> <a href="/plans">See plans</a></p><p><a href="/guide">Start building a retrieval pipeline</a></p></main></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{">Start building<", "Schedule a call", "See plans"} {
		if strings.Contains(got, gone) {
			t.Errorf("kept %q: %s", gone, got)
		}
	}
	if !strings.Contains(got, "Start building a retrieval pipeline") {
		t.Errorf("lost a descriptive link: %s", got)
	}
}

// The repeated subject lines of a thread's replies go; a single "Re:" line
// stays.
func TestReplyTitles(t *testing.T) {
	t.Parallel()
	post := func(text string) string {
		return `<div class="postbody"><h3><a href="#p1">Re: Turning off the LEDs</a></h3><div class="content">` + strings.Repeat(text+" ", 4) + `</div></div>`
	}
	page := `<html><body><main><h1>Turning off the LEDs</h1><h4>Re: an earlier question</h4>` + post("Edit the config file and add the two lines for the activity light.") +
		post("That works on the older boards too, after a reboot of course.") + `</main></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "Re: Turning") || !strings.Contains(got, "Re: an earlier question") ||
		!strings.Contains(got, "activity light") || !strings.Contains(got, "older boards") {
		t.Errorf("reply titles: %s", got)
	}
}

// Result counts and a forum's state notices go when they are a block's
// whole text; a sentence holding the same words stays.
func TestPageLabels(t *testing.T) {
	t.Parallel()
	page := `<html><body><main><h1>Kettles</h1><p>Showing 24 of 291 results</p><div>You are not logged in.</div><p>` + strings.Repeat("Our kettles boil a litre in three minutes and switch themselves off. ", 4) + `</p>
<p>Sent from my phone using the forum app</p><p>The search gave 33 results for steel kettles, most of them cordless.</p></main></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"Showing 24", "not logged in", "Sent from my phone"} {
		if strings.Contains(got, gone) {
			t.Errorf("kept %q: %s", gone, got)
		}
	}
	if !strings.Contains(got, "33 results for steel kettles") {
		t.Errorf("lost a sentence: %s", got)
	}
}

// A section opened by "Customers also bought" or "Trending searches" goes
// on any page, not only on one marked as a product.
func TestShopRecirculationSections(t *testing.T) {
	t.Parallel()
	page := `<html><body><main><h1>Steel kettle</h1><p>` + strings.Repeat("Boils a litre in three minutes and switches itself off. ", 4) + `</p>
<h2>Customers also bought</h2><p>Descaler tablets, pack of twelve, for every kettle brand.</p><h2>Trending searches</h2><p>toaster, glass kettle, milk frother</p></main></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "Descaler tablets") || strings.Contains(got, "milk frother") || !strings.Contains(got, "switches itself off") {
		t.Errorf("recirculation sections: %s", got)
	}
}

// A plain paragraph that the article's text repeats (a refrain, a pasted
// paragraph) stays twice; a section given twice (each of its paragraphs
// copied in the same order), a pull quote and a summary paragraph with a
// class of its own repeating the lead are kept once.
func TestRepeatedParagraphs(t *testing.T) {
	t.Parallel()
	refrain := "<p>We shall go on to the end, whatever the weather and whatever it costs us.</p>"
	body := "The harbour wall was rebuilt in the spring, stone by stone, by the village. " +
		strings.Repeat("Every family gave a day a week to it, and the school gave its older pupils. ", 3)
	page := `<html><body><header><a href="/">Home</a></header><article><h1>The wall</h1>
<p class="summary">The harbour wall was finished on a Tuesday after eleven weeks.</p>
<div class="text"><p>The harbour wall was finished on a Tuesday after eleven weeks.</p><p>` + body + `</p>` + refrain + `
<div>A plain block of text that the article gives twice, word for word.</div><div>A plain block of text that the article gives twice, word for word.</div>
<h2>Later</h2><p>And it held through the storms of the winter that followed, to everyone's relief.</p>` + refrain + `
<blockquote><p>` + body + `</p></blockquote>
<div class="desktop"><p>First of the copied section, long enough to count as a block.</p><p>Second of the copied section, long enough to count as well.</p></div>
<div class="mobile"><p>First of the copied section, long enough to count as a block.</p><p>Second of the copied section, long enough to count as well.</p></div>
</div></article><footer>© The village</footer></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[string]int{"whatever the weather": 2, "First of the copied section": 1,
		"Second of the copied section": 1, "finished on a Tuesday": 1, "stone by stone": 1, "gives twice": 2} {
		if n := strings.Count(got, s); n != want {
			t.Errorf("%q kept %d times, want %d: %s", s, n, want, got)
		}
	}
}
