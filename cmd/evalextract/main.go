// Command evalextract measures main-content extraction on a labelled corpus
// of real pages (the WCXB layout: ground-truth/NNNN.json and
// html/NNNN.html.gz). Each page goes through the scrape engine exactly as
// POST /v2/scrape with formats ["markdown"] and onlyMainContent true, served
// from the corpus instead of the network; the markdown, with its markup
// removed, is scored by word F1 against the page's main_content, and its
// with/without snippets are checked (package internal/extracteval).
//
// A fifth of the domains (by hash) is held out: develop on the "dev" rows,
// report both. Usage:
//
//	go run ./cmd/evalextract -corpus ../shared/corpus/wcxb-dev [-worst 20] [-worst-heldout] [-dump DIR] [-scores FILE] [-type T] [-structure=false] [-bounds]
//
// With -structure (the default) it also scores the markdown's structure
// against main_content_markdown: headings with their levels, list items and
// their depth, table rows and cells, fenced code, links with their targets.
//
// With -bounds it also prints what the corpus allows: per type, the word
// F1 of the best choice of blocks from each page's whole markdown (an
// oracle that knows the reference), how much of each reference the page
// holds at all, and the pages whose reference is empty or mostly absent.
//
// The same figures for reference libraries, side by side, come from the
// separate module in cmd/evalextract/refs, which keeps them out of the
// server's dependencies.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/firegate/firegate/internal/extracteval"
)

func main() {
	corpus := flag.String("corpus", "../shared/corpus/wcxb-dev", "corpus directory")
	worst := flag.Int("worst", 20, "list the N lowest-scoring dev pages")
	worstHeld := flag.Bool("worst-heldout", false, "list the worst held-out pages instead of dev ones")
	dump := flag.String("dump", "", "write each page's markdown to DIR/ID.md")
	only := flag.String("type", "", "evaluate only pages of this type")
	structure := flag.Bool("structure", true, "score the markdown structure against main_content_markdown")
	bounds := flag.Bool("bounds", false, "also score the best possible choice of blocks from each page's whole markdown (an oracle that knows the reference), and how much of each reference the page holds at all")
	scores := flag.String("scores", "", "write one line per page (id, type, half, F1, P, R, with found, without present) to FILE, to compare two runs page by page")
	flag.Parse()
	if err := run(*corpus, *worst, *worstHeld, *dump, *only, *scores, *structure, *bounds); err != nil {
		fmt.Fprintln(os.Stderr, "evalextract:", err)
		os.Exit(1)
	}
}

func run(dir string, worst int, worstHeld bool, dump, only, scores string, structure, bounds bool) error {
	pages, err := extracteval.LoadCorpus(dir)
	if err != nil {
		return err
	}
	pages = extracteval.OfType(pages, only)
	ctx := context.Background()
	rs := extracteval.Evaluate(ctx, pages, extracteval.Firegate)
	mds := map[string]string{}
	if dump != "" || structure {
		for _, r := range rs {
			md, _ := extracteval.Extract(ctx, r.Page)
			mds[r.Page.ID] = md
		}
	}
	if dump != "" {
		if err := os.MkdirAll(dump, 0o755); err != nil {
			return err
		}
		for id, md := range mds {
			if err := os.WriteFile(filepath.Join(dump, id+".md"), []byte(md), 0o644); err != nil {
				return err
			}
		}
	}
	if scores != "" {
		if err := writeScores(scores, rs); err != nil {
			return err
		}
	}
	w := os.Stdout
	extracteval.WriteTable(w, "dev (4/5 of the domains)", extracteval.Summarize(rs, extracteval.Dev))
	extracteval.WriteTable(w, "held-out (1/5 of the domains)", extracteval.Summarize(rs, extracteval.Held))
	extracteval.WriteTable(w, "all pages", extracteval.Summarize(rs, extracteval.All))
	if structure {
		sys := []extracteval.StructureSystem{{Name: "firegate", Markdown: mds}}
		extracteval.WriteStructure(w, "markdown structure, dev", pages, sys, extracteval.Dev)
		extracteval.WriteStructure(w, "markdown structure, held-out", pages, sys, extracteval.Held)
	}
	if bounds {
		bs, err := extracteval.Bounds(ctx, pages)
		if err != nil {
			return err
		}
		extracteval.WriteBounds(w, "bounds, dev", rs, bs, extracteval.Dev)
		extracteval.WriteBounds(w, "bounds, held-out", rs, bs, extracteval.Held)
		extracteval.WriteBounds(w, "bounds, all pages", rs, bs, extracteval.All)
	}
	switch {
	case worst > 0 && worstHeld:
		extracteval.WriteWorst(w, rs, worst, extracteval.Held)
	case worst > 0:
		extracteval.WriteWorst(w, rs, worst, extracteval.Dev)
	}
	return nil
}

// writeScores writes one tab-separated line per page: id, type, "dev" or
// "held", F1, P, R, with snippets found/all, without snippets present/all.
func writeScores(path string, rs []extracteval.Result) error {
	var b strings.Builder
	for _, r := range rs {
		half := "dev"
		if r.Page.Holdout {
			half = "held"
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%.4f\t%.4f\t%.4f\t%d/%d\t%d/%d\n", r.Page.ID, r.Page.Type, half,
			r.Score.F, r.Score.P, r.Score.R, r.WithFound, len(r.Page.With), r.WithoutHit, len(r.Page.Without))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
