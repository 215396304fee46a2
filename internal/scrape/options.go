// Package scrape is the scrape engine: validated options in, a document out.
// It picks an engine, runs the HTML pipeline and knows nothing of HTTP handlers.
package scrape

import (
	"github.com/firegate/firegate/internal/threat"

	"encoding/json"
	"time"
)

// Options is a fully validated scrape request with every default applied.
// httpapi builds it from the v2 request body; the engine never sees raw JSON.
type Options struct {
	URL                 string
	Formats             []Format
	OnlyMainContent     bool
	OnlyCleanContent    bool
	IncludeTags         []string
	ExcludeTags         []string
	MaxAge              time.Duration
	MinAge              *time.Duration // nil = unset
	Headers             map[string]string
	WaitFor             time.Duration
	Mobile              bool
	SkipTLSVerification bool
	Timeout             time.Duration
	Parsers             []Parser
	Actions             []Action
	Location            Location
	RemoveBase64Images  bool
	BlockAds            bool
	Proxy               string // basic, enhanced, auto (stealth is normalized to enhanced)
	StoreInCache        bool
	Lockdown            bool
	RedactPII           *RedactPII // nil = off
	Profile             *Profile
	ThreatProtection    *ThreatProtection
	AuditMetadata       *AuditMetadata
	ZeroDataRetention   bool
	FastMode            bool
	DomainTools         bool
	Origin              string
	Integration         string

	// TeamID is the caller's team, set by the API layer (profiles are
	// per team). It is not part of the cache key.
	TeamID string
	// ProxySession, when set, keeps one proxy per host for every scrape
	// with the same value while that proxy works (a crawl sets its id).
	// Set by the crawler, never by a request; not part of the cache key.
	ProxySession string `json:"-"`
	// ChangeVisibility is the changeTracking visibility of the page: ""
	// (visible) or VisibilityHidden for a crawl's page known only from
	// earlier crawls. Set by the crawler, never by a request.
	ChangeVisibility string `json:"-"`
}

// Format type names.
const (
	FormatMarkdown          = "markdown"
	FormatHTML              = "html"
	FormatRawHTML           = "rawHtml"
	FormatRawBase64         = "rawBase64"
	FormatLinks             = "links"
	FormatImages            = "images"
	FormatSummary           = "summary"
	FormatJSON              = "json"
	FormatDeterministicJSON = "deterministicJson"
	FormatChangeTracking    = "changeTracking"
	FormatScreenshot        = "screenshot"
	FormatAttributes        = "attributes"
	FormatQuestion          = "question"
	FormatHighlights        = "highlights"
	FormatQuery             = "query"
	FormatBranding          = "branding"
	FormatProduct           = "product"
	FormatMenu              = "menu"
	FormatAudio             = "audio"
	FormatVideo             = "video"
)

// Format is one requested output format. Only the fields of its Type are set.
type Format struct {
	Type string

	// json, deterministicJson, changeTracking
	Schema json.RawMessage
	Prompt string
	// json: abort with ErrPromptInjection when the page tries to steer the
	// model (see DetectPromptInjection).
	CheckPromptInjection bool `json:",omitempty"`
	// changeTracking
	Modes []string
	Tag   *string
	// screenshot
	FullPage bool
	Quality  *int
	Viewport *Viewport
	// attributes
	Selectors []AttributeSelector
	// question
	Question string
	// highlights
	Query string
	// query (deprecated): Prompt plus Mode freeform|directQuote
	Mode string
}

// Viewport is a width and height in CSS pixels.
type Viewport struct {
	Width  int
	Height int
}

// AttributeSelector asks for one attribute of every element matching Selector.
type AttributeSelector struct {
	Selector  string
	Attribute string
}

// Parser is one item of the parsers option.
type Parser struct {
	Type        string // pdf
	Mode        string // fast, auto, ocr
	MaxPages    int    // 0 = no limit
	Pages       bool
	Blocks      bool
	PageMarkers bool
}

// Action is one browser action; only the fields of its Type are set.
type Action struct {
	Type         string
	Milliseconds int    // wait
	Selector     string // wait, click, scroll
	FullPage     bool   // screenshot
	Quality      *int   // screenshot
	Viewport     *Viewport
	All          bool    // click
	Text         string  // write
	Key          string  // press
	Direction    string  // scroll: up, down
	Script       string  // executeJavascript
	PDFFormat    string  // pdf
	Landscape    bool    // pdf
	Scale        float64 // pdf
}

// Location selects country and languages.
type Location struct {
	Country   string // upper-case ISO 3166-1 alpha-2
	Languages []string
	// CountryNamed reports that the request named the country (Country
	// is "US" by default): without a proxy of it, the answer warns.
	CountryNamed bool `json:"-"`
}

// RedactPII tunes PII redaction.
type RedactPII struct {
	Mode         string // accurate, aggressive, fast
	Entities     []string
	ReplaceStyle string // tag, mask, remove
}

// Profile names persistent browser storage.
type Profile struct {
	Name        string
	SaveChanges bool
}

// ThreatProtection overrides threat protection (see package threat).
type ThreatProtection = threat.Override

// AuditMetadata is caller bookkeeping.
type AuditMetadata struct {
	Username string
}

// HasFormat reports whether a format of type t was requested.
func (o *Options) HasFormat(t string) bool {
	for _, f := range o.Formats {
		if f.Type == t {
			return true
		}
	}
	return false
}

// FormatOf returns the first format of type t.
func (o *Options) FormatOf(t string) (Format, bool) {
	for _, f := range o.Formats {
		if f.Type == t {
			return f, true
		}
	}
	return Format{}, false
}
