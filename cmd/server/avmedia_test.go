package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/media"
	"github.com/firegate/firegate/internal/mediaconv/mediatest"
	"github.com/firegate/firegate/internal/testenv"
)

// testMedia are the clips of the audio and video tests, made once.
type testMediaSet struct {
	once sync.Once
	dir  string
	err  error
}

var avMedia testMediaSet //nolint:gochecknoglobals // made once per test binary

// mediaSite serves the test clips and the pages that embed them.
func mediaSite(t *testing.T) *mediatest.Server {
	t.Helper()
	ffmpeg := mediatest.FFmpeg(t)
	avMedia.once.Do(func() {
		avMedia.dir, avMedia.err = os.MkdirTemp("", "server-media-*")
		if avMedia.err == nil {
			avMedia.err = mediatest.Generate(context.Background(), ffmpeg, avMedia.dir)
		}
	})
	if avMedia.err != nil {
		t.Fatal(avMedia.err)
	}
	return mediatest.Serve(t, avMedia.dir)
}

// mediaServerEnv is the environment of a server that fetches loopback
// pages over plain HTTP.
func mediaServerEnv(extra map[string]string) map[string]string {
	e := map[string]string{"AUTH_MODE": "off", "ALLOW_PRIVATE_TARGETS": "true", "QUEUE_WORKERS": "0", "BROWSER": "off"}
	for k, v := range extra {
		e[k] = v
	}
	return e
}

// download GETs a link without a key and writes its body to a file.
func download(t *testing.T, link, rng string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, link, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	path := filepath.Join(t.TempDir(), "download")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return resp, path
}

// nearClip reports whether d is within half a second of the clips'.
func nearClip(d time.Duration) bool {
	diff := d - mediatest.Seconds*time.Second
	return diff > -500*time.Millisecond && diff < 500*time.Millisecond
}

