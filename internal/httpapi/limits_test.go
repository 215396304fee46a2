package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/apikey"
	"github.com/firegate/firegate/internal/auth"
	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/cache"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/teststore"
	"github.com/firegate/firegate/internal/testenv"
)

// billed is a server over a real embedded store, ledger and limiter, with
// one team and key; the scraper is a fake that costs `cost` credits.
type billed struct {
	srv   *Server
	st    store.Store
	team  store.Team
	key   string
	scr   *fakeScraper
	limit *limits.Local
}

func setupBilled(t *testing.T, defaults LimitDefaults) *billed {
	t.Helper()
	ctx := context.Background()
	st := teststore.SQLite(t)
	team, err := st.CreateTeam(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	key, _ := apikey.Generate()
	if _, err := st.CreateAPIKey(ctx, team.ID, apikey.Hash(key), apikey.Prefix(key)); err != nil {
		t.Fatal(err)
	}
	md := "ok"
	scr := &fakeScraper{doc: &scrape.Document{Markdown: &md, Metadata: scrape.Metadata{StatusCode: 200, CreditsUsed: 1}}}
	log := testenv.Logger(t)
	lim := limits.NewLocal()
	srv := New(Deps{Scraper: scr, Auth: auth.New(st, auth.Options{CacheTTL: time.Millisecond}), Ledger: billing.NewLedger(st, log),
		Limiter: lim, Defaults: defaults, Results: cache.NewMemory(1 << 20), Log: log})
	srv.SetReady(true)
	return &billed{srv: srv, st: st, team: team, key: key, scr: scr, limit: lim}
}

func (b *billed) scrape(t *testing.T) (*httptest.ResponseRecorder, map[string]any) {
	return do(t, b.srv, http.MethodPost, "/v2/scrape", b.key, `{"url":"https://example.com"}`)
}

func TestCreditsArePrecheckedAndCharged(t *testing.T) {
	t.Parallel()
	b := setupBilled(t, LimitDefaults{})
	ctx := context.Background()
	if _, err := b.st.SetCredits(ctx, b.team.ID, 2); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if rec, got := b.scrape(t); rec.Code != 200 {
			t.Fatalf("scrape %d: %d %v", i, rec.Code, got)
		}
	}
	rec, got := b.scrape(t)
	if rec.Code != http.StatusPaymentRequired || got["code"] != "insufficient_credits" || got["error"] != "Payment Required: Insufficient credits" {
		t.Fatalf("third scrape: %d %v", rec.Code, got)
	}
	if len(b.scr.got) != 2 {
		t.Errorf("a 402 must execute nothing: scraper ran %d times", len(b.scr.got))
	}
	bal, _ := b.st.CreditBalance(ctx, b.team.ID)
	if bal.Remaining != 0 {
		t.Errorf("balance %d, want 0", bal.Remaining)
	}

	// Usage reports.
	b.st.AddCredits(ctx, b.team.ID, 5)
	rec, got = do(t, b.srv, http.MethodGet, "/v2/team/credit-usage", b.key, "")
	data, _ := got["data"].(map[string]any)
	if rec.Code != 200 || data["remainingCredits"] != float64(5) || data["planCredits"] != float64(7) || data["billingPeriodStart"] == nil {
		t.Errorf("credit-usage: %d %v", rec.Code, got)
	}
	rec, got = do(t, b.srv, http.MethodGet, "/v2/team/credit-usage/historical", b.key, "")
	periods, _ := got["periods"].([]any)
	if rec.Code != 200 || len(periods) != 1 || periods[0].(map[string]any)["creditsUsed"] != float64(2) {
		t.Errorf("historical: %d %v", rec.Code, got)
	}
	// The token view: 15 tokens a credit.
	rec, got = do(t, b.srv, http.MethodGet, "/v2/team/token-usage", b.key, "")
	data, _ = got["data"].(map[string]any)
	if rec.Code != 200 || data["remainingTokens"] != float64(75) || data["planTokens"] != float64(105) || data["remainingCredits"] != nil {
		t.Errorf("token-usage: %d %v", rec.Code, got)
	}
	rec, got = do(t, b.srv, http.MethodGet, "/v2/team/token-usage/historical", b.key, "")
	periods, _ = got["periods"].([]any)
	if rec.Code != 200 || len(periods) != 1 || periods[0].(map[string]any)["tokensUsed"] != float64(30) {
		t.Errorf("token historical: %d %v", rec.Code, got)
	}
}

