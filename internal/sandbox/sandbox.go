// Package sandbox runs one untrusted program (node, python or bash) in a
// subprocess confined by bubblewrap (bwrap), for interact code in the
// languages an operator enables with INTERACT_RUNTIMES.
//
// What a program sees:
//   - A filesystem of read-only system directories (/usr and its /bin,
//     /lib, /lib64 and /sbin links), a minimal /etc (passwd, group, hosts
//     written for the run: no file of the host's /etc), a fresh /proc of
//     its own PID namespace, a minimal /dev, a size-limited tmpfs at /tmp
//     (its HOME and working directory), its program under /sandbox, and for
//     node the operator's node_modules at /node_modules. Nothing else of
//     the host: not the server's directories, /root, /home or /work.
//   - New user, PID, IPC, UTS, cgroup and network namespaces: the network
//     namespace has only a loopback interface, on which the sandbox's init
//     listens at 127.0.0.1:9222 and forwards each connection to a unix
//     socket served by the server for the run, which connects it to the
//     caller's CDP dialer (the session's DevTools endpoint). No other
//     address can be reached, the host's loopback included.
//   - A user that is not root in the host (uid 65534 when the server runs
//     as root, else the server's own), no capabilities, no further user
//     namespaces (--disable-userns), its own session (--new-session), a
//     seccomp filter (seccomp.go: no SysV shared memory, no other ABI),
//     and the whole sandbox dies with the server (--die-with-parent).
//   - Resource limits set by the sandbox's init before it starts the
//     program: processes and threads (RLIMIT_NPROC, counted in the run's
//     own user namespace, so runs do not share it), writable memory per
//     process (RLIMIT_DATA; node also gets --max-old-space-size), CPU time
//     per process (RLIMIT_CPU), file size (RLIMIT_FSIZE), open files, no
//     core dumps, a lower CPU priority (nice 10); the tmpfs mounts (/tmp
//     and /dev/shm; the rest of /dev is read-only) are sized.
//   - Limits of all the run's processes together, which hold whatever the
//     program does to the processes it can see: per-run cgroups where the
//     machine allows them (memory, pids, CPU quota: cgroup.go), else the
//     server's own watchdog, which sums the run's memory from outside the
//     sandbox (watch.go); either way the server ends the whole run past
//     Limits.TotalMemory. The wall-clock timeout kills the whole sandbox
//     (its first process; its PID namespace then ends); stdout and stderr
//     are kept up to Limits.Output each, the rest read and dropped.
//
// The sandbox's init is the server's own binary (bound read-only in the
// sandbox): binaries that run programs call RunInitIfRequested first
// thing, as the server's main does.
package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Languages a sandbox runs.
const (
	Node   = "node"
	Python = "python"
	Bash   = "bash"
)

// ErrUnavailable: the sandbox cannot run (bwrap missing or failing, an
// interpreter missing).
var ErrUnavailable = errors.New("sandbox: unavailable")

// Dialer connects to the DevTools endpoint a program may reach (at
// 127.0.0.1:9222 inside its sandbox).
type Dialer func(ctx context.Context) (net.Conn, error)

// Limits bound one run. Zero fields take the defaults.
type Limits struct {
	// Memory is the writable private memory of each process (RLIMIT_DATA:
	// address space is no bound for node, which reserves 11 GB of it),
	// default 512 MiB; node's heap is limited to half of it.
	Memory int64
	// TotalMemory bounds the memory of all the run's processes together,
	// the files of its /tmp and /dev/shm included, default twice Memory:
	// the limit of its memory cgroup, or what the server's watchdog sums;
	// the server ends the whole run past it.
	TotalMemory int64
	// CPU is the CPU time of each process (RLIMIT_CPU), default the run's
	// timeout (rounded up to a second).
	CPU time.Duration
	// Procs is the processes and threads the run may have at once
	// (RLIMIT_NPROC in its user namespace), default 64 (node with
	// playwright-core connected has 11 threads, the init a few).
	Procs int
	// Output is what is kept of each of stdout and stderr, default 1 MiB.
	Output int
	// Disk is the size of the writable /tmp and the largest file
	// (RLIMIT_FSIZE), default 64 MiB.
	Disk int64
	// Shm is the size of /dev/shm, default 16 MiB.
	Shm int64
	// CPUs is the CPU time all the run's processes together get per unit
	// of time (a cgroup CPU quota; without cgroups only RLIMIT_CPU per
	// process and the lower priority apply), default 1 (one CPU).
	CPUs float64
}

