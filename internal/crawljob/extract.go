package crawljob

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/webhook"
)

// An extract (POST /v2/extract) is a batch whose pages share one json
// format; JobOptions.Extract marks it. It differs from a batch scrape in
// three ways: each page is billed by the language-model tokens it took
// (billing.ExtractCost) and the stored document records them, its webhook
// sends extract.started, extract.completed (with the merged result) and
// extract.failed but no page events, and it fails when no page could be
// scraped at all.

// ExtractOptions are what an extract keeps beyond its batch options.
type ExtractOptions struct {
	// ShowSources lists, per top-level key of the result, the pages that
	// gave it a value.
	ShowSources bool `json:"showSources,omitempty"`
	// SearchCredits is what the web search of enableWebSearch cost (charged
	// when it ran); the extract's creditsUsed includes it.
	SearchCredits int64 `json:"searchCredits,omitempty"`
}

// extractDocument is an extract page's stored document: the API document
// plus the tokens the model spent on it, which GET /v2/extract/{id} sums.
type extractDocument struct {
	*scrape.Document
	TokensUsed int64 `json:"tokensUsed"`
}

// extractCredits bills an extract page by its tokens (and its threat
// scan when threatProtection asks for one), and records the
// bill on the document as every page's document does.
func extractCredits(o *JobOptions, doc *scrape.Document) int64 {
	credits := billing.ExtractCost(doc.TokensUsed)
	if o.Scrape.ThreatProtection.Active() {
		credits += billing.CostThreatScan // the page's threat scan
	}
	doc.Metadata.CreditsUsed = int(credits)
	return credits
}

// jobDocument is the JSON stored for a scraped page of the job.
func jobDocument(o *JobOptions, doc *scrape.Document) ([]byte, error) {
	if o.Extract != nil {
		return json.Marshal(extractDocument{Document: doc, TokensUsed: doc.TokensUsed})
	}
	return json.Marshal(doc)
}

// ExtractResult is the answer of a finished extract.
type ExtractResult struct {
	// Data is the pages' json results merged (arrays concatenated without
	// duplicates, other values from the first page that has them) and
	// valid against the schema; the JSON null when nothing valid is left.
	Data json.RawMessage
	// Sources maps each top-level key of the results to the pages whose
	// result gave it a value.
	Sources map[string][]string
	// TokensUsed sums the tokens of the extract's pages.
	TokensUsed int64
	// Warning says why Data is null; "" when it is not.
	Warning string
}

// extractDocsPage is how many documents ExtractOutcome reads at a time.
const extractDocsPage = 100

// ExtractOutcome merges the documents of extract job j (whose options are
// o) into its result.
func ExtractOutcome(ctx context.Context, jobs store.JobStore, j store.Job, o JobOptions) (ExtractResult, error) {
	res := ExtractResult{Data: json.RawMessage("null"), Sources: map[string][]string{}}
	var results []json.RawMessage
	for skip := 0; skip < j.Documents; skip += extractDocsPage {
		docs, err := jobs.Documents(ctx, j.ID, skip, extractDocsPage)
		if err != nil {
			return res, fmt.Errorf("crawl: extract documents: %w", err)
		}
		if len(docs) == 0 {
			break
		}
		for _, d := range docs {
			var doc struct {
				JSON       json.RawMessage `json:"json"`
				TokensUsed int64           `json:"tokensUsed"`
				Metadata   struct {
					SourceURL string `json:"sourceURL"`
				} `json:"metadata"`
			}
			if json.Unmarshal(d, &doc) != nil {
				continue
			}
			res.TokensUsed += doc.TokensUsed
			if len(doc.JSON) == 0 || string(doc.JSON) == "null" {
				continue
			}
			results = append(results, doc.JSON)
			var fields map[string]json.RawMessage
			if json.Unmarshal(doc.JSON, &fields) == nil {
				for k, v := range fields {
					if s := string(v); s != "null" && s != `""` && s != "[]" && s != "{}" {
						res.Sources[k] = append(res.Sources[k], doc.Metadata.SourceURL)
					}
				}
			}
		}
	}
	var schema json.RawMessage
	if len(o.Scrape.Formats) > 0 {
		schema = o.Scrape.Formats[0].Schema
	}
	merged, ok := scrape.MergeJSON(results, schema)
	switch {
	case ok:
		res.Data = merged
	case len(results) == 0:
		res.Warning = "No page yielded data: every page failed or its extraction was invalid (see GET /v2/batch/scrape/" + j.ID + "/errors)."
	default:
		res.Warning = "The pages' results could not be merged into data matching the schema."
	}
	return res, nil
}

// extractFinished sends an extract's last event: completed with its
// result, or failed with the job's error.
func (r *Runner) extractFinished(ctx context.Context, j store.Job, c *cachedJob, status, msg string) {
	if status == store.JobFailed {
		r.notify(ctx, j.ID, &c.opts, webhook.KindExtract.Failed(j.ID, msg), true)
		return
	}
	if _, ok := r.envelope(ctx, j.ID, &c.opts, webhook.KindExtract.Completed(j.ID)); !ok {
		return // no webhook wants it: do not read the documents
	}
	res, err := ExtractOutcome(ctx, r.cfg.Jobs, j, c.opts)
	if err != nil {
		r.cfg.Log.ErrorContext(ctx, "extract result", "job_id", j.ID, "err", err)
		r.notify(ctx, j.ID, &c.opts, webhook.KindExtract.Failed(j.ID, "The extract's result could not be read."), true)
		return
	}
	r.notify(ctx, j.ID, &c.opts, webhook.KindExtract.CompletedWith(j.ID, res.Data), true)
}
