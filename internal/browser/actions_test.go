package browser

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/firegate/firegate/internal/actions"
)

func TestActionsForm(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, map[string]string{
		"/form": `<html><body><form action="/result" method="get">
<input id="name" name="name"> <input id="city" name="city"> <button id="go" type="submit">Go</button></form></body></html>`,
	}, map[string]http.HandlerFunc{
		"/result": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "<html><body><h1>Hello %s from %s</h1></body></html>", r.FormValue("name"), r.FormValue("city"))
		},
	})
	res, err := p.Render(testCtx(t, 30*time.Second), Request{URL: s.URL + "/form", Actions: []actions.Action{
		{Type: actions.TypeClick, Selector: "#name"},
		{Type: actions.TypeWrite, Text: "Ada"},
		{Type: actions.TypePress, Key: "Tab"},
		{Type: actions.TypeWrite, Text: "Paris"},
		{Type: actions.TypePress, Key: "Enter"},
		{Type: actions.TypeScrape},
	}})
	if err != nil {
		t.Fatal(err)
	}
	sc := res.Actions.Scrapes
	if len(sc) != 1 || !strings.HasPrefix(sc[0].URL, s.URL+"/result?") || !strings.Contains(sc[0].HTML, "Hello Ada from Paris") {
		t.Errorf("scrapes %+v", sc)
	}
	if !strings.Contains(res.HTML, "Hello Ada from Paris") || !strings.HasPrefix(res.URL, s.URL+"/result") {
		t.Errorf("final page %s %q", res.URL, res.HTML)
	}
	if res.StatusCode != 200 {
		t.Errorf("status %d", res.StatusCode)
	}
}

func TestActionsInfiniteScroll(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, map[string]string{"/": `<html><head><style>body{margin:0} .item{height:300px}</style></head><body><div id="list"></div><script>
let n = 0;
function more() { for (let i = 0; i < 4; i++) { const d = document.createElement('div'); d.className = 'item'; d.textContent = 'Item ' + (++n); document.getElementById('list').appendChild(d); } }
more();
let busy = false;
window.addEventListener('scroll', () => {
  if (busy || innerHeight + scrollY < document.body.scrollHeight - 300) return;
  busy = true;
  fetch('/more').then(r => r.text()).then(() => { more(); busy = false; });
});
</script></body></html>`}, map[string]http.HandlerFunc{
		"/more": func(w http.ResponseWriter, r *http.Request) {
			// The next items come 50 ms after the scroll: each scroll
			// action's settle time is what has to cover it.
			time.Sleep(50 * time.Millisecond)
			fmt.Fprint(w, "ok")
		},
	})
	scroll := actions.Action{Type: actions.TypeScroll, Direction: "down"}
	res, err := p.Render(testCtx(t, 30*time.Second), Request{URL: s.URL + "/", Actions: []actions.Action{scroll, scroll, scroll}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.HTML, "Item 16") {
		t.Errorf("items after three scrolls: %d more requests, html %q", s.hit("/more"), res.HTML)
	}
}

