package htmlclean

import (
	"strings"
	"testing"
)

// A section whose id is the slug of its own heading ("sharing-with-a-team"
// under "Sharing with a team") is kept, though the id holds a word that
// marks boilerplate; an id that names a part of the page (share-buttons)
// still removes it, and a boilerplate heading still removes its section.
func TestHeadingSlugIDs(t *testing.T) {
	t.Parallel()
	prose := strings.Repeat("Each clone keeps its own draft changesets until they are pushed to the shared repository. ", 4)
	page := `<html><body><main><h1>Mutable history</h1><p>` + prose + `</p>
<div class="section" id="sharing-with-a-team"><h2>Sharing with a team</h2><p>A team pushes its drafts to a non-publishing repository and reviews them there before they go public.</p></div>
<div id="share-buttons"><p>Share this page with your friends and colleagues on every network you use.</p></div>
<div class="section" id="related-pages"><h2>Related pages</h2><p>Phases, obsolescence markers and the evolve extension each have a page of their own.</p></div>
</main></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "reviews them there") || strings.Contains(got, "your friends") || strings.Contains(got, "a page of their own") {
		t.Errorf("sections: %s", got)
	}
}
