package browser

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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
