package cache

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestMemoryContract(t *testing.T) {
	runContract(t, func(t *testing.T) Cache { return NewMemory(64 << 20) })
}

func TestMemoryEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	value := make([]byte, 1000)
	size := int64(len("k0")+len(value)) + entryOverhead
	m := NewMemory(3 * size)
	set := func(key string) {
		t.Helper()
		if err := m.Set(ctx, key, Entry{Value: value}, 0); err != nil {
			t.Fatalf("Set(%q): %v", key, err)
		}
	}
	has := func(key string) bool {
		_, err := m.Get(ctx, key)
		return err == nil
	}
	set("k0")
	set("k1")
	set("k2")
	has("k0") // k0 is now more recent than k1
	set("k3") // evicts k1
	for key, want := range map[string]bool{"k0": true, "k1": false, "k2": true, "k3": true} {
		if got := has(key); got != want {
			t.Errorf("after eviction, present(%s) = %v, want %v", key, got, want)
		}
	}
	if m.Len() != 3 || m.Bytes() != 3*size {
		t.Errorf("Len, Bytes = %d, %d; want 3, %d", m.Len(), m.Bytes(), 3*size)
	}
}

func TestMemoryOversizedEntryNotStored(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	m := NewMemory(1000)
	if err := m.Set(ctx, "small", Entry{Value: []byte("x")}, 0); err != nil {
		t.Fatal(err)
	}
	if err := m.Set(ctx, "small", Entry{Value: make([]byte, 2000)}, 0); err != nil {
		t.Fatal(err)
	}
	// The oversized value replaced nothing: the old one is gone too, as a
	// cache must never serve a value older than the last Set.
	if _, err := m.Get(ctx, "small"); !errors.Is(err, ErrMiss) {
		t.Errorf("Get after oversized Set: %v, want ErrMiss", err)
	}
	if m.Len() != 0 || m.Bytes() != 0 {
		t.Errorf("Len, Bytes = %d, %d; want 0, 0", m.Len(), m.Bytes())
	}
	if err := NewMemory(0).Set(ctx, "k", Entry{Value: []byte("v")}, 0); err != nil {
		t.Errorf("Set on a zero-size cache: %v", err)
	}
}

func TestMemoryExpiryWithClock(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	now := time.Unix(1000, 0)
	m := NewMemory(1 << 20)
	m.now = func() time.Time { return now }
	if err := m.Set(ctx, "k", Entry{Value: []byte("v")}, time.Minute); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute - time.Nanosecond)
	if _, err := m.Get(ctx, "k"); err != nil {
		t.Fatalf("Get just before expiry: %v", err)
	}
	now = now.Add(time.Nanosecond)
	if _, err := m.Get(ctx, "k"); !errors.Is(err, ErrMiss) {
		t.Fatalf("Get at expiry: %v, want ErrMiss", err)
	}
	if m.Len() != 0 || m.Bytes() != 0 {
		t.Errorf("expired entry kept: Len, Bytes = %d, %d", m.Len(), m.Bytes())
	}
}

func TestMemoryConcurrentBound(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	const maxBytes = 50_000
	m := NewMemory(maxBytes)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				key := fmt.Sprintf("k%d", (g*500+i)%300)
				_ = m.Set(ctx, key, Entry{Value: make([]byte, i%700)}, time.Minute)
				_, _ = m.Get(ctx, fmt.Sprintf("k%d", i%300))
			}
		})
	}
	wg.Wait()
	if b := m.Bytes(); b > maxBytes || b < 0 {
		t.Errorf("Bytes = %d, want within [0, %d]", b, maxBytes)
	}
}
