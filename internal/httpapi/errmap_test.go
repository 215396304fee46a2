package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/interact"
	"github.com/firegate/firegate/internal/monitor"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/search"
)

// TestErrorMapping: what the envelope answers for the domain packages'
// errors (errcode sentinels and failures), a client gone and the unknown.
func TestErrorMapping(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		status int
		code   string
		msg    string
	}{
		{"table row with its message", fmt.Errorf("x: %w", scrape.ErrTimeout), http.StatusRequestTimeout, "SCRAPE_TIMEOUT",
			"Request timed out: the scrape took longer than the timeout. Raise timeout or simplify the request."},
		{"failure message for the user", &errcode.Failure{Kind: scrape.ErrSite, Msg: "the site answered 500"}, http.StatusInternalServerError,
			"SCRAPE_SITE_ERROR", "the site answered 500"},
		{"map error", fmt.Errorf("%w: 3s", crawl.ErrTimeout), http.StatusRequestTimeout, "MAP_TIMEOUT",
			"The map operation timed out before it finished. Raise timeout, lower limit, or set sitemap to skip or only."},
		{"row with the wrapped text", fmt.Errorf("%w: bad pattern", crawl.ErrInvalidOptions), http.StatusBadRequest, "BAD_REQUEST",
			"Invalid options: bad pattern."},
		{"coded sentinel of a package above", monitor.ErrPaused, http.StatusConflict, "MONITOR_PAUSED", "Monitor is paused: set its status to active to run it"},
		{"the chain's first sentinel wins", fmt.Errorf("%w: %w", crawl.ErrBlocked, scrape.ErrTimeout), http.StatusForbidden, "MAP_TARGET_NOT_ALLOWED",
			"Forbidden: the URL resolves to a private or otherwise non-public address, which this server does not fetch."},
		{"client gone", fmt.Errorf("read: %w", context.Canceled), 499, "CLIENT_CLOSED_REQUEST", "Client closed request"},
		{"unknown", errors.New("boom"), http.StatusInternalServerError, "UNKNOWN_ERROR", ""},
	}
	for _, c := range cases {
		m := toAPIError(c.err)
		if m.Status != c.status || m.Code != c.code || m.Message != c.msg || m.Details != nil {
			t.Errorf("%s: toAPIError = %+v; want %d %s %q", c.name, m, c.status, c.code, c.msg)
		}
	}
}

func TestErrorMappingUnsupportedFeature(t *testing.T) {
	err := fmt.Errorf("scrape: %w", &errcode.Failure{Kind: scrape.ErrActionsNotSupported, Field: "actions", Msg: "no browser"})
	m := toAPIError(err)
	want := []FieldError{{Path: []any{"actions"}, Message: "no browser", Code: "not_supported"}}
	if m.Status != http.StatusBadRequest || m.Code != "SCRAPE_ACTIONS_NOT_SUPPORTED" || m.Message != "no browser" || !reflect.DeepEqual(m.Details, want) {
		t.Errorf("toAPIError = %+v", m)
	}
}

// TestDescribe: a known error keeps its code and message and gets no error
// id; an unknown one (or a cancelled context, which has no client behind it
// in a job) shows none of its text, only a fresh error id.
func TestDescribeDomainErrors(t *testing.T) {
	known := []struct {
		err        error
		code, want string
	}{
		{&errcode.Failure{Kind: scrape.ErrSSL, Msg: "bad certificate"}, "SCRAPE_SSL_ERROR", "bad certificate"},
		{fmt.Errorf("page: %w", scrape.ErrTimeout), "SCRAPE_TIMEOUT",
			"Request timed out: the scrape took longer than the timeout. Raise timeout or simplify the request."},
		{&errcode.Failure{Kind: scrape.ErrDNSResolution, Msg: "DNS resolution failed for hostname: nowhere.invalid."},
			"SCRAPE_DNS_RESOLUTION_ERROR", "DNS resolution failed for hostname: nowhere.invalid."},
	}
	for _, k := range known {
		code, msg, id := errcode.Describe(k.err)
		if code != k.code || msg != k.want || id != "" {
			t.Errorf("%v: %s %q id %q; want %s %q and no id", k.err, code, msg, id, k.code, k.want)
		}
	}
	internal := []error{
		errors.New("store: dial tcp 10.1.2.3:5432: connect: connection refused"),
		fmt.Errorf("browser: devtools ws://127.0.0.1:9222/devtools/browser/x: %w", context.Canceled),
	}
	seen := map[string]bool{}
	for _, err := range internal {
		code, msg, id := errcode.Describe(err)
		if _, perr := uuid.Parse(id); perr != nil || seen[id] {
			t.Errorf("%v: error id %q is not a fresh UUID", err, id)
		}
		seen[id] = true
		if code != "UNKNOWN_ERROR" || msg != errcode.UnknownMessage(id) {
			t.Errorf("%v: %s %q; want UNKNOWN_ERROR %q", err, code, msg, errcode.UnknownMessage(id))
		}
		for _, leak := range []string{"10.1.2.3", "5432", "store:", "browser:", "9222", "127.0.0.1"} {
			if strings.Contains(msg, leak) {
				t.Errorf("%v: message %q shows %q", err, msg, leak)
			}
		}
	}
	// The message is the contract's one for an unexpected error.
	if got := errcode.UnknownMessage("x"); !strings.HasSuffix(got, "contact support, error id x") {
		t.Errorf("UnknownMessage = %q", got)
	}
}

