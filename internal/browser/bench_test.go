package browser

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/firegate/firegate/internal/testenv"
)

// benchPage is a small static page.
const benchPage = `<!doctype html><html><head><title>Bench</title><meta name="description" content="A small static page"></head>
<body><header><nav><a href="/a">A</a> <a href="/b">B</a></nav></header><main><h1>Static page</h1>
<p>Some text with a <a href="/link">link</a>.</p><ul><li>one</li><li>two</li><li>three</li></ul></main></body></html>`

// benchRender renders the static page b.N times with conc workers and
// reports ms/op (wall time per page), pages/s and the p50 latency.
func benchRender(b *testing.B, conc int) {
	p := testPool(b)
	s := newSite(b, map[string]string{"/": benchPage}, nil)
	ctx := testCtx(b, 10*time.Minute)
	req := Request{URL: s.URL + "/"}
	// Warm up: start Chrome and one tab per worker.
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			if _, err := p.Render(ctx, req); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()

	var next atomic.Int64
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	start := time.Now()
	for range conc {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				t0 := time.Now()
				if _, err := p.Render(ctx, req); err != nil {
					b.Error(err)
					return
				}
				lat[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(elapsed.Milliseconds())/float64(b.N), "ms/op")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "pages/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
}

func BenchmarkRenderStatic1(b *testing.B) { benchRender(b, 1) }
func BenchmarkRenderStatic8(b *testing.B) { benchRender(b, 8) }

// BenchmarkRenderStaticSpaced renders one page every 300 ms, as a lightly
// loaded server sees them: the spare tab is ready, so the latency is the
// warm latency of one render.
func BenchmarkRenderStaticSpaced(b *testing.B) {
	p := testPool(b)
	s := newSite(b, map[string]string{"/": benchPage}, nil)
	ctx := testCtx(b, 10*time.Minute)
	req := Request{URL: s.URL + "/"}
	if _, err := p.Render(ctx, req); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		b.StopTimer()
		// The spacing between renders is what this benchmark measures
		// under (the spare tab is ready again).
		time.Sleep(300 * time.Millisecond)
		b.StartTimer()
		t0 := time.Now()
		if _, err := p.Render(ctx, req); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "p90-ms")
}

// clientPage builds its content by script after load, as a client-rendered
// site does: about 20 KB of text.
const clientPage = `<!doctype html><html><head><title>Client</title></head><body><div id="app">Loading</div><script>
const words = "the harbour lights were dim when the boats came in and the keeper wrote in her log".split(" ");
setTimeout(() => { let html = ""; for (let s = 0; html.length < 20000; s++) { html += "<h2>section " + s + "</h2><p>";
for (let j = 0; j < 80; j++) html += words[(s * 7 + j) % words.length] + " "; html += "</p>"; }
document.getElementById("app").innerHTML = html; }, 20);
</script></body></html>`

// BenchmarkRenderIsolation renders a client-rendered page at concurrency
// 8 with waitFor 100 ms, with and without the guarded proxy, for one team
// (renders share the team's browser context) and for a new team per render
// (a browser context per render), to measure what each costs.
func BenchmarkRenderIsolation(b *testing.B) {
	s := newSite(b, map[string]string{"/": clientPage}, nil)
	for _, bc := range []struct {
		name   string
		direct bool
		teams  bool
	}{
		{"proxy/one-team", false, false},
		{"direct/one-team", true, false},
		{"proxy/team-per-render", false, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := New(Options{ChromePath: testenv.ChromePath(b), MaxTabs: 8, AllowPrivate: true}, slog.New(slog.DiscardHandler))
			p.direct = bc.direct
			b.Cleanup(func() { p.Close() })
			ctx := testCtx(b, 10*time.Minute)
			var seq atomic.Int64
			render := func() error {
				req := Request{URL: s.URL + "/", WaitFor: 100 * time.Millisecond, Team: "bench"}
				if bc.teams {
					req.Team = fmt.Sprint("team-", seq.Add(1))
				}
				_, err := p.Render(ctx, req)
				return err
			}
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					if err := render(); err != nil {
						b.Error(err)
					}
				})
			}
			wg.Wait()
			var next atomic.Int64
			b.ResetTimer()
			start := time.Now()
			for range 8 {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						if err := render(); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "pages/s")
		})
	}
}

