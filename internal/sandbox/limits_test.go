package sandbox

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/testenv"
)

var (
	watched    *Sandbox
	watchedErr error
	watchedMu  sync.Mutex
)

// watchedSandbox is a sandbox whose runs go without cgroups (the server's
// watchdog alone bounds them), whatever this machine allows.
func watchedSandbox(tb testing.TB) *Sandbox {
	tb.Helper()
	newSandbox(tb) // what it needs is there
	watchedMu.Lock()
	defer watchedMu.Unlock()
	if watched == nil && watchedErr == nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		watched, watchedErr = New(ctx, Config{Runtimes: []string{Python, Bash}, NoCgroups: true, Log: testenv.Logger(tb)})
	}
	if watchedErr != nil {
		tb.Fatalf("sandbox: %v", watchedErr)
	}
	return watched
}

// limitModes are the ways a run's processes are bounded together that
// this machine has: per-run cgroups (where allowed) and the server's
// watchdog alone.
func limitModes(t *testing.T) map[string]*Sandbox {
	m := map[string]*Sandbox{"watchdog": watchedSandbox(t)}
	if s := newSandbox(t); s.Cgroups() {
		m["cgroups"] = s
	}
	return m
}

// TestCgroupsWhereAllowed: a server that is root on a machine with the
// cgroup v1 memory and pids hierarchies (this project's and its CI's)
// runs each program in cgroups of its own.
func TestCgroupsWhereAllowed(t *testing.T) {
	s := newSandbox(t)
	_, mem := os.Stat("/sys/fs/cgroup/memory/memory.limit_in_bytes")
	_, pids := os.Stat("/sys/fs/cgroup/pids")
	if os.Geteuid() != 0 || mem != nil || pids != nil {
		t.Logf("not root on a cgroup v1 machine: cgroups %v", s.Cgroups())
		return
	}
	if !s.Cgroups() {
		t.Fatal("root with cgroup v1 memory and pids hierarchies, yet the runs have no cgroups")
	}
}

// TestDevShmBounded: /dev/shm is a tmpfs of Limits.Shm (it was the
// unbounded /dev tmpfs: 24 writes of 64 MB held 1.5 GB), and nothing
// else of /dev is writable.
func TestDevShmBounded(t *testing.T) {
	s := newSandbox(t)
	res := run(t, s, Spec{Language: Bash, Code: `
head -c 100000000 /dev/zero > /dev/shm/big 2>/dev/null
echo "shm $(stat -c %s /dev/shm/big)"
echo x > /dev/new 2>/dev/null && echo "wrote /dev"
echo x > /dev/null && echo "null ok"
`})
	size := -1
	for l := range strings.SplitSeq(res.Stdout, "\n") {
		if v, ok := strings.CutPrefix(l, "shm "); ok {
			size, _ = strconv.Atoi(v)
		}
	}
	if size < 0 || size > DefaultShm || strings.Contains(res.Stdout, "wrote /dev") || !strings.Contains(res.Stdout, "null ok") {
		t.Fatalf("/dev/shm held %d bytes (limit %d), stdout %q", size, DefaultShm, res.Stdout)
	}
}

