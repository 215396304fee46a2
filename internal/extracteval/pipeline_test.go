package extracteval

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/scrape"
)

// BenchmarkPipelineSample runs the plain scrape pipeline (decode, parse,
// metadata, main content, markdown, the response's JSON) on every page of
// the checked-in sample, as POST /v2/scrape with formats ["markdown"] does
// without the network. One op is the whole sample.
//
// .ci/pipeline-cost counts the instructions of one op under callgrind and
// fails when they grow more than 10% over the committed budget.
func BenchmarkPipelineSample(b *testing.B) {
	pages, err := LoadCorpus("testdata/wcxb-sample")
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for i := range pages {
		size += int64(len(pages[i].HTML))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := pipelineOnce(pages); err != nil {
			b.Fatal(err)
		}
	}
}

// pipelineOnce is the measured unit of BenchmarkPipelineSample; it is not
// inlined so that callgrind can count its instructions alone
// (--toggle-collect).
//
//go:noinline
func pipelineOnce(pages []Page) error {
	ctx := context.Background()
	for i := range pages {
		e := scrape.New(scrape.Config{Fetcher: &pageFetcher{page: &pages[i]}})
		doc, err := e.Scrape(ctx, scrape.Options{
			URL:             pages[i].URL,
			Formats:         []scrape.Format{{Type: scrape.FormatMarkdown}},
			OnlyMainContent: true,
			Timeout:         time.Minute,
		})
		if err != nil {
			return err
		}
		if _, err := json.Marshal(doc); err != nil {
			return err
		}
	}
	return nil
}
