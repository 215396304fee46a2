package monitor_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/llm"
	"github.com/firegate/firegate/internal/llm/llmtest"
	"github.com/firegate/firegate/internal/monitor"
	"github.com/firegate/firegate/internal/search"
	"github.com/firegate/firegate/internal/search/searxngtest"
	"github.com/firegate/firegate/internal/store/teststore"
	"github.com/firegate/firegate/internal/testenv"
)

// newSearchMonitor creates an hourly monitor of the team watching the
// search "lamp news" over window for news about the lamp, judged or not.
func newSearchMonitor(t *testing.T, svc *monitor.Service, teamID, window string, judge bool) monitor.View {
	t.Helper()
	echo, _ := json.Marshal(map[string]any{"type": "search", "id": "news"})
	target := monitor.Target{Type: monitor.TargetSearch, ID: "news", Echo: echo,
		Search: &monitor.SearchTarget{Queries: []string{"lamp news"}, Window: window, MaxResults: 10}}
	sched, _ := monitor.ParseSchedule("", "hourly", "UTC")
	mon, err := svc.Create(t.Context(), teamID, monitor.Input{Name: "s", Schedule: sched, RetentionDays: 1,
		Config: monitor.Config{Targets: []monitor.Target{target}, Goal: "news about the lamp", JudgeEnabled: judge}})
	if err != nil {
		t.Fatal(err)
	}
	return mon
}

// TestSearchTarget: a search target's new results are judged against the
// goal (alert or ignored), results seen by an earlier check are
// already_seen, results published before the window are skipped; search
// and judgment credits are charged.
func TestSearchTarget(t *testing.T) {
	t.Parallel()
	var round atomic.Int64
	old := time.Now().Add(-30 * time.Minute).UTC().Format(time.RFC3339)
	engine := searxngtest.New(t, func(q url.Values) searxngtest.Answer {
		if round.Load() == 0 {
			return searxngtest.Answer{Results: []searxngtest.Result{
				{URL: "https://news.example.com/launch", Title: "Lamp launch", Content: "A new lamp is launched", Score: 3},
				{URL: "https://news.example.com/weather", Title: "Weather", Content: "Rain tomorrow", Score: 2},
				{URL: "https://news.example.com/old", Title: "Old lamp news", Content: "From before", Score: 1, PublishedDate: &old},
			}}
		}
		return searxngtest.Answer{Results: []searxngtest.Result{
			{URL: "https://news.example.com/launch", Title: "Lamp launch", Content: "A new lamp is launched", Score: 3},
			{URL: "https://news.example.com/recall", Title: "Lamp recall", Content: "The lamp is recalled", Score: 2},
		}}
	})
	backend, err := search.NewSearXNG(search.SearXNGOptions{Endpoint: engine.URL})
	if err != nil {
		t.Fatal(err)
	}
	log := testenv.Logger(t)
	searcher := search.New(backend, search.Options{}, log)
	model := llmtest.NewReplying(t, func(w http.ResponseWriter, r llmtest.Request) {
		meaningful := strings.Contains(r.LastUser(), "Lamp") // titles; the goal says "lamp"
		v, _ := json.Marshal(map[string]any{"meaningful": meaningful, "confidence": "medium", "reason": "about lamps or not",
			"meaningfulChanges": []any{}})
		llmtest.Write(w, string(v), &llmtest.Usage{PromptTokens: 20, CompletionTokens: 10, TotalTokens: 30})
	})
	client, err := llm.New(llm.Options{BaseURL: model.BaseURL, Model: "judge", Log: log})
	if err != nil {
		t.Fatal(err)
	}
	st := teststore.SQLite(t)
	ledger := billing.NewLedger(st, log)
	runner := monitor.NewRunner(monitor.RunnerConfig{Store: st, Searcher: searcher, Model: client, Ledger: ledger, Log: log})
	svc := monitor.NewService(st, &recorder{}, nil)
	team, _ := st.CreateTeam(t.Context(), "searching")
	mon := newSearchMonitor(t, svc, team.ID, "5m", true)
	run := func() monitor.CheckDetail { return checkNow(t, svc, runner, team.ID, mon.ID) }
	statusOf := func(d monitor.CheckDetail) map[string]string {
		out := map[string]string{}
		for _, p := range d.Pages {
			var m struct{ SearchStatus, Query string }
			_ = json.Unmarshal(p.Metadata, &m)
			out[strings.TrimPrefix(p.URL, "https://news.example.com/")] = p.Status + "/" + m.SearchStatus
			if m.Query != "lamp news" {
				t.Errorf("page %s metadata %s", p.URL, p.Metadata)
			}
		}
		return out
	}
	first := run()
	if got := statusOf(first); got["launch"] != "new/alert" || got["weather"] != "new/ignored" || got["old"] != "same/skipped" || len(got) != 3 {
		t.Errorf("first check: %v", got)
	}
	var tr []struct {
		SearchCompleted             bool
		ResultCount, Matches        int
		SearchCredits, JudgeCredits int64
		ResultsJudged               int
	}
	if err := json.Unmarshal(first.TargetResults, &tr); err != nil || len(tr) != 1 || !tr[0].SearchCompleted ||
		tr[0].ResultCount != 3 || tr[0].Matches != 1 || tr[0].ResultsJudged != 2 || tr[0].SearchCredits != 2 || tr[0].JudgeCredits != 4 {
		t.Errorf("target results %s", first.TargetResults)
	}
	if first.ActualCredits == nil || *first.ActualCredits != 6 {
		t.Errorf("actual credits %v, want 6 (2 search + 2 judgments of 30 tokens)", first.ActualCredits)
	}
	round.Store(1)
	second := run()
	if got := statusOf(second); got["launch"] != "same/already_seen" || got["recall"] != "new/alert" || len(got) != 2 {
		t.Errorf("second check: %v", got)
	}
	if second.Summary != (monitor.Summary{TotalPages: 2, Same: 1, New: 1}) {
		t.Errorf("second summary %+v", second.Summary)
	}
	if n := len(model.Requests()); n != 3 {
		t.Errorf("%d judgments, want 3 (seen and skipped results are not judged)", n)
	}
	// A search target needs a goal: an update may not take it away.
	none := ""
	if _, err := svc.Update(t.Context(), team.ID, mon.ID, monitor.Patch{Goal: &none}); !errors.Is(err, monitor.ErrGoalRequired) {
		t.Errorf("removing the goal: %v, want ErrGoalRequired", err)
	}
}

