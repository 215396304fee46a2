package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Expressions a request carries are bounded before any parser sees them:
// a selector of a million nested ":not(" used to end the whole process
// with a stack overflow in the CSS parser (no recover catches one), and a
// path pattern could compile to hundreds of megabytes (those cases are in
// the crawl and map validation tables).
func TestHostileExpressionsAre400s(t *testing.T) {
	sc := &fakeScraper{}
	s, _ := setup(t, sc)
	n := 1_000_000
	bomb, _ := json.Marshal(strings.Repeat(":not(", n) + "a" + strings.Repeat(")", n))
	deep, _ := json.Marshal(strings.Repeat(":is(", 17) + "a" + strings.Repeat(")", 17))
	scrape := func(extra string) string { return `{"url":"https://example.com",` + extra + `}` }
	for _, tc := range []struct {
		name, route, body, path, msg string
	}{
		{"includeTags of 6 MB", "/v2/scrape", scrape(fmt.Sprintf(`"includeTags":["p",%s]`, bomb)),
			"includeTags.1", "Invalid CSS selector: the selector is longer than 1024 characters"},
		{"excludeTags nested :has", "/v2/scrape", scrape(`"excludeTags":["div:has(p:has(a))"]`),
			"excludeTags.0", "Invalid CSS selector: the selector nests :has, :contains or :matches inside one another"},
		{"attributes selector nested deep", "/v2/scrape", scrape(fmt.Sprintf(`"formats":[{"type":"attributes","selectors":[{"selector":%s,"attribute":"href"}]}]`, deep)),
			"formats.0.selectors.0.selector", "Invalid CSS selector: the selector nests parentheses deeper than 16 levels"},
		{"click selector of 6 MB", "/v2/scrape", scrape(fmt.Sprintf(`"actions":[{"type":"click","selector":%s}]`, bomb)),
			"actions.0.selector", "Invalid CSS selector: the selector is longer than 1024 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, got := do(t, s, http.MethodPost, tc.route, goodKey, tc.body)
			if rec.Code != http.StatusBadRequest || got["code"] != "BAD_REQUEST" {
				t.Fatalf("status %d body %.300s", rec.Code, rec.Body.String())
			}
			details, _ := got["details"].([]any)
			found := false
			for _, d := range details {
				m, _ := d.(map[string]any)
				if joinPath(m["path"]) == tc.path && m["message"] == tc.msg {
					found = true
				}
			}
			if !found {
				t.Fatalf("want %s: %q in details, got %.600s", tc.path, tc.msg, rec.Body.String())
			}
		})
	}
	if len(sc.got) != 0 {
		t.Fatalf("the scraper was called %d times", len(sc.got))
	}
}

func joinPath(p any) string {
	parts, _ := p.([]any)
	out := make([]string, len(parts))
	for i, x := range parts {
		out[i] = fmt.Sprint(x)
	}
	return strings.Join(out, ".")
}
