package cache

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/firegate/firegate/internal/testenv"
)

// logRecorder is a slog.Handler that counts messages and forwards records to
// the test log.
type logRecorder struct {
	next slog.Handler
	mu   *sync.Mutex
	msgs map[string]int
}

func newLogRecorder(t *testing.T) (*slog.Logger, func(msg string) int) {
	r := &logRecorder{next: testenv.Logger(t).Handler(), mu: &sync.Mutex{}, msgs: map[string]int{}}
	count := func(msg string) int {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.msgs[msg]
	}
	return slog.New(r), count
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *logRecorder) Handle(ctx context.Context, rec slog.Record) error {
	r.mu.Lock()
	r.msgs[rec.Message]++
	r.mu.Unlock()
	return r.next.Handle(ctx, rec)
}

func (r *logRecorder) WithAttrs(as []slog.Attr) slog.Handler {
	return &logRecorder{next: r.next.WithAttrs(as), mu: r.mu, msgs: r.msgs}
}

func (r *logRecorder) WithGroup(name string) slog.Handler {
	return &logRecorder{next: r.next.WithGroup(name), mu: r.mu, msgs: r.msgs}
}

// fakeBackend is a Cache that fails while fail is set, blocks Gets while
// block is non-nil, and counts the calls that reach it.
type fakeBackend struct {
	calls   atomic.Int64
	fail    atomic.Bool
	block   chan struct{} // when set, Get waits for it to close
	blocked chan struct{} // when set, Get sends on it as it starts waiting
	inner   *Memory
}

var errBackend = errors.New("backend down")

func (f *fakeBackend) Get(ctx context.Context, key string) (Entry, error) {
	f.calls.Add(1)
	if f.block != nil {
		if f.blocked != nil {
			f.blocked <- struct{}{}
		}
		select {
		case <-f.block:
		case <-ctx.Done():
			return Entry{}, ctx.Err()
		}
	}
	if f.fail.Load() {
		return Entry{}, errBackend
	}
	return f.inner.Get(ctx, key)
}

func (f *fakeBackend) Set(ctx context.Context, key string, e Entry, ttl time.Duration) error {
	f.calls.Add(1)
	if f.fail.Load() {
		return errBackend
	}
	return f.inner.Set(ctx, key, e, ttl)
}

// fakeClock is a settable time source.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestResilientBreaker(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	log, logged := newLogRecorder(t)
	backend := &fakeBackend{inner: NewMemory(1 << 20)}
	clock := &fakeClock{now: time.Unix(1000, 0)}
	r := NewResilient(backend, log, ResilientOptions{Backoff: time.Second, MaxBackoff: 3 * time.Second})
	r.now = clock.Now

	if err := r.Set(ctx, "k", Entry{Value: []byte("v")}, 0); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if _, err := r.Get(ctx, "k"); err != nil {
		t.Fatalf("Get while healthy: %v", err)
	}
	if _, err := r.Get(ctx, "absent"); !errors.Is(err, ErrMiss) {
		t.Fatalf("Get of absent key: %v, want ErrMiss", err)
	}
	if !r.Healthy() || logged("cache unavailable") != 0 {
		t.Fatal("a miss opened the breaker")
	}

	backend.fail.Store(true)
	if _, err := r.Get(ctx, "k"); !errors.Is(err, ErrMiss) {
		t.Fatalf("Get with backend down: %v, want ErrMiss", err)
	}
	if r.Healthy() {
		t.Fatal("Healthy after a failure")
	}
	calls := backend.calls.Load()
	for range 100 {
		if _, err := r.Get(ctx, "k"); !errors.Is(err, ErrMiss) {
			t.Fatalf("Get while open: %v, want ErrMiss", err)
		}
		if err := r.Set(ctx, "k", Entry{}, 0); err != nil {
			t.Fatalf("Set while open: %v, want nil", err)
		}
	}
	if got := backend.calls.Load(); got != calls {
		t.Fatalf("%d calls reached the backend during the backoff, want 0", got-calls)
	}

	// Each failed probe doubles the backoff: 1s, 2s, then the 3s cap.
	for _, backoff := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second} {
		clock.Advance(backoff - time.Millisecond)
		_, _ = r.Get(ctx, "k")
		if got := backend.calls.Load(); got != calls {
			t.Fatalf("backend called %v before the %v backoff ended", backoff-time.Millisecond, backoff)
		}
		clock.Advance(time.Millisecond)
		_, _ = r.Get(ctx, "k")
		_, _ = r.Get(ctx, "k")
		if got := backend.calls.Load(); got != calls+1 {
			t.Fatalf("after the %v backoff, %d calls reached the backend, want 1 probe", backoff, got-calls)
		}
		calls++
	}
	if n := logged("cache unavailable"); n != 1 {
		t.Errorf(`"cache unavailable" logged %d times during one outage, want 1`, n)
	}

	backend.fail.Store(false)
	clock.Advance(3 * time.Second)
	if _, err := r.Get(ctx, "k"); err != nil {
		t.Fatalf("Get after recovery: %v", err)
	}
	if !r.Healthy() || logged("cache recovered") != 1 {
		t.Errorf(`after recovery Healthy = %v, "cache recovered" logged %d times; want true, 1`, r.Healthy(), logged("cache recovered"))
	}
	for range 10 {
		if _, err := r.Get(ctx, "k"); err != nil {
			t.Fatalf("Get after recovery: %v", err)
		}
	}
	if got := backend.calls.Load(); got != calls+11 {
		t.Errorf("after recovery %d calls reached the backend, want 11", got-calls)
	}
	if logged("cache recovered") != 1 || logged("cache unavailable") != 1 {
		t.Error("extra breaker logs after recovery")
	}

	// A second outage logs again.
	backend.fail.Store(true)
	_, _ = r.Get(ctx, "k")
	if n := logged("cache unavailable"); n != 2 {
		t.Errorf(`"cache unavailable" logged %d times after a second outage, want 2`, n)
	}
}

