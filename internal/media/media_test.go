package media

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/testenv"
)

// setup returns a store in a temp dir with a settable clock.
func setup(t *testing.T) (*Store, *clock) {
	t.Helper()
	s, err := New(Options{Dir: filepath.Join(t.TempDir(), "media")}, testenv.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Now()}
	s.now = c.now
	return s, c
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestPutOpen(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	tests := []struct{ contentType, ext, served string }{
		{"image/png", ".png", "image/png"},
		{"image/jpeg", ".jpg", "image/jpeg"},
		{"application/pdf", ".pdf", "application/pdf"},
		{"text/plain; charset=utf-8", ".bin", "application/octet-stream"},
	}
	ids := map[string]bool{}
	for _, tt := range tests {
		data := []byte("data for " + tt.contentType)
		id, err := s.Put(t.Context(), "", data, tt.contentType)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Ext(id) != tt.ext || len(id) != 32+len(tt.ext) || ids[id] {
			t.Errorf("id %q for %s", id, tt.contentType)
		}
		ids[id] = true
		f, ct, mod, err := s.Open(id)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(f)
		f.Close()
		if !bytes.Equal(got, data) || ct != tt.served || time.Since(mod) > time.Minute {
			t.Errorf("Open(%s) = %q, %q, %v", id, got, ct, mod)
		}
	}
}

func TestOpenRejectsBadIDs(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	if err := os.WriteFile(filepath.Join(s.dir, "..", "secret"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"", "../secret", "0123456789abcdef0123456789abcdef.png", "0123456789ABCDEF0123456789abcdef.png", "x.png", "0123456789abcdef0123456789abcdef.exe"} {
		if _, _, _, err := s.Open(id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Open(%q): %v, want ErrNotFound", id, err)
		}
	}
}

func TestExpiryAndSweep(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	oldID, err := s.Put(t.Context(), "", []byte("old"), "image/png")
	if err != nil {
		t.Fatal(err)
	}
	// Make the first file old, then add a fresh one.
	past := time.Now().Add(-DefaultTTL - time.Minute)
	if err := os.Chtimes(filepath.Join(s.dir, oldID), past, past); err != nil {
		t.Fatal(err)
	}
	newID, err := s.Put(t.Context(), "", []byte("new"), "image/png")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.Open(oldID); !errors.Is(err, ErrNotFound) {
		t.Errorf("expired Open: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.dir, oldID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("expired file still on disk: %v", err)
	}
	f, _, _, err := s.Open(newID)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()

	if n, err := s.Sweep(t.Context()); err != nil || n != 0 {
		t.Errorf("Sweep = %d, %v; want nothing expired", n, err)
	}
	c.add(DefaultTTL + time.Second)
	if n, err := s.Sweep(t.Context()); err != nil || n != 1 {
		t.Errorf("Sweep = %d, %v; want 1", n, err)
	}
	if _, _, _, err := s.Open(newID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open after sweep: %v", err)
	}
}

func TestRunJanitor(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	id, err := s.Put(t.Context(), "", []byte("x"), "application/pdf")
	if err != nil {
		t.Fatal(err)
	}
	c.add(2 * DefaultTTL)
	ctx, cancel := testCtx(t)
	done := make(chan struct{})
	go func() { s.RunJanitor(ctx, 10*time.Millisecond); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(s.dir, id)); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("janitor did not delete the expired file")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
}

func testCtx(t *testing.T) (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.Context(), 10*time.Second)
}
