package mediaconv

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/mediaconv/mediatest"
	"github.com/firegate/firegate/internal/testenv"
)

// media is the set of test files, made once for the package's tests.
type media struct {
	once sync.Once
	dir  string
	err  error
}

var testMedia media //nolint:gochecknoglobals // made once per test binary

func TestMain(m *testing.M) {
	code := m.Run()
	if testMedia.dir != "" {
		os.RemoveAll(testMedia.dir)
	}
	os.Exit(code)
}

// mediaDir returns the directory of the test media, making them on first
// use.
func mediaDir(t *testing.T) string {
	t.Helper()
	ffmpeg := mediatest.FFmpeg(t)
	testMedia.once.Do(func() {
		testMedia.dir, testMedia.err = os.MkdirTemp("", "mediaconv-test-*")
		if testMedia.err == nil {
			testMedia.err = mediatest.Generate(context.Background(), ffmpeg, testMedia.dir)
		}
	})
	if testMedia.err != nil {
		t.Fatal(testMedia.err)
	}
	return testMedia.dir
}

// viaHeader marks the requests of the test opener; the origin refuses
// others, so a request ffmpeg made on its own would fail the test.
const viaHeader = "X-Test-Opener"

// origin serves the test media, refusing requests that did not come
// through the opener.
func origin(t *testing.T) *mediatest.Server {
	t.Helper()
	s := mediatest.Serve(t, mediaDir(t))
	mediatest.RequireHeader(s.Server, viaHeader)
	return s
}

// opener fetches with a plain client, counting its requests.
type opener struct {
	calls atomic.Int64
	mu    sync.Mutex
	urls  []string
}

func (o *opener) open(ctx context.Context, req OpenRequest) (*OpenResponse, error) {
	o.calls.Add(1)
	o.mu.Lock()
	o.urls = append(o.urls, req.URL)
	o.mu.Unlock()
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, req.URL, nil)
	if err != nil {
		return nil, err
	}
	hr.Header.Set(viaHeader, "1")
	if req.Range != "" {
		hr.Header.Set("Range", req.Range)
	}
	resp, err := http.DefaultTransport.RoundTrip(hr)
	if err != nil {
		return nil, err
	}
	return &OpenResponse{URL: req.URL, StatusCode: resp.StatusCode, Header: resp.Header, Body: resp.Body}, nil
}

func newConverter(t *testing.T, opts Options) *Converter {
	t.Helper()
	c, err := New(opts, testenv.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// near reports whether d is within half a second of the clips' duration.
func near(d time.Duration) bool {
	diff := d - mediatest.Seconds*time.Second
	return diff > -500*time.Millisecond && diff < 500*time.Millisecond
}

func TestConvert(t *testing.T) {
	t.Parallel()
	srv := origin(t)
	c := newConverter(t, Options{})
	tests := []struct {
		file                   string
		audio, video           bool
		wantAudio, wantVideo   string // codecs of the outputs: audio file, video file's video
		wantVideoAudio         string // the MP4's audio codec
		noAudioOut, noVideoOut bool
	}{
		{file: mediatest.MP4, audio: true, video: true, wantAudio: "mp3", wantVideo: "h264", wantVideoAudio: "aac"},
		{file: mediatest.WebM, audio: true, video: true, wantAudio: "mp3", wantVideo: "h264", wantVideoAudio: "aac"},
		{file: mediatest.WAV, audio: true, wantAudio: "mp3"},
		{file: mediatest.WAV, audio: true, video: true, wantAudio: "mp3", noVideoOut: true},
		{file: mediatest.MP3, audio: true, wantAudio: "mp3"},
		{file: mediatest.HLSMaster, audio: true, video: true, wantAudio: "mp3", wantVideo: "h264", wantVideoAudio: "aac"},
		{file: mediatest.HLSMedia, video: true, wantVideo: "h264", wantVideoAudio: "aac"},
		{file: mediatest.DASH, audio: true, video: true, wantAudio: "mp3", wantVideo: "h264", wantVideoAudio: "aac"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s audio=%v video=%v", tt.file, tt.audio, tt.video), func(t *testing.T) {
			t.Parallel()
			o := &opener{}
			res, err := c.Convert(t.Context(), Request{URL: srv.URL + "/media/" + tt.file, Open: o.open, Audio: tt.audio, Video: tt.video, Dir: t.TempDir()})
			if err != nil {
				t.Fatalf("Convert: %v (requests: %v)", err, o.urls)
			}
			if !near(res.Duration) {
				t.Errorf("probed duration %v, want %d s", res.Duration, mediatest.Seconds)
			}
			check := func(f *File, ctype, audio, video string) {
				t.Helper()
				if f == nil {
					t.Fatalf("no %s output", ctype)
				}
				if f.ContentType != ctype {
					t.Errorf("content type %q, want %q", f.ContentType, ctype)
				}
				p, err := mediatest.ProbeFile(t.Context(), f.Path)
				if err != nil {
					t.Fatal(err)
				}
				if p.Audio != audio || p.Video != video {
					t.Errorf("%s: codecs audio %q video %q, want %q %q", ctype, p.Audio, p.Video, audio, video)
				}
				if !near(p.Duration) || !near(f.Duration) {
					t.Errorf("%s: duration %v (reported %v), want %d s", ctype, p.Duration, f.Duration, mediatest.Seconds)
				}
				if fi, err := os.Stat(f.Path); err != nil || fi.Size() != f.Size || f.Size == 0 {
					t.Errorf("%s: size %d, file %v %v", ctype, f.Size, fi, err)
				}
			}
			if tt.audio && !tt.noAudioOut {
				check(res.Audio, TypeMP3, tt.wantAudio, "")
			}
			if tt.video && !tt.noVideoOut {
				check(res.Video, TypeMP4, tt.wantVideoAudio, tt.wantVideo)
			}
			if tt.noVideoOut && res.Video != nil {
				t.Errorf("a video output for %s, which has no video", tt.file)
			}
			if !tt.audio && res.Audio != nil || !tt.video && res.Video != nil {
				t.Errorf("an output not asked for: %+v", res)
			}
			t.Logf("requests: %v", o.urls)
			for _, u := range o.urls {
				if strings.Contains(u, "missing/") {
					t.Errorf("the weaker HLS variant was fetched: %s", u)
				}
			}
		})
	}
}
