package limits

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"time"
)

// sweepEvery is how many Allow calls pass between sweeps of ended windows.
const sweepEvery = 1024

// Local is a Limiter in process memory: the limits of one node. It is safe
// for concurrent use.
type Local struct {
	now func() time.Time

	mu      sync.Mutex
	sems    map[string]*semaphore
	windows map[string]*window
	calls   int
}

// semaphore is one team's slots: held counts the granted ones, waiters
// queues the others in arrival order.
type semaphore struct {
	held    int
	limit   int
	waiters list.List // of *waiter
}

type waiter struct {
	ready   chan struct{} // closed when granted
	granted bool
}

// window is one fixed rate limit window, starting at the first request.
type window struct {
	count int
	ends  time.Time
}

var _ Limiter = (*Local)(nil)

// NewLocal returns a limiter with no slot held and no request counted.
func NewLocal() *Local {
	return &Local{now: time.Now, sems: map[string]*semaphore{}, windows: map[string]*window{}}
}

// Acquire takes a slot of the team, queueing in arrival order while all
// limit slots are held.
func (l *Local) Acquire(ctx context.Context, teamID string, limit int) (func(), time.Duration, error) {
	if limit <= 0 {
		return func() {}, 0, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, fmt.Errorf("limits: acquire: %w", err)
	}
	l.mu.Lock()
	s := l.sems[teamID]
	if s == nil {
		s = &semaphore{}
		l.sems[teamID] = s
	}
	s.limit = limit
	if s.held < limit && s.waiters.Len() == 0 {
		s.held++
		l.mu.Unlock()
		return l.releaser(teamID, s), 0, nil
	}
	w := &waiter{ready: make(chan struct{})}
	el := s.waiters.PushBack(w)
	l.mu.Unlock()

	start := l.now()
	select {
	case <-w.ready:
		return l.releaser(teamID, s), max(l.now().Sub(start), time.Nanosecond), nil
	case <-ctx.Done():
	}
	l.mu.Lock()
	if w.granted {
		// Granted as ctx ended: hand the slot on.
		l.releaseLocked(teamID, s)
	} else {
		s.waiters.Remove(el)
		l.dropIfIdleLocked(teamID, s)
	}
	l.mu.Unlock()
	return nil, l.now().Sub(start), fmt.Errorf("limits: acquire: %w: %w", ErrConcurrencyTimeout, ctx.Err())
}

func (l *Local) releaser(teamID string, s *semaphore) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			l.releaseLocked(teamID, s)
			l.mu.Unlock()
		})
	}
}

// releaseLocked frees one slot and grants free slots to the first waiters.
func (l *Local) releaseLocked(teamID string, s *semaphore) {
	s.held--
	for s.held < s.limit && s.waiters.Len() > 0 {
		w := s.waiters.Remove(s.waiters.Front()).(*waiter)
		w.granted = true
		s.held++
		close(w.ready)
	}
	l.dropIfIdleLocked(teamID, s)
}

func (l *Local) dropIfIdleLocked(teamID string, s *semaphore) {
	if s.held == 0 && s.waiters.Len() == 0 && l.sems[teamID] == s {
		delete(l.sems, teamID)
	}
}

// InUse returns how many of the team's slots are held.
func (l *Local) InUse(ctx context.Context, teamID string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("limits: in use: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.sems[teamID]; s != nil {
		return s.held, nil
	}
	return 0, nil
}

// Waiting returns how many callers are queued for the team's slots.
func (l *Local) Waiting(ctx context.Context, teamID string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("limits: waiting: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.sems[teamID]; s != nil {
		return s.waiters.Len(), nil
	}
	return 0, nil
}

// Allow counts one request in the team's window for class. A window starts
// with its first request and lasts one minute.
func (l *Local) Allow(ctx context.Context, teamID, class string, perMinute int) (Decision, error) {
	if err := ctx.Err(); err != nil {
		return Decision{}, fmt.Errorf("limits: allow: %w", err)
	}
	now := l.now()
	if perMinute <= 0 {
		return Decision{Allowed: true}, nil
	}
	key := teamID + "\x00" + class
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	if l.calls%sweepEvery == 0 {
		for k, w := range l.windows {
			if !now.Before(w.ends) {
				delete(l.windows, k)
			}
		}
	}
	w := l.windows[key]
	if w == nil || !now.Before(w.ends) {
		w = &window{ends: now.Add(Window)}
		l.windows[key] = w
	}
	resetIn := w.ends.Sub(now)
	if w.count >= perMinute {
		return decision(false, perMinute, w.count, resetIn, now), nil
	}
	w.count++
	return decision(true, perMinute, w.count, resetIn, now), nil
}
