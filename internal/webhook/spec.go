// Package webhook implements the webhook option of crawl and batch scrape
// jobs: parsing and validating the `webhook` request field, building the
// JSON envelope of each event, signing it and delivering it with one HTTP
// POST.
//
// Delivery is a single attempt: the job queue retries a failed Send on the
// schedule given by Backoff, for at most MaxAttempts attempts, and stops at
// once when Permanent reports that retrying cannot help. The webhookId of an
// envelope is minted once per delivery by the caller and reused on every
// retry, so the caller should store the envelope bytes (or the id) with the
// queued job.
package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
)

// Job kinds whose events this package knows.
const (
	// KindCrawl prefixes crawl events ("crawl.page").
	KindCrawl Kind = "crawl"
	// KindBatchScrape prefixes batch scrape events ("batch_scrape.page").
	KindBatchScrape Kind = "batch_scrape"
	// KindExtract prefixes extract events ("extract.completed"); an
	// extract sends started, completed and failed, no page events.
	KindExtract Kind = "extract"
)

// Short event names accepted in Spec.Events, without a job kind prefix.
const (
	// EventStarted is sent when the job starts.
	EventStarted = "started"
	// EventPage is sent for each page, scraped or failed.
	EventPage = "page"
	// EventCompleted is sent when the job finishes.
	EventCompleted = "completed"
	// EventFailed is sent when the job itself fails.
	EventFailed = "failed"
)

// SignatureHeader carries the HMAC signature of the body; see Sign.
const SignatureHeader = "X-Firecrawl-Signature"

// ErrInvalidSpec is wrapped by every error ParseSpec returns; the HTTP layer
// maps it to 400.
var ErrInvalidSpec = errors.New("webhook: invalid webhook option")

// SpecError is a validation failure of the webhook option. Field is the
// path of the offending value in the request body ("webhook.url",
// "webhook.events[1]"); Reason says what is wrong with it.
type SpecError struct {
	Field  string
	Reason string
}

// Error returns "<field>: <reason>".
func (e *SpecError) Error() string { return e.Field + ": " + e.Reason }

// Unwrap returns ErrInvalidSpec.
func (e *SpecError) Unwrap() error { return ErrInvalidSpec }

func specErr(field, format string, args ...any) error {
	return &SpecError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Spec is the webhook option of a crawl or batch scrape job, as the API
// accepts it. A zero Spec (empty URL) means the job has no webhook.
//
// Nil Headers and Metadata mean none; nil or empty Events means every event.
// ParseSpec decodes Metadata numbers as json.Number so they are echoed
// exactly.
type Spec struct {
	URL      string            `json:"url"`
	Headers  map[string]string `json:"headers,omitempty"`
	Metadata map[string]any    `json:"metadata,omitempty"`
	Events   []string          `json:"events,omitempty"`
}

// IsZero reports whether s configures no webhook.
func (s Spec) IsZero() bool { return s.URL == "" }

// Wants reports whether the event (a full name such as "crawl.page") should
// be delivered. A short name in Events ("page") matches that event of every
// job kind; a full name matches only itself.
func (s Spec) Wants(event string) bool {
	if len(s.Events) == 0 {
		return true
	}
	short := event[strings.LastIndexByte(event, '.')+1:]
	for _, e := range s.Events {
		if e == event || e == short {
			return true
		}
	}
	return false
}

// ParseSpec decodes the raw `webhook` field of a request body: either a URL
// string or an object {url, headers?, metadata?, events?} with no other
// keys. Empty raw input (field absent) yields a zero Spec and no error; JSON
// null is rejected, as the API does. Errors are *SpecError values naming the
// field.
func ParseSpec(raw json.RawMessage) (Spec, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return Spec{}, nil
	}
	switch raw[0] {
	case '"':
		var u string
		if err := json.Unmarshal(raw, &u); err != nil {
			return Spec{}, specErr("webhook", "malformed string")
		}
		if err := checkURL(u); err != nil {
			return Spec{}, specErr("webhook.url", "%s", err)
		}
		return Spec{URL: u}, nil
	case '{':
		return parseObject(raw)
	default:
		return Spec{}, specErr("webhook", "must be a URL string or an object")
	}
}

