package changetrack

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		had       bool
		prev, cur string
		code      int
		want      string
	}{
		{false, "", "a", 200, StatusNew},
		{true, "a", "a", 200, StatusSame},
		{true, "a", "b", 200, StatusChanged},
		{true, "a", "", 404, StatusRemoved},
		{true, "a", "", 410, StatusRemoved},
		{false, "", "", 404, StatusNew},
	}
	for _, tt := range tests {
		if got := Status(tt.had, tt.prev, tt.cur, tt.code); got != tt.want {
			t.Errorf("Status(%v, %q, %q, %d) = %q, want %q", tt.had, tt.prev, tt.cur, tt.code, got, tt.want)
		}
	}
}

func TestComputeStructured(t *testing.T) {
	t.Parallel()
	prev := "# Prices\n\nA: 10\nB: 20\nC: 30\n"
	cur := "# Prices\n\nA: 10\nB: 25\nC: 30\nD: 40\n"
	d := Compute(prev, cur)
	wantText := "--- previous\n+++ current\n@@ -1,5 +1,6 @@\n # Prices\n \n A: 10\n-B: 20\n+B: 25\n C: 30\n+D: 40\n"
	if d.Text != wantText {
		t.Errorf("text:\n%s\nwant:\n%s", d.Text, wantText)
	}
	ch := d.JSON.Files[0].Chunks[0]
	if ch.Content != "@@ -1,5 +1,6 @@" || len(ch.Changes) != 7 {
		t.Fatalf("chunk = %+v", ch)
	}
	if c := ch.Changes[3]; c.Type != "del" || c.Ln != 4 || c.Content != "-B: 20" {
		t.Errorf("del = %+v", c)
	}
	if c := ch.Changes[4]; c.Type != "add" || c.Ln != 4 || c.Content != "+B: 25" {
		t.Errorf("add = %+v", c)
	}
	if c := ch.Changes[5]; c.Type != "normal" || !c.Normal || c.Ln1 != 5 || c.Ln2 != 5 {
		t.Errorf("normal = %+v", c)
	}
	if c := ch.Changes[6]; c.Type != "add" || c.Ln != 6 {
		t.Errorf("second add = %+v", c)
	}
	if same := Compute(prev, prev); same.Text != "" || len(same.JSON.Files) != 0 {
		t.Errorf("equal texts: %+v", same)
	}
}

// TestComputeAppliesWithPatch checks the unified diff is a real one: GNU
// patch applied to the previous text gives the current text, for texts
// with far-apart changes (several hunks) and edits at both ends.
func TestComputeAppliesWithPatch(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("patch"); err != nil {
		t.Skip("patch not installed")
	}
	var prevB, curB strings.Builder
	for i := range 60 {
		prevB.WriteString("line " + string(rune('A'+i%26)) + "\n")
		switch {
		case i == 0:
			curB.WriteString("new first line\n")
		case i == 20:
			curB.WriteString("changed middle\nand an extra line\n")
		case i == 40:
			// deleted
		default:
			curB.WriteString("line " + string(rune('A'+i%26)) + "\n")
		}
	}
	curB.WriteString("appended\n")
	prev, cur := prevB.String(), curB.String()
	d := Compute(prev, cur)
	if n := len(d.JSON.Files[0].Chunks); n != 4 {
		t.Errorf("%d hunks, want 4", n)
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "page.md")
	if err := os.WriteFile(target, []byte(prev), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "patch", "--quiet", target)
	cmd.Stdin = strings.NewReader(d.Text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("patch: %v: %s\n%s", err, out, d.Text)
	}
	got, _ := os.ReadFile(target)
	if string(got) != cur {
		t.Errorf("patched text differs:\n%s", got)
	}
}

// Two documents whose differing part is longer than maxDiffLines are not
// diffed line by line (Myers' diff takes time in that length times the
// number of changes; every line of a 10 MB page changed would take over an
// hour): the part is removed and added whole, as one hunk between the
// shared first and last lines, and the diff still applies. Under the bound
// the lines the two share inside it are found.
func TestComputeBoundsTheWork(t *testing.T) {
	t.Parallel()
	doc := func(n int, tag string) string {
		var b strings.Builder
		b.WriteString("# Title\n\nshared intro\n")
		for i := range n {
			if i%100 == 0 {
				fmt.Fprintf(&b, "kept line %d\n", i) // in both
			} else {
				fmt.Fprintf(&b, "%s line %d\n", tag, i)
			}
		}
		b.WriteString("shared footer\n")
		return b.String()
	}
	unchanged := func(d Diff) int {
		n := 0
		for _, c := range d.JSON.Files[0].Chunks {
			for _, ch := range c.Changes {
				if ch.Type == "normal" {
					n++
				}
			}
		}
		return n
	}
	if n := unchanged(Compute(doc(2000, "old"), doc(2000, "new"))); n < 20 {
		t.Fatalf("under the bound: %d unchanged lines in the hunks, want the 20 kept lines found", n)
	}
	n := maxDiffLines/2 + 500
	prev, cur := doc(n, "old"), doc(n, "new")
	big := Compute(prev, cur)
	if chunks := big.JSON.Files[0].Chunks; len(chunks) != 1 || unchanged(big) > 2*3 {
		t.Fatalf("past the bound: %d hunks, %d unchanged lines; want one hunk with only its context unchanged", len(chunks), unchanged(big))
	}
	if _, err := exec.LookPath("patch"); err != nil {
		t.Skip("patch not installed")
	}
	target := filepath.Join(t.TempDir(), "page.md")
	if err := os.WriteFile(target, []byte(prev), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "patch", "--quiet", target)
	cmd.Stdin = strings.NewReader(big.Text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("patch: %v: %s", err, out)
	}
	if got, _ := os.ReadFile(target); string(got) != cur {
		t.Error("the patched text differs from the current one")
	}
}

// The diff library numbers distinct lines as runes and panicked past the
// last one (1.1 million distinct lines): two pages of 600,000 short lines,
// all changed, are diffed without it.
func TestComputeManyDistinctLines(t *testing.T) {
	t.Parallel()
	doc := func(tag string) string {
		var b strings.Builder
		for i := range 600_000 {
			fmt.Fprintf(&b, "%s%d\n", tag, i)
		}
		return b.String()
	}
	d := Compute(doc("a"), doc("b"))
	if chunks := d.JSON.Files[0].Chunks; len(chunks) != 1 || len(chunks[0].Changes) != 1_200_000 {
		t.Fatalf("%d hunks, want one removing 600,000 lines and adding 600,000", len(chunks))
	}
}