// Defaults of Limits.
const (
	DefaultMemory = 512 << 20
	DefaultProcs  = 64
	DefaultOutput = 1 << 20
	DefaultDisk   = 64 << 20
	DefaultShm    = 16 << 20
	DefaultCPUs   = 1
	// exitKilled is the exit code of a killed run (as a shell reports
	// SIGKILL).
	exitKilled = 137
)

func (l Limits) withDefaults(timeout time.Duration) Limits {
	if l.Memory <= 0 {
		l.Memory = DefaultMemory
	}
	if l.TotalMemory <= 0 {
		l.TotalMemory = 2 * l.Memory
	}
	if l.CPU <= 0 {
		l.CPU = timeout
	}
	if l.Procs <= 0 {
		l.Procs = DefaultProcs
	}
	if l.Output <= 0 {
		l.Output = DefaultOutput
	}
	if l.Disk <= 0 {
		l.Disk = DefaultDisk
	}
	if l.Shm <= 0 {
		l.Shm = DefaultShm
	}
	if l.CPUs <= 0 {
		l.CPUs = DefaultCPUs
	}
	return l
}

// Spec is one program to run.
type Spec struct {
	Language string // Node, Python or Bash
	Code     string
	Timeout  time.Duration
	// CDP, when set, is what 127.0.0.1:9222 inside the sandbox connects
	// to; CDPURL is the endpoint's URL there (CDP_URL in the program's
	// environment, what node's page is connected to), default
	// http://127.0.0.1:9222.
	CDP    Dialer
	CDPURL string
	// CDPHandler, instead of CDP, serves the HTTP requests (a DevTools
	// WebSocket upgrade) made to 127.0.0.1:9222 inside the sandbox.
	CDPHandler http.Handler
	Limits     Limits
}

// Result is the outcome of a run.
type Result struct {
	Stdout    string
	Stderr    string
	ExitCode  int
	Killed    bool   // stopped by the timeout, a limit or a signal
	Truncated bool   // stdout or stderr went past Limits.Output
	Reason    string // why it was killed, or how it failed; "" on exit 0
}

// Config configures a Sandbox.
type Config struct {
	// Bwrap is the bubblewrap binary; "" = bwrap on PATH.
	Bwrap string
	// Runtimes are the languages enabled (Node, Python, Bash).
	Runtimes []string
	// NodeModules is a directory holding playwright-core, bound read-only
	// at /node_modules; "" = node programs run without the page prelude.
	NodeModules string
	// Init is the binary that calls RunInitIfRequested; "" = this one.
	Init string
	// TempDir holds the runs' directories; "" = os.TempDir(). New removes
	// those a crashed server left there (see removeStale).
	TempDir string
	// NoCgroups makes the runs go without cgroups even where the machine
	// allows them: the server's watchdog alone bounds their memory (tests
	// of that path).
	NoCgroups bool
	Log       *slog.Logger
}

// interpreters are where each language's interpreter is inside the
// sandbox (the host's /usr, read-only).
var interpreters = map[string]string{Node: "/usr/bin/node", Python: "/usr/bin/python3", Bash: "/usr/bin/bash"}

