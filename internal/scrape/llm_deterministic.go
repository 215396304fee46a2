package scrape

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/cache"
	"github.com/firegate/firegate/internal/exprlimit"
	"github.com/firegate/firegate/internal/llm"
)

// The deterministicJson format extracts like json, but the model does not
// read every page: it writes a recipe once (CSS selectors for the schema's
// fields, over the page's HTML), the recipe is applied without a model and
// its result validated against the schema, and the recipe is kept for the
// team, the site and the schema, so later pages of that site built the same
// way are extracted by the recipe alone (billing.CostDeterministicJSON the
// first time, CostDeterministicJSONReused after). A kept recipe whose result
// no longer validates is written again.

// recipeRule finds one field's value: the elements matching Selector
// (within the enclosing rule's element), their text or an attribute; with
// Fields, an object per element; with Many, every match, else the first.
type recipeRule struct {
	Selector  string                 `json:"selector"`
	Attribute string                 `json:"attribute,omitempty"`
	Many      bool                   `json:"many,omitempty"`
	Fields    map[string]*recipeRule `json:"fields,omitempty"`

	sel cascadia.SelectorGroup
}

// recipe is the model's answer: rules for the top-level fields.
type recipe struct {
	Fields map[string]*recipeRule `json:"fields"`
}

// recipeSchema is what the model's recipe must match.
const recipeSchema = `{"type":"object","properties":{"fields":{"type":"object","additionalProperties":{"$ref":"#/$defs/rule"}}},` +
	`"required":["fields"],"$defs":{"rule":{"type":"object","properties":{` +
	`"selector":{"type":"string","minLength":1,"description":"CSS selector, relative to the enclosing rule's element"},` +
	`"attribute":{"type":"string","description":"text (the element's text, the default) or an attribute name: href, src, content, datetime, ..."},` +
	`"many":{"type":"boolean","description":"every match (an array), not only the first"},` +
	`"fields":{"type":"object","additionalProperties":{"$ref":"#/$defs/rule"},"description":"for an object (or, with many, an array of objects): its fields, relative to each match"}},` +
	`"required":["selector"]}}}`

// Bounds of a recipe: the model's answer is data, not trusted.
const (
	maxRecipeRules    = 200
	maxRecipeDepth    = 6
	maxSelectorLen    = 500
	maxRecipeMatches  = 1000 // elements one rule may return
	recipeTTL         = 30 * 24 * time.Hour
	maxCompactTextLen = 160 // characters kept of one text node in the model's view
	// maxApplyVisits bounds the element visits of one recipe application
	// (nested rules over many matches multiply).
	maxApplyVisits = 1_000_000
)

// slowPseudo matches the pseudo-classes whose cost grows with the page
// under every candidate (:has, :contains, :matches and their variants); a
// recipe may not use them.
var slowPseudo = regexp.MustCompile(`(?i):(has|haschild|contains|containsown|matches|matchesown)\b`)

// parseRecipe decodes and checks a recipe, compiling its selectors.
func parseRecipe(raw []byte) (*recipe, error) {
	var r recipe
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("the recipe is not valid: %v", err)
	}
	if len(r.Fields) == 0 {
		return nil, errors.New("the recipe has no fields")
	}
	n := 0
	var check func(rules map[string]*recipeRule, depth int, path string) error
	check = func(rules map[string]*recipeRule, depth int, path string) error {
		if depth > maxRecipeDepth {
			return fmt.Errorf("the recipe nests deeper than %d levels at %s", maxRecipeDepth, path)
		}
		for name, rule := range rules {
			n++
			p := path + "/" + name
			switch {
			case n > maxRecipeRules:
				return fmt.Errorf("the recipe has more than %d rules", maxRecipeRules)
			case rule == nil || strings.TrimSpace(rule.Selector) == "":
				return fmt.Errorf("the rule at %s has no selector", p)
			case len(rule.Selector) > maxSelectorLen:
				return fmt.Errorf("the selector at %s is longer than %d characters", p, maxSelectorLen)
			}
			if m := slowPseudo.FindString(rule.Selector); m != "" {
				return fmt.Errorf("the selector %q at %s uses %s: use ids, classes, attributes and structure only", rule.Selector, p, m)
			}
			sel, err := exprlimit.Selector(rule.Selector)
			if err != nil {
				return fmt.Errorf("the selector %q at %s is not valid CSS: %v", rule.Selector, p, err)
			}
			rule.sel = sel
			if err := check(rule.Fields, depth+1, p); err != nil {
				return err
			}
		}
		return nil
	}
	if err := check(r.Fields, 1, ""); err != nil {
		return nil, err
	}
	return &r, nil
}

