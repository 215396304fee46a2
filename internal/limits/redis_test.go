package limits

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/firegate/firegate/internal/testenv"
)

// newClient returns a client of url honouring context deadlines, closed at
// the end of the test.
func newClient(t *testing.T, url string) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	opts.ContextTimeoutEnabled = true
	opts.DialTimeout = time.Second
	opts.DialerRetries = 1
	opts.MaxRetries = -1
	client := redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	return client
}

// newPrefix returns a fresh key prefix whose keys are deleted at the end of
// the test.
func newPrefix(t *testing.T, client *redis.Client) string {
	t.Helper()
	prefix := "test:limits:" + strings.ToLower(rand.Text()) + ":"
	t.Cleanup(func() {
		ctx := context.WithoutCancel(t.Context())
		iter := client.Scan(ctx, 0, prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			client.Del(ctx, iter.Val())
		}
	})
	return prefix
}

func TestRedisContract(t *testing.T) {
	url := testenv.RedisURL(t)
	runContract(t, func(t *testing.T) Limiter {
		client := newClient(t, url)
		return NewRedis(client, newPrefix(t, client), testenv.Logger(t), RedisOptions{})
	})
}

// TestTwoInstancesShareConcurrency runs 50 callers through two limiters on
// the same Redis (two server replicas): together they never exceed the limit.
func TestTwoInstancesShareConcurrency(t *testing.T) {
	t.Parallel()
	url := testenv.RedisURL(t)
	a, b := newClient(t, url), newClient(t, url)
	prefix := newPrefix(t, a)
	la := NewRedis(a, prefix, testenv.Logger(t), RedisOptions{})
	lb := NewRedis(b, prefix, testenv.Logger(t), RedisOptions{})
	team := uuid.NewString()
	const limit = 4
	peak, queued := holdConcurrently(t, []Limiter{la, lb}, team, limit, 50)
	if peak > limit {
		t.Errorf("peak concurrency over two instances %d exceeds the limit %d", peak, limit)
	}
	if queued == 0 {
		t.Error("no caller queued")
	}

	// Each instance sees the other's slots.
	release, _ := mustAcquire(t, la, team, limit)
	checkCount(t, "InUse on the other instance", lb.InUse, team, 1)
	release()
	checkCount(t, "InUse on the other instance", lb.InUse, team, 0)
}

