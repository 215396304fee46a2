package sqlite

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/firegate/firegate/internal/testenv"
)

// TestFilesArePrivate opens a store in a world-readable directory and
// checks by stat that the database, -wal and -shm files are 0600 once
// written to, and that a database left 0644 by an older version is made
// 0600 when it is opened again.
func TestFilesArePrivate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "firegate.db")
	s, err := Open(t.Context(), path, testenv.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTeam(t.Context(), "acme"); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			if perm := fi.Mode().Perm(); perm != 0o600 {
				t.Errorf("%s: %s mode %v, want 0600", when, filepath.Base(p), perm)
			}
		}
	}
	check("new store")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path+"-wal", 0o644)
	os.Chmod(path+"-shm", 0o644)
	s = openTest(t, path)
	if _, err := s.CreateTeam(t.Context(), "again"); err != nil {
		t.Fatal(err)
	}
	check("reopened 0644 store")
}
