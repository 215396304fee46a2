// Package mediatest makes small media files with ffmpeg for tests (a test
// pattern video with a sine tone as MP4, WebM, WAV, MP3, HLS and DASH) and
// serves them, with pages that embed them, from a loopback HTTP server.
package mediatest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/testenv"
)

// Seconds is the duration of every clip.
const Seconds = 2

// Files of a Set, relative to its directory and the server's /media/.
const (
	MP4       = "clip.mp4"  // H.264 and AAC
	WebM      = "clip.webm" // VP8 and Vorbis
	WAV       = "tone.wav"  // PCM
	MP3       = "tone.mp3"
	HLSMaster = "hls/master.m3u8" // two variants, the better one real
	HLSMedia  = "hls/index.m3u8"  // MPEG-TS segments of one second
	DASH      = "dash/manifest.mpd"
)

// FFmpeg returns the ffmpeg on PATH, or skips the test (fails it under
// REQUIRE_INTEGRATION=1).
func FFmpeg(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath("ffmpeg")
	if err != nil {
		testenv.Unavailable(tb, "mediatest: ffmpeg not on PATH: %v", err)
	}
	if _, err := exec.LookPath("ffprobe"); err != nil {
		testenv.Unavailable(tb, "mediatest: ffprobe not on PATH: %v", err)
	}
	return p
}

