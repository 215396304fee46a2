package check

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// readRepoFile returns a file of the repository as text.
func readRepoFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// indentedCommands returns the first line of each indented code block of a
// markdown text, in order.
func indentedCommands(md string) []string {
	var cmds []string
	prevBlank := true
	for _, l := range strings.Split(md, "\n") {
		if prevBlank && strings.HasPrefix(l, "    ") && strings.TrimSpace(l) != "" {
			cmds = append(cmds, strings.TrimSpace(l))
		}
		prevBlank = strings.TrimSpace(l) == ""
	}
	return cmds
}

// TestREADMEFirstScreen: the README opens with the two commands a new user
// needs (run the server on its embedded default, run the tests), CI runs
// that same test command, and before the first section the README says
// which Go version go.mod asks for and that private targets are refused
// unless ALLOW_PRIVATE_TARGETS opens them.
func TestREADMEFirstScreen(t *testing.T) {
	t.Parallel()
	readme := readRepoFile(t, "README.md")
	first, _, _ := strings.Cut(readme, "\n## ")
	cmds := indentedCommands(first)
	if len(cmds) < 2 || cmds[0] != "go run ./cmd/server" || cmds[1] != "go test ./..." {
		t.Fatalf("README.md's first commands are %q, want `go run ./cmd/server` then `go test ./...`", cmds)
	}
	ci := strings.Split(readRepoFile(t, ".ci/run"), "\n")
	if want := strings.Replace(cmds[1], "go test", "go test -count=1", 1); !slices.Contains(ci, want) {
		t.Errorf(".ci/run does not run the README's test command (%q)", want)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(readRepoFile(t, "go.mod"))
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	if !strings.Contains(first, "Go "+m[1]) {
		t.Errorf("README.md's first screen does not say the Go version go.mod needs (Go %s)", m[1])
	}
	for _, s := range []string{"ALLOW_PRIVATE_TARGETS=true", "SCRAPE_TARGET_NOT_ALLOWED", "/console", "/mcp"} {
		if !strings.Contains(first, s) {
			t.Errorf("README.md's first screen does not mention %s", s)
		}
	}
}

// codeSpanRE matches fenced code blocks and code spans, whose brackets are
// not links.
var codeSpanRE = regexp.MustCompile("(?s)```.*?```|`[^`\n]*`")

// mdLinkRE matches an inline markdown link's target (images' too).
var mdLinkRE = regexp.MustCompile(`\]\(([^()\s]+)\)`)

// headingAnchors returns the anchors GitHub gives the headings of a
// markdown file (lower case, punctuation but '-' and '_' dropped, spaces to
// '-', a repeated one suffixed -1, -2, ...) and the ids of its <a> tags.
func headingAnchors(md string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimLeft(l, "#")
		if h == "" || h[0] != ' ' {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	for _, m := range regexp.MustCompile(`<a (?:id|name)="([^"]+)"`).FindAllStringSubmatch(md, -1) {
		anchors[m[1]] = true
	}
	return anchors
}

// TestDocLinks: every relative link of the README, BENCHMARKS.md and the
// files under docs/ leads to a file of the repository, and every #anchor
// to a heading of its file, so that moving a section cannot leave links
// pointing at nothing.
func TestDocLinks(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	files := []string{"README.md", "BENCHMARKS.md", "deploy/README.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no docs/*.md")
	}
	for _, d := range docs {
		files = append(files, filepath.ToSlash(strings.TrimPrefix(d, root+string(filepath.Separator))))
	}
	anchorsOf := map[string]map[string]bool{}
	anchors := func(rel string) map[string]bool {
		if a, ok := anchorsOf[rel]; ok {
			return a
		}
		a := headingAnchors(readRepoFile(t, rel))
		anchorsOf[rel] = a
		return a
	}
	for _, f := range files {
		text := codeSpanRE.ReplaceAllString(readRepoFile(t, f), "")
		for _, m := range mdLinkRE.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			rel := f
			if path != "" {
				rel = filepath.ToSlash(filepath.Join(filepath.Dir(f), path))
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
					t.Errorf("%s links to %s, which does not exist", f, target)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(rel, ".md") && !anchors(rel)[frag] {
				t.Errorf("%s links to %s: %s has no heading with the anchor #%s", f, target, rel, frag)
			}
		}
	}
}