// animatedPage animates a viewport-sized element for as long as it is
// open: Chrome paints it at every frame it shows.
var animatedPage = `<html><head><style>@keyframes k{from{background:#f00;transform:rotate(0)}to{background:#00f;transform:rotate(360deg)}}
#a{width:1800px;height:1000px;animation:k 1s infinite linear;font-size:40px}</style></head><body><div id="a">` +
	strings.Repeat("lorem ipsum dolor ", 300) + `</div></body></html>`

// BenchmarkRenderPaint renders an animated page with waitFor 1s, with and
// without a screenshot, and reports the CPU time of Chrome's processes per
// render (chrome-cpu-ms/op): what painting the viewport costs when nothing
// looks at it (see offscreen).
//
//	go test ./internal/browser -run '^$' -bench RenderPaint -benchtime 5x
func BenchmarkRenderPaint(b *testing.B) {
	p := New(Options{ChromePath: testenv.ChromePath(b), MaxTabs: 1, AllowPrivate: true}, slog.New(slog.DiscardHandler))
	b.Cleanup(func() { _ = p.Close() })
	s := newSite(b, map[string]string{"/": animatedPage}, nil)
	ctx := testCtx(b, 10*time.Minute)
	if _, err := p.Render(ctx, Request{URL: s.URL + "/"}); err != nil {
		b.Fatal(err)
	}
	p.mu.Lock()
	root := chromedp.FromContext(p.inst.ctx).Browser.Process().Pid
	p.mu.Unlock()
	for _, shot := range []bool{false, true} {
		b.Run(fmt.Sprintf("screenshot=%v", shot), func(b *testing.B) {
			req := Request{URL: s.URL + "/", WaitFor: time.Second}
			if shot {
				req.Screenshot = &Screenshot{Quality: 10}
			}
			c0 := processTreeCPU(root)
			for b.Loop() {
				if _, err := p.Render(ctx, req); err != nil {
					b.Fatal(err)
				}
				p.closing.Wait()
			}
			b.ReportMetric(float64((processTreeCPU(root)-c0).Milliseconds())/float64(b.N), "chrome-cpu-ms/op")
		})
	}
}