// TestAudioVideoFormats runs the real server on pages that embed the
// test clips in each way the formats look for, downloads the links it
// returns without a key and checks them with ffprobe.
func TestAudioVideoFormats(t *testing.T) {
	t.Parallel()
	site := mediaSite(t)
	dataDir := t.TempDir()
	base := startServer(t, mediaServerEnv(map[string]string{"DATA_DIR": dataDir}))
	tests := []struct {
		path    string
		formats string
	}{
		{"/media/" + mediatest.MP4, `"audio","video"`}, // the URL is the media
		{"/media/" + mediatest.HLSMaster, `"audio"`},
		{"/page/video-src", `"markdown","video"`},
		{"/page/video-source", `"video"`}, // WebM after an unreadable source: encoded to H.264
		{"/page/audio", `"audio"`},
		{"/page/og-video", `"video"`},
		{"/page/og-audio", `"audio"`},
		{"/page/twitter", `"audio"`}, // the video's sound
		{"/page/jsonld", `"video"`},
		{"/page/jsonld-audio", `"audio"`},
		{"/page/hls", `"audio","video"`},
		{"/page/dash", `"video"`},
	}
	var firstAudio string
	for _, tt := range tests {
		t.Run(strings.TrimPrefix(tt.path, "/"), func(t *testing.T) {
			code, got := scrapeJSON(t, base, `{"url":"`+site.URL+tt.path+`","formats":[`+tt.formats+`],"timeout":120000}`)
			if code != 200 {
				t.Fatalf("scrape: %d %v", code, got)
			}
			data := got["data"].(map[string]any)
			if w, ok := data["warning"]; ok {
				t.Errorf("warning %v", w)
			}
			if strings.Contains(tt.formats, "markdown") && !strings.Contains(data["markdown"].(string), "A page with media") {
				t.Errorf("markdown %q", data["markdown"])
			}
			credits := 1
			for _, f := range []struct{ name, ctype, audio, video string }{
				{"audio", "audio/mpeg", "mp3", ""},
				{"video", "video/mp4", "aac", "h264"},
			} {
				if !strings.Contains(tt.formats, `"`+f.name+`"`) {
					if _, ok := data[f.name]; ok {
						t.Errorf("%s returned without being asked for", f.name)
					}
					continue
				}
				credits += 4
				link, _ := data[f.name].(string)
				if !strings.HasPrefix(link, base+"/media/") || !strings.Contains(link, "signature=") {
					t.Fatalf("%s link %q", f.name, link)
				}
				if f.name == "audio" && firstAudio == "" {
					firstAudio = link
				}
				resp, file := download(t, link, "")
				if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != f.ctype {
					t.Fatalf("GET %s: %d %s", f.name, resp.StatusCode, resp.Header.Get("Content-Type"))
				}
				p, err := mediatest.ProbeFile(t.Context(), file)
				if err != nil {
					t.Fatal(err)
				}
				if p.Audio != f.audio || p.Video != f.video || !nearClip(p.Duration) {
					t.Errorf("%s: %+v, want audio %q video %q of %d s", f.name, p, f.audio, f.video, mediatest.Seconds)
				}
			}
			meta := data["metadata"].(map[string]any)
			if meta["creditsUsed"] != float64(credits) {
				t.Errorf("creditsUsed %v, want %d", meta["creditsUsed"], credits)
			}
		})
	}
	if t.Failed() || firstAudio == "" {
		return
	}

	// Players seek: a range of the file.
	resp, file := download(t, firstAudio, "bytes=0-99")
	if b, _ := os.ReadFile(file); resp.StatusCode != http.StatusPartialContent || len(b) != 100 || !strings.HasPrefix(resp.Header.Get("Content-Range"), "bytes 0-99/") {
		t.Errorf("range: %d, %d bytes, %q", resp.StatusCode, len(b), resp.Header.Get("Content-Range"))
	}
	// A changed link is refused, an expired one gone: the test signs one
	// with the server's generated secret, an hour late.
	u, _ := url.Parse(firstAudio)
	for _, bad := range []string{strings.Replace(firstAudio, "signature=", "signature=1", 1), base + u.Path} {
		if resp, _ := download(t, bad, ""); resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s: %d, want 403", bad, resp.StatusCode)
		}
	}
	secret, err := os.ReadFile(filepath.Join(dataDir, "media", mediaSecretFile))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := media.NewSigner(bytes.TrimSpace(secret))
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimPrefix(u.Path, "/media/")
	expired := base + u.Path + "?" + signer.Query(id, time.Now().Add(-time.Minute))
	if resp, _ := download(t, expired, ""); resp.StatusCode != http.StatusGone {
		t.Errorf("expired link: %d, want 410", resp.StatusCode)
	}
	if resp, _ := download(t, base+u.Path+"?"+signer.Query(id, time.Now().Add(time.Minute)), ""); resp.StatusCode != 200 {
		t.Errorf("a link the test signed with the server's secret: %d, want 200", resp.StatusCode)
	}
}

// TestAudioVideoWithoutMedia: a page without media gives null and a
// warning, and the other formats; zero data retention is refused; v1
// clients get the format too.
func TestAudioVideoWithoutMedia(t *testing.T) {
	t.Parallel()
	site := mediaSite(t)
	base := startServer(t, mediaServerEnv(nil))
	code, got := scrapeJSON(t, base, `{"url":"`+site.URL+`/page/none","formats":["markdown","audio","video"]}`)
	if code != 200 {
		t.Fatalf("scrape: %d %v", code, got)
	}
	data := got["data"].(map[string]any)
	if a, ok := data["audio"]; !ok || a != nil {
		t.Errorf("audio %v (present %v), want null", a, ok)
	}
	if v, ok := data["video"]; !ok || v != nil {
		t.Errorf("video %v (present %v), want null", v, ok)
	}
	if w, _ := data["warning"].(string); !strings.Contains(w, "No audio or video was found") {
		t.Errorf("warning %q", w)
	}
	if md, _ := data["markdown"].(string); !strings.Contains(md, "No media here") {
		t.Errorf("markdown %q", md)
	}
	if c := data["metadata"].(map[string]any)["creditsUsed"]; c != float64(1) {
		t.Errorf("creditsUsed %v for no media, want 1", c)
	}

	code, got = scrapeJSON(t, base, `{"url":"`+site.URL+`/page/audio","formats":["audio"],"zeroDataRetention":true}`)
	if code != 400 || got["code"] != "SCRAPE_ZDR_VIOLATION_ERROR" {
		t.Errorf("zero data retention: %d %v", code, got)
	}

	resp, err := http.Post(base+"/v1/scrape", "application/json", strings.NewReader(`{"url":"`+site.URL+`/page/audio","formats":["audio"]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"audio":"`+base+`/media/`)) {
		t.Errorf("v1 scrape: %d %.300s", resp.StatusCode, b)
	}
}

