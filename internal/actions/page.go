package actions

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/firegate/firegate/internal/pause"
)

// maxFullPageHeight caps full-page screenshots: Chrome cannot capture much
// taller surfaces in one piece.
const maxFullPageHeight = 16384

// jsQuote returns s as a JavaScript string literal.
func jsQuote(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// evalValue evaluates expr in the page, awaiting a promise, and decodes the
// JSON value into out (nil to ignore). A thrown exception becomes an *Error
// reason.
func evalValue(ctx context.Context, t *chromedp.Target, expr string, out any) error {
	res, err := cdp.Call(ctx, t, runtime.Evaluate, runtime.EvaluateParams{
		Expression:    expr,
		ReturnByValue: new(true),
		AwaitPromise:  new(true),
	})
	if err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		return reason("%s", exceptionText(res.ExceptionDetails))
	}
	if out == nil || res.Result == nil || len(res.Result.Value) == 0 {
		return nil
	}
	return json.Unmarshal(res.Result.Value, out)
}

// exceptionText is the one-line description of a thrown value.
func exceptionText(d *runtime.ExceptionDetails) string {
	if e := d.Exception; e != nil {
		if e.Description != "" {
			first, _, _ := strings.Cut(e.Description, "\n")
			return first
		}
		if len(e.Value) > 0 {
			return "uncaught " + string(e.Value)
		}
		if e.UnserializableValue != "" {
			return "uncaught " + string(e.UnserializableValue)
		}
	}
	return d.Text
}

// waitVisible polls until an element matching sel is visible.
func waitVisible(ctx context.Context, t *chromedp.Target, sel string) error {
	expr := `(() => { let el; try { el = document.querySelector(` + jsQuote(sel) + `); } catch (e) { return String(e.message || e); }
	if (!el) return false;
	const st = getComputedStyle(el);
	return st.visibility !== 'hidden' && st.display !== 'none' && el.getClientRects().length > 0; })()`
	for {
		var v any
		err := evalValue(ctx, t, expr, &v)
		switch {
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			// A navigation can destroy the context between polls; try again.
		case v == true:
			return nil
		default:
			if msg, ok := v.(string); ok {
				return reason("invalid selector %q: %s", sel, msg)
			}
		}
		if err := pause.For(ctx, pollInterval); err != nil {
			return err
		}
	}
}

// clickTarget is where a click on one matched element lands.
type clickTarget struct {
	Count int     `json:"count"`
	Found bool    `json:"found"`
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	// Clicked is true when the element could not be hit with the mouse
	// (hidden, covered, zero size) and was clicked from script instead.
	Clicked bool   `json:"clicked"`
	Error   string `json:"error"`
}

// click clicks the first element matching sel, or every one with all. A
// visible element gets a real mouse click at its center; one that cannot be
// hit is clicked from script.
func click(ctx context.Context, t *chromedp.Target, sel string, all bool) error {
	for i := 0; ; i++ {
		expr := fmt.Sprintf(`(() => { let list; try { list = document.querySelectorAll(%s); } catch (e) { return {error: String(e.message || e)}; }
	const el = list[%d]; if (!el) return {count: list.length, found: false};
	el.scrollIntoView({block: 'center', inline: 'center'});
	const r = el.getBoundingClientRect(); const x = r.left + r.width / 2, y = r.top + r.height / 2;
	const hit = r.width > 0 && r.height > 0 && x >= 0 && y >= 0 && x < innerWidth && y < innerHeight ? document.elementFromPoint(x, y) : null;
	if (!hit || !(hit === el || el.contains(hit) || hit.contains(el))) { el.click(); return {count: list.length, found: true, clicked: true}; }
	return {count: list.length, found: true, x, y}; })()`, jsQuote(sel), i)
		var ct clickTarget
		if err := evalValue(ctx, t, expr, &ct); err != nil {
			return err
		}
		switch {
		case ct.Error != "":
			return reason("invalid selector %q: %s", sel, ct.Error)
		case !ct.Found && i == 0 && !all:
			return reason("no element matches selector %q", sel)
		case !ct.Found:
			return nil
		}
		if !ct.Clicked {
			if _, err := chromedp.MouseClickXY(ct.X, ct.Y)(ctx, t); err != nil {
				return err
			}
		}
		if !all || i+1 >= ct.Count {
			return nil
		}
	}
}

