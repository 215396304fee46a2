package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/store"
)

// RunIdempotency runs the contract suite of store.IdempotencyStore.
// newStore must return a new, empty store that no other test uses, and
// must release it with t.Cleanup. Subtests run in parallel.
//
// The store keeps time by the database's clock, so the tests that need a
// lease or an expiry to pass poll for it with a deadline.
func RunIdempotency(t *testing.T, newStore func(t *testing.T) store.IdempotencyStore) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.IdempotencyStore)
	}{
		{"ClaimCompleteReplay", testIdemClaimComplete},
		{"Release", testIdemRelease},
		{"NotOwner", testIdemNotOwner},
		{"ConcurrentClaims", testIdemConcurrentClaims},
		{"LeaseLapseAndReclaim", testIdemReclaim},
		{"Renew", testIdemRenew},
		{"Expiry", testIdemExpiry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newStore(t))
		})
	}
}

func idemClaim(team, key, owner string) store.IdempotencyClaim {
	return store.IdempotencyClaim{TeamID: team, Key: key, Owner: owner, RequestHash: []byte("hash-" + key),
		ScrapeID: uuid.NewString(), Lease: time.Minute, Run: time.Minute, Keep: 24 * time.Hour}
}

func mustClaimKey(t *testing.T, s store.IdempotencyStore, c store.IdempotencyClaim) (store.IdempotencyRecord, bool) {
	t.Helper()
	rec, ok, err := s.ClaimRequest(t.Context(), c)
	if err != nil {
		t.Fatalf("ClaimRequest(%s): %v", c.Key, err)
	}
	return rec, ok
}

func testIdemClaimComplete(t *testing.T, s store.IdempotencyStore) {
	ctx := t.Context()
	team, other := uuid.NewString(), uuid.NewString()
	first := idemClaim(team, "k.1:a-b_c", "owner-a")
	rec, ok := mustClaimKey(t, s, first)
	if !ok || rec.Done || rec.Owner != "owner-a" || rec.ScrapeID != first.ScrapeID || !bytes.Equal(rec.RequestHash, first.RequestHash) ||
		rec.LeaseLapsed || rec.Reclaimable || rec.TeamID != team || rec.Key != first.Key || rec.CreatedAt.IsZero() {
		t.Fatalf("first claim = %+v, %v; want a fresh running record of owner-a", rec, ok)
	}
	second := idemClaim(team, first.Key, "owner-b")
	second.RequestHash = []byte("other")
	rec, ok = mustClaimKey(t, s, second)
	if ok || rec.Owner != "owner-a" || rec.ScrapeID != first.ScrapeID || !bytes.Equal(rec.RequestHash, first.RequestHash) || rec.Done {
		t.Fatalf("second claim = %+v, %v; want the first record unchanged, not claimed", rec, ok)
	}
	if _, ok := mustClaimKey(t, s, idemClaim(other, first.Key, "owner-b")); !ok {
		t.Errorf("another team's claim of the same key was refused")
	}
	body := []byte(`{"success":true}`)
	if err := s.CompleteRequest(ctx, team, first.Key, "owner-a", 200, body); err != nil {
		t.Fatalf("CompleteRequest: %v", err)
	}
	rec, ok = mustClaimKey(t, s, second)
	if ok || !rec.Done || rec.Status != 200 || !bytes.Equal(rec.Response, body) || rec.ScrapeID != first.ScrapeID || rec.LeaseLapsed {
		t.Fatalf("claim after completion = %+v, %v; want the completed record", rec, ok)
	}
	if err := s.CompleteRequest(ctx, team, first.Key, "owner-a", 500, nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("completing a completed record: %v, want ErrNotFound", err)
	}
	if err := s.ReleaseRequest(ctx, team, first.Key, "owner-a"); err != nil {
		t.Fatalf("ReleaseRequest of a completed record: %v", err)
	}
	if rec, ok = mustClaimKey(t, s, second); ok || !rec.Done {
		t.Errorf("release deleted a completed record: %+v, %v", rec, ok)
	}
}

