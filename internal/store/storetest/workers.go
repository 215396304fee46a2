package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/store"
)

// RunWorkers runs the contract suite of store.WorkerStore. newStore must
// return a new, empty store that no other test uses, and must release it
// with t.Cleanup. Subtests run in parallel, each with its own store.
//
// The store keeps time by the database's clock, so the tests wait real
// time: a beat is made old by sleeping (staleWait) and compared against
// an age of half that, leaving a margin for a slow machine.
func RunWorkers(t *testing.T, newStore func(t *testing.T) store.WorkerStore) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.WorkerStore)
	}{
		{"StaleWorkers", testStaleWorkers},
		{"HeartbeatRefreshes", testHeartbeatRefreshes},
		{"DeleteWorker", testDeleteWorker},
		{"HeartbeatEmptyID", testHeartbeatEmptyID},
		{"ConcurrentHeartbeats", testConcurrentHeartbeats},
		{"WorkersCanceledContext", testWorkersCanceledContext},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newStore(t))
		})
	}
}

// staleWait is how long a test lets a heartbeat age; staleAge, half of
// it, is the age the test asks about.
const (
	staleWait = time.Second
	staleAge  = staleWait / 2
)

func mustBeat(t *testing.T, s store.WorkerStore, id string) {
	t.Helper()
	if err := s.Heartbeat(t.Context(), id); err != nil {
		t.Fatalf("Heartbeat(%q): %v", id, err)
	}
}

func checkStale(t *testing.T, s store.WorkerStore, age time.Duration, want ...string) {
	t.Helper()
	got, err := s.StaleWorkers(t.Context(), age)
	if err != nil {
		t.Fatalf("StaleWorkers(%v): %v", age, err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("StaleWorkers(%v) = %q, want %q", age, got, want)
	}
}

// testStaleWorkers: a worker is stale once its beat is older than the age
// asked about, listed oldest first; fresh workers are not listed.
func testStaleWorkers(t *testing.T, s store.WorkerStore) {
	checkStale(t, s, 0)
	mustBeat(t, s, "worker-b")
	time.Sleep(staleWait / 4)
	mustBeat(t, s, "worker-a")
	checkStale(t, s, time.Minute)
	time.Sleep(staleWait)
	mustBeat(t, s, "worker-c")
	// b beat before a: oldest first, whatever the ids' order.
	checkStale(t, s, staleAge, "worker-b", "worker-a")
	checkStale(t, s, time.Minute)
}

// testHeartbeatRefreshes: a stale worker that beats again is fresh.
func testHeartbeatRefreshes(t *testing.T, s store.WorkerStore) {
	mustBeat(t, s, "w1")
	mustBeat(t, s, "w2")
	time.Sleep(staleWait)
	checkStale(t, s, staleAge, "w1", "w2")
	mustBeat(t, s, "w1")
	checkStale(t, s, staleAge, "w2")
}

// testDeleteWorker: a delete with staleFor spares a fresh worker and
// removes a stale one; staleFor 0 removes any; an unknown id is no error;
// a deleted worker that beats again is back.
func testDeleteWorker(t *testing.T, s store.WorkerStore) {
	ctx := t.Context()
	del := func(id string, staleFor time.Duration, want bool) {
		t.Helper()
		got, err := s.DeleteWorker(ctx, id, staleFor)
		if err != nil {
			t.Fatalf("DeleteWorker(%q, %v): %v", id, staleFor, err)
		}
		if got != want {
			t.Errorf("DeleteWorker(%q, %v) = %v, want %v", id, staleFor, got, want)
		}
	}
	del("unknown", 0, false)
	mustBeat(t, s, "old")
	time.Sleep(staleWait)
	mustBeat(t, s, "fresh")
	mustBeat(t, s, "other")
	del("fresh", staleAge, false)
	del("old", staleAge, true)
	del("old", 0, false)
	checkStale(t, s, staleAge)
	del("fresh", 0, true)
	mustBeat(t, s, "old")
	time.Sleep(staleWait)
	checkStale(t, s, staleAge, "other", "old")
}

func testHeartbeatEmptyID(t *testing.T, s store.WorkerStore) {
	if err := s.Heartbeat(t.Context(), ""); err == nil {
		t.Errorf("Heartbeat(\"\") succeeded")
	}
	checkStale(t, s, 0)
}

// testConcurrentHeartbeats: many processes beating at once, twice each
// (the insert and the update race), all succeed and all are recorded.
func testConcurrentHeartbeats(t *testing.T, s store.WorkerStore) {
	var wg sync.WaitGroup
	errs := make(chan error, 2*claimers*2)
	for i := range 2 * claimers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("w%02d", i%claimers)
			for range 2 {
				if err := s.Heartbeat(t.Context(), id); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Heartbeat: %v", err)
	}
	time.Sleep(staleWait)
	got, err := s.StaleWorkers(t.Context(), staleAge)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	var want []string
	for i := range claimers {
		want = append(want, fmt.Sprintf("w%02d", i))
	}
	if !slices.Equal(got, want) {
		t.Errorf("workers %q, want %q", got, want)
	}
}

func testWorkersCanceledContext(t *testing.T, s store.WorkerStore) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Heartbeat(ctx, "w"); err == nil {
		t.Errorf("Heartbeat with a canceled context succeeded")
	}
	if _, err := s.StaleWorkers(ctx, 0); err == nil {
		t.Errorf("StaleWorkers with a canceled context succeeded")
	}
	if _, err := s.DeleteWorker(ctx, "w", 0); err == nil {
		t.Errorf("DeleteWorker with a canceled context succeeded")
	}
}
