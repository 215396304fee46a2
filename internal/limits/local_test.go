package limits

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/testenv"
)

func TestLocalContract(t *testing.T) {
	runContract(t, func(t *testing.T) Limiter { return NewLocal() })
}

func TestLocalWindowResets(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	now := time.Unix(1000, 0)
	l := NewLocal()
	l.now = func() time.Time { return now }
	for range 2 {
		if d, _ := l.Allow(ctx, "t", "scrape", 2); !d.Allowed {
			t.Fatal("rejected under the limit")
		}
	}
	now = now.Add(20 * time.Second)
	d, _ := l.Allow(ctx, "t", "scrape", 2)
	if d.Allowed || d.RetryAfter != 40*time.Second || !d.ResetAt.Equal(time.Unix(1060, 0)) {
		t.Errorf("Allow over the limit = %+v, want rejected with RetryAfter 40s", d)
	}
	now = now.Add(40 * time.Second)
	if d, _ := l.Allow(ctx, "t", "scrape", 2); !d.Allowed || d.Consumed != 1 {
		t.Errorf("Allow after the window = %+v, want allowed, consumed 1", d)
	}
}

func TestLocalForgetsIdleTeams(t *testing.T) {
	t.Parallel()
	l := NewLocal()
	release, _, err := l.Acquire(t.Context(), "t", 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if _, _, err := l.Acquire(ctx, "t", 1); !errors.Is(err, ErrConcurrencyTimeout) {
		t.Fatalf("Acquire: %v, want ErrConcurrencyTimeout", err)
	}
	release()
	l.mu.Lock()
	n := len(l.sems)
	l.mu.Unlock()
	if n != 0 {
		t.Errorf("%d semaphores kept after every slot was released", n)
	}
}

// TestLocalGrantRacesCancel releases a slot exactly as the waiter's context
// ends, many times: the slot must never be lost or duplicated.
func TestLocalGrantRacesCancel(t *testing.T) {
	t.Parallel()
	l := NewLocal()
	for range 200 {
		hold, _, err := l.Acquire(t.Context(), "t", 1)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan func(), 1)
		go func() {
			release, _, err := l.Acquire(ctx, "t", 1)
			if err != nil {
				release = func() {}
			}
			done <- release
		}()
		testenv.Eventually(t, 5*time.Second, func() bool {
			n, _ := l.Waiting(t.Context(), "t")
			return n == 1
		}, "the second Acquire never queued")
		go cancel()
		hold()
		(<-done)()
		if n, _ := l.InUse(t.Context(), "t"); n != 0 {
			t.Fatalf("InUse = %d after both released, want 0", n)
		}
	}
}
