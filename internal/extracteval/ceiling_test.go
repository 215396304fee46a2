package extracteval

import (
	"context"
	"math"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestBoundOfChoosesTheReferenceBlocks(t *testing.T) {
	p := &Page{Text: "Alpha beta gamma.\n\nDelta epsilon."}
	md := "[Home](/) [Shop](/shop)\n\n# Alpha beta gamma\n\nDelta *epsilon*.\n\nCopyright 2026 alpha"
	b := BoundOf(p, md)
	if !near(b.Oracle, 1) || !near(b.Reach, 1) || b.EmptyTruth {
		t.Fatalf("bound = %+v, want oracle 1, reach 1 (the menu and footer blocks left out)", b)
	}
}

func TestBoundOfStopsWhereABlockCostsMoreThanItGives(t *testing.T) {
	// The reference's last word sits only in a long boilerplate block:
	// taking that block lowers F1, so the oracle leaves it out and
	// scores 2*1*(4/5)/(1+4/5).
	p := &Page{Text: "one two three four five"}
	md := "one two three four\n\nfive menu menu menu menu menu menu menu menu menu"
	b := BoundOf(p, md)
	if want := 2 * 0.8 / 1.8; !near(b.Oracle, want) {
		t.Fatalf("oracle = %v, want %v", b.Oracle, want)
	}
	if !near(b.Reach, 1) {
		t.Fatalf("reach = %v, want 1", b.Reach)
	}
}

func TestBoundOfReachAndEmptyTruth(t *testing.T) {
	shell := &Page{Text: "posts rendered by scripts only"}
	if b := BoundOf(shell, "Loading posts"); !near(b.Reach, 0.2) {
		t.Fatalf("reach = %v, want 0.2 (one of five words in the page)", b.Reach)
	}
	empty := &Page{Text: ""}
	if b := BoundOf(empty, "Top 250 movies"); !b.EmptyTruth || !near(b.Oracle, 1) {
		t.Fatalf("bound = %+v, want EmptyTruth and oracle 1 (choosing nothing)", b)
	}
}

func TestBlocksKeepFencedCodeWhole(t *testing.T) {
	bs := blocks("intro\n\n```\nline one\n\nline two\n```\n\nafter")
	if len(bs) != 3 || len(bs[1]) != 4 {
		t.Fatalf("blocks = %q, want intro, the fence as one block of 4 words, after", bs)
	}
}

func TestFullMarkdownKeepsWhatMainContentDrops(t *testing.T) {
	p := &Page{URL: "https://example.com/a", HTML: []byte(`<html><body><nav><a href="/x">Menu link</a></nav>
<main><article><h1>Title</h1><p>` + longParagraph + `</p></article></main></body></html>`)}
	md, err := FullMarkdown(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	main, err := Extract(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md, "Menu link") || strings.Contains(main, "Menu link") {
		t.Fatalf("full markdown should keep the menu and main content drop it:\nfull: %q\nmain: %q", md, main)
	}
}

const longParagraph = "This paragraph carries the article's words, long enough that the main-content extractor keeps it as the body of the page and nothing else around it, sentence after sentence of plain prose."
