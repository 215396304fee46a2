package browser

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/testenv"
)

// TestTabsSharedBetweenTeams: on a pool of 4 tabs, a team with 4 long
// renders holds 3 tabs and waits for the 4th; another team's short render
// gets the tab that team cannot take and finishes at once. It starts a
// Chrome of its own.
func TestTabsSharedBetweenTeams(t *testing.T) {
	t.Parallel()
	p := New(Options{ChromePath: testenv.ChromePath(t), MaxTabs: 4, AllowPrivate: true}, testenv.Logger(t))
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	s := newSite(t, map[string]string{"/": `<html><body><p>short</p></body></html>`}, nil)
	ctx := testCtx(t, 90*time.Second)
	if _, err := p.Render(ctx, Request{URL: s.URL + "/", Team: "b"}); err != nil { // start Chrome
		t.Fatal(err)
	}
	actx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for range 4 {
		wg.Go(func() { _, _ = p.Render(actx, Request{URL: s.URL + "/", Team: "a", WaitFor: time.Minute}) })
	}
	testenv.Eventually(t, 60*time.Second, func() bool {
		held, waiting := p.tabs.Held("a")
		return held == 3 && waiting == 1
	}, "team a never held 3 tabs with one render waiting")
	bctx, bcancel := context.WithTimeout(ctx, testenv.Patient(5*time.Second))
	defer bcancel()
	start := time.Now()
	res, err := p.Render(bctx, Request{URL: s.URL + "/", Team: "b"})
	if err != nil {
		t.Fatalf("team b's render while team a saturates: %v after %v", err, time.Since(start))
	}
	if !strings.Contains(res.HTML, "short") {
		t.Errorf("html %q", res.HTML)
	}
	if held, waiting := p.tabs.Held("a"); held != 3 || waiting != 1 {
		t.Errorf("team a holds %d tabs with %d waiting after team b's render, want 3 and 1", held, waiting)
	}
}

// TestRenderHoldBound: a render holds its tab for at most MaxHold, and
// its error says so (a timeout naming BROWSER_MAX_TAB_HOLD).
func TestRenderHoldBound(t *testing.T) {
	t.Parallel()
	p := New(Options{ChromePath: testenv.ChromePath(t), MaxTabs: 1, AllowPrivate: true, MaxHold: time.Second}, testenv.Logger(t))
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	s := newSite(t, map[string]string{"/": `<html><body><p>slow</p></body></html>`}, nil)
	ctx := testCtx(t, 60*time.Second)
	if _, err := p.instance(ctx); err != nil { // Chrome's start is not the render's
		t.Fatal(err)
	}
	start := time.Now()
	_, err := p.Render(ctx, Request{URL: s.URL + "/", WaitFor: 30 * time.Second})
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "BROWSER_MAX_TAB_HOLD") {
		t.Errorf("err %v, want a timeout naming BROWSER_MAX_TAB_HOLD", err)
	}
	if d := time.Since(start); d > testenv.Patient(10*time.Second) {
		t.Errorf("the render held its tab for %v", d)
	}
	if p.Stats().InUse != 0 {
		t.Errorf("%d tabs held after the render", p.Stats().InUse)
	}
}

// lateCtx is a context whose deadline has passed before its Done closes,
// as a render's context is between its own timer and an inner one's.
type lateCtx struct {
	context.Context
	dl time.Time
}

func (c lateCtx) Deadline() (time.Time, bool) { return c.dl, true }

// A render's step that ended on its own timer a moment before the hold's
// still names BROWSER_MAX_TAB_HOLD (TestRenderHoldBound failed so on CI).
func TestHoldErrorWaitsForTheHoldsCause(t *testing.T) {
	t.Parallel()
	p := &Pool{opts: Options{MaxHold: time.Second}}
	inner, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	ctx := lateCtx{Context: inner, dl: time.Now().Add(-time.Millisecond)}
	time.AfterFunc(20*time.Millisecond, func() { cancel(errHeld) }) // the hold's timer, a moment late
	err := p.holdError(ctx, ctxError("waitFor", context.DeadlineExceeded))
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "BROWSER_MAX_TAB_HOLD") {
		t.Errorf("err %v, want a timeout naming BROWSER_MAX_TAB_HOLD", err)
	}
	// Another cause (the request's own deadline) is left as it is.
	other, cancelOther := context.WithCancelCause(context.Background())
	cancelOther(context.DeadlineExceeded)
	want := ctxError("waitFor", context.DeadlineExceeded)
	if err := p.holdError(lateCtx{Context: other, dl: time.Now()}, want); err != want {
		t.Errorf("err %v, want %v", err, want)
	}
}
