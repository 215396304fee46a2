package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/testenv"
)

func TestMain(m *testing.M) {
	// A pipe first, so that the init runs with the Go runtime's poller
	// open (as in the server, whose packages open files as they start):
	// the init must leave the runtime's descriptors alone.
	if _, _, err := os.Pipe(); err != nil {
		panic(err)
	}
	RunInitIfRequested() // the sandbox's init is this binary
	if dir := os.Getenv(holdEnv); dir != "" {
		holdSandbox(dir)
	}
	code := m.Run()
	if shared != nil {
		_ = shared.Close()
	}
	os.Exit(code)
}

var (
	shared    *Sandbox
	sharedErr error
	sharedMu  sync.Mutex
)

// nodeModules is the repository's SDK install, which has playwright-core.
func nodeModules(tb testing.TB) string {
	tb.Helper()
	dir, err := filepath.Abs("../../e2e/sdk/node_modules")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "playwright-core", "package.json")); err != nil {
		testenv.Unavailable(tb, "playwright-core is not installed in e2e/sdk (cd e2e/sdk && npm install): %v", err)
	}
	return dir
}

// newSandbox returns a sandbox running node, python and bash, or skips
// (fails with REQUIRE_INTEGRATION=1) without bwrap or an interpreter.
func newSandbox(tb testing.TB) *Sandbox {
	tb.Helper()
	for _, bin := range []string{"bwrap", "/usr/bin/node", "/usr/bin/python3", "/usr/bin/bash"} {
		if _, err := exec.LookPath(bin); err != nil {
			testenv.Unavailable(tb, "%s is not installed: %v", bin, err)
		}
	}
	mods := nodeModules(tb)
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared == nil && sharedErr == nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		shared, sharedErr = New(ctx, Config{Runtimes: []string{Node, Python, Bash}, NodeModules: mods, Log: testenv.Logger(tb)})
	}
	if sharedErr != nil {
		tb.Fatalf("sandbox: %v", sharedErr)
	}
	return shared
}

func run(t *testing.T, s *Sandbox, sp Spec) Result {
	t.Helper()
	if sp.Timeout == 0 {
		sp.Timeout = 20 * time.Second
	}
	res, err := s.Run(context.Background(), sp)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	t.Logf("exit %d killed %v reason %q\nstdout: %.2000s\nstderr: %.2000s", res.ExitCode, res.Killed, res.Reason, res.Stdout, res.Stderr)
	return res
}

func TestRunsEachLanguage(t *testing.T) {
	s := newSandbox(t)
	for _, c := range []struct{ lang, code string }{
		{Node, `console.log("hi " + (1+2)); console.error("warn")`},
		{Python, "import sys\nprint('hi', 1+2)\nprint('warn', file=sys.stderr)"},
		{Bash, `echo "hi $((1+2))"; echo warn >&2`},
	} {
		t.Run(c.lang, func(t *testing.T) {
			res := run(t, s, Spec{Language: c.lang, Code: c.code})
			if res.ExitCode != 0 || res.Killed || strings.TrimSpace(res.Stdout) != "hi 3" || strings.TrimSpace(res.Stderr) != "warn" {
				t.Fatalf("got %+v", res)
			}
		})
	}
}

