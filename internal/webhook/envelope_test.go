package webhook_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/firegate/firegate/internal/webhook"
)

func TestEnvelope(t *testing.T) {
	t.Parallel()
	const jobID = "0197a6e4-1c2b-7c3d-9e8f-0a1b2c3d4e5f"
	const hookID = "0197a6e4-aaaa-7bbb-8ccc-dddddddddddd"
	doc := json.RawMessage(`{"markdown":"# Hi","metadata":{"sourceURL":"https://example.com/a","statusCode":200}}`)
	withMeta := webhook.Spec{URL: "https://r.example/h", Metadata: map[string]any{"team": "x", "n": json.Number("7")}}
	noMeta := webhook.Spec{URL: "https://r.example/h"}

	tests := []struct {
		name string
		spec webhook.Spec
		ev   webhook.Event
		want string
	}{
		{
			name: "crawl started",
			spec: noMeta,
			ev:   webhook.KindCrawl.Started(jobID),
			want: `{"success":true,"type":"crawl.started","id":"` + jobID + `","webhookId":"` + hookID + `","data":[],"metadata":{}}`,
		},
		{
			name: "batch started with metadata",
			spec: withMeta,
			ev:   webhook.KindBatchScrape.Started(jobID),
			want: `{"success":true,"type":"batch_scrape.started","id":"` + jobID + `","webhookId":"` + hookID + `","data":[],"metadata":{"n":7,"team":"x"}}`,
		},
		{
			name: "crawl page success",
			spec: withMeta,
			ev:   webhook.KindCrawl.Page(jobID, doc),
			want: `{"success":true,"type":"crawl.page","id":"` + jobID + `","webhookId":"` + hookID + `","data":[` + string(doc) + `],"metadata":{"n":7,"team":"x"}}`,
		},
		{
			name: "batch page failure",
			spec: noMeta,
			ev:   webhook.KindBatchScrape.PageFailed(jobID, "https://example.com/b", "Request timed out"),
			want: `{"success":false,"type":"batch_scrape.page","id":"` + jobID + `","webhookId":"` + hookID + `","data":[{"metadata":{"sourceURL":"https://example.com/b"}}],"error":"Request timed out","metadata":{}}`,
		},
		{
			name: "crawl completed",
			spec: noMeta,
			ev:   webhook.KindCrawl.Completed(jobID),
			want: `{"success":true,"type":"crawl.completed","id":"` + jobID + `","webhookId":"` + hookID + `","data":[],"metadata":{}}`,
		},
		{
			name: "crawl failed",
			spec: noMeta,
			ev:   webhook.KindCrawl.Failed(jobID, "boom"),
			want: `{"success":false,"type":"crawl.failed","id":"` + jobID + `","webhookId":"` + hookID + `","data":[],"error":"boom","metadata":{}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := webhook.Envelope(tt.spec, tt.ev, hookID)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(decode(t, []byte(tt.want)), decode(t, got)); diff != "" {
				t.Errorf("envelope mismatch (-want +got):\n%s\ngot %s", diff, got)
			}
		})
	}
}

func TestEnvelopeKeyOrderAndHTML(t *testing.T) {
	t.Parallel()
	ev := webhook.KindCrawl.Page("j", map[string]string{"html": "<p>a & b</p>"})
	got, err := webhook.Envelope(webhook.Spec{URL: "https://r.example"}, ev, "w")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"success":true,"type":"crawl.page","id":"j","webhookId":"w","data":[{"html":"<p>a & b</p>"}],"metadata":{}}`
	if string(got) != want {
		t.Errorf("Envelope = %s\nwant      %s", got, want)
	}
}

func TestEnvelopeRejects(t *testing.T) {
	t.Parallel()
	spec := webhook.Spec{URL: "https://r.example"}
	tests := []struct {
		name   string
		ev     webhook.Event
		hookID string
		want   string
	}{
		{name: "no type", ev: webhook.Event{JobID: "j"}, hookID: "w", want: "event type"},
		{name: "no job id", ev: webhook.Event{Type: "crawl.page"}, hookID: "w", want: "job id"},
		{name: "no webhook id", ev: webhook.KindCrawl.Started("j"), hookID: "", want: "webhook id"},
		{name: "bad raw data", ev: webhook.KindCrawl.Page("j", json.RawMessage(`{`)), hookID: "w", want: "envelope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := webhook.Envelope(spec, tt.ev, tt.hookID)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Envelope error = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return m
}
