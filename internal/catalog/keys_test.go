package catalog

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/teststore"
	"github.com/firegate/firegate/internal/testenv"
)

func TestKeysProtocol(t *testing.T) {
	t.Parallel()
	st := teststore.SQLite(t)
	ctx := t.Context()
	renewals := &renewSignal{IdempotencyStore: st, renewed: make(chan struct{}, 16)}
	a, b := NewKeys(renewals, testenv.Logger(t)), NewKeys(st, testenv.Logger(t))
	a.Lease, b.Lease = 300*time.Millisecond, 300*time.Millisecond
	team := uuid.NewString()
	hash, other := []byte("h1"), []byte("h2")

	first, err := a.Begin(ctx, team, "k", hash, "scrape-1", time.Minute)
	if err != nil || first.Outcome != Run || first.Record.ScrapeID != "scrape-1" {
		t.Fatalf("first Begin = %+v, %v", first, err)
	}
	// Renewed while held: another process sees it in flight, well past
	// the lease (four renewals, a third of it apart).
	for i := range 4 {
		select {
		case <-renewals.renewed:
		case <-time.After(testenv.Patient(10 * time.Second)):
			t.Fatalf("the holder renewed its key %d times, want 4", i)
		}
	}
	if got, err := b.Begin(ctx, team, "k", hash, "scrape-2", time.Minute); err != nil || got.Outcome != InFlight {
		t.Fatalf("Begin while held = %+v, %v; want InFlight", got.Outcome, err)
	}
	if err := a.Complete(ctx, first, 200, []byte(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	got, err := b.Begin(ctx, team, "k", hash, "scrape-2", time.Minute)
	if err != nil || got.Outcome != Replay || string(got.Record.Response) != `{"ok":true}` || got.Record.ScrapeID != "scrape-1" {
		t.Fatalf("Begin after completion = %+v, %v; want Replay", got, err)
	}
	if got, err := b.Begin(ctx, team, "k", other, "scrape-2", time.Minute); err != nil || got.Outcome != Duplicate {
		t.Fatalf("Begin with other parameters = %+v, %v; want Duplicate", got.Outcome, err)
	}
	if err := b.Complete(ctx, got, 200, nil); err == nil {
		t.Errorf("Complete of a key not held succeeded")
	}

	// A holder that dies (stops renewing): the key is unresolved until its
	// run deadline, then reclaimable with the first scrape id.
	held, err := a.Begin(ctx, team, "late", hash, "scrape-3", 1500*time.Millisecond)
	if err != nil || held.Outcome != Run {
		t.Fatalf("Begin = %+v, %v", held, err)
	}
	held.held.end()
	sawUnresolved := false
	if !testenv.WaitFor(10*time.Second, func() bool {
		var err error
		if got, err = b.Begin(ctx, team, "late", hash, "scrape-4", time.Minute); err != nil {
			t.Fatal(err)
		}
		sawUnresolved = sawUnresolved || got.Outcome == Unresolved
		return got.Outcome == Run
	}) {
		t.Fatalf("never reclaimed; last %v", got.Outcome)
	}
	if got.Record.ScrapeID != "scrape-3" {
		t.Errorf("reclaimed with scrape id %q, want scrape-3", got.Record.ScrapeID)
	}
	b.Release(ctx, got)
	if !sawUnresolved {
		t.Errorf("the lapsed key was never unresolved before the reclaim")
	}
	a.Release(ctx, held) // no longer its owner: a no-op
	// A live holder stops renewing once its run is over.
	short, err := a.Begin(ctx, team, "short", hash, "scrape-6", 100*time.Millisecond)
	if err != nil || short.Outcome != Run {
		t.Fatalf("Begin = %+v, %v", short, err)
	}
	if !testenv.WaitFor(10*time.Second, func() bool {
		var err error
		if got, err = b.Begin(ctx, team, "short", hash, "scrape-7", time.Minute); err != nil {
			t.Fatal(err)
		}
		return got.Outcome == Run
	}) {
		t.Fatalf("a holder past its run kept the key: %v", got.Outcome)
	}
	b.Release(ctx, got)
	a.Release(ctx, short)
	if got, err := a.Begin(ctx, team, "late", hash, "scrape-5", time.Minute); err != nil || got.Outcome != Run {
		t.Errorf("Begin after the release = %+v, %v; want Run", got.Outcome, err)
	} else {
		a.Release(ctx, got)
	}
}

// renewSignal passes a store's idempotency calls through and signals each
// successful renewal of a key (dropped when nobody listens).
type renewSignal struct {
	store.IdempotencyStore
	renewed chan struct{}
}

func (r *renewSignal) RenewRequest(ctx context.Context, teamID, key, owner string, lease time.Duration) (bool, error) {
	ok, err := r.IdempotencyStore.RenewRequest(ctx, teamID, key, owner, lease)
	if ok && err == nil {
		select {
		case r.renewed <- struct{}{}:
		default:
		}
	}
	return ok, err
}
