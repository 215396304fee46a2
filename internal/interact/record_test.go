package interact

import (
	"testing"
	"time"

	"github.com/firegate/firegate/internal/testenv"
)

// TestRecording: a recorded session keeps its pages and a snapshot of each
// after activity, and skips a snapshot that shows nothing new; the
// recording outlives the session and is purged RecordingTTL after its end.
func TestRecording(t *testing.T) {
	srv := site(t)
	clk := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	st := testStore(t)
	m := New(Config{Store: st, Browser: testPool(t), Now: clk.now, RecordingTTL: time.Hour, Log: testenv.Logger(t)})
	ctx := ctxFor(t, 90*time.Second)
	rec, err := m.Create(ctx, CreateParams{TeamID: team, TTL: time.Hour, ActivityTTL: time.Hour, Record: true})
	if err != nil {
		t.Fatal(err)
	}
	l := m.live[rec.ID]
	// waitPages polls the store until cond holds of the recording.
	waitPages := func(what string, cond func(urls []string, frames []int) bool) {
		t.Helper()
		for {
			_, pages, err := m.Recording(ctx, team, rec.ID)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			var urls []string
			var frames []int
			for _, p := range pages {
				urls, frames = append(urls, p.URL), append(frames, p.Frames)
			}
			if cond(urls, frames) {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatalf("%s: %v, %v", what, urls, frames)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	waitPages("the first snapshot", func(urls []string, frames []int) bool { return len(urls) == 1 && frames[0] == 1 })
	if _, err := l.sess.Goto(ctx, srv.URL+"/"); err != nil {
		t.Fatal(err)
	}
	l.kickRecorder()
	waitPages("the second page", func(urls []string, frames []int) bool {
		return len(urls) == 2 && urls[1] == srv.URL+"/" && frames[1] == 1
	})
	// Nothing changed: no new frame, even after a few snapshots.
	for range 3 {
		l.kickRecorder()
	}
	if _, err := l.sess.Evaluate(ctx, "document.getElementById('out').textContent = 'changed'"); err != nil {
		t.Fatal(err)
	}
	l.kickRecorder()
	waitPages("a frame of the change", func(urls []string, frames []int) bool { return len(urls) == 2 && frames[1] == 2 })
	// Any later snapshot shows the same page: still two frames.
	page, frames, err := m.RecordedPage(ctx, team, rec.ID, 2)
	if err != nil || page.URL != srv.URL+"/" || page.Title != "Shop" || len(frames) != 2 || len(frames[1].JPEG) < 100 || frames[1].JPEG[0] != 0xff || frames[1].JPEG[1] != 0xd8 {
		t.Fatalf("RecordedPage = %+v, %d frames, %v", page, len(frames), err)
	}
	if _, _, err := m.RecordedPage(ctx, "0195e0a0-0000-7000-8000-000000000009", rec.ID, 2); err != ErrNotFound {
		t.Errorf("another team's RecordedPage: %v, want ErrNotFound", err)
	}

	if _, err := m.Delete(ctx, team, rec.ID); err != nil {
		t.Fatal(err)
	}
	if _, pages, err := m.Recording(ctx, team, rec.ID); err != nil || len(pages) != 2 {
		t.Fatalf("recording after the end: %d pages, %v", len(pages), err)
	}
	clk.add(59 * time.Minute)
	m.Reap(ctx)
	if _, pages, _ := m.Recording(ctx, team, rec.ID); len(pages) != 2 {
		t.Errorf("recording purged before RecordingTTL: %d pages", len(pages))
	}
	clk.add(2 * time.Minute)
	m.Reap(ctx)
	if _, _, err := m.Recording(ctx, team, rec.ID); err != ErrNotRecorded {
		t.Errorf("recording after RecordingTTL: %v, want ErrNotRecorded", err)
	}
}
