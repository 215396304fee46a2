package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"slices"
	"time"

	"github.com/andybalholm/cascadia"

	"github.com/firegate/firegate/internal/scrape"
)

// Defaults and bounds of the scrape options (seed "Scrape request body",
// "Limits"; reference §3.1).
const (
	defaultTimeoutMs      = 60000
	minTimeoutMs          = 1000
	maxTimeoutMs          = 300000
	maxWaitForMs          = 60000
	defaultMaxAgeMs       = 172800000   // 2 days
	lockdownMaxAgeMs      = 63072000000 // 2 years
	maxActions            = 50
	maxActionsWaitMs      = 60000
	waitSelectorBudgetMs  = 1000
	changeTrackingWaitMs  = 5000
	maxPromptLen          = 10000
	maxParserPages        = 10000
	maxViewportWidth      = 7680
	maxViewportHeight     = 4320
	maxProfileNameLen     = 128
	maxAuditUsernameLen   = 1024
	maxThreatListLen      = 1000
	maxCatalogCalls       = 10
	maxCatalogNameLen     = 200
	defaultOrigin         = "api"
	msgWaitForHalfTimeout = "waitFor must not exceed half of timeout"
	msgTooManyActions     = "Number of actions cannot exceed 50"
	msgActionsWaitTotal   = "Total wait time (waitFor + wait actions, counting 1000 ms per selector wait) cannot exceed 60000 ms"
	msgWaitForm           = "A wait action needs exactly one of 'milliseconds' or 'selector'"
	msgDuplicateFormat    = "Duplicate format types are not allowed"
	msgOneScreenshot      = "Only one screenshot format may be specified"
	msgRawBase64Only      = "The rawBase64 format cannot be combined with other formats"
	msgChangeTrackingMD   = "The changeTracking format requires the markdown format to be specified as well"
	msgJSONDeterministic  = "The json and deterministicJson formats cannot be combined"
	msgCatalogCombined    = "catalog cannot be combined with url, formats or other scrape options; only timeout, origin and integration are allowed"
	msgInvalidSelector    = "Invalid CSS selector"
	msgInvalidDomain      = "Expected a bare host name or a *.host glob"

	// maxDurationMs keeps millisecond values inside time.Duration. Larger
	// maxAge/minAge values are clamped (they mean "forever" anyway).
	maxDurationMs = math.MaxInt64 / int64(time.Millisecond)
)

// scrapeRequest is a decoded, validated POST /v2/scrape body.
type scrapeRequest struct {
	Options scrape.Options // every default applied (when not a catalog call)
	Catalog []catalogCall  // non-nil for a catalog call (then Options only has Timeout, Origin, Integration)
}

// catalogCall is one catalogued provider tool call.
type catalogCall struct {
	Provider, Capability string
	Options              map[string]any
}

// decodeScrapeRequest reads, decodes and validates a POST /v2/scrape body.
// The error is always an *Error: 413 for a body over the router's limit, 400
// BAD_REQUEST_INVALID_JSON for a body that is not one JSON object, 400
// BAD_REQUEST with per-field details for a body that breaks the contract.
func decodeScrapeRequest(r io.Reader) (scrapeRequest, error) {
	fields, apiErr := readJSONObject(r)
	if apiErr != nil {
		return scrapeRequest{}, apiErr
	}
	return validateScrapeRequest(fields)
}

// validateScrapeRequest validates the members of a POST /v2/scrape body.
func validateScrapeRequest(fields jsonObject) (scrapeRequest, error) {
	var v validator
	req := v.scrapeRequest(fields)
	if err := v.err(); err != nil {
		return scrapeRequest{}, err
	}
	return req, nil
}

// isScrapeRequestKey reports whether k is a top-level key of POST /v2/scrape.
func isScrapeRequestKey(k string) bool {
	switch k {
	case "url", "catalog", "origin", "integration":
		return true
	}
	return isScrapeOptionKey(k)
}

