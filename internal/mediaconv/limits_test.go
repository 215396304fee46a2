package mediaconv

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/mediaconv/mediatest"
	"github.com/firegate/firegate/internal/testenv"
)

// playlistServer serves one HLS media playlist at /list.m3u8 and the test
// media under /media/, refusing requests that bypass the opener.
func playlistServer(t *testing.T, playlist func(base string) string) *httptest.Server {
	t.Helper()
	files := http.StripPrefix("/media/", http.FileServer(http.Dir(mediaDir(t))))
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/list.m3u8" {
			w.Header().Set("Content-Type", "application/vnd.apple.mpegurl")
			_, _ = w.Write([]byte(playlist(srv.URL)))
			return
		}
		files.ServeHTTP(w, r)
	}))
	mediatest.RequireHeader(srv, viaHeader)
	t.Cleanup(srv.Close)
	return srv
}

const hlsHead = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:0\n"

// TestAbsoluteSegmentsGoThroughTheOpener: segments a playlist names by
// absolute URL on another host are fetched through the opener too (that
// host refuses any other request).
func TestAbsoluteSegmentsGoThroughTheOpener(t *testing.T) {
	t.Parallel()
	other := playlistServer(t, func(string) string { return "" })
	srv := playlistServer(t, func(string) string {
		return hlsHead + "#EXTINF:1.0,\n" + other.URL + "/media/hls/seg0.ts\n#EXTINF:1.0,\n" + other.URL + "/media/hls/seg1.ts\n#EXT-X-ENDLIST\n"
	})
	o := &opener{}
	res, err := newConverter(t, Options{}).Convert(t.Context(), Request{URL: srv.URL + "/list.m3u8", Open: o.open, Video: true, Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	if !near(res.Video.Duration) {
		t.Errorf("duration %v, want %d s", res.Video.Duration, mediatest.Seconds)
	}
	n := 0
	for _, u := range o.urls {
		if strings.HasPrefix(u, other.URL) {
			n++
		}
	}
	if n < 2 {
		t.Errorf("%d requests to the other host through the opener, want both segments: %v", n, o.urls)
	}
}

// TestLocalFilesRefused: a playlist naming a local file gets nothing of
// it: ffmpeg may open http only.
func TestLocalFilesRefused(t *testing.T) {
	t.Parallel()
	local := filepath.Join(t.TempDir(), "seg1.ts")
	data, err := os.ReadFile(filepath.Join(mediaDir(t), "hls", "seg1.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(local, data, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := playlistServer(t, func(base string) string {
		return hlsHead + "#EXTINF:1.0,\n" + base + "/media/hls/seg0.ts\n#EXTINF:1.0,\nfile://" + local + "\n#EXT-X-ENDLIST\n"
	})
	o := &opener{}
	res, err := newConverter(t, Options{}).Convert(t.Context(), Request{URL: srv.URL + "/list.m3u8", Open: o.open, Video: true, Dir: t.TempDir()})
	if err == nil && res.Video.Duration > 1500*time.Millisecond {
		t.Fatalf("the local segment was read: %v of video", res.Video.Duration)
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	srv := origin(t)
	live := playlistServer(t, func(base string) string { // no end: its duration is unknown
		return hlsHead + "#EXTINF:1.0,\n" + base + "/media/hls/seg0.ts\n#EXTINF:1.0,\n" + base + "/media/hls/seg1.ts\n"
	})
	tests := []struct {
		name    string
		url     string
		opts    Options
		kind    error
		setting string
	}{
		{"too long", srv.URL + "/media/" + mediatest.MP4, Options{MaxSeconds: 1}, ErrTooLong, "MEDIA_MAX_SECONDS"},
		{"live too long", live.URL + "/list.m3u8", Options{MaxSeconds: 1}, ErrTooLong, "MEDIA_MAX_SECONDS"},
		{"too large", srv.URL + "/media/" + mediatest.MP4, Options{MaxBytes: 4096}, ErrTooLarge, "MEDIA_MAX_BYTES"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := &opener{}
			_, err := newConverter(t, tt.opts).Convert(t.Context(), Request{URL: tt.url, Open: o.open, Audio: true, Video: true, Dir: t.TempDir()})
			var le *LimitError
			if !errors.Is(err, tt.kind) || !errors.As(err, &le) {
				t.Fatalf("err = %v, want a %v limit error", err, tt.kind)
			}
			if !strings.Contains(le.Msg, tt.setting) {
				t.Errorf("message %q does not name %s", le.Msg, tt.setting)
			}
		})
	}
}

func TestNotMedia(t *testing.T) {
	t.Parallel()
	srv := origin(t)
	c := newConverter(t, Options{})
	for _, p := range []string{"/page/none", "/media/missing.mp4"} {
		o := &opener{}
		_, err := c.Convert(t.Context(), Request{URL: srv.URL + p, Open: o.open, Audio: true, Dir: t.TempDir()})
		if !errors.Is(err, ErrNotMedia) {
			t.Errorf("%s: err = %v, want ErrNotMedia", p, err)
		}
	}
	o := &opener{}
	_, err := c.Convert(t.Context(), Request{URL: srv.URL + "/media/" + mediatest.WAV, Open: o.open, Video: true, Dir: t.TempDir()})
	if !errors.Is(err, ErrNoTrack) {
		t.Errorf("video of a WAV: err = %v, want ErrNoTrack", err)
	}
}

// TestDeadline: a conversion stops at its context's deadline, whatever
// the origin does.
func TestDeadline(t *testing.T) {
	t.Parallel()
	dir := mediaDir(t)
	data, err := os.ReadFile(filepath.Join(dir, mediatest.MP3))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/mpeg")
		_, _ = w.Write(data[:len(data)/4])
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the rest never comes
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	o := &opener{}
	start := time.Now()
	_, err = newConverter(t, Options{}).Convert(ctx, Request{URL: srv.URL + "/tone.mp3", Open: o.open, Audio: true, Dir: t.TempDir()})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline", err)
	}
	t.Logf("returned %v after the start", time.Since(start))
}

func TestNotInstalled(t *testing.T) {
	t.Parallel()
	_, err := New(Options{FFmpegPath: filepath.Join(t.TempDir(), "ffmpeg")}, nil)
	if !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("err = %v, want ErrNotInstalled", err)
	}
}

// TestMemoryLimit: ffmpeg and ffprobe run under the address-space limit.
func TestMemoryLimit(t *testing.T) {
	t.Parallel()
	srv := origin(t)
	o := &opener{}
	_, err := newConverter(t, Options{MemoryBytes: 40 << 20}).Convert(t.Context(), Request{URL: srv.URL + "/media/" + mediatest.MP4, Open: o.open, Audio: true, Dir: t.TempDir()})
	var le *LimitError
	if !errors.As(err, &le) || !errors.Is(err, ErrTooLarge) || !strings.Contains(le.Msg, "memory limit") {
		t.Fatalf("err = %v, want the memory limit", err)
	}
}

// TestGatewayToken: the gateway serves ffmpeg only.
func TestGatewayToken(t *testing.T) {
	t.Parallel()
	o := &opener{}
	origin, _ := url.Parse("http://127.0.0.1:1")
	g, err := startGateway(t.Context(), o.open, origin, 0, testenv.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer g.close()
	for _, token := range []string{"", "wrong"} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, g.base+"/o/http/127.0.0.1:1/x.mp4", nil)
		if token != "" {
			req.Header.Set(tokenHeader, token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("token %q: status %d, want 403", token, resp.StatusCode)
		}
	}
	if n := o.calls.Load(); n != 0 {
		t.Errorf("%d requests reached the opener", n)
	}
}