// Generate writes every file of a Set into dir with ffmpeg (about a second
// of CPU).
func Generate(ctx context.Context, ffmpeg, dir string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	src := []string{"-f", "lavfi", "-i", "testsrc=size=160x120:rate=25:duration=" + strconv.Itoa(Seconds),
		"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=" + strconv.Itoa(Seconds)}
	tone := []string{"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=" + strconv.Itoa(Seconds)}
	for _, d := range []string{"hls", "dash"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	jobs := [][]string{
		append(append([]string{}, src...), "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", filepath.Join(dir, MP4)),
		append(append([]string{}, src...), "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "200k", "-c:a", "libvorbis", "-shortest", filepath.Join(dir, WebM)),
		append(append([]string{}, tone...), "-c:a", "pcm_s16le", filepath.Join(dir, WAV)),
		append(append([]string{}, tone...), "-c:a", "libmp3lame", "-q:a", "6", filepath.Join(dir, MP3)),
		append(append([]string{}, src...), "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-g", "25", "-c:a", "aac", "-shortest",
			"-f", "hls", "-hls_time", "1", "-hls_playlist_type", "vod", "-hls_segment_filename", filepath.Join(dir, "hls", "seg%d.ts"), filepath.Join(dir, HLSMedia)),
		append(append([]string{}, src...), "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-g", "25", "-c:a", "aac", "-shortest",
			"-f", "dash", "-seg_duration", "1", "-use_template", "1", "-use_timeline", "0", filepath.Join(dir, DASH)),
	}
	for _, args := range jobs {
		args = append([]string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y"}, args...)
		if out, err := exec.CommandContext(ctx, ffmpeg, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("mediatest: ffmpeg %s: %v: %s", args[len(args)-1], err, out)
		}
	}
	// A master playlist whose best variant is the real one; the other
	// names a playlist that does not exist, so choosing it fails.
	master := "#EXTM3U\n#EXT-X-VERSION:3\n" +
		"#EXT-X-STREAM-INF:BANDWIDTH=100000,RESOLUTION=80x60\nmissing/low.m3u8\n" +
		"#EXT-X-STREAM-INF:BANDWIDTH=900000,RESOLUTION=160x120\nindex.m3u8\n"
	return os.WriteFile(filepath.Join(dir, HLSMaster), []byte(master), 0o644)
}

// Server serves a Set under /media/ and pages embedding its files under
// /page/ (see Pages).
type Server struct {
	*httptest.Server
	Dir string
}

// Pages maps each page path to the file it embeds ("" for none).
var Pages = map[string]string{ //nolint:gochecknoglobals // a fixed table of test pages
	"/page/video-src":     MP4,
	"/page/video-source":  WebM,
	"/page/audio":         WAV,
	"/page/og-video":      MP4,
	"/page/og-audio":      MP3,
	"/page/twitter":       MP4,
	"/page/jsonld":        MP4,
	"/page/jsonld-audio":  WAV,
	"/page/hls":           HLSMaster,
	"/page/dash":          DASH,
	"/page/none":          "",
	"/page/script-player": MP4,
	"/page/mse-player":    MP4,
	"/page/jwplayer":      MP4,
}

// Serve starts a loopback server for the Set in dir; it is closed when the
// test ends.
func Serve(tb testing.TB, dir string) *Server {
	tb.Helper()
	s := &Server{Dir: dir}
	mux := http.NewServeMux()
	mux.HandleFunc("/media/", func(w http.ResponseWriter, r *http.Request) {
		name := path.Clean(strings.TrimPrefix(r.URL.Path, "/media/"))
		f, err := os.Open(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || strings.HasPrefix(name, "..") {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil || fi.IsDir() {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", ContentType(name))
		http.ServeContent(w, r, "", fi.ModTime(), f)
	})
	mux.HandleFunc("/page/", func(w http.ResponseWriter, r *http.Request) {
		body, ok := page(r.URL.Path)
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(body))
	})
	s.Server = httptest.NewServer(mux)
	tb.Cleanup(s.Close)
	return s
}

// ContentType is the type the server sends for a file.
func ContentType(name string) string {
	switch path.Ext(name) {
	case ".mp4":
		return "video/mp4"
	case ".webm":
		return "video/webm"
	case ".wav":
		return "audio/wav"
	case ".mp3":
		return "audio/mpeg"
	case ".m3u8":
		return "application/vnd.apple.mpegurl"
	case ".ts":
		return "video/mp2t"
	case ".mpd":
		return "application/dash+xml"
	case ".m4s":
		return "video/iso.segment"
	}
	return "application/octet-stream"
}

// page is the HTML of one of Pages.
func page(p string) (string, bool) {
	file, ok := Pages[p]
	if !ok {
		return "", false
	}
	src := "/media/" + file
	var head, body string
	switch p {
	case "/page/video-src":
		body = `<video src="` + src + `" width="640" height="360" controls></video>` +
			`<video src="/media/small.mp4" width="64" height="36"></video>`
	case "/page/video-source":
		body = `<video controls><source src="/media/clip.mkv" type="video/x-unknown"><source src="` + src + `" type="video/webm"></video>`
	case "/page/audio":
		body = `<audio controls src="` + src + `"></audio>`
	case "/page/og-video":
		head = `<meta property="og:video" content="/player.html"><meta property="og:video:type" content="text/html">` +
			`<meta property="og:video:url" content="` + src + `"><meta property="og:video:type" content="video/mp4">`
	case "/page/og-audio":
		head = `<meta property="og:audio" content="` + src + `">`
	case "/page/twitter":
		head = `<meta name="twitter:card" content="player"><meta name="twitter:player" content="/embed">` +
			`<meta name="twitter:player:stream" content="` + src + `">`
	case "/page/jsonld", "/page/jsonld-audio":
		typ := "VideoObject"
		if p == "/page/jsonld-audio" {
			typ = "AudioObject"
		}
		// Cannot fail: maps and a slice of strings.
		ld, _ := json.Marshal(map[string]any{"@context": "https://schema.org", "@graph": []any{
			map[string]any{"@type": "WebPage", "name": "A talk"},
			map[string]any{"@type": typ, "name": "The talk", "contentUrl": src, "duration": "PT2S"},
		}})
		head = `<script type="application/ld+json">` + string(ld) + `</script>`
	case "/page/hls", "/page/dash":
		body = `<video controls src="` + src + `"></video>`
	case "/page/none":
		body = `<p>No media here, only an <img src="/media/picture.png" alt="picture"> and a <a href="/media/clip.mp4">link</a>.</p>`
	case "/page/script-player":
		body = `<div id="player"></div><script>
var v = document.createElement("video");
v.preload = "auto"; v.muted = true;
v.src = "` + src + `";
document.getElementById("player").appendChild(v);
</script>`
	case "/page/jwplayer": // a player's setup call: yt-dlp's generic extractor reads it
		body = `<div id="player"></div><script>
function jwplayer(id) { return { setup: function (c) { document.getElementById(id).dataset.ready = "1"; } }; }
jwplayer("player").setup({"file": "` + src + `", "title": "The talk"});
</script>`
	case "/page/mse-player": // the element plays a blob: only the request names the file
		body = `<div id="player"></div><script>
fetch("` + src + `").then(function (r) { return r.blob(); }).then(function (b) {
  var v = document.createElement("video");
  v.muted = true; v.src = URL.createObjectURL(b);
  document.getElementById("player").appendChild(v);
});
</script>`
	}
	return "<!doctype html><html><head><title>Media page</title>" + head + "</head><body><h1>A page with media</h1>" +
		"<p>Some words about the media on this page, long enough to be its content.</p>" + body + "</body></html>", true
}

// Probe is what ffprobe says of a file: the codec of its first audio and
// video streams ("" when none) and its duration.
type Probe struct {
	Audio, Video string
	Duration     time.Duration
}

// ProbeFile runs ffprobe on a local file.
func ProbeFile(ctx context.Context, file string) (Probe, error) {
	out, err := exec.CommandContext(ctx, "ffprobe", "-v", "error", "-print_format", "json", "-show_format", "-show_streams", file).Output()
	if err != nil {
		return Probe{}, fmt.Errorf("mediatest: ffprobe %s: %w", file, err)
	}
	var p struct {
		Streams []struct {
			CodecType string `json:"codec_type"`
			CodecName string `json:"codec_name"`
		} `json:"streams"`
		Format struct {
			Duration string `json:"duration"`
		} `json:"format"`
	}
	if err := json.Unmarshal(out, &p); err != nil {
		return Probe{}, err
	}
	var r Probe
	for _, s := range p.Streams {
		switch {
		case s.CodecType == "audio" && r.Audio == "":
			r.Audio = s.CodecName
		case s.CodecType == "video" && r.Video == "":
			r.Video = s.CodecName
		}
	}
	d, _ := strconv.ParseFloat(p.Format.Duration, 64)
	r.Duration = time.Duration(d * float64(time.Second))
	return r, nil
}
