package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/firegate/firegate/internal/store"
)

// FeedbackUnderTest is what RunFeedback exercises: a store with the
// feedback table (teams come from store.Store).
type FeedbackUnderTest interface {
	store.Store
	store.FeedbackStore
}

// RunFeedback runs the contract suite of store.FeedbackStore. newStore
// must return a new, empty store that no other test uses, and must
// release it with t.Cleanup. Subtests run in parallel.
func RunFeedback(t *testing.T, newStore func(t *testing.T) FeedbackUnderTest) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s FeedbackUnderTest)
	}{
		{"FeedbackAddAndList", testFeedbackAddAndList},
		{"FeedbackOncePerJob", testFeedbackOncePerJob},
		{"FeedbackPages", testFeedbackPages},
		{"FeedbackUnknownTeam", testFeedbackUnknownTeam},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newStore(t))
		})
	}
}

// sameJSON compares JSON by value (Postgres stores jsonb in its own form).
func sameJSON(t *testing.T, want, got json.RawMessage) bool {
	t.Helper()
	if len(want) == 0 || len(got) == 0 {
		return len(want) == len(got)
	}
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("stored details are not JSON: %q", got)
	}
	return cmp.Equal(w, g)
}

func testFeedbackAddAndList(t *testing.T, s FeedbackUnderTest) {
	ctx := t.Context()
	a, b := mustTeam(t, s, "a"), mustTeam(t, s, "b")
	now := time.Now().UTC().Truncate(time.Microsecond)
	first := store.Feedback{ID: mustV7(t), TeamID: a.ID, Endpoint: "scrape", JobID: mustV7(t), Rating: "bad",
		Note: "the table is missing — ü", Details: json.RawMessage(`{"issues":["missing_table"],"pageNumbers":[2,3]}`),
		Origin: "mcp", CreatedAt: now.Add(-time.Minute)}
	second := store.Feedback{ID: mustV7(t), TeamID: b.ID, Endpoint: "search", JobID: mustV7(t), Rating: "good", Origin: "api", CreatedAt: now}
	for _, f := range []store.Feedback{first, second} {
		saved, created, err := s.AddFeedback(ctx, f)
		if err != nil || !created || saved.ID != f.ID {
			t.Fatalf("AddFeedback: %+v %v %v", saved, created, err)
		}
	}
	all, err := s.ListFeedback(ctx, store.FeedbackQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].ID != second.ID || all[1].ID != first.ID {
		t.Fatalf("every team's, newest first: %+v", all)
	}
	got := all[1]
	if got.TeamName != "a" || got.Note != first.Note || got.Rating != "bad" || got.Endpoint != "scrape" || got.JobID != first.JobID ||
		got.Origin != "mcp" || !got.CreatedAt.Equal(first.CreatedAt) || !sameJSON(t, first.Details, got.Details) {
		t.Errorf("stored %+v, want %+v", got, first)
	}
	if all[0].Details != nil {
		t.Errorf("no details stored as %q", all[0].Details)
	}
	own, err := s.ListFeedback(ctx, store.FeedbackQuery{TeamID: b.ID, Limit: 10})
	if err != nil || len(own) != 1 || own[0].ID != second.ID || own[0].TeamName != "b" {
		t.Errorf("team b's: %+v %v", own, err)
	}
	if none, err := s.ListFeedback(ctx, store.FeedbackQuery{TeamID: "not-a-uuid", Limit: 10}); err != nil || len(none) != 0 {
		t.Errorf("a malformed team id: %+v %v", none, err)
	}
}

func testFeedbackOncePerJob(t *testing.T, s FeedbackUnderTest) {
	ctx := t.Context()
	a, b := mustTeam(t, s, "a"), mustTeam(t, s, "b")
	job := mustV7(t)
	first, created, err := s.AddFeedback(ctx, store.Feedback{TeamID: a.ID, Endpoint: "crawl", JobID: job, Rating: "good", Origin: "api"})
	if err != nil || !created || first.ID == "" || first.CreatedAt.IsZero() {
		t.Fatalf("first: %+v %v %v", first, created, err)
	}
	// The same job again, at once from many callers: the first is kept.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			again, created, err := s.AddFeedback(ctx, store.Feedback{TeamID: a.ID, Endpoint: "crawl", JobID: job, Rating: "bad",
				Note: fmt.Sprint("try ", i), Origin: "api"})
			if err == nil && (created || again.ID != first.ID || again.Rating != "good" || again.TeamName != "a") {
				err = fmt.Errorf("repeat %d: %+v created %v", i, again, created)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	// Another endpoint or another team rates the same id on its own.
	for _, f := range []store.Feedback{{TeamID: a.ID, Endpoint: "batch", JobID: job, Rating: "bad"}, {TeamID: b.ID, Endpoint: "crawl", JobID: job, Rating: "bad"}} {
		if _, created, err := s.AddFeedback(ctx, f); err != nil || !created {
			t.Errorf("%+v: created %v, %v", f, created, err)
		}
	}
	if all, _ := s.ListFeedback(ctx, store.FeedbackQuery{Limit: 10}); len(all) != 3 {
		t.Errorf("%d rows, want 3", len(all))
	}
}

func testFeedbackPages(t *testing.T, s FeedbackUnderTest) {
	ctx := t.Context()
	a := mustTeam(t, s, "a")
	var ids []string
	for range 5 {
		f, _, err := s.AddFeedback(ctx, store.Feedback{TeamID: a.ID, Endpoint: "map", JobID: mustV7(t), Rating: "partial"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append([]string{f.ID}, ids...) // newest first
	}
	var got []string
	before := ""
	for {
		page, err := s.ListFeedback(ctx, store.FeedbackQuery{TeamID: a.ID, Before: before, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, f := range page {
			got = append(got, f.ID)
		}
		before = page[len(page)-1].ID
	}
	if diff := cmp.Diff(ids, got); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
	if _, err := s.ListFeedback(ctx, store.FeedbackQuery{Before: "nope", Limit: 2}); err == nil {
		t.Error("a malformed cursor was accepted")
	}
}

func testFeedbackUnknownTeam(t *testing.T, s FeedbackUnderTest) {
	for _, team := range []string{mustV7(t), "not-a-uuid"} {
		_, _, err := s.AddFeedback(t.Context(), store.Feedback{TeamID: team, Endpoint: "scrape", JobID: mustV7(t), Rating: "good"})
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("team %s: %v, want ErrNotFound", team, err)
		}
	}
}