// TestFilesystemConfined: the host's /etc/passwd, /work, /root, the
// server's files and the host's /tmp are not there; the system
// directories are read-only; /tmp is the run's own.
func TestFilesystemConfined(t *testing.T) {
	s := newSandbox(t)
	hostFile := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(hostFile, []byte("host secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd() // this package's directory in the repository
	res := run(t, s, Spec{Language: Bash, Code: `
echo "passwd:"; cat /etc/passwd
for p in /etc/shadow /work /root /home ` + hostFile + ` ` + wd + `/sandbox.go /etc/hostname /var /run/postgresql; do
  if ls "$p" >/dev/null 2>&1; then echo "visible: $p"; fi
done
touch /usr/x 2>/dev/null && echo "wrote /usr"
touch /etc/x 2>/dev/null && echo "wrote /etc"
touch /sandbox/x 2>/dev/null && echo "wrote /sandbox"
echo hello > /tmp/mine && echo "tmp: $(cat /tmp/mine)"
echo "pwd: $(pwd) home: $HOME"
echo "ids: $(id -u) $(id -g)"
echo "env: $(env | cut -d= -f1 | sort | tr '\n' ' ')"
`})
	out := res.Stdout
	if res.ExitCode != 0 {
		t.Fatalf("exit %d", res.ExitCode)
	}
	want := "passwd:\nsandbox:x:1000:1000:sandbox:/tmp:/usr/sbin/nologin\n"
	if !strings.HasPrefix(out, want) {
		t.Errorf("/etc/passwd is not the sandbox's own: %q", out)
	}
	for _, bad := range []string{"visible:", "wrote", "root:"} {
		if strings.Contains(out, bad) {
			t.Errorf("escape: %q in %q", bad, out)
		}
	}
	for _, good := range []string{"tmp: hello", "pwd: /tmp home: /tmp", "ids: 1000 1000"} {
		if !strings.Contains(out, good) {
			t.Errorf("missing %q in %q", good, out)
		}
	}
	if strings.Contains(out, initEnv) {
		t.Errorf("the init's configuration reached the program's environment: %q", out)
	}
}

// TestNoInheritedDescriptors: the program holds only its stdio (the
// descriptors bwrap bound from, or the init's status pipe, would lead
// out).
func TestNoInheritedDescriptors(t *testing.T) {
	s := newSandbox(t)
	res := run(t, s, Spec{Language: Python, Code: `
import os
for fd in sorted(int(x) for x in os.listdir('/proc/self/fd')):
    try:
        print(fd, os.readlink('/proc/self/fd/%d' % fd))
    except FileNotFoundError:
        pass  # the listing's own
`})
	lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
	if res.ExitCode != 0 || len(lines) != 3 {
		t.Fatalf("want stdio only, got %q", res.Stdout)
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, string(rune('0'+i))+" ") {
			t.Errorf("descriptor line %q", l)
		}
	}
}

// TestNetworkConfined: nothing on the host's loopback (a listener of this
// test, Postgres) nor outside is reachable.
func TestNetworkConfined(t *testing.T) {
	s := newSandbox(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	port := ln.Addr().(*net.TCPAddr).Port
	res := run(t, s, Spec{Language: Python, Code: fmt.Sprintf(`
import socket
for host, port in [("127.0.0.1", %d), ("127.0.0.1", 5432), ("localhost", 6379), ("10.0.2.2", 80), ("1.1.1.1", 443), ("deb.debian.org", 80)]:
    try:
        socket.create_connection((host, port), timeout=3).close()
        print("connected", host, port)
    except OSError as e:
        print("refused", host, port, type(e).__name__)
`, port)})
	if res.ExitCode != 0 || strings.Contains(res.Stdout, "connected") || strings.Count(res.Stdout, "refused") != 6 {
		t.Fatalf("got %q", res.Stdout)
	}
	// Nothing reached the test's listener: the first connection it
	// accepts is this one.
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	got, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = got.Close() }()
	if got.RemoteAddr().String() != c.LocalAddr().String() {
		t.Fatalf("the listener was reached from the sandbox: %s", got.RemoteAddr())
	}
}

// sandboxProcs counts the host's processes of s's runs: those of the
// sandbox's user (65534 when the server is root, else the server's own)
// whose root holds s's init at /.init. That tells them from the test's own
// processes, from other programs of that user, and from the sandboxes of
// other packages' tests running at the same time (CI runs packages in
// parallel).
func sandboxProcs(s *Sandbox) (int, error) {
	uid := s.uid
	if uid < 0 {
		uid = os.Geteuid()
	}
	placed, err := os.Stat(s.init)
	if err != nil {
		return 0, err
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "Uid:" && f[1] == strconv.Itoa(uid) {
				if st, err := os.Stat(filepath.Join("/proc", e.Name(), "root", inInit)); err == nil && os.SameFile(st, placed) {
					n++
				}
			}
		}
	}
	return n, nil
}

// TestForkBombContained: a fork bomb meets the process limit and is
// killed with the sandbox at its timeout, leaving no process behind (the
// count sees the bomb's processes while it runs).
func TestForkBombContained(t *testing.T) {
	s := newSandbox(t)
	done := make(chan struct{})
	var during int // most processes seen while it runs
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if n, err := sandboxProcs(s); err == nil {
				during = max(during, n)
			}
		}
	})
	res := run(t, s, Spec{Language: Python, Timeout: 4 * time.Second, Limits: Limits{Procs: 32}, Code: `
import os, sys
failed = False
while True:
    try:
        os.fork()
    except OSError as e:
        if not failed:
            failed = True
            print("fork failed:", e, file=sys.stderr, flush=True)
`})
	close(done)
	wg.Wait()
	if !res.Killed || !strings.Contains(res.Reason, "timed out") {
		t.Fatalf("not killed at the timeout: %+v", res.Reason)
	}
	if !strings.Contains(res.Stderr, "fork failed: [Errno 11] Resource temporarily unavailable") {
		t.Fatalf("the process limit was not met: %q", res.Stderr)
	}
	t.Logf("at most %d processes of the sandbox's user seen while it ran", during)
	if during < 16 {
		t.Fatalf("the count saw %d processes of the running bomb (limit 32)", during)
	}
	if n, err := sandboxProcs(s); err != nil || n != 0 {
		t.Fatalf("%d processes of the sandbox's user left (%v)", n, err)
	}
}