// TestRunMemoryHolds: the run's memory limit holds whatever the program
// does: with every process it can see stopped (the watchdog used to run
// in the sandbox, where kill -STOP took it out: three 450 MB allocations
// then held 1.37 GB against 1 GB), and for memory that is no process's
// resident memory (files of its tmpfs, memfds). Each run is killed with
// the reason, not at its timeout, with cgroups and with the watchdog
// alone.
func TestRunMemoryHolds(t *testing.T) {
	for mode, s := range limitModes(t) {
		t.Run(mode, func(t *testing.T) {
			for _, c := range []struct {
				name string
				lim  Limits
				code string
			}{
				{"stopped", Limits{Memory: 256 << 20, TotalMemory: 400 << 20}, `kill -STOP -1
for i in 1 2 3; do python3 -c "import time; b = b'x' * (150 << 20); print('held', flush=True); time.sleep(60)" & done; wait; echo done`},
				{"tmpfs", Limits{TotalMemory: 48 << 20, Disk: 64 << 20}, `head -c 60000000 /dev/zero > /tmp/f; echo wrote; sleep 60; echo done`},
				{"memfd", Limits{TotalMemory: 160 << 20}, `python3 -c "
import os, time
fds = []
for i in range(5):
    fd = os.memfd_create('m%d' % i)
    for _ in range(50):
        os.write(fd, b'x' * (1 << 20))
    fds.append(fd)
print('held', flush=True)
time.sleep(60)
"; echo done`},
			} {
				res := run(t, s, Spec{Language: Bash, Timeout: 30 * time.Second, Limits: c.lim, Code: c.code})
				if !res.Killed || res.ExitCode != exitKilled || strings.Contains(res.Stdout, "done") ||
					!strings.Contains(res.Reason, "together went past the memory limit") {
					t.Errorf("%s: %+v", c.name, res)
				}
			}
		})
	}
}

// TestCPUQuota: with cgroups, all the run's processes together get at
// most Limits.CPUs of CPU time per second: a busy loop of 3 s under a
// quota of 0.05 CPU uses about 0.15 s.
func TestCPUQuota(t *testing.T) {
	s := newSandbox(t)
	if !s.Cgroups() {
		t.Log("no cgroups here: no CPU quota (RLIMIT_CPU per process and a lower priority only)")
		return
	}
	res := run(t, s, Spec{Language: Python, Limits: Limits{CPUs: 0.05}, Code: `
import time
t0, c0 = time.monotonic(), time.process_time()
while time.monotonic() - t0 < 3:
    pass
print(time.process_time() - c0)
`})
	used, err := strconv.ParseFloat(strings.TrimSpace(res.Stdout), 64)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	t.Logf("%.3f s of CPU in 3 s", used)
	if used > 0.5 {
		t.Fatalf("the loop used %.2f s of CPU in 3 s under a quota of 0.05 CPU", used)
	}
}

// TestSysVSharedMemoryDenied: shmget is refused (ENOSYS), with cgroups
// and without: a segment lives on mapped by no process, where the
// watchdog would not see it (before, 256 MB segments were made).
func TestSysVSharedMemoryDenied(t *testing.T) {
	if seccompFilter() == nil {
		t.Logf("no seccomp filter on %s", runtime.GOARCH)
		return
	}
	for mode, s := range limitModes(t) {
		t.Run(mode, func(t *testing.T) {
			res := run(t, s, Spec{Language: Python, Code: `
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.shmget.restype = ctypes.c_int
id = libc.shmget(0, 256 << 20, 0o1600)
print("shmget", id, os.strerror(ctypes.get_errno()) if id < 0 else "")
print("pid", os.getpid() > 0)
`})
			if res.ExitCode != 0 || !strings.Contains(res.Stdout, "shmget -1 Function not implemented") || !strings.Contains(res.Stdout, "pid True") {
				t.Fatalf("%+v", res)
			}
		})
	}
}

// TestRunMemoryHostRoot: the watchdog counts the files of a run's tmpfs
// mounts only once the sandbox has them: processes whose root is still
// the host's (bwrap's first process, until it has made the sandbox) do
// not bring the host's /tmp into the sum (it once did, and killed runs
// at their start wherever the host's /tmp held more than their limit).
func TestRunMemoryHostRoot(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 30 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	page := int64(os.Getpagesize())
	testenv.Eventually(t, 10*time.Second, func() bool { return len(descendants(cmd.Process.Pid)) > 0 },
		"the shell started no child")
	var host syscall.Statfs_t
	if err := syscall.Statfs("/tmp", &host); err != nil {
		t.Fatal(err)
	}
	used := int64(host.Blocks-host.Bfree) * host.Bsize
	if got := runMemory(cmd.Process.Pid, page); got > 64<<20 {
		t.Fatalf("a sleep counted as %d MB (the host's /tmp holds %d MB)", got>>20, used>>20)
	}
}
