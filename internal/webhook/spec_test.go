package webhook_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/firegate/firegate/internal/webhook"
)

func TestParseSpec(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		raw       string
		want      webhook.Spec
		wantField string // non-empty: expect a *SpecError on this field
	}{
		{name: "absent", raw: "", want: webhook.Spec{}},
		{name: "string form", raw: `"https://example.com/hook"`, want: webhook.Spec{URL: "https://example.com/hook"}},
		{name: "string form http with port and query", raw: `"http://example.com:8080/h?t=1"`, want: webhook.Spec{URL: "http://example.com:8080/h?t=1"}},
		{
			name: "object form",
			raw: `{"url":"https://example.com/hook","headers":{"Authorization":"Bearer x"},
				"metadata":{"team":"a","n":12345678901234567890,"nested":{"k":[1,true]}},
				"events":["started","crawl.page","batch_scrape.completed","page"]}`,
			want: webhook.Spec{
				URL:     "https://example.com/hook",
				Headers: map[string]string{"Authorization": "Bearer x"},
				Metadata: map[string]any{
					"team":   "a",
					"n":      json.Number("12345678901234567890"),
					"nested": map[string]any{"k": []any{json.Number("1"), true}},
				},
				Events: []string{"started", "crawl.page", "batch_scrape.completed", "page"},
			},
		},
		{name: "object url only", raw: `{"url":"https://example.com"}`, want: webhook.Spec{URL: "https://example.com"}},
		{name: "empty events", raw: `{"url":"https://example.com","events":[]}`, want: webhook.Spec{URL: "https://example.com", Events: []string{}}},
		{name: "duplicate events collapse", raw: `{"url":"https://example.com","events":["page","page"]}`, want: webhook.Spec{URL: "https://example.com", Events: []string{"page"}}},
		{name: "unknown key", raw: `{"url":"https://example.com","secret":"x"}`, wantField: "webhook"},
		{name: "key case matters", raw: `{"URL":"https://example.com"}`, wantField: "webhook"},
		{name: "missing url", raw: `{"events":["page"]}`, wantField: "webhook.url"},
		{name: "url not a string", raw: `{"url":5}`, wantField: "webhook.url"},
		{name: "url null", raw: `{"url":null}`, wantField: "webhook.url"},
		{name: "empty string", raw: `""`, wantField: "webhook.url"},
		{name: "relative url", raw: `"/hook"`, wantField: "webhook.url"},
		{name: "scheme-less url", raw: `"example.com/hook"`, wantField: "webhook.url"},
		{name: "ftp url", raw: `"ftp://example.com/hook"`, wantField: "webhook.url"},
		{name: "no host", raw: `"https:///hook"`, wantField: "webhook.url"},
		{name: "padded url", raw: `" https://example.com"`, wantField: "webhook.url"},
		{name: "bad url in object", raw: `{"url":"javascript:alert(1)"}`, wantField: "webhook.url"},
		{name: "bad event name", raw: `{"url":"https://example.com","events":["page","done"]}`, wantField: "webhook.events[1]"},
		{name: "bad event prefix", raw: `{"url":"https://example.com","events":["agent.started"]}`, wantField: "webhook.events[0]"},
		{name: "event not a string", raw: `{"url":"https://example.com","events":[1]}`, wantField: "webhook.events[0]"},
		{name: "events not an array", raw: `{"url":"https://example.com","events":"page"}`, wantField: "webhook.events"},
		{name: "events null", raw: `{"url":"https://example.com","events":null}`, wantField: "webhook.events"},
		{name: "header value not a string", raw: `{"url":"https://example.com","headers":{"X-N":1}}`, wantField: "webhook.headers.X-N"},
		{name: "headers not an object", raw: `{"url":"https://example.com","headers":["a"]}`, wantField: "webhook.headers"},
		{name: "header with newline", raw: `{"url":"https://example.com","headers":{"X-A":"a\r\nX-B: b"}}`, wantField: "webhook.headers.X-A"},
		{name: "bad header name", raw: `{"url":"https://example.com","headers":{"X A":"a"}}`, wantField: "webhook.headers.X A"},
		{name: "signature header", raw: `{"url":"https://example.com","headers":{"x-firecrawl-signature":"sha256=00"}}`, wantField: "webhook.headers.x-firecrawl-signature"},
		{name: "metadata not an object", raw: `{"url":"https://example.com","metadata":"x"}`, wantField: "webhook.metadata"},
		{name: "metadata null", raw: `{"url":"https://example.com","metadata":null}`, wantField: "webhook.metadata"},
		{name: "null", raw: `null`, wantField: "webhook"},
		{name: "number", raw: `42`, wantField: "webhook"},
		{name: "array", raw: `["https://example.com"]`, wantField: "webhook"},
		{name: "malformed object", raw: `{"url":`, wantField: "webhook"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := webhook.ParseSpec(json.RawMessage(tt.raw))
			if tt.wantField != "" {
				se, ok := errors.AsType[*webhook.SpecError](err)
				if !ok {
					t.Fatalf("ParseSpec(%s) error = %v, want a *SpecError", tt.raw, err)
				}
				if se.Field != tt.wantField {
					t.Errorf("field = %q, want %q (error %q)", se.Field, tt.wantField, err)
				}
				if !errors.Is(err, webhook.ErrInvalidSpec) {
					t.Errorf("error %v does not wrap ErrInvalidSpec", err)
				}
				if want := tt.wantField + ": "; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
					t.Errorf("message %q does not start with %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSpec(%s): %v", tt.raw, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseSpec(%s) mismatch (-want +got):\n%s", tt.raw, diff)
			}
		})
	}
}

func TestSpecJSONRoundTrip(t *testing.T) {
	t.Parallel()
	in := `{"url":"https://example.com/h","headers":{"A":"b"},"metadata":{"n":1.50},"events":["page"]}`
	s, err := webhook.ParseSpec(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"url":"https://example.com/h","headers":{"A":"b"},"metadata":{"n":1.50},"events":["page"]}`; string(out) != want {
		t.Errorf("marshal = %s, want %s", out, want)
	}
	again, err := webhook.ParseSpec(out)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s, again); diff != "" {
		t.Errorf("round trip mismatch (-first +second):\n%s", diff)
	}
}

func TestSpecWants(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		events []string
		event  string
		want   bool
	}{
		{name: "nil means all", events: nil, event: "crawl.page", want: true},
		{name: "empty means all", events: []string{}, event: "batch_scrape.failed", want: true},
		{name: "short matches crawl", events: []string{"page"}, event: "crawl.page", want: true},
		{name: "short matches batch", events: []string{"page"}, event: "batch_scrape.page", want: true},
		{name: "short other event", events: []string{"page"}, event: "crawl.completed", want: false},
		{name: "full exact", events: []string{"crawl.completed"}, event: "crawl.completed", want: true},
		{name: "full other kind", events: []string{"crawl.completed"}, event: "batch_scrape.completed", want: false},
		{name: "mixed", events: []string{"started", "batch_scrape.page"}, event: "batch_scrape.page", want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := webhook.Spec{URL: "https://example.com", Events: tt.events}
			if got := s.Wants(tt.event); got != tt.want {
				t.Errorf("Wants(%q) with %v = %v, want %v", tt.event, tt.events, got, tt.want)
			}
		})
	}
}
