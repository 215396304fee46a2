package httpapi

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/firegate/firegate/internal/scrape"
)

// formatFields lists the members each format object may have besides type.
func formatFields(t string) ([]string, bool) {
	switch t {
	case scrape.FormatMarkdown, scrape.FormatHTML, scrape.FormatRawHTML, scrape.FormatRawBase64,
		scrape.FormatLinks, scrape.FormatImages, scrape.FormatSummary, scrape.FormatBranding,
		scrape.FormatProduct, scrape.FormatMenu, scrape.FormatAudio, scrape.FormatVideo:
		return nil, true
	case scrape.FormatJSON, scrape.FormatDeterministicJSON:
		return []string{"schema", "prompt", "checkPromptInjection"}, true
	case scrape.FormatChangeTracking:
		return []string{"modes", "schema", "prompt", "tag"}, true
	case scrape.FormatScreenshot:
		return []string{"fullPage", "quality", "viewport"}, true
	case scrape.FormatAttributes:
		return []string{"selectors"}, true
	case scrape.FormatQuestion:
		return []string{"question"}, true
	case scrape.FormatHighlights:
		return []string{"query"}, true
	case scrape.FormatQuery:
		return []string{"prompt", "mode"}, true
	}
	return nil, false
}

// formatTypes is the list of format type names, for messages.
const formatTypes = "'markdown' | 'html' | 'rawHtml' | 'rawBase64' | 'links' | 'images' | 'summary' | " +
	"'json' | 'deterministicJson' | 'changeTracking' | 'screenshot' | 'attributes' | 'question' | " +
	"'highlights' | 'query' | 'branding' | 'product' | 'menu' | 'audio' | 'video'"

// formatNames are the format types, for unknownFormat.
var formatNames = strings.Split(strings.NewReplacer("'", "", " ", "").Replace(formatTypes), "|")

// unknownFormat is the headline of a format type t that does not exist:
// the nearest name when one is close ("markdwon"), else the list.
func unknownFormat(path []any, t string) string {
	msg := fmt.Sprintf("%s: unknown format %q", fieldPath(path), t)
	if near := nearest(t, formatNames); near != "" {
		return msg + fmt.Sprintf("; did you mean %q?", near)
	}
	return msg + "; expected one of " + strings.Join(formatNames, ", ")
}

// formats reads the formats array and its cross-item rules.
func (v *validator) formats(path []any, raw json.RawMessage) ([]scrape.Format, bool) {
	items, ok := v.array(path, raw)
	if !ok {
		return nil, false
	}
	n := len(v.details)
	out := make([]scrape.Format, 0, len(items))
	for i, item := range items {
		if f, ok := v.format(at(path, i), item); ok {
			out = append(out, f)
		}
	}
	for i, f := range out {
		for _, g := range out[:i] {
			if g.Type == f.Type {
				if f.Type == scrape.FormatScreenshot {
					v.addCustom(at(path, i), codeCustom, msgOneScreenshot)
				} else {
					v.addCustom(at(path, i), codeCustom, msgDuplicateFormat)
				}
				break
			}
		}
	}
	has := func(t string) bool {
		return slices.ContainsFunc(out, func(f scrape.Format) bool { return f.Type == t })
	}
	if has(scrape.FormatRawBase64) && len(out) > 1 {
		v.addCustom(path, codeCustom, msgRawBase64Only)
	}
	if has(scrape.FormatChangeTracking) && !has(scrape.FormatMarkdown) {
		v.addCustom(path, codeCustom, msgChangeTrackingMD)
	}
	if has(scrape.FormatJSON) && has(scrape.FormatDeterministicJSON) {
		v.addCustom(path, codeCustom, msgJSONDeterministic)
	}
	return out, len(v.details) == n
}

