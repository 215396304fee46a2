package scrape

import (
	"encoding/json"
	"maps"
)

// Document is the data member of a scrape response. Pointer and slice fields
// are omitted unless their format was requested.
type Document struct {
	Markdown   *string          `json:"markdown,omitempty"`
	HTML       *string          `json:"html,omitempty"`
	RawHTML    *string          `json:"rawHtml,omitempty"`
	RawBase64  *string          `json:"rawBase64,omitempty"`
	Links      []string         `json:"links,omitempty"`
	Images     []string         `json:"images,omitempty"`
	Attributes []AttributeValue `json:"attributes,omitempty"`
	Screenshot *string          `json:"screenshot,omitempty"`
	Actions    *ActionResults   `json:"actions,omitempty"`
	Metadata   Metadata         `json:"metadata"`
	Warning    *string          `json:"warning,omitempty"`
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
	Page map[string]any

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

// MarshalJSON flattens Page into the metadata object.
func (m Metadata) MarshalJSON() ([]byte, error) {
	type plain Metadata
	fixed, err := json.Marshal(plain(m))
	if err != nil {
		return nil, err
	}
	if len(m.Page) == 0 {
		return fixed, nil
	}
	var out map[string]any
	if err := json.Unmarshal(fixed, &out); err != nil {
		return nil, err
	}
	merged := make(map[string]any, len(out)+len(m.Page))
	maps.Copy(merged, m.Page)
	maps.Copy(merged, out)
	return json.Marshal(merged)
}
