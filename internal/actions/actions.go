// Package actions runs the v2 API's page actions (wait, click, write, press,
// scroll, screenshot, scrape, executeJavascript, pdf) on an open browser tab
// and collects their results in order.
//
// The package has its own Action type that mirrors scrape.Action field by
// field, so that internal/browser can import it without importing
// internal/scrape; the engine converts one into the other. It owns no browser
// lifecycle: the caller hands it a chromedp target that is already open and
// navigated.
package actions

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/firegate/firegate/internal/pause"
)

// Action type names, as in the API.
const (
	TypeWait              = "wait"
	TypeClick             = "click"
	TypeWrite             = "write"
	TypePress             = "press"
	TypeScroll            = "scroll"
	TypeScreenshot        = "screenshot"
	TypeScrape            = "scrape"
	TypeExecuteJavascript = "executeJavascript"
	TypePDF               = "pdf"
)

// Action is one browser action; only the fields of its Type are set. It
// mirrors scrape.Action: Quality 0 means PNG (scrape.Action's nil), Scale 0
// means 1, an empty PDFFormat means Letter and an empty Direction means down.
type Action struct {
	Type         string
	Milliseconds int       // wait
	Selector     string    // wait, click, scroll
	FullPage     bool      // screenshot
	Quality      int       // screenshot: 1..100 = JPEG, 0 = PNG
	Viewport     *Viewport // screenshot
	All          bool      // click
	Text         string    // write
	Key          string    // press
	Direction    string    // scroll: up, down
	Script       string    // executeJavascript
	PDFFormat    string    // pdf: A0..A6, Letter, Legal, Tabloid, Ledger
	Landscape    bool      // pdf
	Scale        float64   // pdf
}

// Viewport is a width and height in CSS pixels.
type Viewport struct {
	Width  int
	Height int
}

// Media is a captured screenshot or PDF.
type Media struct {
	Data          []byte
	ContentType   string // image/png, image/jpeg or application/pdf
	Width, Height int    // of a screenshot, in pixels
	// Ref is where Env.Store wrote the data (Data is then nil).
	Ref string
}

// Scrape is the output of a scrape action.
type Scrape struct {
	URL  string
	HTML string
}

// JSReturn is the output of an executeJavascript action: Type is the
// JavaScript typeof of the value ("number", "string", "object", "boolean",
// "undefined", "bigint"...) and Value its JSON-decoded form (nil for null and
// undefined; a string for values JSON cannot hold, such as NaN or 1n).
type JSReturn struct {
	Type  string
	Value any
}

// Results holds the outputs of the actions, each list in the order of its
// actions.
type Results struct {
	Screenshots       []Media
	Scrapes           []Scrape
	JavascriptReturns []JSReturn
	PDFs              []Media
}

// Error is a failing action: selector not found, script threw, bad field.
// The engine maps it to SCRAPE_ACTION_ERROR.
type Error struct {
	Index  int    // 0-based position in the action list
	Type   string // the action's type
	Reason string
}

// Error names the action and the reason.
func (e *Error) Error() string {
	return fmt.Sprintf("actions: action %d (%s) failed: %s", e.Index, e.Type, e.Reason)
}

// Env is what the runner needs to know about the tab around it.
type Env struct {
	// Viewport is the tab's current viewport; a screenshot that resizes the
	// viewport restores it afterwards. Zero means 1920x1080.
	Viewport Viewport
	// Mobile is true when the tab emulates a phone.
	Mobile bool
	// Settle, when set, is called after actions that can change the page
	// (click, write, press, scroll, executeJavascript) to wait until the
	// page is quiet again: navigation done, network idle, DOM stable. It
	// must return quickly on a page that is already quiet.
	Settle func(ctx context.Context) error
	// Store, when set, writes each screenshot and PDF out as soon as it
	// is taken and returns a reference to it (a URL), so that a request's
	// images are not all held until the render ends. Its errors end the
	// run as they are (a StoreError), not as an action's failure.
	Store func(ctx context.Context, data []byte, contentType string) (string, error)
	// Pixels, when set, is the request's screenshot budget: each
	// screenshot action draws its pixels from it and fails once it is
	// used up.
	Pixels *PixelBudget
}

// Screenshot sizes. One image never has more than MaxImagePixels (a full
// page is cut at the height that keeps it within: its area is bounded, not
// only its height), and the screenshot actions of one request share
// RequestPixels. A PNG takes at most about 4 bytes per pixel, so together
// they bound what one request's screenshots hold in memory.
const (
	MaxImagePixels = 16_000_000
	RequestPixels  = 32_000_000
)

// PixelBudget is the screenshot pixels a request may still take. Its
// methods are safe for concurrent use.
type PixelBudget struct {
	mu   sync.Mutex
	left int64
	max  int64
}

// NewPixelBudget returns a budget of n pixels.
func NewPixelBudget(n int64) *PixelBudget { return &PixelBudget{left: n, max: n} }

// take draws n pixels; false (and nothing drawn) when fewer are left.
func (b *PixelBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.left {
		return false
	}
	b.left -= n
	return true
}

// defaultViewport is the viewport when Env leaves it zero.
const (
	defaultWidth  = 1920
	defaultHeight = 1080
)

// pollInterval is how often wait-for-selector checks the page.
const pollInterval = 50 * time.Millisecond