// format reads one formats item: a type-name string or a format object.
func (v *validator) format(path []any, raw json.RawMessage) (scrape.Format, bool) {
	var m jsonObject
	var t string
	switch kindOf(raw) {
	case kindString:
		t, _ = v.str(path, raw)
		if _, ok := formatFields(t); !ok {
			v.addHeadlined(path, codeInvalidEnum, "Invalid format. Expected "+formatTypes+", received '"+t+"'", unknownFormat(path, t))
			return scrape.Format{}, false
		}
	case kindObject:
		var ok bool
		if m, ok = v.object(path, raw); !ok {
			return scrape.Format{}, false
		}
		tp := at(path, "type")
		if !present(m, "type") {
			v.add(tp, codeInvalidDiscriminator, "Invalid discriminator value. Expected "+formatTypes)
			return scrape.Format{}, false
		}
		if t, ok = v.str(tp, m.get("type")); !ok {
			return scrape.Format{}, false
		}
		if _, ok := formatFields(t); !ok {
			v.addHeadlined(tp, codeInvalidDiscriminator, "Invalid discriminator value. Expected "+formatTypes+", received '"+t+"'",
				unknownFormat(tp, t))
			return scrape.Format{}, false
		}
	default:
		v.typeMismatch(path, "string or object", kindOf(raw))
		return scrape.Format{}, false
	}
	allowed, _ := formatFields(t)
	n := len(v.details)
	v.checkKeys(path, m, func(k string) bool { return k == "type" || slices.Contains(allowed, k) })
	f := scrape.Format{Type: t}
	switch t {
	case scrape.FormatJSON, scrape.FormatDeterministicJSON:
		f.Schema = v.schema(path, m)
		f.Prompt, _ = v.optPrompt(path, m, "prompt")
		f.CheckPromptInjection = v.optBool(path, m, "checkPromptInjection", false)
	case scrape.FormatChangeTracking:
		f.Modes = []string{}
		if present(m, "modes") {
			p := at(path, "modes")
			if items, ok := v.array(p, m.get("modes")); ok {
				for i, item := range items {
					if s, ok := v.enum(at(p, i), item, "git-diff", "json"); ok {
						f.Modes = append(f.Modes, s)
					}
				}
			}
		}
		f.Schema = v.schema(path, m)
		f.Prompt, _ = v.optPrompt(path, m, "prompt")
		if s, ok := v.optString(path, m, "tag"); ok {
			f.Tag = &s
		}
	case scrape.FormatScreenshot:
		f.FullPage, f.Quality, f.Viewport = v.screenshotFields(path, m)
	case scrape.FormatAttributes:
		f.Selectors = v.attributeSelectors(path, m)
	case scrape.FormatQuestion:
		f.Question, _ = v.reqString(path, m, "question", 1, maxPromptLen)
	case scrape.FormatHighlights:
		f.Query, _ = v.reqString(path, m, "query", 1, maxPromptLen)
	case scrape.FormatQuery:
		f.Prompt, _ = v.reqString(path, m, "prompt", 0, maxPromptLen)
		f.Mode = v.optEnum(path, m, "mode", "freeform", "freeform", "directQuote")
	}
	return f, len(v.details) == n
}

// optPrompt reads an optional prompt of at most 10000 characters.
func (v *validator) optPrompt(path []any, m jsonObject, key string) (string, bool) {
	if !present(m, key) {
		return "", false
	}
	return v.strLen(at(path, key), m.get(key), 0, maxPromptLen)
}

// schema reads an optional JSON schema member and normalizes it for the
// LLM (see normalizeSchema).
func (v *validator) schema(path []any, m jsonObject) json.RawMessage {
	if !present(m, "schema") {
		return nil
	}
	p := at(path, "schema")
	if k := kindOf(m.get("schema")); k != kindObject {
		v.typeMismatch(p, "object", k)
		return nil
	}
	s, ok := normalizeSchema(m.get("schema"))
	if !ok {
		v.addCustom(p, codeCustom, msgSchemalessDict)
		return nil
	}
	return s
}

