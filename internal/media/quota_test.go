package media

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/testenv"
)

// quotaBackend is a store under test with a 1000-byte team quota.
type quotaBackend struct {
	put    func(team string, n int) (string, error)
	open   func(id string) ([]byte, error)
	forget func()              // a new process: no usage known
	later  func(time.Duration) // moves the clock
}

// testTeamQuota checks the quota rules on one backend.
func testTeamQuota(t *testing.T, b quotaBackend) {
	if _, err := b.put("team-a", 600); err != nil {
		t.Fatal(err)
	}
	id, err := b.put("team-a", 400) // exactly the quota
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.open(id); err != nil || len(got) != 400 {
		t.Errorf("open %s: %d bytes, %v", id, len(got), err)
	}
	if !strings.HasPrefix(id, teamTag("team-a")+"-") || !idPattern.MatchString(id) {
		t.Errorf("id %q does not carry the team tag", id)
	}
	if _, err := b.put("team-a", 1); !errors.Is(err, ErrQuotaExceeded) {
		t.Fatalf("put over the quota: %v, want ErrQuotaExceeded", err)
	}
	// Other teams, and puts without a team, are not affected.
	if _, err := b.put("team-b", 1000); err != nil {
		t.Errorf("another team: %v", err)
	}
	if _, err := b.put("", 5000); err != nil {
		t.Errorf("no team: %v", err)
	}
	// A new process measures the stored files.
	b.forget()
	if _, err := b.put("team-a", 1); !errors.Is(err, ErrQuotaExceeded) {
		t.Fatalf("put over the quota after a restart: %v, want ErrQuotaExceeded", err)
	}
	// Expired files no longer count once usage is measured again.
	b.later(DefaultTTL + time.Second)
	if _, err := b.put("team-a", 1000); err != nil {
		t.Errorf("put after the team's files expired: %v", err)
	}
}

func TestTeamQuotaLocal(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	s.quota.limit = 1000
	testTeamQuota(t, quotaBackend{
		put: func(team string, n int) (string, error) {
			return s.Put(t.Context(), team, bytes.Repeat([]byte("x"), n), "image/png")
		},
		open: func(id string) ([]byte, error) {
			f, _, _, err := s.Open(id)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return io.ReadAll(f)
		},
		forget: func() { s.quota.teams = make(map[string]*teamUsage) },
		later:  c.add,
	})
}

func TestTeamQuotaS3(t *testing.T) {
	t.Parallel()
	b := setupS3(t)
	b.store.quota.limit = 1000
	testTeamQuota(t, quotaBackend{
		put: func(team string, n int) (string, error) {
			return b.store.Put(t.Context(), team, bytes.Repeat([]byte("x"), n), "image/png")
		},
		open: func(id string) ([]byte, error) {
			f, _, _, err := b.store.Open(id)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return io.ReadAll(f)
		},
		forget: func() { b.store.quota.teams = make(map[string]*teamUsage) },
		later:  b.clock.add,
	})
}

// TestTeamQuotaConcurrentPuts races 20 puts of 100 bytes against a quota
// of 1000: exactly 10 are stored, and the refused ones leave no file.
func TestTeamQuotaConcurrentPuts(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	s.quota.limit = 1000
	var ok, refused atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			_, err := s.Put(t.Context(), "team-a", bytes.Repeat([]byte("x"), 100), "image/png")
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, ErrQuotaExceeded):
				refused.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	entries, _ := os.ReadDir(s.dir)
	if ok.Load() != 10 || refused.Load() != 10 || len(entries) != 10 {
		t.Errorf("%d stored, %d refused, %d files; want 10, 10, 10", ok.Load(), refused.Load(), len(entries))
	}
}

// TestFilesArePrivate checks by stat that a new media directory is 0700
// inside a world-readable parent and that stored files are 0600.
func TestFilesArePrivate(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "media")
	s, err := New(Options{Dir: dir}, testenv.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.Put(t.Context(), "team-a", []byte("\x89PNG"), "image/png")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, id): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", filepath.Base(path), fi.Mode().Perm(), want)
		}
	}
}
