// Command evalextract measures main-content extraction on labelled corpora
// of real pages: WCXB (ground-truth/NNNN.json and html/NNNN.html.gz) and
// Mozilla Readability's test pages (pages/NAME/source.html.gz with the
// expected article in expected.html), a second opinion on news and blog
// articles. Each page goes through the scrape engine exactly as POST
// /v2/scrape with formats ["markdown"] and onlyMainContent true, served
// from the corpus instead of the network; the markdown, with its markup
// removed, is scored by word F1 against the page's reference text, and
// WCXB's with/without snippets are checked (package internal/extracteval).
//
// A fifth of WCXB's domains (by hash) is held out: develop on the "dev"
// rows, report both. Usage:
//
//	go run ./cmd/evalextract [-corpus DIR] [-second DIR] [-refs=false] [-worst 20] [-worst-heldout] [-dump DIR] [-scores FILE] [-type T] [-structure=false] [-bounds] [-without RULE[,RULE]] [-each-rule] [-rules]
//
// The corpora are found under shared/corpus in a parent directory of the
// working directory unless given; -second "" leaves the second out.
//
// The report ends with both corpora side by side (word F1, precision,
// recall) for the server and the reference libraries go-trafilatura and
// go-readability. Their texts come from the separate module in
// cmd/evalextract/refs, which keeps the libraries out of the server's
// dependencies; it is run with `go run` the first time and its texts are
// kept in the user's cache directory, keyed by the corpus and the module's
// sources (-refresh-refs runs it again; -refs=false leaves them out).
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
// With -without RULE[,RULE] it also scores both corpora with those
// main-content rules of htmlclean switched off, next to the scores with all
// rules on; -each-rule does so for each rule in turn and prints one row per
// rule (what it contributes to word F1 on each corpus); -rules lists the
// rules and exits.
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

type config struct {
	corpus, second     string
	worst              int
	worstHeld          bool
	dump, only, scores string
	structure, bounds  bool
	refs, refreshRefs  bool
	without            []string
	eachRule           bool
}

func main() {
	var c config
	flag.StringVar(&c.corpus, "corpus", findCorpus("wcxb-dev"), "WCXB corpus directory (or any corpus in either layout)")
	flag.StringVar(&c.second, "second", findCorpus("readability-pages"), `second corpus, Readability's test pages ("" leaves it out)`)
	flag.IntVar(&c.worst, "worst", 20, "list the N lowest-scoring dev pages (and of the second corpus)")
	flag.BoolVar(&c.worstHeld, "worst-heldout", false, "list the worst held-out pages instead of dev ones")
	flag.StringVar(&c.dump, "dump", "", "write each page's markdown to DIR/ID.md")
	flag.StringVar(&c.only, "type", "", "evaluate only pages of this type")
	flag.BoolVar(&c.structure, "structure", true, "score the markdown structure against main_content_markdown")
	flag.BoolVar(&c.bounds, "bounds", false, "also score the best possible choice of blocks from each page's whole markdown (an oracle that knows the reference), and how much of each reference the page holds at all")
	flag.StringVar(&c.scores, "scores", "", "write one line per page (id, type, half, F1, P, R, with found, without present) to FILE, to compare two runs page by page; the second corpus's pages have the half \"second\"")
	flag.BoolVar(&c.refs, "refs", true, "score go-trafilatura and go-readability beside the server (their texts are cached)")
	flag.BoolVar(&c.refreshRefs, "refresh-refs", false, "compute the reference libraries' texts again instead of using the cache")
	without := flag.String("without", "", "also score both corpora with these htmlclean rules (comma-separated; -rules lists them) switched off")
	flag.BoolVar(&c.eachRule, "each-rule", false, "also score both corpora with each htmlclean rule switched off in turn, one row per rule")
	rules := flag.Bool("rules", false, "list the htmlclean rules -without can switch off, and exit")
	flag.Parse()
	if *rules {
		writeRules(os.Stdout)
		return
	}
	var err error
	if c.without, err = ruleNames(*without); err != nil {
		fmt.Fprintln(os.Stderr, "evalextract:", err)
		os.Exit(2)
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "evalextract:", err)
		os.Exit(1)
	}
}

// findCorpus looks for shared/corpus/name in the working directory's
// parents (the main checkout and the worktrees sit beside shared/).
func findCorpus(name string) string {
	dir, err := os.Getwd()
	if err != nil {
		return filepath.Join("..", "shared", "corpus", name)
	}
	for {
		p := filepath.Join(dir, "shared", "corpus", name)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.Join("..", "shared", "corpus", name)
		}
		dir = parent
	}
}

// corpus is one loaded corpus with the server's results on it.
type corpus struct {
	name  string
	pages []extracteval.Page
	rs    []extracteval.Result
}