// isScrapeOptionKey reports whether k is a scrape option (reference §3.1),
// the part shared by scrape, batch scrape and crawl/search scrapeOptions.
func isScrapeOptionKey(k string) bool {
	switch k {
	case "formats", "onlyMainContent", "onlyCleanContent", "includeTags", "excludeTags",
		"maxAge", "minAge", "headers", "waitFor", "mobile", "skipTlsVerification", "timeout",
		"parsers", "actions", "location", "removeBase64Images", "blockAds", "proxy",
		"storeInCache", "lockdown", "redactPII", "profile", "threatProtection",
		"auditMetadata", "zeroDataRetention", "fastMode", "domainTools":
		return true
	}
	return false
}

// isCatalogSibling reports whether k may appear next to catalog.
func isCatalogSibling(k string) bool {
	switch k {
	case "catalog", "timeout", "origin", "integration":
		return true
	}
	return false
}

// scrapeRequest validates the top-level members of a scrape body.
func (v *validator) scrapeRequest(fields jsonObject) scrapeRequest {
	v.checkKeys(nil, fields, isScrapeRequestKey)
	origin, integration := v.bookkeeping(nil, fields)

	if present(fields, "catalog") {
		var mixed []string
		for _, f := range fields {
			k := f.key
			if !isCatalogSibling(k) && isScrapeRequestKey(k) && present(fields, k) && !slices.Contains(mixed, k) {
				mixed = append(mixed, k)
				v.addCustom([]any{k}, codeCustom, msgCatalogCombined)
			}
		}
		calls := v.catalog([]any{"catalog"}, fields.get("catalog"))
		return scrapeRequest{
			Options: scrape.Options{Timeout: v.timeout(nil, fields), Origin: origin, Integration: integration},
			Catalog: calls,
		}
	}

	u := v.url(nil, fields)
	opts := v.scrapeOptions(nil, fields)
	opts.URL, opts.Origin, opts.Integration = u, origin, integration
	return scrapeRequest{Options: opts}
}

// bookkeeping reads the origin (default "api") and integration strings.
func (v *validator) bookkeeping(path []any, m jsonObject) (origin, integration string) {
	origin = defaultOrigin
	if s, ok := v.optString(path, m, "origin"); ok {
		origin = s
	}
	integration, _ = v.optString(path, m, "integration")
	return origin, integration
}

// url reads the required url field of m.
func (v *validator) url(path []any, m jsonObject) string {
	p := at(path, "url")
	if !present(m, "url") {
		v.addCustom(p, codeInvalidType, msgInvalidURL)
		return ""
	}
	if k := kindOf(m.get("url")); k != kindString {
		v.addCustom(p, codeInvalidType, msgInvalidURL)
		return ""
	}
	s, ok := v.str(p, m.get("url"))
	if !ok {
		return ""
	}
	u, ok := normalizeURL(s)
	if !ok {
		v.addCustom(p, codeInvalidString, msgInvalidURL)
		return ""
	}
	return u
}

// timeout reads the timeout field (ms, 1000..300000, default 60000).
func (v *validator) timeout(path []any, m jsonObject) time.Duration {
	ms, ok := v.optInt(path, m, "timeout", minTimeoutMs, maxTimeoutMs)
	if !ok {
		ms = defaultTimeoutMs
	}
	return time.Duration(ms) * time.Millisecond
}

// catalog reads the catalog member: one call object or 1..10 of them.
func (v *validator) catalog(path []any, raw json.RawMessage) []catalogCall {
	switch kindOf(raw) {
	case kindObject:
		c, ok := v.catalogCall(path, raw)
		if !ok {
			return nil
		}
		return []catalogCall{c}
	case kindArray:
	default:
		v.typeMismatch(path, "object or array", kindOf(raw))
		return nil
	}
	items, _ := v.array(path, raw)
	if len(items) < 1 {
		v.add(path, codeTooSmall, "Array must contain at least 1 element(s)")
		return nil
	}
	if len(items) > maxCatalogCalls {
		v.add(path, codeTooBig, "Array must contain at most 10 element(s)")
		return nil
	}
	calls := make([]catalogCall, 0, len(items))
	for i, item := range items {
		if c, ok := v.catalogCall(at(path, i), item); ok {
			calls = append(calls, c)
		}
	}
	return calls
}

