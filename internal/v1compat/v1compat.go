// Package v1compat translates the v1 API (the 1.x JavaScript SDK and the
// integrations built on it) to v2: request bodies to v2 bodies, and v2
// answers back to the v1 shapes; httpapi serves /v1 with it through its v2
// handlers.
package v1compat

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// ErrNotObject is the error of a body, or of its scrapeOptions, that is
// not a JSON object.
var ErrNotObject = errors.New("v1compat: not a JSON object")

// FieldError is an error of one member of the body (scrapeOptions).
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return "v1compat: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// Object is a v1 body's members.
type Object = map[string]json.RawMessage

// v1 defaults that differ from v2's: no cached scrape unless maxAge asks
// for one, a 30 s scrape timeout and 5 search results (v2's is 10).
const (
	defaultMaxAge      = `0`
	defaultTimeout     = `30000`
	defaultSearchLimit = `5`
)

// NotServed is the message of a /v1 route this server does not translate,
// naming its v2 counterpart.
func NotServed(method, path string) string {
	v2 := "/v2" + strings.TrimPrefix(path, "/v1")
	return "This server serves the v1 API's scrape, map, search, crawl, batch scrape, extract and team usage routes only; " + method + " " + path +
		" is not served. Use the v2 API (" + method + " " + v2 + ") with a v2 SDK, such as @mendable/firecrawl-js 4.x."
}

// ScrapeBody rewrites a v1 scrape body into a v2 one. Keys both versions
// share pass through (v2 validation then names any bad field); formats are
// turned from v1 strings into v2 format objects; v1-only options are mapped
// (parsePDF, geolocation, extract/jsonOptions, changeTrackingOptions) or
// dropped when v2 has no counterpart (useMock, agent, ...). extract reports
// whether the v1 "extract" format was asked for (see ScrapeAnswer).
func ScrapeBody(m Object) (body []byte, extract bool, err error) {
	// Options of the extraction formats, v1's two names for one thing.
	llmOpts := m["jsonOptions"]
	if llmOpts == nil {
		llmOpts = m["extract"]
	}
	if loc, ok := m["geolocation"]; ok {
		if _, has := m["location"]; !has {
			m["location"] = loc
		}
	}
	if pdf, ok := m["parsePDF"]; ok && string(pdf) == "false" {
		m["parsers"] = json.RawMessage(`[]`)
	}
	if f, ok := m["formats"]; ok {
		var formats []json.RawMessage
		if json.Unmarshal(f, &formats) == nil {
			out := make([]any, len(formats))
			for i, f := range formats {
				var name string
				if json.Unmarshal(f, &name) != nil {
					out[i] = f // not a v1 string: v2 validation decides
					continue
				}
				switch name {
				case "screenshot@fullPage":
					out[i] = map[string]any{"type": "screenshot", "fullPage": true}
				case "extract", "json":
					extract = extract || name == "extract"
					out[i] = jsonFormat(llmOpts)
				case "changeTracking":
					out[i] = changeTracking(m["changeTrackingOptions"])
				default:
					out[i] = name
				}
			}
			// Cannot fail: out holds strings, maps of strings and bools, and
			// raw values taken from the decoded body, so valid JSON.
			m["formats"], _ = json.Marshal(out)
		}
	}
	for _, k := range []string{"jsonOptions", "extract", "geolocation", "parsePDF", "changeTrackingOptions",
		"useMock", "agent", "__experimental_cache", "__experimental_omceDomain", "languages"} {
		delete(m, k)
	}
	if _, ok := m["maxAge"]; !ok {
		m["maxAge"] = json.RawMessage(defaultMaxAge)
	}
	if _, ok := m["timeout"]; !ok {
		m["timeout"] = json.RawMessage(defaultTimeout)
	}
	body, err = json.Marshal(m)
	return body, extract, err
}

