package browser

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"

	"github.com/firegate/firegate/internal/actions"
)

// Live view: a session's page streamed as JPEG frames (Page.startScreencast)
// to one viewer at a time, and mouse clicks and keys sent back to it.

// ErrViewerBusy: the session already streams to a viewer.
var ErrViewerBusy = errors.New("browser: the session already has a live viewer")

// liveState notes whether a session streams to a viewer.
type liveState struct{ viewing atomic.Bool }

// Frame is one JPEG frame of a live view.
type Frame struct {
	JPEG []byte
}

// Screencast streams the page's frames (JPEG, at most maxWidth x
// maxHeight) on the returned channel until ctx ends or the session closes;
// then the channel is closed. A slow reader loses frames, never blocks the
// page. One screencast runs per session at a time: another gets
// ErrViewerBusy.
func (s *Session) Screencast(ctx context.Context, maxWidth, maxHeight int) (<-chan Frame, error) {
	if s.closedOrGone() {
		return nil, ErrSessionClosed
	}
	if !s.live.viewing.CompareAndSwap(false, true) {
		return nil, ErrViewerBusy
	}
	vctx, cancel := context.WithCancel(s.ctx)
	stop := context.AfterFunc(ctx, cancel)
	t := s.tb.t
	frames := cdp.Events(vctx, t, page.ScreencastFrame)
	quality := int64(60)
	if _, err := cdp.Call(vctx, t, page.StartScreencast, page.StartScreencastParams{
		Format: page.StartScreencastFormatJpeg, Quality: &quality, MaxWidth: int64(maxWidth), MaxHeight: int64(maxHeight), EveryNthFrame: 1,
	}); err != nil {
		stop()
		cancel()
		s.live.viewing.Store(false)
		return nil, fmt.Errorf("browser: start screencast: %w", err)
	}
	out := make(chan Frame, 2)
	// Chrome sends frames when the page repaints: a still page would show
	// nothing, so the stream starts with a capture of the page as it is.
	if shot, err := cdp.Call(vctx, t, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatJpeg, Quality: &quality}); err == nil {
		out <- Frame{JPEG: shot.Data}
	}
	go func() {
		defer func() {
			stop()
			cancel()
			if s.tb.ctx.Err() == nil {
				sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
				_, _ = cdp.Call(sctx, t, page.StopScreencast, cdp.Empty{})
				scancel()
			}
			close(out)
			s.live.viewing.Store(false)
		}()
		for ev, err := range frames {
			if err != nil {
				return
			}
			// The next frame comes once this one is acknowledged.
			_, _ = cdp.Call(vctx, t, page.ScreencastFrameAck, page.ScreencastFrameAckParams{SessionID: ev.SessionID})
			select {
			case out <- Frame{JPEG: ev.Data}:
			default: // the viewer is behind: drop the frame
			}
		}
	}()
	return out, nil
}

// closedOrGone reports whether the session can serve no more.
func (s *Session) closedOrGone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed || s.ctx.Err() != nil
}

// Click clicks the page at viewport coordinates x, y (CSS pixels).
func (s *Session) Click(ctx context.Context, x, y float64) error {
	rctx, unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	for _, typ := range []input.DispatchMouseEventType{input.DispatchMouseEventTypeMousePressed, input.DispatchMouseEventTypeMouseReleased} {
		if _, err := cdp.Call(rctx, s.tb.t, input.DispatchMouseEvent, input.DispatchMouseEventParams{
			Type: typ, X: x, Y: y, Button: input.MouseButtonLeft, Buttons: 1, ClickCount: 1,
		}); err != nil {
			return s.opError(rctx, "click", err)
		}
	}
	return nil
}

// Key types text, or presses a named key (Enter, Tab, Backspace, arrows,
// ...) when key is set.
func (s *Session) Key(ctx context.Context, text, key string) error {
	a := actions.Action{Type: actions.TypeWrite, Text: text}
	if key != "" {
		a = actions.Action{Type: actions.TypePress, Key: key}
	}
	_, err := s.Do(ctx, a)
	return err
}

// Viewport returns the session's viewport size in CSS pixels.
func (s *Session) Viewport() (width, height int) { return s.env.Viewport.Width, s.env.Viewport.Height }
