package crawljob_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/crawljob"
	"github.com/firegate/firegate/internal/store"
)

// BenchmarkStartBatch measures how long POST /v2/batch/scrape takes to
// queue a batch of BATCH_BENCH_URLS (default 10,000) URLs (the claim of
// every URL and the insert of its page job) and how long another writer
// waits meanwhile: a worker's heartbeat, written every 10 ms during the
// seeding, reports its longest wait. The queue's workers are stopped, so
// only the seeding runs.
func BenchmarkStartBatch(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("BATCH_BENCH_URLS")); err == nil && v > 0 {
		n = v
	}
	urls := make([]string, n)
	for i := range urls {
		urls[i] = fmt.Sprintf("https://example.invalid/page/%d", i)
	}
	for _, kind := range stores {
		b.Run(kind, func(b *testing.B) {
			h := newHarness(b, openStore(b, kind), harnessOptions{deferStart: true})
			ws, ok := h.st.(store.WorkerStore)
			if !ok {
				b.Fatal("the store keeps no worker heartbeats")
			}
			stop := make(chan struct{})
			waits := make(chan time.Duration, 1)
			go func() {
				var longest time.Duration
				defer func() { waits <- longest }()
				for {
					select {
					case <-stop:
						return
					case <-time.After(10 * time.Millisecond):
					}
					t0 := time.Now()
					if err := ws.Heartbeat(b.Context(), "bench-other-worker"); err != nil {
						b.Error(err)
						return
					}
					longest = max(longest, time.Since(t0))
				}
			}()
			start := time.Now()
			for range b.N {
				id := crawljob.NewJobID()
				if err := h.runner.StartBatch(b.Context(), store.Job{ID: id, TeamID: h.team.ID}, defaultOptions(), urls); err != nil {
					b.Fatal(err)
				}
			}
			elapsed := time.Since(start)
			close(stop)
			b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "urls/s")
			b.ReportMetric(float64((<-waits).Milliseconds()), "max-heartbeat-wait-ms")
		})
	}
}
