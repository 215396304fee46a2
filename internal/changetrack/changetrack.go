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

// lineDiff returns the line operations turning previous into current.
func lineDiff(previous, current string) []line {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // deterministic: the line-level diff is cheap
	a, b, lines := dmp.DiffLinesToChars(previous, current)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(a, b, false), lines)
	var out []line
	for _, d := range diffs {
		text := strings.TrimSuffix(d.Text, "\n")
		for l := range strings.SplitSeq(text, "\n") {
			out = append(out, line{d.Type, l})
		}
	}
	return out
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
