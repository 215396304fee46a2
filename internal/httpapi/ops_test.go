package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/firegate/firegate/internal/apikey"
	"github.com/firegate/firegate/internal/auth"
	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/cache"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/metrics"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/teststore"
	"github.com/firegate/firegate/internal/testenv"
)

// live is the real router over HTTP with the real engine, ledger, auth and
// metrics, an embedded store with one team, and a local page to scrape.
type live struct {
	api  *httptest.Server
	page *httptest.Server
	st   store.Store
	team store.Team
	key  string
	logs *logBuffer
	auth *auth.Authenticator // the server's, caching keys for 1 ms
}

func setupLive(t *testing.T, withMetrics bool) *live {
	t.Helper()
	ctx := t.Context()
	st := teststore.SQLite(t)
	team, err := st.CreateTeam(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetCredits(ctx, team.ID, 100); err != nil {
		t.Fatal(err)
	}
	key, _ := apikey.Generate()
	if _, err := st.CreateAPIKey(ctx, team.ID, apikey.Hash(key), apikey.Prefix(key)); err != nil {
		t.Fatal(err)
	}
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<html><head><title>Tides</title></head><body><article><h1>Tides</h1><p>The sea comes in twice a day.</p></article></body></html>`)
	}))
	t.Cleanup(page.Close)

	logs := &logBuffer{}
	log := testenv.Logger(t)
	ledger := billing.NewLedger(st, log)
	var m *metrics.Metrics
	engCfg := scrape.Config{Fetcher: fetch.New(fetch.Options{AllowPrivate: true}, log), Cache: cache.NewMemory(1 << 20), Log: log}
	authn := auth.New(st, auth.Options{CacheTTL: time.Millisecond})
	d := Deps{Auth: authn, Ledger: ledger, Limiter: limits.NewLocal(),
		Results: cache.NewMemory(1 << 20), Log: slogJSON(logs)}
	if withMetrics {
		m = metrics.New(metrics.Options{Log: log})
		ledger.ObserveCharges(m.ObserveCharge)
		engCfg.Metrics = m
		d.Metrics = m
	}
	d.Scraper = scrape.New(engCfg)
	d.ReadyChecks = []ReadyCheck{{Name: "store", Check: func(ctx context.Context) (string, error) { return "", st.Ping(ctx) }}}
	srv := New(d)
	srv.SetReady(true)
	api := httptest.NewServer(srv)
	t.Cleanup(api.Close)
	return &live{api: api, page: page, st: st, team: team, key: key, logs: logs, auth: authn}
}

func slogJSON(w io.Writer) *slog.Logger { return slog.New(slog.NewJSONHandler(w, nil)) }

// call makes one request to the live server and decodes a JSON answer.
func (l *live) call(t *testing.T, method, path, key, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, l.api.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// families GETs /metrics and parses the exposition.
func (l *live) families(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(l.api.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// value returns the counter, gauge or histogram count of the family's
// series with exactly these labels; -1 when there is none.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		match := true
		for _, lp := range m.GetLabel() {
			if labels[lp.GetName()] != lp.GetValue() {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return -1
}

func TestMetricsEndToEnd(t *testing.T) {
	t.Parallel()
	l := setupLive(t, true)
	body := `{"url":"` + l.page.URL + `/tides","formats":["markdown"],"maxAge":3600000}`
	for i, want := range []string{"miss", "hit"} {
		code, got := l.call(t, http.MethodPost, "/v2/scrape", l.key, body)
		data, _ := got["data"].(map[string]any)
		meta, _ := data["metadata"].(map[string]any)
		if code != 200 || meta["cacheState"] != want {
			t.Fatalf("scrape %d: %d cacheState %v, want %s: %v", i, code, meta["cacheState"], want, got)
		}
	}
	if code, _ := l.call(t, http.MethodPost, "/v2/scrape", "", body); code != 401 {
		t.Fatalf("no key: %d", code)
	}
	for _, path := range []string{"/no/such/path/1234", "/v2/no/such/route/1234"} {
		if code, _ := l.call(t, http.MethodGet, path, l.key, ""); code != 404 {
			t.Fatalf("unknown path %s: %d", path, code)
		}
	}

	fams := l.families(t)
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"firegate_http_requests_total", map[string]string{"route": "/v2/scrape", "method": "POST", "code": "200"}, 2},
		{"firegate_http_requests_total", map[string]string{"route": "/v2/scrape", "method": "POST", "code": "401"}, 1},
		{"firegate_http_requests_total", map[string]string{"route": unmatchedRoute, "method": "GET", "code": "404"}, 2},
		{"firegate_http_request_duration_seconds", map[string]string{"route": "/v2/scrape"}, 3},
		{"firegate_scrape_duration_seconds", map[string]string{"engine": "fetch", "outcome": "success"}, 1},
		{"firegate_scrape_duration_seconds", map[string]string{"engine": "cache", "outcome": "success"}, 1},
		{"firegate_cache_requests_total", map[string]string{"result": "miss"}, 1},
		{"firegate_cache_requests_total", map[string]string{"result": "hit"}, 1},
		{"firegate_credits_charged_total", map[string]string{"kind": "scrape"}, 2},
		{"firegate_queue_depth", map[string]string{}, 0},
		{"firegate_browser_tabs_in_use", map[string]string{}, 0},
	} {
		if got := value(fams, tc.name, tc.labels); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		if fams[name] == nil {
			t.Errorf("%s missing", name)
		}
	}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "route" && strings.Contains(lp.GetValue(), "1234") {
					t.Errorf("%s has a raw path as route: %q", name, lp.GetValue())
				}
			}
		}
	}
	if bal, _ := l.st.CreditBalance(t.Context(), l.team.ID); bal.Remaining != 98 {
		t.Errorf("balance %d, want 98", bal.Remaining)
	}
}

func TestMetricsRouteOnlyWhenEnabled(t *testing.T) {
	t.Parallel()
	l := setupLive(t, false)
	if code, got := l.call(t, http.MethodGet, "/metrics", "", ""); code != 404 || got["code"] != "NOT_FOUND" {
		t.Errorf("GET /metrics without metrics: %d %v", code, got)
	}
}

func TestAccessLogFields(t *testing.T) {
	t.Parallel()
	l := setupLive(t, false)
	target := l.page.URL + "/secret-path"
	if code, _ := l.call(t, http.MethodPost, "/v2/scrape", l.key, `{"url":"`+target+`"}`); code != 200 {
		t.Fatalf("scrape: %d", code)
	}
	if err := l.st.SetTeamLimits(t.Context(), l.team.ID, store.TeamLimits{ZeroDataRetention: true}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, func() bool {
		team, err := l.auth.Authenticate(t.Context(), l.key)
		return err == nil && team.Limits.ZeroDataRetention
	}, "the server's auth still caches the team's limits from before")
	zdrTarget := l.page.URL + "/zdr-path"
	l.call(t, http.MethodPost, "/v2/scrape", l.key, `{"url":"`+zdrTarget+`","zeroDataRetention":true}`)

	var lines []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(l.logs.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == "http request" {
			lines = append(lines, m)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("want 2 access log lines, got %d:\n%s", len(lines), l.logs)
	}
	if lines[0]["team_id"] != l.team.ID || lines[0]["url"] != target || lines[0]["request_id"] == "" {
		t.Errorf("access log line: %v", lines[0])
	}
	if lines[1]["team_id"] != l.team.ID || lines[1]["url"] != nil {
		t.Errorf("zero data retention access log line: %v", lines[1])
	}
	if strings.Contains(l.logs.String(), "zdr-path") || strings.Contains(l.logs.String(), l.key) {
		t.Errorf("logs hold the zero data retention URL or the key:\n%s", l.logs)
	}
}

// TestLogsHoldNoURLCredentials: credentials in a target URL appear in no
// log line, while the URL without them does.
func TestLogsHoldNoURLCredentials(t *testing.T) {
	t.Parallel()
	l := setupLive(t, false)
	target := strings.Replace(l.page.URL, "http://", "http://scraper:hunter2secret@", 1) + "/creds-path"
	if code, _ := l.call(t, http.MethodPost, "/v2/scrape", l.key, `{"url":"`+target+`"}`); code != 200 {
		t.Fatalf("scrape: %d", code)
	}
	l.call(t, http.MethodPost, "/v2/map", l.key, `{"url":"`+target+`"}`)
	logs := l.logs.String()
	if strings.Contains(logs, "hunter2secret") || strings.Contains(logs, "scraper:") {
		t.Errorf("logs hold the URL's credentials:\n%s", logs)
	}
	if !strings.Contains(logs, l.page.URL+"/creds-path") {
		t.Errorf("logs lack the URL without credentials:\n%s", logs)
	}
}

func TestReady(t *testing.T) {
	t.Parallel()
	t.Run("store up", func(t *testing.T) {
		t.Parallel()
		l := setupLive(t, false)
		code, got := l.call(t, http.MethodGet, "/ready", "", "")
		checks, _ := got["checks"].(map[string]any)
		store, _ := checks["store"].(map[string]any)
		if code != 200 || got["status"] != "ready" || store["status"] != "ok" {
			t.Errorf("GET /ready: %d %v", code, got)
		}
	})
	t.Run("store closed", func(t *testing.T) {
		t.Parallel()
		l := setupLive(t, false)
		if err := l.st.Close(); err != nil {
			t.Fatal(err)
		}
		code, got := l.call(t, http.MethodGet, "/ready", "", "")
		checks, _ := got["checks"].(map[string]any)
		store, _ := checks["store"].(map[string]any)
		if code != 503 || got["status"] != "not ready" || store["status"] != "fail" || store["error"] != "unreachable" {
			t.Errorf("GET /ready with the store closed: %d %v", code, got)
		}
	})
}

func TestReadyChecks(t *testing.T) {
	t.Parallel()
	slow := func(ctx context.Context) (string, error) {
		<-ctx.Done()
		// A check that ignores its deadline a little: the bound on the
		// whole /ready (a duration) is what is checked.
		time.Sleep(10 * time.Millisecond)
		return "", ctx.Err()
	}
	for _, tc := range []struct {
		name    string
		checks  []ReadyCheck
		serving bool
		code    int
		want    map[string]string // check -> status
	}{
		{"no checks", nil, true, 200, map[string]string{}},
		{"not serving", nil, false, 503, map[string]string{"server": "fail"}},
		{"lazy browser is ready", []ReadyCheck{
			{Name: "store", Check: func(context.Context) (string, error) { return "", nil }},
			{Name: "browser", Check: func(context.Context) (string, error) { return "not started", nil }},
		}, true, 200, map[string]string{"store": "ok", "browser": "not started"}},
		{"one failing", []ReadyCheck{
			{Name: "store", Check: func(context.Context) (string, error) { return "", nil }},
			{Name: "queue", Check: func(context.Context) (string, error) { return "", errors.New("dial tcp: refused") }},
		}, true, 503, map[string]string{"store": "ok", "queue": "fail"}},
		{"timeout", []ReadyCheck{{Name: "cache", Check: slow}}, true, 503, map[string]string{"cache": "fail"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := New(Deps{Scraper: &fakeScraper{}, Auth: fakeAuth{}, ReadyChecks: tc.checks, Log: testenv.Logger(t)})
			s.SetReady(tc.serving)
			start := time.Now()
			rec, got := do(t, s, http.MethodGet, "/ready", "", "")
			if rec.Code != tc.code {
				t.Errorf("status %d, want %d: %v", rec.Code, tc.code, got)
			}
			if d := time.Since(start); d > readyCheckTimeout+time.Second {
				t.Errorf("took %v", d)
			}
			checks, _ := got["checks"].(map[string]any)
			states := map[string]string{}
			for name, c := range checks {
				states[name], _ = c.(map[string]any)["status"].(string)
			}
			if len(states) != len(tc.want) {
				t.Errorf("checks %v, want %v", states, tc.want)
			}
			for name, want := range tc.want {
				if states[name] != want {
					t.Errorf("check %s: %q, want %q (%v)", name, states[name], want, got)
				}
			}
			if strings.Contains(rec.Body.String(), "refused") {
				t.Errorf("cause leaked to the unauthenticated body: %s", rec.Body)
			}
		})
	}
}

// TestMetricsUnknownMethodsShareALabel: the method is the client's word; 200
// made-up methods on known and unknown paths must not add a series each
// (they did: 5,000 methods grew /metrics from 66 KB to 626 KB, no key
// needed).
func TestMetricsUnknownMethodsShareALabel(t *testing.T) {
	t.Parallel()
	l := setupLive(t, true)
	for i := range 200 {
		for _, path := range []string{"/v2/scrape", "/no/such/path"} {
			l.call(t, fmt.Sprintf("M%dX", i), path, "", "")
		}
	}
	fams := l.families(t)
	series := 0
	for _, m := range fams["firegate_http_requests_total"].GetMetric() {
		series++
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "method" && strings.HasPrefix(lp.GetValue(), "M") {
				t.Errorf("a made-up method has its own series: %v", m.GetLabel())
			}
		}
	}
	if series > 4 {
		t.Errorf("%d request series after 400 requests of made-up methods, want at most 4", series)
	}
	var other float64
	for _, m := range fams["firegate_http_requests_total"].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "method" && lp.GetValue() == "OTHER" {
				other += m.GetCounter().GetValue()
			}
		}
	}
	if other != 400 {
		t.Errorf("OTHER counted %v requests, want 400", other)
	}
}