// Sandbox runs programs. It is safe for concurrent use.
type Sandbox struct {
	cfg      Config
	bwrap    string
	init     string
	base     string       // directory of the runs' directories
	uid, gid int          // host ids the sandbox runs as; -1 = the server's
	owner    *os.File     // ownerLock in base, locked while the Sandbox is open
	cg       *cgroupRoots // nil: no per-run cgroups
	log      *slog.Logger
}

// sandboxUID is the host user the sandbox runs as when the server is root:
// root is exempt from RLIMIT_NPROC, and must not own the sandbox's files.
const sandboxUID = 65534

// New checks the configuration and that bwrap works with each enabled
// interpreter (one trivial run of each), or returns an error naming what
// failed.
func New(ctx context.Context, cfg Config) (*Sandbox, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	s := &Sandbox{cfg: cfg, log: cfg.Log, uid: -1, gid: -1}
	for _, l := range cfg.Runtimes {
		if _, ok := interpreters[l]; !ok {
			return nil, fmt.Errorf("%w: unknown runtime %q (node, python, bash)", ErrUnavailable, l)
		}
	}
	bw := cfg.Bwrap
	if bw == "" {
		bw = "bwrap"
	}
	p, err := exec.LookPath(bw)
	if err != nil {
		return nil, fmt.Errorf("%w: bubblewrap (%s) not found: %v; install the bubblewrap package", ErrUnavailable, bw, err)
	}
	s.bwrap = p
	s.init = cfg.Init
	if s.init == "" {
		if s.init, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("%w: find the server binary: %v", ErrUnavailable, err)
		}
	}
	if cfg.NodeModules != "" {
		if st, err := os.Stat(filepath.Join(cfg.NodeModules, "playwright-core", "package.json")); err != nil || st.IsDir() {
			return nil, fmt.Errorf("%w: %s has no playwright-core (npm install playwright-core there)", ErrUnavailable, cfg.NodeModules)
		}
	}
	if os.Geteuid() == 0 {
		s.uid, s.gid = sandboxUID, sandboxUID
	}
	tmp := cfg.TempDir
	if tmp == "" {
		tmp = os.TempDir()
	}
	if s.base, err = os.MkdirTemp(tmp, dirPrefix); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if s.owner, err = claim(s.base); err != nil {
		_ = os.RemoveAll(s.base)
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	// Those a crashed server left, and their cgroups.
	removeStaleCgroups(removeStale(tmp, s.base, s.log))
	// The runs' directories are reached by the sandbox's user.
	if err := os.Chmod(s.base, 0o711); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if s.init, err = placeInit(s.init, s.base); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("%w: place the sandbox init: %v", ErrUnavailable, err)
	}
	if !cfg.NoCgroups {
		cg, err := newCgroupRoots(procSelf(), filepath.Base(s.base))
		if err != nil {
			s.log.InfoContext(ctx, "sandbox runs without cgroups: the server's watchdog bounds their memory", "reason", err.Error())
		} else {
			s.cg = cg
			s.log.InfoContext(ctx, "sandbox runs in cgroups of their own", "memory", cg.memory, "pids", cg.pids, "cpu", cg.cpu)
		}
	}
	for _, l := range cfg.Runtimes {
		if err := s.check(ctx, l); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	return s, nil
}

// check runs a trivial program of lang.
func (s *Sandbox) check(ctx context.Context, lang string) error {
	code := map[string]string{Node: `console.log("ok")`, Python: `print("ok")`, Bash: `echo ok`}[lang]
	if lang == Node && s.Prelude() {
		code = `require("playwright-core"); console.log("ok")`
	}
	res, err := s.Run(ctx, Spec{Language: lang, Code: code, Timeout: 30 * time.Second})
	if err == nil && (res.ExitCode != 0 || strings.TrimSpace(res.Stdout) != "ok") {
		err = fmt.Errorf("exit %d, stdout %q, stderr %q", res.ExitCode, clip(res.Stdout, 200), clip(res.Stderr, 600))
	}
	if err != nil {
		return fmt.Errorf("%w: a %s program could not run in the bubblewrap sandbox (%s): %v", ErrUnavailable, lang, s.bwrap, err)
	}
	return nil
}

