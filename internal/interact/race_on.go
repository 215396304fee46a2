//go:build race

package interact

// raceBuild: built with the race detector, whose shadow memory does not
// fit RLIMIT_DATA; the code runner then limits only its heap.
const raceBuild = true
