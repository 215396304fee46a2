package catalog

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// Bounds of find-tools.
const (
	defaultFindLimit = 20
	maxFindLimit     = 100
)

var findToolsSchema = json.RawMessage(`{
	"type": "object",
	"additionalProperties": false,
	"properties": {
		"query": {"type": "string", "minLength": 1, "maxLength": 2000},
		"urls": {"type": "array", "maxItems": 100, "items": {"type": "string", "minLength": 1, "maxLength": 2048}},
		"providers": {"type": "array", "maxItems": 100, "items": {"type": "string", "minLength": 1, "maxLength": 200}},
		"categories": {"type": "array", "maxItems": 100, "items": {"type": "string", "minLength": 1, "maxLength": 200}},
		"groups": {"type": "array", "maxItems": 100, "items": {"type": "string", "minLength": 1, "maxLength": 200}},
		"capabilities": {"type": "array", "maxItems": 100, "items": {"type": "string", "minLength": 1, "maxLength": 200}},
		"level": {"enum": ["categories", "providers", "groups", "tools"]},
		"expand": {"type": "array", "maxItems": 3, "items": {"enum": ["options", "response", "examples"]}},
		"limit": {"type": "integer", "minimum": 1, "maximum": 100},
		"offset": {"type": "integer", "minimum": 0, "maximum": 1000000}
	}
}`)

// findOptions are find-tools' options (validated by findToolsSchema).
type findOptions struct {
	Query        string   `json:"query,omitempty"`
	URLs         []string `json:"urls,omitempty"`
	Providers    []string `json:"providers,omitempty"`
	Categories   []string `json:"categories,omitempty"`
	Groups       []string `json:"groups,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"`
	Level        string   `json:"level,omitempty"`
	Expand       []string `json:"expand,omitempty"`
	Limit        int      `json:"limit,omitempty"`
	Offset       int      `json:"offset,omitempty"`
}

// findTools lists the catalog at a level (categories, providers, groups =
// first path segment of a capability, or tools), filtered by the options,
// one page of limit items from offset; next is the call that reads the
// next page. Without a level it lists providers, or tools when a filter is
// given. A query keeps the tools whose names, descriptions, provider or
// categories hold its words, the best matches first.
func (s *Service) findTools(_ context.Context, _ string, options map[string]any) (any, int64, error) {
	raw, err := json.Marshal(options)
	if err != nil {
		return nil, 0, &CallError{Code: "invalid_options", Status: 400, Message: err.Error()}
	}
	var o findOptions
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, 0, &CallError{Code: "invalid_options", Status: 400, Message: err.Error()}
	}
	level := o.Level
	if level == "" {
		level = "providers"
		if len(o.URLs)+len(o.Providers)+len(o.Groups)+len(o.Capabilities) > 0 || o.Query != "" {
			level = "tools"
		}
	}
	if level == "categories" {
		return s.findCategories(o), 0, nil
	}
	terms := queryTerms(o.Query)
	limit := o.Limit
	if limit <= 0 {
		limit = defaultFindLimit
	}
	hosts := urlHosts(o.URLs)
	var items []map[string]any
	scores := map[int]int{} // item index -> query match score (tools level)
	seenGroup := map[string]bool{}
	for _, p := range s.Catalog().Providers {
		if len(o.Providers) > 0 && !slices.Contains(o.Providers, p.Name) {
			continue
		}
		if len(o.Categories) > 0 && !slices.ContainsFunc(p.Categories, func(c string) bool { return slices.Contains(o.Categories, c) }) {
			continue
		}
		var caps []*Capability
		for _, c := range p.Capabilities {
			if len(o.Groups) > 0 && !slices.Contains(o.Groups, group(c.Path)) {
				continue
			}
			if len(o.Capabilities) > 0 && !slices.Contains(o.Capabilities, c.Path) {
				continue
			}
			if len(hosts) > 0 && !slices.ContainsFunc(hosts, c.MatchesHost) {
				continue
			}
			if len(terms) > 0 && matchScore(p, c, terms) == 0 {
				continue
			}
			caps = append(caps, c)
		}
		if len(caps) == 0 && (len(o.Groups)+len(o.Capabilities)+len(hosts)+len(terms) > 0 || level != "providers") {
			continue
		}
		switch level {
		case "providers":
			items = append(items, map[string]any{"id": p.Name, "name": p.Name, "description": p.Description,
				"categories": nonNil(p.Categories), "tools": len(caps),
				"next": nextCall(findOptions{Level: "groups", Providers: []string{p.Name}})})
		case "groups":
			for _, c := range caps {
				g := group(c.Path)
				if seenGroup[p.Name+"/"+g] {
					continue
				}
				seenGroup[p.Name+"/"+g] = true
				items = append(items, map[string]any{"id": p.Name + "/" + g, "name": g, "provider": p.Name,
					"next": nextCall(findOptions{Level: "tools", Providers: []string{p.Name}, Groups: []string{g}})})
			}
		default:
			for _, c := range caps {
				item := ToolItem(p, c)
				if len(hosts) > 0 {
					item["matchedBy"] = []string{"domain"}
					item["matchedUrls"] = matchedURLs(c, o.URLs)
				}
				if len(terms) > 0 {
					item["matchedBy"] = append(nonNil(asStrings(item["matchedBy"])), "query")
					scores[len(items)] = matchScore(p, c, terms)
				}
				items = append(items, item)
			}
		}
	}
	if len(terms) > 0 {
		items = byScore(items, scores)
	}
	total := len(items)
	start := min(o.Offset, total)
	end := min(start+limit, total)
	var next any
	if end < total {
		n := o
		n.Level, n.Offset, n.Limit = level, end, limit
		next = nextCall(n)
	}
	page := items[start:end]
	if page == nil {
		page = []map[string]any{}
	}
	return map[string]any{"level": level, "items": page, "total": total, "next": next}, 0, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// nextCall is the find-tools call with options o.
