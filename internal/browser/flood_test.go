package browser

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/firegate/firegate/internal/testenv"
)

// TestTabHearsNoConsole renders a page that logs, warns, reports an error
// and throws in a tab the test listens to: none of it reaches the server
// (no Runtime or Log event), and the render still evaluates what it
// needs. It starts a Chrome of its own with one tab, so that the render
// gets the tab the test listens to.
func TestTabHearsNoConsole(t *testing.T) {
	t.Parallel()
	p := New(Options{ChromePath: testenv.ChromePath(t), MaxTabs: 1, AllowPrivate: true}, testenv.Logger(t))
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	s := newSite(t, map[string]string{
		"/": `<html><body><p id="t">start</p><script>
const s = 'x'.repeat(64 * 1024);
for (let i = 0; i < 50; i++) { console.log(s, i); console.warn(s); console.error(s); }
setTimeout(() => { throw new Error('uncaught ' + s) }, 0);
fetch('/missing');
document.getElementById('t').textContent = 'logged';
</script></body></html>`,
	}, nil)
	ctx := testCtx(t, 60*time.Second)
	inst, err := p.instance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sl, tb, err := p.takeTab(ctx, inst, "", false, "")
	if err != nil {
		t.Fatal(err)
	}
	var heard atomic.Int64
	if err := chromedp.Listen(tb.ctx, func(ev any) {
		switch ev.(type) {
		case *runtime.EventConsoleAPICalled, *runtime.EventExceptionThrown, *cdplog.EventEntryAdded:
			heard.Add(1)
		}
	}); err != nil {
		t.Fatal(err)
	}
	p.releaseTab(ctx, inst, sl, tb, true)
	res, err := p.Render(ctx, Request{URL: s.URL + "/", WaitFor: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.HTML, "logged") {
		t.Fatalf("html %q", res.HTML)
	}
	p.closing.Wait()
	inst.slots.mu.Lock()
	reused := len(inst.slots.all) == 1 && len(inst.slots.all[0].idle) == 1 && inst.slots.all[0].idle[0] == tb
	inst.slots.mu.Unlock()
	if !reused {
		t.Fatal("the render did not use the tab the test listened to")
	}
	if n := heard.Load(); n != 0 {
		t.Errorf("the server's tab received %d console, exception or log events", n)
	}
}
