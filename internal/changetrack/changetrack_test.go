package changetrack

import (
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