// TestMemoryLimit: a node heap that keeps growing dies at its limit, and
// a Python allocation past the limit fails (but under the race detector).
func TestMemoryLimit(t *testing.T) {
	s := newSandbox(t)
	lim := Limits{Memory: 256 << 20}
	res := run(t, s, Spec{Language: Node, Limits: lim, Code: `
const a = [];
for (;;) a.push(new Array(1e6).fill(Math.random()));
`})
	if !res.Killed || res.ExitCode == 0 || !strings.Contains(res.Reason, "memory limit") || !strings.Contains(res.Stderr, "heap out of memory") {
		t.Fatalf("node hog: %+v", res)
	}
	if raceBuild {
		t.Log("the init sets no RLIMIT_DATA under the race detector: python's allocation is not bounded")
		return
	}
	res = run(t, s, Spec{Language: Python, Limits: lim, Code: `
b = bytearray(300 << 20)
print("allocated", len(b))
`})
	if res.ExitCode != 1 || strings.Contains(res.Stdout, "allocated") || !strings.Contains(res.Stderr, "MemoryError") {
		t.Fatalf("python hog: %+v", res)
	}
}

// TestTotalMemory: processes each under the per-process limit but together
// past the run's total are all killed, with the reason; a run within it is
// not.
func TestTotalMemory(t *testing.T) {
	if raceBuild {
		t.Log("the init does not watch the total under the race detector")
		return
	}
	s := newSandbox(t)
	lim := Limits{Memory: 256 << 20, TotalMemory: 400 << 20}
	hog := `for i in 1 2 3; do python3 -c "import time; b = b'x' * (150 << 20); print('held', flush=True); time.sleep(60)" & done; wait; echo done`
	res := run(t, s, Spec{Language: Bash, Timeout: 30 * time.Second, Limits: lim, Code: hog})
	if !res.Killed || res.ExitCode != 137 || !strings.Contains(res.Reason, "together went past the memory limit of 400 MB") ||
		strings.Contains(res.Stdout, "done") || strings.Contains(res.Reason, "timed out") {
		t.Fatalf("three 150 MB processes under a 400 MB total: %+v", res)
	}
	res = run(t, s, Spec{Language: Bash, Timeout: 30 * time.Second, Limits: lim,
		Code: `for i in 1 2; do python3 -c "b = b'x' * (150 << 20); print('held', flush=True)" & done; wait; echo done`})
	if res.Killed || res.ExitCode != 0 || !strings.Contains(res.Stdout, "done") {
		t.Fatalf("two 150 MB processes under a 400 MB total: %+v", res)
	}
}

// TestTimeoutKills: an endless loop is killed at the timeout; what it
// printed before is kept.
func TestTimeoutKills(t *testing.T) {
	s := newSandbox(t)
	res := run(t, s, Spec{Language: Node, Timeout: 2 * time.Second, Code: `console.log("before"); for (;;) {}`})
	if !res.Killed || res.ExitCode != 137 || res.Stdout != "before\n" || !strings.Contains(res.Stderr, "timed out after 2s") {
		t.Fatalf("got %+v", res)
	}
}

// TestCPULimit: CPU time past the limit kills the program (SIGXCPU).
func TestCPULimit(t *testing.T) {
	s := newSandbox(t)
	res := run(t, s, Spec{Language: Bash, Timeout: 60 * time.Second, Limits: Limits{CPU: time.Second}, Code: `while :; do :; done`})
	if !res.Killed || !strings.Contains(res.Reason, "SIGXCPU") || strings.Contains(res.Reason, "timed out") {
		t.Fatalf("got %+v", res)
	}
}

// TestOutputCapped: output past the cap is dropped and reported.
func TestOutputCapped(t *testing.T) {
	s := newSandbox(t)
	res := run(t, s, Spec{Language: Bash, Limits: Limits{Output: 1000}, Code: `head -c 5000000 /dev/zero | tr '\0' x; echo done >&2`})
	if res.ExitCode != 0 || len(res.Stdout) != 1000 || !res.Truncated || res.Stdout != strings.Repeat("x", 1000) || res.Stderr != "done\n" {
		t.Fatalf("got exit %d, %d bytes, truncated %v, stderr %q", res.ExitCode, len(res.Stdout), res.Truncated, res.Stderr)
	}
}

