package sandbox

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/firegate/firegate/internal/testenv"
)

// holdEnv, set to a directory, makes the test binary a server that opens
// a Sandbox there, prints its directory and waits to be killed
// (holdSandbox, from TestMain).
const holdEnv = "FIREGATE_SANDBOX_TEST_HOLD"

// holdSandbox is the crashing server of TestStaleDirsRemoved.
func holdSandbox(dir string) {
	s, err := New(context.Background(), Config{TempDir: dir})
	if err != nil {
		_, _ = os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(2)
	}
	_, _ = os.Stdout.WriteString(s.base + "\n")
	select {}
}

// crashedSandbox is the directory a Sandbox of another process left in
// dir when that process was killed (SIGKILL: nothing of it ran after).
func crashedSandbox(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if err != nil {
		t.Fatalf("the holding process printed no directory: %v", err)
	}
	base := strings.TrimSpace(line)
	if _, err := os.Stat(filepath.Join(base, ownerLock)); err != nil {
		t.Fatalf("the killed process's directory: %v", err)
	}
	t.Cleanup(func() { removeStaleCgroups([]string{base}) }) // those of one the test keeps
	return base
}

// TestStaleDirsRemoved: a Sandbox opened where a killed server left its
// directory removes it, and says so in its log; it keeps the directory of
// a Sandbox still open (of this process: the lock is per open file, not
// per process), one without a lock file (a server of before the lock, or
// one being made), one of another user, and what is not a directory of
// the prefix.
func TestStaleDirsRemoved(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		testenv.Unavailable(t, "bwrap is not installed: %v", err)
	}
	dir := t.TempDir()
	live, err := New(t.Context(), Config{TempDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = live.Close() }()
	stale := crashedSandbox(t, dir)

	mkdir := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lockless := mkdir(dirPrefix + "lockless")
	other := mkdir("other-prefix")
	if err := os.WriteFile(filepath.Join(other, ownerLock), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// A link of the prefix to a stale directory elsewhere.
	elsewhere := crashedSandbox(t, t.TempDir())
	link := filepath.Join(dir, dirPrefix+"link")
	if err := os.Symlink(elsewhere, link); err != nil {
		t.Fatal(err)
	}
	keep := []string{live.base, lockless, other, link, elsewhere}
	if os.Geteuid() == 0 {
		foreign := mkdir(dirPrefix + "foreign")
		if err := os.WriteFile(filepath.Join(foreign, ownerLock), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{filepath.Join(foreign, ownerLock), foreign} {
			if err := os.Chown(p, sandboxUID, sandboxUID); err != nil {
				t.Fatal(err)
			}
		}
		keep = append(keep, foreign)
	}

	log, book := testenv.NewLogBook(t)
	s, err := New(t.Context(), Config{TempDir: dir, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the killed server's directory %s is still there (%v)", stale, err)
	}
	// And its cgroups.
	if s.Cgroups() {
		dirs, err := v1Dirs(procSelf())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dirs["memory"], filepath.Base(stale))); !os.IsNotExist(err) {
			t.Errorf("the killed server's memory cgroup is still there (%v)", err)
		}
	}
	if logs := book.String(); !strings.Contains(logs, "removed a stale sandbox directory") || !strings.Contains(logs, stale) {
		t.Errorf("the log does not name the removed directory %s", stale)
	}
	for _, p := range keep {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
	// The live Sandbox still runs programs in its directory.
	if _, err := os.MkdirTemp(live.base, "run-"); err != nil {
		t.Errorf("the live sandbox's directory: %v", err)
	}
	// Once closed, its directory goes.
	if err := live.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(live.base); !os.IsNotExist(err) {
		t.Errorf("closed sandbox's directory: %v", err)
	}
}