// apply runs the recipe over the page and shapes the values to the schema
// (nil when there is none): numbers, integers and booleans are read from
// the text, a single value becomes an array where the schema wants one. It
// fails when the recipe needs more than maxApplyVisits element visits.
func (r *recipe) apply(root *html.Node, schema map[string]any) (map[string]any, error) {
	st := &applyState{sc: schemaCursor{root: schema}, visits: maxApplyVisits}
	out := applyFields(st, root, r.Fields, st.sc.resolve(schema))
	if st.visits <= 0 {
		return nil, fmt.Errorf("the recipe visits more than %d elements of the page: use narrower selectors", maxApplyVisits)
	}
	return out, nil
}

// applyState is one application's schema root and work budget.
type applyState struct {
	sc     schemaCursor
	visits int // element visits left
}

// query returns the descendants of scope matching sel (at most
// maxRecipeMatches), spending the budget.
func (st *applyState) query(scope *html.Node, sel cascadia.SelectorGroup) []*html.Node {
	var out []*html.Node
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil && st.visits > 0 && len(out) < maxRecipeMatches; c = c.NextSibling {
			st.visits--
			if c.Type == html.ElementNode && sel.Match(c) {
				out = append(out, c)
			}
			walk(c)
		}
	}
	walk(scope)
	return out
}

func applyFields(st *applyState, scope *html.Node, rules map[string]*recipeRule, schema map[string]any) map[string]any {
	out := map[string]any{}
	props, _ := schema["properties"].(map[string]any)
	for name, rule := range rules {
		var fieldSchema map[string]any
		if props != nil {
			fieldSchema, _ = props[name].(map[string]any)
		}
		fieldSchema = st.sc.resolve(fieldSchema)
		if v := applyRule(st, scope, rule, fieldSchema); v != nil {
			out[name] = v
		}
	}
	return out
}

// applyRule returns the rule's value within scope, or nil when it finds
// nothing usable.
func applyRule(st *applyState, scope *html.Node, rule *recipeRule, schema map[string]any) any {
	matches := st.query(scope, rule.sel)
	if len(matches) == 0 {
		return nil
	}
	// The schema decides between one value and an array; without a
	// schema, many does.
	wantArray := schemaType(schema) == "array" || (schema == nil && rule.Many)
	itemSchema := schema
	if schemaType(schema) == "array" {
		itemSchema, _ = schema["items"].(map[string]any)
		itemSchema = st.sc.resolve(itemSchema)
	}
	if !wantArray {
		for _, m := range matches {
			if v := ruleValue(st, m, rule, itemSchema); v != nil {
				return v // the first match that gives a value
			}
		}
		return nil
	}
	var vals []any
	for _, m := range matches {
		if v := ruleValue(st, m, rule, itemSchema); v != nil {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return nil
	}
	return vals
}

// ruleValue is one element's value for the rule.
func ruleValue(st *applyState, n *html.Node, rule *recipeRule, schema map[string]any) any {
	if len(rule.Fields) > 0 {
		obj := applyFields(st, n, rule.Fields, schema)
		if len(obj) == 0 {
			return nil
		}
		return obj
	}
	var s string
	switch a := strings.ToLower(strings.TrimSpace(rule.Attribute)); a {
	case "", "text", "innertext", "textcontent":
		s = st.text(n)
	default:
		for _, at := range n.Attr {
			if strings.EqualFold(at.Key, a) {
				s = strings.TrimSpace(at.Val)
				break
			}
		}
	}
	if s == "" {
		return nil
	}
	return coerce(s, schemaType(schema))
}

// numberRE finds a number in text such as "EUR 1,299.00" or "-3.5 kg".
var numberRE = regexp.MustCompile(`-?\d[\d,' ]*(?:\.\d+)?`)

// coerce reads s as the schema type wants; nil when it cannot.
func coerce(s, typ string) any {
	switch typ {
	case "number", "integer":
		m := numberRE.FindString(s)
		if m == "" {
			return nil
		}
		m = strings.NewReplacer(",", "", "'", "", " ", "").Replace(m)
		f, err := strconv.ParseFloat(m, 64)
		if err != nil {
			return nil
		}
		if typ == "integer" {
			return int64(f)
		}
		return f
	case "boolean":
		switch strings.ToLower(s) {
		case "true", "yes", "1", "on", "in stock", "instock", "available":
			return true
		case "false", "no", "0", "off", "out of stock", "outofstock", "unavailable":
			return false
		}
		return nil
	}
	return s
}

// schemaType is the schema's type (the first non-null one of a list).
func schemaType(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if x, ok := x.(string); ok && x != "null" {
				return x
			}
		}
	}
	return ""
}

// schemaCursor resolves local $ref pointers ("#/$defs/x") of one schema.
type schemaCursor struct{ root map[string]any }

