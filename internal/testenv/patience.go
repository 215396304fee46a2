package testenv

import "time"

// raceSlowdown is how much longer code takes under the race detector: Go
// documents 2-20x; the bounded-work tests (sitemap bombs, hostile pages,
// costly recipes) measured 5-8x on a loaded 2-core machine.
const raceSlowdown = 10

// Patient returns d, or d times raceSlowdown under the race detector.
// Tests that check that hostile input is bounded in time (it finishes at
// all, in seconds and not minutes) set their limits with it, so that the
// race step of CI checks the same bound instead of the speed of
// instrumented code.
func Patient(d time.Duration) time.Duration {
	if raceEnabled {
		return d * raceSlowdown
	}
	return d
}