// TestAudioVideoLimits: media past MEDIA_MAX_SECONDS or MEDIA_MAX_BYTES
// answer 422 naming the setting; past the team's media quota 429.
func TestAudioVideoLimits(t *testing.T) {
	t.Parallel()
	site := mediaSite(t)
	for _, tt := range []struct{ env, value string }{{"MEDIA_MAX_SECONDS", "1"}, {"MEDIA_MAX_BYTES", "4096"}} {
		base := startServer(t, mediaServerEnv(map[string]string{tt.env: tt.value}))
		code, got := scrapeJSON(t, base, `{"url":"`+site.URL+`/page/video-src","formats":["video"]}`)
		if msg, _ := got["error"].(string); code != 422 || got["code"] != "SCRAPE_MEDIA_TOO_LARGE" || !strings.Contains(msg, tt.env) {
			t.Errorf("%s=%s: %d %v", tt.env, tt.value, code, got)
		}
	}
	// The files count against the team's media quota.
	base := startServer(t, mediaServerEnv(map[string]string{"MEDIA_TEAM_QUOTA_BYTES": "1000"}))
	code, got := scrapeJSON(t, base, `{"url":"`+site.URL+`/page/audio","formats":["audio"]}`)
	if code != http.StatusTooManyRequests || got["code"] != "MEDIA_QUOTA_EXCEEDED" {
		t.Errorf("over the media quota: %d %v", code, got)
	}
}

// TestAudioVideoWithoutFFmpeg: without ffmpeg the server starts, the
// formats answer 400 naming FFMPEG_PATH, and other scrapes work.
func TestAudioVideoWithoutFFmpeg(t *testing.T) {
	t.Parallel()
	site := mediaSite(t)
	base := startServer(t, mediaServerEnv(map[string]string{"FFMPEG_PATH": filepath.Join(t.TempDir(), "ffmpeg")}))
	code, got := scrapeJSON(t, base, `{"url":"`+site.URL+`/page/audio","formats":["audio"]}`)
	if msg, _ := got["error"].(string); code != 400 || got["code"] != "SCRAPE_MEDIA_NOT_SUPPORTED" || !strings.Contains(msg, "FFMPEG_PATH") {
		t.Errorf("audio without ffmpeg: %d %v", code, got)
	}
	if code, got := scrapeJSON(t, base, `{"url":"`+site.URL+`/page/audio","formats":["markdown"]}`); code != 200 {
		t.Errorf("markdown without ffmpeg: %d %v", code, got)
	}
}

// TestAudioVideoInTheBrowser: a player that sets its source by script, and
// one that plays a blob it fetched (only its request names the file), are
// found by rendering the page in Chromium when its HTML has no media.
func TestAudioVideoInTheBrowser(t *testing.T) {
	t.Parallel()
	chrome := testenv.ChromePath(t)
	site := mediaSite(t)
	env := mediaServerEnv(map[string]string{"CHROME_PATH": chrome, "BROWSER_MAX_TABS": "1"})
	delete(env, "BROWSER")
	base := startServer(t, env)
	for _, path := range []string{"/page/script-player", "/page/mse-player"} {
		code, got := scrapeJSON(t, base, `{"url":"`+site.URL+path+`","formats":["markdown","video"],"timeout":120000}`)
		if code != 200 {
			t.Fatalf("%s: %d %v", path, code, got)
		}
		data := got["data"].(map[string]any)
		link, _ := data["video"].(string)
		if !strings.HasPrefix(link, base+"/media/") {
			t.Fatalf("%s: video %v, warning %v", path, data["video"], data["warning"])
		}
		resp, file := download(t, link, "")
		if resp.StatusCode != 200 {
			t.Fatalf("%s: GET the video: %d", path, resp.StatusCode)
		}
		p, err := mediatest.ProbeFile(t.Context(), file)
		if err != nil {
			t.Fatal(err)
		}
		if p.Video != "h264" || p.Audio != "aac" || !nearClip(p.Duration) {
			t.Errorf("%s: %+v", path, p)
		}
	}
}

