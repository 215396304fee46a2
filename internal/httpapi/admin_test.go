package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/admin"
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

const testAdminKey = "operator-key-0123456789"

// setupAdmin is a server over a real embedded store with the /admin
// routes behind testAdminKey (none when adminKey is empty) and a team
// "acme" with one key.
func setupAdmin(t *testing.T, adminKey string) (*Server, store.Store, string) {
	t.Helper()
	st := teststore.SQLite(t)
	ctx := context.Background()
	team, err := st.CreateTeam(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	key, _ := apikey.Generate()
	if _, err := st.CreateAPIKey(ctx, team.ID, apikey.Hash(key), apikey.Prefix(key)); err != nil {
		t.Fatal(err)
	}
	log := testenv.Logger(t)
	md := "ok"
	scr := &fakeScraper{doc: &scrape.Document{Markdown: &md, Metadata: scrape.Metadata{StatusCode: 200, CreditsUsed: 1}}}
	srv := New(Deps{Scraper: scr, Auth: auth.New(st, auth.Options{CacheTTL: time.Millisecond}), Ledger: billing.NewLedger(st, log),
		Limiter: limits.NewLocal(), Defaults: LimitDefaults{Concurrency: 64}, Results: cache.NewMemory(1 << 20),
		Activity: st, Feedback: st,
		AdminKey: adminKey, Admin: admin.New(admin.Options{Store: st, Activity: st, By: "operator (admin api)", Log: log}),
		Log: log})
	srv.SetReady(true)
	return srv, st, key
}

// TestAdminNeedsItsKey: without ADMIN_API_KEY there are no /admin routes;
// with it, no key, a wrong key and a team's key are all refused.
func TestAdminNeedsItsKey(t *testing.T) {
	t.Parallel()
	off, _, _ := setupAdmin(t, "")
	if rec, got := do(t, off, http.MethodGet, "/admin/teams", testAdminKey, ""); rec.Code != 404 {
		t.Errorf("no ADMIN_API_KEY: %d %v, want 404", rec.Code, got)
	}
	srv, _, teamKey := setupAdmin(t, testAdminKey)
	for _, key := range []string{"", "operator-key-012345678", testAdminKey + "x", teamKey} {
		rec, got := do(t, srv, http.MethodGet, "/admin/teams", key, "")
		if rec.Code != 401 || !strings.Contains(fmt.Sprint(got["error"]), "ADMIN_API_KEY") {
			t.Errorf("key %q: %d %v, want 401 naming ADMIN_API_KEY", key, rec.Code, got)
		}
	}
	if rec, got := do(t, srv, http.MethodPost, "/admin/teams", teamKey, `{"name":"x"}`); rec.Code != 401 {
		t.Errorf("team key creating a team: %d %v", rec.Code, got)
	}
	// The operator key is no API key.
	if rec, _ := do(t, srv, http.MethodGet, "/v2/team/credit-usage", testAdminKey, ""); rec.Code != 401 {
		t.Errorf("operator key on /v2: %d, want 401", rec.Code)
	}
}

// TestAdminTeamsKeysCreditsLimits walks the operator's changes: a team
// created with credits, a key made for it that then works on /v2, credits
// added and set, limits set, the key revoked; every change is in the
// team's activity; bad bodies are 400s naming the field.
func TestAdminTeamsKeysCreditsLimits(t *testing.T) {
	t.Parallel()
	srv, st, _ := setupAdmin(t, testAdminKey)
	call := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		rec, got := do(t, srv, method, path, testAdminKey, body)
		return rec.Code, got
	}
	code, got := call(http.MethodPost, "/admin/teams", `{"name":"globex","credits":100}`)
	if code != 201 {
		t.Fatalf("create team: %d %v", code, got)
	}
	team := got["team"].(map[string]any)
	id := team["id"].(string)
	if c := team["credits"].(map[string]any); c["remaining"] != float64(100) || c["unlimited"] != false {
		t.Errorf("new team's credits: %v", c)
	}
	if code, got := call(http.MethodPost, "/admin/teams", `{"name":"globex"}`); code != 409 {
		t.Errorf("same name again: %d %v, want 409", code, got)
	}
	for _, tt := range []struct{ path, body, field string }{
		{"/admin/teams", `{"name":""}`, "name"},
		{"/admin/teams", `{"name":"x","credits":-1}`, "credits"},
		{"/admin/teams", `{"name":"x","plan":1}`, "plan"},
		{"/admin/teams/" + id + "/credits", `{"add":"ten"}`, "add"},
		{"/admin/teams/" + id + "/credits", `{"add":1,"set":2}`, "add"},
	} {
		code, got := call(http.MethodPost, tt.path, tt.body)
		details, _ := got["details"].([]any)
		if code != 400 || len(details) == 0 || !strings.Contains(fmt.Sprint(details[0]), tt.field) {
			t.Errorf("%s %s: %d %v, want 400 naming %s", tt.path, tt.body, code, got, tt.field)
		}
	}

	code, got = call(http.MethodPost, "/admin/teams/"+id+"/keys", "")
	key, _ := got["key"].(string)
	if code != 201 || !apikey.WellFormed(key) || got["prefix"] != apikey.Prefix(key) {
		t.Fatalf("create key: %d %v", code, got)
	}
	keyID := got["id"].(string)
	if rec, got := do(t, srv, http.MethodPost, "/v2/scrape", key, `{"url":"https://example.com"}`); rec.Code != 200 {
		t.Fatalf("the new key on /v2/scrape: %d %v", rec.Code, got)
	}
	code, got = call(http.MethodGet, "/admin/teams/"+id, "")
	if c := got["team"].(map[string]any)["credits"].(map[string]any); code != 200 || c["remaining"] != float64(99) || c["usedThisPeriod"] != float64(1) {
		t.Errorf("after a scrape: %d %v", code, got)
	}
	if code, got := call(http.MethodPost, "/admin/teams/"+id+"/credits", `{"add":50}`); code != 200 ||
		got["team"].(map[string]any)["credits"].(map[string]any)["remaining"] != float64(149) {
		t.Errorf("add 50: %d %v", code, got)
	}
	if code, got := call(http.MethodPost, "/admin/teams/"+id+"/credits", `{"set":7}`); code != 200 ||
		got["team"].(map[string]any)["credits"].(map[string]any)["remaining"] != float64(7) {
		t.Errorf("set 7: %d %v", code, got)
	}
	code, got = call(http.MethodPut, "/admin/teams/"+id+"/limits", `{"concurrency":3,"rateMultiplier":null,"zeroDataRetentionForced":true}`)
	l := got["team"].(map[string]any)["limits"].(map[string]any)
	if code != 200 || l["concurrency"] != float64(3) || l["rateMultiplier"] != nil || l["zeroDataRetention"] != true || l["zeroDataRetentionForced"] != true {
		t.Errorf("limits: %d %v", code, got)
	}
	if stored, _ := st.TeamLimits(context.Background(), id); stored.ConcurrencyLimit == nil || *stored.ConcurrencyLimit != 3 || !stored.ZeroDataRetention {
		t.Errorf("stored limits %+v", stored)
	}
	if code, got := call(http.MethodPut, "/admin/teams/"+id+"/limits", `{"concurrency":-1}`); code != 400 {
		t.Errorf("negative concurrency: %d %v", code, got)
	}
	if code, got := call(http.MethodPost, "/admin/teams/"+id+"/credits", `{"unlimited":true}`); code != 200 ||
		got["team"].(map[string]any)["credits"].(map[string]any)["unlimited"] != true {
		t.Errorf("unlimited: %d %v", code, got)
	}

	// Revoking: another team's path does not reach the key; its own does.
	code, got = call(http.MethodGet, "/admin/teams", "")
	teams := got["teams"].([]any)
	if code != 200 || len(teams) != 2 || teams[0].(map[string]any)["name"] != "acme" || got["defaults"].(map[string]any)["concurrency"] != float64(64) {
		t.Fatalf("teams: %d %v", code, got)
	}
	acme := teams[0].(map[string]any)["id"].(string)
	if code, got := call(http.MethodDelete, "/admin/teams/"+acme+"/keys/"+keyID, ""); code != 404 {
		t.Errorf("revoke through another team: %d %v, want 404", code, got)
	}
	if code, got := call(http.MethodDelete, "/admin/teams/"+id+"/keys/"+keyID, ""); code != 200 {
		t.Fatalf("revoke: %d %v", code, got)
	}
	// Refused once the authenticator's cache (1 ms here) forgets it.
	testenv.Eventually(t, 5*time.Second, func() bool {
		rec, _ := do(t, srv, http.MethodGet, "/v2/team/credit-usage", key, "")
		return rec.Code == 401
	}, "the revoked key still works on /v2")
	if code, got := call(http.MethodPost, "/admin/teams/00000000-0000-0000-0000-00000000abcd/keys", ""); code != 404 {
		t.Errorf("key for an unknown team: %d %v", code, got)
	}

	// Every change is an activity record of the team, "admin" endpoint.
	list, err := st.(store.ActivityStore).ListActivity(context.Background(), id, store.ActivityQuery{Endpoint: admin.Endpoint, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var changes []string
	for i := len(list) - 1; i >= 0; i-- {
		changes = append(changes, list[i].Target)
		if list[i].Username != "operator (admin api)" {
			t.Errorf("activity %q by %q", list[i].Target, list[i].Username)
		}
	}
	want := []string{"team created: globex", "credits set: 100", "key created: " + apikey.Prefix(key) + "…", "credits added: 50", "credits set: 7",
		"limits set: concurrency 3, rate multiplier default, zdr forced", "credits unlimited", "key revoked: " + apikey.Prefix(key) + "…"}
	if strings.Join(changes, "\n") != strings.Join(want, "\n") {
		t.Errorf("activity:\n%s\nwant:\n%s", strings.Join(changes, "\n"), strings.Join(want, "\n"))
	}
	if code, got := call(http.MethodGet, "/admin/feedback", ""); code != 200 || got["feedback"] == nil {
		t.Errorf("feedback: %d %v", code, got)
	}
}
