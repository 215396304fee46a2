package scrape

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/firegate/firegate/internal/pdfparse"
)

// Document is the data member of a scrape response. Pointer and slice fields
// are omitted unless their format was requested.
type Document struct {
	Markdown   *string          `json:"markdown,omitempty"`
	HTML       *string          `json:"html,omitempty"`
	RawHTML    *string          `json:"rawHtml,omitempty"`
	RawBase64  *string          `json:"rawBase64,omitempty"`
	Links      []string         `json:"links,omitzero"`
	Images     []string         `json:"images,omitzero"`
	Attributes []AttributeValue `json:"attributes,omitzero"`
	Screenshot *string          `json:"screenshot,omitempty"`
	// Audio and Video are the audio and video formats: a signed link (a
	// JSON string) to an MP3 or MP4 valid for an hour, or the JSON null
	// with a warning when the page has no such media.
	Audio *json.RawMessage `json:"audio,omitempty"`
	Video *json.RawMessage `json:"video,omitempty"`
	// Summary, JSON, Answer and Highlights come from the language model
	// formats summary, json, question/query and highlights; JSON is the
	// JSON null (not absent) when extraction failed, with a warning.
	Summary    *string          `json:"summary,omitempty"`
	JSON       *json.RawMessage `json:"json,omitempty"`
	Answer     *string          `json:"answer,omitempty"`
	Highlights *string          `json:"highlights,omitempty"`
	// Product is the product format's object: extracted from the page's
	// markup (internal/product), gaps filled by the model when one is
	// configured; the JSON null when the page offers none.
	Product *json.RawMessage `json:"product,omitempty"`
	// Branding is the branding format's object, computed in the browser
	// (internal/branding); the JSON null when it could not be.
	Branding *json.RawMessage `json:"branding,omitempty"`
	// ChangeTracking is the changeTracking format: this scrape compared
	// with the team's previous one of the URL.
	ChangeTracking *ChangeTracking `json:"changeTracking,omitempty"`
	Actions        *ActionResults  `json:"actions,omitempty"`
	// Pages and Blocks come from the PDF parser's pages and blocks options.
	Pages    []pdfparse.Page       `json:"pages,omitzero"`
	Blocks   []pdfparse.PageBlocks `json:"blocks,omitzero"`
	Metadata Metadata              `json:"metadata"`
	Warning  *string               `json:"warning,omitempty"`
	// TokensUsed counts the language-model tokens the model formats spent
	// on this document (reported by the endpoint, else estimated); it is
	// not part of the API's document. Extracts are billed by it.
	TokensUsed int64 `json:"-"`
	// Tools lists the catalog tools matched to the page (domainTools);
	// the HTTP layer fills it in.
	Tools any `json:"tools,omitempty"`
}

// AttributeValue is one entry of the attributes format output.
type AttributeValue struct {
	Selector  string   `json:"selector"`
	Attribute string   `json:"attribute"`
	Values    []string `json:"values"`
}

// ActionResults collects outputs of actions in the order of their actions.
type ActionResults struct {
	Screenshots       []string          `json:"screenshots"`
	Scrapes           []ActionScrape    `json:"scrapes"`
	JavascriptReturns []JavascriptValue `json:"javascriptReturns"`
	PDFs              []string          `json:"pdfs"`
}

// ActionScrape is the output of a scrape action.
type ActionScrape struct {
	URL  string `json:"url"`
	HTML string `json:"html"`
}

// JavascriptValue is the output of an executeJavascript action.
type JavascriptValue struct {
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// Metadata is the document's metadata: the page's own meta tags (Page) and
// the fields the service sets. Page keys never override service fields.
type Metadata struct {
	// Page holds title, description, language, og:*, twitter:*, ... as
	// string or []string values, keyed as the API names them.
	Page map[string]any `json:"-"`

	SourceURL     string  `json:"sourceURL"`
	URL           string  `json:"url"`
	StatusCode    int     `json:"statusCode"`
	ContentType   string  `json:"contentType,omitempty"`
	ScrapeID      string  `json:"scrapeId,omitempty"`
	ProxyUsed     string  `json:"proxyUsed,omitempty"`
	CacheState    string  `json:"cacheState,omitempty"`
	CachedAt      string  `json:"cachedAt,omitempty"`
	CreditsUsed   int     `json:"creditsUsed"`
	Error         *string `json:"error,omitempty"`
	NumPages      *int    `json:"numPages,omitempty"`
	TotalPages    *int    `json:"totalPages,omitempty"`
	Concurrency   bool    `json:"concurrencyLimited,omitempty"`
	ConcurrencyMS *int64  `json:"concurrencyQueueDurationMs,omitempty"`
}

// isServiceKey reports whether k is a metadata key the service sets; page
// metadata of that name is dropped so it can never override it.
func isServiceKey(k string) bool {
	switch k {
	case "sourceURL", "url", "statusCode", "contentType", "scrapeId", "proxyUsed", "cacheState", "cachedAt",
		"creditsUsed", "error", "numPages", "totalPages", "concurrencyLimited", "concurrencyQueueDurationMs":
		return true
	}
	return false
}

// MarshalJSON flattens Page into the metadata object: page keys first
// (sorted), then the service fields.
func (m Metadata) MarshalJSON() ([]byte, error) {
	type plain Metadata
	fixed, err := json.Marshal(plain(m))
	if err != nil || len(m.Page) == 0 {
		return fixed, err
	}
	keys := make([]string, 0, len(m.Page))
	for k := range m.Page {
		if !isServiceKey(k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var b bytes.Buffer
	b.Grow(len(fixed) + 64*len(keys))
	b.WriteByte('{')
	for _, k := range keys {
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(m.Page[k])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
		b.WriteByte(',')
	}
	b.Write(fixed[1:])
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON wrote: service fields into their
// fields, every other key into Page.
func (m *Metadata) UnmarshalJSON(b []byte) error {
	type plain Metadata
	var fixed plain
	if err := json.Unmarshal(b, &fixed); err != nil {
		return err
	}
	var all map[string]any
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	for k := range all {
		if isServiceKey(k) {
			delete(all, k)
		}
	}
	*m = Metadata(fixed)
	if len(all) > 0 {
		m.Page = all
	}
	return nil
}