// clip shortens s to at most n bytes.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// Enabled reports whether lang is run.
func (s *Sandbox) Enabled(lang string) bool { return s != nil && slices.Contains(s.cfg.Runtimes, lang) }

// Prelude reports whether node programs get page, browser and context.
func (s *Sandbox) Prelude() bool { return s.cfg.NodeModules != "" }

// Cgroups reports whether runs are in cgroups of their own.
func (s *Sandbox) Cgroups() bool { return s.cg != nil }

// Close removes the runs' directory and cgroups, then lets its lock go.
func (s *Sandbox) Close() error {
	if s.cg != nil {
		s.cg.remove()
	}
	err := os.RemoveAll(s.base)
	if s.owner != nil {
		_ = s.owner.Close()
	}
	return err
}

// Fixed paths inside the sandbox.
const (
	inDir     = "/sandbox"
	inInit    = "/.init"
	inModules = "/node_modules"
	inSocket  = inDir + "/cdp.sock"
	cdpAddr   = "127.0.0.1:9222"
	inUID     = 1000
)

// Run runs one program. The error is for a run that could not start (or
// an unknown language); what the program did is in the Result.
func (s *Sandbox) Run(ctx context.Context, sp Spec) (Result, error) {
	interp, ok := interpreters[sp.Language]
	if !ok {
		return Result{}, fmt.Errorf("sandbox: unknown language %q", sp.Language)
	}
	if sp.Timeout <= 0 {
		return Result{}, errors.New("sandbox: no timeout")
	}
	lim := sp.Limits.withDefaults(sp.Timeout)
	dir, err := os.MkdirTemp(s.base, "run-")
	if err != nil {
		return Result{}, fmt.Errorf("sandbox: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if err := s.share(dir, 0o750); err != nil {
		return Result{}, err
	}
	cdpURL := sp.CDPURL
	if cdpURL == "" {
		cdpURL = "http://" + cdpAddr
	}
	files := map[string]string{
		"passwd": fmt.Sprintf("sandbox:x:%d:%d:sandbox:/tmp:/usr/sbin/nologin\n", inUID, inUID),
		"group":  fmt.Sprintf("sandbox:x:%d:\n", inUID),
		"hosts":  "127.0.0.1\tlocalhost\n::1\tlocalhost\n",
	}
	argv := []string{interp}
	switch sp.Language {
	case Node:
		heap := max(lim.Memory/2>>20, 16)
		argv = append(argv, "--max-old-space-size="+strconv.FormatInt(heap, 10))
		if s.Prelude() && (sp.CDP != nil || sp.CDPHandler != nil) {
			files["prelude.js"] = nodePrelude
			files["code.js"] = sp.Code
			argv = append(argv, inDir+"/prelude.js")
		} else {
			files["code.js"] = sp.Code
			argv = append(argv, inDir+"/code.js")
		}
	case Python:
		files["code.py"] = sp.Code
		argv = append(argv, "-I", inDir+"/code.py")
	case Bash:
		files["code.sh"] = sp.Code
		argv = append(argv, "--noprofile", "--norc", inDir+"/code.sh")
	}
	for name, body := range files {
		// Readable by the sandbox's user whatever the server's umask.
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			return Result{}, fmt.Errorf("sandbox: %w", err)
		}
		if err := os.Chmod(path, 0o644); err != nil {
			return Result{}, fmt.Errorf("sandbox: %w", err)
		}
	}
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8", "USER=sandbox"}
	if sp.Language == Node && s.Prelude() {
		env = append(env, "NODE_PATH="+inModules)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	forward := sp.CDP != nil || sp.CDPHandler != nil
	if forward {
		env = append(env, "CDP_URL="+cdpURL)
		sock := filepath.Join(dir, "cdp.sock")
		var stop func()
		if sp.CDP != nil {
			stop, err = listenForward(runCtx, sock, sp.CDP, s.log)
		} else {
			stop, err = serveHandler(runCtx, sock, sp.CDPHandler, s.log)
		}
		if err != nil {
			return Result{}, err
		}
		defer stop()
		if err := s.share(sock, 0o660); err != nil {
			return Result{}, err
		}
	}
	ic := initConfig{Argv: argv, Env: env, Procs: lim.Procs, Memory: lim.Memory, CPU: int64((lim.CPU + time.Second - 1) / time.Second),
		FileSize: lim.Disk, Forward: forward}
	icJSON, err := json.Marshal(ic)
	if err != nil {
		return Result{}, err
	}

	// The init reports how the program ended on fd 3; bwrap tells the
	// PID of the sandbox's first process on fd 4 (and reads the seccomp
	// filter from fd 5).
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return Result{}, err
	}
	defer func() { _ = statusR.Close() }()
	infoR, infoW, err := os.Pipe()
	if err != nil {
		_ = statusW.Close()
		return Result{}, err
	}
	defer func() { _ = infoR.Close() }()
	extra := []*os.File{statusW, infoW}
	args := []string{
		"--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
		"--uid", strconv.Itoa(inUID), "--gid", strconv.Itoa(inUID), "--hostname", "sandbox",
		"--ro-bind", "/usr", "/usr",
		"--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
		"--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
		"--proc", "/proc", "--dev", "/dev",
		"--size", strconv.FormatInt(lim.Shm, 10), "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
		"--size", strconv.FormatInt(lim.Disk, 10), "--tmpfs", "/tmp",
		"--ro-bind", dir, inDir,
		"--dir", "/etc",
		"--ro-bind", filepath.Join(dir, "passwd"), "/etc/passwd",
		"--ro-bind", filepath.Join(dir, "group"), "/etc/group",
		"--ro-bind", filepath.Join(dir, "hosts"), "/etc/hosts",
		"--ro-bind", s.init, inInit,
	}
	if sp.Language == Node && s.Prelude() {
		args = append(args, "--ro-bind", s.cfg.NodeModules, inModules)
	}
	// The seccomp filter (seccomp.go) on descriptor 5.
	filter, err := seccompFile()
	if err != nil {
		closeAll(extra)
		return Result{}, fmt.Errorf("sandbox: seccomp filter: %w", err)
	}
	if filter != nil {
		extra = append(extra, filter)
		args = append(args, "--seccomp", "5")
	}
	args = append(args, "--remount-ro", "/", "--info-fd", "4", "--chdir", "/tmp", "--clearenv", "--setenv", initEnv, string(icJSON), "--", inInit)
	var rc *runCgroup
	if s.cg != nil {
		if rc, err = s.cg.newRun(filepath.Base(dir), lim); err != nil {
			closeAll(extra)
			return Result{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		defer rc.remove() // after the sandbox's processes are gone (ns.reap below)
	}
	cmd := exec.Command(s.bwrap, args...)
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.ExtraFiles = extra
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if rc != nil {
		// The join step joins the run's cgroups, takes the sandbox's user
		// and becomes bwrap.
		jc, err := json.Marshal(joinConfig{Procs: rc.procsFiles(), UID: s.uid, GID: s.gid, Parent: os.Getpid(), Bwrap: s.bwrap})
		if err != nil {
			closeAll(extra)
			return Result{}, err
		}
		cmd.Path, cmd.Args[0] = s.init, s.init
		cmd.Env = []string{joinEnv + "=" + string(jc)}
	} else if s.uid >= 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.gid), Groups: []uint32{}}
	}
	stdout, stderr := &capped{max: lim.Output}, &capped{max: lim.Output}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Start()
	closeAll(extra) // the child holds them now
	if err != nil {
		return Result{}, fmt.Errorf("%w: start bwrap: %v", ErrUnavailable, err)
	}
	var statusBuf bytes.Buffer
	statusDone := make(chan struct{})
	go func() {
		_, _ = io.Copy(&statusBuf, io.LimitReader(statusR, 4096))
		close(statusDone)
	}()
	// The namespace's first process: when it has exited, every process of
	// the sandbox has (the kernel kills and reaps them first).
	ns := &nsInit{fd: -1, ready: make(chan struct{})}
	go ns.read(infoR)
	defer ns.reap()
	wd := watch(ns, rc, lim.TotalMemory)
	defer wd.end()

	timer := time.NewTimer(sp.Timeout)
	defer timer.Stop()
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	res := Result{}
	var werr error
	select {
	case werr = <-waitErr:
	case <-timer.C:
		res.Killed, res.Reason = true, fmt.Sprintf("killed: timed out after %s", sp.Timeout)
		werr = kill(cmd, ns, waitErr)
	case <-ctx.Done():
		res.Killed, res.Reason = true, "killed: cancelled"
		werr = kill(cmd, ns, waitErr)
	case <-wd.over:
		werr = kill(cmd, ns, waitErr)
	}
	<-statusDone
	// Past the memory limit, whatever else ended the run (the kernel's
	// kill within the cgroup may have ended the program first).
	if wd.end() || (rc != nil && rc.oomKills() > 0) {
		res.Killed, res.Reason = true, fmt.Sprintf("killed: the run's processes together went past the memory limit of %d MB", lim.TotalMemory>>20)
	}
	res.Stdout, res.Stderr = stdout.String(), stderr.String()
	res.Truncated = stdout.truncated() || stderr.truncated()
	if res.Killed {
		res.ExitCode = exitKilled
		res.Stderr += res.Reason + "\n"
		return res, nil
	}
	var st initStatus
	if json.Unmarshal(statusBuf.Bytes(), &st) != nil {
		// The init did not report: it could not start the program, or it
		// was killed (a limit reached by the program took it down too).
		res.Killed, res.ExitCode = true, exitKilled
		res.Reason = fmt.Sprintf("killed: the sandbox stopped before the program ended (%v)", werr)
		if st.Error != "" {
			res.Reason = "sandbox: " + st.Error
		}
		res.Stderr += res.Reason + "\n"
		return res, nil
	}
	if st.Error != "" {
		res.ExitCode, res.Reason = 127, "sandbox: "+st.Error
		res.Stderr += res.Reason + "\n"
		return res, nil
	}
	res.ExitCode = st.Exit
	if st.Signal != 0 {
		sig := syscall.Signal(st.Signal)
		res.Killed, res.ExitCode = true, 128+st.Signal
		res.Reason = "killed: " + signalReason(sig, lim)
		res.Stderr += res.Reason + "\n"
	} else if st.Exit != 0 {
		res.Reason = fmt.Sprintf("exited with status %d", st.Exit)
	}
	return res, nil
}

