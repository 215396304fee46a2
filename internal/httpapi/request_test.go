package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/firegate/firegate/internal/scrape"
)

const testURL = "https://example.com/page"

// with returns a scrape body for testURL plus the given members.
func with(members string) string {
	if members == "" {
		return `{"url":"` + testURL + `"}`
	}
	return `{"url":"` + testURL + `",` + members + `}`
}

// manyHeaders returns n header members "X-Hn":"v".
func manyHeaders(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"X-H%d":"v"`, i)
	}
	return strings.Join(parts, ",")
}

// defaultOptions is what a body with only url decodes to.
func defaultOptions(u string) scrape.Options {
	return scrape.Options{
		URL:                 u,
		Formats:             []scrape.Format{{Type: scrape.FormatMarkdown}},
		OnlyMainContent:     true,
		MaxAge:              172800000 * time.Millisecond,
		SkipTLSVerification: true,
		Timeout:             60 * time.Second,
		Parsers:             []scrape.Parser{{Type: "pdf", Mode: "auto"}},
		Location:            scrape.Location{Country: "US"},
		RemoveBase64Images:  true,
		BlockAds:            true,
		Proxy:               "auto",
		StoreInCache:        true,
		Origin:              "api",
	}
}

func ptr[T any](v T) *T { return &v }

func TestDecodeScrapeRequestOK(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want func(o *scrape.Options) // edits defaultOptions(testURL)
	}{
		{name: "defaults", body: with(""), want: func(*scrape.Options) {}},
		{name: "url without scheme gets http", body: `{"url":"example.com/a?b=1"}`,
			want: func(o *scrape.Options) { o.URL = "http://example.com/a?b=1" }},
		{name: "url with port and no scheme", body: `{"url":"example.com:8080/x"}`,
			want: func(o *scrape.Options) { o.URL = "http://example.com:8080/x" }},
		{name: "url localhost allowed", body: `{"url":"http://localhost:3000/x"}`,
			want: func(o *scrape.Options) { o.URL = "http://localhost:3000/x" }},
		{name: "url ipv4 literal", body: `{"url":"http://10.1.2.3/"}`,
			want: func(o *scrape.Options) { o.URL = "http://10.1.2.3/" }},
		{name: "url ipv6 literal", body: `{"url":"https://[::1]:8443/"}`,
			want: func(o *scrape.Options) { o.URL = "https://[::1]:8443/" }},
		{name: "url idn tld", body: `{"url":"https://пример.рф"}`,
			want: func(o *scrape.Options) { o.URL = "https://пример.рф" }},
		{name: "url punycode tld", body: `{"url":"https://xn--e1afmkfd.xn--p1ai/"}`,
			want: func(o *scrape.Options) { o.URL = "https://xn--e1afmkfd.xn--p1ai/" }},
		{name: "origin and integration", body: with(`"origin":"js-sdk","integration":"anything-goes"`),
			want: func(o *scrape.Options) { o.Origin, o.Integration = "js-sdk", "anything-goes" }},
		{name: "null fields are absent", body: with(`"formats":null,"waitFor":null,"timeout":null,"location":null,"redactPII":null,"headers":null,"origin":null`),
			want: func(*scrape.Options) {}},
		{name: "format string shorthand", body: with(`"formats":["html",{"type":"links"},"rawHtml"]`),
			want: func(o *scrape.Options) {
				o.Formats = []scrape.Format{{Type: "html"}, {Type: "links"}, {Type: "rawHtml"}}
			}},
		{name: "empty formats kept", body: with(`"formats":[]`),
			want: func(o *scrape.Options) { o.Formats = []scrape.Format{} }},
		{name: "rawBase64 alone", body: with(`"formats":["rawBase64"]`),
			want: func(o *scrape.Options) { o.Formats = []scrape.Format{{Type: "rawBase64"}} }},
		{name: "json schema normalized in order", body: with(`"formats":[{"type":"json","prompt":"p","schema":` +
			`{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"object","properties":{"x":{"type":"number"}},"required":["x","gone"],"additionalProperties":false}},` +
			`"required":["a","missing","b"],"additionalProperties":true,"$defs":{"d":{"type":"object","properties":{},"additionalProperties":true}}}}]`),
			want: func(o *scrape.Options) {
				o.Formats = []scrape.Format{{Type: "json", Prompt: "p", Schema: json.RawMessage(
					`{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"]}},` +
						`"required":["a","b"],"$defs":{"d":{"type":"object","properties":{}}}}`)}}
			}},
		{name: "deterministicJson without schema", body: with(`"formats":[{"type":"deterministicJson","prompt":"list"}]`),
			want: func(o *scrape.Options) { o.Formats = []scrape.Format{{Type: "deterministicJson", Prompt: "list"}} }},
		{name: "changeTracking defaults and waitFor raise", body: with(`"formats":["markdown","changeTracking"]`),
			want: func(o *scrape.Options) {
				o.Formats = []scrape.Format{{Type: "markdown"}, {Type: "changeTracking", Modes: []string{}}}
				o.WaitFor = 5 * time.Second
			}},
		{name: "changeTracking full", body: with(`"waitFor":7000,"formats":["markdown",{"type":"changeTracking","modes":["git-diff","json"],"tag":"t1","prompt":"p","schema":{"type":"object"}}]`),
			want: func(o *scrape.Options) {
				o.Formats = []scrape.Format{{Type: "markdown"}, {Type: "changeTracking", Modes: []string{"git-diff", "json"},
					Tag: ptr("t1"), Prompt: "p", Schema: json.RawMessage(`{"type":"object"}`)}}
				o.WaitFor = 7 * time.Second
			}},
		{name: "screenshot format", body: with(`"formats":[{"type":"screenshot","fullPage":true,"quality":80,"viewport":{"width":1280,"height":720}}]`),
			want: func(o *scrape.Options) {
				o.Formats = []scrape.Format{{Type: "screenshot", FullPage: true, Quality: ptr(80), Viewport: &scrape.Viewport{Width: 1280, Height: 720}}}
			}},
		{name: "attributes format", body: with(`"formats":[{"type":"attributes","selectors":[{"selector":"a.nav","attribute":"href"}]}]`),
			want: func(o *scrape.Options) {
				o.Formats = []scrape.Format{{Type: "attributes", Selectors: []scrape.AttributeSelector{{Selector: "a.nav", Attribute: "href"}}}}
			}},
		{name: "question highlights query", body: with(`"formats":[{"type":"question","question":"why?"},{"type":"highlights","query":"q"},{"type":"query","prompt":"p"}]`),
			want: func(o *scrape.Options) {
				o.Formats = []scrape.Format{{Type: "question", Question: "why?"}, {Type: "highlights", Query: "q"}, {Type: "query", Prompt: "p", Mode: "freeform"}}
			}},
		{name: "query directQuote", body: with(`"formats":[{"type":"query","prompt":"p","mode":"directQuote"}]`),
			want: func(o *scrape.Options) {
				o.Formats = []scrape.Format{{Type: "query", Prompt: "p", Mode: "directQuote"}}
			}},
		{name: "prompt of 10000 chars", body: with(`"formats":[{"type":"json","prompt":"` + strings.Repeat("é", 10000) + `"}]`),
			want: func(o *scrape.Options) {
				o.Formats = []scrape.Format{{Type: "json", Prompt: strings.Repeat("é", 10000)}}
			}},
		{name: "booleans", body: with(`"onlyMainContent":false,"onlyCleanContent":true,"mobile":true,"removeBase64Images":false,"blockAds":false,"zeroDataRetention":true,"fastMode":true,"domainTools":true`),
			want: func(o *scrape.Options) {
				o.OnlyMainContent, o.OnlyCleanContent, o.Mobile = false, true, true
				o.RemoveBase64Images, o.BlockAds = false, false
				o.ZeroDataRetention, o.FastMode, o.DomainTools = true, true, true
			}},
		{name: "include and exclude tags are css", body: with(`"includeTags":["article",".main > p","#x, div[data-a='1']"],"excludeTags":["iframe"]`),
			want: func(o *scrape.Options) {
				o.IncludeTags = []string{"article", ".main > p", "#x, div[data-a='1']"}
				o.ExcludeTags = []string{"iframe"}
			}},
		{name: "maxAge and minAge zero kept", body: with(`"maxAge":0,"minAge":0`),
			want: func(o *scrape.Options) { o.MaxAge = 0; o.MinAge = ptr(time.Duration(0)) }},
		{name: "minAge one", body: with(`"minAge":1`),
			want: func(o *scrape.Options) { o.MinAge = ptr(time.Millisecond) }},
		{name: "huge maxAge clamped", body: with(`"maxAge":1e300`),
			want: func(o *scrape.Options) { o.MaxAge = time.Duration(1<<63 - 1) }},
		{name: "lockdown default maxAge 2 years", body: with(`"lockdown":true`),
			want: func(o *scrape.Options) { o.Lockdown = true; o.MaxAge = 63072000000 * time.Millisecond }},
		{name: "lockdown keeps explicit maxAge", body: with(`"lockdown":true,"maxAge":1000`),
			want: func(o *scrape.Options) { o.Lockdown = true; o.MaxAge = time.Second }},
		{name: "integral numbers in other notations", body: with(`"timeout":3e4,"waitFor":1000.0`),
			want: func(o *scrape.Options) { o.Timeout = 30 * time.Second; o.WaitFor = time.Second }},
		{name: "waitFor exactly half of timeout", body: with(`"timeout":20000,"waitFor":10000`),
			want: func(o *scrape.Options) { o.Timeout = 20 * time.Second; o.WaitFor = 10 * time.Second }},
		{name: "waitFor without timeout not compared", body: with(`"waitFor":40000`),
			want: func(o *scrape.Options) { o.WaitFor = 40 * time.Second }},
		{name: "timeout bounds inclusive", body: with(`"timeout":300000`),
			want: func(o *scrape.Options) { o.Timeout = 300 * time.Second }},
		{name: "headers turn off tls skip and cache", body: with(`"headers":{"Cookie":"a=b","User-Agent":"x"}`),
			want: func(o *scrape.Options) {
				o.Headers = map[string]string{"Cookie": "a=b", "User-Agent": "x"}
				o.SkipTLSVerification, o.StoreInCache = false, false
			}},
		{name: "explicit skipTls wins over headers but cache forced off", body: with(`"headers":{"A":"b"},"skipTlsVerification":true,"storeInCache":true`),
			want: func(o *scrape.Options) {
				o.Headers = map[string]string{"A": "b"}
				o.SkipTLSVerification, o.StoreInCache = true, false
			}},
		{name: "empty headers and actions are not sensitive", body: with(`"headers":{},"actions":[]`),
			want: func(o *scrape.Options) { o.Headers = map[string]string{}; o.Actions = []scrape.Action{} }},
		{name: "skipTls false explicit", body: with(`"skipTlsVerification":false,"storeInCache":false`),
			want: func(o *scrape.Options) { o.SkipTLSVerification, o.StoreInCache = false, false }},
		{name: "parsers string pdf", body: with(`"parsers":["pdf"]`), want: func(*scrape.Options) {}},
		{name: "parsers empty means base64", body: with(`"parsers":[]`),
			want: func(o *scrape.Options) { o.Parsers = []scrape.Parser{} }},
		{name: "parser object", body: with(`"parsers":[{"type":"pdf","mode":"ocr","maxPages":10000,"blocks":true,"pageMarkers":true,"pages":false}]`),
			want: func(o *scrape.Options) {
				o.Parsers = []scrape.Parser{{Type: "pdf", Mode: "ocr", MaxPages: 10000, Blocks: true, PageMarkers: true}}
			}},
		{name: "parser pageMarkdown alias", body: with(`"parsers":[{"type":"pdf","pageMarkdown":true,"maxPages":1}]`),
			want: func(o *scrape.Options) {
				o.Parsers = []scrape.Parser{{Type: "pdf", Mode: "auto", MaxPages: 1, Pages: true}}
			}},
		{name: "every action", body: with(`"actions":[{"type":"wait","milliseconds":500},{"type":"wait","selector":"#ready"},` +
			`{"type":"click","selector":"button","all":true},{"type":"write","text":"hi"},{"type":"press","key":"Enter"},` +
			`{"type":"scroll"},{"type":"scroll","direction":"up","selector":".list"},{"type":"scrape"},` +
			`{"type":"executeJavascript","script":"return 1"},{"type":"screenshot","fullPage":true,"quality":50,"viewport":{"width":7680,"height":4320}},` +
			`{"type":"pdf"},{"type":"pdf","format":"A4","landscape":true,"scale":0.5}]`),
			want: func(o *scrape.Options) {
				o.Actions = []scrape.Action{
					{Type: "wait", Milliseconds: 500}, {Type: "wait", Selector: "#ready"},
					{Type: "click", Selector: "button", All: true}, {Type: "write", Text: "hi"}, {Type: "press", Key: "Enter"},
					{Type: "scroll", Direction: "down"}, {Type: "scroll", Direction: "up", Selector: ".list"}, {Type: "scrape"},
					{Type: "executeJavascript", Script: "return 1"},
					{Type: "screenshot", FullPage: true, Quality: ptr(50), Viewport: &scrape.Viewport{Width: 7680, Height: 4320}},
					{Type: "pdf", PDFFormat: "Letter", Scale: 1}, {Type: "pdf", PDFFormat: "A4", Landscape: true, Scale: 0.5},
				}
				o.SkipTLSVerification, o.StoreInCache = false, false
			}},
		{name: "action waits within budget", body: with(`"waitFor":10000,"actions":[{"type":"wait","milliseconds":49000},{"type":"wait","selector":"a"}]`),
			want: func(o *scrape.Options) {
				o.WaitFor = 10 * time.Second
				o.Actions = []scrape.Action{{Type: "wait", Milliseconds: 49000}, {Type: "wait", Selector: "a"}}
				o.SkipTLSVerification, o.StoreInCache = false, false
			}},
		{name: "fifty actions", body: with(`"actions":[` + strings.TrimSuffix(strings.Repeat(`{"type":"scrape"},`, 50), ",") + `]`),
			want: func(o *scrape.Options) {
				o.Actions = make([]scrape.Action, 50)
				for i := range o.Actions {
					o.Actions[i].Type = "scrape"
				}
				o.SkipTLSVerification, o.StoreInCache = false, false
			}},
		{name: "location", body: with(`"location":{"country":"DE","languages":["de-DE","en"]}`),
			want: func(o *scrape.Options) {
				o.Location = scrape.Location{Country: "DE", Languages: []string{"de-DE", "en"}, CountryNamed: true}
			}},
		{name: "location empty object", body: with(`"location":{}`), want: func(*scrape.Options) {}},
		{name: "proxy stealth is enhanced", body: with(`"proxy":"stealth"`),
			want: func(o *scrape.Options) { o.Proxy = "enhanced" }},
		{name: "proxy basic", body: with(`"proxy":"basic"`), want: func(o *scrape.Options) { o.Proxy = "basic" }},
		{name: "redactPII true", body: with(`"redactPII":true`),
			want: func(o *scrape.Options) {
				o.RedactPII = &scrape.RedactPII{Mode: "accurate", ReplaceStyle: "tag",
					Entities: []string{"PERSON", "EMAIL", "PHONE", "LOCATION", "FINANCIAL", "SECRET"}}
			}},
		{name: "redactPII false", body: with(`"redactPII":false`), want: func(*scrape.Options) {}},
		{name: "redactPII object", body: with(`"redactPII":{"mode":"fast","entities":["EMAIL","PHONE"],"replaceStyle":"mask"}`),
			want: func(o *scrape.Options) {
				o.RedactPII = &scrape.RedactPII{Mode: "fast", ReplaceStyle: "mask", Entities: []string{"EMAIL", "PHONE"}}
			}},
		{name: "redactPII empty object", body: with(`"redactPII":{}`),
			want: func(o *scrape.Options) {
				o.RedactPII = &scrape.RedactPII{Mode: "accurate", ReplaceStyle: "tag",
					Entities: []string{"PERSON", "EMAIL", "PHONE", "LOCATION", "FINANCIAL", "SECRET"}}
			}},
		{name: "profile defaults saveChanges", body: with(`"profile":{"name":"` + strings.Repeat("n", 128) + `"}`),
			want: func(o *scrape.Options) {
				o.Profile = &scrape.Profile{Name: strings.Repeat("n", 128), SaveChanges: true}
			}},
		{name: "profile saveChanges false", body: with(`"profile":{"name":"p","saveChanges":false}`),
			want: func(o *scrape.Options) { o.Profile = &scrape.Profile{Name: "p"} }},
		{name: "threatProtection", body: with(`"threatProtection":{"mode":"normal","riskScoreThreshold":0,"blacklist":["evil.com","*.bad.org"],"whitelist":[],"blockedTlds":["zip"],"failurePolicy":"closed"}`),
			want: func(o *scrape.Options) {
				o.ThreatProtection = &scrape.ThreatProtection{Mode: "normal", RiskScoreThreshold: ptr(0),
					Blacklist: []string{"evil.com", "*.bad.org"}, Whitelist: []string{}, BlockedTLDs: []string{"zip"}, FailurePolicy: "closed"}
			}},
		{name: "auditMetadata", body: with(`"auditMetadata":{"username":"` + strings.Repeat("u", 1024) + `"}`),
			want: func(o *scrape.Options) { o.AuditMetadata = &scrape.AuditMetadata{Username: strings.Repeat("u", 1024)} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := decodeScrapeRequest(strings.NewReader(tt.body))
			if err != nil {
				t.Fatalf("decodeScrapeRequest: %v (details %+v)", err, errDetails(err))
			}
			want := defaultOptions(testURL)
			tt.want(&want)
			if diff := cmp.Diff(scrapeRequest{Options: want}, got); diff != "" {
				t.Errorf("decodeScrapeRequest mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeScrapeRequestCatalog(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want scrapeRequest
	}{
		{name: "single object", body: `{"catalog":{"provider":"acme","capability":"search/web"}}`,
			want: scrapeRequest{Options: scrape.Options{Timeout: time.Minute, Origin: "api"},
				Catalog: []catalogCall{{Provider: "acme", Capability: "search/web", Options: map[string]any{}}}}},
		{name: "array with options and siblings", body: `{"catalog":[{"provider":"a","capability":"b","options":{"n":1.5,"q":"x"}},{"provider":"` +
			strings.Repeat("p", 200) + `","capability":"c"}],"timeout":5000,"origin":"sdk","integration":"_mine","url":null}`,
			want: scrapeRequest{Options: scrape.Options{Timeout: 5 * time.Second, Origin: "sdk", Integration: "_mine"},
				Catalog: []catalogCall{
					{Provider: "a", Capability: "b", Options: map[string]any{"n": json.Number("1.5"), "q": "x"}},
					{Provider: strings.Repeat("p", 200), Capability: "c", Options: map[string]any{}},
				}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := decodeScrapeRequest(strings.NewReader(tt.body))
			if err != nil {
				t.Fatalf("decodeScrapeRequest: %v (details %+v)", err, errDetails(err))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decodeScrapeRequest mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// errDetails renders an *Error's details as "path: code" lines.
func errDetails(err error) []string {
	var e *Error
	if !errors.As(err, &e) {
		return nil
	}
	fes, _ := e.Details.([]FieldError)
	var out []string
	for _, fe := range fes {
		parts := make([]string, len(fe.Path))
		for i, p := range fe.Path {
			parts[i] = fmt.Sprint(p)
		}
		out = append(out, strings.Join(parts, ".")+": "+fe.Code)
	}
	return out
}

// apiErr is the comparable part of an *Error.
type apiErr struct {
	Status  int
	Code    string
	Message string
	Details []string
}

func TestDecodeScrapeRequestErrors(t *testing.T) {
	t.Parallel()
	const (
		unrec  = msgUnrecognized
		badURL = msgInvalidURL
		bad    = msgBadRequest
	)
	invalidJSON := apiErr{Status: 400, Code: "BAD_REQUEST_INVALID_JSON", Message: "Bad request, malformed JSON"}
	tests := []struct {
		name    string
		body    string
		msg     string   // error text
		details []string // "path: code"
		whole   *apiErr  // when set, compared instead of msg/details
	}{
		// Body shape.
		{name: "malformed", body: `{"url":`, whole: &invalidJSON},
		{name: "trailing garbage", body: `{"url":"a.com"} {}`, whole: &invalidJSON},
		{name: "array body", body: `[{"url":"a.com"}]`, whole: &invalidJSON},
		{name: "null body", body: `null`, whole: &invalidJSON},
		{name: "empty body", body: ``, whole: &invalidJSON},
		{name: "string body", body: `"https://a.com"`, whole: &invalidJSON},

		// Unknown keys everywhere.
		{name: "unknown top-level keys", body: with(`"zeta":1,"alpha":2`), msg: unrec,
			details: []string{"zeta: unrecognized_keys", "alpha: unrecognized_keys"}},
		{name: "unknown key in format", body: with(`"formats":[{"type":"markdown","x":1}]`), msg: unrec,
			details: []string{"formats.0.x: unrecognized_keys"}},
		{name: "unknown key in json format", body: with(`"formats":[{"type":"json","prompt":"p","schemaa":{}}]`), msg: unrec,
			details: []string{"formats.0.schemaa: unrecognized_keys"}},
		{name: "unknown key in action", body: with(`"actions":[{"type":"click","selector":"a","text":"x"}]`), msg: unrec,
			details: []string{"actions.0.text: unrecognized_keys"}},
		{name: "scrape action takes nothing", body: with(`"actions":[{"type":"scrape","selector":"a"}]`), msg: unrec,
			details: []string{"actions.0.selector: unrecognized_keys"}},
		{name: "unknown key in parser", body: with(`"parsers":[{"type":"pdf","ocr":true}]`), msg: unrec,
			details: []string{"parsers.0.ocr: unrecognized_keys"}},
		{name: "unknown key in location", body: with(`"location":{"country":"US","city":"NYC"}`), msg: unrec,
			details: []string{"location.city: unrecognized_keys"}},
		{name: "unknown key in profile", body: with(`"profile":{"name":"a","ttl":1}`), msg: unrec,
			details: []string{"profile.ttl: unrecognized_keys"}},
		{name: "unknown key in redactPII", body: with(`"redactPII":{"mode":"fast","lang":"en"}`), msg: unrec,
			details: []string{"redactPII.lang: unrecognized_keys"}},
		{name: "unknown key in threatProtection", body: with(`"threatProtection":{"level":1}`), msg: unrec,
			details: []string{"threatProtection.level: unrecognized_keys"}},
		{name: "unknown key in auditMetadata", body: with(`"auditMetadata":{"username":"u","team":"t"}`), msg: unrec,
			details: []string{"auditMetadata.team: unrecognized_keys"}},
		{name: "unknown key in viewport", body: with(`"formats":[{"type":"screenshot","viewport":{"width":1,"height":1,"dpr":2}}]`), msg: unrec,
			details: []string{"formats.0.viewport.dpr: unrecognized_keys"}},
		{name: "unknown key in attribute selector", body: with(`"formats":[{"type":"attributes","selectors":[{"selector":"a","attribute":"href","all":true}]}]`), msg: unrec,
			details: []string{"formats.0.selectors.0.all: unrecognized_keys"}},
		{name: "unknown key in catalog call", body: `{"catalog":{"provider":"a","capability":"b","opts":{}}}`, msg: unrec,
			details: []string{"catalog.opts: unrecognized_keys"}},

		// Collect every failing field; error is the first custom message.
		{name: "all failures collected", body: with(`"timeout":5,"mobile":"yes","waitFor":-1,"location":{"country":"ZZ"}`),
			msg: msgInvalidCountry, details: []string{"waitFor: too_small", "mobile: invalid_type", "timeout: too_small", "location.country: custom"}},
		{name: "no custom rule names the first field", body: with(`"timeout":"60000"`), msg: bad,
			details: []string{"timeout: invalid_type"}},

		// url.
		{name: "url missing", body: `{"formats":["markdown"]}`, msg: badURL, details: []string{"url: invalid_type"}},
		{name: "url null", body: `{"url":null}`, msg: badURL, details: []string{"url: invalid_type"}},
		{name: "url not a string", body: `{"url":42}`, msg: badURL, details: []string{"url: invalid_type"}},
		{name: "url empty", body: `{"url":""}`, msg: badURL, details: []string{"url: invalid_string"}},
		{name: "url ftp", body: `{"url":"ftp://example.com/f"}`, msg: badURL, details: []string{"url: invalid_string"}},
		{name: "url file", body: `{"url":"file:///etc/passwd"}`, msg: badURL, details: []string{"url: invalid_string"}},
		{name: "url no tld", body: `{"url":"http://intranet/x"}`, msg: badURL, details: []string{"url: invalid_string"}},
		{name: "url numeric tld", body: `{"url":"http://example.123"}`, msg: badURL, details: []string{"url: invalid_string"}},
		{name: "url one letter tld", body: `{"url":"example.c"}`, msg: badURL, details: []string{"url: invalid_string"}},
		{name: "url empty label", body: `{"url":"http://a..com"}`, msg: badURL, details: []string{"url: invalid_string"}},
		{name: "url bad port", body: `{"url":"http://example.com:http/"}`, msg: badURL, details: []string{"url: invalid_string"}},
		{name: "url with url error and others", body: `{"url":"nope","timeout":1}`, msg: badURL,
			details: []string{"url: invalid_string", "timeout: too_small"}},

		// formats.
		{name: "formats not array", body: with(`"formats":"markdown"`), msg: bad, details: []string{"formats: invalid_type"}},
		{name: "unknown format string", body: with(`"formats":["pdf"]`), msg: unknownFormat([]any{"formats", 0}, "pdf"), details: []string{"formats.0: invalid_enum_value"}},
		{name: "unknown format type", body: with(`"formats":[{"type":"xml"}]`), msg: unknownFormat([]any{"formats", 0, "type"}, "xml"), details: []string{"formats.0.type: invalid_union_discriminator"}},
		{name: "format without type", body: with(`"formats":[{"schema":{}}]`), msg: bad, details: []string{"formats.0.type: invalid_union_discriminator"}},
		{name: "format item number", body: with(`"formats":[1]`), msg: bad, details: []string{"formats.0: invalid_type"}},
		{name: "duplicate format", body: with(`"formats":["markdown","html",{"type":"markdown"}]`), msg: msgDuplicateFormat,
			details: []string{"formats.2: custom"}},
		{name: "two screenshots", body: with(`"formats":["screenshot",{"type":"screenshot","fullPage":true}]`), msg: msgOneScreenshot,
			details: []string{"formats.1: custom"}},
		{name: "rawBase64 with others", body: with(`"formats":["rawBase64","markdown"]`), msg: msgRawBase64Only,
			details: []string{"formats: custom"}},
		{name: "changeTracking needs markdown", body: with(`"formats":["html","changeTracking"]`), msg: msgChangeTrackingMD,
			details: []string{"formats: custom"}},
		{name: "json with deterministicJson", body: with(`"formats":[{"type":"json","prompt":"a"},{"type":"deterministicJson","prompt":"b"}]`),
			msg: msgJSONDeterministic, details: []string{"formats: custom"}},
		{name: "schema-less dictionary", body: with(`"formats":[{"type":"json","schema":{"type":"object","properties":{"m":{"type":"object","additionalProperties":true}}}}]`),
			msg: msgSchemalessDict, details: []string{"formats.0.schema: custom"}},
		{name: "schema-less dictionary at root", body: with(`"formats":[{"type":"deterministicJson","schema":{"additionalProperties":true}}]`),
			msg: msgSchemalessDict, details: []string{"formats.0.schema: custom"}},
		{name: "schema-less dictionary in changeTracking", body: with(`"formats":["markdown",{"type":"changeTracking","schema":{"type":"object","additionalProperties":true}}]`),
			msg: msgSchemalessDict, details: []string{"formats.1.schema: custom"}},
		{name: "schema not object", body: with(`"formats":[{"type":"json","schema":"{}"}]`), msg: bad,
			details: []string{"formats.0.schema: invalid_type"}},
		{name: "schema array", body: with(`"formats":[{"type":"json","schema":[]}]`), msg: bad,
			details: []string{"formats.0.schema: invalid_type"}},
		{name: "prompt too long", body: with(`"formats":[{"type":"json","prompt":"` + strings.Repeat("a", 10001) + `"}]`), msg: bad,
			details: []string{"formats.0.prompt: too_big"}},
		{name: "prompt too long in utf16 units", body: with(`"formats":[{"type":"json","prompt":"` + strings.Repeat("😀", 5001) + `"}]`), msg: bad,
			details: []string{"formats.0.prompt: too_big"}},
		{name: "question missing", body: with(`"formats":["question"]`), msg: bad, details: []string{"formats.0.question: invalid_type"}},
		{name: "question empty", body: with(`"formats":[{"type":"question","question":""}]`), msg: bad, details: []string{"formats.0.question: too_small"}},
		{name: "question too long", body: with(`"formats":[{"type":"question","question":"` + strings.Repeat("q", 10001) + `"}]`), msg: bad,
			details: []string{"formats.0.question: too_big"}},
		{name: "highlights query empty", body: with(`"formats":[{"type":"highlights","query":""}]`), msg: bad, details: []string{"formats.0.query: too_small"}},
		{name: "highlights query too long", body: with(`"formats":[{"type":"highlights","query":"` + strings.Repeat("q", 10001) + `"}]`), msg: bad,
			details: []string{"formats.0.query: too_big"}},
		{name: "query format mode enum", body: with(`"formats":[{"type":"query","prompt":"p","mode":"exact"}]`), msg: bad,
			details: []string{"formats.0.mode: invalid_enum_value"}},
		{name: "query format prompt too long", body: with(`"formats":[{"type":"query","prompt":"` + strings.Repeat("p", 10001) + `"}]`), msg: bad,
			details: []string{"formats.0.prompt: too_big"}},
		{name: "changeTracking prompt too long", body: with(`"formats":["markdown",{"type":"changeTracking","prompt":"` + strings.Repeat("p", 10001) + `"}]`), msg: bad,
			details: []string{"formats.1.prompt: too_big"}},
		{name: "query format prompt required", body: with(`"formats":[{"type":"query"}]`), msg: bad,
			details: []string{"formats.0.prompt: invalid_type"}},
		{name: "changeTracking modes enum", body: with(`"formats":["markdown",{"type":"changeTracking","modes":["diff"]}]`), msg: bad,
			details: []string{"formats.1.modes.0: invalid_enum_value"}},
		{name: "changeTracking tag type", body: with(`"formats":["markdown",{"type":"changeTracking","tag":5}]`), msg: bad,
			details: []string{"formats.1.tag: invalid_type"}},
		{name: "screenshot quality bounds", body: with(`"formats":[{"type":"screenshot","quality":0}]`), msg: bad,
			details: []string{"formats.0.quality: too_small"}},
		{name: "screenshot quality max", body: with(`"formats":[{"type":"screenshot","quality":101}]`), msg: bad,
			details: []string{"formats.0.quality: too_big"}},
		{name: "screenshot fullPage type", body: with(`"formats":[{"type":"screenshot","fullPage":1}]`), msg: bad,
			details: []string{"formats.0.fullPage: invalid_type"}},
		{name: "viewport bounds", body: with(`"formats":[{"type":"screenshot","viewport":{"width":7681,"height":0}}]`), msg: bad,
			details: []string{"formats.0.viewport.width: too_big", "formats.0.viewport.height: too_small"}},
		{name: "viewport needs both", body: with(`"formats":[{"type":"screenshot","viewport":{"width":800}}]`), msg: bad,
			details: []string{"formats.0.viewport.height: invalid_type"}},
		{name: "viewport height max", body: with(`"formats":[{"type":"screenshot","viewport":{"width":800,"height":4321}}]`), msg: bad,
			details: []string{"formats.0.viewport.height: too_big"}},
		{name: "attributes selectors required", body: with(`"formats":["attributes"]`), msg: bad,
			details: []string{"formats.0.selectors: invalid_type"}},
		{name: "attributes selectors not array", body: with(`"formats":[{"type":"attributes","selectors":{}}]`), msg: bad,
			details: []string{"formats.0.selectors: invalid_type"}},
		{name: "attributes bad items", body: with(`"formats":[{"type":"attributes","selectors":[{"selector":"a[","attribute":"href"},{"selector":"","attribute":""},{"attribute":"x"}]}]`),
			msg: bad, details: []string{"formats.0.selectors.0.selector: invalid_string", "formats.0.selectors.1.selector: too_small",
				"formats.0.selectors.1.attribute: too_small", "formats.0.selectors.2.selector: invalid_type"}},

		// Simple option types and bounds.
		{name: "boolean types", body: with(`"onlyMainContent":"true","onlyCleanContent":1,"removeBase64Images":null,"blockAds":0,"lockdown":"no","zeroDataRetention":[],"fastMode":{},"domainTools":"x","storeInCache":1,"skipTlsVerification":"false"`),
			msg: bad, details: []string{"onlyMainContent: invalid_type", "onlyCleanContent: invalid_type", "skipTlsVerification: invalid_type",
				"blockAds: invalid_type", "storeInCache: invalid_type", "lockdown: invalid_type", "zeroDataRetention: invalid_type",
				"fastMode: invalid_type", "domainTools: invalid_type"}},
		{name: "includeTags invalid css", body: with(`"includeTags":["div[","p"],"excludeTags":[""]`), msg: bad,
			details: []string{"includeTags.0: invalid_string", "excludeTags.0: invalid_string"}},
		{name: "includeTags not array", body: with(`"includeTags":"p","excludeTags":[1]`), msg: bad,
			details: []string{"includeTags: invalid_type", "excludeTags.0: invalid_type"}},
		{name: "maxAge minAge negative", body: with(`"maxAge":-1,"minAge":-5`), msg: bad,
			details: []string{"maxAge: too_small", "minAge: too_small"}},
		{name: "maxAge float", body: with(`"maxAge":1.5`), msg: bad, details: []string{"maxAge: invalid_type"}},
		{name: "headers values must be strings", body: with(`"headers":{"A":1,"B":"ok","C":null}`), msg: bad,
			details: []string{"headers.A: invalid_type", "headers.C: invalid_type"}},
		{name: "headers not object", body: with(`"headers":["A: b"]`), msg: bad, details: []string{"headers: invalid_type"}},
		{name: "headers names and values are checked", body: with(`"headers":{"X-A":"a\r\nInjected: 1","Bad Name":"x","X-B":"\u0000","X-C":"ok\tfine","X-Long":"` + strings.Repeat("a", 8193) + `"}`),
			msg: bad, details: []string{"headers.X-A: invalid_string", "headers.Bad Name: invalid_string", "headers.X-B: invalid_string", "headers.X-Long: too_big"}},
		{name: "headers at most 100", body: with(`"headers":{` + manyHeaders(101) + `}`), msg: bad, details: []string{"headers: too_big"}},
		{name: "headers 100 accepted", body: with(`"headers":{` + manyHeaders(100) + `},"timeout":999`), msg: bad, details: []string{"timeout: too_small"}},
		{name: "waitFor max", body: with(`"waitFor":60001`), msg: bad, details: []string{"waitFor: too_big"}},
		{name: "waitFor over half of timeout", body: with(`"timeout":10000,"waitFor":5001`), msg: msgWaitForHalfTimeout,
			details: []string{"waitFor: custom"}},
		{name: "timeout min", body: with(`"timeout":999`), msg: bad, details: []string{"timeout: too_small"}},
		{name: "timeout max", body: with(`"timeout":300001`), msg: bad, details: []string{"timeout: too_big"}},
		{name: "timeout float", body: with(`"timeout":1000.5`), msg: bad, details: []string{"timeout: invalid_type"}},
		{name: "timeout huge", body: with(`"timeout":1e400`), msg: bad, details: []string{"timeout: too_big"}},
		{name: "proxy enum", body: with(`"proxy":"residential"`), msg: bad, details: []string{"proxy: invalid_enum_value"}},

		// parsers.
		{name: "parsers not array", body: with(`"parsers":"pdf"`), msg: bad, details: []string{"parsers: invalid_type"}},
		{name: "parsers pdf true object", body: with(`"parsers":[{"pdf":true}]`), msg: bad, details: []string{"parsers.0: invalid_union"}},
		{name: "parsers pdf colon mode", body: with(`"parsers":["pdf:fast"]`), msg: bad, details: []string{"parsers.0: invalid_union"}},
		{name: "parsers number item", body: with(`"parsers":[1]`), msg: bad, details: []string{"parsers.0: invalid_union"}},
		{name: "parser type enum", body: with(`"parsers":[{"type":"docx"}]`), msg: bad, details: []string{"parsers.0.type: invalid_enum_value"}},
		{name: "parser mode enum", body: with(`"parsers":[{"type":"pdf","mode":"slow"}]`), msg: bad, details: []string{"parsers.0.mode: invalid_enum_value"}},
		{name: "parser maxPages bounds", body: with(`"parsers":[{"type":"pdf","maxPages":0},{"type":"pdf","maxPages":10001}]`), msg: bad,
			details: []string{"parsers.0.maxPages: too_small", "parsers.1.maxPages: too_big"}},
		{name: "parser flags types", body: with(`"parsers":[{"type":"pdf","pages":"yes","blocks":1,"pageMarkers":"no","pageMarkdown":0}]`), msg: bad,
			details: []string{"parsers.0.pages: invalid_type", "parsers.0.pageMarkdown: invalid_type", "parsers.0.blocks: invalid_type", "parsers.0.pageMarkers: invalid_type"}},

		// actions.
		{name: "actions not array", body: with(`"actions":{}`), msg: bad, details: []string{"actions: invalid_type"}},
		{name: "too many actions", body: with(`"actions":[` + strings.TrimSuffix(strings.Repeat(`{"type":"scrape"},`, 51), ",") + `]`),
			msg: msgTooManyActions, details: []string{"actions: too_big"}},
		{name: "total wait too long", body: with(`"waitFor":10000,"actions":[{"type":"wait","milliseconds":49001},{"type":"wait","selector":"a"}]`),
			msg: msgActionsWaitTotal, details: []string{"actions: custom"}},
		{name: "selector waits count 1000 each", body: with(`"actions":[{"type":"wait","milliseconds":58001},{"type":"wait","selector":"a"},{"type":"wait","selector":"b"}]`),
			msg: msgActionsWaitTotal, details: []string{"actions: custom"}},
		{name: "one long wait hits the total", body: with(`"actions":[{"type":"wait","milliseconds":60001}]`),
			msg: msgActionsWaitTotal, details: []string{"actions: custom"}},
		{name: "wait needs one form", body: with(`"actions":[{"type":"wait"}]`), msg: msgWaitForm, details: []string{"actions.0: custom"}},
		{name: "wait not both forms", body: with(`"actions":[{"type":"wait","milliseconds":5,"selector":"a"}]`), msg: msgWaitForm, details: []string{"actions.0: custom"}},
		{name: "wait milliseconds min", body: with(`"actions":[{"type":"wait","milliseconds":0}]`), msg: bad, details: []string{"actions.0.milliseconds: too_small"}},
		{name: "wait milliseconds integer", body: with(`"actions":[{"type":"wait","milliseconds":1.5}]`), msg: bad, details: []string{"actions.0.milliseconds: invalid_type"}},
		{name: "wait selector type", body: with(`"actions":[{"type":"wait","selector":1}]`), msg: bad, details: []string{"actions.0.selector: invalid_type"}},
		{name: "unknown action type", body: with(`"actions":[{"type":"scrape"},{"type":"hover","selector":"a"}]`), msg: bad,
			details: []string{"actions.1.type: invalid_union_discriminator"}},
		{name: "action without type", body: with(`"actions":[{"selector":"a"}]`), msg: bad, details: []string{"actions.0.type: invalid_union_discriminator"}},
		{name: "action not object", body: with(`"actions":["click"]`), msg: bad, details: []string{"actions.0: invalid_type"}},
		{name: "action required fields", body: with(`"actions":[{"type":"click"},{"type":"write"},{"type":"press"},{"type":"executeJavascript"}]`), msg: bad,
			details: []string{"actions.0.selector: invalid_type", "actions.1.text: invalid_type", "actions.2.key: invalid_type", "actions.3.script: invalid_type"}},
		{name: "action field types", body: with(`"actions":[{"type":"click","selector":"a","all":"yes"},{"type":"scroll","direction":"left"},{"type":"scroll","selector":5}]`), msg: bad,
			details: []string{"actions.0.all: invalid_type", "actions.1.direction: invalid_enum_value", "actions.2.selector: invalid_type"}},
		{name: "screenshot action bounds", body: with(`"actions":[{"type":"screenshot","quality":101,"viewport":{"width":0,"height":4321}}]`), msg: bad,
			details: []string{"actions.0.quality: too_big", "actions.0.viewport.width: too_small", "actions.0.viewport.height: too_big"}},
		{name: "pdf action rules", body: with(`"actions":[{"type":"pdf","format":"B5"},{"type":"pdf","scale":0},{"type":"pdf","landscape":"yes"},{"type":"pdf","scale":"1"}]`), msg: bad,
			details: []string{"actions.0.format: invalid_enum_value", "actions.1.scale: too_small", "actions.2.landscape: invalid_type", "actions.3.scale: invalid_type"}},

		// location.
		{name: "country unknown", body: with(`"location":{"country":"XX"}`), msg: msgInvalidCountry, details: []string{"location.country: custom"}},
		{name: "country three letters", body: with(`"location":{"country":"USA"}`), msg: msgCountryPattern, details: []string{"location.country: invalid_string"}},
		{name: "country lower-case", body: with(`"location":{"country":"us"}`), msg: msgCountryPattern, details: []string{"location.country: invalid_string"}},
		{name: "country mixed case", body: with(`"location":{"country":"De"}`), msg: msgCountryPattern, details: []string{"location.country: invalid_string"}},
		{name: "country us-generic", body: with(`"location":{"country":"us-generic"}`), msg: msgCountryPattern, details: []string{"location.country: invalid_string"}},
		{name: "country empty", body: with(`"location":{"country":""}`), msg: msgCountryPattern, details: []string{"location.country: invalid_string"}},
		{name: "country type", body: with(`"location":{"country":1}`), msg: bad, details: []string{"location.country: invalid_type"}},
		{name: "languages type", body: with(`"location":{"languages":"en"}`), msg: bad, details: []string{"location.languages: invalid_type"}},
		{name: "languages item type", body: with(`"location":{"languages":["en",1]}`), msg: bad, details: []string{"location.languages.1: invalid_type"}},
		{name: "languages tags", body: with(`"location":{"languages":["en-US","en\r\nX-Injected: 1","fr_CA","*","de--DE","1en","zh-Hant-TW","x-toolongsubtag"]}`), msg: bad,
			details: []string{"location.languages.1: invalid_string", "location.languages.4: invalid_string", "location.languages.5: invalid_string", "location.languages.7: invalid_string"}},
		{name: "languages at most 20", body: with(`"location":{"languages":[` + strings.TrimSuffix(strings.Repeat(`"en",`, 21), ",") + `]}`), msg: bad,
			details: []string{"location.languages: too_big"}},
		{name: "location type", body: with(`"location":"US"`), msg: bad, details: []string{"location: invalid_type"}},

		// redactPII, profile, threatProtection, auditMetadata.
		{name: "redactPII string", body: with(`"redactPII":"yes"`), msg: bad, details: []string{"redactPII: invalid_type"}},
		{name: "redactPII enums", body: with(`"redactPII":{"mode":"slow","entities":["EMAIL","SSN"],"replaceStyle":"blur"}`), msg: bad,
			details: []string{"redactPII.mode: invalid_enum_value", "redactPII.replaceStyle: invalid_enum_value", "redactPII.entities.1: invalid_enum_value"}},
		{name: "profile name required", body: with(`"profile":{"saveChanges":true}`), msg: bad, details: []string{"profile.name: invalid_type"}},
		{name: "profile name bounds", body: with(`"profile":{"name":"` + strings.Repeat("n", 129) + `"}`), msg: bad, details: []string{"profile.name: too_big"}},
		{name: "profile name empty", body: with(`"profile":{"name":""}`), msg: bad, details: []string{"profile.name: too_small"}},
		{name: "profile saveChanges type", body: with(`"profile":{"name":"a","saveChanges":"no"}`), msg: bad, details: []string{"profile.saveChanges: invalid_type"}},
		{name: "profile not object", body: with(`"profile":"a"`), msg: bad, details: []string{"profile: invalid_type"}},
		{name: "threatProtection rules", body: with(`"threatProtection":{"mode":"strict","riskScoreThreshold":101,"failurePolicy":"maybe","blacklist":["https://x.com/"],"blockedTlds":[1]}`), msg: bad,
			details: []string{"threatProtection.mode: invalid_enum_value", "threatProtection.failurePolicy: invalid_enum_value",
				"threatProtection.riskScoreThreshold: too_big", "threatProtection.blacklist.0: invalid_string", "threatProtection.blockedTlds.0: invalid_type"}},
		{name: "threatProtection list size", body: with(`"threatProtection":{"whitelist":[` + strings.TrimSuffix(strings.Repeat(`"a.com",`, 1001), ",") + `]}`), msg: bad,
			details: []string{"threatProtection.whitelist: too_big"}},
		{name: "auditMetadata username required", body: with(`"auditMetadata":{}`), msg: bad, details: []string{"auditMetadata.username: invalid_type"}},
		{name: "auditMetadata username too long", body: with(`"auditMetadata":{"username":"` + strings.Repeat("u", 1025) + `"}`), msg: bad,
			details: []string{"auditMetadata.username: too_big"}},
		{name: "origin type", body: with(`"origin":1,"integration":true`), msg: bad, details: []string{"origin: invalid_type", "integration: invalid_type"}},

		// catalog.
		{name: "catalog with url", body: `{"catalog":{"provider":"a","capability":"b"},"url":"https://a.com"}`, msg: msgCatalogCombined,
			details: []string{"url: custom"}},
		{name: "catalog with scrape options", body: `{"catalog":{"provider":"a","capability":"b"},"formats":["markdown"],"waitFor":0,"timeout":5000}`,
			msg: msgCatalogCombined, details: []string{"formats: custom", "waitFor: custom"}},
		{name: "catalog empty array", body: `{"catalog":[]}`, msg: bad, details: []string{"catalog: too_small"}},
		{name: "catalog too many", body: `{"catalog":[` + strings.TrimSuffix(strings.Repeat(`{"provider":"a","capability":"b"},`, 11), ",") + `]}`,
			msg: bad, details: []string{"catalog: too_big"}},
		{name: "catalog wrong type", body: `{"catalog":"a/b"}`, msg: bad, details: []string{"catalog: invalid_type"}},
		{name: "catalog call fields", body: `{"catalog":[{"provider":"","capability":"` + strings.Repeat("c", 201) + `","options":[]},{"capability":"x"},5]}`,
			msg: bad, details: []string{"catalog.0.provider: too_small", "catalog.0.capability: too_big", "catalog.0.options: invalid_type",
				"catalog.1.provider: invalid_type", "catalog.2: invalid_type"}},
		{name: "catalog provider too long capability empty", body: `{"catalog":{"provider":"` + strings.Repeat("p", 201) + `","capability":""}}`,
			msg: bad, details: []string{"catalog.provider: too_big", "catalog.capability: too_small"}},
		{name: "catalog timeout bounds", body: `{"catalog":{"provider":"a","capability":"b"},"timeout":999}`, msg: bad,
			details: []string{"timeout: too_small"}},
		{name: "catalog unknown key", body: `{"catalog":{"provider":"a","capability":"b"},"foo":1}`, msg: unrec,
			details: []string{"foo: unrecognized_keys"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := decodeScrapeRequest(strings.NewReader(tt.body))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("decodeScrapeRequest error = %v, want *Error", err)
			}
			want := apiErr{Status: 400, Code: "BAD_REQUEST", Message: tt.msg, Details: tt.details}
			if fe, _ := e.Details.([]FieldError); tt.msg == bad && len(fe) > 0 {
				// No contract message: the first failing field names it.
				want.Message = fieldMessage(fe[0])
			}
			if tt.whole != nil {
				want = *tt.whole
			}
			got := apiErr{Status: e.Status, Code: e.Code, Message: e.Message, Details: errDetails(err)}
			if tt.msg == badURL && strings.HasPrefix(got.Message, badURL+": ") {
				got.Message = badURL // what follows is the url's own (TestErrorNamesTheField)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("decodeScrapeRequest error mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// errReader fails every read with err.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestDecodeScrapeRequestReadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body func() (r interface{ Read([]byte) (int, error) })
		want apiErr
	}{
		{name: "over the limit", body: func() (r interface{ Read([]byte) (int, error) }) {
			rec := httptest.NewRecorder()
			return http.MaxBytesReader(rec, nopCloser{strings.NewReader(with(`"origin":"` + strings.Repeat("x", 100) + `"`))}, 64)
		}, want: apiErr{Status: 413, Code: "PAYLOAD_TOO_LARGE", Message: "Request body is too large"}},
		{name: "other read error", body: func() (r interface{ Read([]byte) (int, error) }) {
			return errReader{errors.New("connection reset")}
		}, want: apiErr{Status: 400, Code: "BAD_REQUEST_INVALID_JSON", Message: "Bad request, malformed JSON"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := decodeScrapeRequest(tt.body())
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("decodeScrapeRequest error = %v, want *Error", err)
			}
			got := apiErr{Status: e.Status, Code: e.Code, Message: e.Message, Details: errDetails(err)}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decodeScrapeRequest error mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// nopCloser adds a no-op Close to a reader.
type nopCloser struct{ *strings.Reader }

func (nopCloser) Close() error { return nil }

// TestDecodeScrapeRequestDetailsJSON pins the wire form of details.
func TestDecodeScrapeRequestDetailsJSON(t *testing.T) {
	t.Parallel()
	_, err := decodeScrapeRequest(strings.NewReader(with(`"formats":[{"type":"json","schema":1}]`)))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("decodeScrapeRequest error = %v, want *Error", err)
	}
	got, mErr := json.Marshal(e.Details)
	if mErr != nil {
		t.Fatal(mErr)
	}
	want := `[{"path":["formats",0,"schema"],"message":"Expected object, received number","code":"invalid_type"}]`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("details JSON mismatch (-want +got):\n%s", diff)
	}
}

func BenchmarkDecodeScrapeRequest(b *testing.B) {
	body := []byte(`{"url":"https://docs.example.com/guide/getting-started?ref=nav","formats":["markdown","html",` +
		`{"type":"screenshot","fullPage":true}],"onlyMainContent":true,"waitFor":1000,"timeout":30000,` +
		`"excludeTags":["nav","footer"],"location":{"country":"DE","languages":["de-DE"]},"proxy":"auto","origin":"js-sdk"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeScrapeRequest(strings.NewReader(string(body))); err != nil {
			b.Fatal(err)
		}
	}
}

func TestValidateNestedScrapeOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		raw     string
		want    func(o *scrape.Options)
		details []string
	}{
		{name: "defaults", raw: `{}`, want: func(*scrape.Options) {}},
		{name: "fields", raw: `{"formats":["html"],"timeout":2000}`, want: func(o *scrape.Options) {
			o.Formats = []scrape.Format{{Type: "html"}}
			o.Timeout = 2 * time.Second
		}},
		{name: "url is not a scrape option", raw: `{"url":"a.com","formats":[1]}`, want: func(*scrape.Options) {},
			details: []string{"scrapeOptions.url: unrecognized_keys", "scrapeOptions.formats.0: invalid_type"}},
		{name: "not an object", raw: `[]`, want: func(*scrape.Options) {}, details: []string{"scrapeOptions: invalid_type"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var v validator
			got := v.nestedScrapeOptions([]any{"scrapeOptions"}, json.RawMessage(tt.raw))
			var err error
			if e := v.err(); e != nil {
				err = e
			}
			if diff := cmp.Diff(tt.details, errDetails(err)); diff != "" {
				t.Errorf("details mismatch (-want +got):\n%s", diff)
			}
			if v.failed() {
				return
			}
			want := defaultOptions("")
			want.Origin = ""
			tt.want(&want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("nestedScrapeOptions mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
