package mediaconv

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"sync/atomic"
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
	inner := srv.Config.Handler
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Test-Proxied") != "1" {
			http.Error(w, "not through the proxy", http.StatusForbidden)
			return
		}
		inner.ServeHTTP(w, r)
	})
	var proxied atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !r.URL.IsAbs() {
			http.Error(w, "not a proxy request", http.StatusBadRequest)
			return
		}
		proxied.Add(1)
		out, _ := http.NewRequestWithContext(r.Context(), r.Method, r.URL.String(), nil)
		out.Header = r.Header.Clone()
		out.Header.Set("X-Test-Proxied", "1")
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(proxy.Close)
	x, err := NewExtractor(ExtractorOptions{Proxy: proxy.URL}, testenv.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	urls, err := x.Extract(t.Context(), srv.URL+"/page/jwplayer", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(urls) != 1 || urls[0].URL != srv.URL+"/media/"+mediatest.MP4 || urls[0].Headers["User-Agent"] == "" {
		t.Errorf("media %+v", urls)
	}
	if proxied.Load() == 0 {
		t.Error("yt-dlp made no request through the proxy")
	}
	if _, err := x.Extract(t.Context(), srv.URL+"/page/none", false); !errors.Is(err, ErrNotMedia) {
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
