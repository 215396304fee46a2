//go:build !race

package sandbox

// raceBuild: built with the race detector (see race_on.go).
const raceBuild = false