func TestLockdownMissCostsOneCredit(t *testing.T) {
	t.Parallel()
	b := setupBilled(t, LimitDefaults{})
	b.scr.doc, b.scr.err = nil, scrape.ErrLockdownCacheMiss
	b.st.SetCredits(context.Background(), b.team.ID, 10)
	rec, got := do(t, b.srv, http.MethodPost, "/v2/scrape", b.key, `{"url":"https://example.com","lockdown":true}`)
	if rec.Code != 404 || got["code"] != "SCRAPE_LOCKDOWN_CACHE_MISS" {
		t.Fatalf("%d %v", rec.Code, got)
	}
	if bal, _ := b.st.CreditBalance(context.Background(), b.team.ID); bal.Remaining != 9 {
		t.Errorf("balance %d, want 9", bal.Remaining)
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	b := setupBilled(t, LimitDefaults{RateMultiplier: 1}) // scrape: 10 per minute
	for i := range limits.RatePerMinute(limits.ClassScrape, 1) {
		if rec, got := b.scrape(t); rec.Code != 200 {
			t.Fatalf("scrape %d: %d %v", i, rec.Code, got)
		}
	}
	rec, got := b.scrape(t)
	if rec.Code != http.StatusTooManyRequests || !strings.HasPrefix(got["error"].(string), "Rate limit exceeded.") || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("over the limit: %d %v %v", rec.Code, got, rec.Header())
	}
}

func TestConcurrencyQueuesThenFails(t *testing.T) {
	t.Parallel()
	b := setupBilled(t, LimitDefaults{Concurrency: 1})
	gate := make(chan struct{})
	var once sync.Once
	started := make(chan struct{})
	b.scr.hook = func() {
		once.Do(func() { close(started) })
		<-gate
	}
	// First scrape holds the only slot.
	first := make(chan *httptest.ResponseRecorder, 1)
	go func() { rec, _ := b.scrape(t); first <- rec }()
	<-started

	// A second one with a 1 s timeout waits in the queue, then gives up.
	rec, got := do(t, b.srv, http.MethodPost, "/v2/scrape", b.key, `{"url":"https://example.com","timeout":1000}`)
	if rec.Code != http.StatusTooManyRequests || got["error"] != "Concurrency limit reached" {
		t.Fatalf("queued past its timeout: %d %v", rec.Code, got)
	}
	// A third one queues and gets the slot when the first finishes.
	third := make(chan map[string]any, 1)
	thirdSent := time.Now()
	go func() { _, got := b.scrape(t); third <- got }()
	// queue-status shows it waiting once it has queued.
	var status map[string]any
	if !testenv.WaitFor(10*time.Second, func() bool {
		var rec *httptest.ResponseRecorder
		if rec, status = do(t, b.srv, http.MethodGet, "/v2/team/queue-status", b.key, ""); rec.Code != 200 {
			t.Fatalf("queue-status: %d %v", rec.Code, status)
		}
		return status["waitingJobsInQueue"] == float64(1)
	}) {
		t.Fatalf("the third scrape never queued: %v", status)
	}
	if status["activeJobsInQueue"] != float64(1) || status["maxConcurrency"] != float64(1) {
		t.Errorf("queue-status: %v", status)
	}
	close(gate)
	if r := <-first; r.Code != 200 {
		t.Fatalf("first: %d", r.Code)
	}
	got = <-third
	elapsed := time.Since(thirdSent)
	meta := got["data"].(map[string]any)["metadata"].(map[string]any)
	ms, ok := meta["concurrencyQueueDurationMs"].(float64)
	if meta["concurrencyLimited"] != true || !ok || ms < 0 || ms > float64(elapsed.Milliseconds()) {
		t.Errorf("queued scrape metadata: %v; want concurrencyLimited and a queue duration within the %v the request took", meta, elapsed)
	}
	rec, got = do(t, b.srv, http.MethodGet, "/v2/concurrency-check", b.key, "")
	if rec.Code != 200 || got["concurrency"] != float64(0) || got["maxConcurrency"] != float64(1) {
		t.Errorf("concurrency-check: %d %v", rec.Code, got)
	}
}

