package limits

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/testenv"
)

// runContract runs the behaviour every Limiter must have. newLimiter returns
// a limiter with no state, used by one subtest only.
func runContract(t *testing.T, newLimiter func(t *testing.T) Limiter) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, l Limiter)
	}{
		{"AcquireUpToLimit", testAcquireUpToLimit},
		{"Unlimited", testUnlimited},
		{"ReleaseIdempotent", testReleaseIdempotent},
		{"QueueIsFIFO", testQueueIsFIFO},
		{"ConcurrencyNeverExceeded", testConcurrencyNeverExceeded},
		{"TeamsIndependent", testTeamsIndependent},
		{"CanceledBeforeAcquire", testCanceledBeforeAcquire},
		{"Allow", testAllow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newLimiter(t))
		})
	}
}

// bounded returns a context ending after d (and with the test).
func bounded(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

func mustAcquire(t *testing.T, l Limiter, team string, limit int) (func(), time.Duration) {
	t.Helper()
	release, waited, err := l.Acquire(bounded(t, 5*time.Second), team, limit)
	if err != nil {
		t.Fatalf("Acquire(%s, %d): %v", team, limit, err)
	}
	return release, waited
}

func checkCount(t *testing.T, what string, get func(context.Context, string) (int, error), team string, want int) {
	t.Helper()
	got, err := get(t.Context(), team)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got != want {
		t.Errorf("%s = %d, want %d", what, got, want)
	}
}

// waitCount waits until get returns want, failing after 5 seconds.
func waitCount(t *testing.T, what string, get func(context.Context, string) (int, error), team string, want int) {
	t.Helper()
	got := -1
	if !testenv.WaitFor(testenv.Patient(5*time.Second), func() bool {
		var err error
		if got, err = get(t.Context(), team); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return got == want
	}) {
		t.Fatalf("%s = %d after 5s, want %d", what, got, want)
	}
}

func testAcquireUpToLimit(t *testing.T, l Limiter) {
	team := uuid.NewString()
	var releases []func()
	for i := range 3 {
		release, waited := mustAcquire(t, l, team, 3)
		if waited != 0 {
			t.Errorf("Acquire %d under the limit waited %v, want 0", i, waited)
		}
		releases = append(releases, release)
	}
	checkCount(t, "InUse", l.InUse, team, 3)

	start := time.Now()
	_, waited, err := l.Acquire(bounded(t, 50*time.Millisecond), team, 3)
	if !errors.Is(err, ErrConcurrencyTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire over the limit: %v, want ErrConcurrencyTimeout and DeadlineExceeded", err)
	}
	if elapsed := time.Since(start); elapsed < 40*time.Millisecond || elapsed > 5*time.Second {
		t.Errorf("Acquire over the limit returned after %v, want about the 50ms deadline", elapsed)
	}
	if waited <= 0 {
		t.Errorf("timed out Acquire reported waited %v, want > 0", waited)
	}
	checkCount(t, "Waiting after a timeout", l.Waiting, team, 0)
	checkCount(t, "InUse after a timeout", l.InUse, team, 3)

	releases[0]()
	checkCount(t, "InUse after a release", l.InUse, team, 2)
	release, waited := mustAcquire(t, l, team, 3)
	if waited != 0 {
		t.Errorf("Acquire after a release waited %v, want 0", waited)
	}
	release()
	for _, r := range releases[1:] {
		r()
	}
	checkCount(t, "InUse after all releases", l.InUse, team, 0)
}

func testUnlimited(t *testing.T, l Limiter) {
	team := uuid.NewString()
	for range 100 {
		release, waited := mustAcquire(t, l, team, 0)
		if waited != 0 {
			t.Fatalf("unlimited Acquire waited %v", waited)
		}
		defer release()
	}
}

func testReleaseIdempotent(t *testing.T, l Limiter) {
	team := uuid.NewString()
	a, _ := mustAcquire(t, l, team, 2)
	b, _ := mustAcquire(t, l, team, 2)
	a()
	a()
	checkCount(t, "InUse after a double release", l.InUse, team, 1)
	b()
	checkCount(t, "InUse", l.InUse, team, 0)
}

func testQueueIsFIFO(t *testing.T, l Limiter) {
	team := uuid.NewString()
	first, _ := mustAcquire(t, l, team, 1)
	const n = 5
	var (
		mu    sync.Mutex
		order []int
		wg    sync.WaitGroup
	)
	releases := make(chan func(), n)
	for i := range n {
		wg.Go(func() {
			release, waited, err := l.Acquire(bounded(t, 10*time.Second), team, 1)
			if err != nil {
				t.Errorf("waiter %d: %v", i, err)
				return
			}
			if waited <= 0 {
				t.Errorf("waiter %d: waited %v, want > 0", i, waited)
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			releases <- release
		})
		// Queue the waiters one after the other.
		waitCount(t, "Waiting", l.Waiting, team, i+1)
	}
	first()
	for range n {
		select {
		case release := <-releases:
			checkCount(t, "InUse while one waiter holds the slot", l.InUse, team, 1)
			release()
		case <-time.After(10 * time.Second):
			t.Fatal("a waiter was not granted within 10s of a release")
		}
	}
	wg.Wait()
	if fmt.Sprint(order) != "[0 1 2 3 4]" {
		t.Errorf("grant order = %v, want arrival order [0 1 2 3 4]", order)
	}
}

// holdConcurrently has callers goroutines acquire a slot of team from
// limiters (round robin) and release it, and returns the highest number of
// simultaneous holders seen and how many calls queued. The first holders
// keep their slots until the limit is taken and a caller queues behind
// them (or 10 s pass: a limiter that never queues shows in the peak); the
// rest release at once, racing each other's grants.
func holdConcurrently(t *testing.T, limiters []Limiter, team string, limit, callers int) (peak, queued int) {
	t.Helper()
	var (
		holding, maxHolding, waitedCount atomic.Int64
		wg                               sync.WaitGroup
	)
	gate := make(chan struct{})
	start := time.Now()
	for i := range callers {
		l := limiters[i%len(limiters)]
		wg.Go(func() {
			release, waited, err := l.Acquire(bounded(t, 20*time.Second), team, limit)
			if err != nil {
				t.Errorf("caller %d: %v", i, err)
				return
			}
			if waited > 0 {
				waitedCount.Add(1)
			}
			n := holding.Add(1)
			for {
				m := maxHolding.Load()
				if n <= m || maxHolding.CompareAndSwap(m, n) {
					break
				}
			}
			<-gate
			holding.Add(-1)
			release()
		})
	}
	full := testenv.WaitFor(testenv.Patient(10*time.Second), func() bool {
		n, err := limiters[0].Waiting(t.Context(), team)
		return err == nil && n > 0 && holding.Load() >= int64(limit)
	})
	close(gate)
	wg.Wait()
	if !full {
		t.Errorf("the limit of %d was never held with a caller queued (peak %d)", limit, maxHolding.Load())
	}
	t.Logf("%d callers, limit %d, %d limiters: done in %v, peak %d, %d queued", callers, limit, len(limiters), time.Since(start), maxHolding.Load(), waitedCount.Load())
	return int(maxHolding.Load()), int(waitedCount.Load())
}

func testConcurrencyNeverExceeded(t *testing.T, l Limiter) {
	team := uuid.NewString()
	const limit = 5
	peak, queued := holdConcurrently(t, []Limiter{l}, team, limit, 50)
	if peak > limit {
		t.Errorf("peak concurrency %d exceeds the limit %d", peak, limit)
	}
	if queued == 0 {
		t.Error("no caller of 50 queued behind a limit of 5")
	}
	checkCount(t, "InUse at the end", l.InUse, team, 0)
	checkCount(t, "Waiting at the end", l.Waiting, team, 0)
}

func testTeamsIndependent(t *testing.T, l Limiter) {
	a, b := uuid.NewString(), uuid.NewString()
	ra, _ := mustAcquire(t, l, a, 1)
	defer ra()
	rb, waited := mustAcquire(t, l, b, 1)
	defer rb()
	if waited != 0 {
		t.Errorf("team b waited %v behind team a", waited)
	}
}

func testCanceledBeforeAcquire(t *testing.T, l Limiter) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, err := l.Acquire(ctx, uuid.NewString(), 1); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire with canceled ctx: %v, want context.Canceled", err)
	}
}

