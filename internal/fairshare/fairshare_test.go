package fairshare

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func newPool(t *testing.T, slots, perKey int) *Pool {
	t.Helper()
	p, err := New(Config{Slots: slots, MaxPerKey: perKey})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustAcquire(t *testing.T, p *Pool, k string) func() {
	t.Helper()
	rel, ok := p.TryAcquire(k)
	if !ok {
		t.Fatalf("%s: no slot at once (%+v)", k, p.Stats())
	}
	return rel
}

// grants records the order in which background Acquire calls are granted.
type grants struct {
	mu    sync.Mutex
	order []string
	rels  map[string][]func()
}

func (g *grants) wait(t *testing.T, p *Pool, k string) {
	go func() {
		rel, err := p.Acquire(t.Context(), k)
		if err != nil {
			return
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		g.order = append(g.order, k)
		if g.rels == nil {
			g.rels = map[string][]func(){}
		}
		g.rels[k] = append(g.rels[k], rel)
	}()
}

func (g *grants) got() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return fmt.Sprint(g.order)
}

// release gives back the first slot granted to k in the background.
func (g *grants) release(k string) {
	g.mu.Lock()
	rel := g.rels[k][0]
	g.rels[k] = g.rels[k][1:]
	g.mu.Unlock()
	rel()
}

func TestNewRejects(t *testing.T) {
	for _, c := range []Config{{Slots: 0}, {Slots: -1}, {Slots: 2, MaxPerKey: -1}} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v): no error", c)
		}
	}
	p := newPool(t, 3, 5)
	if s := p.Stats(); s.MaxPerKey != 3 {
		t.Errorf("MaxPerKey above Slots: %+v, want 3", s)
	}
}

// TestIdleSlotsAreUsed: one key alone takes every slot, then waits.
func TestIdleSlotsAreUsed(t *testing.T) {
	p := newPool(t, 3, 0)
	for range 3 {
		mustAcquire(t, p, "a")
	}
	if _, ok := p.TryAcquire("a"); ok {
		t.Fatal("a fourth slot of three")
	}
	if s := p.Stats(); s.InUse != 3 || s.Waiting != 0 || s.Keys != 1 {
		t.Fatalf("stats %+v", s)
	}
}

// TestWaitingKeyGoesFirst: a key that holds nothing gets the next free
// slot before the waiters of the key holding every slot, though they
// came first; then the keys take turns.
func TestWaitingKeyGoesFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, 2, 0)
		a1, a2 := mustAcquire(t, p, "a"), mustAcquire(t, p, "a")
		var g grants
		g.wait(t, p, "a")
		synctest.Wait()
		g.wait(t, p, "a")
		synctest.Wait()
		g.wait(t, p, "b")
		synctest.Wait()
		if got := g.got(); got != "[]" {
			t.Fatalf("granted %s with no slot free", got)
		}
		a1()
		synctest.Wait()
		if got := g.got(); got != "[b]" {
			t.Fatalf("after one release: %s, want [b]", got)
		}
		a2()
		synctest.Wait()
		if got := g.got(); got != "[b a]" {
			t.Fatalf("after two releases: %s, want [b a]", got)
		}
		if h, w := p.Held("a"); h != 1 || w != 1 {
			t.Fatalf("a holds %d, waits %d", h, w)
		}
		g.release("b")
		synctest.Wait()
		if got := g.got(); got != "[b a a]" {
			t.Fatalf("after b's release: %s", got)
		}
	})
}

// TestRoundRobin: keys holding as many slots are served in turn, each
// key's own waiters in their order.
func TestRoundRobin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, 1, 0)
		hold := mustAcquire(t, p, "x")
		var g grants
		for _, k := range []string{"a", "a", "b", "c", "b"} {
			g.wait(t, p, k)
			synctest.Wait()
		}
		hold()
		synctest.Wait()
		for range 4 {
			k := g.order[len(g.order)-1]
			g.release(k)
			synctest.Wait()
		}
		if got := g.got(); got != "[a b c a b]" {
			t.Fatalf("order %s, want [a b c a b]", got)
		}
	})
}

// TestMaxPerKeyKeepsRoom: with one key saturating a pool whose MaxPerKey
// is below its slots, another key's first Acquire is granted at once.
func TestMaxPerKeyKeepsRoom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, 4, 3)
		var g grants
		for range 6 {
			g.wait(t, p, "a")
		}
		synctest.Wait()
		if h, w := p.Held("a"); h != 3 || w != 3 {
			t.Fatalf("a holds %d, waits %d; want 3, 3", h, w)
		}
		rel := mustAcquire(t, p, "b")
		if _, ok := p.TryAcquire("c"); ok {
			t.Fatal("c got a fifth slot of four")
		}
		rel()
		synctest.Wait()
		// The freed slot is not a's (at its cap): it stays for another key.
		if s := p.Stats(); s.InUse != 3 {
			t.Fatalf("stats %+v, want 3 in use", s)
		}
		mustAcquire(t, p, "c")
	})
}

// TestCancelWhileWaiting: a waiter whose context ends holds nothing and
// is forgotten; the slot goes to the next waiter.
func TestCancelWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, 1, 0)
		hold := mustAcquire(t, p, "a")
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		errc := make(chan error, 1)
		go func() {
			_, err := p.Acquire(ctx, "b")
			errc <- err
		}()
		var g grants
		synctest.Wait()
		g.wait(t, p, "c")
		synctest.Wait()
		if err := <-errc; !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire: %v, want the deadline", err)
		}
		if h, w := p.Held("b"); h != 0 || w != 0 {
			t.Fatalf("b holds %d, waits %d after its context ended", h, w)
		}
		hold()
		synctest.Wait()
		if got := g.got(); got != "[c]" {
			t.Fatalf("granted %s, want [c]", got)
		}
		if _, err := p.Acquire(ctx, "d"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire with an ended context: %v", err)
		}
	})
}

// TestReleaseOnce: a second call of a release function gives nothing back.
func TestReleaseOnce(t *testing.T) {
	p := newPool(t, 2, 0)
	rel := mustAcquire(t, p, "a")
	mustAcquire(t, p, "a")
	rel()
	rel()
	if s := p.Stats(); s.InUse != 1 {
		t.Fatalf("stats %+v, want 1 in use", s)
	}
	mustAcquire(t, p, "b")
	if _, ok := p.TryAcquire("b"); ok {
		t.Fatal("a third slot of two after a double release")
	}
}

// TestConcurrent: under load from many goroutines (and contexts ending),
// no more than Slots are held, no key holds more than MaxPerKey, and
// everything is given back.
func TestConcurrent(t *testing.T) {
	const slots, perKey = 4, 3
	p := newPool(t, slots, perKey)
	var inUse atomic.Int32
	var perKeyUse [5]atomic.Int32
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 1))
			for range 200 {
				k := r.IntN(len(perKeyUse))
				ctx, cancel := context.WithCancel(t.Context())
				if r.IntN(8) == 0 {
					cancel()
				}
				rel, err := p.Acquire(ctx, fmt.Sprint(k))
				cancel()
				if err != nil {
					continue
				}
				if n := inUse.Add(1); n > slots {
					t.Errorf("%d slots in use", n)
				}
				if n := perKeyUse[k].Add(1); n > perKey {
					t.Errorf("key %d holds %d", k, n)
				}
				perKeyUse[k].Add(-1)
				inUse.Add(-1)
				rel()
			}
		}()
	}
	wg.Wait()
	if s := p.Stats(); s.InUse != 0 || s.Waiting != 0 || s.Keys != 0 {
		t.Fatalf("after: %+v", s)
	}
}
