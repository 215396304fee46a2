package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// The join step.
//
// With per-run cgroups, the server does not start bwrap itself but its
// own binary with joinEnv holding a joinConfig: that process writes its
// PID to each of the run's cgroup.procs files, takes the sandbox's host
// user (when the server is root), asks to die with the server, and
// becomes bwrap (exec, with bwrap's arguments as its own). Every process
// of the run descends from it, so every one is born in the run's cgroups.

// joinEnv is the variable that makes the binary the join step.
const joinEnv = "FIREGATE_SANDBOX_JOIN"

// joinConfig is what the join step is told.
type joinConfig struct {
	Procs  []string `json:"procs"`  // cgroup.procs files to join
	UID    int      `json:"uid"`    // host user to become; -1 = stay
	GID    int      `json:"gid"`    // its group
	Parent int      `json:"parent"` // the server's PID
	Bwrap  string   `json:"bwrap"`
}

// exitJoin is the join step's exit status when it could not become bwrap.
const exitJoin = 125

func joinMain(raw string) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "sandbox: "+format+"\n", args...)
		return exitJoin
	}
	var cfg joinConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil || cfg.Bwrap == "" {
		return fail("bad join configuration")
	}
	self := []byte(strconv.Itoa(os.Getpid()))
	for _, f := range cfg.Procs {
		if err := os.WriteFile(f, self, 0); err != nil {
			return fail("join the run's cgroup: %v", err)
		}
	}
	if cfg.UID >= 0 {
		if err := syscall.Setgroups([]int{}); err != nil {
			return fail("drop groups: %v", err)
		}
		if err := syscall.Setresgid(cfg.GID, cfg.GID, cfg.GID); err != nil {
			return fail("set group: %v", err)
		}
		if err := syscall.Setresuid(cfg.UID, cfg.UID, cfg.UID); err != nil {
			return fail("set user: %v", err)
		}
	}
	// A change of user clears the parent-death signal: set it again, then
	// check that the server did not die before.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		return fail("parent-death signal: %v", err)
	}
	if os.Getppid() != cfg.Parent {
		return fail("the server is gone")
	}
	argv := append([]string{cfg.Bwrap}, os.Args[1:]...)
	err := syscall.Exec(cfg.Bwrap, argv, []string{})
	return fail("start bwrap: %v", err)
}