// TestMessagesNameNoPackagePrefix: a known error whose message is its own
// text (a row without a fixed message) reads as a sentence: no package
// prefix of the Go error chain ("scrape: ", "crawl: ", ...) before or in
// place of the sentinel's text, which becomes its lead; the detail after it
// is kept word for word, and the code is the row's.
func TestMessagesNameNoPackagePrefix(t *testing.T) {
	cases := []struct {
		err       error
		code, msg string
	}{
		{fmt.Errorf("%w: content type %q cannot be converted; request the rawBase64 format to receive the bytes", scrape.ErrUnsupportedFile, "image/png"),
			"SCRAPE_UNSUPPORTED_FILE_ERROR", `Unsupported file: content type "image/png" cannot be converted; request the rawBase64 format to receive the bytes.`},
		{fmt.Errorf("%w: domainTools needs catalog access, which this server does not provide", scrape.ErrForbidden),
			"FORBIDDEN", "Forbidden: domainTools needs catalog access, which this server does not provide."},
		{fmt.Errorf("scrape: browser: %w: final url %q: bad escape", scrape.ErrSite, "http://a/%zz"),
			"SCRAPE_SITE_ERROR", `The site could not be scraped: final url "http://a/%zz": bad escape.`},
		{fmt.Errorf("%w: x509: unknown authority", scrape.ErrSSL), "SCRAPE_SSL_ERROR", "TLS error: x509: unknown authority."},
		{fmt.Errorf("%w: start url %q is not an absolute http(s) url", crawl.ErrInvalidOptions, "a"),
			"BAD_REQUEST", `Invalid options: start url "a" is not an absolute http(s) url.`},
		{fmt.Errorf("%w: another session is saving profile %q; use saveChanges: false to load it without saving, or retry when that session ends", interact.ErrProfileBusy, "p"),
			"PROFILE_IN_USE", `The browser profile is in use: another session is saving profile "p"; use saveChanges: false to load it without saving, or retry when that session ends.`},
		{fmt.Errorf("%w: the team has %d active browser sessions, its maximum", interact.ErrTooMany, 5),
			"TOO_MANY_SESSIONS", "Too many browser sessions: the team has 5 active browser sessions, its maximum."},
		{fmt.Errorf("%w (%d)", interact.ErrCDPBusy, 8), "CDP_BUSY", "The session has the most DevTools connections it may (8)."},
		{fmt.Errorf("%w: SearXNG answered 403 Forbidden", search.ErrEngine),
			"SEARCH_ENGINE_ERROR", "Search engine error: SearXNG answered 403 Forbidden."},
		// An error with its client message shows that message only, not
		// the cause its text ends with (the engine's address).
		{&errcode.Failure{Kind: search.ErrEngine, Msg: "The search engine could not be reached.", Cause: errors.New("dial tcp 10.1.2.3:8080: connect: connection refused")},
			"SEARCH_ENGINE_ERROR", "The search engine could not be reached."},
		{&errcode.Failure{Kind: interact.ErrUnavailable, Msg: "The browser could not open a session.",
			Cause: errors.New(`browser: chrome unavailable: start: could not dial "ws://127.0.0.1:9222/devtools/browser/x"`)},
			"BROWSER_UNAVAILABLE", "The browser could not open a session."},
		{&errcode.Failure{Kind: interact.ErrReplay, Msg: "Replaying the scrape failed: the page could not be loaded in the browser.",
			Cause: errors.New("browser: navigate http://10.1.2.3:8080/: net::ERR_CONNECTION_REFUSED: browser: navigation failed")},
			"INTERACT_REPLAY_FAILED", "Replaying the scrape failed: the page could not be loaded in the browser."},
		{fmt.Errorf("monitor: %w", &errcode.Failure{Kind: search.ErrEngine, Msg: "The search engine answered HTTP 502 Bad Gateway."}),
			"SEARCH_ENGINE_ERROR", "The search engine answered HTTP 502 Bad Gateway."},
		{fmt.Errorf("%w: google (timeout)", search.ErrNoEngines), "SEARCH_ENGINE_UNAVAILABLE", "No upstream search engine answered: google (timeout)."},
		{scrape.ErrAction, "SCRAPE_ACTION_ERROR", "Action failed."},
		// A Failure's own message is kept as written.
		{&errcode.Failure{Kind: scrape.ErrUnsupportedFileType, Msg: "Unsupported file type: a.bin. Upload a PDF."},
			"UNSUPPORTED_FILE_TYPE", "Unsupported file type: a.bin. Upload a PDF."},
		// A row's error of its own kind (the regexp compiler's message) is
		// not cut.
		{&crawl.PatternError{Field: "includePaths", Pattern: "(", Err: errors.New("error parsing regexp: missing closing ): `(`")},
			"BAD_REQUEST", "Error parsing regexp: missing closing ): `(`."},
	}
	prefix := regexp.MustCompile(`\b(scrape|crawl|interact|search|browser|store|monitor|fetch|llm|media):`)
	for _, c := range cases {
		m := toAPIError(c.err)
		if m.Code != c.code || m.Message != c.msg {
			t.Errorf("%v: %s %q; want %s %q", c.err, m.Code, m.Message, c.code, c.msg)
		}
		if p := prefix.FindString(m.Message); p != "" {
			t.Errorf("%v: message %q names the package prefix %q", c.err, m.Message, p)
		}
		if code, msg, id := errcode.Describe(c.err); code != c.code || msg != m.Message || id != "" {
			t.Errorf("%v: Describe = %s %q %q; want the envelope's, no id", c.err, code, msg, id)
		}
	}
}