// scroll scrolls the page, or the element matching sel, by one viewport (or
// element) height up or down.
func scroll(ctx context.Context, t *chromedp.Target, sel, direction string) error {
	sign := 1
	if direction == "up" {
		sign = -1
	}
	expr := fmt.Sprintf(`(() => { const s = %d, sel = %s;
	if (sel) { let el; try { el = document.querySelector(sel); } catch (e) { return String(e.message || e); }
		if (!el) return 'no element matches selector ' + JSON.stringify(sel);
		el.scrollBy(0, s * (el.clientHeight || innerHeight)); return ''; }
	window.scrollBy(0, s * innerHeight); return ''; })()`, sign, jsQuote(sel))
	var msg string
	if err := evalValue(ctx, t, expr, &msg); err != nil {
		return err
	}
	if msg != "" {
		return reason("%s", msg)
	}
	return nil
}

// keyFor maps a press action's key name to the key string chromedp.KeyEvent
// sends. Names are case-insensitive; a single character is itself.
func keyFor(name string) (string, bool) {
	if r := []rune(name); len(r) == 1 {
		return name, true
	}
	switch strings.ToLower(name) {
	case "enter", "return":
		return kb.Enter, true
	case "tab":
		return kb.Tab, true
	case "escape", "esc":
		return kb.Escape, true
	case "backspace":
		return kb.Backspace, true
	case "delete", "del":
		return kb.Delete, true
	case "arrowup", "up":
		return kb.ArrowUp, true
	case "arrowdown", "down":
		return kb.ArrowDown, true
	case "arrowleft", "left":
		return kb.ArrowLeft, true
	case "arrowright", "right":
		return kb.ArrowRight, true
	case "pageup":
		return kb.PageUp, true
	case "pagedown":
		return kb.PageDown, true
	case "home":
		return kb.Home, true
	case "end":
		return kb.End, true
	case "space", "spacebar":
		return " ", true
	}
	return "", false
}

// Capture returns the page's current URL and document.documentElement's
// outerHTML.
func Capture(ctx context.Context, t *chromedp.Target) (Scrape, error) {
	var s Scrape
	err := evalValue(ctx, t, `({url: location.href, html: document.documentElement ? document.documentElement.outerHTML : ''})`, &struct {
		URL  *string `json:"url"`
		HTML *string `json:"html"`
	}{&s.URL, &s.HTML})
	return s, err
}

// Execute runs script in the page and returns its value. The script may be
// an expression or statements (the value of the last one is returned), may
// use top-level await, or may be a function body using return. Promises are
// awaited; a throw or a rejection is an *Error reason.
func Execute(ctx context.Context, t *chromedp.Target, script string) (JSReturn, error) {
	params := runtime.EvaluateParams{
		Expression:    script,
		ReturnByValue: new(true),
		AwaitPromise:  new(true),
		UserGesture:   new(true),
	}
	res, err := cdp.Call(ctx, t, runtime.Evaluate, params)
	if err != nil {
		return JSReturn{}, err
	}
	// A syntax error means nothing ran, so another form can be tried.
	if d := res.ExceptionDetails; d != nil && d.Exception != nil && d.Exception.ClassName == "SyntaxError" {
		switch desc := d.Exception.Description; {
		case strings.Contains(desc, "Illegal return"):
			params.Expression = "(async () => {\n" + script + "\n})()"
		case strings.Contains(desc, "await"):
			// Top-level await: REPL mode keeps the last value.
			params.ReplMode = new(true)
		default:
			return JSReturn{}, reason("script error: %s", exceptionText(d))
		}
		if res, err = cdp.Call(ctx, t, runtime.Evaluate, params); err != nil {
			return JSReturn{}, err
		}
	}
	if res.ExceptionDetails != nil {
		return JSReturn{}, reason("script error: %s", exceptionText(res.ExceptionDetails))
	}
	return jsValue(res.Result)
}

// jsValue converts a by-value remote object into a JSReturn.
func jsValue(o *runtime.RemoteObject) (JSReturn, error) {
	if o == nil {
		return JSReturn{Type: "undefined"}, nil
	}
	v := JSReturn{Type: string(o.Type)}
	switch {
	case o.UnserializableValue != "":
		v.Value = string(o.UnserializableValue)
	case len(o.Value) > 0:
		if err := json.Unmarshal(o.Value, &v.Value); err != nil {
			return JSReturn{}, reason("result is not JSON: %v", err)
		}
	}
	return v, nil
}

