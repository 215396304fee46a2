//go:build race

package sandbox

// raceBuild: built with the race detector (tests only), whose runtime
// allocates shadow memory per thread that the init's memory limit does not
// fit (it failed under load): the init then sets no RLIMIT_DATA and starts
// no threads of its own (no warm threads, no total-memory watch). The
// server's binary is never built so.
const raceBuild = true