// catalogCall reads one {provider, capability, options} object.
func (v *validator) catalogCall(path []any, raw json.RawMessage) (catalogCall, bool) {
	m, ok := v.object(path, raw)
	if !ok {
		return catalogCall{}, false
	}
	n := len(v.details)
	v.checkKeys(path, m, keysIn("provider", "capability", "options"))
	var c catalogCall
	c.Provider, _ = v.reqString(path, m, "provider", 1, maxCatalogNameLen)
	c.Capability, _ = v.reqString(path, m, "capability", 1, maxCatalogNameLen)
	c.Options = map[string]any{}
	if present(m, "options") {
		p := at(path, "options")
		if k := kindOf(m.get("options")); k != kindObject {
			v.typeMismatch(p, "object", k)
		} else {
			dec := json.NewDecoder(bytes.NewReader(m.get("options")))
			dec.UseNumber()
			if err := dec.Decode(&c.Options); err != nil {
				v.typeMismatch(p, "object", kindInvalid)
			}
		}
	}
	return c, len(v.details) == n
}

// nestedScrapeOptions validates a standalone scrape options object, such as
// crawl's or search's scrapeOptions member at path: unknown keys are
// rejected and every default applied. (Search, whose formats default to []
// = do not scrape, overrides Formats when the member has no formats.)
func (v *validator) nestedScrapeOptions(path []any, raw json.RawMessage) scrape.Options {
	m, ok := v.object(path, raw)
	if !ok {
		return v.scrapeOptions(path, nil)
	}
	v.checkKeys(path, m, isScrapeOptionKey)
	return v.scrapeOptions(path, m)
}

