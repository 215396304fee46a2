package httpapi

import (
	"context"
	"sync"
	"time"

	"github.com/firegate/firegate/internal/store"
)

// DefaultMaxWatchers is the default cap on the WebSocket watchers one team
// may hold open on one server process.
const DefaultMaxWatchers = 1000

// watchHub counts the watchers of each team and polls each watched job
// once for all its watchers: one poller per job (not per socket) reads the
// job and its new documents every poll interval and hands both to every
// watcher of the job. A poller stops when its last watcher leaves or the
// job ends.
type watchHub struct {
	jobs       store.JobStore
	poll       time.Duration
	maxPerTeam int

	mu    sync.Mutex
	teams map[string]int      // team id -> watchers open
	feeds map[string]*jobFeed // job id -> its poller
}

func newWatchHub(jobs store.JobStore, poll time.Duration, maxPerTeam int) *watchHub {
	if maxPerTeam <= 0 {
		maxPerTeam = DefaultMaxWatchers
	}
	return &watchHub{jobs: jobs, poll: poll, maxPerTeam: maxPerTeam,
		teams: make(map[string]int), feeds: make(map[string]*jobFeed)}
}

// admit takes one of the team's watcher places; ok is false when all are
// taken. release gives it back and must be called once.
func (h *watchHub) admit(teamID string) (release func(), ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.teams[teamID] >= h.maxPerTeam {
		return nil, false
	}
	h.teams[teamID]++
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.teams[teamID]--; h.teams[teamID] <= 0 {
				delete(h.teams, teamID)
			}
		})
	}, true
}

// feedEvent is one poll of a job: its state and the documents that
// appeared since the previous poll, from index from on; or the error that
// ended the poller.
type feedEvent struct {
	job  store.Job
	from int
	docs [][]byte
	err  error
}

// watchSub is one watcher's place on a feed: events queue here until the
// watcher takes them (a watcher that stops reading is cut by its write
// deadline, which also bounds this queue).
type watchSub struct {
	mu     sync.Mutex
	events []feedEvent
	ready  chan struct{} // one pending wake-up
}

func (w *watchSub) push(e feedEvent) {
	w.mu.Lock()
	w.events = append(w.events, e)
	w.mu.Unlock()
	select {
	case w.ready <- struct{}{}:
	default:
	}
}

// take returns the queued events.
func (w *watchSub) take() []feedEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	e := w.events
	w.events = nil
	return e
}

// jobFeed is the poller of one job.
type jobFeed struct {
	id   string
	next int // documents already handed out
	subs map[*watchSub]struct{}
}

// subscribe adds a watcher of job id that has seen its first sent
// documents; the returned function removes it. A new poller starts after
// the documents the first watcher has seen.
func (h *watchHub) subscribe(id string, sent int) (*watchSub, func()) {
	sub := &watchSub{ready: make(chan struct{}, 1)}
	h.mu.Lock()
	f, ok := h.feeds[id]
	if !ok {
		f = &jobFeed{id: id, next: sent, subs: make(map[*watchSub]struct{})}
		h.feeds[id] = f
		go h.run(f)
	}
	f.subs[sub] = struct{}{}
	h.mu.Unlock()
	return sub, func() {
		h.mu.Lock()
		delete(f.subs, sub)
		h.mu.Unlock()
	}
}

// run polls one job until it ends, fails to be read, or has no watcher.
func (h *watchHub) run(f *jobFeed) {
	tick := time.NewTicker(h.poll)
	defer tick.Stop()
	for {
		<-tick.C
		h.mu.Lock()
		if len(f.subs) == 0 {
			delete(h.feeds, f.id)
			h.mu.Unlock()
			return
		}
		h.mu.Unlock()
		ev := h.pollOnce(f)
		h.mu.Lock()
		for sub := range f.subs {
			sub.push(ev)
		}
		end := ev.err != nil || isFinal(ev.job.Status)
		if end {
			delete(h.feeds, f.id)
		}
		h.mu.Unlock()
		if end {
			return
		}
	}
}

// pollOnce reads the job and the documents after f.next.
func (h *watchHub) pollOnce(f *jobFeed) feedEvent {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	j, err := h.jobs.Job(ctx, f.id)
	if err != nil {
		return feedEvent{err: err}
	}
	ev := feedEvent{job: j, from: f.next}
	for {
		docs, err := h.jobs.Documents(ctx, f.id, f.next, 100)
		if err != nil {
			return feedEvent{err: err}
		}
		ev.docs = append(ev.docs, docs...)
		f.next += len(docs)
		if len(docs) < 100 {
			return ev
		}
	}
}

// isFinal reports whether a job in status will change no more.
func isFinal(status string) bool {
	switch status {
	case store.JobCompleted, store.JobFailed, store.JobCancelled:
		return true
	}
	return false
}
