package htmlclean

import (
	"flag"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/firegate/firegate/internal/markdown"
)

var update = flag.Bool("update", false, "rewrite the golden markdown files")

// TestGolden runs onlyMainContent cleaning and the markdown conversion, as
// the scrape engine does, on the hand-written pages in testdata/golden and
// compares the markdown with NAME.md (go test -run TestGolden -update
// rewrites them; review the diff).
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.html"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden pages: %v", err)
	}
	base, _ := url.Parse("https://www.example.com/a/page.html")
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".html")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(f)
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
			got, err := markdown.Convert(root, markdown.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got += "\n"
			golden := strings.TrimSuffix(f, ".html") + ".md"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("markdown differs from %s\n--- got\n%s\n--- want\n%s", golden, got, want)
			}
		})
	}
}