func TestTwoInstancesShareRateLimit(t *testing.T) {
	t.Parallel()
	url := testenv.RedisURL(t)
	a, b := newClient(t, url), newClient(t, url)
	prefix := newPrefix(t, a)
	ls := []Limiter{
		NewRedis(a, prefix, testenv.Logger(t), RedisOptions{}),
		NewRedis(b, prefix, testenv.Logger(t), RedisOptions{}),
	}
	team := uuid.NewString()
	var (
		mu      sync.Mutex
		allowed int
		wg      sync.WaitGroup
	)
	for i := range 30 {
		wg.Go(func() {
			d, err := ls[i%2].Allow(t.Context(), team, "scrape", 10)
			if err != nil {
				t.Errorf("Allow: %v", err)
				return
			}
			if d.Allowed {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if allowed != 10 {
		t.Errorf("%d of 30 requests allowed over two instances, want 10", allowed)
	}
	d, err := ls[1].Allow(t.Context(), team, "scrape", 10)
	if err != nil || d.Allowed || d.Consumed != 10 || d.RetryAfter <= 0 {
		t.Errorf("Allow after the limit = %+v, %v; want rejected, consumed 10", d, err)
	}
}

// TestCrashedReplicaSlotsExpire leaves a lease and a queued caller behind as
// a crashed replica would (no renewal, no release, no polling): they must
// stop counting once their TTLs pass.
func TestCrashedReplicaSlotsExpire(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	client := newClient(t, testenv.RedisURL(t))
	prefix := newPrefix(t, client)
	opts := RedisOptions{LeaseTTL: 300 * time.Millisecond, QueueTTL: 300 * time.Millisecond}
	crashed := NewRedis(client, prefix, testenv.Logger(t), opts)
	team := uuid.NewString()
	keys := crashed.keys(team)

	// The crashed replica's holder: a lease nobody renews.
	if _, _, err := crashed.Acquire(ctx, team, 1); err != nil {
		t.Fatal(err)
	}
	// Stop its renewal by dropping the lease and re-adding it without a
	// holder, expiring in 300ms.
	tm, err := client.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	ghost := float64(tm.Add(300 * time.Millisecond).UnixMilli())
	if err := client.Del(ctx, keys[0]).Err(); err != nil {
		t.Fatal(err)
	}
	if err := client.ZAdd(ctx, keys[0], redis.Z{Score: ghost, Member: "ghost-holder"}).Err(); err != nil {
		t.Fatal(err)
	}
	// The crashed replica's waiter: first in the queue, never polls again.
	if err := client.ZAdd(ctx, keys[1], redis.Z{Score: 0, Member: "ghost-waiter"}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := client.ZAdd(ctx, keys[2], redis.Z{Score: ghost, Member: "ghost-waiter"}).Err(); err != nil {
		t.Fatal(err)
	}

	survivor := NewRedis(client, prefix, testenv.Logger(t), opts)
	start := time.Now()
	release, waited, err := survivor.Acquire(bounded(t, 5*time.Second), team, 1)
	if err != nil {
		t.Fatalf("Acquire behind a crashed replica's slot: %v", err)
	}
	defer release()
	elapsed := time.Since(start)
	t.Logf("slot of a crashed replica freed after %v", elapsed)
	if waited <= 0 || elapsed < 200*time.Millisecond || elapsed > 5*time.Second {
		t.Errorf("Acquire took %v (waited %v), want about the 300ms TTL", elapsed, waited)
	}
	checkCount(t, "Waiting", survivor.Waiting, team, 0)
}

// TestLeaseRenewed holds a slot for several lease TTLs: renewal keeps it.
func TestLeaseRenewed(t *testing.T) {
	t.Parallel()
	client := newClient(t, testenv.RedisURL(t))
	prefix := newPrefix(t, client)
	l := NewRedis(client, prefix, testenv.Logger(t), RedisOptions{LeaseTTL: 150 * time.Millisecond})
	team := uuid.NewString()
	release, _ := mustAcquire(t, l, team, 1)
	_, _, err := l.Acquire(bounded(t, 600*time.Millisecond), team, 1)
	if !errors.Is(err, ErrConcurrencyTimeout) {
		t.Errorf("second Acquire while the first is held for 4 TTLs: %v, want ErrConcurrencyTimeout", err)
	}
	checkCount(t, "InUse", l.InUse, team, 1)
	release()
	checkCount(t, "InUse after release", l.InUse, team, 0)
}

// countingHandler counts log messages and forwards them to the test log.
type countingHandler struct {
	slog.Handler
	mu   *sync.Mutex
	msgs map[string]int
}

func (h countingHandler) Handle(ctx context.Context, r slog.Record) error {
	h.mu.Lock()
	h.msgs[r.Message]++
	h.mu.Unlock()
	return h.Handler.Handle(ctx, r)
}

func TestRedisDownFallsBackToLocal(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	client := newClient(t, "redis://"+addr)
	h := countingHandler{Handler: testenv.Logger(t).Handler(), mu: &sync.Mutex{}, msgs: map[string]int{}}
	l := NewRedis(client, "test:", slog.New(h), RedisOptions{Backoff: time.Minute})
	team := uuid.NewString()

	release, waited := mustAcquire(t, l, team, 1)
	if waited != 0 {
		t.Errorf("fallback Acquire waited %v", waited)
	}
	if _, _, err := l.Acquire(bounded(t, 20*time.Millisecond), team, 1); !errors.Is(err, ErrConcurrencyTimeout) {
		t.Errorf("fallback still limits: got %v, want ErrConcurrencyTimeout", err)
	}
	checkCount(t, "InUse", l.InUse, team, 1)
	release()
	for i := 1; i <= 3; i++ {
		d, err := l.Allow(t.Context(), team, "scrape", 2)
		if err != nil || d.Allowed != (i <= 2) {
			t.Errorf("fallback Allow %d = %+v, %v", i, d, err)
		}
	}
	h.mu.Lock()
	n := h.msgs["limits unavailable"]
	h.mu.Unlock()
	if n != 1 {
		t.Errorf(`"limits unavailable" logged %d times, want 1`, n)
	}
}
