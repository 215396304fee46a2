package media

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7"

	"github.com/firegate/firegate/internal/testenv"
)

const testBucket = "firegate-media"

// Now and Since let the test clock drive the fake S3 server's timestamps,
// so objects' last-modified times follow it.
func (c *clock) Now() time.Time { return c.now() }

// Since is the test clock's time since t.
func (c *clock) Since(t time.Time) time.Duration { return c.now().Sub(t) }

// s3Bundle is a store on an in-process S3 server and what tests use to
// reach around it.
type s3Bundle struct {
	store  *S3Store
	clock  *clock
	client *minio.Client // the store's client, for direct bucket access
	hang   *atomic.Bool  // when set, the server answers nothing until the request ends
}

// setupS3 serves an in-memory gofakes3 over httptest, creates the bucket
// and returns a store on it under the prefix "media/".
func setupS3(t *testing.T) s3Bundle {
	t.Helper()
	c := &clock{t: time.Now()}
	backend := s3mem.New(s3mem.WithTimeSource(c))
	if err := backend.CreateBucket(testBucket); err != nil {
		t.Fatal(err)
	}
	faker := gofakes3.New(backend, gofakes3.WithTimeSource(c), gofakes3.WithTimeSkewLimit(0))
	handler := faker.Server()
	hang := &atomic.Bool{}
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hang.Load() {
			// The server notices a client hanging up only once the body
			// is read; release frees handlers left at the end.
			_, _ = io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	ctx, cancel := testCtx(t)
	defer cancel()
	s, err := NewS3Store(ctx, S3Options{
		Endpoint: strings.TrimPrefix(srv.URL, "http://"), Bucket: testBucket, Prefix: "media/",
		AccessKey: "test", SecretKey: "test-secret", Region: "us-east-1",
	}, testenv.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	s.now = c.now
	return s3Bundle{store: s, clock: c, client: s.client, hang: hang}
}

// putRaw writes an object straight into the bucket.
func (b s3Bundle) putRaw(t *testing.T, key, data string) {
	t.Helper()
	_, err := b.client.PutObject(t.Context(), testBucket, key, strings.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// exists reports whether key is in the bucket.
func (b s3Bundle) exists(t *testing.T, key string) bool {
	t.Helper()
	_, err := b.client.StatObject(t.Context(), testBucket, key, minio.StatObjectOptions{})
	if isNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

var _ interface {
	Put(context.Context, string, []byte, string) (string, error)
	Open(string) (io.ReadSeekCloser, string, time.Time, error)
	Sweep(context.Context) (int, error)
	RunJanitor(context.Context, time.Duration)
	TTL() time.Duration
} = (*S3Store)(nil)

func TestS3PutOpen(t *testing.T) {
	t.Parallel()
	b := setupS3(t)
	tests := []struct{ name, contentType, ext, served string }{
		{"png", "image/png", ".png", "image/png"},
		{"jpeg", "image/jpeg", ".jpg", "image/jpeg"},
		{"webp", "image/webp", ".webp", "image/webp"},
		{"pdf", "application/pdf", ".pdf", "application/pdf"},
		{"other", "text/plain; charset=utf-8", ".bin", "application/octet-stream"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte("data for " + tt.contentType)
			id, err := b.store.Put(t.Context(), "", data, tt.contentType)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(id, tt.ext) || !idPattern.MatchString(id) {
				t.Errorf("id %q for %s", id, tt.contentType)
			}
			if !b.exists(t, "media/"+id) {
				t.Errorf("object media/%s not in the bucket", id)
			}
			f, ct, mod, err := b.store.Open(id)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Error(err)
			}
			if !bytes.Equal(got, data) || ct != tt.served || b.clock.Since(mod) > time.Minute || b.clock.Since(mod) < -time.Second {
				t.Errorf("Open(%s) = %q, %q, %v", id, got, ct, mod)
			}
		})
	}
}

// TestS3ServeContent serves an object as handleMedia does, with a range,
// which seeks the object.
func TestS3ServeContent(t *testing.T) {
	t.Parallel()
	b := setupS3(t)
	data := []byte("%PDF-1.7 0123456789 the rest of the document")
	id, err := b.store.Put(t.Context(), "", data, "application/pdf")
	if err != nil {
		t.Fatal(err)
	}
	for _, rng := range []string{"", "bytes=9-18", "bytes=-8"} {
		f, ct, mod, err := b.store.Open(id)
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodGet, "/media/"+id, nil)
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		rec := httptest.NewRecorder()
		rec.Header().Set("Content-Type", ct)
		http.ServeContent(rec, req, "", mod, f)
		f.Close()
		want, status := data, http.StatusOK
		switch rng {
		case "bytes=9-18":
			want, status = data[9:19], http.StatusPartialContent
		case "bytes=-8":
			want, status = data[len(data)-8:], http.StatusPartialContent
		}
		if rec.Code != status || !bytes.Equal(rec.Body.Bytes(), want) || rec.Header().Get("Content-Type") != "application/pdf" {
			t.Errorf("range %q: %d %q %q", rng, rec.Code, rec.Body.Bytes(), rec.Header().Get("Content-Type"))
		}
	}
}

func TestS3IDsAreUnguessable(t *testing.T) {
	t.Parallel()
	b := setupS3(t)
	shape := regexp.MustCompile(`^[0-9a-f]{32}\.png$`)
	seen := map[string]bool{}
	for range 50 {
		id, err := b.store.Put(t.Context(), "", []byte("x"), "image/png")
		if err != nil {
			t.Fatal(err)
		}
		if !shape.MatchString(id) || seen[id] {
			t.Fatalf("id %q: want 32 fresh hex chars and .png", id)
		}
		seen[id] = true
	}
}

func TestS3OpenRejectsMissingAndBadIDs(t *testing.T) {
	t.Parallel()
	b := setupS3(t)
	// Objects the store must not serve: outside the prefix, and under it
	// with names that are not ids.
	b.putRaw(t, "0123456789abcdef0123456789abcdef.png", "outside the prefix")
	b.putRaw(t, "secret", "x")
	b.putRaw(t, "media/notes.png", "x")
	tests := []struct{ name, id string }{
		{"empty", ""},
		{"missing", "0123456789abcdef0123456789abcdef.png"},
		{"traversal", "../secret"},
		{"not an id", "notes.png"},
		{"upper case", "0123456789ABCDEF0123456789abcdef.png"},
		{"short", "x.png"},
		{"bad extension", "0123456789abcdef0123456789abcdef.exe"},
		{"slash", "0123456789abcdef/0123456789abcdef.png"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if f, _, _, err := b.store.Open(tt.id); !errors.Is(err, ErrNotFound) {
				if f != nil {
					f.Close()
				}
				t.Errorf("Open(%q): %v, want ErrNotFound", tt.id, err)
			}
		})
	}
}

func TestS3ExpiryAndSweep(t *testing.T) {
	t.Parallel()
	b := setupS3(t)
	oldID, err := b.store.Put(t.Context(), "", []byte("old"), "image/png")
	if err != nil {
		t.Fatal(err)
	}
	b.putRaw(t, "media/readme.txt", "not an id: never swept")
	b.putRaw(t, "elsewhere/0123456789abcdef0123456789abcdef.png", "outside the prefix: never swept")
	b.clock.add(DefaultTTL / 2)
	newID, err := b.store.Put(t.Context(), "", []byte("new"), "image/png")
	if err != nil {
		t.Fatal(err)
	}
	b.clock.add(DefaultTTL/2 + time.Minute)

	if _, _, _, err := b.store.Open(oldID); !errors.Is(err, ErrNotFound) {
		t.Errorf("expired Open: %v", err)
	}
	if b.exists(t, "media/"+oldID) {
		t.Error("expired object still in the bucket after Open")
	}
	f, _, _, err := b.store.Open(newID)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()

	if n, err := b.store.Sweep(t.Context()); err != nil || n != 0 {
		t.Errorf("Sweep = %d, %v; want nothing expired", n, err)
	}
	b.clock.add(DefaultTTL / 2)
	if n, err := b.store.Sweep(t.Context()); err != nil || n != 1 {
		t.Errorf("Sweep = %d, %v; want 1", n, err)
	}
	if b.exists(t, "media/"+newID) {
		t.Error("swept object still in the bucket")
	}
	if _, _, _, err := b.store.Open(newID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open after sweep: %v", err)
	}
	for _, key := range []string{"media/readme.txt", "elsewhere/0123456789abcdef0123456789abcdef.png"} {
		if !b.exists(t, key) {
			t.Errorf("Sweep deleted %s, which is not one of its ids", key)
		}
	}
}

func TestS3RunJanitor(t *testing.T) {
	t.Parallel()
	b := setupS3(t)
	id, err := b.store.Put(t.Context(), "", []byte("x"), "application/pdf")
	if err != nil {
		t.Fatal(err)
	}
	b.clock.add(2 * DefaultTTL)
	ctx, cancel := testCtx(t)
	done := make(chan struct{})
	go func() { b.store.RunJanitor(ctx, 10*time.Millisecond); close(done) }()
	testenv.Eventually(t, 5*time.Second, func() bool { return !b.exists(t, "media/"+id) },
		"janitor did not delete the expired object")
	cancel()
	<-done
}

// TestS3CallsHaveDeadlines makes the server hang and checks every call gives
// up after the store's deadline with an error other than ErrNotFound.
func TestS3CallsHaveDeadlines(t *testing.T) {
	t.Parallel()
	b := setupS3(t)
	id, err := b.store.Put(t.Context(), "", []byte("x"), "image/png")
	if err != nil {
		t.Fatal(err)
	}
	b.clock.add(2 * DefaultTTL)
	b.store.opTimeout = 200 * time.Millisecond
	b.store.sweepTimeout = 300 * time.Millisecond
	b.hang.Store(true)
	calls := []struct {
		name string
		call func() error
	}{
		{"put", func() error { _, err := b.store.Put(context.Background(), "", []byte("y"), "image/png"); return err }},
		{"open", func() error { _, _, _, err := b.store.Open(id); return err }},
		{"sweep", func() error { _, err := b.store.Sweep(context.Background()); return err }},
	}
	for _, c := range calls {
		start := time.Now()
		err := c.call()
		t.Logf("%s: %v", c.name, err)
		if err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("%s on a hung server: %v, want a timeout error", c.name, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s took %s", c.name, d)
		}
	}
}

func TestNewS3StoreErrors(t *testing.T) {
	t.Parallel()
	b := setupS3(t)
	endpoint := b.client.EndpointURL().Host
	tests := []struct {
		name string
		opts S3Options
		want string
	}{
		{"no endpoint", S3Options{Bucket: testBucket}, "no endpoint"},
		{"scheme", S3Options{Endpoint: "http://" + endpoint, Bucket: testBucket}, "without scheme"},
		{"no bucket", S3Options{Endpoint: endpoint}, "no bucket"},
		{"missing bucket", S3Options{Endpoint: endpoint, Bucket: "absent", Region: "us-east-1"}, "does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := testCtx(t)
			defer cancel()
			_, err := NewS3Store(ctx, tt.opts, testenv.Logger(t))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want %q", err, tt.want)
			}
		})
	}
}

