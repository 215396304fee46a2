package metrics

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// scrapeText GETs the handler and returns the exposition text.
func scrapeText(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func TestObservers(t *testing.T) {
	t.Parallel()
	m := New(Options{})
	m.ObserveRequest("/v2/scrape", "POST", 200, 30*time.Millisecond)
	m.ObserveRequest("/v2/scrape", "POST", 200, 40*time.Millisecond)
	m.ObserveRequest("/v2/scrape", "POST", 402, time.Millisecond)
	m.ObserveScrape("fetch", "success", 20*time.Millisecond)
	m.ObserveScrape("cache", "success", time.Millisecond)
	m.ObserveCache(true)
	m.ObserveCache(false)
	m.ObserveCache(false)
	m.ObserveCharge("scrape", 1)
	m.ObserveCharge("scrape", 5)
	m.ObserveCharge("map", 0) // nothing charged, nothing counted
	m.ObserveJobPage("crawl", "done")
	m.ObserveJobPage("crawl", "done")
	m.ObserveJobPage("batch", "failed")
	m.ObserveLLMCall("json", "success", 2*time.Second, 300, 20)
	m.ObserveLLMCall("json", "timeout", time.Minute, 0, 0)
	m.ObserveLLMCall("", "success", time.Second, 10, 0)
	m.ObserveLLMInvalidAnswer("json")

	for _, tc := range []struct {
		name string
		got  float64
		want float64
	}{
		{"requests 200", testutil.ToFloat64(m.httpRequests.WithLabelValues("/v2/scrape", "POST", "200")), 2},
		{"requests 402", testutil.ToFloat64(m.httpRequests.WithLabelValues("/v2/scrape", "POST", "402")), 1},
		{"cache hit", testutil.ToFloat64(m.cache.WithLabelValues("hit")), 1},
		{"cache miss", testutil.ToFloat64(m.cache.WithLabelValues("miss")), 2},
		{"credits scrape", testutil.ToFloat64(m.credits.WithLabelValues("scrape")), 6},
		{"crawl pages done", testutil.ToFloat64(m.jobPages.WithLabelValues("crawl", "done")), 2},
		{"batch pages failed", testutil.ToFloat64(m.jobPages.WithLabelValues("batch", "failed")), 1},
		{"llm json success", testutil.ToFloat64(m.llmCalls.WithLabelValues("json", "success")), 1},
		{"llm json timeout", testutil.ToFloat64(m.llmCalls.WithLabelValues("json", "timeout")), 1},
		{"llm unlabelled", testutil.ToFloat64(m.llmCalls.WithLabelValues("other", "success")), 1},
		{"llm prompt tokens", testutil.ToFloat64(m.llmTokens.WithLabelValues("json", "prompt")), 300},
		{"llm completion tokens", testutil.ToFloat64(m.llmTokens.WithLabelValues("json", "completion")), 20},
		{"llm invalid", testutil.ToFloat64(m.llmInvalid.WithLabelValues("json")), 1},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	text := scrapeText(t, m)
	for _, want := range []string{
		`firegate_http_request_duration_seconds_count{route="/v2/scrape"} 3`,
		`firegate_scrape_duration_seconds_count{engine="fetch",outcome="success"} 1`,
		`firegate_scrape_duration_seconds_count{engine="cache",outcome="success"} 1`,
		`firegate_queue_depth 0`,
		`firegate_browser_tabs_in_use 0`,
		"go_goroutines ",
		"process_cpu_seconds_total ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
	if strings.Contains(text, `kind="map"`) {
		t.Errorf("a zero charge made a series")
	}
}

func TestGaugeFuncs(t *testing.T) {
	t.Parallel()
	m := New(Options{})
	m.SetBrowserTabs(func() (int, int) { return 3, 8 })
	depth := 0
	m.SetQueueDepth(func(ctx context.Context) (int, error) {
		if _, ok := ctx.Deadline(); !ok {
			t.Errorf("queue depth read without a deadline")
		}
		depth++
		if depth == 2 {
			return 0, errors.New("queue down")
		}
		return 10 * depth, nil
	})
	text := scrapeText(t, m)
	for _, want := range []string{"firegate_browser_tabs_in_use 3", "firegate_browser_tabs_max 8", "firegate_queue_depth 10"} {
		if !strings.Contains(text, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
	// A failing read keeps the last value.
	if text := scrapeText(t, m); !strings.Contains(text, "firegate_queue_depth 10") {
		t.Errorf("after a failed read: %s", grep(text, "queue_depth"))
	}
	if text := scrapeText(t, m); !strings.Contains(text, "firegate_queue_depth 30") {
		t.Errorf("third read: %s", grep(text, "queue_depth"))
	}
	m.SetQueueDepth(nil)
	m.SetBrowserTabs(nil)
	text = scrapeText(t, m)
	for _, want := range []string{"firegate_browser_tabs_in_use 0", "firegate_queue_depth 0"} {
		if !strings.Contains(text, want) {
			t.Errorf("after unset, exposition lacks %q", want)
		}
	}
}

// TestOwnRegistry checks two Metrics do not share series (no global state).
func TestOwnRegistry(t *testing.T) {
	t.Parallel()
	a, b := New(Options{}), New(Options{})
	a.ObserveCache(true)
	if got := testutil.ToFloat64(b.cache.WithLabelValues("hit")); got != 0 {
		t.Errorf("second registry sees %v hits", got)
	}
}

func TestNilIsNoop(t *testing.T) {
	t.Parallel()
	var m *Metrics
	m.ObserveRequest("/x", "GET", 200, time.Second)
	m.ObserveScrape("fetch", "success", time.Second)
	m.ObserveCache(true)
	m.ObserveCharge("scrape", 1)
	m.ObserveLLMCall("json", "success", time.Second, 1, 1)
	m.ObserveLLMInvalidAnswer("json")
	m.SetBrowserTabs(func() (int, int) { return 1, 1 })
	m.SetQueueDepth(func(context.Context) (int, error) { return 1, nil })
}

func grep(text, substr string) string {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// BenchmarkObserveRequest is the cost the HTTP middleware adds per request.
func BenchmarkObserveRequest(b *testing.B) {
	m := New(Options{})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.ObserveRequest("/v2/scrape", "POST", 200, 25*time.Millisecond)
		}
	})
}
