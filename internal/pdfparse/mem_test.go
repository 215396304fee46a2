package pdfparse

import (
	"runtime"
	"testing"
	"time"
)

// TestMemory2000Pages checks that the heap stays bounded while a 2,000-page
// file is parsed page by page.
func TestMemory2000Pages(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	data := longDoc(2000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	peak := uint64(0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err := Parse(t.Context(), data, Options{Mode: ModeFast})
		if err != nil || res.NumPages != 2000 {
			t.Errorf("Parse: %v", err)
		}
	}()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			// The sampling period of the heap while Parse runs: a
			// duration is what this loop is made of.
			time.Sleep(time.Millisecond)
		}
	}
	runtime.ReadMemStats(&after)
	t.Logf("file %d KB, heap before %d KB, peak in use %d KB, allocated total %d MB", len(data)/1024, before.HeapInuse/1024, peak/1024, (after.TotalAlloc-before.TotalAlloc)>>20)
	if peak-before.HeapInuse > 64<<20 {
		t.Errorf("peak heap grew by %d MB", (peak-before.HeapInuse)>>20)
	}
}