// processTreeCPU returns the CPU time (user + system) of root and its
// descendants, exited ones included, from /proc.
func processTreeCPU(root int) time.Duration {
	var total int64
	for _, t := range processTree(root) {
		total += t
	}
	return time.Duration(total) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// processTree returns root and its descendants, each with its CPU time in
// clock ticks: utime, stime, and cutime, cstime (the CPU of the children it
// reaped: renderers that exited count with their zygote).
func processTree(root int) map[int]int64 {
	parent, ticks := map[int]int{}, map[int]int64{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		i := bytes.LastIndexByte(st, ')')
		if err != nil || i < 0 || i+2 > len(st) {
			continue
		}
		f := strings.Fields(string(st[i+2:]))
		if len(f) < 15 {
			continue
		}
		parent[pid], _ = strconv.Atoi(f[1])
		for _, j := range []int{11, 12, 13, 14} {
			n, _ := strconv.ParseInt(f[j], 10, 64)
			ticks[pid] += n
		}
	}
	out := map[int]int64{}
	for pid, t := range ticks {
		for q := pid; q > 1; q = parent[q] {
			if q == root {
				out[pid] = t
				break
			}
		}
	}
	return out
}

// BenchmarkRenderSequence renders a small client-rendered page one render
// at a time in one tab, from the same site each time or from two sites in
// turn, and reports the CPU time of Chrome's processes per render
// (chrome-cpu-ms/op) and the processes Chrome started per render
// (procs/op): what resetting the tab between renders costs (see blankTab).
//
//	go test ./internal/browser -run '^$' -bench RenderSequence -benchtime 40x
func BenchmarkRenderSequence(b *testing.B) {
	p := New(Options{ChromePath: testenv.ChromePath(b), MaxTabs: 1, AllowPrivate: true}, slog.New(slog.DiscardHandler))
	b.Cleanup(func() { _ = p.Close() })
	s := newSite(b, map[string]string{"/": clientPage}, nil)
	ctx := testCtx(b, 10*time.Minute)
	if _, err := p.Render(ctx, Request{URL: s.URL + "/"}); err != nil {
		b.Fatal(err)
	}
	p.mu.Lock()
	root := chromedp.FromContext(p.inst.ctx).Browser.Process().Pid
	p.mu.Unlock()
	// 127.0.0.1 and localhost are two sites on the same server.
	other := strings.Replace(s.URL, "127.0.0.1", "localhost", 1)
	for _, name := range []string{"same-site", "two-sites"} {
		b.Run(name, func(b *testing.B) {
			c0, seen, started := processTreeCPU(root), processTree(root), 0
			i := 0
			for b.Loop() {
				u := s.URL
				if name == "two-sites" && i%2 == 1 {
					u = other
				}
				i++
				if _, err := p.Render(ctx, Request{URL: u + "/", WaitFor: 100 * time.Millisecond}); err != nil {
					b.Fatal(err)
				}
				p.closing.Wait()
				for pid := range processTree(root) {
					if _, ok := seen[pid]; !ok {
						seen[pid] = 0
						started++
					}
				}
			}
			b.ReportMetric(float64((processTreeCPU(root)-c0).Milliseconds())/float64(b.N), "chrome-cpu-ms/op")
			b.ReportMetric(float64(started)/float64(b.N), "procs/op")
		})
	}
}

// floodPage logs n strings of mb megabytes each to the console, then shows
// its text.
func floodPage(n, mb int) string {
	return fmt.Sprintf(`<!doctype html><html><body><p id="t">flooding</p><script>
const s = 'x'.repeat(%d * 1024 * 1024);
for (let i = 0; i < %d; i++) console.log(s + i);
document.getElementById('t').textContent = 'flooded';
</script></body></html>`, mb, n)
}

// BenchmarkConsoleFlood renders a page that logs 4 x 100 MB to the console
// and reports the server's peak RSS during the render (the kernel's
// high-water mark, reset before each render) and the render's time.
func BenchmarkConsoleFlood(b *testing.B) {
	p := testPool(b)
	s := newSite(b, map[string]string{"/": floodPage(4, 100), "/small": benchPage}, nil)
	ctx := testCtx(b, 10*time.Minute)
	if _, err := p.Render(ctx, Request{URL: s.URL + "/small"}); err != nil { // start Chrome
		b.Fatal(err)
	}
	var peak, base int64
	var took time.Duration
	for b.Loop() {
		debug.FreeOSMemory()
		base = rssKB("VmRSS")
		resetPeakRSS(b)
		t0 := time.Now()
		res, err := p.Render(ctx, Request{URL: s.URL + "/"})
		if err != nil {
			b.Fatal(err)
		}
		took = time.Since(t0)
		if !strings.Contains(res.HTML, "flooded") {
			b.Fatalf("html %q", res.HTML)
		}
		peak = max(peak, rssKB("VmHWM"))
	}
	b.ReportMetric(float64(base)/1024, "base-MB")
	b.ReportMetric(float64(peak)/1024, "peak-MB")
	b.ReportMetric(took.Seconds(), "s/render")
}

// rssKB reads a field (VmRSS, VmHWM) of /proc/self/status in kB.
func rssKB(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// resetPeakRSS resets the kernel's high-water mark of this process's RSS.
func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("cannot reset the peak RSS: %v", err)
	}
}

// BenchmarkTabFairness: on a pool of 4 tabs, team A keeps 6 renders with
// waitFor 30 s in flight; team B's render of a small page is timed from
// its call to its result (B's wait for a tab included).
func BenchmarkTabFairness(b *testing.B) {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	p := New(Options{ChromePath: testenv.ChromePath(b), MaxTabs: 4, AllowPrivate: true}, log)
	b.Cleanup(func() { _ = p.Close() })
	s := newSite(b, map[string]string{"/": benchPage}, nil)
	ctx := testCtx(b, 10*time.Minute)
	if _, err := p.Render(ctx, Request{URL: s.URL + "/", Team: "B"}); err != nil { // start Chrome
		b.Fatal(err)
	}
	var worst time.Duration
	for b.Loop() {
		actx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() { _, _ = p.Render(actx, Request{URL: s.URL + "/", Team: "A", WaitFor: 30 * time.Second}) })
		}
		// A has taken what it can: 3 tabs, its other renders waiting.
		testenv.Eventually(b, time.Minute, func() bool {
			held, waiting := p.tabs.Held("A")
			return held == 3 && waiting == 3
		}, "team A never held 3 tabs with 3 renders waiting")
		t0 := time.Now()
		if _, err := p.Render(ctx, Request{URL: s.URL + "/", Team: "B"}); err != nil {
			b.Fatal(err)
		}
		worst = max(worst, time.Since(t0))
		cancel()
		wg.Wait()
	}
	b.ReportMetric(worst.Seconds(), "other-team-s")
}