func run(c config) error {
	ctx := context.Background()
	pages, err := extracteval.Load(c.corpus)
	if err != nil {
		return err
	}
	pages = extracteval.OfType(pages, c.only)
	first := corpus{name: "WCXB", pages: pages, rs: extracteval.Evaluate(ctx, pages, extracteval.Firegate)}
	var second *corpus
	if c.second != "" {
		sp, err := extracteval.Load(c.second)
		if err != nil {
			return err
		}
		sp = extracteval.OfType(sp, c.only)
		second = &corpus{name: "readability-pages", pages: sp, rs: extracteval.Evaluate(ctx, sp, extracteval.Firegate)}
	}
	mds := map[string]string{}
	if c.dump != "" || c.structure {
		for _, r := range first.rs {
			md, _ := extracteval.Extract(ctx, r.Page)
			mds[r.Page.ID] = md
		}
	}
	if c.dump != "" {
		if err := os.MkdirAll(c.dump, 0o755); err != nil {
			return err
		}
		for id, md := range mds {
			if err := os.WriteFile(filepath.Join(c.dump, id+".md"), []byte(md), 0o644); err != nil {
				return err
			}
		}
	}
	if c.scores != "" {
		var rs2 []extracteval.Result
		if second != nil {
			rs2 = second.rs
		}
		if err := writeScores(c.scores, first.rs, rs2); err != nil {
			return err
		}
	}
	w := os.Stdout
	extracteval.WriteTable(w, "dev (4/5 of the domains)", extracteval.Summarize(first.rs, extracteval.Dev))
	extracteval.WriteTable(w, "held-out (1/5 of the domains)", extracteval.Summarize(first.rs, extracteval.Held))
	extracteval.WriteTable(w, "all pages", extracteval.Summarize(first.rs, extracteval.All))
	if second != nil {
		extracteval.WriteTable(w, "readability-pages (Readability's test pages, all articles; no snippets)", extracteval.Summarize(second.rs, extracteval.All))
	}
	if c.structure {
		sys := []extracteval.StructureSystem{{Name: "firegate", Markdown: mds}}
		extracteval.WriteStructure(w, "markdown structure, dev", pages, sys, extracteval.Dev)
		extracteval.WriteStructure(w, "markdown structure, held-out", pages, sys, extracteval.Held)
	}
	if c.bounds {
		bs, err := extracteval.Bounds(ctx, pages)
		if err != nil {
			return err
		}
		extracteval.WriteBounds(w, "bounds, dev", first.rs, bs, extracteval.Dev)
		extracteval.WriteBounds(w, "bounds, held-out", first.rs, bs, extracteval.Held)
		extracteval.WriteBounds(w, "bounds, all pages", first.rs, bs, extracteval.All)
	}
	switch {
	case c.worst > 0 && c.worstHeld:
		extracteval.WriteWorst(w, first.rs, c.worst, extracteval.Held)
	case c.worst > 0:
		extracteval.WriteWorst(w, first.rs, c.worst, extracteval.Dev)
	}
	if c.worst > 0 && second != nil {
		fmt.Fprint(w, "\nreadability-pages:")
		extracteval.WriteWorst(w, second.rs, min(c.worst, 10), extracteval.All)
	}
	if len(c.without) > 0 || c.eachRule {
		corpora := []corpus{first}
		if second != nil {
			corpora = append(corpora, *second)
		}
		if err := checkPipeline(ctx, w, corpora); err != nil {
			return err
		}
	}
	if len(c.without) > 0 {
		writeWithout(w, ablations(first, second), offResults(ctx, first, second, c.without), c.without)
	}
	if c.eachRule {
		writeEachRule(ctx, w, first, second)
	}
	return sideBySide(ctx, c, first, second)
}

// sideBySide prints the server's figures and, unless c.refs is off, the
// reference libraries' on both corpora.
func sideBySide(ctx context.Context, c config, first corpus, second *corpus) error {
	corpora := []corpus{first}
	dirs := []string{c.corpus}
	cols := []extracteval.Column{
		{Name: "WCXB dev", Keep: extracteval.Dev},
		{Name: "WCXB held-out", Keep: extracteval.Held},
	}
	if second != nil {
		corpora, dirs = append(corpora, *second), append(dirs, c.second)
		cols = append(cols, extracteval.Column{Name: "readability-pages", Keep: extracteval.All})
	}
	// Each column's results: WCXB's two halves share one evaluation.
	results := func(per []([]extracteval.Result)) [][]extracteval.Result {
		out := [][]extracteval.Result{per[0], per[0]}
		return append(out, per[1:]...)
	}
	ours := make([][]extracteval.Result, len(corpora))
	for i, cp := range corpora {
		ours[i] = cp.rs
	}
	rows := []extracteval.Row{{Name: "firegate", Results: results(ours)}}
	if c.refs {
		texts := make([]map[string]map[string]string, len(dirs))
		for i, dir := range dirs {
			t, err := referenceTexts(dir, c.refreshRefs)
			if err != nil {
				return fmt.Errorf("reference libraries (-refs=false leaves them out): %w", err)
			}
			texts[i] = t
		}
		for _, name := range sortedKeys(texts[0]) {
			per := make([][]extracteval.Result, len(corpora))
			for i, cp := range corpora {
				m := texts[i][name]
				per[i] = extracteval.Evaluate(ctx, cp.pages, func(_ context.Context, p *extracteval.Page) (string, error) {
					return m[p.ID], nil
				})
			}
			rows = append(rows, extracteval.Row{Name: name, Results: results(per)})
		}
	}
	extracteval.WriteCorpora(os.Stdout, "both corpora side by side: word F1 (precision / recall)", cols, rows)
	return nil
}

// writeScores writes one tab-separated line per page: id, type, "dev",
// "held" or "second", F1, P, R, with snippets found/all, without snippets
// present/all.
func writeScores(path string, rs, second []extracteval.Result) error {
	var b strings.Builder
	line := func(r extracteval.Result, half string) {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%.4f\t%.4f\t%.4f\t%d/%d\t%d/%d\n", r.Page.ID, r.Page.Type, half,
			r.Score.F, r.Score.P, r.Score.R, r.WithFound, len(r.Page.With), r.WithoutHit, len(r.Page.Without))
	}
	for _, r := range rs {
		half := "dev"
		if r.Page.Holdout {
			half = "held"
		}
		line(r, half)
	}
	for _, r := range second {
		line(r, "second")
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
