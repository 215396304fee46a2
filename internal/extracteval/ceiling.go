package extracteval

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/firegate/firegate/internal/scrape"
)

// A Bound is what the best possible choice of blocks from a page's whole
// markdown would score on it: how far the corpus lets any block-choosing
// extractor go on the same converter, and so how much of a gap is the
// extractor's and how much the page's or its annotation's.
type Bound struct {
	Page *Page
	// Reach is the recall of the whole page's text (onlyMainContent
	// false): the share of the reference's words the page's markdown holds
	// at all. Words a page only renders with its scripts are not there.
	Reach float64
	// Oracle is the word F1 of the best set of the page's blocks (its
	// markdown split on blank lines), chosen knowing the reference: the
	// blocks are taken in order of their precision against it, and the
	// prefix that scores highest is kept. It is a bound from below on the
	// true optimum, close to it in practice, and far above what a real
	// extractor reaches, which must choose without the reference.
	Oracle float64
	// EmptyTruth is set when the page's reference has no words: only an
	// empty answer scores on it, whatever the page shows.
	EmptyTruth bool
}

// FullMarkdown runs p through the scrape engine as POST /v2/scrape with
// formats ["markdown"] and onlyMainContent false does.
func FullMarkdown(ctx context.Context, p *Page) (string, error) {
	e := scrape.New(scrape.Config{Fetcher: &pageFetcher{page: p}})
	doc, err := e.Scrape(ctx, scrape.Options{
		URL:             p.URL,
		Formats:         []scrape.Format{{Type: scrape.FormatMarkdown}},
		OnlyMainContent: false,
		Timeout:         time.Minute,
	})
	if err != nil || doc.Markdown == nil {
		return "", err
	}
	return *doc.Markdown, nil
}

// Bounds computes the Bound of every page.
func Bounds(ctx context.Context, pages []Page) ([]Bound, error) {
	out := make([]Bound, len(pages))
	for i := range pages {
		p := &pages[i]
		md, err := FullMarkdown(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("page %s: %w", p.ID, err)
		}
		out[i] = BoundOf(p, md)
	}
	return out, nil
}

// BoundOf computes p's Bound from its whole markdown md.
func BoundOf(p *Page, md string) Bound {
	b := Bound{Page: p, EmptyTruth: len(words(p.Text)) == 0}
	b.Reach = WordF1(PlainText(md), p.Text).R
	b.Oracle = oracleF1(blocks(md), p.Text)
	return b
}

// blocks splits md on blank lines (outside fenced code, which stays one
// block) and returns each block's words.
func blocks(md string) [][]string {
	var out [][]string
	var cur strings.Builder
	flush := func() {
		if w := words(PlainText(cur.String())); len(w) > 0 {
			out = append(out, w)
		}
		cur.Reset()
	}
	inFence := false
	for _, line := range strings.Split(md, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
		}
		if t == "" && !inFence {
			flush()
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	flush()
	return out
}

// oracleF1 chooses blocks knowing the reference: each block's precision is
// its overlap with the reference's word counts over its length; blocks are
// added from the most precise down, the overlap counted against what the
// chosen blocks have not yet used, and the best F1 of any prefix is the
// answer. An empty reference scores 1 (choosing nothing).
func oracleF1(bs [][]string, ref string) float64 {
	want := words(ref)
	if len(want) == 0 {
		return 1
	}
	counts := make(map[string]int, len(want))
	for _, t := range want {
		counts[t]++
	}
	type cand struct {
		ws   []string
		prec float64
	}
	cs := make([]cand, 0, len(bs))
	for _, ws := range bs {
		left := make(map[string]int, len(ws))
		hit := 0
		for _, t := range ws {
			if counts[t]-left[t] > 0 {
				left[t]++
				hit++
			}
		}
		cs = append(cs, cand{ws, float64(hit) / float64(len(ws))})
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].prec > cs[j].prec })
	best, got, overlap := 0.0, 0, 0
	for _, c := range cs {
		if c.prec == 0 {
			break
		}
		for _, t := range c.ws {
			got++
			if counts[t] > 0 {
				counts[t]--
				overlap++
			}
		}
		p := float64(overlap) / float64(got)
		r := float64(overlap) / float64(len(want))
		if p+r > 0 {
			best = max(best, 2*p*r/(p+r))
		}
	}
	return best
}

// WriteBounds prints, per type for the pages keep accepts, the mean word
// F1 of rs next to the mean Oracle and Reach of bs, the pages whose
// reference is empty, and the pages whose reference is mostly not in the
// page (Reach below one half).
func WriteBounds(w io.Writer, title string, rs []Result, bs []Bound, keep func(*Page) bool) {
	type agg struct {
		n, nNoBad, empty, unreached int
		f, oracle, reach            float64
		fNoBad, oracleNoBad         float64
	}
	m := map[string]*agg{}
	get := func(t string) *agg {
		if m[t] == nil {
			m[t] = &agg{}
		}
		return m[t]
	}
	for i, r := range rs {
		if !keep(r.Page) {
			continue
		}
		b := bs[i]
		for _, a := range []*agg{get("all"), get(r.Page.Type)} {
			a.n++
			a.f += r.Score.F
			a.oracle += b.Oracle
			a.reach += b.Reach
			bad := b.EmptyTruth || b.Reach < 0.5
			if b.EmptyTruth {
				a.empty++
			} else if b.Reach < 0.5 {
				a.unreached++
			}
			if !bad {
				a.nNoBad++
				a.fNoBad += r.Score.F
				a.oracleNoBad += b.Oracle
			}
		}
	}
	fmt.Fprintf(w, "\n%s\n\n", title)
	fmt.Fprintln(w, "| type | pages | word F1 | oracle F1 | reach (recall of the whole page) | empty truth | truth mostly not in the page | word F1 without those | oracle without those |")
	fmt.Fprintln(w, "| - | -: | -: | -: | -: | -: | -: | -: | -: |")
	for _, t := range append([]string{"all"}, Types...) {
		a := m[t]
		if a == nil {
			continue
		}
		n := float64(a.n)
		nb := float64(max(a.nNoBad, 1))
		fmt.Fprintf(w, "| %s | %d | %.3f | %.3f | %.3f | %d | %d | %.3f | %.3f |\n",
			t, a.n, a.f/n, a.oracle/n, a.reach/n, a.empty, a.unreached, a.fNoBad/nb, a.oracleNoBad/nb)
	}
}
