package sqlite

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/storetest"
	"github.com/firegate/firegate/internal/testenv"
	"github.com/firegate/firegate/migrations"
)

// openTest opens a store on path and closes it when the test ends.
func openTest(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(t.Context(), path, testenv.Logger(t))
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openTest(t, filepath.Join(t.TempDir(), "firegate.db"))
	})
	storetest.RunJobs(t, func(t *testing.T) storetest.JobsUnderTest {
		return openTest(t, filepath.Join(t.TempDir(), "firegate.db"))
	})
	storetest.RunAgent(t, func(t *testing.T) storetest.AgentUnderTest {
		return openTest(t, filepath.Join(t.TempDir(), "firegate.db"))
	})
	storetest.RunMonitors(t, func(t *testing.T) storetest.MonitorsUnderTest {
		return openTest(t, filepath.Join(t.TempDir(), "firegate.db"))
	})
	storetest.RunWorkers(t, func(t *testing.T) store.WorkerStore {
		return openTest(t, filepath.Join(t.TempDir(), "firegate.db"))
	})
	storetest.RunInteract(t, func(t *testing.T) storetest.InteractUnderTest {
		return openTest(t, filepath.Join(t.TempDir(), "firegate.db"))
	})
	storetest.RunActivity(t, func(t *testing.T) storetest.ActivityUnderTest {
		return openTest(t, filepath.Join(t.TempDir(), "firegate.db"))
	})
	storetest.RunCrawlMemory(t, func(t *testing.T) storetest.CrawlMemoryUnderTest {
		return openTest(t, filepath.Join(t.TempDir(), "firegate.db"))
	})
	storetest.RunFeedback(t, func(t *testing.T) storetest.FeedbackUnderTest {
		return openTest(t, filepath.Join(t.TempDir(), "firegate.db"))
	})
}

func TestOpenCreatesDirectory(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a", "b")
	s := openTest(t, filepath.Join(dir, "store.db"))
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		t.Errorf("directory mode = %v, want 0700", perm)
	}
	var mode string
	if err := s.read.QueryRowContext(t.Context(), "PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
	var fk int
	if err := s.write.QueryRowContext(t.Context(), "PRAGMA foreign_keys").Scan(&fk); err != nil {
		t.Fatal(err)
	}
	if fk != 1 {
		t.Errorf("foreign_keys = %d, want 1", fk)
	}
}

func TestOpenBadPath(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"", ":memory:", "file:x.db", filepath.Join(t.TempDir(), "x.db?mode=ro")} {
		if s, err := Open(t.Context(), path, testenv.Logger(t)); err == nil {
			_ = s.Close()
			t.Errorf("Open(%q) succeeded, want error", path)
		}
	}
}

func TestReopenKeepsDataAndMigratesOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "store.db")
	first, err := Open(t.Context(), path, testenv.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	team, err := first.CreateTeam(t.Context(), "kept")
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second := openTest(t, path)
	got, err := second.TeamByName(t.Context(), "kept")
	if err != nil {
		t.Fatalf("TeamByName after reopen: %v", err)
	}
	if got.ID != team.ID {
		t.Errorf("reopened team ID = %q, want %q", got.ID, team.ID)
	}
	var n int
	if err := second.read.QueryRowContext(t.Context(), "SELECT count(*) FROM schema_migrations").Scan(&n); err != nil {
		t.Fatal(err)
	}
	all, err := migrations.Load(migrations.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(all) {
		t.Errorf("schema_migrations rows = %d, want %d", n, len(all))
	}
}

// TestTwoStoresOneFile has two Stores (as two processes would) write to one
// file at once; the busy timeout must keep them from failing.
func TestTwoStoresOneFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "shared.db")
	a := openTest(t, path)
	b := openTest(t, path)
	team, err := a.CreateTeam(t.Context(), "shared")
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			sum := sha256.Sum256(fmt.Appendf(nil, "key-%d", i))
			_, errs[i] = s.CreateAPIKey(t.Context(), team.ID, sum[:], "fc-x")
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent CreateAPIKey on two stores: %v", err)
	}
	for _, s := range []*Store{a, b} {
		if got, err := s.CountAPIKeys(t.Context()); err != nil || got != n {
			t.Errorf("CountAPIKeys = %d, %v; want %d", got, err, n)
		}
	}
}

func TestTransactRollsBack(t *testing.T) {
	t.Parallel()
	s := openTest(t, filepath.Join(t.TempDir(), "tx.db"))
	ctx := t.Context()
	errBoom := errors.New("boom")
	err := s.Transact(ctx, func(tx DBTX) error {
		if _, err := tx.ExecContext(ctx,
			"INSERT INTO teams (id, name, created_at) VALUES ('00000000-0000-7000-8000-000000000001', 'tx', '2026-01-01T00:00:00.000000Z')"); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Transact error = %v, want %v", err, errBoom)
	}
	if _, err := s.TeamByName(ctx, "tx"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("TeamByName after rollback: %v, want ErrNotFound", err)
	}
}

func TestReadPoolIsReadOnly(t *testing.T) {
	t.Parallel()
	s := openTest(t, filepath.Join(t.TempDir(), "ro.db"))
	_, err := s.read.ExecContext(context.WithoutCancel(t.Context()), "DELETE FROM teams")
	if err == nil {
		t.Error("write through the read pool succeeded")
	}
}

func BenchmarkCrawlMemory(b *testing.B) {
	storetest.BenchmarkCrawlMemory(b, openTest(b, filepath.Join(b.TempDir(), "bench.db")))
}