// screenshotFields reads fullPage, quality and viewport (shared by the
// screenshot format and the screenshot action).
func (v *validator) screenshotFields(path []any, m jsonObject) (bool, *int, *scrape.Viewport) {
	fullPage := v.optBool(path, m, "fullPage", false)
	var quality *int
	if q, ok := v.optInt(path, m, "quality", 1, 100); ok {
		qi := int(q)
		quality = &qi
	}
	var vp *scrape.Viewport
	if present(m, "viewport") {
		p := at(path, "viewport")
		if vm, ok := v.object(p, m.get("viewport")); ok {
			v.checkKeys(p, vm, keysIn("width", "height"))
			w, wok := v.reqInt(p, vm, "width", 1, maxViewportWidth)
			h, hok := v.reqInt(p, vm, "height", 1, maxViewportHeight)
			if wok && hok {
				vp = &scrape.Viewport{Width: int(w), Height: int(h)}
			}
		}
	}
	return fullPage, quality, vp
}

// reqInt reads a required integer field within [lo, hi].
func (v *validator) reqInt(path []any, m jsonObject, key string, lo, hi int64) (int64, bool) {
	if !present(m, key) {
		v.required(at(path, key), "integer")
		return 0, false
	}
	return v.integer(at(path, key), m.get(key), lo, hi)
}

// attributeSelectors reads the required selectors of an attributes format.
func (v *validator) attributeSelectors(path []any, m jsonObject) []scrape.AttributeSelector {
	if !present(m, "selectors") {
		v.required(at(path, "selectors"), "array")
		return nil
	}
	p := at(path, "selectors")
	items, ok := v.array(p, m.get("selectors"))
	if !ok {
		return nil
	}
	out := make([]scrape.AttributeSelector, 0, len(items))
	for i, item := range items {
		ip := at(p, i)
		sm, ok := v.object(ip, item)
		if !ok {
			continue
		}
		v.checkKeys(ip, sm, keysIn("selector", "attribute"))
		sel, sok := v.reqString(ip, sm, "selector", 1, math.MaxInt)
		attr, aok := v.reqString(ip, sm, "attribute", 1, math.MaxInt)
		if sok {
			if msg := selectorProblem(sel); msg != "" {
				v.add(at(ip, "selector"), codeInvalidString, msg)
				sok = false
			}
		}
		if sok && aok {
			out = append(out, scrape.AttributeSelector{Selector: sel, Attribute: attr})
		}
	}
	return out
}

// parsers reads the parsers array: items are "pdf" or a pdf parser object.
func (v *validator) parsers(path []any, raw json.RawMessage) ([]scrape.Parser, bool) {
	items, ok := v.array(path, raw)
	if !ok {
		return nil, false
	}
	n := len(v.details)
	out := make([]scrape.Parser, 0, len(items))
	for i, item := range items {
		ip := at(path, i)
		switch kindOf(item) {
		case kindString:
			if s, _ := v.str(ip, item); s != "pdf" {
				v.add(ip, codeInvalidUnion, "Invalid parser. Expected 'pdf' or a parser object")
				continue
			}
			out = append(out, scrape.Parser{Type: "pdf", Mode: "auto"})
		case kindObject:
			pm, _ := v.object(ip, item)
			if !present(pm, "type") || kindOf(pm.get("type")) != kindString {
				// Not a parser object at all (e.g. {pdf:true}): one issue.
				v.add(ip, codeInvalidUnion, "Invalid parser. Expected 'pdf' or a parser object")
				continue
			}
			if _, ok := v.enum(at(ip, "type"), pm.get("type"), "pdf"); !ok {
				continue
			}
			v.checkKeys(ip, pm, keysIn("type", "mode", "maxPages", "pages", "blocks", "pageMarkers", "pageMarkdown"))
			p := scrape.Parser{Type: "pdf"}
			p.Mode = v.optEnum(ip, pm, "mode", "auto", "fast", "auto", "ocr")
			if mp, ok := v.optInt(ip, pm, "maxPages", 1, maxParserPages); ok {
				p.MaxPages = int(mp)
			}
			p.Pages = v.optBool(ip, pm, "pages", false) || v.optBool(ip, pm, "pageMarkdown", false)
			p.Blocks = v.optBool(ip, pm, "blocks", false)
			p.PageMarkers = v.optBool(ip, pm, "pageMarkers", false)
			out = append(out, p)
		default:
			v.add(ip, codeInvalidUnion, "Invalid parser. Expected 'pdf' or a parser object")
		}
	}
	return out, len(v.details) == n
}