func TestActionsExecuteJavascript(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, map[string]string{"/": `<html><head><title>JS page</title></head><body></body></html>`}, nil)
	ctx := testCtx(t, 30*time.Second)
	js := func(script string) actions.Action {
		return actions.Action{Type: actions.TypeExecuteJavascript, Script: script}
	}
	res, err := p.Render(ctx, Request{URL: s.URL + "/", Actions: []actions.Action{
		js(`1 + 2`),
		js(`return document.title`),
		js(`({a: 1, b: [true, null, "x"]})`),
		js(`await new Promise(r => setTimeout(() => r('late'), 50))`),
		js(`const x = 5; x * 2`),
		js(`undefined`),
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []actions.JSReturn{
		{Type: "number", Value: float64(3)},
		{Type: "string", Value: "JS page"},
		{Type: "object", Value: map[string]any{"a": float64(1), "b": []any{true, nil, "x"}}},
		{Type: "string", Value: "late"},
		{Type: "number", Value: float64(10)},
		{Type: "undefined"},
	}
	if diff := cmp.Diff(want, res.Actions.JavascriptReturns); diff != "" {
		t.Errorf("javascriptReturns (-want +got):\n%s", diff)
	}

	for name, script := range map[string]string{
		"rejected promise":  `Promise.reject(new Error('nope'))`,
		"throw":             `throw new Error('nope')`,
		"awaited rejection": `await Promise.reject(new Error('nope'))`,
		"return rejection":  `return Promise.reject(new Error('nope'))`,
	} {
		_, err := p.Render(ctx, Request{URL: s.URL + "/", Actions: []actions.Action{{Type: actions.TypeScrape}, js(script)}})
		var ae *actions.Error
		if !errors.As(err, &ae) || ae.Index != 1 || ae.Type != actions.TypeExecuteJavascript || !strings.Contains(ae.Reason, "nope") {
			t.Errorf("%s: err %v, want action error at index 1 naming nope", name, err)
		}
	}
}

func TestActionsErrors(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, map[string]string{"/": `<html><body><button class="b" onclick="this.textContent='clicked'">one</button>
<button class="b" onclick="this.textContent='clicked'">two</button><div id="late"></div>
<script>setTimeout(() => { document.getElementById('late').innerHTML = '<p id="ready">ready</p>'; }, 300);</script></body></html>`}, nil)
	ctx := testCtx(t, 30*time.Second)
	tests := []struct {
		name    string
		actions []actions.Action
		index   int // -1 = no error
	}{
		{"click all with no match is fine", []actions.Action{{Type: "click", Selector: ".none", All: true}}, -1},
		{"click with no match", []actions.Action{{Type: "scrape"}, {Type: "click", Selector: ".none"}}, 1},
		{"invalid selector", []actions.Action{{Type: "click", Selector: "!!"}}, 0},
		{"scroll missing element", []actions.Action{{Type: "scroll", Selector: "#nope"}}, 0},
		{"wait for selector", []actions.Action{{Type: "wait", Selector: "#ready"}, {Type: "wait", Milliseconds: 10}}, -1},
		{"unknown key", []actions.Action{{Type: "press", Key: "Hyperdrive"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := p.Render(ctx, Request{URL: s.URL + "/", Actions: tt.actions})
			var ae *actions.Error
			switch {
			case tt.index < 0 && err != nil:
				t.Errorf("err %v", err)
			case tt.index >= 0 && (!errors.As(err, &ae) || ae.Index != tt.index):
				t.Errorf("err %v, want action error at %d", err, tt.index)
			}
		})
	}

	res, err := p.Render(ctx, Request{URL: s.URL + "/", Actions: []actions.Action{{Type: "click", Selector: ".b", All: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(res.HTML, ">clicked<"); n != 2 {
		t.Errorf("click all clicked %d buttons, want 2", n)
	}
}

// imageSize decodes an image's dimensions and format.
func imageSize(t *testing.T, data []byte) (w, h int, format string) {
	t.Helper()
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("decode image: %v", err)
	}
	return cfg.Width, cfg.Height, format
}

func TestScreenshotsAndPDF(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, map[string]string{"/": `<html><head><style>html, body { margin: 0 } #tall { height: 3000px; background: linear-gradient(red, blue) }</style></head>
<body><div id="tall">tall</div></body></html>`}, nil)
	ctx := testCtx(t, 30*time.Second)
	res, err := p.Render(ctx, Request{URL: s.URL + "/", Screenshot: &Screenshot{}, Actions: []actions.Action{
		{Type: "screenshot", FullPage: true},
		{Type: "screenshot", Quality: 60, Viewport: &actions.Viewport{Width: 800, Height: 600}},
		{Type: "pdf", PDFFormat: "A4", Landscape: true, Scale: 0.5},
		{Type: "pdf"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if w, h, f := imageSize(t, res.Screenshot); w != desktopWidth || h != desktopHeight || f != "png" || res.ScreenshotType != "image/png" {
		t.Errorf("viewport screenshot %dx%d %s %s", w, h, f, res.ScreenshotType)
	}
	shots := res.Actions.Screenshots
	if len(shots) != 2 {
		t.Fatalf("%d screenshots", len(shots))
	}
	if w, h, f := imageSize(t, shots[0].Data); w != desktopWidth || h != 3000 || f != "png" || shots[0].ContentType != "image/png" {
		t.Errorf("full page screenshot %dx%d %s", w, h, f)
	}
	if w, h, f := imageSize(t, shots[1].Data); w != 800 || h != 600 || f != "jpeg" || shots[1].ContentType != "image/jpeg" {
		t.Errorf("jpeg viewport screenshot %dx%d %s", w, h, f)
	}
	if len(res.Actions.PDFs) != 2 {
		t.Fatalf("%d pdfs", len(res.Actions.PDFs))
	}
	for _, pdf := range res.Actions.PDFs {
		if !bytes.HasPrefix(pdf.Data, []byte("%PDF-")) || pdf.ContentType != "application/pdf" {
			t.Errorf("pdf starts %q", pdf.Data[:min(8, len(pdf.Data))])
		}
	}
	// A4 landscape is 842x595 points.
	if !bytes.Contains(res.Actions.PDFs[0].Data, []byte("/MediaBox [0 0 841.91998 595.91998]")) && !bytes.Contains(res.Actions.PDFs[0].Data, []byte("/MediaBox [0 0 842")) {
		t.Logf("A4 landscape media box not found (format may differ)")
	}

	// Full-page screenshot format with a custom viewport and JPEG.
	res, err = p.Render(ctx, Request{URL: s.URL + "/", Screenshot: &Screenshot{FullPage: true, Quality: 80, Viewport: &Viewport{Width: 1000, Height: 500}}})
	if err != nil {
		t.Fatal(err)
	}
	if w, h, f := imageSize(t, res.Screenshot); w != 1000 || h != 3000 || f != "jpeg" || res.ScreenshotType != "image/jpeg" {
		t.Errorf("full page jpeg %dx%d %s", w, h, f)
	}
}

// pngSize reads a PNG's dimensions from its header.
func pngSize(t *testing.T, b []byte) (int, int) {
	t.Helper()
	if len(b) < 24 || string(b[1:4]) != "PNG" {
		t.Fatalf("not a PNG: %.8q", b)
	}
	return int(binary.BigEndian.Uint32(b[16:20])), int(binary.BigEndian.Uint32(b[20:24]))
}

// TestScreenshotPixelBudget: a full-page screenshot of a very tall page is
// cut to the per-image pixel budget (by area), and the screenshot actions
// of one request share a budget: the one over it fails with a clear
// reason instead of holding more images.
func TestScreenshotPixelBudget(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, map[string]string{"/": `<html><body style="margin:0"><div style="height:40000px;background:linear-gradient(red,blue)">tall</div></body></html>`}, nil)
	ctx := testCtx(t, 60*time.Second)
	res, err := p.Render(ctx, Request{URL: s.URL + "/", Screenshot: &Screenshot{FullPage: true}})
	if err != nil {
		t.Fatal(err)
	}
	w, h := pngSize(t, res.Screenshot)
	if w*h > actions.MaxImagePixels || w != 1920 || h < 8000 {
		t.Errorf("full-page screenshot %dx%d (%d pixels), want 1920 wide within %d pixels", w, h, w*h, actions.MaxImagePixels)
	}
	shot := actions.Action{Type: actions.TypeScreenshot, FullPage: true}
	_, err = p.Render(ctx, Request{URL: s.URL + "/", Actions: []actions.Action{shot, shot, shot}})
	var ae *actions.Error
	if !errors.As(err, &ae) || ae.Index != 2 || !strings.Contains(ae.Reason, "pixels") {
		t.Fatalf("third full-page screenshot: %v, want an action error on index 2 about the pixel budget", err)
	}
	res, err = p.Render(ctx, Request{URL: s.URL + "/", Actions: []actions.Action{shot, shot}})
	if err != nil || len(res.Actions.Screenshots) != 2 {
		t.Fatalf("two full-page screenshots: %v", err)
	}
}

// TestActionMediaWrittenOutWhenTaken: with StoreMedia, each screenshot and
// PDF is handed over as soon as it is taken (before the next action runs)
// and the results keep only the reference; a store error ends the render
// as itself.
func TestActionMediaWrittenOutWhenTaken(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, map[string]string{"/": `<html><body><p id="n">0</p></body></html>`}, nil)
	ctx := testCtx(t, 30*time.Second)
	var mu sync.Mutex
	var stored []string
	store := func(ctx context.Context, data []byte, ct string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if len(data) == 0 {
			return "", errors.New("empty media")
		}
		stored = append(stored, ct)
		return fmt.Sprintf("ref-%d", len(stored)), nil
	}
	js := func(src string) actions.Action {
		return actions.Action{Type: actions.TypeExecuteJavascript, Script: src}
	}
	res, err := p.Render(ctx, Request{URL: s.URL + "/", StoreMedia: store, Actions: []actions.Action{
		{Type: actions.TypeScreenshot},
		js(`document.getElementById('n').textContent = '1'`),
		{Type: actions.TypePDF},
	}})
	if err != nil {
		t.Fatal(err)
	}
	shots, pdfs := res.Actions.Screenshots, res.Actions.PDFs
	if len(shots) != 1 || len(pdfs) != 1 || shots[0].Ref != "ref-1" || shots[0].Data != nil || pdfs[0].Ref != "ref-2" || pdfs[0].Data != nil {
		t.Fatalf("results keep %+v %+v", shots, pdfs)
	}
	if len(stored) != 2 || stored[0] != "image/png" || stored[1] != "application/pdf" {
		t.Errorf("stored %v", stored)
	}
	full := errors.New("quota used up")
	_, err = p.Render(ctx, Request{URL: s.URL + "/", Actions: []actions.Action{{Type: actions.TypeScreenshot}},
		StoreMedia: func(context.Context, []byte, string) (string, error) { return "", full }})
	if !errors.Is(err, full) {
		t.Errorf("store failure: %v, want it unwrapped from the render", err)
	}
	var ae *actions.Error
	if errors.As(err, &ae) {
		t.Errorf("store failure reported as an action failure: %v", err)
	}
}
