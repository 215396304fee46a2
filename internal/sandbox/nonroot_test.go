package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/testenv"
)

// hostIDs are the host's uid and gid the sandbox's user (inUID inside) is:
// sandboxUID when this process is root, else its own.
func hostIDs() (uid, gid int) {
	if os.Geteuid() == 0 {
		return sandboxUID, sandboxUID
	}
	return os.Geteuid(), os.Getegid()
}

// TestSandboxUser: the program's user (1000 in the sandbox) is, on the
// host, 65534 when the server runs as root, else the server's own user;
// never root (as the host sees the program's process). It has no
// capabilities and cannot change its groups.
func TestSandboxUser(t *testing.T) {
	s := newSandbox(t)
	tag := fmt.Sprintf("firegate-user-check-%d", time.Now().UnixNano())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	type outcome struct {
		res Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := s.Run(ctx, Spec{Language: Bash, Timeout: 30 * time.Second, Code: `
echo "setgroups $(cat /proc/self/setgroups)"
grep -E '^Cap(Inh|Prm|Eff|Amb):' /proc/self/status
exec -a ` + tag + ` sleep 30
`})
		done <- outcome{res, err}
	}()
	pid := ""
	testenv.WaitFor(15*time.Second, func() bool {
		ents, err := os.ReadDir("/proc")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && strings.HasPrefix(string(b), tag+"\x00") {
				pid = e.Name()
			}
		}
		return pid != ""
	})
	if pid == "" {
		cancel()
		o := <-done
		t.Fatalf("the program's process was not found: %+v %v", o.res, o.err)
	}
	uid, gid := hostIDs()
	status, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
	if err != nil {
		t.Fatal(err)
	}
	// Real, effective, saved and filesystem ids.
	ids := map[string]string{"Uid:": fmt.Sprintf("%d %[1]d %[1]d %[1]d", uid), "Gid:": fmt.Sprintf("%d %[1]d %[1]d %[1]d", gid)}
	for _, l := range strings.Split(string(status), "\n") {
		if f := strings.Fields(l); len(f) > 0 && ids[f[0]] != "" {
			if got := strings.Join(f[1:], " "); got != ids[f[0]] {
				t.Errorf("the program's %s %s on the host, want %s", f[0], got, ids[f[0]])
			}
			delete(ids, f[0])
		}
	}
	if len(ids) != 0 {
		t.Errorf("no %v in the program's status", ids)
	}
	for file, want := range map[string]string{"uid_map": fmt.Sprintf("%d %d 1", inUID, uid), "gid_map": fmt.Sprintf("%d %d 1", inUID, gid)} {
		b, err := os.ReadFile(filepath.Join("/proc", pid, file))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(strings.Fields(string(b)), " "); got != want {
			t.Errorf("%s as the host sees it: %q, want %q", file, got, want)
		}
	}
	if !t.Failed() {
		t.Logf("the program ran as uid %d gid %d on the host", uid, gid)
	}
	cancel()
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	t.Logf("stdout: %s", o.res.Stdout)
	want := "setgroups deny\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapAmb:\t0000000000000000\n"
	if o.res.Stdout != want {
		t.Fatalf("inside: %q, want %q", o.res.Stdout, want)
	}
}

// nonRootUID is the user TestServerNotRoot runs the tests as: the
// Docker image's (USER 10001:10001).
const nonRootUID = 10001

// nonRootTests are the tests TestServerNotRoot runs as nonRootUID: every
// test of what a program can do in its sandbox, and the init's placing.
var nonRootTests = []string{
	"TestRunsEachLanguage", "TestSandboxUser", "TestFilesystemConfined", "TestNoInheritedDescriptors",
	"TestNetworkConfined", "TestForkBombContained", "TestMemoryLimit", "TestTotalMemory", "TestTimeoutKills",
	"TestCPULimit", "TestOutputCapped", "TestDiskLimit", "TestNodePageOverCDP", "TestPythonGetsCDPURL", "TestPlaceInit",
	"TestDevShmBounded", "TestRunMemoryHolds", "TestCPUQuota", "TestCgroupsWhereAllowed", "TestSysVSharedMemoryDenied",
}

