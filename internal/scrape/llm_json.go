package scrape

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/llm"
)

// extractJSON fills doc.JSON from the page: the caller's schema and prompt
// as the task, the page as data. A page longer than the model's context is
// cut on markdown section boundaries, each part extracted and the results
// merged (arrays concatenated without duplicates, other values from the
// first part that has them). A result that cannot be made valid leaves
// json null with a warning.
func (e *Engine) extractJSON(ctx context.Context, f Format, schema *llm.Schema, md string, doc *Document) error {
	var sys strings.Builder
	sys.WriteString("Extract structured data from the web page as JSON.")
	if schema == nil {
		sys.WriteString(" Choose a JSON object whose keys describe the data asked for.")
	} else {
		sys.WriteString(" Fill the fields of the given JSON schema with values found in the page; use null (or leave optional fields out) " +
			"for what the page does not contain, never invent values.")
	}
	if f.Prompt != "" {
		sys.WriteString("\n\nWhat to extract (from the API caller): " + f.Prompt)
	}
	sys.WriteString("\n\n" + dataRule)
	out, err := e.extractWith(ctx, "json", sys.String(), schema, md, doc)
	if err != nil {
		return err
	}
	if out == nil {
		out = json.RawMessage("null")
		addWarning(doc, "The language model could not produce JSON matching the schema (after a retry); json is null.")
	}
	doc.JSON = &out
	return nil
}

// extractWith runs one extraction over the page, in parts when it is too
// long, and returns the merged result, or nil when no valid result could
// be made. Endpoint failures are errors.
func (e *Engine) extractWith(ctx context.Context, purpose, instructions string, schema *llm.Schema, md string, doc *Document) (json.RawMessage, error) {
	var schemaText string
	if schema != nil {
		schemaText = string(schema.Raw())
	}
	budget := e.pageBudget(instructions + schemaText)
	for range 6 {
		chunks := chunkMarkdown(md, budget)
		results := make([]json.RawMessage, 0, len(chunks))
		invalid := 0
		overflow := false
		for _, c := range chunks {
			resp, err := e.llm.CompleteJSON(ctx, llm.JSONRequest{Schema: schema, SchemaName: "extraction",
				Request: llm.Request{Purpose: purpose, Messages: []llm.Message{
					{Role: "system", Content: instructions},
					{Role: "user", Content: pageData(c)},
				}}})
			if resp != nil {
				doc.TokensUsed += resp.Usage.TotalTokens
			}
			switch {
			case err == nil:
				results = append(results, resp.JSON)
				continue
			case errors.Is(err, llm.ErrInvalidOutput):
				invalid++
				continue
			case errors.Is(err, llm.ErrRejected) && isContextOverflow(err) && budget > 512:
				overflow = true
			default:
				return nil, llmError(err, purpose+" extraction")
			}
			break
		}
		if overflow {
			// The endpoint's context is smaller than configured: halve the
			// largest part sent.
			largest := 0
			for _, c := range chunks {
				largest = max(largest, len(c))
			}
			budget = min(budget, largest) / 2
			continue
		}
		if len(chunks) > 1 {
			addWarning(doc, fmt.Sprintf("The page was longer than the language model's context: it was extracted in %d parts and the results merged.", len(chunks)))
		}
		out, ok := mergeResults(results, schema)
		if !ok || invalid == len(chunks) {
			return nil, nil
		}
		return out, nil
	}
	return nil, &errcode.Failure{Kind: ErrLLMUnavailable, Msg: "The language model endpoint refuses the page even in small parts (context length exceeded); lower LLM_CONTEXT_TOKENS.",
		Cause: llm.ErrRejected}
}

// isContextOverflow reports whether a rejection says the prompt was too
// long for the model.
func isContextOverflow(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "context") && (strings.Contains(s, "length") || strings.Contains(s, "too long") ||
		strings.Contains(s, "exceed") || strings.Contains(s, "maximum"))
}

// mergeResults merges per-part results and validates the merge.
func mergeResults(results []json.RawMessage, schema *llm.Schema) (json.RawMessage, bool) {
	switch len(results) {
	case 0:
		return nil, false
	case 1:
		return results[0], true
	}
	var merged any
	for _, r := range results {
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			continue
		}
		merged = mergeValue(merged, v)
	}
	b, err := json.Marshal(merged)
	if err != nil {
		return nil, false
	}
	if schema != nil && schema.Validate(b) != nil {
		return nil, false
	}
	return b, true
}

// mergeValue merges b into a: objects key by key, arrays concatenated
// without duplicates, anything else kept from a unless a is empty.
func mergeValue(a, b any) any {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return a
		}
		for k, x := range bv {
			av[k] = mergeValue(av[k], x)
		}
		return av
	case []any:
		bv, ok := b.([]any)
		if !ok {
			return a
		}
		seen := make(map[string]bool, len(av)+len(bv))
		out := make([]any, 0, len(av)+len(bv))
		for _, x := range append(av, bv...) {
			// Cannot fail: x was decoded from JSON (maps, slices, strings,
			// json.Numbers, bools, nil), and such values always encode.
			k, _ := json.Marshal(x)
			if !seen[string(k)] {
				seen[string(k)] = true
				out = append(out, x)
			}
		}
		return out
	}
	if isEmptyValue(a) {
		return b
	}
	return a
}

func isEmptyValue(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	}
	return false
}