func (c schemaCursor) resolve(s map[string]any) map[string]any {
	for range 8 {
		ref, ok := s["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#/") || c.root == nil {
			return s
		}
		var cur any = c.root
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			m, ok := cur.(map[string]any)
			if !ok {
				return s
			}
			cur = m[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
		}
		next, ok := cur.(map[string]any)
		if !ok {
			return s
		}
		s = next
	}
	return s
}

// maxValueLen bounds one value read from the page.
const maxValueLen = 10000

// text is the element's text, whitespace collapsed, at most maxValueLen
// bytes, spending the budget.
func (st *applyState) text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if st.visits <= 0 || b.Len() > maxValueLen {
			return
		}
		st.visits--
		switch {
		case n.Type == html.TextNode:
			b.WriteString(n.Data)
			b.WriteByte(' ')
		case n.Type == html.ElementNode && (n.DataAtom == atom.Script || n.DataAtom == atom.Style || n.DataAtom == atom.Template):
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	t := strings.Join(strings.Fields(b.String()), " ")
	if len(t) > maxValueLen {
		t = strings.TrimSuffix(clip(t, maxValueLen), "...")
	}
	return t
}

// compactHTML renders the page for the model: elements with the
// attributes selectors use (id, class, itemprop, property, name, href, src,
// alt, content, datetime, data-*), no scripts, styles or SVG, text nodes
// shortened; at most budget bytes (cut is true when the page was longer).
func compactHTML(root *html.Node, budget int) (out string, cut bool) {
	var b strings.Builder
	var walk func(n *html.Node) bool
	walk = func(n *html.Node) bool {
		if b.Len() >= budget {
			return false
		}
		switch n.Type {
		case html.TextNode:
			t := strings.Join(strings.Fields(n.Data), " ")
			if t == "" {
				return true
			}
			if len(t) > maxCompactTextLen {
				t = clip(t, maxCompactTextLen)
			}
			b.WriteString(html.EscapeString(t))
			return true
		case html.ElementNode:
			switch n.DataAtom {
			case atom.Script, atom.Style, atom.Noscript, atom.Svg, atom.Template, atom.Link, atom.Iframe:
				return true
			case atom.Meta:
				if !hasAnyAttr(n, "content") {
					return true
				}
			}
			b.WriteString("<" + n.Data)
			for _, a := range n.Attr {
				if keepAttr(a.Key) {
					v := a.Val
					if len(v) > 120 {
						v = clip(v, 120)
					}
					fmt.Fprintf(&b, " %s=\"%s\"", a.Key, html.EscapeString(v))
				}
			}
			b.WriteString(">")
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if !walk(c) {
					return false
				}
			}
			b.WriteString("</" + n.Data + ">")
			return true
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if !walk(c) {
				return false
			}
		}
		return true
	}
	done := walk(root)
	s := b.String()
	if len(s) > budget {
		s = clip(s, budget)
		s = strings.TrimSuffix(s, "...")
	}
	return s, !done || len(b.String()) > budget
}

func keepAttr(k string) bool {
	switch k {
	case "id", "class", "itemprop", "itemtype", "itemscope", "property", "name", "href", "src", "alt", "content", "datetime", "title", "role", "aria-label":
		return true
	}
	return strings.HasPrefix(k, "data-")
}

func hasAnyAttr(n *html.Node, keys ...string) bool {
	for _, a := range n.Attr {
		for _, k := range keys {
			if a.Key == k {
				return true
			}
		}
	}
	return false
}

const recipeTask = "Write a reusable extraction recipe for the web page below: for each field of the JSON schema, a CSS selector " +
	"(and the attribute to read) that finds the field's value in the page's HTML, so that the same recipe extracts the same " +
	"fields from other pages of this site built the same way, without anyone reading them.\n" +
	"Recipe: {\"fields\": {<schema property name>: rule}}. A rule is {\"selector\": CSS selector, \"attribute\": \"text\" (the " +
	"element's text, the default) or an attribute name such as href, src, content or datetime, \"many\": true when the field " +
	"is an array (every match is taken), \"fields\": {...} when the field is an object or an array of objects (those selectors " +
	"are relative to each match)}. Prefer stable selectors (ids, itemprop, semantic class names, structure), never ones that " +
	"depend on this page's own wording. Leave out fields the page does not have."

// deterministicKey is the cache key of the team's recipe for the site,
// schema and prompt.
func deterministicKey(team, pageURL string, f Format) string {
	host := pageURL
	if u, err := url.Parse(pageURL); err == nil && u.Host != "" {
		host = strings.ToLower(u.Hostname())
	}
	var schema bytes.Buffer
	if hasSchema(f.Schema) && json.Compact(&schema, f.Schema) != nil {
		schema.Reset()
	}
	return cache.Key("deterministicJson\x00" + team + "\x00" + host + "\x00" + schema.String() + "\x00" + f.Prompt)
}

