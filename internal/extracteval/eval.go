// Package extracteval measures main-content extraction on a labelled corpus
// of real pages: the corpus loader, the word-F1 and snippet metric of the
// corpus README, markdown-to-text, and per-type tables.
package extracteval

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/scrape"
)

// pageFetcher answers the scrape engine with the corpus page of the
// requested URL, as an HTTP 200 text/html response, without any network.
type pageFetcher struct{ page *Page }

func (f *pageFetcher) Do(_ context.Context, req fetch.Request) (*fetch.Response, error) {
	return &fetch.Response{
		RequestURL: req.URL, URL: req.URL, StatusCode: http.StatusOK,
		Header:      http.Header{"Content-Type": {"text/html"}},
		ContentType: "text/html", Body: f.page.HTML,
	}, nil
}

// Extractor returns the plain text a system extracts from a page.
type Extractor func(ctx context.Context, p *Page) (string, error)

// Firegate is the server's extractor: the markdown of Extract with its
// markup removed.
func Firegate(ctx context.Context, p *Page) (string, error) {
	md, err := Extract(ctx, p)
	return PlainText(md), err
}

// Extract runs p through the scrape engine exactly as POST /v2/scrape with
// formats ["markdown"] and onlyMainContent true does, and returns the
// markdown.
func Extract(ctx context.Context, p *Page) (string, error) {
	e := scrape.New(scrape.Config{Fetcher: &pageFetcher{page: p}})
	doc, err := e.Scrape(ctx, scrape.Options{
		URL:             p.URL,
		Formats:         []scrape.Format{{Type: scrape.FormatMarkdown}},
		OnlyMainContent: true,
		Timeout:         time.Minute,
	})
	if err != nil {
		return "", err
	}
	if doc.Markdown == nil {
		return "", nil
	}
	return *doc.Markdown, nil
}

// ExtractWithHTML is Extract that also returns the cleaned main-content
// HTML the markdown was converted from (the html format of the same
// scrape), so that another converter can be given the very same tree.
func ExtractWithHTML(ctx context.Context, p *Page) (md, cleaned string, err error) {
	e := scrape.New(scrape.Config{Fetcher: &pageFetcher{page: p}})
	doc, err := e.Scrape(ctx, scrape.Options{
		URL:             p.URL,
		Formats:         []scrape.Format{{Type: scrape.FormatMarkdown}, {Type: scrape.FormatHTML}},
		OnlyMainContent: true,
		Timeout:         time.Minute,
	})
	if err != nil {
		return "", "", err
	}
	if doc.Markdown != nil {
		md = *doc.Markdown
	}
	if doc.HTML != nil {
		cleaned = *doc.HTML
	}
	return md, cleaned, nil
}

// Result is the score of one page.
type Result struct {
	Page       *Page
	Score      Score
	WithFound  int
	WithoutHit int
	Elapsed    time.Duration
	Err        error
}

// Evaluate extracts and scores every page with ex.
func Evaluate(ctx context.Context, pages []Page, ex Extractor) []Result {
	out := make([]Result, len(pages))
	for i := range pages {
		p := &pages[i]
		start := time.Now()
		text, err := ex(ctx, p)
		r := Result{Page: p, Elapsed: time.Since(start), Err: err}
		r.Score = WordF1(text, p.Text)
		norm := normalize(text)
		r.WithFound = snippets(norm, p.With)
		r.WithoutHit = snippets(norm, p.Without)
		out[i] = r
	}
	return out
}

// Summary aggregates results: mean P, R and F1 over pages, and the shares
// of with snippets found and without snippets present over all snippets.
type Summary struct {
	Pages                 int
	P, R, F               float64
	With, WithFound       int
	Without, WithoutFound int
	Elapsed               time.Duration
	Errors                int
}

func (s *Summary) add(r Result) {
	s.Pages++
	s.P += r.Score.P
	s.R += r.Score.R
	s.F += r.Score.F
	s.With += len(r.Page.With)
	s.WithFound += r.WithFound
	s.Without += len(r.Page.Without)
	s.WithoutFound += r.WithoutHit
	s.Elapsed += r.Elapsed
	if r.Err != nil {
		s.Errors++
	}
}

// Mean returns the mean precision, recall and F1.
func (s Summary) Mean() Score {
	if s.Pages == 0 {
		return Score{}
	}
	n := float64(s.Pages)
	return Score{s.P / n, s.R / n, s.F / n}
}

// Pct is a as a percentage of b (0 when b is 0).
func Pct(a, b int) float64 { return pct(a, b) }

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// Types is the report order of page types.
var Types = []string{"article", "documentation", "service", "forum", "collection", "listing", "product"}