// TestDiskLimit: /tmp is bounded.
func TestDiskLimit(t *testing.T) {
	s := newSandbox(t)
	res := run(t, s, Spec{Language: Bash, Limits: Limits{Disk: 8 << 20}, Code: `head -c 20000000 /dev/zero > /tmp/big; echo "status $?"; ls -l /tmp/big | cut -d' ' -f5`})
	if strings.Contains(res.Stdout, "status 0") {
		t.Fatalf("wrote past the limit: %+v", res)
	}
}

// startChrome starts a headless Chrome with a DevTools port on the
// host's loopback and returns its address.
func startChrome(t testing.TB) string {
	t.Helper()
	chrome := testenv.ChromePath(t)
	dir := t.TempDir()
	cmd := exec.Command(chrome, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--remote-debugging-address=127.0.0.1",
		"--remote-debugging-port=0", "--user-data-dir="+dir, "about:blank")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	// A group of its own: its renderer, GPU and network processes write
	// into dir too, and must be gone before the TempDir cleanup removes
	// it (killing only the browser process left them writing, and the
	// removal failed with "directory not empty").
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	// Chrome prints "DevTools listening on ws://127.0.0.1:PORT/..." once
	// it listens.
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, rest, ok := strings.Cut(sc.Text(), "DevTools listening on ws://"); ok {
				host, _, _ := strings.Cut(rest, "/")
				found <- host
				break
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case addr := <-found:
		return addr
	case <-time.After(30 * time.Second):
		t.Fatal("Chrome did not start listening")
	}
	return ""
}

// TestNodePageOverCDP: a node program's page is the browser's, reached
// over the run's DevTools forward only: it loads a page of this test and
// prints its title.
func TestNodePageOverCDP(t *testing.T) {
	s := newSandbox(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "<html><head><title>Sandboxed title 42</title></head><body><h1 id=h>hello</h1></body></html>")
	}))
	defer site.Close()
	addr := startChrome(t)
	var dials atomic.Int32
	dial := func(ctx context.Context) (net.Conn, error) {
		dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}
	res := run(t, s, Spec{Language: Node, CDP: dial, Code: fmt.Sprintf(`
const resp = await page.goto(%q);
console.log(await page.title());
console.log(await page.textContent('#h'), resp.status());
`, site.URL)})
	if res.ExitCode != 0 || res.Stdout != "Sandboxed title 42\nhello 200\n" {
		t.Fatalf("got %+v", res)
	}
	if dials.Load() == 0 {
		t.Fatal("the program did not come through the dialer")
	}
	// A throw is the program's failure, with its stack.
	res = run(t, s, Spec{Language: Node, CDP: dial, Code: `await page.click('#missing', {timeout: 500})`})
	if res.ExitCode != 1 || res.Killed || !strings.Contains(res.Stderr, "Timeout 500ms exceeded") {
		t.Fatalf("got %+v", res)
	}
}

// TestPythonGetsCDPURL: a python program has CDP_URL, and reach
// the browser there (its version endpoint).
func TestPythonGetsCDPURL(t *testing.T) {
	s := newSandbox(t)
	addr := startChrome(t)
	dial := func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}
	res := run(t, s, Spec{Language: Python, CDP: dial, Code: `
import os, json, urllib.request
print(os.environ["CDP_URL"])
v = json.load(urllib.request.urlopen(os.environ["CDP_URL"] + "/json/version", timeout=10))
print("ws" if v["webSocketDebuggerUrl"].startswith("ws://127.0.0.1:9222/") else v)
`})
	if res.ExitCode != 0 || res.Stdout != "http://127.0.0.1:9222\nws\n" {
		t.Fatalf("got %+v", res)
	}
}

// TestNewRefusesABrokenSandbox: a missing or failing bwrap, or an unknown
// runtime, is an error at New, not a fallback.
func TestNewRefusesABrokenSandbox(t *testing.T) {
	ctx := t.Context()
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"missing", Config{Bwrap: "/nonexistent/bwrap", Runtimes: []string{Bash}}, "bubblewrap (/nonexistent/bwrap) not found"},
		{"failing", Config{Bwrap: "/usr/bin/false", Runtimes: []string{Bash}}, "a bash program could not run in the bubblewrap sandbox (/usr/bin/false)"},
		{"unknown", Config{Runtimes: []string{"ruby"}}, `unknown runtime "ruby"`},
		{"no playwright", Config{Runtimes: []string{Node}, NodeModules: t.TempDir()}, "has no playwright-core"},
	} {
		sb, err := New(ctx, c.cfg)
		if err == nil || !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: New = %v, %v; want %q", c.name, sb, err, c.want)
		}
	}
}
