package sandbox

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// The sandbox's init.
//
// bwrap starts the server's binary (bound at /.init) with initEnv holding
// an initConfig; RunInitIfRequested then, inside the sandbox: marks every
// descriptor it inherited beyond stdio close-on-exec (a descriptor opened
// outside must not reach the program: one of a directory leads back to
// the host's tree), starts the DevTools
// forwarder (127.0.0.1:9222 to the run's socket) when asked, sets the
// resource limits, runs the program with stdio, its own environment and
// a lower CPU priority, and writes how it ended (initStatus, JSON) on
// descriptor 3. When it exits the PID namespace ends, and every process
// the program left with it. What bounds the run's processes together is
// outside the sandbox, out of the program's reach (cgroup.go, watch.go).

// initEnv is the variable that makes the binary the sandbox's init.
const initEnv = "FIREGATE_SANDBOX_INIT"

// initConfig is what the init is told.
type initConfig struct {
	Argv     []string `json:"argv"`
	Env      []string `json:"env"`
	Procs    int      `json:"procs"`
	Memory   int64    `json:"memory"`
	CPU      int64    `json:"cpu"` // seconds
	FileSize int64    `json:"fileSize"`
	Forward  bool     `json:"forward"`
}

// initStatus is how the program ended.
type initStatus struct {
	Exit   int    `json:"exit"`
	Signal int    `json:"signal,omitempty"`
	Error  string `json:"error,omitempty"` // the program could not start
}

// statusFD is the init's descriptor for its status.
const statusFD = 3

// RunInitIfRequested runs the sandbox's init (or the join step that
// starts bwrap in a run's cgroups, join.go) and exits when this process
// is one; otherwise it returns at once.
func RunInitIfRequested() {
	if raw, ok := os.LookupEnv(joinEnv); ok {
		os.Exit(joinMain(raw))
	}
	raw, ok := os.LookupEnv(initEnv)
	if !ok {
		return
	}
	os.Exit(initMain(raw))
}

// programNice is the program's CPU priority: below the server's and
// Chrome's, which then keep the CPU they need however busy the programs.
const programNice = 10

func initMain(raw string) int {
	status := os.NewFile(statusFD, "status")
	// Nothing inherited beyond stdio passes to the program: every other
	// descriptor is close-on-exec (the Go runtime's own already are; they
	// must not be closed).
	_ = unix.CloseRange(statusFD, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	report := func(st initStatus) int {
		if status != nil {
			_ = json.NewEncoder(status).Encode(st)
		}
		return 0
	}
	var cfg initConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil || len(cfg.Argv) == 0 {
		return report(initStatus{Error: "bad init configuration"})
	}
	if cfg.Forward {
		ln, err := net.Listen("tcp", cdpAddr)
		if err != nil {
			return report(initStatus{Error: "listen on " + cdpAddr + ": " + err.Error()})
		}
		go forwardInside(ln)
	}
	// The init's own threads are made before the process limit applies: a
	// program that fills the limit (a fork bomb) must not leave the init's
	// runtime unable to start a thread it needs (that is fatal).
	releaseThreads := func() {}
	if !raceBuild {
		releaseThreads = warmThreads(initThreads)
	}
	for _, l := range []struct {
		res     int
		cur, mx uint64
	}{
		{unix.RLIMIT_NPROC, uint64(cfg.Procs), uint64(cfg.Procs)},
		{unix.RLIMIT_DATA, uint64(cfg.Memory), uint64(cfg.Memory)},
		// SIGXCPU at the limit, SIGKILL a second later.
		{unix.RLIMIT_CPU, uint64(cfg.CPU), uint64(cfg.CPU) + 1},
		{unix.RLIMIT_FSIZE, uint64(cfg.FileSize), uint64(cfg.FileSize)},
		{unix.RLIMIT_CORE, 0, 0},
		{unix.RLIMIT_NOFILE, 1024, 1024},
		{unix.RLIMIT_MSGQUEUE, 0, 0},
		{unix.RLIMIT_MEMLOCK, 0, 0},
	} {
		if raceBuild && l.res == unix.RLIMIT_DATA {
			continue // the race detector's shadow memory does not fit it
		}
		if err := unix.Setrlimit(l.res, &unix.Rlimit{Cur: l.cur, Max: l.mx}); err != nil {
			return report(initStatus{Error: "set a resource limit: " + err.Error()})
		}
	}
	releaseThreads()
	cmd := exec.Command(cfg.Argv[0], cfg.Argv[1:]...)
	cmd.Env = cfg.Env
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr // stdin: /dev/null
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := startNiced(cmd); err != nil {
		return report(initStatus{Error: "start " + cfg.Argv[0] + ": " + err.Error()})
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return report(initStatus{})
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return report(initStatus{Exit: 128 + int(ws.Signal()), Signal: int(ws.Signal())})
		}
		return report(initStatus{Exit: ee.ExitCode()})
	}
	return report(initStatus{Error: err.Error()})
}

// initThreads is how many OS threads the init starts before the limits.
const initThreads = 8

// warmThreads makes the runtime start n OS threads now (each held by a
// goroutine locked to it); the returned function lets them go back to the
// runtime's idle threads, which it reuses instead of starting new ones.
func warmThreads(n int) (release func()) {
	held, done := make(chan struct{}), make(chan struct{})
	for range n {
		go func() {
			runtime.LockOSThread()
			held <- struct{}{}
			<-done
			runtime.UnlockOSThread()
		}()
	}
	for range n {
		<-held
	}
	return func() { close(done) }
}

// startNiced starts cmd from a thread of priority programNice, which the
// program inherits (a thread's priority is its own on Linux: the thread is
// this goroutine's alone meanwhile).
func startNiced(cmd *exec.Cmd) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Setpriority(unix.PRIO_PROCESS, 0, programNice); err != nil {
		return err
	}
	return cmd.Start()
}

// forwardInside connects each connection to 127.0.0.1:9222 to the run's
// socket.
func forwardInside(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer func() { _ = c.Close() }()
			u, err := net.Dial("unix", inSocket)
			if err != nil {
				return
			}
			defer func() { _ = u.Close() }()
			splice(c, u)
		}()
	}
}

// splice copies both ways until either side ends, then ends both.
func splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		_ = dst.Close()
		_ = src.Close()
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
}
