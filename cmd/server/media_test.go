package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/firegate/firegate/internal/testenv"
)

// scrapeJSON posts a scrape body to the server and decodes the answer.
func scrapeJSON(t *testing.T, base, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(base+"/v2/scrape", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%d: not JSON: %.300s", resp.StatusCode, b)
	}
	return resp.StatusCode, m
}

// dataURI decodes a data: URI of the given content type.
func dataURI(t *testing.T, what string, v any, contentType string) []byte {
	t.Helper()
	s, _ := v.(string)
	b64, ok := strings.CutPrefix(s, "data:"+contentType+";base64,")
	if !ok {
		t.Fatalf("%s is %.80q, want a data:%s URI", what, s, contentType)
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return b
}

// mediaFiles lists the media directory (none when it does not exist).
func mediaFiles(t *testing.T, dir string) []os.DirEntry {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	// The generated media link secret lives beside the files it signs
	// links to; it is not a stored medium.
	return slices.DeleteFunc(entries, func(e os.DirEntry) bool { return e.Name() == mediaSecretFile })
}

// TestMediaZeroDataRetentionAndQuota runs the real server with the real
// Chromium. A zero-data-retention scrape gets its screenshot and action
// screenshot and PDF inline as data: URIs and nothing is written to the
// media directory; plain scrapes store 0600 files until the team quota is
// used up and then answer 429 MEDIA_QUOTA_EXCEEDED, while zero data
// retention still works. The store files are 0600 in a 0755 DATA_DIR.
func TestMediaZeroDataRetentionAndQuota(t *testing.T) {
	t.Parallel()
	chrome := testenv.ChromePath(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<html><body style="background:#fff"><h1>Harbour tides</h1><p>High water at 06:12.</p></body></html>`)
	}))
	defer site.Close()
	dataDir := t.TempDir()
	if err := os.Chmod(dataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	const quota = 120_000
	base := startServer(t, map[string]string{"AUTH_MODE": "off", "ALLOW_PRIVATE_TARGETS": "true", "QUEUE_WORKERS": "0",
		"CHROME_PATH": chrome, "BROWSER_MAX_TABS": "1", "DATA_DIR": dataDir, "MEDIA_TEAM_QUOTA_BYTES": "120000"})
	mediaDir := filepath.Join(dataDir, "media")

	zdr := `{"url":"` + site.URL + `/","zeroDataRetention":true,"formats":["markdown","screenshot"],"timeout":60000,
		"actions":[{"type":"screenshot"},{"type":"pdf"}]}`
	code, got := scrapeJSON(t, base, zdr)
	if code != 200 {
		t.Fatalf("zero data retention scrape: %d %v", code, got)
	}
	data := got["data"].(map[string]any)
	if png := dataURI(t, "screenshot", data["screenshot"], "image/png"); !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("screenshot is not a PNG: %.8q", png)
	}
	actions, _ := data["actions"].(map[string]any)
	shots, _ := actions["screenshots"].([]any)
	pdfs, _ := actions["pdfs"].([]any)
	if len(shots) != 1 || len(pdfs) != 1 {
		t.Fatalf("actions: %v", actions)
	}
	if png := dataURI(t, "action screenshot", shots[0], "image/png"); !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("action screenshot is not a PNG: %.8q", png)
	}
	if pdf := dataURI(t, "action pdf", pdfs[0], "application/pdf"); !bytes.HasPrefix(pdf, []byte("%PDF")) {
		t.Errorf("action pdf is not a PDF: %.8q", pdf)
	}
	if files := mediaFiles(t, mediaDir); len(files) != 0 {
		t.Errorf("zero data retention wrote %d media files", len(files))
	}

	// Plain scrapes store their screenshots until the quota is used up.
	plain := `{"url":"` + site.URL + `/","formats":["screenshot"],"timeout":60000,"maxAge":0}`
	stored := 0
	for i := 0; ; i++ {
		if i == 30 {
			t.Fatalf("30 screenshots stored under a %d-byte quota", quota)
		}
		code, got := scrapeJSON(t, base, plain)
		if code == http.StatusTooManyRequests {
			if got["code"] != "MEDIA_QUOTA_EXCEEDED" || !strings.Contains(got["error"].(string), "quota") {
				t.Errorf("quota answer: %v", got)
			}
			break
		}
		if code != 200 {
			t.Fatalf("plain scrape %d: %d %v", i, code, got)
		}
		u, _ := got["data"].(map[string]any)["screenshot"].(string)
		if !strings.HasPrefix(u, base+"/media/") {
			t.Fatalf("plain screenshot URL %q", u)
		}
		stored++
	}
	var total int64
	for _, e := range mediaFiles(t, mediaDir) {
		fi, _ := e.Info()
		total += fi.Size()
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("media file %s: mode %v, want 0600", e.Name(), fi.Mode().Perm())
		}
	}
	t.Logf("%d screenshots (%d bytes) stored before the %d-byte quota refused one", stored, total, quota)
	if n := len(mediaFiles(t, mediaDir)); stored == 0 || n != stored || total > quota {
		t.Errorf("%d stored, %d files of %d bytes under a %d-byte quota", stored, n, total, quota)
	}
	if code, got := scrapeJSON(t, base, zdr); code != 200 {
		t.Errorf("zero data retention with the quota used up: %d %v", code, got)
	}
	// The plain scrapes cached their documents with links to stored
	// screenshots; a zero data retention request that may read the cache
	// still gets its screenshot inline.
	zdrCached := `{"url":"` + site.URL + `/","zeroDataRetention":true,"formats":["screenshot"],"timeout":60000}`
	code, got = scrapeJSON(t, base, zdrCached)
	if code != 200 {
		t.Fatalf("zero data retention after cached scrapes: %d %v", code, got)
	}
	if shot, _ := got["data"].(map[string]any)["screenshot"].(string); !strings.HasPrefix(shot, "data:image/png;base64,") {
		t.Errorf("zero data retention screenshot after cached scrapes: %.60q", shot)
	}
	for _, name := range []string{"firegate.db", "firegate.db-wal", "firegate.db-shm"} {
		fi, err := os.Stat(filepath.Join(dataDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", name, fi.Mode().Perm())
		}
	}
	if fi, err := os.Stat(mediaDir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("media dir: %v %v, want 0700", fi.Mode().Perm(), err)
	}
}