func TestResilientSingleProbe(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	backend := &fakeBackend{inner: NewMemory(1 << 20)}
	clock := &fakeClock{now: time.Unix(1000, 0)}
	r := NewResilient(backend, testenv.Logger(t), ResilientOptions{Backoff: time.Second, OpTimeout: time.Minute})
	r.now = clock.Now
	backend.fail.Store(true)
	_ = r.Set(ctx, "k", Entry{}, 0) // opens the breaker
	backend.fail.Store(false)
	clock.Advance(time.Second)

	backend.block, backend.blocked = make(chan struct{}), make(chan struct{}, 1)
	calls := backend.calls.Load()
	probeDone := make(chan error, 1)
	go func() {
		_, err := r.Get(ctx, "k")
		probeDone <- err
	}()
	select {
	case <-backend.blocked:
	case <-time.After(5 * time.Second):
		t.Fatal("probe never reached the backend")
	}
	for range 20 {
		if _, err := r.Get(ctx, "k"); !errors.Is(err, ErrMiss) {
			t.Fatalf("Get during the probe: %v, want ErrMiss", err)
		}
	}
	if got := backend.calls.Load(); got != calls+1 {
		t.Errorf("%d calls reached the backend during a probe, want only the probe", got-calls)
	}
	close(backend.block)
	if err := <-probeDone; !errors.Is(err, ErrMiss) {
		t.Errorf("probe Get: %v, want ErrMiss (key absent)", err)
	}
	if !r.Healthy() {
		t.Error("not healthy after a successful probe")
	}
}

func TestResilientCallerCancelDoesNotOpen(t *testing.T) {
	t.Parallel()
	backend := &fakeBackend{inner: NewMemory(1 << 20), block: make(chan struct{})}
	r := NewResilient(backend, testenv.Logger(t), ResilientOptions{OpTimeout: time.Minute})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := r.Get(ctx, "k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Get with expiring caller ctx: %v, want DeadlineExceeded", err)
	}
	if !r.Healthy() {
		t.Error("the caller's own deadline opened the breaker")
	}
}