func testAllow(t *testing.T, l Limiter) {
	ctx := t.Context()
	team, other := uuid.NewString(), uuid.NewString()
	for i := 1; i <= 3; i++ {
		d, err := l.Allow(ctx, team, "scrape", 3)
		if err != nil {
			t.Fatalf("Allow: %v", err)
		}
		if !d.Allowed || d.Consumed != i || d.Remaining != 3-i || d.Limit != 3 || d.RetryAfter != 0 {
			t.Errorf("Allow %d = %+v, want allowed, consumed %d, remaining %d", i, d, i, 3-i)
		}
		if until := time.Until(d.ResetAt); until <= 0 || until > Window+time.Second {
			t.Errorf("Allow %d ResetAt in %v, want within a minute", i, until)
		}
	}
	for range 2 {
		d, err := l.Allow(ctx, team, "scrape", 3)
		if err != nil {
			t.Fatalf("Allow: %v", err)
		}
		if d.Allowed || d.Consumed != 3 || d.Remaining != 0 {
			t.Errorf("Allow over the limit = %+v, want rejected, consumed 3, remaining 0", d)
		}
		if d.RetryAfter <= 0 || d.RetryAfter > Window {
			t.Errorf("RetryAfter = %v, want within (0, 1m]", d.RetryAfter)
		}
	}
	for _, c := range []struct{ team, class string }{{team, "crawl"}, {other, "scrape"}} {
		if d, err := l.Allow(ctx, c.team, c.class, 3); err != nil || !d.Allowed || d.Consumed != 1 {
			t.Errorf("Allow(%s) = %+v, %v; want a fresh window", c.class, d, err)
		}
	}
	for range 10 {
		if d, err := l.Allow(ctx, team, "status", 0); err != nil || !d.Allowed {
			t.Fatalf("unlimited Allow = %+v, %v", d, err)
		}
	}
}
