package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/testenv"
)

// TestMapAndParseTakeAConcurrencySlot checks that map and parse wait for
// one of the team's concurrency slots like scrape: with the only slot
// held they queue until their timeout and answer 429; a running map holds
// the slot; with the slot free they work.
func TestMapAndParseTakeAConcurrencySlot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	site := mapSite(t)
	b := setupBilled(t, LimitDefaults{Concurrency: 1})
	b.srv.mapper = realMapper(t, true)
	b.srv.parser = scrape.New(scrape.Config{Log: testenv.Logger(t)})
	parse := func(options string) (int, map[string]any) {
		ct, body := multipartBody(t, "tides.csv", "place,high\nDover,06:12\n", options)
		req := httptest.NewRequest(http.MethodPost, "/v2/parse", body)
		req.Header.Set("Content-Type", ct)
		req.Header.Set("Authorization", "Bearer "+b.key)
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, req)
		var m map[string]any
		json.Unmarshal(rec.Body.Bytes(), &m)
		return rec.Code, m
	}
	mapBody := `{"url":"` + site.URL + `","sitemap":"skip","timeout":500}`

	release, _, err := b.limit.Acquire(ctx, b.team.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if rec, got := do(t, b.srv, http.MethodPost, "/v2/map", b.key, mapBody); rec.Code != http.StatusTooManyRequests || got["code"] != "CONCURRENCY_LIMIT_REACHED" {
		t.Errorf("map with the slot taken: %d %v", rec.Code, got)
	}
	if waited := time.Since(start); waited < 400*time.Millisecond {
		t.Errorf("map gave up after %v, want it to queue for its timeout", waited)
	}
	if code, got := parse(`{"timeout":1000}`); code != http.StatusTooManyRequests || got["code"] != "CONCURRENCY_LIMIT_REACHED" {
		t.Errorf("parse with the slot taken: %d %v", code, got)
	}
	release()

	if rec, got := do(t, b.srv, http.MethodPost, "/v2/map", b.key, mapBody); rec.Code != 200 {
		t.Errorf("map with the slot free: %d %v", rec.Code, got)
	}
	if code, got := parse(""); code != 200 {
		t.Errorf("parse with the slot free: %d %v", code, got)
	}

	// A running map holds the slot, and gives it back when it ends.
	done := make(chan struct{})
	go func() {
		defer close(done)
		do(t, b.srv, http.MethodPost, "/v2/map", b.key, `{"url":"`+site.URL+`/slow","sitemap":"skip","timeout":1500}`)
	}()
	if !testenv.WaitFor(time.Second, func() bool {
		n, _ := b.limit.InUse(ctx, b.team.ID)
		return n == 1
	}) {
		t.Error("a running map holds no concurrency slot")
	}
	<-done
	if n, _ := b.limit.InUse(ctx, b.team.ID); n != 0 {
		t.Errorf("%d slots in use after the map ended", n)
	}
}
