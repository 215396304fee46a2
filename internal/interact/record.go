package interact

import (
	"context"
	"crypto/sha256"
	"errors"
	"time"

	"github.com/firegate/firegate/internal/store"
)

// Recordings (recordSession).
//
// A recorded session keeps, in the store with its record, the pages its
// first page showed (each navigation history entry: a document, or a
// history.pushState) with their URL, title and time, and JPEG snapshots
// of the viewport: one after each activity on the session (code, prompt,
// live-view input, DevTools commands at most every cdpTouchEvery) when the
// page looks different from the last snapshot. A snapshot takes the
// session for about 70 ms (BENCHMARKS.md); it runs after the activity, on
// a goroutine of its own, and snapshots asked for meanwhile are one. A session keeps at most
// maxRecordPages pages and maxRecordBytes of snapshots; past that it
// records no more. Teams with zero data retention forced on are never
// recorded. The recording of an ended session is purged RecordingTTL
// after its end. Pages the session's DevTools clients open themselves are not
// recorded.

// ErrNotRecorded: the session has no recording.
var ErrNotRecorded = errors.New("interact: the session was not recorded")

// DefaultRecordingTTL is how long the recording of an ended session is
// kept by default.
const DefaultRecordingTTL = 24 * time.Hour

// purgeEvery is how often Reap purges old recordings.
const purgeEvery = time.Minute

// purgeRecordings deletes the recordings of sessions ended more than
// RecordingTTL ago, at most every purgeEvery.
func (m *Manager) purgeRecordings(ctx context.Context, now time.Time) {
	m.mu.Lock()
	due := now.Sub(m.purged) >= purgeEvery
	if due {
		m.purged = now
	}
	m.mu.Unlock()
	if !due {
		return
	}
	for range 100 { // at most 10,000 sessions a pass
		n, err := m.cfg.Store.PurgeInteractRecordings(ctx, now.Add(-m.cfg.RecordingTTL), 100)
		if err != nil {
			if ctx.Err() == nil {
				m.log.WarnContext(ctx, "purge interact recordings", "err", err)
			}
			return
		}
		if n == 0 {
			return
		}
	}
}

// Recording bounds.
const (
	maxRecordPages = 100
	maxRecordBytes = 4 << 20
	// recordTimeout bounds one snapshot and its writes.
	recordTimeout = 10 * time.Second
)

// recorder records a live session; its fields but kick are used by its
// goroutine only.
type recorder struct {
	kick  chan struct{}
	page  int   // the current page's number (0: none yet)
	entry int64 // the current page's history entry
	seq   int   // the current page's last frame
	bytes int   // snapshot bytes kept
	last  [sha256.Size]byte
	full  bool
}

// startRecorder records l until its session ends, starting with a
// snapshot now.
func (m *Manager) startRecorder(l *live) {
	r := &recorder{kick: make(chan struct{}, 1)}
	l.recorder = r
	r.kick <- struct{}{}
	go func() {
		for {
			select {
			case <-l.sess.Done():
				return
			case <-r.kick:
				m.snapshot(l, r)
			}
		}
	}()
}

// kickRecorder asks for a snapshot of a recorded session (coalesced).
func (l *live) kickRecorder() {
	if l.recorder == nil {
		return
	}
	select {
	case l.recorder.kick <- struct{}{}:
	default:
	}
}

// snapshot records the session's page as it is now.
func (m *Manager) snapshot(l *live, r *recorder) {
	if r.full {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	snap, err := l.sess.Snapshot(ctx)
	if err != nil {
		m.log.DebugContext(ctx, "interact snapshot", "session_id", l.rec.ID, "err", err)
		return
	}
	st := m.cfg.Store
	if r.page == 0 || snap.EntryID != r.entry {
		if r.page >= maxRecordPages {
			r.full = true
			return
		}
		p := store.InteractPage{SessionID: l.rec.ID, No: r.page + 1, URL: snap.URL, Title: snap.Title, StartedAt: m.now().UTC()}
		if err := st.AddInteractPage(ctx, p); err != nil {
			m.log.WarnContext(ctx, "record interact page", "session_id", l.rec.ID, "err", err)
			return
		}
		r.page, r.entry, r.seq, r.last = p.No, snap.EntryID, 0, [sha256.Size]byte{}
	}
	sum := sha256.Sum256(snap.JPEG)
	if sum == r.last || len(snap.JPEG) == 0 {
		return
	}
	if r.bytes+len(snap.JPEG) > maxRecordBytes {
		r.full = true
		return
	}
	f := store.InteractFrame{SessionID: l.rec.ID, PageNo: r.page, Seq: r.seq + 1, At: m.now().UTC(), JPEG: snap.JPEG}
	if err := st.AddInteractFrame(ctx, f); err != nil {
		m.log.WarnContext(ctx, "record interact frame", "session_id", l.rec.ID, "err", err)
		return
	}
	r.seq, r.bytes, r.last = f.Seq, r.bytes+len(f.JPEG), sum
}

// Recording returns the recorded pages of the team's session:
// ErrNotFound, or ErrNotRecorded when it has none (and is not being
// recorded here).
func (m *Manager) Recording(ctx context.Context, teamID, id string) (store.InteractSession, []store.InteractPage, error) {
	rec, err := m.Get(ctx, teamID, id)
	if err != nil {
		return rec, nil, err
	}
	pages, err := m.cfg.Store.InteractPages(ctx, id)
	if err != nil {
		return rec, nil, err
	}
	if len(pages) == 0 {
		m.mu.Lock()
		l := m.live[id]
		recording := l != nil && l.recorder != nil
		m.mu.Unlock()
		if !recording {
			return rec, nil, ErrNotRecorded
		}
	}
	return rec, pages, nil
}

// RecordedPage returns page pageNo of the team's session with its
// frames: ErrNotFound for an unknown session or page.
func (m *Manager) RecordedPage(ctx context.Context, teamID, id string, pageNo int) (store.InteractPage, []store.InteractFrame, error) {
	_, pages, err := m.Recording(ctx, teamID, id)
	if errors.Is(err, ErrNotRecorded) {
		return store.InteractPage{}, nil, ErrNotFound
	}
	if err != nil {
		return store.InteractPage{}, nil, err
	}
	for _, p := range pages {
		if p.No == pageNo {
			frames, err := m.cfg.Store.InteractFrames(ctx, id, pageNo)
			return p, frames, err
		}
	}
	return store.InteractPage{}, nil, ErrNotFound
}
