package browser

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/firegate/firegate/internal/testenv"
)

// Renders of pages of two sites in turn in one tab keep its renderer
// process: Chrome starts no process per render.
func TestRenderKeepsRendererAcrossSites(t *testing.T) {
	t.Parallel()
	p := New(Options{ChromePath: testenv.ChromePath(t), MaxTabs: 1, AllowPrivate: true}, testenv.Logger(t))
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	s := newSite(t, map[string]string{"/": `<html><body><p id="o"></p><script>document.getElementById('o').textContent = 'at ' + location.hostname</script></body></html>`}, nil)
	ctx := testCtx(t, 60*time.Second)
	sites := []string{s.URL, strings.Replace(s.URL, "127.0.0.1", "localhost", 1)}
	render := func(i int) {
		t.Helper()
		res, err := p.Render(ctx, Request{URL: sites[i%2] + "/"})
		if err != nil {
			t.Fatal(err)
		}
		p.closing.Wait()
		if want := []string{"at 127.0.0.1", "at localhost"}[i%2]; !strings.Contains(res.HTML, want) {
			t.Fatalf("render %d: %q is not in %s", i, want, res.HTML)
		}
	}
	render(0)
	render(1)
	p.mu.Lock()
	root := chromedp.FromContext(p.inst.ctx).Browser.Process().Pid
	p.mu.Unlock()
	seen, started := processTree(root), 0
	for i := range 8 {
		render(i)
		for pid := range processTree(root) {
			if _, ok := seen[pid]; !ok {
				seen[pid] = 0
				started++
			}
		}
	}
	if started > 2 {
		t.Errorf("Chrome started %d processes over 8 renders of two sites in turn, want at most 2", started)
	}
}
