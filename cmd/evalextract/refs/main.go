// Command refs scores the server's main-content extraction and two
// reference libraries, go-trafilatura and readeck's go-readability, side by
// side on a labelled corpus (see cmd/evalextract). It is a module of its own
// so that the libraries never enter the server's dependencies:
//
//	cd cmd/evalextract/refs && go run . -corpus ../../../../shared/corpus/wcxb-dev
//
// It builds against the server's code in this checkout (a replace
// directive); when the root go.mod gains a dependency, run go mod tidy here.
//
// Every system gets the same page, decoded to UTF-8 by the server's charset
// rules, and its plain text is scored by the same metric.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"

	readability "codeberg.org/readeck/go-readability"
	trafilatura "github.com/markusmobius/go-trafilatura"

	"github.com/firegate/firegate/internal/extracteval"
)

func main() {
	corpus := flag.String("corpus", "../../../../shared/corpus/wcxb-dev", "corpus directory")
	only := flag.String("type", "", "evaluate only pages of this type")
	flag.Parse()
	if err := run(*corpus, *only); err != nil {
		fmt.Fprintln(os.Stderr, "refs:", err)
		os.Exit(1)
	}
}

func run(dir, only string) error {
	pages, err := extracteval.LoadCorpus(dir)
	if err != nil {
		return err
	}
	pages = extracteval.OfType(pages, only)
	ctx := context.Background()
	systems := []extracteval.System{
		{Name: "firegate (onlyMainContent markdown)", Results: extracteval.Evaluate(ctx, pages, extracteval.Firegate)},
		{Name: "go-trafilatura v1.12.2 (fallback on)", Results: extracteval.Evaluate(ctx, pages, trafilaturaText)},
		{Name: "go-readability (readeck)", Results: extracteval.Evaluate(ctx, pages, readabilityText)},
	}
	w := os.Stdout
	extracteval.WriteComparison(w, "dev (4/5 of the domains), word F1", systems, extracteval.Dev)
	extracteval.WriteComparison(w, "held-out (1/5 of the domains), word F1", systems, extracteval.Held)
	extracteval.WriteComparison(w, "all pages, word F1", systems, extracteval.All)
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
