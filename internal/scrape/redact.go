package scrape

import (
	"slices"

	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/pii"
)

// msgPIIModelEntities is the warning for entities found only by a model.
const msgPIIModelEntities = "redactPII: names of people and places (PERSON, LOCATION) are not redacted, as that needs a language model; " +
	"e-mail addresses, phone numbers, card numbers, IBANs, SSNs, IP addresses and secrets are."

// redactDocument applies redactPII to the document's markdown, html,
// rawHtml and PDF pages and blocks (the language model formats then read
// the redacted markdown; block markdownSpans, which point into the text
// before redaction, are dropped when it changed),
// and adds the redaction surcharge to its credits.
func redactDocument(o *RedactPII, doc *Document) {
	opts := pii.Options{Entities: o.Entities, Style: o.ReplaceStyle, Aggressive: o.Mode == "aggressive"}
	changed := false
	if doc.Markdown != nil {
		s, n := pii.Redact(*doc.Markdown, opts)
		doc.Markdown, changed = &s, n > 0
	}
	for i := range doc.Pages {
		doc.Pages[i].Markdown, _ = pii.Redact(doc.Pages[i].Markdown, opts)
	}
	for i := range doc.Blocks {
		for j := range doc.Blocks[i].Items {
			it := &doc.Blocks[i].Items[j]
			it.Content, _ = pii.Redact(it.Content, opts)
			if changed {
				// Spans point into the markdown before redaction.
				it.MarkdownSpan = nil
			}
		}
	}
	htmlOpts := opts
	htmlOpts.HTML = true
	for _, p := range []**string{&doc.HTML, &doc.RawHTML} {
		if *p != nil {
			s, _ := pii.Redact(**p, htmlOpts)
			*p = &s
		}
	}
	if len(o.Entities) == 0 || slices.Contains(o.Entities, pii.Person) || slices.Contains(o.Entities, pii.Location) {
		addWarning(doc, msgPIIModelEntities)
	}
	pages := 0
	if doc.Metadata.NumPages != nil {
		pages = *doc.Metadata.NumPages
	}
	doc.Metadata.CreditsUsed += int(billing.ScrapeCost(billing.ScrapeCostInput{RedactPII: true, PDFPages: pages}) -
		billing.ScrapeCost(billing.ScrapeCostInput{PDFPages: pages}))
}
