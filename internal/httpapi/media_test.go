package httpapi

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/media"
)

// TestSignedMediaRoute: audio and video are served without a key on a
// link with a valid signature, with ranges and their content type; a
// changed link is 403, an expired one 410.
func TestSignedMediaRoute(t *testing.T) {
	t.Parallel()
	st, err := media.New(media.Options{Dir: t.TempDir()}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "a.mp3")
	if err := os.WriteFile(src, []byte("ID3 0123456789 audio"), 0o600); err != nil {
		t.Fatal(err)
	}
	audio, err := st.PutFile(t.Context(), "team", src, "audio/mpeg")
	if err != nil {
		t.Fatal(err)
	}
	png, err := st.Put(t.Context(), "team", []byte("\x89PNG fake"), "image/png")
	if err != nil {
		t.Fatal(err)
	}
	signer, err := media.NewSigner([]byte(strings.Repeat("s", media.MinSecretLen)))
	if err != nil {
		t.Fatal(err)
	}
	s := New(Deps{Scraper: &fakeScraper{}, Auth: fakeAuth{}, Media: st, MediaLinks: signer, Log: slog.New(slog.DiscardHandler)})
	link := func(id string, exp time.Time) string { return "/media/" + id + "?" + signer.Query(id, exp) }
	valid := link(audio, time.Now().Add(time.Hour))
	tests := []struct {
		name, path, rng string
		status          int
		body, code      string
	}{
		{"signed", valid, "", 200, "ID3 0123456789 audio", ""},
		{"range", valid, "bytes=4-13", 206, "0123456789", ""},
		{"unsigned audio", "/media/" + audio, "", 403, "", "MEDIA_LINK_INVALID"},
		{"signature changed", strings.Replace(valid, "signature=", "signature=0", 1), "", 403, "", "MEDIA_LINK_INVALID"},
		{"expiry changed", strings.Replace(valid, "expires=", "expires=9", 1), "", 403, "", "MEDIA_LINK_INVALID"},
		{"another file's signature", "/media/" + png + valid[strings.Index(valid, "?"):], "", 403, "", "MEDIA_LINK_INVALID"},
		{"expired", link(audio, time.Now().Add(-time.Second)), "", 410, "", "MEDIA_LINK_EXPIRED"},
		{"screenshot without a signature", "/media/" + png, "", 200, "\x89PNG fake", ""},
		{"screenshot with one", link(png, time.Now().Add(time.Minute)), "", 200, "\x89PNG fake", ""},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(http.MethodGet, tt.path, nil)
		if tt.rng != "" {
			req.Header.Set("Range", tt.rng)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != tt.status {
			t.Errorf("%s: status %d, want %d: %s", tt.name, rec.Code, tt.status, rec.Body)
			continue
		}
		if tt.code != "" {
			if !strings.Contains(rec.Body.String(), `"code":"`+tt.code+`"`) {
				t.Errorf("%s: body %s, want code %s", tt.name, rec.Body, tt.code)
			}
			continue
		}
		if rec.Body.String() != tt.body {
			t.Errorf("%s: body %q, want %q", tt.name, rec.Body, tt.body)
		}
		if want := map[bool]string{true: "audio/mpeg", false: "image/png"}[strings.Contains(tt.path, ".mp3")]; rec.Header().Get("Content-Type") != want {
			t.Errorf("%s: Content-Type %q, want %q", tt.name, rec.Header().Get("Content-Type"), want)
		}
	}
	// HEAD answers the size without the body.
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, valid, nil))
	if rec.Code != 200 || rec.Header().Get("Content-Length") != "20" || rec.Body.Len() != 0 || rec.Header().Get("Accept-Ranges") != "bytes" {
		t.Errorf("HEAD: %d %v %q", rec.Code, rec.Header(), rec.Body)
	}
	// Without a verifier, signed media are refused.
	s = New(Deps{Scraper: &fakeScraper{}, Auth: fakeAuth{}, Media: st, Log: slog.New(slog.DiscardHandler)})
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, valid, nil))
	if rec.Code != 403 {
		t.Errorf("no verifier: status %d, want 403", rec.Code)
	}
}
