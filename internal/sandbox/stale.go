package sandbox

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// A Sandbox's directory of runs is <TempDir>/firegate-sandbox-*, and in it
// ownerLock, a file its Sandbox holds an exclusive flock on from New to
// Close. The kernel drops the lock when the process dies, however it dies,
// so a directory whose lock can be taken is one no living Sandbox owns: a
// server that crashed left it. A lock, unlike a recorded PID, cannot be
// fooled by the PID being reused, and servers sharing one TempDir each
// hold their own. The file also holds the owner's PID, for people only.
const (
	dirPrefix = "firegate-sandbox-"
	ownerLock = "owner.lock"
)

// claim takes base as its owner's: the lock is taken on a file of another
// name, then renamed to ownerLock, so ownerLock is never there unlocked
// while its owner lives (a sweep that finds it unlocked may remove the
// directory). The file stays open, and locked, until it is closed.
func claim(base string) (*os.File, error) {
	tmp := filepath.Join(base, ownerLock+".new")
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", tmp, err)
	}
	if _, err := f.WriteString(strconv.Itoa(os.Getpid()) + "\n"); err != nil {
		_ = f.Close()
		return nil, err
	}
	if err := os.Rename(tmp, filepath.Join(base, ownerLock)); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// removeStale removes the directories of runs in parent that no living
// Sandbox owns (own, this Sandbox's, aside): directories named
// firegate-sandbox-*, not links, owned by this process's user, holding an
// ownerLock file of that user which this process can lock. A directory
// without ownerLock is left alone: a Sandbox being made (it has not locked
// it yet) or a server of before the lock, alive or not. It returns the
// directories removed; failures are logged and do not stop the sweep.
func removeStale(parent, own string, log *slog.Logger) []string {
	ents, err := os.ReadDir(parent)
	if err != nil {
		log.Warn("sandbox: cannot list the temporary directory for stale sandbox directories", "dir", parent, "err", err)
		return nil
	}
	uid := os.Geteuid()
	var removed []string
	for _, e := range ents {
		dir := filepath.Join(parent, e.Name())
		if !strings.HasPrefix(e.Name(), dirPrefix) || !e.IsDir() || dir == own {
			continue
		}
		if st, err := os.Lstat(dir); err != nil || !st.IsDir() || ownerUID(st) != uid {
			continue
		}
		stale, err := unlocked(filepath.Join(dir, ownerLock), uid, func() error { return os.RemoveAll(dir) })
		switch {
		case err != nil:
			log.Warn("sandbox: cannot remove a stale sandbox directory", "dir", dir, "err", err)
		case stale:
			log.Info("sandbox: removed a stale sandbox directory (its server is gone)", "dir", dir)
			removed = append(removed, dir)
		}
	}
	return removed
}

// unlocked runs remove, holding the lock of the file at path, when path is
// a regular file of uid whose lock is free; it reports whether it did.
// A missing file or a lock held elsewhere is no error.
func unlocked(path string, uid int, remove func() error) (bool, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer func() { _ = unix.Close(fd) }()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != uid {
		return false, nil
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return false, nil // its server lives
		}
		return false, err
	}
	// Another sweep may have removed the directory since path was opened.
	var now unix.Stat_t
	if err := unix.Lstat(path, &now); err != nil || now.Dev != st.Dev || now.Ino != st.Ino {
		return false, nil
	}
	// Held until fd is closed, after the removal: another sweep cannot
	// take it meanwhile.
	return true, remove()
}

// ownerUID is the uid owning the file of st, -1 when unknown.
func ownerUID(st os.FileInfo) int {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(sys.Uid)
	}
	return -1
}