// deterministicJSON fills doc.JSON by a recipe, kept or written now, and
// bills the document accordingly.
func (e *Engine) deterministicJSON(ctx context.Context, plan *llmPlan, f Format, schema *llm.Schema, doc *Document) error {
	var schemaDoc map[string]any
	if schema != nil {
		if err := json.Unmarshal(schema.Raw(), &schemaDoc); err != nil {
			// The schema compiled, so it is JSON; one that is not an object
			// (the boolean schemas true and false) guides no field's type,
			// and the recipe's values are applied as without a schema.
			schemaDoc = nil
		}
	}
	raw := ""
	if doc.RawHTML != nil {
		raw = *doc.RawHTML
	}
	root, err := parseHTML(raw)
	ct := strings.ToLower(doc.Metadata.ContentType)
	if raw == "" || err != nil || (ct != "" && !strings.Contains(ct, "html")) {
		// No HTML to write selectors for (a PDF, a text file): the model
		// extracts as the json format does, at the first-time price.
		doc.Metadata.CreditsUsed += billing.CostDeterministicJSON - billing.CostBase
		addWarning(doc, "deterministicJson needs an HTML page; this one was extracted by the language model as the json format does.")
		md := ""
		if doc.Markdown != nil {
			md = *doc.Markdown
		}
		return e.extractJSON(ctx, f, schema, md, doc)
	}
	pageURL := doc.Metadata.SourceURL
	if pageURL == "" {
		pageURL = doc.Metadata.URL
	}
	key := deterministicKey(plan.teamID, pageURL, f)
	keep := e.cache != nil && !plan.zdr

	validate := func(out map[string]any, err error) (json.RawMessage, error) {
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, err
		}
		if schema != nil {
			if err := schema.Validate(b); err != nil {
				return nil, err
			}
		} else if len(out) == 0 {
			return nil, errors.New("the recipe found nothing in the page")
		}
		return b, nil
	}

	if keep {
		if entry, err := e.cache.Get(ctx, key); err == nil {
			if r, err := parseRecipe(entry.Value); err == nil {
				if out, err := validate(r.apply(root, schemaDoc)); err == nil {
					doc.JSON = &out
					doc.Metadata.CreditsUsed += billing.CostDeterministicJSONReused - billing.CostBase
					return nil
				}
			}
		}
	}

	doc.Metadata.CreditsUsed += billing.CostDeterministicJSON - billing.CostBase
	var sys strings.Builder
	sys.WriteString(recipeTask)
	if schema != nil {
		sys.WriteString("\n\nThe JSON schema of the data to extract:\n" + string(schema.Raw()))
	} else {
		sys.WriteString("\n\nChoose field names that describe the data asked for.")
	}
	if f.Prompt != "" {
		sys.WriteString("\n\nWhat to extract (from the API caller): " + f.Prompt)
	}
	sys.WriteString("\n\n" + dataRule)
	view, cut := compactHTML(root, e.pageBudget(sys.String()+recipeSchema))
	if cut {
		view += "\n<!-- the rest of the page is left out -->"
	}
	rs, err := llm.CompileSchema(json.RawMessage(recipeSchema))
	if err != nil {
		return err
	}
	msgs := []llm.Message{{Role: "system", Content: sys.String()}, {Role: "user", Content: pageData(view)}}
	for attempt := 0; attempt < 2; attempt++ {
		resp, err := e.llm.CompleteJSON(ctx, llm.JSONRequest{Schema: rs, SchemaName: "recipe",
			Request: llm.Request{Purpose: "deterministicJson", Messages: msgs}})
		if resp != nil {
			doc.TokensUsed += resp.Usage.TotalTokens
		}
		if errors.Is(err, llm.ErrInvalidOutput) {
			break
		}
		if err != nil {
			return llmError(err, "deterministicJson recipe")
		}
		r, perr := parseRecipe(resp.JSON)
		var out json.RawMessage
		if perr == nil {
			out, perr = validate(r.apply(root, schemaDoc))
		}
		if perr == nil {
			doc.JSON = &out
			if keep {
				if err := e.cache.Set(ctx, key, cache.Entry{Value: resp.JSON, CreatedAt: e.now()}, recipeTTL); err != nil {
					e.log.WarnContext(ctx, "deterministicJson recipe not kept", "err", err)
				}
			}
			return nil
		}
		msgs = append(msgs, llm.Message{Role: "assistant", Content: string(resp.JSON)}, llm.Message{Role: "user",
			Content: "Applied to the page, that recipe failed: " + clip(perr.Error(), 2000) + "\nAnswer with a corrected recipe only."})
	}
	null := json.RawMessage("null")
	doc.JSON = &null
	addWarning(doc, "The language model could not write a recipe whose result matches the schema (after a retry); json is null.")
	return nil
}