// MapBody rewrites a v1 map body: ignoreSitemap and sitemapOnly become
// sitemap skip and only; v1-only switches with no v2 counterpart are
// dropped.
func MapBody(m Object) ([]byte, error) {
	if _, has := m["sitemap"]; !has {
		switch {
		case string(m["sitemapOnly"]) == "true":
			m["sitemap"] = json.RawMessage(`"only"`)
		case string(m["ignoreSitemap"]) == "true":
			m["sitemap"] = json.RawMessage(`"skip"`)
		}
	}
	for _, k := range []string{"ignoreSitemap", "sitemapOnly", "useMock", "filterByPath"} {
		delete(m, k)
	}
	return json.Marshal(m)
}

// CrawlBody rewrites a v1 crawl body: ignoreSitemap becomes sitemap skip,
// allowBackwardLinks crawlEntireDomain, maxDepth maxDiscoveryDepth (link
// hops from the start page, where v1 counted path segments), and
// scrapeOptions are rewritten as a v1 scrape's are.
func CrawlBody(m Object) ([]byte, error) {
	rename := func(from, to string) {
		if v, ok := m[from]; ok {
			if _, has := m[to]; !has {
				m[to] = v
			}
			delete(m, from)
		}
	}
	if _, has := m["sitemap"]; !has && string(m["ignoreSitemap"]) == "true" {
		m["sitemap"] = json.RawMessage(`"skip"`)
	}
	delete(m, "ignoreSitemap")
	rename("allowBackwardLinks", "crawlEntireDomain")
	rename("maxDepth", "maxDiscoveryDepth")
	if err := scrapeOptions(m); err != nil {
		return nil, err
	}
	delete(m, "useMock")
	return json.Marshal(m)
}