func nextCall(o findOptions) map[string]any {
	// findOptions holds only strings, string slices and ints: it always
	// encodes, and what json.Marshal writes always decodes into a map.
	raw, _ := json.Marshal(o)
	var opts map[string]any
	if err := json.Unmarshal(raw, &opts); err != nil {
		panic("catalog: find-tools options do not round-trip: " + err.Error())
	}
	return map[string]any{"provider": BuiltinProvider, "capability": "find-tools", "options": opts}
}

// group is the first segment of a capability path.
func group(path string) string {
	g, _, _ := strings.Cut(path, "/")
	return g
}

func urlHosts(urls []string) []string {
	var hosts []string
	for _, s := range urls {
		if h := hostOf(s); h != "" {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

func hostOf(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Host == "" {
		u, err = url.Parse("http://" + strings.TrimSpace(s))
		if err != nil {
			return ""
		}
	}
	return strings.ToLower(u.Hostname())
}

func matchedURLs(c *Capability, urls []string) []string {
	var out []string
	for _, u := range urls {
		if h := hostOf(u); h != "" && c.MatchesHost(h) {
			out = append(out, u)
		}
	}
	return out
}

// ToolItem describes a capability the way discovery lists it (the SDK's
// DiscoveredTool): identity, description, cost, its options from the
// inputSchema, and the call that executes it.
func ToolItem(p *Provider, c *Capability) map[string]any {
	return map[string]any{
		"id":          p.Name + "/" + c.Path,
		"provider":    p.Name,
		"capability":  c.Path,
		"name":        c.Path,
		"description": c.Description,
		"creditsCost": c.Credits,
		"options":     schemaOptions(c.InputSchema),
		"execute":     map[string]any{"provider": p.Name, "capability": c.Path},
	}
}

// schemaOptions lists the top-level properties of an object schema:
// name, type, required and description, by name.
func schemaOptions(raw json.RawMessage) []map[string]any {
	var s struct {
		Properties map[string]struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	out := []map[string]any{}
	if json.Unmarshal(raw, &s) != nil {
		return out
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := s.Properties[n]
		typ := "any"
		switch t := p.Type.(type) {
		case string:
			typ = t
		case []any:
			parts := make([]string, 0, len(t))
			for _, x := range t {
				if xs, ok := x.(string); ok {
					parts = append(parts, xs)
				}
			}
			typ = strings.Join(parts, "|")
		}
		o := map[string]any{"name": n, "type": typ, "required": slices.Contains(s.Required, n)}
		if p.Description != "" {
			o["description"] = p.Description
		}
		out = append(out, o)
	}
	return out
}

// DomainTools lists the operator's tools whose domains match the page at
// pageURL (the SDK's DiscoveredTool items, matchedBy domain).
func (s *Service) DomainTools(pageURL string) []map[string]any {
	out := []map[string]any{}
	host := hostOf(pageURL)
	if host == "" {
		return out
	}
	for _, p := range s.Catalog().Providers {
		for _, c := range p.Capabilities {
			if c.MatchesHost(host) {
				item := ToolItem(p, c)
				item["matchedBy"] = []string{"domain"}
				item["matchedUrls"] = []string{pageURL}
				out = append(out, item)
			}
		}
	}
	return out
}

// Category is one category of the catalog's providers.
type Category struct {
	Name      string
	Providers []string // the providers' names, in catalog order
}

// Categories lists the providers' categories in the order they first
// appear.
func (s *Service) Categories() []Category {
	var out []Category
	index := map[string]int{}
	for _, p := range s.Catalog().Providers {
		for _, c := range p.Categories {
			i, ok := index[c]
			if !ok {
				i = len(out)
				index[c] = i
				out = append(out, Category{Name: c})
			}
			out[i].Providers = append(out[i].Providers, p.Name)
		}
	}
	return out
}

// findCategories lists the providers' categories with how many providers
// are in each; next lists those providers.
func (s *Service) findCategories(o findOptions) map[string]any {
	cats := s.Categories()
	items := make([]map[string]any, 0, len(cats))
	for _, c := range cats {
		items = append(items, map[string]any{"id": c.Name, "name": c.Name, "providers": len(c.Providers),
			"next": nextCall(findOptions{Level: "providers", Categories: []string{c.Name}})})
	}
	limit := o.Limit
	if limit <= 0 {
		limit = defaultFindLimit
	}
	total := len(items)
	start := min(o.Offset, total)
	end := min(start+limit, total)
	var next any
	if end < total {
		next = nextCall(findOptions{Level: "categories", Offset: end, Limit: limit})
	}
	return map[string]any{"level": "categories", "items": items[start:end], "total": total, "next": next}
}

// maxQueryTerms bounds the words of a query that are matched.
const maxQueryTerms = 32

// queryTerms are the lower-case words (runs of letters and digits) of q,
// each once, at most maxQueryTerms; one-letter words are left out.
func queryTerms(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(w)) < 2 || slices.Contains(out, w) {
			continue
		}
		out = append(out, w)
		if len(out) == maxQueryTerms {
			break
		}
	}
	return out
}

// matchScore is how well a tool matches the query's terms: each term found
// in the tool's path or its provider's name counts 2, in a description or
// category 1.
func matchScore(p *Provider, c *Capability, terms []string) int {
	names := strings.ToLower(c.Path + " " + p.Name)
	text := strings.ToLower(c.Description + " " + p.Description + " " + strings.Join(p.Categories, " "))
	score := 0
	for _, t := range terms {
		switch {
		case strings.Contains(names, t):
			score += 2
		case strings.Contains(text, t):
			score++
		}
	}
	return score
}

// byScore orders items by their scores, highest first, ties in catalog
// order.
func byScore(items []map[string]any, scores map[int]int) []map[string]any {
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
	out := make([]map[string]any, len(items))
	for i, j := range idx {
		out[i] = items[j]
	}
	return out
}

func asStrings(v any) []string {
	s, _ := v.([]string)
	return s
}

// MatchTools lists the tools that match query, best first, at most limit
// (the alexandria source of a search: the SDK's DiscoveredTool items,
// matchedBy query).
func (s *Service) MatchTools(query string, limit int) []map[string]any {
	terms := queryTerms(query)
	out := []map[string]any{}
	if len(terms) == 0 || limit <= 0 {
		return out
	}
	scores := map[int]int{}
	for _, p := range s.Catalog().Providers {
		for _, c := range p.Capabilities {
			if n := matchScore(p, c, terms); n > 0 {
				item := ToolItem(p, c)
				item["matchedBy"] = []string{"query"}
				scores[len(out)] = n
				out = append(out, item)
			}
		}
	}
	out = byScore(out, scores)
	return out[:min(limit, len(out))]
}
