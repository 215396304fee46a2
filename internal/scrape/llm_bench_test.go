package scrape

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/firegate/firegate/internal/llm/llmtest"
)

// BenchmarkChunkMarkdown cuts a 1 MiB page of 2 KB sections into parts of
// a 32k-token context.
func BenchmarkChunkMarkdown(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, "## Section %d\n\n%s\n\n", i, strings.Repeat("word ", 400))
	}
	md := sb.String()
	budget := (32768*3/4 - 500) * 4
	b.SetBytes(int64(len(md)))
	b.ReportAllocs()
	for b.Loop() {
		if len(chunkMarkdown(md, budget)) < 2 {
			b.Fatal("not cut")
		}
	}
}

// BenchmarkMergeJSON merges the results of 10 parts, each with 50 array
// items and a few scalars, and validates the merge.
func BenchmarkMergeJSON(b *testing.B) {
	var results []json.RawMessage
	for p := range 10 {
		items := make([]string, 50)
		for i := range items {
			items[i] = fmt.Sprintf("item-%d", p*40+i) // overlapping parts
		}
		r, _ := json.Marshal(map[string]any{"title": "Catalogue", "items": items})
		results = append(results, r)
	}
	schema := json.RawMessage(itemsSchema)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := MergeJSON(results, schema); !ok {
			b.Fatal("merge failed")
		}
	}
}

// BenchmarkJSONScrape is one scrape with a json format end to end (fetch,
// markdown, the client's request and validation) against a scripted
// endpoint on loopback that answers at once: the pipeline's own cost per
// request, without the model's.
func BenchmarkJSONScrape(b *testing.B) {
	s := newSite(b)
	ep := llmtest.NewReplying(b, func(w http.ResponseWriter, r llmtest.Request) {
		llmtest.Write(w, `{"title":"Tide Tables","mentions":["moon","sun"]}`, &llmtest.Usage{PromptTokens: 300, CompletionTokens: 20})
	})
	e := newLLMEngine(b, ep, 0)
	o := defaults(s.URL + "/article")
	o.Formats = []Format{jsonFormat(tideSchema, "what pulls the sea")}
	b.ReportAllocs()
	for b.Loop() {
		doc, err := e.Scrape(context.Background(), o)
		if err != nil || doc.JSON == nil {
			b.Fatal(err)
		}
	}
}
