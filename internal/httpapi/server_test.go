package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/firegate/firegate/internal/auth"
	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/media"
	"github.com/firegate/firegate/internal/scrape"
)

const goodKey = "fc-good"

type fakeAuth struct{}

func (fakeAuth) Authenticate(_ context.Context, key string) (auth.Team, error) {
	if key == goodKey {
		return auth.Team{ID: "team-1", Name: "t"}, nil
	}
	return auth.Team{}, auth.ErrInvalidKey
}

// fakeScraper returns doc or err, and records the options it got.
type fakeScraper struct {
	mu   sync.Mutex
	got  []scrape.Options
	doc  *scrape.Document
	err  error
	hook func()
}

func (f *fakeScraper) Scrape(_ context.Context, o scrape.Options) (*scrape.Document, error) {
	f.mu.Lock()
	f.got = append(f.got, o)
	f.mu.Unlock()
	if f.hook != nil {
		f.hook()
	}
	return f.doc, f.err
}

// logBuffer collects log output for assertions.
type logBuffer struct {
	mu sync.Mutex
	sb strings.Builder
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.String()
}

func setup(t *testing.T, sc *fakeScraper) (*Server, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	s := New(Deps{Scraper: sc, Auth: fakeAuth{}, Log: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	s.SetReady(true)
	return s, logs
}

func do(t *testing.T, h http.Handler, method, path, key, body string) (*httptest.ResponseRecorder, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("body is not JSON: %q", rec.Body.String())
	}
	return rec, m
}

func TestAuth(t *testing.T) {
	t.Parallel()
	invalid := map[string]any{"success": false, "code": "UNAUTHORIZED", "error": "Unauthorized: Invalid token"}
	// A request without a key says how to send one (issue 32).
	missing := map[string]any{"success": false, "code": "UNAUTHORIZED",
		"error": `Unauthorized: Token missing. Send the header "Authorization: Bearer <your API key>".`}
	for _, tc := range []struct {
		name, header string
		want         map[string]any
	}{
		{"missing", "", missing},
		{"no bearer", goodKey, missing},
		{"empty token", "Bearer ", missing},
		{"unknown key", "Bearer fc-unknown", invalid},
		{"basic scheme", "Basic " + goodKey, missing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := setup(t, &fakeScraper{})
			req := httptest.NewRequest(http.MethodPost, "/v2/scrape", strings.NewReader(`{"url":"https://example.com"}`))
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			if rec.Code != http.StatusUnauthorized {
				t.Fatalf("status %d", rec.Code)
			}
			var got map[string]any
			json.Unmarshal(rec.Body.Bytes(), &got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
	t.Run("bearer is case-insensitive", func(t *testing.T) {
		t.Parallel()
		s, _ := setup(t, &fakeScraper{doc: &scrape.Document{}})
		req := httptest.NewRequest(http.MethodPost, "/v2/scrape", strings.NewReader(`{"url":"https://example.com"}`))
		req.Header.Set("Authorization", "bearer "+goodKey)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	})
}

func TestScrapeSuccess(t *testing.T) {
	t.Parallel()
	md := "# Hi"
	sc := &fakeScraper{doc: &scrape.Document{Markdown: &md, Metadata: scrape.Metadata{
		SourceURL: "https://example.com", URL: "https://example.com/", StatusCode: 200, CreditsUsed: 1,
		Page: map[string]any{"title": "Hi", "ogLocaleAlternate": []string{"de_DE"}, "url": "must not win"},
	}}}
	s, _ := setup(t, sc)
	rec, got := do(t, s, http.MethodPost, "/v2/scrape", goodKey, `{"url":"https://example.com","formats":["markdown"]}`)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	want := map[string]any{"success": true, "data": map[string]any{
		"markdown": "# Hi",
		"metadata": map[string]any{"sourceURL": "https://example.com", "url": "https://example.com/", "statusCode": float64(200),
			"creditsUsed": float64(1), "title": "Hi", "ogLocaleAlternate": []any{"de_DE"}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("content-type %q", ct)
	}
	if len(sc.got) != 1 || sc.got[0].URL != "https://example.com" {
		t.Errorf("scraper got %+v", sc.got)
	}
}

// TestErrorTable checks every row of the one error mapping.
func TestErrorTable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err    error
		status int
		code   string
		msg    string // substring of error
	}{
		{scrape.ErrTimeout, 408, "SCRAPE_TIMEOUT", "timed out"},
		{fmt.Errorf("%w: after 3s", scrape.ErrTimeout), 408, "SCRAPE_TIMEOUT", "timeout"},
		{scrape.ErrNoCachedData, 404, "SCRAPE_NO_CACHED_DATA", "minAge"},
		{scrape.ErrLockdownCacheMiss, 404, "SCRAPE_LOCKDOWN_CACHE_MISS", "Lockdown"},
		{fmt.Errorf("%w: lookup x.invalid", scrape.ErrDNSResolution), 200, "SCRAPE_DNS_RESOLUTION_ERROR", "x.invalid"},
		{fmt.Errorf("%w: x509: unknown authority", scrape.ErrSSL), 500, "SCRAPE_SSL_ERROR", "x509"},
		{fmt.Errorf("%w: connection refused", scrape.ErrSite), 500, "SCRAPE_SITE_ERROR", "refused"},
		{fmt.Errorf("%w: image/png", scrape.ErrUnsupportedFile), 500, "SCRAPE_UNSUPPORTED_FILE_ERROR", "image/png"},
		{&errcode.Failure{Kind: scrape.ErrBlockedTarget, Msg: "private, use ALLOW_PRIVATE_TARGETS", Cause: errors.New("dial")}, 403, "SCRAPE_TARGET_NOT_ALLOWED", "ALLOW_PRIVATE_TARGETS"},
		{&errcode.Failure{Kind: scrape.ErrDNSResolution, Msg: "DNS resolution failed for hostname: a.invalid.", Cause: errors.New("lookup")}, 200, "SCRAPE_DNS_RESOLUTION_ERROR", "DNS resolution failed for hostname: a.invalid."},
		{fmt.Errorf("%w: domainTools", scrape.ErrForbidden), 403, "FORBIDDEN", "domainTools"},
		{&errcode.Failure{Kind: scrape.ErrActionsNotSupported, Field: "actions", Msg: "Actions are not supported"}, 400, "SCRAPE_ACTIONS_NOT_SUPPORTED", "Actions are not supported"},
		{errors.New("boom"), 500, "UNKNOWN_ERROR", "error id"},
	} {
		t.Run(tc.code, func(t *testing.T) {
			t.Parallel()
			s, logs := setup(t, &fakeScraper{err: tc.err})
			rec, got := do(t, s, http.MethodPost, "/v2/scrape", goodKey, `{"url":"https://example.com"}`)
			if rec.Code != tc.status || got["code"] != tc.code || got["success"] != false {
				t.Fatalf("got %d %v, want %d %s", rec.Code, got, tc.status, tc.code)
			}
			msg, _ := got["error"].(string)
			if !strings.Contains(msg, tc.msg) {
				t.Errorf("error %q does not contain %q", msg, tc.msg)
			}
			if tc.code == "UNKNOWN_ERROR" {
				id := msg[strings.LastIndex(msg, " ")+1:]
				if !strings.Contains(logs.String(), id) || !strings.Contains(logs.String(), "boom") {
					t.Errorf("error id %s and cause not logged: %s", id, logs)
				}
			}
		})
	}
}

func TestEnvelopes(t *testing.T) {
	t.Parallel()
	s, _ := setup(t, &fakeScraper{doc: &scrape.Document{}})
	for _, tc := range []struct {
		name, method, path, key, body string
		status                        int
		code, msg                     string
	}{
		{"unknown path", http.MethodGet, "/v2/nope", goodKey, "", 404, "NOT_FOUND", "Not Found"},
		{"wrong method", http.MethodGet, "/v2/scrape", goodKey, "", 405, "METHOD_NOT_ALLOWED", "Method Not Allowed"},
		{"malformed json", http.MethodPost, "/v2/scrape", goodKey, `{"url":`, 400, "BAD_REQUEST_INVALID_JSON", "Bad request, malformed JSON"},
		{"too large", http.MethodPost, "/v2/scrape", goodKey, `{"url":"https://example.com","headers":{"x":"` + strings.Repeat("a", MaxBodyBytes) + `"}}`, 413, "PAYLOAD_TOO_LARGE", "Request body is too large"},
		{"known but not implemented", http.MethodPost, "/v2/crawl", goodKey, `{}`, 501, "NOT_IMPLEMENTED", "Not Implemented: POST /v2/crawl"},
		{"not implemented needs auth", http.MethodGet, "/v2/crawl/abc", "", "", 401, "UNAUTHORIZED", errKeyMissing.Message},
		{"catalog", http.MethodPost, "/v2/scrape", goodKey, `{"catalog":{"provider":"p","capability":"c"}}`, 403, "CATALOG_NOT_ENABLED", "Forbidden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec, got := do(t, s, tc.method, tc.path, tc.key, tc.body)
			if rec.Code != tc.status || got["code"] != tc.code || got["success"] != false {
				t.Fatalf("got %d %v", rec.Code, got)
			}
			if msg, _ := got["error"].(string); !strings.HasPrefix(msg, tc.msg) {
				t.Errorf("error %q, want prefix %q", msg, tc.msg)
			}
		})
	}
}

func TestPanicBecomesEnvelope(t *testing.T) {
	t.Parallel()
	s, logs := setup(t, &fakeScraper{hook: func() { panic("kaboom") }})
	rec, got := do(t, s, http.MethodPost, "/v2/scrape", goodKey, `{"url":"https://example.com"}`)
	if rec.Code != 500 || got["code"] != "UNKNOWN_ERROR" {
		t.Fatalf("got %d %v", rec.Code, got)
	}
	if !strings.Contains(logs.String(), "kaboom") {
		t.Errorf("panic not logged")
	}
}

func TestHealthAndRequestID(t *testing.T) {
	t.Parallel()
	s := New(Deps{Scraper: &fakeScraper{}, Auth: fakeAuth{}, Log: slog.New(slog.DiscardHandler)})
	rec, _ := do(t, s, http.MethodGet, "/health", "", "")
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("before ready: %d", rec.Code)
	}
	s.SetReady(true)
	req := httptest.NewRequest(http.MethodGet, "/health", nil)
	req.Header.Set("X-Request-Id", "abc-123")
	rr := httptest.NewRecorder()
	s.ServeHTTP(rr, req)
	if rr.Code != http.StatusOK {
		t.Errorf("ready: %d", rr.Code)
	}
	if got := rr.Header().Get("X-Request-Id"); got != "abc-123" {
		t.Errorf("request id %q not echoed", got)
	}
	req.Header.Set("X-Request-Id", "bad id with spaces")
	rr = httptest.NewRecorder()
	s.ServeHTTP(rr, req)
	if got := rr.Header().Get("X-Request-Id"); got == "" || strings.Contains(got, " ") {
		t.Errorf("bad request id not replaced: %q", got)
	}
}

func TestMediaRoute(t *testing.T) {
	t.Parallel()
	st, err := media.New(media.Options{Dir: t.TempDir()}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	id, err := st.Put(context.Background(), "", []byte("\x89PNG fake"), "image/png")
	if err != nil {
		t.Fatal(err)
	}
	s := New(Deps{Scraper: &fakeScraper{}, Auth: fakeAuth{}, Media: st, Log: slog.New(slog.DiscardHandler)})
	req := httptest.NewRequest(http.MethodGet, "/media/"+id, nil)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Body.String() != "\x89PNG fake" || rec.Header().Get("Content-Type") != "image/png" {
		t.Errorf("media: %d %q %v", rec.Code, rec.Body, rec.Header())
	}
	rec, got := do(t, s, http.MethodGet, "/media/0123456789abcdef0123456789abcdef.png", "", "")
	if rec.Code != 404 || got["success"] != false {
		t.Errorf("unknown media: %d %v", rec.Code, got)
	}
}
