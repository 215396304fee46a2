package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// firstFieldMessage is the error text of a 400 without a contract message,
// from its JSON body: the first detail's path and message.
func firstFieldMessage(m map[string]any) string {
	details, _ := m["details"].([]any)
	if len(details) == 0 {
		return "(no details)"
	}
	d, _ := details[0].(map[string]any)
	raw, _ := d["path"].([]any)
	path := make([]any, len(raw))
	for i, e := range raw {
		if f, ok := e.(float64); ok {
			path[i] = int(f)
		} else {
			path[i] = e
		}
	}
	msg, _ := d["message"].(string)
	return fieldMessage(FieldError{Path: path, Message: msg})
}

func TestFieldMessage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		f    FieldError
		want string
	}{
		{FieldError{Path: []any{"limit"}, Message: "Number must be greater than or equal to 1"}, "limit: Number must be greater than or equal to 1"},
		{FieldError{Path: []any{"scrapeOptions", "formats", 1}, Message: "m"}, "scrapeOptions.formats[1]: m"},
		{FieldError{Path: []any{"actions", 0, "selector"}, Message: "m"}, "actions[0].selector: m"},
		{FieldError{Message: "m"}, "m"},
	} {
		if got := fieldMessage(tc.f); got != tc.want {
			t.Errorf("fieldMessage(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

// TestErrorNamesTheField: SDKs show only the top-level error, so a 400
// says which field failed and why (issue 32): a misspelt format with the
// name meant, a missing and a malformed url apart; details keep every
// failing field.
func TestErrorNamesTheField(t *testing.T) {
	t.Parallel()
	s, _ := setup(t, &fakeScraper{})
	for _, tc := range []struct{ body, want string }{
		{`{"url":"https://example.com","formats":["markdwon"]}`, `formats[0]: unknown format "markdwon"; did you mean "markdown"?`},
		{`{"url":"https://example.com","formats":["markdown",{"type":"screnshot"}]}`, `formats[1].type: unknown format "screnshot"; did you mean "screenshot"?`},
		{`{"url":"https://example.com","formats":["RAWHTML"]}`, `formats[0]: unknown format "RAWHTML"; did you mean "rawHtml"?`},
		{`{"url":"https://example.com","formats":["pdf"]}`, `formats[0]: unknown format "pdf"; expected one of markdown, html, rawHtml, rawBase64, links, images, summary, json, deterministicJson, changeTracking, screenshot, attributes, question, highlights, query, branding, product, menu, audio, video`},
		{`{"formats":["markdown"]}`, `Invalid URL: url is required (an absolute http or https URL such as https://example.com)`},
		{`{"url":"not a url"}`, `Invalid URL: "not a url" is not an http or https URL with a valid host`},
		{`{"url":"ftp://example.com/file"}`, `Invalid URL: "ftp://example.com/file" is not an http or https URL with a valid host`},
		{`{"url":42}`, `Invalid URL: url must be a string, not number`},
		{`{"url":"https://example.com","timeout":"60000"}`, `timeout: Expected number, received string`},
	} {
		rec, m := do(t, s, http.MethodPost, "/v2/scrape", goodKey, tc.body)
		if rec.Code != http.StatusBadRequest || m["error"] != tc.want {
			t.Errorf("%s: %d error %q, want %q", tc.body, rec.Code, m["error"], tc.want)
		}
	}
	// Both failures are in the details; the first names the error.
	_, m := do(t, s, http.MethodPost, "/v2/scrape", goodKey, `{"url":"https://example.com","formats":["markdwon","htlm"]}`)
	details, _ := m["details"].([]any)
	if len(details) != 2 || !strings.Contains(m["error"].(string), `"markdown"`) {
		t.Errorf("details %v, error %v", details, m["error"])
	}
	if d, _ := details[0].(map[string]any); !strings.Contains(d["message"].(string), "'markdown' | 'html'") {
		t.Errorf("the detail keeps the list of formats: %v", d)
	}
}