// TestAudioVideoWithYtdlp: a page whose media only a player's setup call
// names is given to yt-dlp (on PATH), whose requests go through the
// guarded proxy; without it the page has no media.
func TestAudioVideoWithYtdlp(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("yt-dlp"); err != nil {
		testenv.Unavailable(t, "yt-dlp not on PATH: %v", err)
	}
	site := mediaSite(t)
	var mu sync.Mutex
	agents := map[string]map[string]bool{} // path -> user agents
	inner := site.Config.Handler
	site.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if agents[r.URL.Path] == nil {
			agents[r.URL.Path] = map[string]bool{}
		}
		ua := r.UserAgent()
		if r.Header.Get("Range") != "" {
			ua = "ranged " + ua // ffmpeg's, through the server's client
		}
		agents[r.URL.Path][ua] = true
		mu.Unlock()
		inner.ServeHTTP(w, r)
	})
	base := startServer(t, mediaServerEnv(nil))
	code, got := scrapeJSON(t, base, `{"url":"`+site.URL+`/page/jwplayer","formats":["audio"],"timeout":120000}`)
	if code != 200 {
		t.Fatalf("scrape: %d %v", code, got)
	}
	data := got["data"].(map[string]any)
	link, _ := data["audio"].(string)
	if !strings.HasPrefix(link, base+"/media/") {
		t.Fatalf("audio %v, warning %v", data["audio"], data["warning"])
	}
	resp, file := download(t, link, "")
	if resp.StatusCode != 200 {
		t.Fatalf("GET the audio: %d", resp.StatusCode)
	}
	if p, err := mediatest.ProbeFile(t.Context(), file); err != nil || p.Audio != "mp3" || !nearClip(p.Duration) {
		t.Errorf("audio %+v %v", p, err)
	}
	// ffmpeg's requests (ranged, through the server's client) carried the
	// user agent yt-dlp used for the page and said the URL needs.
	mu.Lock()
	var shared bool
	for ua := range agents["/media/"+mediatest.MP4] {
		ua, ranged := strings.CutPrefix(ua, "ranged ")
		shared = shared || ranged && ua != fetch.DefaultUserAgent && agents["/page/jwplayer"][ua]
	}
	mu.Unlock()
	if !shared {
		t.Errorf("user agents: page %v, media %v", agents["/page/jwplayer"], agents["/media/"+mediatest.MP4])
	}

	off := startServer(t, mediaServerEnv(map[string]string{"YTDLP_PATH": filepath.Join(t.TempDir(), "yt-dlp")}))
	code, got = scrapeJSON(t, off, `{"url":"`+site.URL+`/page/jwplayer","formats":["audio"]}`)
	if data, _ := got["data"].(map[string]any); code != 200 || data["audio"] != nil {
		t.Errorf("without yt-dlp: %d %v", code, got)
	}
}

// TestAudioVideoWithYtdlpThroughTheOutboundProxy: with PROXY_URLS, yt-dlp's
// requests go through the outbound proxy the page came through, as the
// page's and the media's do: the site answers only requests that came
// through it.
func TestAudioVideoWithYtdlpThroughTheOutboundProxy(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("yt-dlp"); err != nil {
		testenv.Unavailable(t, "yt-dlp not on PATH: %v", err)
	}
	site := mediaSite(t)
	mediatest.OnlyProxied(site.Server)
	proxy, proxied := mediatest.ForwardProxy(t)
	base := startServer(t, mediaServerEnv(map[string]string{"PROXY_URLS": proxy.URL}))
	code, got := scrapeJSON(t, base, `{"url":"`+site.URL+`/page/jwplayer","formats":["audio"],"proxy":"basic","timeout":120000}`)
	if code != 200 {
		t.Fatalf("scrape: %d %v", code, got)
	}
	data := got["data"].(map[string]any)
	if link, _ := data["audio"].(string); !strings.HasPrefix(link, base+"/media/") {
		t.Fatalf("audio %v, warning %v (%d requests through the proxy)", data["audio"], data["warning"], proxied.Load())
	}
	// The page, yt-dlp's page and player requests, ffmpeg's media reads.
	if n := proxied.Load(); n < 3 {
		t.Errorf("%d requests through the outbound proxy, want the page's, yt-dlp's and the media's", n)
	}
}