func testIdemRelease(t *testing.T, s store.IdempotencyStore) {
	team := uuid.NewString()
	c := idemClaim(team, "k", "a")
	mustClaimKey(t, s, c)
	if err := s.ReleaseRequest(t.Context(), team, "k", "b"); err != nil {
		t.Fatalf("ReleaseRequest by another owner: %v", err)
	}
	if _, ok := mustClaimKey(t, s, idemClaim(team, "k", "b")); ok {
		t.Fatalf("another owner's release freed the key")
	}
	if err := s.ReleaseRequest(t.Context(), team, "k", "a"); err != nil {
		t.Fatalf("ReleaseRequest: %v", err)
	}
	if rec, ok := mustClaimKey(t, s, idemClaim(team, "k", "b")); !ok || rec.Owner != "b" {
		t.Errorf("claim after release = %+v, %v; want claimed by b", rec, ok)
	}
}

func testIdemNotOwner(t *testing.T, s store.IdempotencyStore) {
	ctx := t.Context()
	team := uuid.NewString()
	mustClaimKey(t, s, idemClaim(team, "k", "a"))
	if err := s.CompleteRequest(ctx, team, "k", "b", 200, []byte("x")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("CompleteRequest by another owner: %v, want ErrNotFound", err)
	}
	if ok, err := s.RenewRequest(ctx, team, "k", "b", time.Minute); err != nil || ok {
		t.Errorf("RenewRequest by another owner = %v, %v; want false", ok, err)
	}
	if err := s.CompleteRequest(ctx, uuid.NewString(), "k", "a", 200, nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("CompleteRequest of another team's key: %v, want ErrNotFound", err)
	}
	if _, _, err := s.ClaimRequest(ctx, idemClaim("not-a-uuid", "k", "a")); err == nil {
		t.Errorf("ClaimRequest with a malformed team id succeeded")
	}
}

func testIdemConcurrentClaims(t *testing.T, s store.IdempotencyStore) {
	team := uuid.NewString()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []string
		errs    []error
	)
	for i := range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := fmt.Sprintf("owner-%d", i)
			rec, ok, err := s.ClaimRequest(t.Context(), idemClaim(team, "same", owner))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				errs = append(errs, err)
			case ok:
				winners = append(winners, owner)
			case rec.Done || rec.Owner == owner:
				errs = append(errs, fmt.Errorf("loser %s saw %+v", owner, rec))
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 || len(winners) != 1 {
		t.Fatalf("%d concurrent claims: winners %v, errors %v; want exactly one winner", concurrency, winners, errs)
	}
	rec, ok := mustClaimKey(t, s, idemClaim(team, "same", "late"))
	if ok || rec.Owner != winners[0] {
		t.Errorf("record after the race = %+v, %v; want owned by %s", rec, ok, winners[0])
	}
}

