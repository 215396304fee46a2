package htmlclean

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// cleanWithout cleans src for its main content with the rules named off,
// or with all of them when without is empty.
func cleanWithout(t *testing.T, src string, without ...string) string {
	t.Helper()
	got, err := cleanString(t, src, Options{OnlyMainContent: true, Without: without})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// checkRule checks that the text gone leaves src with all rules on and
// stays with rule off, and that the text kept stays either way.
func checkRule(t *testing.T, src, rule, gone, kept string) {
	t.Helper()
	if got := cleanWithout(t, src); strings.Contains(got, gone) || !strings.Contains(got, kept) {
		t.Errorf("all rules on: want %q gone and %q kept: %s", gone, kept, got)
	}
	if got := cleanWithout(t, src, rule); !strings.Contains(got, gone) {
		t.Errorf("without %s: want %q kept: %s", rule, gone, got)
	}
}

// On a thread, the labels of a poster's card that sit beside the poster's
// name in one line (so that the line is not a card line of its own) go
// one by one.
func TestThreadCardLabels(t *testing.T) {
	t.Parallel()
	post := func(label, text string) string {
		return `<div class="post"><p><a href="/u/ann">ann_smith</a> <span>` + label + `</span></p><div class="body"><p>` +
			strings.Repeat(text+" ", 5) + `</p></div></div>`
	}
	for _, c := range []struct{ rule, label string }{
		{"thread-label", "Moderator"},
		{"thread-poster-stat", "Joined Feb 2019"},
		{"thread-poster-field", "Location: Sin"},
	} {
		t.Run(c.rule, func(t *testing.T) {
			t.Parallel()
			src := `<html><head><script type="application/ld+json">{"@type":"DiscussionForumPosting","headline":"Which first telescope?"}</script></head><body><main><h1>Which first telescope?</h1>` +
				post(c.label, "A reflector gives the most aperture for the money, get a dobsonian.") +
				post(c.label, "Refractors need no collimation, which beginners appreciate on cold nights.") + `</main></body></html>`
			checkRule(t, src, c.rule, c.label, "need no collimation")
		})
	}
}

// A site's copyright or "Powered by" line left at the end of an article
// goes; one in the text does not open its block and stays.
func TestSiteNotices(t *testing.T) {
	t.Parallel()
	article := `<p>` + strings.Repeat("The kettle boils water for tea in about three minutes on a good day. ", 4) + `</p>` +
		`<p>` + strings.Repeat("Descale it every month where the water is hard, with vinegar or citric acid. ", 4) + `</p>`
	for _, c := range []struct{ rule, line string }{
		{"copyright", "© 2024 Kettle Weekly. All rights reserved."},
		{"powered-by", "Powered by WordPress"},
	} {
		t.Run(c.rule, func(t *testing.T) {
			t.Parallel()
			src := `<html><body><article><h1>Descaling a kettle</h1>` + article + `<p>` + c.line + `</p></article></body></html>`
			checkRule(t, src, c.rule, c.line, "citric acid")
		})
	}
}

// Without switches named rules off; a name that is not a rule's is an error
// naming it and the rules.
func TestWithoutUnknownRule(t *testing.T) {
	t.Parallel()
	_, err := cleanString(t, `<html><body><p>x</p></body></html>`, Options{OnlyMainContent: true, Without: []string{"copyright", "no-such-rule"}})
	if err == nil || !strings.Contains(err.Error(), `"no-such-rule"`) || !strings.Contains(err.Error(), "powered-by") {
		t.Fatalf("err = %v, want one naming the rule and listing the rules", err)
	}
}

// Every rule of the table is described and names a test of this package
// that exists.
func TestNoticeRulesTable(t *testing.T) {
	t.Parallel()
	tests := map[string]bool{}
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Test") {
				tests[fd.Name.Name] = true
			}
		}
	}
	seen := map[string]bool{}
	for _, r := range Rules() {
		if r.Name == "" || r.Removes == "" || r.Why == "" || r.Test == "" {
			t.Errorf("rule %+v: want a name, what it removes, why and its test", r)
		}
		if seen[r.Name] {
			t.Errorf("rule %q twice", r.Name)
		}
		seen[r.Name] = true
		for _, name := range strings.Split(r.Test, ", ") {
			if !tests[strings.SplitN(name, "/", 2)[0]] {
				t.Errorf("rule %q names test %q, which is not in this package", r.Name, name)
			}
		}
	}
}