// signalReason explains the signal that ended a program.
func signalReason(sig syscall.Signal, lim Limits) string {
	switch sig {
	case syscall.SIGXCPU, syscall.SIGKILL:
		return fmt.Sprintf("signal %s (the CPU time limit of %s, or killed)", unix.SignalName(sig), lim.CPU)
	case syscall.SIGABRT, syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGTRAP:
		return fmt.Sprintf("signal %s (the memory limit of %d MB, or a crash)", unix.SignalName(sig), lim.Memory>>20)
	case syscall.SIGXFSZ:
		return fmt.Sprintf("signal %s (the file size limit of %d MB)", unix.SignalName(sig), lim.Disk>>20)
	}
	return "signal " + unix.SignalName(sig)
}

// reapWait bounds the wait for a killed sandbox to end.
const reapWait = 10 * time.Second

// nsInit is the sandbox's first process (the init of its PID namespace),
// as bwrap reports it: when it has exited, every process of the sandbox
// has (the kernel kills and reaps them first).
type nsInit struct {
	ready chan struct{} // closed once fd and pid are set (or will not be)
	fd    int           // a pidfd; -1 for none
	pid   int           // its host PID; 0 for none
}

func (n *nsInit) read(info io.Reader) {
	defer close(n.ready)
	var v struct {
		ChildPID int `json:"child-pid"`
	}
	if json.NewDecoder(io.LimitReader(info, 4096)).Decode(&v) == nil && v.ChildPID > 0 {
		if fd, err := unix.PidfdOpen(v.ChildPID, 0); err == nil {
			n.fd, n.pid = fd, v.ChildPID
		}
	}
}

