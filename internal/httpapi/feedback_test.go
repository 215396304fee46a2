package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/apikey"
	"github.com/firegate/firegate/internal/auth"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/teststore"
	"github.com/firegate/firegate/internal/testenv"
)

// TestFeedback: POST /v2/feedback and /v2/search/{id}/feedback store a
// rating of an earlier result under the caller's team, once per result;
// the bodies are validated with the field named; a crawl id must be the
// caller's (issue 32).
func TestFeedback(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := teststore.SQLite(t)
	keyOf := func(name string) (store.Team, string) {
		team, err := st.CreateTeam(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		key, _ := apikey.Generate()
		if _, err := st.CreateAPIKey(ctx, team.ID, apikey.Hash(key), apikey.Prefix(key)); err != nil {
			t.Fatal(err)
		}
		return team, key
	}
	teamA, keyA := keyOf("acme")
	teamB, keyB := keyOf("other")
	fs := store.FeedbackStore(st)
	s := New(Deps{Scraper: &fakeScraper{}, Auth: auth.New(st, auth.Options{}), Feedback: fs, JobStore: st, Log: testenv.Logger(t)})
	crawlB := uuid.Must(uuid.NewV7()).String()
	if _, err := st.CreateJob(ctx, store.Job{ID: crawlB, TeamID: teamB.ID, Kind: store.JobCrawl, URL: "https://example.com",
		Options: []byte(`{}`), ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	scrapeID := uuid.Must(uuid.NewV7()).String()

	body := `{"endpoint":"scrape","jobId":"` + scrapeID + `","rating":"bad","note":"the price table is missing",
		"issues":["missing_table"],"pageNumbers":[2],"metadata":{"client":"test"},"origin":"mcp"}`
	rec, first := do(t, s, http.MethodPost, "/v2/feedback", keyA, body)
	if rec.Code != 200 || first["success"] != true || first["feedbackId"] == nil || first["creditsRefunded"] != float64(0) || first["alreadySubmitted"] != nil {
		t.Fatalf("feedback: %d %v", rec.Code, first)
	}
	rec, again := do(t, s, http.MethodPost, "/v2/feedback", keyA, strings.Replace(body, `"bad"`, `"good"`, 1))
	if rec.Code != 200 || again["alreadySubmitted"] != true || again["feedbackId"] != first["feedbackId"] {
		t.Errorf("the same scrape again: %d %v", rec.Code, again)
	}

	for _, tc := range []struct{ body, want string }{
		{`{"endpoint":"scrap","jobId":"` + scrapeID + `","rating":"bad","note":"x"}`, "endpoint: Invalid enum value. Expected 'search' | 'scrape' | 'parse' | 'map' | 'crawl' | 'batch' | 'extract' | 'agent', received 'scrap'"},
		{`{"endpoint":"scrape","jobId":"abc","rating":"bad","note":"x"}`, msgFeedbackJobID},
		{`{"endpoint":"scrape","jobId":"` + scrapeID + `","rating":"meh","note":"x"}`, "rating: Invalid enum value. Expected 'good' | 'partial' | 'bad', received 'meh'"},
		{`{"endpoint":"scrape","jobId":"` + scrapeID + `","rating":"bad","pageNumbers":[1]}`, msgFeedbackNoSignal},
		{`{"endpoint":"scrape","jobId":"` + scrapeID + `","rating":"bad","issues":["Bad Code"]}`, "issues[0]: Expected a code of 1 to 80 lower-case letters, digits, '_' and '-', starting with a letter or digit"},
		{`{"endpoint":"scrape","jobId":"` + scrapeID + `","rating":"bad","note":"` + strings.Repeat("n", 4001) + `"}`, "note: String must contain at most 4000 character(s)"},
		{`{"endpoint":"scrape","jobId":"` + scrapeID + `","rating":"bad","note":"x","metadata":{"m":"` + strings.Repeat("m", 9000) + `"}}`, "metadata: metadata must be at most 8 KB of JSON"},
		{`{"endpoint":"scrape","jobId":"` + scrapeID + `","rating":"bad","comment":"x"}`, msgUnrecognized},
	} {
		rec, got := do(t, s, http.MethodPost, "/v2/feedback", keyA, tc.body)
		if rec.Code != 400 || got["error"] != tc.want {
			t.Errorf("%.80s: %d %v, want %q", tc.body, rec.Code, got["error"], tc.want)
		}
	}

	// A crawl must be the caller's.
	crawlBody := `{"endpoint":"crawl","jobId":"` + crawlB + `","rating":"partial","note":"half the pages"}`
	if rec, got := do(t, s, http.MethodPost, "/v2/feedback", keyA, crawlBody); rec.Code != 404 || got["error"] != "Job not found" {
		t.Errorf("another team's crawl: %d %v", rec.Code, got)
	}
	if rec, got := do(t, s, http.MethodPost, "/v2/feedback", keyB, crawlBody); rec.Code != 200 {
		t.Errorf("own crawl: %d %v", rec.Code, got)
	}

	// A search, by id, with the reference's rules per rating.
	searchID := uuid.Must(uuid.NewV7()).String()
	if rec, got := do(t, s, http.MethodPost, "/v2/search/"+searchID+"/feedback", keyA, `{"rating":"good"}`); rec.Code != 400 ||
		got["error"] != "A good rating needs at least one valuableSources entry" {
		t.Errorf("good without a source: %d %v", rec.Code, got)
	}
	if rec, got := do(t, s, http.MethodPost, "/v2/search/nope/feedback", keyA, `{"rating":"bad","querySuggestions":"q"}`); rec.Code != 400 {
		t.Errorf("a search id that is no UUID: %d %v", rec.Code, got)
	}
	rec, got := do(t, s, http.MethodPost, "/v2/search/"+searchID+"/feedback", keyA,
		`{"rating":"good","valuableSources":[{"url":"https://a.example/x","reason":"the answer"}],"missingContent":[{"topic":"prices"}]}`)
	if rec.Code != 200 || got["feedbackId"] == nil {
		t.Fatalf("search feedback: %d %v", rec.Code, got)
	}

	// What the store holds, per team and for the operator.
	all, err := fs.ListFeedback(ctx, store.FeedbackQuery{Limit: 10})
	if err != nil || len(all) != 3 {
		t.Fatalf("stored: %+v %v", all, err)
	}
	var sf, sc store.Feedback
	for _, f := range all {
		switch f.Endpoint {
		case "search":
			sf = f
		case "scrape":
			sc = f
		}
	}
	if sc.TeamName != "acme" || sc.TeamID != teamA.ID || sc.JobID != scrapeID || sc.Rating != "bad" || sc.Note != "the price table is missing" || sc.Origin != "mcp" {
		t.Errorf("scrape feedback: %+v", sc)
	}
	var d map[string]any
	if err := json.Unmarshal(sc.Details, &d); err != nil || len(d["issues"].([]any)) != 1 || d["metadata"] == nil || d["pageNumbers"] == nil {
		t.Errorf("scrape feedback details %s: %v", sc.Details, err)
	}
	if sf.JobID != searchID || sf.Rating != "good" || !strings.Contains(string(sf.Details), "the answer") {
		t.Errorf("search feedback: %+v", sf)
	}
}

// TestFeedbackWithoutAStore: without a feedback store the routes answer
// 501 as before.
func TestFeedbackWithoutAStore(t *testing.T) {
	t.Parallel()
	s, _ := setup(t, &fakeScraper{})
	if rec, got := do(t, s, http.MethodPost, "/v2/feedback", goodKey, `{}`); rec.Code != http.StatusNotImplemented {
		t.Errorf("%d %v", rec.Code, got)
	}
}