func TestResilientOpTimeoutOpens(t *testing.T) {
	t.Parallel()
	backend := &fakeBackend{inner: NewMemory(1 << 20), block: make(chan struct{})}
	r := NewResilient(backend, testenv.Logger(t), ResilientOptions{OpTimeout: 20 * time.Millisecond})
	start := time.Now()
	if _, err := r.Get(t.Context(), "k"); !errors.Is(err, ErrMiss) {
		t.Errorf("Get on a hanging backend: %v, want ErrMiss", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Get on a hanging backend took %v, want about the 20ms OpTimeout", d)
	}
	if r.Healthy() {
		t.Error("a backend timeout did not open the breaker")
	}
}

// deadAddr returns an address nothing listens on (a closed listener's).
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

func TestResilientDeadPort(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	log, logged := newLogRecorder(t)
	opts, err := RedisOptions("redis://" + deadAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	r := NewResilient(NewRedis(client, "test:", log), log, ResilientOptions{Backoff: time.Minute})

	first := time.Now()
	if _, err := r.Get(ctx, "k"); !errors.Is(err, ErrMiss) {
		t.Fatalf("Get on a dead port: %v, want ErrMiss", err)
	}
	firstCost := time.Since(first)
	const n = 10_000
	start := time.Now()
	for range n {
		if _, err := r.Get(ctx, "k"); !errors.Is(err, ErrMiss) {
			t.Fatalf("Get on a dead port: %v, want ErrMiss", err)
		}
		if err := r.Set(ctx, "k", Entry{Value: []byte("v")}, time.Minute); err != nil {
			t.Fatalf("Set on a dead port: %v, want nil", err)
		}
	}
	per := time.Since(start) / (2 * n)
	t.Logf("dead port: first call %v, then %v per call", firstCost, per)
	if per > 50*time.Microsecond {
		t.Errorf("calls with the breaker open cost %v each, want no connection attempt", per)
	}
	if got := logged("cache unavailable"); got != 1 {
		t.Errorf(`"cache unavailable" logged %d times, want 1`, got)
	}
}

// tcpProxy forwards connections to target until Close, which also cuts the
// connections in flight; Open listens again on the same address.
type tcpProxy struct {
	t      *testing.T
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	p := &tcpProxy{t: t, target: target, addr: "127.0.0.1:0", conns: map[net.Conn]struct{}{}}
	p.Open()
	t.Cleanup(p.Close)
	return p
}

func (p *tcpProxy) Open() {
	p.t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatalf("proxy listen %s: %v", p.addr, err)
	}
	p.mu.Lock()
	p.ln = ln
	p.addr = ln.Addr().String()
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Go(func() { p.serve(c) })
		}
	})
}

func (p *tcpProxy) serve(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil {
		p.mu.Unlock()
		_ = c.Close()
		_ = up.Close()
		return
	}
	p.conns[c], p.conns[up] = struct{}{}, struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	_ = c.Close()
	_ = up.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

func (p *tcpProxy) Close() {
	p.mu.Lock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func TestResilientRedisOutageAndRecovery(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	log, logged := newLogRecorder(t)
	direct, prefix := newRedisClient(t)
	proxy := newTCPProxy(t, direct.Options().Addr)
	opts, err := RedisOptions("redis://" + proxy.addr)
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	r := NewResilient(NewRedis(client, prefix, log), log, ResilientOptions{Backoff: 50 * time.Millisecond, MaxBackoff: 100 * time.Millisecond})

	want := Entry{Value: []byte("cached"), CreatedAt: time.Now().UTC()}
	if err := r.Set(ctx, "k", want, time.Minute); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if _, err := r.Get(ctx, "k"); err != nil {
		t.Fatalf("Get through the proxy: %v", err)
	}

	proxy.Close() // Redis "goes away" mid-run
	start := time.Now()
	const n = 2000
	for i := range n {
		if _, err := r.Get(ctx, "k"); !errors.Is(err, ErrMiss) {
			t.Fatalf("Get %d during the outage: %v, want ErrMiss", i, err)
		}
		if err := r.Set(ctx, "k2", want, time.Minute); err != nil {
			t.Fatalf("Set %d during the outage: %v, want nil", i, err)
		}
	}
	elapsed := time.Since(start)
	t.Logf("outage: %d Get+Set pairs in %v", n, elapsed)
	if elapsed > 10*time.Second {
		t.Errorf("%d calls during the outage took %v; the breaker should skip Redis", 2*n, elapsed)
	}
	if r.Healthy() {
		t.Error("Healthy during the outage")
	}
	if got := logged("cache unavailable"); got != 1 {
		t.Errorf(`"cache unavailable" logged %d times, want 1`, got)
	}

	proxy.Open() // Redis is back
	reopened := time.Now()
	var e Entry
	if !testenv.WaitFor(testenv.Patient(5*time.Second), func() bool {
		e, err = r.Get(ctx, "k")
		return err == nil
	}) {
		t.Fatalf("no hit within 5s of Redis coming back: %v", err)
	}
	if string(e.Value) != "cached" || !e.CreatedAt.Equal(want.CreatedAt) {
		t.Errorf("Get after recovery = %q at %v, want %q at %v", e.Value, e.CreatedAt, want.Value, want.CreatedAt)
	}
	t.Logf("recovered after %v", time.Since(reopened))
	if got := logged("cache recovered"); got != 1 {
		t.Errorf(`"cache recovered" logged %d times, want 1`, got)
	}
	if !r.Healthy() {
		t.Error("not Healthy after recovery")
	}
	// Sets reach Redis again.
	if err := r.Set(ctx, "after", want, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := direct.Get(ctx, prefix+"after").Err(); err != nil {
		t.Errorf("Set after recovery did not reach Redis: %v", err)
	}
}