// scrapeOptions reads and validates the scrape options among the members of
// m (an object at path), applying every default. Keys that are not scrape
// options are ignored here: the caller checks unknown keys, since the set of
// sibling keys differs between scrape, batch scrape and scrapeOptions.
//
// Notes on choices the contract leaves open: minAge 0 is kept as given
// (MinAge points at 0, "cache only, any age is acceptable"); maxAge and
// minAge beyond time.Duration's range are clamped; a changeTracking format
// raises waitFor to 5000 ms after the waitFor rules were checked on the value
// sent. location.country must be two upper-case letters (the contract's
// pattern): "us" is a 400, not upper-cased.
func (v *validator) scrapeOptions(path []any, m jsonObject) scrape.Options {
	o := scrape.Options{
		Formats:            []scrape.Format{{Type: scrape.FormatMarkdown}},
		OnlyMainContent:    true,
		RemoveBase64Images: true,
		BlockAds:           true,
		Proxy:              "auto",
		StoreInCache:       true,
		Parsers:            []scrape.Parser{{Type: "pdf", Mode: "auto"}},
		Location:           scrape.Location{Country: "US"},
	}
	if present(m, "formats") {
		if f, ok := v.formats(at(path, "formats"), m.get("formats")); ok {
			o.Formats = f
		}
	}
	o.OnlyMainContent = v.optBool(path, m, "onlyMainContent", true)
	o.OnlyCleanContent = v.optBool(path, m, "onlyCleanContent", false)
	o.IncludeTags = v.selectorList(path, m, "includeTags")
	o.ExcludeTags = v.selectorList(path, m, "excludeTags")

	maxAge, maxAgeSet := v.optInt(path, m, "maxAge", 0, math.MaxInt64)
	if minAge, ok := v.optInt(path, m, "minAge", 0, math.MaxInt64); ok {
		d := msDuration(minAge)
		o.MinAge = &d
	}
	o.Headers = v.headers(path, m)

	waitFor, waitForSet := v.optInt(path, m, "waitFor", 0, maxWaitForMs)
	o.Mobile = v.optBool(path, m, "mobile", false)
	skipTLS, skipTLSSet := v.optBool(path, m, "skipTlsVerification", true), present(m, "skipTlsVerification")
	timeoutMs, timeoutSet := v.optInt(path, m, "timeout", minTimeoutMs, maxTimeoutMs)
	if !timeoutSet {
		timeoutMs = defaultTimeoutMs
	}
	if present(m, "parsers") {
		if p, ok := v.parsers(at(path, "parsers"), m.get("parsers")); ok {
			o.Parsers = p
		}
	}
	var actionsWaitMs int64
	actionsOK := true
	if present(m, "actions") {
		o.Actions, actionsWaitMs, actionsOK = v.actions(at(path, "actions"), m.get("actions"))
	}
	if present(m, "location") {
		o.Location = v.location(at(path, "location"), m.get("location"))
	}
	o.RemoveBase64Images = v.optBool(path, m, "removeBase64Images", true)
	o.BlockAds = v.optBool(path, m, "blockAds", true)
	o.Proxy = v.optEnum(path, m, "proxy", "auto", "basic", "enhanced", "auto", "stealth")
	if o.Proxy == "stealth" {
		o.Proxy = "enhanced"
	}
	o.StoreInCache = v.optBool(path, m, "storeInCache", true)
	o.Lockdown = v.optBool(path, m, "lockdown", false)
	if present(m, "redactPII") {
		o.RedactPII = v.redactPII(at(path, "redactPII"), m.get("redactPII"))
	}
	if present(m, "profile") {
		o.Profile = v.profile(at(path, "profile"), m.get("profile"))
	}
	if present(m, "threatProtection") {
		o.ThreatProtection = v.threatProtection(at(path, "threatProtection"), m.get("threatProtection"))
	}
	if present(m, "auditMetadata") {
		o.AuditMetadata = v.auditMetadata(at(path, "auditMetadata"), m.get("auditMetadata"))
	}
	o.ZeroDataRetention = v.optBool(path, m, "zeroDataRetention", false)
	o.FastMode = v.optBool(path, m, "fastMode", false)
	o.DomainTools = v.optBool(path, m, "domainTools", false)

	// Cross-field rules, checked only over values that are valid themselves.
	if waitForSet && timeoutSet && 2*waitFor > timeoutMs {
		v.addCustom(at(path, "waitFor"), codeCustom, msgWaitForHalfTimeout)
	}
	if actionsOK && waitFor+actionsWaitMs > maxActionsWaitMs {
		v.addCustom(at(path, "actions"), codeCustom, msgActionsWaitTotal)
	}

	// Defaults that depend on other fields.
	sensitive := len(o.Headers) > 0 || len(o.Actions) > 0
	o.SkipTLSVerification = skipTLS
	if !skipTLSSet && sensitive {
		o.SkipTLSVerification = false
	}
	if sensitive {
		o.StoreInCache = false
	}
	switch {
	case maxAgeSet:
		o.MaxAge = msDuration(maxAge)
	case o.Lockdown:
		o.MaxAge = lockdownMaxAgeMs * time.Millisecond
	default:
		o.MaxAge = defaultMaxAgeMs * time.Millisecond
	}
	if o.HasFormat(scrape.FormatChangeTracking) && waitFor < changeTrackingWaitMs {
		waitFor = changeTrackingWaitMs
	}
	o.WaitFor = time.Duration(waitFor) * time.Millisecond
	o.Timeout = time.Duration(timeoutMs) * time.Millisecond
	return o
}