// TestSearchTargetDateBeyondJSON: a result dated past year 9999 in UTC (an
// engine's "9999-12-31T23:30:00-01:00") keeps its metadata; only the date
// that has no JSON form is left out. The metadata used to be lost whole.
func TestSearchTargetDateBeyondJSON(t *testing.T) {
	t.Parallel()
	far := "9999-12-31T23:30:00-01:00"
	engine := searxngtest.New(t, func(q url.Values) searxngtest.Answer {
		return searxngtest.Answer{Results: []searxngtest.Result{
			{URL: "https://news.example.com/far", Title: "Far lamp", Content: "Dated beyond JSON", Score: 1, PublishedDate: &far},
		}}
	})
	backend, err := search.NewSearXNG(search.SearXNGOptions{Endpoint: engine.URL})
	if err != nil {
		t.Fatal(err)
	}
	log := testenv.Logger(t)
	st := teststore.SQLite(t)
	runner := monitor.NewRunner(monitor.RunnerConfig{Store: st, Searcher: search.New(backend, search.Options{}, log), Log: log})
	svc := monitor.NewService(st, &recorder{}, nil)
	team, _ := st.CreateTeam(t.Context(), "far")
	mon := newSearchMonitor(t, svc, team.ID, "1h", false)
	d := checkNow(t, svc, runner, team.ID, mon.ID)
	if len(d.Pages) != 1 {
		t.Fatalf("%d pages, want 1", len(d.Pages))
	}
	var m map[string]any
	if err := json.Unmarshal(d.Pages[0].Metadata, &m); err != nil || m["query"] != "lamp news" || m["title"] != "Far lamp" ||
		m["searchStatus"] != "watching" {
		t.Errorf("metadata %s (%v), want the query, title and status", d.Pages[0].Metadata, err)
	}
	if _, ok := m["publishedAt"]; ok {
		t.Errorf("metadata %s has a publishedAt JSON cannot hold", d.Pages[0].Metadata)
	}
}
