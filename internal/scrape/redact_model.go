package scrape

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/firegate/firegate/internal/llm"
	"github.com/firegate/firegate/internal/pii"
)

// piiModelSchema is what the model answers for redactPII: the names of
// people and the places it found, as written in the page.
var piiModelSchema = func() *llm.Schema {
	s, err := llm.CompileSchema(json.RawMessage(`{"type":"object","properties":{` +
		`"persons":{"type":"array","items":{"type":"string"}},` +
		`"locations":{"type":"array","items":{"type":"string"}}},"required":["persons","locations"]}`))
	if err != nil {
		panic(err) // a constant schema
	}
	return s
}()

const piiModelTask = "Find personal data in the web page for redaction. List in \"persons\" every name of a real person " +
	"(full names, first or last names used alone, usernames that are a person's name) and in \"locations\" every place that could " +
	"locate a person (street addresses, postal codes with their town, towns and cities, regions, countries). Copy each exactly as it " +
	"is written in the page, once; leave out organisations, brands, products and anything that is not in the page. " +
	"Answer with empty lists when there is none."

// modelRedacts reports whether redactPII asks the model for PERSON or
// LOCATION and can have it: a model is configured and the mode is not
// fast.
func (e *Engine) modelRedacts(o *Options) bool {
	r := o.RedactPII
	if e.llm == nil || r == nil || r.Mode == "fast" {
		return false
	}
	return len(r.Entities) == 0 || slices.Contains(r.Entities, pii.Person) || slices.Contains(r.Entities, pii.Location)
}

// redactByModel has the model find names of people and places in the
// (already deterministically redacted) markdown and redacts each where it
// occurs in the markdown, html, rawHtml and PDF pages and blocks. Only
// strings that occur in the markdown are used, so the model cannot make
// the server redact words the page does not have. The missing-model
// warning is dropped once the model answered. Endpoint failures fail the
// scrape: the page is not returned with names it was asked to hide.
func (e *Engine) redactByModel(ctx context.Context, o *Options, doc *Document) error {
	if !e.modelRedacts(o) || doc.Markdown == nil {
		return nil
	}
	md := *doc.Markdown
	out, err := e.extractWith(ctx, "redactPII", piiModelTask+"\n\n"+dataRule, piiModelSchema, md, doc)
	if err != nil {
		return err
	}
	if out == nil {
		addWarning(doc, "redactPII: the language model gave no valid answer; names of people and places were not redacted.")
		return nil
	}
	var found struct {
		Persons   []string `json:"persons"`
		Locations []string `json:"locations"`
	}
	if err := json.Unmarshal(out, &found); err != nil {
		addWarning(doc, "redactPII: the language model gave no valid answer; names of people and places were not redacted.")
		return nil
	}
	want := func(e string) bool {
		return len(o.RedactPII.Entities) == 0 || slices.Contains(o.RedactPII.Entities, e)
	}
	var lits []pii.Literal
	add := func(list []string, entity string) {
		if !want(entity) {
			return
		}
		for _, s := range list {
			if s = strings.TrimSpace(s); s != "" && strings.Contains(md, s) {
				lits = append(lits, pii.Literal{Text: s, Entity: entity})
			}
		}
	}
	add(found.Persons, pii.Person)
	add(found.Locations, pii.Location)
	opts := pii.Options{Style: o.RedactPII.ReplaceStyle}
	s, n := pii.RedactLiterals(md, lits, opts)
	doc.Markdown = &s
	for i := range doc.Pages {
		doc.Pages[i].Markdown, _ = pii.RedactLiterals(doc.Pages[i].Markdown, lits, opts)
	}
	for i := range doc.Blocks {
		for j := range doc.Blocks[i].Items {
			it := &doc.Blocks[i].Items[j]
			it.Content, _ = pii.RedactLiterals(it.Content, lits, opts)
			if n > 0 {
				it.MarkdownSpan = nil
			}
		}
	}
	htmlOpts := opts
	htmlOpts.HTML = true
	for _, p := range []**string{&doc.HTML, &doc.RawHTML} {
		if *p != nil {
			h, _ := pii.RedactLiterals(**p, lits, htmlOpts)
			*p = &h
		}
	}
	removeWarning(doc, msgPIIModelEntities)
	return nil
}

// removeWarning takes w out of the document's warnings.
func removeWarning(doc *Document, w string) {
	if doc.Warning == nil {
		return
	}
	s := strings.TrimSpace(strings.ReplaceAll(strings.Replace(*doc.Warning, w, "", 1), "  ", " "))
	if s == "" {
		doc.Warning = nil
		return
	}
	doc.Warning = &s
}