// kill ends a running sandbox: its first process is killed, so that bwrap
// (its parent) reaps it and exits; bwrap's process group is killed when
// that is not known or bwrap has not exited reapWait later.
func kill(cmd *exec.Cmd, n *nsInit, waitErr <-chan error) error {
	select {
	case <-n.ready:
		if n.fd >= 0 {
			_ = unix.PidfdSendSignal(n.fd, unix.SIGKILL, nil, 0)
		} else {
			killGroup(cmd)
		}
	default: // bwrap is still setting up
		killGroup(cmd)
	}
	t := time.NewTimer(reapWait)
	defer t.Stop()
	select {
	case err := <-waitErr:
		return err
	case <-t.C:
		killGroup(cmd)
		return <-waitErr
	}
}

// reap waits until the sandbox's first process has exited (at once when
// bwrap has reaped it), killing it first, for a run whose bwrap died
// before it.
func (n *nsInit) reap() {
	<-n.ready
	if n.fd < 0 {
		return
	}
	defer func() { _ = unix.Close(n.fd) }()
	_ = unix.PidfdSendSignal(n.fd, unix.SIGKILL, nil, 0)
	fds := []unix.PollFd{{Fd: int32(n.fd), Events: unix.POLLIN}}
	deadline := time.Now().Add(reapWait)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		k, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if k > 0 || (err != nil && err != unix.EINTR) {
			return
		}
	}
}

