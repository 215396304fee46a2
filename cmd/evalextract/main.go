// Command evalextract measures main-content extraction on a labelled corpus
// of real pages (the WCXB layout: ground-truth/NNNN.json and
// html/NNNN.html.gz). Each page goes through the scrape engine exactly as
// POST /v2/scrape with formats ["markdown"] and onlyMainContent true, served
// from the corpus instead of the network; the markdown, with its markup
// removed, is scored by word F1 against the page's main_content, and its
// with/without snippets are checked.
//
// A fifth of the domains (by hash) is held out: develop on the "dev" rows,
// report both. Usage:
//
//	go run ./cmd/evalextract -corpus ../shared/corpus/wcxb-dev [-worst 20] [-worst-heldout] [-dump DIR] [-type T]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	corpus := flag.String("corpus", "../shared/corpus/wcxb-dev", "corpus directory")
	worst := flag.Int("worst", 20, "list the N lowest-scoring dev pages")
	dump := flag.String("dump", "", "write each page's plain text to DIR/ID.txt")
	only := flag.String("type", "", "evaluate only pages of this type")
	worstHeld := flag.Bool("worst-heldout", false, "list the worst held-out pages instead of dev ones")
	flag.Parse()
	if err := run(*corpus, *worst, *worstHeld, *dump, *only); err != nil {
		fmt.Fprintln(os.Stderr, "evalextract:", err)
		os.Exit(1)
	}
}

func run(dir string, worst int, worstHeld bool, dump, only string) error {
	pages, err := LoadCorpus(dir)
	if err != nil {
		return err
	}
	if only != "" {
		var sel []Page
		for _, p := range pages {
			if p.Type == only {
				sel = append(sel, p)
			}
		}
		pages = sel
	}
	rs := Evaluate(context.Background(), pages)
	if dump != "" {
		if err := os.MkdirAll(dump, 0o755); err != nil {
			return err
		}
		for _, r := range rs {
			md, _ := Extract(context.Background(), r.Page)
			if err := os.WriteFile(filepath.Join(dump, r.Page.ID+".md"), []byte(md), 0o644); err != nil {
				return err
			}
		}
	}
	w := os.Stdout
	dev := func(p *Page) bool { return !p.Holdout }
	held := func(p *Page) bool { return p.Holdout }
	WriteTable(w, "dev (4/5 of the domains)", Summarize(rs, dev))
	WriteTable(w, "held-out (1/5 of the domains)", Summarize(rs, held))
	WriteTable(w, "all pages", Summarize(rs, func(*Page) bool { return true }))
	if worst > 0 && worstHeld {
		WriteWorst(w, rs, worst, held)
	} else if worst > 0 {
		WriteWorst(w, rs, worst, dev)
	}
	return nil
}
