package browser

import (
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/actions"
)

// Popups are refused and links aimed at other windows open in the tab, so
// every request stays under the guard; dialogs are answered so that they
// never block the page.
func TestRenderPopupsAndDialogs(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	s := newSite(t, map[string]string{
		"/": `<html><body><a id="l" href="/next" target="_blank">open</a><a id="stay" href="/elsewhere" target="side" onclick="return false">stay</a><button id="ask" onclick="this.textContent = confirm('sure?') ? 'yes' : 'no'">ask</button>
<script>alert('hello'); document.body.dataset.popup = String(window.open('/popup') === null);</script></body></html>`,
		"/next":  `<html><body>next page</body></html>`,
		"/popup": `<html><body>popup</body></html>`,
	}, nil)
	res, err := p.Render(testCtx(t, 20*time.Second), Request{URL: s.URL + "/", Actions: []actions.Action{
		{Type: actions.TypeExecuteJavascript, Script: `document.body.dataset.popup`},
		{Type: actions.TypeClick, Selector: "#ask"},
		{Type: actions.TypeExecuteJavascript, Script: `document.getElementById('ask').textContent`},
		{Type: actions.TypeClick, Selector: "#stay"},
		{Type: actions.TypeScrape},
		{Type: actions.TypeClick, Selector: "#l"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	js := res.Actions.JavascriptReturns
	if js[0].Value != "true" || s.hit("/popup") != 0 {
		t.Errorf("window.open was not refused: %v, %d requests", js[0].Value, s.hit("/popup"))
	}
	if js[1].Value != "yes" {
		t.Errorf("confirm answered %v, want accepted", js[1].Value)
	}
	// A click that did not leave the page leaves the link's own target in
	// the page's HTML.
	if sc := res.Actions.Scrapes; len(sc) != 1 || !strings.Contains(sc[0].HTML, `target="side"`) || strings.Contains(sc[0].HTML, "_self") {
		t.Errorf("the HTML after a click holds the server's target, not the page's: %v", sc)
	}
	if res.URL != s.URL+"/next" || !strings.Contains(res.HTML, "next page") {
		t.Errorf("target=_blank link did not open in the tab: %s %s", res.URL, res.HTML)
	}
}
