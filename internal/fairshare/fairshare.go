// Package fairshare shares a fixed number of slots (code runners, browser
// tabs) between keys (teams), so that no key can starve the others.
//
// The rules:
//   - A key takes a free slot at once when no other key is waiting for
//     one: it may use what the others leave idle, up to MaxPerKey slots.
//   - When a slot is freed and keys are waiting, it goes to the waiting
//     key that holds the fewest slots; among those that hold as many, to
//     the one served least recently (round-robin). A key that already
//     holds its share therefore waits behind one that holds less, keys
//     that hold as many take turns, and the waiters of one key are served
//     in their order of arrival.
//   - MaxPerKey below Slots keeps Slots-MaxPerKey slots that one key can
//     never take: a key that holds none gets one of them at once however
//     busy another key keeps the rest (at the cost of their being idle
//     while only one key works).
//
// Acquire waits until it is granted a slot or its context ends; the
// release function it returns gives the slot back (once; further calls do
// nothing). A Pool is safe for concurrent use.
package fairshare

import (
	"context"
	"fmt"
	"sync"
)

// Config sizes a Pool.
type Config struct {
	// Slots is how many slots exist (at least 1).
	Slots int
	// MaxPerKey is the most one key holds at once; 0 (or more than Slots)
	// = Slots.
	MaxPerKey int
}

// Pool is a set of slots shared between keys.
type Pool struct {
	slots, perKey int

	mu   sync.Mutex
	free int
	keys map[string]*key // keys holding or waiting for a slot
	seq  uint64          // grants and arrivals of keys so far
}

// key is one key's state; it is dropped when it holds and waits for
// nothing.
type key struct {
	name   string
	held   int
	queue  []*waiter // waiting, in order of arrival
	served uint64    // seq of its last grant, or of its arrival
}

// waiter is one Acquire waiting; granted is closed when it holds a slot.
type waiter struct {
	granted chan struct{}
	done    bool // granted (p.mu)
}

// New returns a Pool of cfg.Slots slots.
func New(cfg Config) (*Pool, error) {
	if cfg.Slots < 1 {
		return nil, fmt.Errorf("fairshare: %d slots, want at least 1", cfg.Slots)
	}
	if cfg.MaxPerKey < 0 {
		return nil, fmt.Errorf("fairshare: MaxPerKey %d is negative", cfg.MaxPerKey)
	}
	per := cfg.MaxPerKey
	if per == 0 || per > cfg.Slots {
		per = cfg.Slots
	}
	return &Pool{slots: cfg.Slots, perKey: per, free: cfg.Slots, keys: map[string]*key{}}, nil
}

// Acquire waits for a slot for k and returns the function that gives it
// back, or ctx's error (holding nothing) when ctx ends first.
func (p *Pool) Acquire(ctx context.Context, k string) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	st, w := p.enqueue(k)
	p.mu.Unlock()

	select {
	case <-w.granted:
		return p.releaser(st), nil
	case <-ctx.Done():
	}
	p.mu.Lock()
	if w.done {
		// Granted as ctx ended: give it back.
		p.mu.Unlock()
		p.releaser(st)()
		return nil, ctx.Err()
	}
	p.withdraw(st, w)
	p.mu.Unlock()
	return nil, ctx.Err()
}

// TryAcquire takes a slot for k only when Acquire would be granted one at
// once (a free slot and k below MaxPerKey).
func (p *Pool) TryAcquire(k string) (release func(), ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, w := p.enqueue(k)
	if !w.done {
		p.withdraw(st, w)
		return nil, false
	}
	return p.releaser(st), true
}

// enqueue adds a waiter for k and grants what can be (p.mu held).
func (p *Pool) enqueue(k string) (*key, *waiter) {
	st := p.keys[k]
	if st == nil {
		p.seq++
		st = &key{name: k, served: p.seq}
		p.keys[k] = st
	}
	w := &waiter{granted: make(chan struct{})}
	st.queue = append(st.queue, w)
	p.dispatch()
	return st, w
}

// withdraw removes w, not granted, from the waiters of st (p.mu held).
// Nothing else becomes grantable: a free slot has no waiter it could go
// to, and removing one changes no other key's eligibility.
func (p *Pool) withdraw(st *key, w *waiter) {
	for i, q := range st.queue {
		if q == w {
			st.queue = append(st.queue[:i], st.queue[i+1:]...)
			break
		}
	}
	p.forget(st)
}

// releaser returns the release function of one slot held by st.
func (p *Pool) releaser(st *key) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			st.held--
			p.free++
			p.dispatch()
			p.forget(st)
		})
	}
}

// dispatch grants free slots to waiting keys, the one holding the fewest
// (then served least recently) first (p.mu held).
func (p *Pool) dispatch() {
	for p.free > 0 {
		var next *key
		for _, st := range p.keys {
			if len(st.queue) == 0 || st.held >= p.perKey {
				continue
			}
			if next == nil || st.held < next.held || (st.held == next.held && st.served < next.served) {
				next = st
			}
		}
		if next == nil {
			return
		}
		w := next.queue[0]
		next.queue[0] = nil
		next.queue = next.queue[1:]
		next.held++
		p.free--
		p.seq++
		next.served = p.seq
		w.done = true
		close(w.granted)
	}
}

// forget drops st when it holds and waits for nothing (p.mu held).
func (p *Pool) forget(st *key) {
	if st.held == 0 && len(st.queue) == 0 && p.keys[st.name] == st {
		delete(p.keys, st.name)
	}
}

// Stats is a Pool's state at one moment.
type Stats struct {
	Slots, MaxPerKey int
	InUse            int // slots held
	Waiting          int // Acquire calls waiting
	Keys             int // keys holding or waiting
}

// Stats returns the pool's state.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := Stats{Slots: p.slots, MaxPerKey: p.perKey, InUse: p.slots - p.free, Keys: len(p.keys)}
	for _, st := range p.keys {
		s.Waiting += len(st.queue)
	}
	return s
}

// Held returns how many slots k holds and how many of its Acquire calls
// wait.
func (p *Pool) Held(k string) (held, waiting int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st := p.keys[k]; st != nil {
		return st.held, len(st.queue)
	}
	return 0, 0
}