// killGroup kills bwrap's process group; the sandbox's first process dies
// with bwrap (--die-with-parent), and every other process with it.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// share gives path to the sandbox's user (its group), or keeps it the
// server's own when the sandbox runs as the server's user.
func (s *Sandbox) share(path string, mode os.FileMode) error {
	if s.gid >= 0 {
		if err := os.Chown(path, 0, s.gid); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
	} else {
		mode &= 0o700 // the server's user only
	}
	if err := os.Chmod(path, mode); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	return nil
}

// placeInit puts the init binary in the runs' directory, where the
// sandbox's user reaches it whatever the permissions of the directories
// above the original: a link when the binary is readable and executable by
// every user, else (or when it cannot be linked: another filesystem, or
// with fs.protected_hardlinks a binary of another user) a copy made so. A
// link's mode is the original's and is left alone: changing it changed the
// server's binary, and fails (EPERM) for a server that is not root and
// links a binary it does not own where fs.protected_hardlinks is off.
func placeInit(src, dir string) (string, error) {
	dst := filepath.Join(dir, "init")
	if err := os.Link(src, dst); err == nil {
		if st, err := os.Stat(dst); err == nil && st.Mode().Perm()&0o005 == 0o005 {
			return dst, nil
		}
		if err := os.Remove(dst); err != nil {
			return "", err
		}
	}
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return "", err
	}
	// Explicitly, whatever the server's umask.
	if err := out.Chmod(0o755); err != nil {
		_ = out.Close()
		return "", err
	}
	return dst, out.Close()
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// capped keeps the first max bytes written and drops the rest.
type capped struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - c.buf.Len()
	if len(p) > room {
		c.over = true
		c.buf.Write(p[:max(room, 0)])
	} else {
		c.buf.Write(p)
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.ToValidUTF8(c.buf.String(), "\uFFFD")
}

func (c *capped) truncated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.over
}
