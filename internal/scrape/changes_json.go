package scrape

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/changetrack"
	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/llm"
)

// KeyChange is one key of changeTracking's json mode: its value in the
// previous scrape and now.
type KeyChange = changetrack.KeyChange

// changeJSONPlan is the json mode of a request's changeTracking format,
// prepared before anything is fetched (the schema compiled, so a bad one
// fails fast as the json format's does).
type changeJSONPlan struct {
	format Format
	schema *llm.Schema // nil: no schema, the model chooses the keys
}

// planChangeJSON returns the json-mode plan of o's changeTracking format,
// or nil when it asks for no json mode.
func planChangeJSON(o *Options) (*changeJSONPlan, error) {
	f, ok := o.FormatOf(FormatChangeTracking)
	if !ok || !slices.Contains(f.Modes, ModeJSON) {
		return nil, nil
	}
	p := &changeJSONPlan{format: f}
	if hasSchema(f.Schema) {
		s, err := llm.CompileSchema(f.Schema)
		if err != nil {
			return nil, &errcode.Failure{Kind: ErrInvalidSchema, Cause: err,
				Msg: "Invalid JSON schema in formats.changeTracking.schema: " + strings.TrimPrefix(err.Error(), llm.ErrBadSchema.Error()+": ")}
		}
		p.schema = s
	}
	return p, nil
}

// extractChangeJSON extracts the current object of the json mode from the
// document's markdown (after redactPII) through the json format's path,
// within the request's deadline. nil with a warning when the model gave
// no valid object.
func (e *Engine) extractChangeJSON(ctx context.Context, p *changeJSONPlan, doc *Document) (json.RawMessage, error) {
	md := ""
	if doc.Markdown != nil {
		md = *doc.Markdown
	}
	var sys strings.Builder
	sys.WriteString("Extract structured data from the web page as a JSON object; it is compared with the same extraction of an earlier version of the page, so extract the same things the same way.")
	if p.schema == nil {
		sys.WriteString(" Choose a JSON object whose keys describe the page's main facts (titles, prices, dates, counts, statuses).")
	} else {
		sys.WriteString(" Fill the fields of the given JSON schema with values found in the page; use null (or leave optional fields out) " +
			"for what the page does not contain, never invent values.")
	}
	if p.format.Prompt != "" {
		sys.WriteString("\n\nWhat to extract (from the API caller): " + p.format.Prompt)
	}
	sys.WriteString("\n\n" + dataRule)
	out, err := e.extractWith(ctx, "changeTracking", sys.String(), p.schema, md, doc)
	if err != nil {
		return nil, err
	}
	if out == nil {
		addWarning(doc, "The language model could not produce JSON for changeTracking's json mode (after a retry); changeTracking.json is null and the previous extraction is kept.")
		return nil, nil
	}
	return out, nil
}

// compareJSON returns the json mode's comparison: for each key (the
// schema's top-level properties, else every top-level key of either
// object) whose value differs, its previous and current value; null when
// the current object is unknown.
func compareJSON(schema json.RawMessage, prev, cur json.RawMessage) map[string]KeyChange {
	if cur == nil {
		return nil
	}
	return changetrack.CompareKeys(prev, cur, schemaKeys(schema))
}

// schemaKeys returns the top-level property names of a schema, in the
// schema's order, or nil when it names none.
func schemaKeys(schema json.RawMessage) []string {
	if !hasSchema(schema) {
		return nil
	}
	var s struct {
		Properties json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Properties) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(s.Properties))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		k, _ := t.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil
		}
	}
	return keys
}

// changeJSONCredits is the json mode's surcharge: the json price (5 in
// all) unless a json format already pays it.
func changeJSONCredits(o *Options) int {
	if o.HasFormat(FormatJSON) {
		return 0
	}
	return billing.CostJSON - billing.CostBase
}

// changeJSONDeadline bounds the json mode's extraction: what is left of
// the request's timeout, counted from start.
func changeJSONDeadline(ctx context.Context, o *Options, start time.Time) (context.Context, context.CancelFunc) {
	return context.WithDeadline(ctx, start.Add(o.Timeout))
}