// Summarize groups results by type ("all" for every page) for the pages
// keep accepts.
func Summarize(rs []Result, keep func(*Page) bool) map[string]*Summary {
	m := map[string]*Summary{"all": {}}
	for _, r := range rs {
		if !keep(r.Page) {
			continue
		}
		m["all"].add(r)
		s := m[r.Page.Type]
		if s == nil {
			s = &Summary{}
			m[r.Page.Type] = s
		}
		s.add(r)
	}
	return m
}

// WriteTable prints a markdown table of m, one row per type.
func WriteTable(w io.Writer, title string, m map[string]*Summary) {
	fmt.Fprintf(w, "\n%s\n\n", title)
	fmt.Fprintln(w, "| type | pages | P | R | word F1 | with found | without present | ms/page |")
	fmt.Fprintln(w, "| - | -: | -: | -: | -: | -: | -: | -: |")
	for _, t := range append([]string{"all"}, Types...) {
		s := m[t]
		if s == nil {
			continue
		}
		mean := s.Mean()
		ms := float64(s.Elapsed.Microseconds()) / 1000 / float64(max(s.Pages, 1))
		fmt.Fprintf(w, "| %s | %d | %.3f | %.3f | **%.3f** | %.1f%% | %.1f%% | %.1f |\n",
			t, s.Pages, mean.P, mean.R, mean.F, pct(s.WithFound, s.With), pct(s.WithoutFound, s.Without), ms)
	}
}

// WriteWorst prints the n lowest-F1 pages that keep accepts.
func WriteWorst(w io.Writer, rs []Result, n int, keep func(*Page) bool) {
	var sel []Result
	for _, r := range rs {
		if keep(r.Page) {
			sel = append(sel, r)
		}
	}
	sort.SliceStable(sel, func(i, j int) bool { return sel[i].Score.F < sel[j].Score.F })
	if n > len(sel) {
		n = len(sel)
	}
	fmt.Fprintf(w, "\nworst %d pages\n\n", n)
	for _, r := range sel[:n] {
		msg := ""
		if r.Err != nil {
			msg = " error: " + strings.ReplaceAll(r.Err.Error(), "\n", " ")
		}
		fmt.Fprintf(w, "%s %-13s F1=%.3f P=%.3f R=%.3f %s%s\n", r.Page.ID, r.Page.Type, r.Score.F, r.Score.P, r.Score.R, r.Page.URL, msg)
	}
}

// System is one extractor's results, for side-by-side tables.
type System struct {
	Name    string
	Results []Result
}

// WriteComparison prints, for the pages keep accepts, one row per system:
// word F1 overall and per type, then with found and without present.
func WriteComparison(w io.Writer, title string, systems []System, keep func(*Page) bool) {
	fmt.Fprintf(w, "\n%s\n\n| system | all |", title)
	for _, t := range Types {
		fmt.Fprintf(w, " %s |", t)
	}
	fmt.Fprintln(w, " with found | without present | ms/page |")
	fmt.Fprint(w, "| - |")
	for range len(Types) + 4 {
		fmt.Fprint(w, " -: |")
	}
	fmt.Fprintln(w)
	for _, sys := range systems {
		m := Summarize(sys.Results, keep)
		all := m["all"]
		fmt.Fprintf(w, "| %s | %.3f |", sys.Name, all.Mean().F)
		for _, t := range Types {
			if s := m[t]; s != nil {
				fmt.Fprintf(w, " %.3f |", s.Mean().F)
			} else {
				fmt.Fprint(w, " - |")
			}
		}
		ms := float64(all.Elapsed.Microseconds()) / 1000 / float64(max(all.Pages, 1))
		fmt.Fprintf(w, " %.1f%% | %.1f%% | %.1f |\n", pct(all.WithFound, all.With), pct(all.WithoutFound, all.Without), ms)
	}
}

// Column is a column of WriteCorpora: a corpus, or the part of one Keep
// accepts.
type Column struct {
	Name string
	Keep func(*Page) bool
}

// Row is a system's results in WriteCorpora, one slice per column.
type Row struct {
	Name    string
	Results [][]Result
}

// WriteCorpora prints one row per system and one column per corpus: mean
// word F1, precision and recall of the pages each column keeps.
func WriteCorpora(w io.Writer, title string, cols []Column, rows []Row) {
	fmt.Fprintf(w, "\n%s\n\n| system |", title)
	for _, c := range cols {
		fmt.Fprintf(w, " %s |", c.Name)
	}
	fmt.Fprint(w, "\n| - |")
	for range cols {
		fmt.Fprint(w, " -: |")
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |", r.Name)
		for i, c := range cols {
			if i >= len(r.Results) {
				fmt.Fprint(w, " - |")
				continue
			}
			s := Summarize(r.Results[i], c.Keep)["all"]
			m := s.Mean()
			fmt.Fprintf(w, " **%.3f** (%.3f / %.3f) |", m.F, m.P, m.R)
		}
		fmt.Fprintln(w)
	}
}
