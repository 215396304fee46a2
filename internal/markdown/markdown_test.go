package markdown

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
)

var update = flag.Bool("update", false, "rewrite testdata/*.out.md golden files")

func convertString(t testing.TB, src string, opts Options) string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	md, err := Convert(doc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return md
}

// TestGolden converts testdata/<case>.in.html and compares the result with
// testdata/<case>.out.md; -update rewrites the golden files.
func TestGolden(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "*.in.html"))
	if err != nil || len(files) < 15 {
		t.Fatalf("want at least 15 golden cases, got %d (%v)", len(files), err)
	}
	for _, in := range files {
		name := strings.TrimSuffix(filepath.Base(in), ".in.html")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			got := convertString(t, string(src), Options{RemoveBase64Images: true}) + "\n"
			out := strings.TrimSuffix(in, ".in.html") + ".out.md"
			if *update {
				if err := os.WriteFile(out, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(out)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("markdown mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConvert(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		opts Options
		want string
	}{
		{"empty", "", Options{}, ""},
		{"base64 kept", `<img src="data:image/png;base64,AAA=" alt="x">`, Options{}, "![x](data:image/png;base64,AAA=)"},
		{"base64 removed", `<img src="data:image/png;base64,AAA=" alt="x">`, Options{RemoveBase64Images: true}, "![x](<Base64-Image-Removed>)"},
		{"emphasis spacing", `<p>a<em> b </em>c</p>`, Options{}, "a *b* c"},
		{"heading in link", `<a href="https://e.com/"><h2>T</h2></a>`, Options{}, "## [T](https://e.com/)"},
		{"ordered start", `<ol start="3"><li>x</li><li>y</li></ol>`, Options{}, "3. x\n4. y"},
		{"code fence", "<pre><code class=\"lang-rb\">puts 1</code></pre>", Options{}, "```rb\nputs 1\n```"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := convertString(t, tt.in, tt.opts)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Convert(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestConvertNil(t *testing.T) {
	t.Parallel()
	got, err := Convert(nil, Options{})
	if got != "" || err != nil {
		t.Errorf("Convert(nil) = %q, %v", got, err)
	}
}

// A table's markdown stays linear in its HTML: one wide row and many short
// ones used to be padded into rows times columns cells (80 KB -> 275 MB).
func TestTableStaysLinear(t *testing.T) {
	src := `<table><tr>` + strings.Repeat(`<td colspan=32>h</td>`, 3000) + `</tr>` +
		strings.Repeat(`<tr><td>x</td></tr>`, 1000) + `</table>`
	md := convertString(t, src, Options{})
	if len(md) > 4*len(src) {
		t.Fatalf("%d bytes of HTML became %d bytes of markdown", len(src), len(md))
	}
	lines := strings.Split(md, "\n")
	if got := strings.Count(md, "| x |"); got != 1000 {
		t.Fatalf("%d short rows kept, want 1000", got)
	}
	// Every cell stays; spans stop adding columns at maxSpanColumns.
	if n := strings.Count(lines[1], "---"); !strings.HasPrefix(lines[1], "| --- |") || n < 3000 || n > 3000+maxSpanColumns {
		t.Fatalf("the delimiter row has %d columns, want 3,000 cells plus at most %d spanned", n, maxSpanColumns)
	}
	// A small ragged table is still padded.
	small := convertString(t, `<table><tr><th>a</th><th>b</th><th>c</th></tr><tr><td>1</td></tr></table>`, Options{})
	if !strings.Contains(small, "| 1 |  |  |") {
		t.Fatalf("small table not padded:\n%s", small)
	}
}

// Emphasis whose content ends with a <br> closes before the hard
// break's two spaces: "**text  **" is not emphasis in CommonMark (a closing
// run may not follow white space), and the asterisks showed as text.
func TestInlineCloseBeforeHardBreak(t *testing.T) {
	for in, want := range map[string]string{
		"<p><strong>text<br></strong>after</p>":         "**text**  \nafter",
		"<p><em>a<br>b<br></em> c</p>":                  "*a  \nb*  \nc",
		`<p><a href="https://x.test/">go<br></a>on</p>`: "[go](https://x.test/) on", // inside a link a <br> is a space
		"<p><strong>a<br></strong></p>":                 "**a**",
	} {
		if got := convertString(t, in, Options{}); got != want {
			t.Errorf("%s: got %q, want %q", in, got, want)
		}
	}
}