// waitRecord polls the record of key (through a claim that cannot win)
// until cond holds, failing after a deadline.
func waitRecord(t *testing.T, s store.IdempotencyStore, team, key string, cond func(store.IdempotencyRecord) bool) store.IdempotencyRecord {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		rec, ok := mustClaimKey(t, s, idemClaim(team, key, "poller"))
		if ok {
			t.Fatalf("the poller claimed %s: the record was gone", key)
		}
		if cond(rec) {
			return rec
		}
		if time.Now().After(deadline) {
			t.Fatalf("record %s never reached the wanted state: %+v", key, rec)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func testIdemReclaim(t *testing.T, s store.IdempotencyStore) {
	ctx := t.Context()
	team := uuid.NewString()
	// A lapsed lease with the run deadline far away: unresolved, not
	// reclaimable.
	c := idemClaim(team, "long", "dead")
	c.Lease = 100 * time.Millisecond
	mustClaimKey(t, s, c)
	rec := waitRecord(t, s, team, "long", func(r store.IdempotencyRecord) bool { return r.LeaseLapsed })
	if rec.Reclaimable || rec.Done {
		t.Fatalf("lapsed record with a distant run deadline = %+v; want not reclaimable", rec)
	}
	if rec, ok, err := s.ReclaimRequest(ctx, idemClaim(team, "long", "new")); err != nil || ok || rec.Owner != "dead" {
		t.Fatalf("ReclaimRequest before the run deadline = %+v, %v, %v; want refused", rec, ok, err)
	}

	// Lease and run deadline both lapsed: exactly one of many reclaims wins.
	c = idemClaim(team, "short", "dead")
	c.Lease, c.Run = 100*time.Millisecond, 200*time.Millisecond
	first, _ := mustClaimKey(t, s, c)
	waitRecord(t, s, team, "short", func(r store.IdempotencyRecord) bool { return r.Reclaimable })
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []store.IdempotencyRecord
	)
	for i := range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rc := idemClaim(team, "short", fmt.Sprintf("new-%d", i))
			rec, ok, err := s.ReclaimRequest(ctx, rc)
			if err != nil {
				t.Errorf("ReclaimRequest: %v", err)
				return
			}
			if ok {
				mu.Lock()
				winners = append(winners, rec)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(winners) != 1 {
		t.Fatalf("%d concurrent reclaims: %d won; want exactly one", concurrency, len(winners))
	}
	w := winners[0]
	if w.ScrapeID != first.ScrapeID || !bytes.Equal(w.RequestHash, first.RequestHash) || w.LeaseLapsed || w.Reclaimable || w.Owner == "dead" {
		t.Errorf("reclaimed record = %+v; want the first's scrape id and hash under a fresh lease", w)
	}
	if err := s.CompleteRequest(ctx, team, "short", "dead", 200, nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the dead owner completed a reclaimed record: %v", err)
	}
	if err := s.CompleteRequest(ctx, team, "short", w.Owner, 200, []byte("ok")); err != nil {
		t.Errorf("the new owner's CompleteRequest: %v", err)
	}
	if _, _, err := s.ReclaimRequest(ctx, idemClaim(team, "missing", "x")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ReclaimRequest of no record: %v, want ErrNotFound", err)
	}
}

func testIdemRenew(t *testing.T, s store.IdempotencyStore) {
	ctx := t.Context()
	team := uuid.NewString()
	c := idemClaim(team, "k", "a")
	c.Lease = 300 * time.Millisecond
	mustClaimKey(t, s, c)
	start := time.Now()
	for time.Since(start) < 900*time.Millisecond {
		if ok, err := s.RenewRequest(ctx, team, "k", "a", 300*time.Millisecond); err != nil || !ok {
			t.Fatalf("RenewRequest = %v, %v", ok, err)
		}
		if rec, _ := mustClaimKey(t, s, idemClaim(team, "k", "b")); rec.LeaseLapsed {
			t.Fatalf("a renewed lease lapsed: %+v", rec)
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitRecord(t, s, team, "k", func(r store.IdempotencyRecord) bool { return r.LeaseLapsed })
}

func testIdemExpiry(t *testing.T, s store.IdempotencyStore) {
	ctx := t.Context()
	team := uuid.NewString()
	c := idemClaim(team, "k", "a")
	c.Keep = 200 * time.Millisecond
	mustClaimKey(t, s, c)
	if err := s.CompleteRequest(ctx, team, "k", "a", 200, []byte("first")); err != nil {
		t.Fatalf("CompleteRequest: %v", err)
	}
	kept := idemClaim(team, "kept", "a")
	mustClaimKey(t, s, kept)
	deadline := time.Now().Add(10 * time.Second)
	for {
		rec, ok := mustClaimKey(t, s, idemClaim(team, "k", "b"))
		if ok {
			if rec.Owner != "b" || rec.Done || rec.Response != nil {
				t.Fatalf("claim of an expired key = %+v; want a fresh record of b", rec)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the key never expired: %+v", rec)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The fresh claim is kept 24 hours: deleting expired records leaves
	// it and the other key alone; an expired one goes.
	c = idemClaim(team, "gone", "a")
	c.Keep = 100 * time.Millisecond
	mustClaimKey(t, s, c)
	deadline = time.Now().Add(10 * time.Second)
	var deleted int64
	for deleted == 0 {
		n, err := s.DeleteExpiredRequests(ctx)
		if err != nil {
			t.Fatalf("DeleteExpiredRequests: %v", err)
		}
		deleted += n
		if time.Now().After(deadline) {
			t.Fatalf("DeleteExpiredRequests never deleted the expired record")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if deleted != 1 {
		t.Errorf("DeleteExpiredRequests deleted %d, want 1", deleted)
	}
	for _, key := range []string{"k", "kept"} {
		if _, ok := mustClaimKey(t, s, idemClaim(team, key, "z")); ok {
			t.Errorf("live key %s was deleted", key)
		}
	}
}
