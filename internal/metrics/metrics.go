// Package metrics exposes the server's Prometheus series: HTTP requests by
// route, scrape latency by engine and outcome, document cache hits and
// misses, browser tabs in use, queue depth, credits charged and language
// model calls (count by outcome, latency, tokens, invalid answers), plus the
// Go runtime and process collectors.
//
// A *Metrics owns its registry (never the global default one), so tests and
// several servers in one process do not share series. Other packages do not
// import Prometheus: they receive *Metrics through small observer interfaces
// of their own (scrape.Observer, a billing charge callback, an httpapi
// interface). Every method is safe on a nil *Metrics and then does nothing.
package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every series of this package.
const Namespace = "firegate"

// queueDepthTimeout bounds the queue depth read made on each scrape of
// /metrics.
const queueDepthTimeout = 2 * time.Second

// Options configures New.
type Options struct {
	// Log receives failures of the queue depth read; nil discards them.
	Log *slog.Logger
}

// Metrics holds the registry and the series. Create it with New.
type Metrics struct {
	reg *prometheus.Registry
	log *slog.Logger

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	scrapes      *prometheus.HistogramVec
	cache        *prometheus.CounterVec
	credits      *prometheus.CounterVec
	jobPages     *prometheus.CounterVec
	queueDepth   prometheus.Gauge
	llmCalls     *prometheus.CounterVec
	llmDuration  *prometheus.HistogramVec
	llmTokens    *prometheus.CounterVec
	llmInvalid   *prometheus.CounterVec

	tabs         atomic.Pointer[func() (inUse, limit int)]
	queueDepthFn atomic.Pointer[func(ctx context.Context) (int, error)]
}

// QueueStats is what the queue depth is read from; pass its method to
// SetQueueDepth: m.SetQueueDepth(q.Depth).
type QueueStats interface {
	Depth(ctx context.Context) (int, error)
}

// scrapeBuckets span a cached answer (milliseconds) to a slow browser render
// or OCR run (minutes).
func scrapeBuckets() []float64 {
	return []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300}
}

// New returns the metrics with a registry of their own.
func New(o Options) *Metrics {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Metrics{reg: prometheus.NewRegistry(), log: log}
	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "http_requests_total",
		Help: "HTTP requests answered, by route pattern, method and status code.",
	}, []string{"route", "method", "code"})
	m.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "http_request_duration_seconds",
		Help:    "Time to answer an HTTP request, by route pattern.",
		Buckets: prometheus.DefBuckets,
	}, []string{"route"})
	m.scrapes = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "scrape_duration_seconds",
		Help:    "Time of one scrape in the engine, by engine (cache, fetch, browser, pdf) and outcome.",
		Buckets: scrapeBuckets(),
	}, []string{"engine", "outcome"})
	m.cache = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "cache_requests_total",
		Help: "Document cache reads by the scrape engine, by result (hit or miss).",
	}, []string{"result"})
	m.credits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "credits_charged_total",
		Help: "Credits charged to teams, by kind of work (scrape, map, crawl, ...).",
	}, []string{"kind"})
	m.jobPages = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "job_pages_total",
		Help: "Pages of crawls and batch scrapes finished by this process, by job kind and state (done, failed, skipped).",
	}, []string{"kind", "state"})
	m.queueDepth = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "queue_depth",
		Help: "Jobs waiting in the work queue, read on each collection; 0 when no queue is wired.",
	})
	m.llmCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "llm_calls_total",
		Help: "Language model completions (retries included in one), by purpose (json, summary, question, ...) and outcome (success, timeout, unavailable, rejected, canceled, error).",
	}, []string{"purpose", "outcome"})
	m.llmDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "llm_call_duration_seconds",
		Help:    "Time of one language model completion, waits for a concurrency slot and retries included, by purpose.",
		Buckets: scrapeBuckets(),
	}, []string{"purpose"})
	m.llmTokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "llm_tokens_total",
		Help: "Language model tokens of the answers received (as the endpoint reports them, else estimated), by purpose and kind (prompt, completion).",
	}, []string{"purpose", "kind"})
	m.llmInvalid = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "llm_invalid_answers_total",
		Help: "Language model answers that were not JSON valid against the schema, by purpose.",
	}, []string{"purpose"})
	tabsInUse := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "browser_tabs_in_use",
		Help: "Browser tabs rendering a page now; 0 without a browser.",
	}, func() float64 { n, _ := m.browserTabs(); return float64(n) })
	tabsMax := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "browser_tabs_max",
		Help: "Browser tabs that may be open at once (BROWSER_MAX_TABS); 0 without a browser.",
	}, func() float64 { _, n := m.browserTabs(); return float64(n) })
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.httpRequests, m.httpDuration, m.scrapes, m.cache, m.credits, m.jobPages, m.queueDepth, tabsInUse, tabsMax,
		m.llmCalls, m.llmDuration, m.llmTokens, m.llmInvalid,
	)
	return m
}