// chunkMarkdown cuts md into parts of at most budget bytes: on section
// boundaries (heading lines outside code fences) where it can, else on
// blank lines, else on line ends, else anywhere between runes.
func chunkMarkdown(md string, budget int) []string {
	if len(md) <= budget {
		return []string{md}
	}
	var parts []string
	for _, sec := range splitSections(md) {
		if len(sec) <= budget {
			parts = append(parts, sec)
			continue
		}
		for _, para := range splitKeep(sec, "\n\n") {
			if len(para) <= budget {
				parts = append(parts, para)
				continue
			}
			for _, line := range splitKeep(para, "\n") {
				for len(line) > budget {
					cut := budget
					for cut > 0 && !utf8.RuneStart(line[cut]) {
						cut--
					}
					parts = append(parts, line[:cut])
					line = line[cut:]
				}
				parts = append(parts, line)
			}
		}
	}
	// Pack the pieces greedily into chunks.
	var chunks []string
	var cur strings.Builder
	for _, p := range parts {
		if cur.Len() > 0 && cur.Len()+len(p) > budget {
			chunks = append(chunks, cur.String())
			cur.Reset()
		}
		cur.WriteString(p)
	}
	if cur.Len() > 0 || len(chunks) == 0 {
		chunks = append(chunks, cur.String())
	}
	return chunks
}

// splitSections cuts md before every heading line that is not inside a
// fenced code block; the pieces concatenate back to md.
func splitSections(md string) []string {
	var secs []string
	start, inFence := 0, false
	for i := 0; i < len(md); {
		end := strings.IndexByte(md[i:], '\n')
		if end < 0 {
			end = len(md)
		} else {
			end += i + 1
		}
		line := md[i:end]
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			inFence = !inFence
		case !inFence && strings.HasPrefix(trimmed, "#") && i > start:
			secs = append(secs, md[start:i])
			start = i
		}
		i = end
	}
	return append(secs, md[start:])
}

// splitKeep splits s after each sep, keeping sep on the pieces.
func splitKeep(s, sep string) []string {
	var out []string
	for {
		i := strings.Index(s, sep)
		if i < 0 {
			break
		}
		out = append(out, s[:i+len(sep)])
		s = s[i+len(sep):]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

const cleanTask = "Remove leftover boilerplate from the markdown of a web page: cookie banners, ad blocks, share widgets, " +
	"breadcrumbs, newsletter sign-ups, comment sections, related-article lists. Keep everything else exactly as it is, " +
	"byte for byte: headings, paragraphs, lists, tables, code blocks, image references and links. Do not rewrite, " +
	"reorder, summarize or add anything. Answer with the cleaned markdown only."

// cleanContent runs the onlyCleanContent pass and returns the markdown to
// use. The result must only drop lines: a line that is not in the input
// means the model rewrote the page, and the original is kept with a
// warning, as it is when the page is too long for the model to write back.
func (e *Engine) cleanContent(ctx context.Context, md string, doc *Document) string {
	if strings.TrimSpace(md) == "" {
		return md
	}
	if llm.EstimateTokens(md)*2+llm.EstimateTokens(cleanTask)+256 > int64(e.llmContext) {
		addWarning(doc, "onlyCleanContent was skipped: the markdown exceeds the cleaning model's output token limit; the original markdown is returned.")
		return md
	}
	resp, err := e.llm.Complete(ctx, llm.Request{Purpose: "clean", Messages: []llm.Message{
		{Role: "system", Content: cleanTask + "\n\n" + dataRule},
		{Role: "user", Content: pageData(md)},
	}})
	if resp != nil {
		doc.TokensUsed += resp.Usage.TotalTokens
	}
	if err != nil {
		addWarning(doc, "onlyCleanContent failed (the language model did not answer); the original markdown is returned.")
		return md
	}
	out := unfence(resp.Content)
	if !onlyDropsLines(md, out) {
		addWarning(doc, "onlyCleanContent was rejected: the model changed the content instead of only removing boilerplate; the original markdown is returned.")
		return md
	}
	return out
}

// unfence removes a code fence the model may have put around its answer.
func unfence(s string) string {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "```") && strings.HasSuffix(t, "```") && len(t) >= 6 {
		if nl := strings.IndexByte(t, '\n'); nl > 0 {
			return strings.TrimSpace(t[nl+1 : len(t)-3])
		}
	}
	return t
}

// onlyDropsLines reports whether every non-blank line of out is a line of
// in (trailing spaces ignored) and out keeps something.
func onlyDropsLines(in, out string) bool {
	if strings.TrimSpace(out) == "" {
		return false
	}
	have := make(map[string]bool)
	for _, l := range strings.Split(in, "\n") {
		have[strings.TrimRight(l, " \t\r")] = true
	}
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimRight(l, " \t\r")
		if l != "" && !have[l] {
			return false
		}
	}
	return true
}

// CheckSchema reports whether raw is a JSON schema the json format can
// use; the error (wrapping ErrInvalidSchema) says what is wrong.
func CheckSchema(raw json.RawMessage) error {
	if _, err := llm.CompileSchema(raw); err != nil {
		return &errcode.Failure{Kind: ErrInvalidSchema, Cause: err,
			Msg: "Invalid JSON schema: " + strings.TrimPrefix(err.Error(), llm.ErrBadSchema.Error()+": ")}
	}
	return nil
}

// MergeJSON merges the json results of several pages as the parts of one
// long page are merged (arrays concatenated without duplicates, other
// values from the first result that has them) and validates the merge
// against schema when one is given. ok is false when nothing valid is left.
func MergeJSON(results []json.RawMessage, schema json.RawMessage) (merged json.RawMessage, ok bool) {
	var s *llm.Schema
	if hasSchema(schema) {
		var err error
		if s, err = llm.CompileSchema(schema); err != nil {
			return nil, false
		}
	}
	kept := results[:0:0]
	for _, r := range results {
		if len(r) > 0 && string(r) != "null" {
			kept = append(kept, r)
		}
	}
	if len(kept) == 1 && s != nil && s.Validate(kept[0]) != nil {
		return nil, false
	}
	return mergeResults(kept, s)
}
