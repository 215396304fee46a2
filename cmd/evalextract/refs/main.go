// Command refs scores the server's main-content extraction and two
// reference libraries, go-trafilatura and readeck's go-readability, side by
// side on a labelled corpus (see cmd/evalextract). It is a module of its own
// so that the libraries never enter the server's dependencies:
//
//	cd cmd/evalextract/refs && go run . -corpus ../../../../shared/corpus/wcxb-dev
//
// The corpus is of either layout extracteval.Load reads (WCXB's or
// Readability's test pages). With -texts FILE it only writes each
// library's text of each page to FILE as JSON (system name -> page id ->
// text), for cmd/evalextract, which scores them beside the server's.
//
// It builds against the server's code in this checkout (a replace
// directive); when the root go.mod gains a dependency, run go mod tidy here.
//
// Every system gets the same page, decoded to UTF-8 by the server's charset
// rules, and its plain text is scored by the same metric.
//
// The markdown converter is compared on its own: JohannesKaufmann's
// html-to-markdown v2 (with its GFM table and strikethrough plugins)
// converts the very cleaned main-content HTML the server's converter
// converted, and both markdowns are scored for structure against
// main_content_markdown and for words against main_content.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	readability "codeberg.org/readeck/go-readability"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	trafilatura "github.com/markusmobius/go-trafilatura"

	"github.com/firegate/firegate/internal/extracteval"
)

func main() {
	corpus := flag.String("corpus", "../../../../shared/corpus/wcxb-dev", "corpus directory")
	only := flag.String("type", "", "evaluate only pages of this type")
	dump := flag.String("dump", "", "write html-to-markdown's markdown of each page to DIR/ID.md")
	texts := flag.String("texts", "", "only write each library's text of each page to FILE (JSON: system -> page id -> text)")
	flag.Parse()
	if *texts != "" {
		if err := writeTexts(*corpus, *texts); err != nil {
			fmt.Fprintln(os.Stderr, "refs:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*corpus, *only, *dump); err != nil {
		fmt.Fprintln(os.Stderr, "refs:", err)
		os.Exit(1)
	}
}

// Reference system names, as cmd/evalextract shows them.
const (
	trafilaturaName = "go-trafilatura v1.12.2 (fallback on)"
	readabilityName = "go-readability (readeck)"
)

func run(dir, only, dump string) error {
	pages, err := extracteval.Load(dir)
	if err != nil {
		return err
	}
	pages = extracteval.OfType(pages, only)
	ctx := context.Background()
	systems := []extracteval.System{
		{Name: "firegate (onlyMainContent markdown)", Results: extracteval.Evaluate(ctx, pages, extracteval.Firegate)},
		{Name: trafilaturaName, Results: extracteval.Evaluate(ctx, pages, trafilaturaText)},
		{Name: readabilityName, Results: extracteval.Evaluate(ctx, pages, readabilityText)},
	}
	w := os.Stdout
	extracteval.WriteComparison(w, "dev (4/5 of the domains), word F1", systems, extracteval.Dev)
	extracteval.WriteComparison(w, "held-out (1/5 of the domains), word F1", systems, extracteval.Held)
	extracteval.WriteComparison(w, "all pages, word F1", systems, extracteval.All)
	return compareConverters(ctx, pages, dump)
}

// writeTexts writes both libraries' text of every page of dir to path.
func writeTexts(dir, path string) error {
	pages, err := extracteval.Load(dir)
	if err != nil {
		return err
	}
	ctx := context.Background()
	out := map[string]map[string]string{}
	for name, ex := range map[string]extracteval.Extractor{trafilaturaName: trafilaturaText, readabilityName: readabilityText} {
		m := make(map[string]string, len(pages))
		for i := range pages {
			m[pages[i].ID], _ = ex(ctx, &pages[i])
		}
		out[name] = m
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// compareConverters converts each page's cleaned main content with the
// server's converter and with html-to-markdown v2, then scores both.
func compareConverters(ctx context.Context, pages []extracteval.Page, dump string) error {
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(), strikethrough.NewStrikethroughPlugin()))
	ours, lib := map[string]string{}, map[string]string{}
	var libTime time.Duration
	for i := range pages {
		p := &pages[i]
		md, cleaned, err := extracteval.ExtractWithHTML(ctx, p)
		if err != nil {
			continue
		}
		start := time.Now()
		out, err := conv.ConvertString(cleaned)
		libTime += time.Since(start)
		if err != nil {
			out = ""
		}
		ours[p.ID], lib[p.ID] = md, out
		if dump != "" {
			if err := os.WriteFile(filepath.Join(dump, p.ID+".md"), []byte(out), 0o644); err != nil {
				return err
			}
		}
	}
	text := func(m map[string]string) extracteval.Extractor {
		return func(_ context.Context, p *extracteval.Page) (string, error) {
			return extracteval.PlainText(m[p.ID]), nil
		}
	}
	w := os.Stdout
	systems := []extracteval.System{
		{Name: "firegate markdown", Results: extracteval.Evaluate(ctx, pages, text(ours))},
		{Name: "html-to-markdown v2 (same cleaned HTML)", Results: extracteval.Evaluate(ctx, pages, text(lib))},
	}
	extracteval.WriteComparison(w, "converters on the same cleaned HTML, all pages, word F1 (ms/page: scoring only)", systems, extracteval.All)
	structure := []extracteval.StructureSystem{{Name: "firegate", Markdown: ours}, {Name: "html-to-markdown v2", Markdown: lib}}
	extracteval.WriteStructure(w, "markdown structure, dev", pages, structure, extracteval.Dev)
	extracteval.WriteStructure(w, "markdown structure, held-out", pages, structure, extracteval.Held)
	extracteval.WriteStructure(w, "markdown structure, all pages", pages, structure, extracteval.All)
	fmt.Fprintf(w, "\nhtml-to-markdown v2 conversion: %.2f ms/page\n", float64(libTime.Microseconds())/1000/float64(max(len(pages), 1)))
	return nil
}

func pageURL(p *extracteval.Page) *url.URL {
	u, err := url.Parse(p.URL)
	if err != nil || u.Host == "" {
		u, _ = url.Parse("https://example.com/")
	}
	return u
}

// trafilaturaText is go-trafilatura's main text and, as Trafilatura does by
// default, the comments after it.
func trafilaturaText(_ context.Context, p *extracteval.Page) (string, error) {
	res, err := trafilatura.Extract(strings.NewReader(extracteval.DecodedHTML(p)), trafilatura.Options{
		OriginalURL:    pageURL(p),
		EnableFallback: true,
	})
	if err != nil || res == nil {
		return "", nil // an extraction failure scores as an empty text
	}
	return res.ContentText + "\n\n" + res.CommentsText, nil
}

func readabilityText(_ context.Context, p *extracteval.Page) (string, error) {
	a, err := readability.FromReader(strings.NewReader(extracteval.DecodedHTML(p)), pageURL(p))
	if err != nil {
		return "", nil
	}
	return a.TextContent, nil
}