func TestS3PutFileSigned(t *testing.T) {
	t.Parallel()
	b := setupS3(t)
	src := filepath.Join(t.TempDir(), "audio.mp3")
	data := bytes.Repeat([]byte("a"), 3000)
	if err := os.WriteFile(src, data, 0o600); err != nil {
		t.Fatal(err)
	}
	id, err := b.store.PutFile(t.Context(), "team-1", src, "audio/mpeg")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(id, ".mp3") || !Signed(id) {
		t.Fatalf("id %q", id)
	}
	f, ct, _, err := b.store.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(f)
	f.Close()
	if !bytes.Equal(got, data) || ct != "audio/mpeg" {
		t.Errorf("Open = %d bytes, %q", len(got), ct)
	}
	if n, err := b.store.teamBytes(t.Context(), teamTag("team-1")); err != nil || n != int64(len(data)) {
		t.Errorf("team usage %d, %v; want %d", n, err, len(data))
	}
	b.clock.add(DefaultSignedTTL + time.Second)
	if n, err := b.store.Sweep(t.Context()); err != nil || n != 1 {
		t.Errorf("Sweep after the signed TTL = %d, %v; want 1", n, err)
	}
	if b.exists(t, "media/"+id) {
		t.Error("expired audio still in the bucket")
	}
}
