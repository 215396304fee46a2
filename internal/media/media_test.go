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
	testenv.Eventually(t, 5*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(s.dir, id))
		return errors.Is(err, os.ErrNotExist)
	}, "janitor did not delete the expired file")
	cancel()
	<-done
}

func testCtx(t *testing.T) (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.Context(), 10*time.Second)
}

// TestPutFileSigned: audio and video files are stored from a file, count
// against the team quota and expire after the signed TTL, before the
// screenshots stored with them.
func TestPutFileSigned(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	s.quota.limit = 100
	src := filepath.Join(t.TempDir(), "video.mp4")
	data := bytes.Repeat([]byte("v"), 60)
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	id, err := s.PutFile(t.Context(), "team-1", src, "video/mp4")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Ext(id) != ".mp4" || !Signed(id) || !idPattern.MatchString(id) {
		t.Fatalf("id %q", id)
	}
	fi, err := os.Stat(filepath.Join(s.dir, id))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("stored file: %v %v", fi, err)
	}
	f, ct, _, err := s.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(f)
	f.Close()
	if !bytes.Equal(got, data) || ct != "video/mp4" {
		t.Errorf("Open = %q, %q", got, ct)
	}
	if _, err := s.PutFile(t.Context(), "team-1", src, "audio/mpeg"); !errors.Is(err, ErrQuotaExceeded) {
		t.Errorf("second 60 bytes under a quota of 100: %v, want ErrQuotaExceeded", err)
	}
	png, err := s.Put(t.Context(), "team-2", []byte("png"), "image/png")
	if err != nil {
		t.Fatal(err)
	}
	if Signed(png) {
		t.Errorf("a screenshot id %q is signed", png)
	}
	c.add(DefaultSignedTTL + time.Second)
	if n, err := s.Sweep(t.Context()); err != nil || n != 1 {
		t.Errorf("Sweep after the signed TTL = %d, %v; want the video", n, err)
	}
	if _, _, _, err := s.Open(id); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open of the expired video: %v", err)
	}
	f, _, _, err = s.Open(png)
	if err != nil {
		t.Fatalf("the screenshot expired with the video: %v", err)
	}
	f.Close()
	if _, err := s.PutFile(t.Context(), "team-1", src, "video/mp4"); err != nil {
		t.Errorf("the quota was not freed by the expiry: %v", err)
	}
}
