package httpapi

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/firegate/firegate/internal/apikey"
	"github.com/firegate/firegate/internal/catalog"
	"github.com/firegate/firegate/internal/netguard"
	"github.com/firegate/firegate/internal/search/searxngtest"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/testenv"
)

// TestSearchCatalogSource: the alexandria source and domainTools that
// firecrawl-mcp sends on every search (issue 32). A team with catalog
// access gets data.tools (matched by the query, and by the results'
// domains); a team without it gets the web results and a warning instead
// of a 403; the catalog alone is free and asks no search engine.
func TestSearchCatalogSource(t *testing.T) {
	t.Parallel()
	site := searchSite(t)
	f := setupSearch(t, true, func(url.Values) searxngtest.Answer {
		return searxngtest.Answer{Results: []searxngtest.Result{
			{URL: site.URL + "/lamp", Title: "Lamp", Content: "about the lamp", Score: 2},
			{URL: "https://weather.example.com/oslo", Title: "Oslo weather", Content: "rain", Score: 1},
		}}
	})
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(catalogYAML, "{{BASE}}", "http://127.0.0.1:9")), 0o600); err != nil {
		t.Fatal(err)
	}
	log := testenv.Logger(t)
	src, err := catalog.OpenSource(path, func(string) (string, bool) { return "x", true }, log)
	if err != nil {
		t.Fatal(err)
	}
	policy, _ := netguard.New(netguard.Options{})
	if f.srv.catalog, err = catalog.New(catalog.Options{Source: src, Policy: policy, Log: log}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := f.st.SetCredits(ctx, f.team.ID, 100); err != nil {
		t.Fatal(err)
	}
	body := `{"query":"daily forecast","limit":2,"sources":["web","alexandria"],"domainTools":true,"toolDetail":"compact"}`

	// No catalog access: the web results, a warning, no tools.
	status, got := f.post(t, body)
	data, _ := got["data"].(map[string]any)
	warning, _ := got["warning"].(string)
	if status != 200 || len(data["web"].([]any)) != 2 || data["tools"] != nil || !strings.Contains(warning, "server limits set --catalog") {
		t.Fatalf("without access: %d %v", status, got)
	}
	if status, got = f.post(t, `{"query":"daily forecast","sources":["alexandria"]}`); status != 403 || got["code"] != "CATALOG_NOT_ENABLED" {
		t.Errorf("the catalog alone without access: %d %v", status, got)
	}

	// A team with catalog access (a new one: the auth cache may still hold
	// the first team's limits).
	team, err := f.st.CreateTeam(ctx, "with-catalog")
	if err != nil {
		t.Fatal(err)
	}
	key, _ := apikey.Generate()
	if _, err := f.st.CreateAPIKey(ctx, team.ID, apikey.Hash(key), apikey.Prefix(key)); err != nil {
		t.Fatal(err)
	}
	if err := f.st.SetTeamLimits(ctx, team.ID, store.TeamLimits{Catalog: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.SetCredits(ctx, team.ID, 100); err != nil {
		t.Fatal(err)
	}
	f.key, f.team = key, team
	before := f.balance(t)
	status, got = f.post(t, body)
	data, _ = got["data"].(map[string]any)
	tools, _ := data["tools"].([]any)
	if status != 200 || got["warning"] != nil || len(data["web"].([]any)) != 2 || len(tools) == 0 {
		t.Fatalf("with access: %d %v", status, got)
	}
	first := tools[0].(map[string]any)
	if first["provider"] != "weather" || first["capability"] != "forecast/daily" || fmt.Sprint(first["matchedBy"]) != "[query domain]" ||
		fmt.Sprint(first["matchedUrls"]) != "[https://weather.example.com/oslo]" || first["options"] != nil {
		t.Errorf("first tool (compact, by query and domain): %v", first)
	}
	if len(tools) > 2 {
		t.Errorf("%d tools matched by query, want at most limit 2: %v", len(tools), tools)
	}
	if spent := before - f.balance(t); spent != 2 {
		t.Errorf("the search cost %d credits, want 2 (the web source; the catalog is free)", spent)
	}

	// The catalog alone: no engine call, no credits; toolDetail full has
	// the contract.
	calls := len(f.engine.Calls())
	before = f.balance(t)
	status, got = f.post(t, `{"query":"headlines","sources":[{"type":"alexandria"}],"toolDetail":"full"}`)
	data, _ = got["data"].(map[string]any)
	tools, _ = data["tools"].([]any)
	if status != 200 || len(tools) != 1 || data["web"] != nil || got["creditsUsed"] != float64(0) {
		t.Fatalf("the catalog alone: %d %v", status, got)
	}
	if it := tools[0].(map[string]any); it["id"] != "news/headlines" || it["execute"] == nil || it["options"] == nil {
		t.Errorf("full tool: %v", it)
	}
	if len(f.engine.Calls()) != calls || f.balance(t) != before {
		t.Errorf("the catalog alone asked the engine (%d calls) or charged (%d)", len(f.engine.Calls())-calls, before-f.balance(t))
	}
}