func TestZeroDataRetentionNeedsTeamFlag(t *testing.T) {
	t.Parallel()
	b := setupBilled(t, LimitDefaults{})
	body := `{"url":"https://example.com","zeroDataRetention":true}`
	rec, got := do(t, b.srv, http.MethodPost, "/v2/scrape", b.key, body)
	if rec.Code != http.StatusForbidden || got["code"] != "ZDR_NOT_ENABLED" {
		t.Fatalf("without the flag: %d %v", rec.Code, got)
	}
	if err := b.st.SetTeamLimits(context.Background(), b.team.ID, store.TeamLimits{ZeroDataRetention: true}); err != nil {
		t.Fatal(err)
	}
	// The auth cache (1 ms TTL in this test) picks the flag up.
	untilOK(t, "with the flag", func() (int, map[string]any) {
		rec, got := do(t, b.srv, http.MethodPost, "/v2/scrape", b.key, body)
		return rec.Code, got
	})
}

func TestUnlimitedTeamReports(t *testing.T) {
	t.Parallel()
	b := setupBilled(t, LimitDefaults{Concurrency: 7})
	rec, got := do(t, b.srv, http.MethodGet, "/v2/team/credit-usage", b.key, "")
	data := got["data"].(map[string]any)
	if rec.Code != 200 || data["unlimited"] != true || data["remainingCredits"] != float64(-1) {
		t.Errorf("%d %v", rec.Code, got)
	}
	rec, got = do(t, b.srv, http.MethodGet, "/v2/concurrency-check", b.key, "")
	if rec.Code != 200 {
		t.Errorf("concurrency-check: %d", rec.Code)
	}
	if got["maxConcurrency"] != float64(7) {
		t.Errorf("default concurrency: %v", got)
	}
}

func TestGetScrapeByID(t *testing.T) {
	t.Parallel()
	b := setupBilled(t, LimitDefaults{})
	id := "0190a7b2-0000-7000-8000-000000000001"
	b.scr.doc.Metadata.ScrapeID = id
	rec, _ := b.scrape(t)
	original := rec.Body.String()

	rec, _ = do(t, b.srv, http.MethodGet, "/v2/scrape/"+id, b.key, "")
	if rec.Code != 200 || rec.Body.String() != original {
		t.Errorf("own result: %d\n got %s\nwant %s", rec.Code, rec.Body, original)
	}
	// Another team's key sees 403.
	other, _ := b.st.CreateTeam(context.Background(), "other")
	key2, _ := apikey.Generate()
	b.st.CreateAPIKey(context.Background(), other.ID, apikey.Hash(key2), apikey.Prefix(key2))
	if rec, got := do(t, b.srv, http.MethodGet, "/v2/scrape/"+id, key2, ""); rec.Code != 403 || got["error"] != "You are not allowed to access this resource." {
		t.Errorf("other team: %d %v", rec.Code, got)
	}
	if rec, got := do(t, b.srv, http.MethodGet, "/v2/scrape/0190a7b2-0000-7000-8000-000000000002", b.key, ""); rec.Code != 404 || got["error"] != "Job not found." {
		t.Errorf("unknown: %d %v", rec.Code, got)
	}
	if rec, got := do(t, b.srv, http.MethodGet, "/v2/scrape/not-a-uuid", b.key, ""); rec.Code != 400 || got["error"] != "Invalid job ID format. Job ID must be a valid UUID." {
		t.Errorf("bad id: %d %v", rec.Code, got)
	}
	// Zero data retention results are not kept.
	if err := b.st.SetTeamLimits(context.Background(), b.team.ID, store.TeamLimits{ZeroDataRetention: true}); err != nil {
		t.Fatal(err)
	}
	zid := "0190a7b2-0000-7000-8000-000000000003"
	b.scr.doc.Metadata.ScrapeID = zid
	untilOK(t, "zdr scrape", func() (int, map[string]any) {
		rec, got := do(t, b.srv, http.MethodPost, "/v2/scrape", b.key, `{"url":"https://example.com","zeroDataRetention":true}`)
		return rec.Code, got
	})
	if rec, _ := do(t, b.srv, http.MethodGet, "/v2/scrape/"+zid, b.key, ""); rec.Code != 404 {
		t.Errorf("zdr result kept: %d", rec.Code)
	}
}

// untilOK repeats req until it answers 200 (a team flag reaching the auth
// cache), failing after a deadline.
func untilOK(t *testing.T, what string, req func() (int, map[string]any)) {
	t.Helper()
	var code int
	var got map[string]any
	if !testenv.WaitFor(10*time.Second, func() bool {
		code, got = req()
		return code == http.StatusOK
	}) {
		t.Fatalf("%s: %d %v", what, code, got)
	}
}
