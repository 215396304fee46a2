package browser

import (
	"errors"
	"log/slog"
	"testing"
	"time"
)

func TestStatsBeforeStart(t *testing.T) {
	t.Parallel()
	p := New(Options{ChromePath: "/nonexistent/chrome", MaxTabs: 3}, slog.New(slog.DiscardHandler))
	if got, want := p.Stats(), (Stats{InUse: 0, MaxTabs: 3, Started: false}); got != want {
		t.Errorf("Stats = %+v, want %+v", got, want)
	}
	if err := p.Ping(t.Context()); !errors.Is(err, ErrNotStarted) {
		t.Errorf("Ping before start: %v, want ErrNotStarted", err)
	}
}

func TestStatsAndPing(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, map[string]string{"/": `<html><body>ok</body></html>`}, nil)
	if _, err := p.Render(testCtx(t, 20*time.Second), Request{URL: s.URL + "/"}); err != nil {
		t.Fatal(err)
	}
	st := p.Stats()
	if !st.Started || st.MaxTabs != 8 || st.InUse < 0 || st.InUse > st.MaxTabs {
		t.Errorf("Stats after a render = %+v", st)
	}
	if err := p.Ping(testCtx(t, 2*time.Second)); err != nil {
		t.Errorf("Ping: %v", err)
	}
}
