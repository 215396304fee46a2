package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/store"
)

// ActivityUnderTest is what RunActivity exercises: a store with the
// activity table (teams come from store.Store).
type ActivityUnderTest interface {
	store.Store
	store.ActivityStore
}

// RunActivity runs the contract suite of store.ActivityStore. newStore
// must return a new, empty store that no other test uses, and must
// release it with t.Cleanup. Subtests run in parallel.
func RunActivity(t *testing.T, newStore func(t *testing.T) ActivityUnderTest) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s ActivityUnderTest)
	}{
		{"RecordAndList", testActivityRecordAndList},
		{"Pages", testActivityPages},
		{"DeleteBefore", testActivityDeleteBefore},
		{"Concurrent", testActivityConcurrent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newStore(t))
		})
	}
}

func testActivityRecordAndList(t *testing.T, s ActivityUnderTest) {
	ctx := t.Context()
	a, b := mustTeam(t, s, "a"), mustTeam(t, s, "b")
	now := time.Now().UTC().Truncate(time.Microsecond)
	first := store.Activity{ID: mustV7(t), TeamID: a.ID, Endpoint: "scrape", APIVersion: "v2",
		Target: "https://shop.example/ü?q=1", Username: "jane@corp.example", CreatedAt: now.Add(-time.Minute)}
	second := store.Activity{ID: mustV7(t), TeamID: a.ID, Endpoint: "map", APIVersion: "v1",
		Target: "https://docs.example", CreatedAt: now}
	for _, act := range []store.Activity{first, second} {
		if err := s.RecordActivity(ctx, act); err != nil {
			t.Fatalf("RecordActivity: %v", err)
		}
	}
	got, err := s.ListActivity(ctx, a.ID, store.ActivityQuery{Since: now.Add(-time.Hour), Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != second || got[1] != first {
		t.Errorf("ListActivity = %+v, want [second, first] = %+v", got, []store.Activity{second, first})
	}
	if got[1].CreatedAt.Location() != time.UTC {
		t.Errorf("time not in UTC: %v", got[1].CreatedAt)
	}
	got, _ = s.ListActivity(ctx, a.ID, store.ActivityQuery{Since: now.Add(-time.Hour), Endpoint: "scrape", Limit: 10})
	if len(got) != 1 || got[0].ID != first.ID {
		t.Errorf("endpoint filter: %+v", got)
	}
	got, _ = s.ListActivity(ctx, a.ID, store.ActivityQuery{Since: now.Add(-30 * time.Second), Limit: 10})
	if len(got) != 1 || got[0].ID != second.ID {
		t.Errorf("since filter: %+v", got)
	}
	got, err = s.ListActivity(ctx, b.ID, store.ActivityQuery{Since: now.Add(-time.Hour), Limit: 10})
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("another team's list = %v, %v; want empty, not nil", got, err)
	}
	err = s.RecordActivity(ctx, store.Activity{ID: mustV7(t), TeamID: uuid.NewString(), Endpoint: "scrape", APIVersion: "v2", CreatedAt: now})
	checkErr(t, "RecordActivity for an unknown team", err, store.ErrNotFound)
	err = s.RecordActivity(ctx, first)
	checkErr(t, "RecordActivity with a used id", err, store.ErrConflict)
	if _, err := s.ListActivity(ctx, a.ID, store.ActivityQuery{Before: "not-a-uuid", Limit: 1}); err == nil {
		t.Error("a malformed cursor was accepted")
	}
}

func mustV7(t *testing.T) string {
	t.Helper()
	id, err := uuid.NewV7()
	if err != nil {
		t.Fatal(err)
	}
	return id.String()
}

func testActivityPages(t *testing.T, s ActivityUnderTest) {
	ctx := t.Context()
	a := mustTeam(t, s, "a")
	base := time.Now().UTC().Add(-time.Hour)
	var ids []string
	for i := range 7 {
		act := store.Activity{ID: mustV7(t), TeamID: a.ID, Endpoint: "scrape", APIVersion: "v2",
			Target: fmt.Sprintf("https://example.com/%d", i), CreatedAt: base.Add(time.Duration(i) * time.Second)}
		if err := s.RecordActivity(ctx, act); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, act.ID)
	}
	var seen []string
	before := ""
	for range 4 {
		page, err := s.ListActivity(ctx, a.ID, store.ActivityQuery{Since: base.Add(-time.Minute), Before: before, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range page {
			seen = append(seen, p.ID)
		}
		if len(page) < 3 {
			break
		}
		before = page[len(page)-1].ID
	}
	if len(seen) != 7 {
		t.Fatalf("pages gave %d activities, want 7", len(seen))
	}
	for i, id := range seen {
		if id != ids[6-i] {
			t.Errorf("page order: position %d is %s, want %s", i, id, ids[6-i])
		}
	}
}

func testActivityDeleteBefore(t *testing.T, s ActivityUnderTest) {
	ctx := t.Context()
	a, b := mustTeam(t, s, "a"), mustTeam(t, s, "b")
	now := time.Now().UTC()
	for _, act := range []store.Activity{
		{ID: mustV7(t), TeamID: a.ID, Endpoint: "scrape", APIVersion: "v2", CreatedAt: now.Add(-25 * time.Hour)},
		{ID: mustV7(t), TeamID: b.ID, Endpoint: "crawl", APIVersion: "v2", CreatedAt: now.Add(-48 * time.Hour)},
		{ID: mustV7(t), TeamID: a.ID, Endpoint: "map", APIVersion: "v2", CreatedAt: now.Add(-time.Hour)},
	} {
		if err := s.RecordActivity(ctx, act); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.DeleteActivityBefore(ctx, now.Add(-24*time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("DeleteActivityBefore = %d, %v; want 2", n, err)
	}
	got, _ := s.ListActivity(ctx, a.ID, store.ActivityQuery{Since: now.Add(-72 * time.Hour), Limit: 10})
	if len(got) != 1 || got[0].Endpoint != "map" {
		t.Errorf("after delete: %+v", got)
	}
}

func testActivityConcurrent(t *testing.T, s ActivityUnderTest) {
	ctx := t.Context()
	a := mustTeam(t, s, "a")
	now := time.Now().UTC()
	var wg sync.WaitGroup
	errs := make(chan error, concurrency)
	for range concurrency {
		wg.Go(func() {
			id, err := uuid.NewV7()
			if err == nil {
				err = s.RecordActivity(ctx, store.Activity{ID: id.String(), TeamID: a.ID, Endpoint: "scrape", APIVersion: "v2", CreatedAt: now})
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent RecordActivity: %v", err)
	}
	got, err := s.ListActivity(ctx, a.ID, store.ActivityQuery{Since: now.Add(-time.Second), Limit: 100})
	if err != nil || len(got) != concurrency {
		t.Errorf("listed %d of %d concurrent activities: %v", len(got), concurrency, err)
	}
}