// Registry returns the registry holding every series, for tests and for
// registering more collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the series in the Prometheus text format. Each request
// first reads the queue depth (bounded by 2 s and the request's context).
func (m *Metrics) Handler() http.Handler {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.refreshQueueDepth(r.Context())
		h.ServeHTTP(w, r)
	})
}

// ObserveRequest records one HTTP request. route is the router's pattern
// (never the raw path, which would make a series per URL); an unmatched
// request should pass a fixed placeholder.
func (m *Metrics) ObserveRequest(route, method string, code int, d time.Duration) {
	if m == nil {
		return
	}
	m.httpRequests.WithLabelValues(route, methodLabel(method), strconv.Itoa(code)).Inc()
	m.httpDuration.WithLabelValues(route).Observe(d.Seconds())
}

// otherMethod labels every request method outside the standard set: the
// method is the client's word, and a series per word would let anyone grow
// the exposition (and the server's memory) without bound.
const otherMethod = "OTHER"

// methodLabel is method when it is one of HTTP's standard methods, else
// otherMethod.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return method
	}
	return otherMethod
}

// ObserveScrape records one scrape of the engine (scrape.Observer).
func (m *Metrics) ObserveScrape(engine, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.scrapes.WithLabelValues(engine, outcome).Observe(d.Seconds())
}

// ObserveCache records one document cache read (scrape.Observer).
func (m *Metrics) ObserveCache(hit bool) {
	if m == nil {
		return
	}
	result := "miss"
	if hit {
		result = "hit"
	}
	m.cache.WithLabelValues(result).Inc()
}

// ObserveJobPage counts one finished page of a crawl or batch scrape (the
// crawl runner's callback).
func (m *Metrics) ObserveJobPage(kind, state string) {
	if m == nil {
		return
	}
	m.jobPages.WithLabelValues(kind, state).Inc()
}

// ObserveCharge records credits charged for one kind of work (the billing
// ledger's charge callback).
func (m *Metrics) ObserveCharge(kind string, credits int64) {
	if m == nil || credits <= 0 {
		return
	}
	m.credits.WithLabelValues(kind).Add(float64(credits))
}

// ObserveLLMCall records one language model completion (llm.Observer).
func (m *Metrics) ObserveLLMCall(purpose, outcome string, d time.Duration, promptTokens, completionTokens int64) {
	if m == nil {
		return
	}
	purpose = llmPurpose(purpose)
	m.llmCalls.WithLabelValues(purpose, outcome).Inc()
	m.llmDuration.WithLabelValues(purpose).Observe(d.Seconds())
	if promptTokens > 0 {
		m.llmTokens.WithLabelValues(purpose, "prompt").Add(float64(promptTokens))
	}
	if completionTokens > 0 {
		m.llmTokens.WithLabelValues(purpose, "completion").Add(float64(completionTokens))
	}
}

// ObserveLLMInvalidAnswer counts an answer that failed schema validation
// (llm.Observer).
func (m *Metrics) ObserveLLMInvalidAnswer(purpose string) {
	if m == nil {
		return
	}
	m.llmInvalid.WithLabelValues(llmPurpose(purpose)).Inc()
}

// llmPurpose is the purpose label: "other" when the caller gave none.
func llmPurpose(p string) string {
	if p == "" {
		return "other"
	}
	return p
}

// SetBrowserTabs sets the function read for browser_tabs_in_use and
// browser_tabs_max; until it is set (or with nil) both are 0.
func (m *Metrics) SetBrowserTabs(f func() (inUse, limit int)) {
	if m == nil {
		return
	}
	if f == nil {
		m.tabs.Store(nil)
		return
	}
	m.tabs.Store(&f)
}

// SetQueueDepth sets the function read for queue_depth on each collection;
// until it is set (or with nil) the depth is 0. When f fails the last value
// stays and the failure is logged.
func (m *Metrics) SetQueueDepth(f func(ctx context.Context) (int, error)) {
	if m == nil {
		return
	}
	if f == nil {
		m.queueDepthFn.Store(nil)
		m.queueDepth.Set(0)
		return
	}
	m.queueDepthFn.Store(&f)
}

func (m *Metrics) browserTabs() (inUse, limit int) {
	f := m.tabs.Load()
	if f == nil {
		return 0, 0
	}
	return (*f)()
}

func (m *Metrics) refreshQueueDepth(ctx context.Context) {
	f := m.queueDepthFn.Load()
	if f == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, queueDepthTimeout)
	defer cancel()
	n, err := (*f)(ctx)
	if err != nil {
		m.log.WarnContext(ctx, "queue depth unavailable", "err", err)
		return
	}
	m.queueDepth.Set(float64(n))
}
