package v1compat

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func object(t *testing.T, s string) Object {
	t.Helper()
	var m Object
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func decoded(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return m
}

func TestScrapeBody(t *testing.T) {
	body, extract, err := ScrapeBody(object(t, `{"url":"https://example.com","formats":["markdown","screenshot@fullPage","extract",{"type":"links"}],
		"extract":{"prompt":"p","systemPrompt":"s"},"geolocation":{"country":"DE"},"parsePDF":false,"useMock":"x","timeout":1000}`))
	if err != nil || !extract {
		t.Fatalf("ScrapeBody: extract %v, err %v", extract, err)
	}
	want := map[string]any{
		"url": "https://example.com",
		"formats": []any{"markdown", map[string]any{"type": "screenshot", "fullPage": true},
			map[string]any{"type": "json", "prompt": "s\n\np"}, map[string]any{"type": "links"}},
		"location": map[string]any{"country": "DE"}, "parsers": []any{}, "maxAge": 0.0, "timeout": 1000.0,
	}
	if diff := cmp.Diff(want, decoded(t, body)); diff != "" {
		t.Errorf("v2 body (-want +got):\n%s", diff)
	}
}

func TestCrawlBody(t *testing.T) {
	body, err := CrawlBody(object(t, `{"url":"https://example.com","maxDepth":2,"allowBackwardLinks":true,"ignoreSitemap":true,
		"scrapeOptions":{"formats":["json"],"jsonOptions":{"schema":{"type":"object"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"url": "https://example.com", "maxDiscoveryDepth": 2.0, "crawlEntireDomain": true, "sitemap": "skip",
		"scrapeOptions": map[string]any{"formats": []any{map[string]any{"type": "json", "schema": map[string]any{"type": "object"}}},
			"maxAge": 0.0, "timeout": 30000.0},
	}
	if diff := cmp.Diff(want, decoded(t, body)); diff != "" {
		t.Errorf("v2 body (-want +got):\n%s", diff)
	}
}

func TestScrapeOptionsNotAnObject(t *testing.T) {
	for _, so := range []string{`null`, `[]`, `"markdown"`, `3`} {
		_, err := SearchBody(object(t, `{"query":"q","scrapeOptions":`+so+`}`))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "scrapeOptions" || !errors.Is(err, ErrNotObject) {
			t.Errorf("scrapeOptions %s: err %v; want a FieldError naming scrapeOptions", so, err)
		}
	}
}

func TestAnswers(t *testing.T) {
	if got := string(MapLinks([]byte(`{"success":true,"links":[{"url":"https://a.com/","title":"A"}]}`))); got != `{"links":["https://a.com/"],"success":true}`+"\n" {
		t.Errorf("MapLinks: %s", got)
	}
	if got := string(SearchData([]byte(`{"success":true,"data":{"web":[{"url":"u"}]}}`))); got != `{"data":[{"url":"u"}],"success":true}`+"\n" {
		t.Errorf("SearchData: %s", got)
	}
	if got := string(Usage([]byte(`{"success":true,"data":{"remainingCredits":5}}`))); got != `{"data":{"remaining_credits":5},"success":true}`+"\n" {
		t.Errorf("Usage: %s", got)
	}
	if got := string(ScrapeAnswer(true)([]byte(`{"success":true,"data":{"json":{"a":1}}}`))); got != `{"data":{"extract":{"a":1}},"success":true}`+"\n" {
		t.Errorf("ScrapeAnswer: %s", got)
	}
	if got := string(CrawlStarted([]byte(`{"url":"http://h/v2/crawl/1"}`))); got != `{"url":"http://h/v1/crawl/1"}` {
		t.Errorf("CrawlStarted: %s", got)
	}
}

// TestChangeTrackingOptions: v1's changeTrackingOptions become the v2
// changeTracking format's keys; absent, null or not an object, the format
// is the bare one (null used to panic on a nil map).
func TestChangeTrackingOptions(t *testing.T) {
	for _, tc := range []struct {
		opts string
		want map[string]any
	}{
		{`,"changeTrackingOptions":{"modes":["json"],"tag":"t"}`, map[string]any{"type": "changeTracking", "modes": []any{"json"}, "tag": "t"}},
		{``, map[string]any{"type": "changeTracking"}},
		{`,"changeTrackingOptions":null`, map[string]any{"type": "changeTracking"}},
		{`,"changeTrackingOptions":["json"]`, map[string]any{"type": "changeTracking"}},
	} {
		body, _, err := ScrapeBody(object(t, `{"url":"https://example.com","formats":["changeTracking"]`+tc.opts+`}`))
		if err != nil {
			t.Fatalf("%s: %v", tc.opts, err)
		}
		if diff := cmp.Diff([]any{tc.want}, decoded(t, body)["formats"]); diff != "" {
			t.Errorf("%s: formats (-want +got):\n%s", tc.opts, diff)
		}
	}
}