// Screenshot captures the viewport (or the full page) as PNG, or JPEG when
// quality is 1..100. With vp the viewport is resized for the capture and
// restored afterwards; fullPage ignores the viewport height.
func Screenshot(ctx context.Context, t *chromedp.Target, env Env, fullPage bool, quality int, vp *Viewport) (Media, error) {
	cur := env.Viewport
	if cur.Width == 0 || cur.Height == 0 {
		cur = Viewport{Width: defaultWidth, Height: defaultHeight}
	}
	if vp != nil && *vp != cur {
		if err := setViewport(ctx, t, *vp, env.Mobile); err != nil {
			return Media{}, err
		}
		defer func() {
			// Restore even when ctx ended, so the tab stays consistent.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreTimeout)
			defer cancel()
			_ = setViewport(rctx, t, cur, env.Mobile)
		}()
	}
	params := page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng}
	m := Media{ContentType: "image/png"}
	if quality > 0 {
		params.Format = page.CaptureScreenshotFormatJpeg
		params.Quality = new(int64(quality))
		m.ContentType = "image/jpeg"
	}
	if fullPage {
		lm, err := cdp.Call(ctx, t, page.GetLayoutMetrics, cdp.Empty{})
		if err != nil {
			return Media{}, err
		}
		w, h := float64(cur.Width), float64(cur.Height)
		if vp != nil {
			w, h = float64(vp.Width), float64(vp.Height)
		}
		if cs := lm.CSSContentSize; cs != nil {
			w, h = math.Max(w, math.Ceil(cs.Width)), math.Max(1, math.Ceil(cs.Height))
			if lv := lm.CSSLayoutViewport; lv != nil {
				// Horizontal overflow is clipped to the viewport width.
				w = float64(lv.ClientWidth)
			}
		}
		// The area is bounded, not only the height.
		w = math.Min(w, MaxImagePixels)
		h = min(h, maxFullPageHeight, math.Floor(MaxImagePixels/w))
		params.Clip = &page.Viewport{Width: w, Height: h, Scale: 1}
		params.CaptureBeyondViewport = new(true)
		m.Width, m.Height = int(w), int(h)
	} else {
		m.Width, m.Height = cur.Width, cur.Height
		if vp != nil {
			m.Width, m.Height = vp.Width, vp.Height
		}
	}
	if b := env.Pixels; b != nil && !b.take(int64(m.Width)*int64(m.Height)) {
		return Media{}, &Error{Reason: fmt.Sprintf("the screenshots of one request may have %d pixels in all; this one (%dx%d) is over what is left", b.max, m.Width, m.Height)}
	}
	res, err := cdp.Call(ctx, t, page.CaptureScreenshot, params)
	if err != nil {
		return Media{}, err
	}
	m.Data = res.Data
	return m, nil
}

// restoreTimeout bounds the viewport restore after a screenshot.
const restoreTimeout = 2 * time.Second

// setViewport overrides the tab's viewport.
func setViewport(ctx context.Context, t *chromedp.Target, vp Viewport, mobile bool) error {
	_, err := cdp.Call(ctx, t, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: int64(vp.Width), Height: int64(vp.Height), DeviceScaleFactor: 1, Mobile: mobile,
	})
	return err
}

// paperSize returns the width and height in inches of a pdf action format;
// empty means Letter.
func paperSize(format string) ([2]float64, bool) {
	switch strings.ToLower(format) {
	case "", "letter":
		return [2]float64{8.5, 11}, true
	case "legal":
		return [2]float64{8.5, 14}, true
	case "tabloid":
		return [2]float64{11, 17}, true
	case "ledger":
		return [2]float64{17, 11}, true
	case "a0":
		return [2]float64{33.1, 46.8}, true
	case "a1":
		return [2]float64{23.4, 33.1}, true
	case "a2":
		return [2]float64{16.54, 23.4}, true
	case "a3":
		return [2]float64{11.7, 16.54}, true
	case "a4":
		return [2]float64{8.27, 11.7}, true
	case "a5":
		return [2]float64{5.83, 8.27}, true
	case "a6":
		return [2]float64{4.13, 5.83}, true
	}
	return [2]float64{}, false
}

// PDF prints the page to PDF on the named paper size (see the pdf action),
// with backgrounds. Scale 0 means 1; Chrome accepts 0.1 to 2.
func PDF(ctx context.Context, t *chromedp.Target, format string, landscape bool, scale float64) (Media, error) {
	size, ok := paperSize(format)
	if !ok {
		return Media{}, reason("unknown format %q", format)
	}
	if scale == 0 {
		scale = 1
	}
	scale = math.Min(2, math.Max(0.1, scale))
	res, err := cdp.Call(ctx, t, page.PrintToPDF, page.PrintToPDFParams{
		Landscape:       new(landscape),
		PrintBackground: new(true),
		Scale:           scale,
		PaperWidth:      size[0],
		PaperHeight:     size[1],
	})
	if err != nil {
		return Media{}, err
	}
	return Media{Data: res.Data, ContentType: "application/pdf"}, nil
}
