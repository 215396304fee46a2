package fetch

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/netguard"
)

// TestOpen: the body is handed over unread and unencoded, the Range header
// goes with every hop (the other host's too), and the policy holds on
// every hop as for Do.
func TestOpen(t *testing.T) {
	t.Parallel()
	data := strings.Repeat("0123456789", 1000)
	var private int
	blocked := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { private++ }))
	t.Cleanup(blocked.Close)
	cdn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "identity" {
			t.Errorf("Accept-Encoding %q", r.Header.Get("Accept-Encoding"))
		}
		w.Header().Set("Content-Type", "video/mp4")
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader(data))
	}))
	t.Cleanup(cdn.Close)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/video.mp4":
			http.Redirect(w, r, cdn.URL+"/v.mp4?sig=1", http.StatusFound)
		case "/private":
			http.Redirect(w, r, blocked.URL+"/", http.StatusFound)
		}
	}))
	t.Cleanup(origin.Close)
	open := map[uint16]bool{
		netip.MustParseAddrPort(cdn.Listener.Addr().String()).Port():    true,
		netip.MustParseAddrPort(origin.Listener.Addr().String()).Port(): true,
	}
	policy, err := netguard.New(netguard.Options{Permit: func(ap netip.AddrPort) bool { return open[ap.Port()] }})
	if err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t, Options{Policy: policy, MaxBodyBytes: 100})

	s, err := c.Open(testCtx(t, 5*time.Second), Request{URL: origin.URL + "/video.mp4"}, "bytes=10-29")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(s.Body)
	s.Body.Close()
	if s.StatusCode != http.StatusPartialContent || string(got) != data[10:30] || s.URL != cdn.URL+"/v.mp4?sig=1" || s.Header.Get("Content-Type") != "video/mp4" {
		t.Errorf("ranged open: %d %q %s %v", s.StatusCode, got, s.URL, s.Header)
	}
	s, err = c.Open(testCtx(t, 5*time.Second), Request{URL: origin.URL + "/video.mp4"}, "")
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(s.Body)
	s.Body.Close()
	if s.StatusCode != http.StatusOK || len(got) != len(data) {
		t.Errorf("whole open: %d, %d bytes (the body cap of Do is not Open's)", s.StatusCode, len(got))
	}
	for _, u := range []string{origin.URL + "/private", blocked.URL + "/"} {
		if _, err := c.Open(testCtx(t, 5*time.Second), Request{URL: u}, ""); !errors.Is(err, ErrBlocked) {
			t.Errorf("Open(%s): %v, want ErrBlocked", u, err)
		}
	}
	if private != 0 {
		t.Errorf("the refused server was reached %d times", private)
	}
}
