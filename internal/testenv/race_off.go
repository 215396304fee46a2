//go:build !race

package testenv

// raceEnabled reports whether the race detector is on.
const raceEnabled = false