// TestServerNotRoot: a server that is not root (as in the Docker image)
// runs its programs as its own user, not sandboxUID; the sandbox's tests
// pass so too. Run as root, this test runs them again in a copy of this
// test binary as uid nonRootUID, with a home and a temporary directory of
// that user, and requires each of nonRootTests to pass. Run as another
// user, this very run is the non-root server's: the package's tests (the
// same ones) cover it, and this test checks that the sandbox took that
// path.
func TestServerNotRoot(t *testing.T) {
	s := newSandbox(t) // bwrap, the interpreters and playwright-core, as every test here
	if os.Geteuid() != 0 {
		if s.uid != -1 || s.gid != -1 {
			t.Fatalf("not root (uid %d), yet the sandbox runs as uid %d gid %d", os.Geteuid(), s.uid, s.gid)
		}
		t.Logf("not root (uid %d): the sandbox runs as this user, and the package's tests of this run are the non-root server's", os.Geteuid())
		return
	}
	if s.uid != sandboxUID || s.gid != sandboxUID {
		t.Fatalf("root, yet the sandbox runs as uid %d gid %d", s.uid, s.gid)
	}
	chrome := testenv.ChromePath(t)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	mods := nodeModules(t)
	ctx := t.Context()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-10*time.Second))
		defer cancel()
	}
	cred := &syscall.Credential{Uid: nonRootUID, Gid: nonRootUID, Groups: []uint32{}}
	asUser := func(name string, args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		return cmd.CombinedOutput()
	}
	// What the tests need must be reachable by that user: this package's
	// directory (the tests' working directory), playwright-core, Chrome.
	if out, err := asUser("/usr/bin/test", "-x", wd, "-a", "-r", filepath.Join(mods, "playwright-core", "package.json"), "-a", "-x", chrome); err != nil {
		testenv.Unavailable(t, "uid %d cannot reach %s, %s or %s: %v %s", nonRootUID, wd, mods, chrome, err, out)
	}
	if out, err := asUser(s.bwrap, "--ro-bind", "/", "/", "--unshare-user", "--unshare-pid", "--unshare-net", "true"); err != nil {
		testenv.Unavailable(t, "bubblewrap does not run as uid %d (are unprivileged user namespaces refused?): %v %s", nonRootUID, err, out)
	}

	dir, err := os.MkdirTemp("", "firegate-nonroot-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sandbox.test")
	if err := copyFile(self, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	home, tmp := filepath.Join(dir, "home"), filepath.Join(dir, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, nonRootUID, nonRootUID); err != nil {
			t.Fatal(err)
		}
	}

	cmd := exec.CommandContext(ctx, bin, "-test.run=^("+strings.Join(nonRootTests, "|")+")$", "-test.v", "-test.count=1", "-test.timeout=5m")
	cmd.Dir = wd
	// Required there: a dependency missing fails the run, not skips a test.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + tmp, "LANG=C.UTF-8",
		testenv.EnvRequireIntegration + "=1", testenv.EnvChromePath + "=" + chrome}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) } // Chrome with it
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	outB, err := cmd.CombinedOutput()
	out := string(outB)
	t.Logf("the tests as uid %d (%s):\n%s", nonRootUID, time.Since(start).Round(time.Millisecond), clip(out, 200000))
	if err != nil {
		t.Fatalf("the sandbox's tests failed as uid %d: %v", nonRootUID, err)
	}
	for _, name := range nonRootTests {
		if !regexp.MustCompile(`(?m)^--- PASS: ` + name + ` `).MatchString(out) {
			t.Errorf("%s did not pass as uid %d", name, nonRootUID)
		}
	}
	if regexp.MustCompile(`(?m)^\s*--- (SKIP|FAIL)`).MatchString(out) {
		t.Errorf("a test skipped or failed as uid %d", nonRootUID)
	}
	// The programs ran as that user on the host (TestSandboxUser's log).
	if !strings.Contains(out, fmt.Sprintf("the program ran as uid %d gid %d on the host", nonRootUID, nonRootUID)) {
		t.Errorf("TestSandboxUser did not see a program run as uid %d", nonRootUID)
	}
}

// copyFile copies src to a new file dst of mode perm.
func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	if err := out.Chmod(perm); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// TestPlaceInit: the init is placed readable and executable by every user
// (the sandbox's user is not the server's when it is root), whatever the
// umask, and the server's binary is left as it is: linked when its mode
// allows, else copied.
func TestPlaceInit(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	body := []byte("#!/bin/sh\necho init\n")
	for _, mode := range []os.FileMode{0o700, 0o755} {
		t.Run(mode.String(), func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "server")
			if err := os.WriteFile(src, body, mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(src, mode); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			dst, err := placeInit(src, dir)
			if err != nil {
				t.Fatal(err)
			}
			sst, err := os.Stat(src)
			if err != nil {
				t.Fatal(err)
			}
			dst2, err := os.Stat(dst)
			if err != nil {
				t.Fatal(err)
			}
			if sst.Mode().Perm() != mode {
				t.Errorf("the server's binary is now %s, was %s", sst.Mode().Perm(), mode)
			}
			if dst2.Mode().Perm() != 0o755 {
				t.Errorf("the init is %s, want -rwxr-xr-x", dst2.Mode().Perm())
			}
			if linked := os.SameFile(sst, dst2); linked != (mode == 0o755) {
				t.Errorf("linked %v for a binary of mode %s", linked, mode)
			}
			if b, err := os.ReadFile(dst); err != nil || string(b) != string(body) {
				t.Errorf("the init holds %q, %v", b, err)
			}
		})
	}
}

// TestRestrictiveUmask: a server whose umask lets no other user read its
// files (077, as a hardened service may have) still starts a sandbox and
// runs programs: what is written for them is made readable by the
// sandbox's user whatever the umask.
func TestRestrictiveUmask(t *testing.T) {
	mods := nodeModules(t)
	newSandbox(t) // bwrap and the interpreters are there
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	s, err := New(t.Context(), Config{Runtimes: []string{Node, Python, Bash}, NodeModules: mods, Log: testenv.Logger(t)})
	if err != nil {
		t.Fatalf("New under umask 077: %v", err)
	}
	defer func() { _ = s.Close() }()
	for _, c := range []struct{ lang, code string }{
		{Bash, `id -un; cat /etc/group /etc/hosts | wc -l`},
		{Python, `import pwd, os; print(pwd.getpwuid(os.getuid()).pw_name); print(len(open("/etc/group").read().splitlines()) + len(open("/etc/hosts").read().splitlines()))`},
		{Node, `console.log(require("os").userInfo().username); console.log(require("fs").readFileSync("/etc/hosts", "utf8").split("\n").length)`},
	} {
		res := run(t, s, Spec{Language: c.lang, Code: c.code})
		if res.ExitCode != 0 || res.Stdout != "sandbox\n3\n" {
			t.Errorf("%s under umask 077: %+v", c.lang, res)
		}
	}
}
