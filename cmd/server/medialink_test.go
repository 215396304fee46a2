package main

import (
	"bytes"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMediaSignerSecret: without MEDIA_URL_SECRET a secret is generated
// into MEDIA_DIR once (mode 0600) and read back by every later start and
// by processes starting together, so links survive restarts; with S3 it is
// kept in DATA_DIR.
func TestMediaSignerSecret(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data", "media")
	log := slog.New(slog.DiscardHandler)
	cfg := Config{DataDir: filepath.Join(t.TempDir(), "elsewhere"), MediaDir: dir}
	signers := make([]interface {
		Query(string, time.Time) string
	}, 8)
	var wg sync.WaitGroup
	for i := range signers {
		wg.Go(func() {
			s, err := mediaSigner(cfg, log)
			if err != nil {
				t.Error(err)
				return
			}
			signers[i] = s
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	fi, err := os.Stat(filepath.Join(dir, mediaSecretFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("secret file: %v %v", fi, err)
	}
	id := "0123456789abcdef0123456789abcdef.mp3"
	exp := time.Now().Add(time.Hour)
	for i, s := range signers {
		if s.Query(id, exp) != signers[0].Query(id, exp) {
			t.Errorf("process %d signs with another secret", i)
		}
	}
	again, err := mediaSigner(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := url.ParseQuery(signers[0].Query(id, exp))
	if err := again.Verify(id, q, time.Now()); err != nil {
		t.Errorf("a link from before the restart: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("data dir holds %d files, want the secret only", len(entries))
	}

	s3 := Config{DataDir: t.TempDir(), MediaDir: dir, MediaS3Endpoint: "minio:9000"}
	if _, err := mediaSigner(s3, log); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s3.DataDir, mediaSecretFile)); err != nil {
		t.Errorf("with S3 the secret is not in DATA_DIR: %v", err)
	}

	cfg.MediaURLSecret = strings.Repeat("x", 32)
	given, err := mediaSigner(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := given.Verify(id, q, time.Now()); err == nil {
		t.Error("MEDIA_URL_SECRET did not replace the generated secret")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, mediaSecretFile)); bytes.Contains(b, []byte("xxxx")) {
		t.Error("MEDIA_URL_SECRET was written to disk")
	}
}

func TestMediaURLSecretConfig(t *testing.T) {
	t.Parallel()
	_, err := loadConfig(env(map[string]string{"MEDIA_URL_SECRET": "short"}))
	if err == nil || !strings.Contains(err.Error(), "MEDIA_URL_SECRET") {
		t.Errorf("a short secret: %v", err)
	}
	c, err := loadConfig(env(map[string]string{"MEDIA_URL_SECRET": strings.Repeat("s", 40)}))
	if err != nil || c.MediaURLSecret != strings.Repeat("s", 40) {
		t.Errorf("a good secret: %v %q", err, c.MediaURLSecret)
	}
}