// msDuration converts milliseconds to a Duration, clamping at the maximum.
func msDuration(ms int64) time.Duration {
	if ms > maxDurationMs {
		return math.MaxInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// selectorList reads an optional array of CSS selectors (includeTags,
// excludeTags); every item must compile.
func (v *validator) selectorList(path []any, m jsonObject, key string) []string {
	if !present(m, key) {
		return nil
	}
	p := at(path, key)
	items, ok := v.array(p, m.get(key))
	if !ok {
		return nil
	}
	out := make([]string, 0, len(items))
	for i, item := range items {
		s, ok := v.str(at(p, i), item)
		if !ok {
			continue
		}
		if !validSelector(s) {
			v.add(at(p, i), codeInvalidString, msgInvalidSelector)
			continue
		}
		out = append(out, s)
	}
	return out
}

// headers reads the optional headers object (string values only).
func (v *validator) headers(path []any, m jsonObject) map[string]string {
	if !present(m, "headers") {
		return nil
	}
	p := at(path, "headers")
	hm, ok := v.object(p, m.get("headers"))
	if !ok {
		return nil
	}
	out := make(map[string]string, len(hm))
	for _, h := range hm {
		if s, ok := v.str(at(p, h.key), h.raw); ok {
			out[h.key] = s
		}
	}
	return out
}

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
			v.add(path, codeInvalidEnum, "Invalid format. Expected "+formatTypes+", received '"+t+"'")
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
			v.add(tp, codeInvalidDiscriminator, "Invalid discriminator value. Expected "+formatTypes+", received '"+t+"'")
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
			if _, err := cascadia.Compile(sel); err != nil {
				v.add(at(ip, "selector"), codeInvalidString, msgInvalidSelector)
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

// actionFields lists the members each action may have besides type.
func actionFields(t string) ([]string, bool) {
	switch t {
	case "wait":
		return []string{"milliseconds", "selector"}, true
	case "screenshot":
		return []string{"fullPage", "quality", "viewport"}, true
	case "click":
		return []string{"selector", "all"}, true
	case "write":
		return []string{"text"}, true
	case "press":
		return []string{"key"}, true
	case "scroll":
		return []string{"direction", "selector"}, true
	case "scrape":
		return nil, true
	case "executeJavascript":
		return []string{"script"}, true
	case "pdf":
		return []string{"format", "landscape", "scale"}, true
	}
	return nil, false
}

const actionTypes = "'wait' | 'screenshot' | 'click' | 'write' | 'press' | 'scroll' | 'scrape' | 'executeJavascript' | 'pdf'"

// actions reads the actions array. It returns the actions, the wait time
// they add (sum of wait milliseconds plus 1000 per selector wait) and
// whether they were all valid.
func (v *validator) actions(path []any, raw json.RawMessage) ([]scrape.Action, int64, bool) {
	items, ok := v.array(path, raw)
	if !ok {
		return nil, 0, false
	}
	if len(items) > maxActions {
		v.addCustom(path, codeTooBig, msgTooManyActions)
		return nil, 0, false
	}
	n := len(v.details)
	out := make([]scrape.Action, 0, len(items))
	var waitMs int64
	for i, item := range items {
		a, ok := v.action(at(path, i), item)
		if !ok {
			continue
		}
		if a.Type == "wait" {
			if a.Selector != "" {
				waitMs += waitSelectorBudgetMs
			} else {
				waitMs += int64(a.Milliseconds)
			}
		}
		out = append(out, a)
	}
	return out, waitMs, len(v.details) == n
}

// action reads one action object, discriminated by type.
func (v *validator) action(path []any, raw json.RawMessage) (scrape.Action, bool) {
	m, ok := v.object(path, raw)
	if !ok {
		return scrape.Action{}, false
	}
	tp := at(path, "type")
	if !present(m, "type") {
		v.add(tp, codeInvalidDiscriminator, "Invalid discriminator value. Expected "+actionTypes)
		return scrape.Action{}, false
	}
	t, ok := v.str(tp, m.get("type"))
	if !ok {
		return scrape.Action{}, false
	}
	allowed, known := actionFields(t)
	if !known {
		v.add(tp, codeInvalidDiscriminator, "Invalid discriminator value. Expected "+actionTypes+", received '"+t+"'")
		return scrape.Action{}, false
	}
	n := len(v.details)
	v.checkKeys(path, m, func(k string) bool { return k == "type" || slices.Contains(allowed, k) })
	a := scrape.Action{Type: t}
	switch t {
	case "wait":
		hasMs, hasSel := present(m, "milliseconds"), present(m, "selector")
		if hasMs == hasSel {
			v.addCustom(path, codeCustom, msgWaitForm)
			break
		}
		if hasMs {
			// No bound of its own: the total wait budget reports it.
			ms, _ := v.integer(at(path, "milliseconds"), m.get("milliseconds"), 1, math.MaxInt32)
			a.Milliseconds = int(ms)
		} else {
			a.Selector, _ = v.reqString(path, m, "selector", 1, math.MaxInt)
		}
	case "screenshot":
		a.FullPage, a.Quality, a.Viewport = v.screenshotFields(path, m)
	case "click":
		a.Selector, _ = v.reqString(path, m, "selector", 0, math.MaxInt)
		a.All = v.optBool(path, m, "all", false)
	case "write":
		a.Text, _ = v.reqString(path, m, "text", 0, math.MaxInt)
	case "press":
		a.Key, _ = v.reqString(path, m, "key", 0, math.MaxInt)
	case "scroll":
		a.Direction = v.optEnum(path, m, "direction", "down", "up", "down")
		a.Selector, _ = v.optString(path, m, "selector")
	case "executeJavascript":
		a.Script, _ = v.reqString(path, m, "script", 0, math.MaxInt)
	case "pdf":
		a.PDFFormat = v.optEnum(path, m, "format", "Letter",
			"A0", "A1", "A2", "A3", "A4", "A5", "A6", "Letter", "Legal", "Tabloid", "Ledger")
		a.Landscape = v.optBool(path, m, "landscape", false)
		a.Scale = 1
		if present(m, "scale") {
			p := at(path, "scale")
			if s, ok := v.number(p, m.get("scale")); ok {
				if s > 0 && !math.IsInf(s, 0) {
					a.Scale = s
				} else {
					v.add(p, codeTooSmall, "Number must be greater than 0")
				}
			}
		}
	}
	return a, len(v.details) == n
}

// location reads the location object.
func (v *validator) location(path []any, raw json.RawMessage) scrape.Location {
	loc := scrape.Location{Country: "US"}
	m, ok := v.object(path, raw)
	if !ok {
		return loc
	}
	v.checkKeys(path, m, keysIn("country", "languages"))
	if s, ok := v.optString(path, m, "country"); ok {
		switch {
		case !upperPair(s):
			v.addCustom(at(path, "country"), codeInvalidString, msgCountryPattern)
		case !knownCountry(s):
			v.addCustom(at(path, "country"), codeCustom, msgInvalidCountry)
		default:
			loc.Country = s
		}
	}
	if present(m, "languages") {
		loc.Languages, _ = v.stringList(at(path, "languages"), m.get("languages"), math.MaxInt)
	}
	return loc
}

// piiEntities are the entity kinds redactPII knows, in the contract's order.
func piiEntities() []string {
	return []string{"PERSON", "EMAIL", "PHONE", "LOCATION", "FINANCIAL", "SECRET"}
}

// redactPII reads redactPII: a boolean or a tuning object. false is off
// (nil); true and an object without entities cover every entity.
func (v *validator) redactPII(path []any, raw json.RawMessage) *scrape.RedactPII {
	if kindOf(raw) == kindBool {
		on, _ := v.boolean(path, raw)
		if !on {
			return nil
		}
		return &scrape.RedactPII{Mode: "accurate", Entities: piiEntities(), ReplaceStyle: "tag"}
	}
	if kindOf(raw) != kindObject {
		v.typeMismatch(path, "boolean or object", kindOf(raw))
		return nil
	}
	m, _ := v.object(path, raw)
	v.checkKeys(path, m, keysIn("mode", "entities", "replaceStyle"))
	r := &scrape.RedactPII{
		Mode:         v.optEnum(path, m, "mode", "accurate", "accurate", "aggressive", "fast"),
		ReplaceStyle: v.optEnum(path, m, "replaceStyle", "tag", "tag", "mask", "remove"),
		Entities:     piiEntities(),
	}
	if present(m, "entities") {
		p := at(path, "entities")
		if items, ok := v.array(p, m.get("entities")); ok {
			r.Entities = make([]string, 0, len(items))
			for i, item := range items {
				if s, ok := v.enum(at(p, i), item, piiEntities()...); ok {
					r.Entities = append(r.Entities, s)
				}
			}
		}
	}
	return r
}

// profile reads the profile object.
func (v *validator) profile(path []any, raw json.RawMessage) *scrape.Profile {
	m, ok := v.object(path, raw)
	if !ok {
		return nil
	}
	v.checkKeys(path, m, keysIn("name", "saveChanges"))
	name, ok := v.reqString(path, m, "name", 1, maxProfileNameLen)
	save := v.optBool(path, m, "saveChanges", true)
	if !ok {
		return nil
	}
	return &scrape.Profile{Name: name, SaveChanges: save}
}

// threatProtection reads the threat-protection override object.
func (v *validator) threatProtection(path []any, raw json.RawMessage) *scrape.ThreatProtection {
	m, ok := v.object(path, raw)
	if !ok {
		return nil
	}
	v.checkKeys(path, m, keysIn("mode", "riskScoreThreshold", "blacklist", "whitelist", "blockedTlds", "failurePolicy"))
	tp := &scrape.ThreatProtection{
		Mode:          v.optEnum(path, m, "mode", "", "off", "normal"),
		FailurePolicy: v.optEnum(path, m, "failurePolicy", "", "open", "closed"),
	}
	if n, ok := v.optInt(path, m, "riskScoreThreshold", 0, 100); ok {
		ni := int(n)
		tp.RiskScoreThreshold = &ni
	}
	tp.Blacklist = v.domainList(path, m, "blacklist")
	tp.Whitelist = v.domainList(path, m, "whitelist")
	if present(m, "blockedTlds") {
		tp.BlockedTLDs, _ = v.stringList(at(path, "blockedTlds"), m.get("blockedTlds"), maxThreatListLen)
	}
	return tp
}

// domainList reads a list of at most 1000 bare hosts or *.host globs.
func (v *validator) domainList(path []any, m jsonObject, key string) []string {
	if !present(m, key) {
		return nil
	}
	p := at(path, key)
	list, ok := v.stringList(p, m.get(key), maxThreatListLen)
	if !ok {
		return nil
	}
	for i, d := range list {
		if !validDomainPattern(d) {
			v.add(at(p, i), codeInvalidString, msgInvalidDomain)
		}
	}
	return list
}

// validDomainPattern reports whether d is a bare host (no scheme, path, port
// or spaces) optionally prefixed by "*.".
func validDomainPattern(d string) bool {
	h := d
	if len(h) > 2 && h[:2] == "*." {
		h = h[2:]
	}
	if h == "" {
		return false
	}
	for _, c := range []byte(h) {
		switch c {
		case '/', ':', '*', '@', '?', '#', ' ', '\t', '\n', '\r', '\\':
			return false
		}
	}
	return true
}

// auditMetadata reads the audit metadata object.
func (v *validator) auditMetadata(path []any, raw json.RawMessage) *scrape.AuditMetadata {
	m, ok := v.object(path, raw)
	if !ok {
		return nil
	}
	v.checkKeys(path, m, keysIn("username"))
	name, ok := v.reqString(path, m, "username", 0, maxAuditUsernameLen)
	if !ok {
		return nil
	}
	return &scrape.AuditMetadata{Username: name}
}