func parseObject(raw json.RawMessage) (Spec, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return Spec{}, specErr("webhook", "malformed object")
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch k {
		case "url", "headers", "metadata", "events":
		default:
			return Spec{}, specErr("webhook", "unrecognized key %q", k)
		}
	}

	var s Spec
	rawURL, ok := fields["url"]
	if !ok {
		return Spec{}, specErr("webhook.url", "is required")
	}
	if err := json.Unmarshal(rawURL, &s.URL); err != nil || isNull(rawURL) {
		return Spec{}, specErr("webhook.url", "must be a string")
	}
	if err := checkURL(s.URL); err != nil {
		return Spec{}, specErr("webhook.url", "%s", err)
	}

	if v, ok := fields["headers"]; ok {
		h, err := parseHeaders(v)
		if err != nil {
			return Spec{}, err
		}
		s.Headers = h
	}
	if v, ok := fields["metadata"]; ok {
		if isNull(v) {
			return Spec{}, specErr("webhook.metadata", "must be an object")
		}
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber()
		if err := dec.Decode(&s.Metadata); err != nil {
			return Spec{}, specErr("webhook.metadata", "must be an object")
		}
	}
	if v, ok := fields["events"]; ok {
		ev, err := parseEvents(v)
		if err != nil {
			return Spec{}, err
		}
		s.Events = ev
	}
	return s, nil
}

func parseHeaders(v json.RawMessage) (map[string]string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil || isNull(v) {
		return nil, specErr("webhook.headers", "must be an object of strings")
	}
	h := make(map[string]string, len(m))
	for name, rv := range m {
		field := "webhook.headers." + name
		var val string
		if err := json.Unmarshal(rv, &val); err != nil || isNull(rv) {
			return nil, specErr(field, "must be a string")
		}
		if err := checkHeader(name, val); err != nil {
			return nil, specErr(field, "%s", err)
		}
		h[name] = val
	}
	return h, nil
}

// checkHeader validates one configured header: a token name, a value
// without control characters other than tab, and not the signature header.
func checkHeader(name, val string) error {
	if name == "" {
		return errors.New("empty header name")
	}
	for i := 0; i < len(name); i++ {
		if !isTokenChar(name[i]) {
			return errors.New("invalid header name")
		}
	}
	for i := 0; i < len(val); i++ {
		if c := val[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return errors.New("header value contains a control character")
		}
	}
	if strings.EqualFold(name, SignatureHeader) {
		return fmt.Errorf("%s may not be set", SignatureHeader)
	}
	return nil
}

// isTokenChar reports whether c may appear in an HTTP header name (RFC 9110
// token).
func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func parseEvents(v json.RawMessage) ([]string, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil || isNull(v) {
		return nil, specErr("webhook.events", "must be an array of strings")
	}
	events := make([]string, 0, len(items))
	for i, rv := range items {
		field := fmt.Sprintf("webhook.events[%d]", i)
		var e string
		if err := json.Unmarshal(rv, &e); err != nil || isNull(rv) {
			return nil, specErr(field, "must be a string")
		}
		if !knownEvent(e) {
			return nil, specErr(field, "unknown event %q: want started, page, completed or failed, optionally prefixed with crawl., batch_scrape. or extract.", e)
		}
		if !slices.Contains(events, e) {
			events = append(events, e)
		}
	}
	return events, nil
}

// knownEvent accepts a short event name or one prefixed with a job kind.
func knownEvent(e string) bool {
	if kind, short, ok := strings.Cut(e, "."); ok {
		if Kind(kind) != KindCrawl && Kind(kind) != KindBatchScrape && Kind(kind) != KindExtract {
			return false
		}
		e = short
	}
	switch e {
	case EventStarted, EventPage, EventCompleted, EventFailed:
		return true
	}
	return false
}

// checkURL accepts absolute http and https URLs with a host.
func checkURL(s string) error {
	if s == "" {
		return errors.New("is required")
	}
	const msg = "must be an absolute http or https URL"
	if strings.TrimSpace(s) != s {
		return errors.New(msg)
	}
	u, err := url.Parse(s)
	if err != nil {
		return errors.New(msg)
	}
	if sch := strings.ToLower(u.Scheme); sch != "http" && sch != "https" {
		return errors.New(msg)
	}
	if u.Hostname() == "" {
		return errors.New(msg)
	}
	return nil
}

func isNull(v json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}
