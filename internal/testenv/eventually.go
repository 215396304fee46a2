package testenv

import (
	"fmt"
	"testing"
	"time"
)

// Eventually waits until cond holds and fails tb (Fatal) with the message
// when timeout passes first; the timeout is Patient's under the race
// detector. cond is checked at once, then after pauses growing from 1 ms
// to 50 ms, so a condition that is nearly true costs the test nearly
// nothing and a slow one does not spin. It is the one place tests wait on
// a condition they cannot be signalled about.
func Eventually(tb testing.TB, timeout time.Duration, cond func() bool, format string, args ...any) {
	tb.Helper()
	if !WaitFor(Patient(timeout), cond) {
		tb.Fatalf("after %v: %s", Patient(timeout), fmt.Sprintf(format, args...))
	}
}

// WaitFor is Eventually without a test: it reports whether cond held
// within timeout (not scaled), for a caller that fails in its own way or
// may be off a test's goroutine (where Fatal must not be called).
func WaitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	pause := time.Millisecond
	for {
		if cond() {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(min(pause, time.Until(deadline)))
		pause = min(2*pause, 50*time.Millisecond)
	}
}
