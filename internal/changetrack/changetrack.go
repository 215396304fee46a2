// Package changetrack compares a page's markdown with its previous scrape:
// the change status and a git-style unified diff of the lines, in text and
// in the structured form of the changeTracking format (files, chunks,
// changes with line numbers). Line differences come from
// github.com/sergi/go-diff.
package changetrack

import (
	"fmt"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Change statuses.
const (
	StatusNew     = "new"
	StatusSame    = "same"
	StatusChanged = "changed"
	StatusRemoved = "removed"
)

// Status returns the change status of a scrape: removed when the page now
// answers 404 or 410 and was seen before, new on first sight, else same or
// changed by the markdown.
func Status(hadPrevious bool, previous, current string, statusCode int) string {
	switch {
	case statusCode == 404 || statusCode == 410:
		if hadPrevious {
			return StatusRemoved
		}
		return StatusNew
	case !hadPrevious:
		return StatusNew
	case previous == current:
		return StatusSame
	}
	return StatusChanged
}

// Diff is the git-diff mode's output.
type Diff struct {
	Text string     `json:"text"`
	JSON Structured `json:"json"`
}

// Structured is the parsed form of the unified diff.
type Structured struct {
	Files []File `json:"files"`
}

// File is the one compared document.
type File struct {
	From   string  `json:"from"`
	To     string  `json:"to"`
	Chunks []Chunk `json:"chunks"`
}

// Chunk is one hunk: its "@@ -a,b +c,d @@" header and its lines.
type Chunk struct {
	Content string   `json:"content"`
	Changes []Change `json:"changes"`
}

// Change is one line of a hunk. Type is add (Ln: its line in the current
// text), del (Ln: its line in the previous text) or normal (Ln1, Ln2: its
// lines in both). Content keeps the diff prefix (+, - or space).
type Change struct {
	Type    string `json:"type"`
	Normal  bool   `json:"normal,omitempty"`
	Ln      int    `json:"ln,omitempty"`
	Ln1     int    `json:"ln1,omitempty"`
	Ln2     int    `json:"ln2,omitempty"`
	Content string `json:"content"`
}

// Names of the two sides in the diff headers.
const (
	fromName = "previous"
	toName   = "current"
)

// context is the number of unchanged lines shown around a change.
const context = 3

type line struct {
	op   diffmatchpatch.Operation
	text string
}

// maxDiffLines bounds the lines of the part where two documents differ
// (between their common first and last lines) that are diffed line by
// line. Myers' diff takes time in that length times the number of
// changes: two 575 KB documents with every line changed took 14 s, and a
// 10 MB page would take over an hour, with nothing to stop it. The diff
// library also numbers every distinct line as a rune and panics past the
// last rune (1.1 million distinct lines, a 10 MB page of short ones).
// Past the bound that part is reported as removed and added whole; at the
// bound the worst case takes about 0.6 s.
const maxDiffLines = 20000

// lineDiff returns the line operations turning previous into current.
func lineDiff(previous, current string) []line {
	a, b := splitLines(previous), splitLines(current)
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	out := make([]line, 0, len(a)+len(b)-pre-suf)
	add := func(op diffmatchpatch.Operation, ls []string) {
		for _, l := range ls {
			out = append(out, line{op, strings.TrimSuffix(l, "\n")})
		}
	}
	add(diffmatchpatch.DiffEqual, a[:pre])
	midA, midB := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(midA)+len(midB) <= maxDiffLines {
		dmp := diffmatchpatch.New()
		dmp.DiffTimeout = 0                                                                   // deterministic; maxDiffLines bounds the cost instead
		ra, rb, lines := dmp.DiffLinesToRunes(strings.Join(midA, ""), strings.Join(midB, "")) // a rune per line
		for _, d := range dmp.DiffCharsToLines(dmp.DiffMainRunes(ra, rb, false), lines) {
			add(d.Type, strings.SplitAfter(strings.TrimSuffix(d.Text, "\n"), "\n"))
		}
	} else {
		add(diffmatchpatch.DiffDelete, midA)
		add(diffmatchpatch.DiffInsert, midB)
	}
	add(diffmatchpatch.DiffEqual, a[len(a)-suf:])
	return out
}

// splitLines splits s after each newline; the last line keeps none when s
// does not end with one, and an empty s has no lines.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	ls := strings.SplitAfter(s, "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

// Compute returns the unified diff of previous and current with three
// lines of context; both empty when they are equal.
func Compute(previous, current string) Diff {
	d := Diff{JSON: Structured{Files: []File{}}}
	if previous == current {
		return d
	}
	ops := lineDiff(previous, current)
	var changed []int
	for i, o := range ops {
		if o.op != diffmatchpatch.DiffEqual {
			changed = append(changed, i)
		}
	}
	file := File{From: fromName, To: toName, Chunks: []Chunk{}}
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", fromName, toName)
	// Line numbers (1-based) in each side at each op index.
	oldAt, newAt := make([]int, len(ops)+1), make([]int, len(ops)+1)
	oldAt[0], newAt[0] = 1, 1
	for i, o := range ops {
		oldAt[i+1], newAt[i+1] = oldAt[i], newAt[i]
		if o.op != diffmatchpatch.DiffInsert {
			oldAt[i+1]++
		}
		if o.op != diffmatchpatch.DiffDelete {
			newAt[i+1]++
		}
	}
	for k := 0; k < len(changed); {
		start := max(changed[k]-context, 0)
		end := changed[k]
		for k < len(changed) && changed[k] <= end+2*context {
			end = changed[k]
			k++
		}
		end = min(end+context, len(ops)-1)
		var oldN, newN int
		var changes []Change
		for i := start; i <= end; i++ {
			o := ops[i]
			switch o.op {
			case diffmatchpatch.DiffEqual:
				oldN++
				newN++
				changes = append(changes, Change{Type: "normal", Normal: true, Ln1: oldAt[i], Ln2: newAt[i], Content: " " + o.text})
			case diffmatchpatch.DiffDelete:
				oldN++
				changes = append(changes, Change{Type: "del", Ln: oldAt[i], Content: "-" + o.text})
			case diffmatchpatch.DiffInsert:
				newN++
				changes = append(changes, Change{Type: "add", Ln: newAt[i], Content: "+" + o.text})
			}
		}
		header := fmt.Sprintf("@@ -%s +%s @@", hunkRange(oldAt[start], oldN), hunkRange(newAt[start], newN))
		b.WriteString(header + "\n")
		for _, c := range changes {
			b.WriteString(c.Content + "\n")
		}
		file.Chunks = append(file.Chunks, Chunk{Content: header, Changes: changes})
	}
	d.Text = b.String()
	d.JSON.Files = append(d.JSON.Files, file)
	return d
}

// hunkRange writes a side's range as unified diffs do: "start,count",
// with start one before for an empty side.
func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start-1)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}