// ExtractBody rewrites a v1 extract body: the same as v2's but for
// scrapeOptions, rewritten as a v1 scrape's.
func ExtractBody(m Object) ([]byte, error) {
	if err := scrapeOptions(m); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// SearchBody rewrites a v1 search body: scrapeOptions are rewritten as a
// v1 scrape's, and the limit defaults to v1's 5.
func SearchBody(m Object) ([]byte, error) {
	if _, ok := m["limit"]; !ok {
		m["limit"] = json.RawMessage(defaultSearchLimit)
	}
	if err := scrapeOptions(m); err != nil {
		return nil, err
	}
	delete(m, "useMock")
	return json.Marshal(m)
}

// scrapeOptions rewrites the scrapeOptions member of m, when present, as
// a v1 scrape body is rewritten. One that is not a JSON object is a
// *FieldError wrapping ErrNotObject.
func scrapeOptions(m Object) error {
	so, ok := m["scrapeOptions"]
	if !ok {
		return nil
	}
	var opts Object
	if err := json.Unmarshal(so, &opts); err != nil || opts == nil {
		return &FieldError{Field: "scrapeOptions", Err: ErrNotObject}
	}
	body, _, err := ScrapeBody(opts)
	if err != nil {
		return &FieldError{Field: "scrapeOptions", Err: err}
	}
	m["scrapeOptions"] = body
	return nil
}

// jsonFormat is the v2 json format of v1's extract options {schema,
// prompt, systemPrompt}; v2 has no system prompt, so it leads the prompt.
func jsonFormat(opts json.RawMessage) any {
	var o struct {
		Schema       json.RawMessage `json:"schema"`
		Prompt       string          `json:"prompt"`
		SystemPrompt string          `json:"systemPrompt"`
	}
	f := map[string]any{"type": "json"}
	if json.Unmarshal(opts, &o) != nil {
		return f
	}
	if len(o.Schema) > 0 && string(o.Schema) != "null" {
		f["schema"] = o.Schema
	}
	prompt := strings.TrimSpace(strings.Join([]string{o.SystemPrompt, o.Prompt}, "\n\n"))
	if prompt != "" {
		f["prompt"] = prompt
	}
	return f
}

// changeTracking is the v2 changeTracking format of v1's
// changeTrackingOptions (the same keys, one level up).
func changeTracking(opts json.RawMessage) any {
	var f map[string]json.RawMessage
	if err := json.Unmarshal(opts, &f); err != nil || f == nil {
		// Absent, null or not an object: read leniently, as jsonFormat reads
		// extract options, that is the bare format. (null decodes to a nil
		// map, which the assignment below used to panic on.)
		f = map[string]json.RawMessage{}
	}
	f["type"] = json.RawMessage(`"changeTracking"`)
	return f
}

// ScrapeAnswer is a v2 scrape answer in v1's shape: the document's json is
// named extract when the v1 "extract" format was asked for.
func ScrapeAnswer(extract bool) func([]byte) []byte {
	return func(out []byte) []byte {
		if extract {
			return renameDataKey(out, "json", "extract")
		}
		return out
	}
}

// CrawlStarted is a v2 crawl start answer whose url points at
// /v1/crawl/{id}.
func CrawlStarted(out []byte) []byte {
	return bytes.Replace(out, []byte("/v2/crawl/"), []byte("/v1/crawl/"), 1)
}

// BatchStarted is a v2 batch scrape start answer whose url points at
// /v1/batch/scrape/{id}.
func BatchStarted(out []byte) []byte {
	return bytes.Replace(out, []byte("/v2/batch/scrape/"), []byte("/v1/batch/scrape/"), 1)
}

// Usage is a v2 credit or token usage answer with v1's snake-case names
// of the balance fields (remaining_credits, plan_credits,
// billing_period_start, ...).
func Usage(out []byte) []byte {
	for _, k := range [][2]string{{"remainingCredits", "remaining_credits"}, {"planCredits", "plan_credits"},
		{"remainingTokens", "remaining_tokens"}, {"planTokens", "plan_tokens"},
		{"billingPeriodStart", "billing_period_start"}, {"billingPeriodEnd", "billing_period_end"}} {
		out = renameDataKey(out, k[0], k[1])
	}
	return out
}

// SearchData turns a v2 search answer's data {web: [...]} into v1's array
// of web results.
func SearchData(out []byte) []byte {
	var env map[string]json.RawMessage
	if json.Unmarshal(out, &env) != nil {
		return out
	}
	var data struct {
		Web []json.RawMessage `json:"web"`
	}
	if json.Unmarshal(env["data"], &data) != nil {
		return out
	}
	if data.Web == nil {
		data.Web = []json.RawMessage{}
	}
	env["data"], _ = json.Marshal(data.Web) // cannot fail: raw values decoded from out
	b, err := json.Marshal(env)
	if err != nil {
		return out
	}
	return append(b, '\n')
}

// MapLinks turns a v2 map answer's links into v1's URL strings.
func MapLinks(out []byte) []byte {
	var env map[string]json.RawMessage
	if json.Unmarshal(out, &env) != nil {
		return out
	}
	var links []struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(env["links"], &links) != nil {
		return out
	}
	urls := make([]string, len(links))
	for i, l := range links {
		urls[i] = l.URL
	}
	env["links"], _ = json.Marshal(urls) // cannot fail: strings
	b, err := json.Marshal(env)
	if err != nil {
		return out
	}
	return append(b, '\n')
}

// renameDataKey renames the member from of the data object of a
// {"success":true,"data":{...}} body to to; the body is returned as is
// when it has no such member.
func renameDataKey(body []byte, from, to string) []byte {
	var env map[string]json.RawMessage
	if json.Unmarshal(body, &env) != nil {
		return body
	}
	var data map[string]json.RawMessage
	if json.Unmarshal(env["data"], &data) != nil {
		return body
	}
	v, ok := data[from]
	if !ok {
		return body
	}
	delete(data, from)
	data[to] = v
	env["data"], _ = json.Marshal(data) // cannot fail: raw values decoded from body
	out, err := json.Marshal(env)
	if err != nil {
		return body
	}
	return append(out, '\n')
}