// Validate checks the fields Run relies on and returns an *Error naming the
// first bad action. Run calls it first.
func Validate(list []Action) error {
	for i, a := range list {
		bad := func(format string, args ...any) error {
			return &Error{Index: i, Type: a.Type, Reason: fmt.Sprintf(format, args...)}
		}
		switch a.Type {
		case TypeWait:
			if (a.Milliseconds > 0) == (a.Selector != "") {
				return bad("exactly one of milliseconds and selector is required")
			}
			if a.Milliseconds < 0 {
				return bad("milliseconds must be positive")
			}
		case TypeClick:
			if a.Selector == "" {
				return bad("selector is required")
			}
		case TypeWrite:
			if a.Text == "" {
				return bad("text is required")
			}
		case TypePress:
			if _, ok := keyFor(a.Key); !ok {
				return bad("unknown key %q", a.Key)
			}
		case TypeScroll:
			if a.Direction != "" && a.Direction != "up" && a.Direction != "down" {
				return bad("direction must be up or down")
			}
		case TypeScreenshot:
			if a.Quality < 0 || a.Quality > 100 {
				return bad("quality must be 1 to 100")
			}
			if v := a.Viewport; v != nil && (v.Width < 1 || v.Height < 1 || v.Width > 7680 || v.Height > 4320) {
				return bad("viewport must be 1..7680 x 1..4320")
			}
		case TypeScrape:
		case TypeExecuteJavascript:
			if strings.TrimSpace(a.Script) == "" {
				return bad("script is required")
			}
		case TypePDF:
			if _, ok := paperSize(a.PDFFormat); !ok {
				return bad("unknown format %q", a.PDFFormat)
			}
			if a.Scale < 0 {
				return bad("scale must be positive")
			}
		default:
			return bad("unknown action type")
		}
	}
	return nil
}

// Run executes the actions in order on the tab t and collects their results.
// A failing action stops the run with an *Error; when ctx ends first the
// error wraps ctx.Err() instead. Results gathered before the failure are
// returned too.
func Run(ctx context.Context, t *chromedp.Target, env Env, list []Action) (Results, error) {
	res := Results{
		Screenshots:       []Media{},
		Scrapes:           []Scrape{},
		JavascriptReturns: []JSReturn{},
		PDFs:              []Media{},
	}
	if err := Validate(list); err != nil {
		return res, err
	}
	for i, a := range list {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("actions: before action %d: %w", i, err)
		}
		err := runOne(ctx, t, env, a, &res)
		if err == nil && env.Settle != nil && changesPage(a.Type) {
			err = env.Settle(ctx)
		}
		if err != nil {
			if ctx.Err() != nil {
				return res, fmt.Errorf("actions: action %d (%s): %w", i, a.Type, ctx.Err())
			}
			var ae *Error
			if errors.As(err, &ae) {
				ae.Index, ae.Type = i, a.Type
				return res, ae
			}
			if se, ok := errors.AsType[*StoreError](err); ok {
				return res, se
			}
			return res, &Error{Index: i, Type: a.Type, Reason: err.Error()}
		}
	}
	return res, nil
}

// changesPage reports whether an action of type typ can start a navigation,
// requests or DOM changes that the next action should wait for.
func changesPage(typ string) bool {
	switch typ {
	case TypeClick, TypeWrite, TypePress, TypeScroll, TypeExecuteJavascript:
		return true
	}
	return false
}

// reason is an action failure that is not a protocol error; Run fills in
// Index and Type.
func reason(format string, args ...any) error {
	return &Error{Reason: fmt.Sprintf(format, args...)}
}

func runOne(ctx context.Context, t *chromedp.Target, env Env, a Action, res *Results) error {
	switch a.Type {
	case TypeWait:
		if a.Selector != "" {
			return waitVisible(ctx, t, a.Selector)
		}
		return pause.For(ctx, time.Duration(a.Milliseconds)*time.Millisecond)
	case TypeClick:
		return click(ctx, t, a.Selector, a.All)
	case TypeWrite:
		_, err := chromedp.KeyEvent(a.Text)(ctx, t)
		return err
	case TypePress:
		k, _ := keyFor(a.Key)
		_, err := chromedp.KeyEvent(k)(ctx, t)
		return err
	case TypeScroll:
		return scroll(ctx, t, a.Selector, a.Direction)
	case TypeScreenshot:
		m, err := Screenshot(ctx, t, env, a.FullPage, a.Quality, a.Viewport)
		if err != nil {
			return err
		}
		if m, err = store(ctx, env, m); err != nil {
			return err
		}
		res.Screenshots = append(res.Screenshots, m)
	case TypeScrape:
		s, err := Capture(ctx, t)
		if err != nil {
			return err
		}
		res.Scrapes = append(res.Scrapes, s)
	case TypeExecuteJavascript:
		v, err := Execute(ctx, t, a.Script)
		if err != nil {
			return err
		}
		res.JavascriptReturns = append(res.JavascriptReturns, v)
	case TypePDF:
		m, err := PDF(ctx, t, a.PDFFormat, a.Landscape, a.Scale)
		if err != nil {
			return err
		}
		if m, err = store(ctx, env, m); err != nil {
			return err
		}
		res.PDFs = append(res.PDFs, m)
	}
	return nil
}

// StoreError is a failure of Env.Store; Run returns it unchanged.
type StoreError struct{ Err error }

func (e *StoreError) Error() string { return "actions: store media: " + e.Err.Error() }

// Unwrap returns the store's error.
func (e *StoreError) Unwrap() error { return e.Err }

// store writes m out through env.Store, when there is one.
func store(ctx context.Context, env Env, m Media) (Media, error) {
	if env.Store == nil {
		return m, nil
	}
	ref, err := env.Store(ctx, m.Data, m.ContentType)
	if err != nil {
		return m, &StoreError{Err: err}
	}
	m.Data, m.Ref = nil, ref
	return m, nil
}
