package mediaconv

import (
	"errors"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/firegate/firegate/internal/mediaconv/mediatest"
	"github.com/firegate/firegate/internal/testenv"
)

// TestExtractThroughTheProxy: yt-dlp reads a player's setup call, and its
// requests go through the proxy it is given (the page refuses others).
func TestExtractThroughTheProxy(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("yt-dlp"); err != nil {
		testenv.Unavailable(t, "yt-dlp not on PATH: %v", err)
	}
	srv := mediatest.Serve(t, mediaDir(t))
	mediatest.OnlyProxied(srv.Server)
	proxy, proxied := mediatest.ForwardProxy(t)
	other, otherProxied := mediatest.ForwardProxy(t)
	x, err := NewExtractor(ExtractorOptions{Proxy: proxy.URL}, testenv.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	urls, err := x.Extract(t.Context(), srv.URL+"/page/jwplayer", false, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(urls) != 1 || urls[0].URL != srv.URL+"/media/"+mediatest.MP4 || urls[0].Headers["User-Agent"] == "" {
		t.Errorf("media %+v", urls)
	}
	if proxied.Load() == 0 || otherProxied.Load() != 0 {
		t.Errorf("yt-dlp made %d requests through its proxy, %d through another, want some and none", proxied.Load(), otherProxied.Load())
	}
	// Through the route of this page's outbound proxy: that proxy only.
	before := proxied.Load()
	if urls, err := x.Extract(t.Context(), srv.URL+"/page/jwplayer", false, other.URL); err != nil || len(urls) != 1 {
		t.Fatalf("through another proxy: %+v, %v", urls, err)
	}
	if otherProxied.Load() == 0 || proxied.Load() != before {
		t.Errorf("with via: %d requests through it, %d more through the default proxy, want some and none", otherProxied.Load(), proxied.Load()-before)
	}
	if _, err := x.Extract(t.Context(), srv.URL+"/page/none", false, ""); !errors.Is(err, ErrNotMedia) {
		t.Errorf("a page without media: %v, want ErrNotMedia", err)
	}
	if _, err := NewExtractor(ExtractorOptions{YtdlpPath: filepath.Join(t.TempDir(), "yt-dlp"), Proxy: proxy.URL}, nil); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("missing yt-dlp: %v", err)
	}
}

func TestParseExtract(t *testing.T) {
	t.Parallel()
	out := "https://cdn.example.com/v.mp4?sig=1\n" +
		`{"User-Agent": "UA/1", "Accept": "*/*", "Referer": "https://www.example.com/watch", "Cookie": "a=1\r\nX-Evil: 1"}` + "\n" +
		"NA\nnot json\nhttps://cdn.example.com/a.m4a\nhttps://third.example.com/x\n"
	want := []Media{
		{URL: "https://cdn.example.com/v.mp4?sig=1", Headers: map[string]string{"User-Agent": "UA/1", "Referer": "https://www.example.com/watch"}},
		{URL: "https://cdn.example.com/a.m4a"},
	}
	if diff := cmp.Diff(want, parseExtract([]byte(out))); diff != "" {
		t.Errorf("parseExtract (-want +got):\n%s", diff)
	}
}
