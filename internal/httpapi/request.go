package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/firegate/firegate/internal/scrape"
	"golang.org/x/net/http/httpguts"
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
		v.addHeadlined(p, codeInvalidType, msgInvalidURL, msgURLMissing)
		return ""
	}
	if k := kindOf(m.get("url")); k != kindString {
		v.addHeadlined(p, codeInvalidType, msgInvalidURL, msgInvalidURL+": url must be a string, not "+k.String())
		return ""
	}
	s, ok := v.str(p, m.get("url"))
	if !ok {
		return ""
	}
	u, ok := normalizeURL(s)
	if !ok {
		v.addHeadlined(p, codeInvalidString, msgInvalidURL, malformedURL(s))
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
		if msg := selectorProblem(s); msg != "" {
			v.add(at(p, i), codeInvalidString, msg)
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
	if len(hm) > maxHeaders {
		v.add(p, codeTooBig, fmt.Sprintf("At most %d headers may be sent", maxHeaders))
		return nil
	}
	out := make(map[string]string, len(hm))
	for _, h := range hm {
		hp := at(p, h.key)
		s, ok := v.str(hp, h.raw)
		switch {
		case !ok:
		case !httpguts.ValidHeaderFieldName(h.key):
			v.add(hp, codeInvalidString, msgHeaderName)
		case !httpguts.ValidHeaderFieldValue(s):
			v.add(hp, codeInvalidString, msgHeaderValue)
		case len(s) > maxHeaderValue:
			v.add(hp, codeTooBig, fmt.Sprintf("A header value may be at most %d characters", maxHeaderValue))
		default:
			out[h.key] = s
		}
	}
	return out
}

// Bounds of the headers option: a request line's worth for each value,
// and a count no real browser comes near.
const (
	maxHeaders     = 100
	maxHeaderValue = 8192
	msgHeaderName  = "Invalid header name: a header name is a token (letters, digits and !#$%&'*+-.^_`|~)"
	msgHeaderValue = "Invalid header value: a header value may not contain control characters such as CR, LF or NUL"
)

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
			loc.Country, loc.CountryNamed = s, true
		}
	}
	if present(m, "languages") {
		lp := at(path, "languages")
		langs, good := v.stringList(lp, m.get("languages"), maxLanguages)
		for i, l := range langs {
			if !good {
				break // the items' errors are reported; indices would not match
			}
			if !languageTag(l) {
				v.add(at(lp, i), codeInvalidString, msgLanguageTag)
				continue
			}
			loc.Languages = append(loc.Languages, l)
		}
	}
	return loc
}

// maxLanguages bounds location.languages: they become the Accept-Language
// header and the browser's locale list, in priority order.
const (
	maxLanguages   = 20
	msgLanguageTag = "Invalid language tag: use a BCP 47 tag such as en-US or fr"
)

// languageTag reports whether s has the shape of a BCP 47 language tag:
// subtags of 1-8 letters or digits joined by hyphens (or underscores, as
// locales are often written), the first letters only; or "*". It is what
// may go into an Accept-Language header as it is.
func languageTag(s string) bool {
	if s == "*" {
		return true
	}
	if s == "" || len(s) > 64 {
		return false
	}
	for i, sub := range strings.Split(strings.ReplaceAll(s, "_", "-"), "-") {
		if len(sub) == 0 || len(sub) > 8 {
			return false
		}
		for _, r := range sub {
			letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
			if !letter && (i == 0 || r < '0' || r > '9') {
				return false
			}
		}
	}
	return true
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
