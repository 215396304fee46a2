package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/apikey"
	"github.com/firegate/firegate/internal/store"
)

func TestTeamActivity(t *testing.T) {
	t.Parallel()
	site := mapSite(t)
	b := setupBilled(t, LimitDefaults{})
	b.srv.activity = b.st.(store.ActivityStore)
	b.srv.mapper = realMapper(t, true)
	get := func(key, query string) (int, map[string]any) {
		rec, got := do(t, b.srv, http.MethodGet, "/v2/team/activity"+query, key, "")
		return rec.Code, got
	}
	post := func(path, body string) {
		t.Helper()
		if rec, got := do(t, b.srv, http.MethodPost, path, b.key, body); rec.Code != http.StatusOK {
			t.Fatalf("POST %s: %d %v", path, rec.Code, got)
		}
	}
	start := time.Now().Add(-time.Second)
	post("/v2/scrape", `{"url":"https://shop.example/item?id=7","auditMetadata":{"username":"jane@corp.example"}}`)
	post("/v2/map", `{"url":"`+site.URL+`","auditMetadata":{"username":"ops-bot"}}`)
	post("/v1/scrape", `{"url":"https://legacy.example/"}`)

	code, got := get(b.key, "")
	if code != 200 || got["success"] != true || got["has_more"] != false || got["cursor"] != nil {
		t.Fatalf("activity: %d %v", code, got)
	}
	data, _ := got["data"].([]any)
	if len(data) != 3 {
		t.Fatalf("data = %v, want 3 entries", data)
	}
	want := []struct{ endpoint, version, target, user string }{
		{"scrape", "v1", "https://legacy.example/", ""},
		{"map", "v2", site.URL, "ops-bot"},
		{"scrape", "v2", "https://shop.example/item?id=7", "jane@corp.example"},
	}
	for i, w := range want {
		e, _ := data[i].(map[string]any)
		at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(e["created_at"]))
		if err != nil || at.Before(start) || at.After(time.Now()) {
			t.Errorf("entry %d: created_at %v", i, e["created_at"])
		}
		if e["endpoint"] != w.endpoint || e["api_version"] != w.version || e["target"] != w.target || e["id"] == "" {
			t.Errorf("entry %d = %v, want %+v", i, e, w)
		}
		audit, has := e["auditMetadata"].(map[string]any)
		if (w.user == "") == has || (has && audit["username"] != w.user) {
			t.Errorf("entry %d auditMetadata = %v, want username %q", i, e["auditMetadata"], w.user)
		}
	}

	// Pages of one, by cursor.
	var ids []any
	query := "?limit=1"
	for range 4 {
		code, got = get(b.key, query)
		page, _ := got["data"].([]any)
		if code != 200 || len(page) != 1 {
			t.Fatalf("page %s: %d %v", query, code, got)
		}
		ids = append(ids, page[0].(map[string]any)["id"])
		if got["has_more"] != true {
			if got["cursor"] != nil {
				t.Errorf("last page has a cursor: %v", got)
			}
			break
		}
		query = "?limit=1&cursor=" + fmt.Sprint(got["cursor"])
	}
	if len(ids) != 3 || fmt.Sprint(ids) != fmt.Sprint([]any{data[0].(map[string]any)["id"], data[1].(map[string]any)["id"], data[2].(map[string]any)["id"]}) {
		t.Errorf("paged ids %v, want those of the full list", ids)
	}
	code, got = get(b.key, "?endpoint=map")
	if d, _ := got["data"].([]any); code != 200 || len(d) != 1 {
		t.Errorf("endpoint=map: %d %v", code, got)
	}
	code, got = get(b.key, "?endpoint=crawl")
	if d, ok := got["data"].([]any); code != 200 || !ok || len(d) != 0 {
		t.Errorf("endpoint=crawl: %d %v (want an empty array)", code, got)
	}

	for q, path := range map[string]string{"?endpoint=scrapes": "endpoint", "?limit=0": "limit", "?limit=101": "limit",
		"?limit=ten": "limit", "?cursor=%25%25": "cursor", "?cursor=YWJj": "cursor"} {
		code, got = get(b.key, q)
		details, _ := got["details"].([]any)
		if code != 400 || got["code"] != "BAD_REQUEST" || len(details) != 1 || !strings.Contains(fmt.Sprint(details[0]), path) {
			t.Errorf("%s: %d %v, want 400 naming %s", q, code, got, path)
		}
	}

	// Another team sees none of it.
	other, err := b.st.CreateTeam(context.Background(), "other")
	if err != nil {
		t.Fatal(err)
	}
	key, _ := apikey.Generate()
	if _, err := b.st.CreateAPIKey(context.Background(), other.ID, apikey.Hash(key), apikey.Prefix(key)); err != nil {
		t.Fatal(err)
	}
	code, got = get(key, "")
	if d, _ := got["data"].([]any); code != 200 || len(d) != 0 {
		t.Errorf("other team: %d %v", code, got)
	}
}

func TestTeamActivityNotKept(t *testing.T) {
	t.Parallel()
	s, _ := setup(t, &fakeScraper{})
	rec, got := do(t, s, http.MethodGet, "/v2/team/activity", goodKey, "")
	if rec.Code != http.StatusNotImplemented || got["code"] != "NOT_IMPLEMENTED" {
		t.Errorf("without a store: %d %v", rec.Code, got)
	}
}

func TestTruncateUTF8(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{{"abc", 5, "abc"}, {"abcdef", 3, "abc"}, {"aü", 2, "a"}, {"aü", 3, "aü"}, {"€€", 4, "€"}} {
		if got := truncateUTF8(tc.in, tc.n); got != tc.want {
			t.Errorf("truncateUTF8(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
