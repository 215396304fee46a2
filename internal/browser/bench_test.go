package browser

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
