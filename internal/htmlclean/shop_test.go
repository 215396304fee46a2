package htmlclean

import (
	"strings"
	"testing"
)

// A page's modal windows (its privacy policy and terms, opened from the
// footer) do not count in the text the page shows: twenty times the text
// of its content in them made every pruning look near-empty, and the whole
// page, menus and policies, was kept.
func TestModalTextNotShown(t *testing.T) {
	t.Parallel()
	policy := strings.Repeat("<p>We collect the data you give us, keep it for as long as the law asks, and share it with no one but our carriers.</p>", 120)
	page := `<html><body><header><nav><a href="/m">Men</a> <a href="/w">Women</a> <a href="/s">Sale</a></nav></header>
<main><div class="pdp"><h1>Wool Runner</h1><p>A true original, our runner combines soft merino wool with a cushioned sole, for all-day wear.</p>
<p>Machine washable: remove the insoles and laces and wash them apart.</p></div></main>
<footer><a href="/privacy">Privacy policy</a><div id="modal-privacy" aria-modal="true" class="fixed">` + policy + `</div></footer></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "soft merino wool") || !strings.Contains(got, "Machine washable") {
		t.Errorf("lost the content: %s", got)
	}
	for _, d := range []string{"We collect the data", "Privacy policy", "Sale"} {
		if strings.Contains(got, d) {
			t.Errorf("kept %q: %.300s", d, got)
		}
	}
}
