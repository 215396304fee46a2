package fetch

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"

	"github.com/firegate/firegate/internal/netguard"
)

// testWriter sends log lines to t.Log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func newTestClient(t testing.TB, opts Options) *Client {
	t.Helper()
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := New(opts, log)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func testCtx(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestDoHeadersAndResponse(t *testing.T) {
	t.Parallel()
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Header().Set("Content-Type", "text/HTML; charset=utf-8")
		w.Header().Set("X-Served", "yes")
		io.WriteString(w, "<html><body>hi</body></html>")
	}))
	t.Cleanup(srv.Close)
	c := newTestClient(t, Options{AllowPrivate: true})

	tests := []struct {
		name       string
		req        Request
		wantHeader map[string]string
	}{
		{
			name: "defaults",
			req:  Request{URL: srv.URL + "/page"},
			wantHeader: map[string]string{
				"User-Agent":      DefaultUserAgent,
				"Accept-Language": DefaultAcceptLanguage,
				"Accept-Encoding": "gzip, deflate, br",
				"Accept":          defaultAccept,
			},
		},
		{
			name: "mobile and language",
			req:  Request{URL: srv.URL + "/page", Mobile: true, AcceptLanguage: "de-DE,de;q=0.9"},
			wantHeader: map[string]string{
				"User-Agent":      DefaultMobileUserAgent,
				"Accept-Language": "de-DE,de;q=0.9",
			},
		},
		{
			name: "caller headers override",
			req: Request{URL: srv.URL + "/page", Headers: map[string]string{
				"user-agent": "my-bot/1.0",
				"Cookie":     "session=abc",
				"X-Custom":   "v",
				"Host":       "ignored.example",
			}},
			wantHeader: map[string]string{
				"User-Agent": "my-bot/1.0",
				"Cookie":     "session=abc",
				"X-Custom":   "v",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.Do(testCtx(t, 5*time.Second), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.wantHeader {
				if g := got.Get(k); g != v {
					t.Errorf("header %s = %q, want %q", k, g, v)
				}
			}
			if resp.StatusCode != 200 || resp.ContentType != "text/html" || resp.URL != tt.req.URL ||
				resp.RequestURL != tt.req.URL || string(resp.Body) != "<html><body>hi</body></html>" ||
				resp.Header.Get("X-Served") != "yes" || resp.Truncated {
				t.Errorf("unexpected response %+v", resp)
			}
		})
	}
}

func TestDoNon2xxIsResponse(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "<h1>gone</h1>")
	}))
	t.Cleanup(srv.Close)
	resp, err := newTestClient(t, Options{AllowPrivate: true}).Do(testCtx(t, 5*time.Second), Request{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 404 || string(resp.Body) != "<h1>gone</h1>" || resp.ContentType != "text/html" {
		t.Errorf("got %d %q %q", resp.StatusCode, resp.Body, resp.ContentType)
	}
}

func TestDoRedirects(t *testing.T) {
	t.Parallel()
	type hit struct{ path, ua, secret string }
	hits := make(chan hit, 20)
	// other is reached through the name "localhost" rather than 127.0.0.1,
	// so it counts as a different host.
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits <- hit{"other" + r.URL.Path, r.UserAgent(), r.Header.Get("X-Secret")}
		io.WriteString(w, "other")
	}))
	t.Cleanup(other.Close)
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits <- hit{r.URL.Path, r.UserAgent(), r.Header.Get("X-Secret")}
		switch r.URL.Path {
		case "/a":
			http.Redirect(w, r, "/b", http.StatusMovedPermanently)
		case "/b":
			http.Redirect(w, r, "/final?x=1", http.StatusFound)
		case "/final":
			io.WriteString(w, "done")
		case "/away":
			http.Redirect(w, r, otherURL+"/there", http.StatusTemporaryRedirect)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/file":
			w.Header().Set("Location", "file:///etc/passwd")
			w.WriteHeader(http.StatusFound)
		case "/cookie":
			if c, err := r.Cookie("seen"); err == nil && c.Value == "1" {
				io.WriteString(w, "with cookie")
				return
			}
			http.SetCookie(w, &http.Cookie{Name: "seen", Value: "1", Path: "/"})
			http.Redirect(w, r, "/cookie", http.StatusFound)
		}
	}))
	t.Cleanup(srv.Close)
	c := newTestClient(t, Options{AllowPrivate: true, MaxRedirects: 5})
	headers := map[string]string{"X-Secret": "s3", "User-Agent": "ua-override"}
	drain := func() []hit {
		var out []hit
		for {
			select {
			case h := <-hits:
				out = append(out, h)
			default:
				return out
			}
		}
	}

	t.Run("chain", func(t *testing.T) {
		resp, err := c.Do(testCtx(t, 5*time.Second), Request{URL: srv.URL + "/a", Headers: headers})
		if err != nil {
			t.Fatal(err)
		}
		if resp.URL != srv.URL+"/final?x=1" || resp.RequestURL != srv.URL+"/a" || string(resp.Body) != "done" {
			t.Errorf("got URL %q RequestURL %q body %q", resp.URL, resp.RequestURL, resp.Body)
		}
		want := []hit{{"/a", "ua-override", "s3"}, {"/b", "ua-override", "s3"}, {"/final", "ua-override", "s3"}}
		if diff := cmp.Diff(want, drain(), cmp.AllowUnexported(hit{})); diff != "" {
			t.Errorf("hops (-want +got):\n%s", diff)
		}
	})
	t.Run("cross host drops caller headers but keeps user agent", func(t *testing.T) {
		resp, err := c.Do(testCtx(t, 5*time.Second), Request{URL: srv.URL + "/away", Headers: headers})
		if err != nil {
			t.Fatal(err)
		}
		if resp.URL != otherURL+"/there" {
			t.Errorf("final URL %q", resp.URL)
		}
		want := []hit{{"/away", "ua-override", "s3"}, {"other/there", "ua-override", ""}}
		if diff := cmp.Diff(want, drain(), cmp.AllowUnexported(hit{})); diff != "" {
			t.Errorf("hops (-want +got):\n%s", diff)
		}
	})
	t.Run("cookie set during redirect is sent", func(t *testing.T) {
		resp, err := c.Do(testCtx(t, 5*time.Second), Request{URL: srv.URL + "/cookie"})
		if err != nil {
			t.Fatal(err)
		}
		if string(resp.Body) != "with cookie" {
			t.Errorf("body %q", resp.Body)
		}
		drain()
	})
	t.Run("loop", func(t *testing.T) {
		_, err := c.Do(testCtx(t, 5*time.Second), Request{URL: srv.URL + "/loop"})
		if !errors.Is(err, ErrTooManyRedirects) {
			t.Fatalf("err = %v, want ErrTooManyRedirects", err)
		}
		if n := len(drain()); n != 6 {
			t.Errorf("requests = %d, want 6 (1 + 5 redirects)", n)
		}
	})
	t.Run("non-http target", func(t *testing.T) {
		_, err := c.Do(testCtx(t, 5*time.Second), Request{URL: srv.URL + "/file"})
		if !errors.Is(err, ErrBlocked) {
			t.Fatalf("err = %v, want ErrBlocked", err)
		}
		drain()
	})
	t.Run("redirects disabled", func(t *testing.T) {
		c := newTestClient(t, Options{AllowPrivate: true, MaxRedirects: -1})
		resp, err := c.Do(testCtx(t, 5*time.Second), Request{URL: srv.URL + "/a"})
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusMovedPermanently || resp.URL != srv.URL+"/a" {
			t.Errorf("got %d %q", resp.StatusCode, resp.URL)
		}
		drain()
	})
}

func TestDoGuard(t *testing.T) {
	t.Parallel()
	var privateHits int
	private := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		privateHits++
		io.WriteString(w, "secret")
	}))
	t.Cleanup(private.Close)
	public := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-private":
			http.Redirect(w, r, private.URL+"/x", http.StatusFound)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		default:
			io.WriteString(w, "public")
		}
	}))
	t.Cleanup(public.Close)
	publicPort := netip.MustParseAddrPort(public.Listener.Addr().String()).Port()

	// Pretend the "public" test server is a public address.
	policy, err := netguard.New(netguard.Options{Permit: func(ap netip.AddrPort) bool { return ap.Port() == publicPort }})
	if err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t, Options{Policy: policy})

	tests := []struct {
		name    string
		url     string
		wantErr error
	}{
		{"permitted", public.URL + "/", nil},
		{"loopback literal", private.URL + "/x", ErrBlocked},
		{"loopback by name", strings.Replace(private.URL, "127.0.0.1", "localhost", 1) + "/x", ErrBlocked},
		{"redirect to private", public.URL + "/to-private", ErrBlocked},
		{"redirect to metadata", public.URL + "/to-metadata", ErrBlocked},
		{"metadata", "http://169.254.169.254/", ErrBlocked},
		{"unspecified", "http://0.0.0.0:1/", ErrBlocked},
		{"ipv6 loopback", "http://[::1]:1/", ErrBlocked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.Do(testCtx(t, 5*time.Second), Request{URL: tt.url})
			t.Logf("err: %v", err)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err == nil && string(resp.Body) != "public" {
				t.Errorf("body %q", resp.Body)
			}
		})
	}
	if privateHits != 0 {
		t.Errorf("private server was reached %d times", privateHits)
	}
}

func TestDoCompression(t *testing.T) {
	t.Parallel()
	page := strings.Repeat("<p>Hello, compressed world! äöü</p>\n", 200)
	gz := func(s string) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		io.WriteString(w, s)
		w.Close()
		return b.Bytes()
	}
	zl := func(s string) []byte {
		var b bytes.Buffer
		w := zlib.NewWriter(&b)
		io.WriteString(w, s)
		w.Close()
		return b.Bytes()
	}
	fl := func(s string) []byte {
		var b bytes.Buffer
		w, _ := flate.NewWriter(&b, flate.DefaultCompression)
		io.WriteString(w, s)
		w.Close()
		return b.Bytes()
	}
	br := func(s string) []byte {
		var b bytes.Buffer
		w := brotli.NewWriter(&b)
		io.WriteString(w, s)
		w.Close()
		return b.Bytes()
	}
	tests := []struct {
		name         string
		encoding     string
		contentType  string
		body         []byte
		chunked      bool
		want         string
		wantEncoding string // Content-Encoding left in Response.Header
	}{
		{name: "identity", body: []byte(page), want: page},
		{name: "gzip", encoding: "gzip", body: gz(page), want: page},
		{name: "gzip chunked", encoding: "gzip", body: gz(page), chunked: true, want: page},
		{name: "x-gzip", encoding: "x-gzip", body: gz(page), want: page},
		{name: "deflate zlib", encoding: "deflate", body: zl(page), want: page},
		{name: "deflate raw", encoding: "deflate", body: fl(page), want: page},
		{name: "brotli", encoding: "br", body: br(page), want: page},
		{name: "brotli upper case", encoding: "BR", body: br(page), want: page},
		{name: "gzip then brotli", encoding: "gzip, br", body: br(string(gz(page))), want: page},
		{name: "labelled gzip but plain", encoding: "gzip", body: []byte(page), want: page},
		{name: "labelled br but plain", encoding: "br", body: []byte("<p>plain</p>"), want: "<p>plain</p>"},
		{name: "unlabelled gzip html", body: gz(page), contentType: "text/html", want: page},
		{name: "zstd", encoding: "zstd", body: zs(page), want: page},
		{name: "unknown coding untouched", encoding: "compress", body: []byte("zzz"), want: "zzz", wantEncoding: "compress"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.encoding != "" {
					w.Header().Set("Content-Encoding", tt.encoding)
				}
				ct := tt.contentType
				if ct == "" {
					ct = "text/html; charset=utf-8"
				}
				w.Header().Set("Content-Type", ct)
				if !tt.chunked {
					w.Header().Set("Content-Length", fmt.Sprint(len(tt.body)))
				}
				w.Write(tt.body)
			}))
			t.Cleanup(srv.Close)
			resp, err := newTestClient(t, Options{AllowPrivate: true}).Do(testCtx(t, 5*time.Second), Request{URL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(resp.Body)); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			if got := resp.Header.Get("Content-Encoding"); got != tt.wantEncoding {
				t.Errorf("Content-Encoding = %q, want %q", got, tt.wantEncoding)
			}
			if resp.Truncated {
				t.Error("unexpectedly truncated")
			}
		})
	}
}

func TestDoBodyCap(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("0123456789", 500) // 5000 bytes
	var gzBig bytes.Buffer
	zw := gzip.NewWriter(&gzBig)
	io.WriteString(zw, big)
	zw.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/length":
			w.Header().Set("Content-Length", fmt.Sprint(len(big)))
			io.WriteString(w, big)
		case "/chunked":
			for i := 0; i < len(big); i += 100 {
				io.WriteString(w, big[i:i+100])
				w.(http.Flusher).Flush()
			}
		case "/gzip":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gzBig.Bytes())
		case "/exact":
			io.WriteString(w, big[:1000])
		}
	}))
	t.Cleanup(srv.Close)
	c := newTestClient(t, Options{AllowPrivate: true, MaxBodyBytes: 1000})
	for _, tc := range []struct {
		path          string
		wantTruncated bool
	}{{"/length", true}, {"/chunked", true}, {"/gzip", true}, {"/exact", false}} {
		t.Run(tc.path, func(t *testing.T) {
			resp, err := c.Do(testCtx(t, 5*time.Second), Request{URL: srv.URL + tc.path})
			if err != nil {
				t.Fatal(err)
			}
			if string(resp.Body) != big[:1000] || resp.Truncated != tc.wantTruncated {
				t.Errorf("len %d truncated %v, want 1000 %v", len(resp.Body), resp.Truncated, tc.wantTruncated)
			}
		})
	}
}

func TestDoTimeouts(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		case "/drip":
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(http.StatusOK)
			for range 1000 {
				if _, err := io.WriteString(w, "x"); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		case "/drip-gzip":
			w.Header().Set("Content-Encoding", "gzip")
			w.WriteHeader(http.StatusOK)
			zw := gzip.NewWriter(w)
			for range 1000 {
				io.WriteString(zw, "x")
				zw.Flush()
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}
	}))
	t.Cleanup(srv.Close)
	c := newTestClient(t, Options{AllowPrivate: true})
	for _, path := range []string{"/slow", "/drip", "/drip-gzip"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			_, err := c.Do(testCtx(t, 300*time.Millisecond), Request{URL: srv.URL + path})
			t.Logf("err: %v", err)
			if !errors.Is(err, ErrTimeout) {
				t.Fatalf("err = %v, want ErrTimeout", err)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err = %v, want it to wrap context.DeadlineExceeded", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v, deadline was 300ms", d)
			}
		})
	}
}

func TestDoCancelled(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := newTestClient(t, Options{AllowPrivate: true}).Do(ctx, Request{URL: srv.URL})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestDoErrors(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + ln.Addr().String() + "/"
	ln.Close()
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "secure")
	}))
	tlsSrv.Config.ErrorLog = stdlog.New(io.Discard, "", 0) // expected handshake failures
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	c := newTestClient(t, Options{AllowPrivate: true})

	tests := []struct {
		name    string
		req     Request
		wantErr error
	}{
		{"dns", Request{URL: "http://no-such-host.invalid/"}, ErrDNS},
		{"refused", Request{URL: closedURL}, ErrConnection},
		{"self-signed verified", Request{URL: tlsSrv.URL}, ErrTLS},
		{"self-signed skipped", Request{URL: tlsSrv.URL, SkipTLSVerify: true}, nil},
		{"relative url", Request{URL: "/path"}, ErrInvalidURL},
		{"ftp url", Request{URL: "ftp://example.com/"}, ErrInvalidURL},
		{"garbage url", Request{URL: "http://[::1"}, ErrInvalidURL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, err := c.Do(testCtx(t, 5*time.Second), tt.req)
			t.Logf("err: %v", err)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "fetch: ") {
				t.Errorf("error %q lacks the fetch: prefix", err)
			}
			if err == nil && string(resp.Body) != "secure" {
				t.Errorf("body %q", resp.Body)
			}
		})
	}
}

func BenchmarkDo20KB(b *testing.B) {
	page := []byte("<html><head><title>t</title></head><body>" + strings.Repeat("<p>lorem ipsum dolor sit amet</p>", 600) + "</body></html>")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", fmt.Sprint(len(page)))
		w.Write(page)
	}))
	b.Cleanup(srv.Close)
	c := New(Options{AllowPrivate: true}, nil)
	b.Cleanup(c.CloseIdleConnections)
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := c.Do(b.Context(), Request{URL: srv.URL})
			if err != nil {
				b.Error(err)
				return
			}
			_ = resp.Text()
		}
	})
}

func TestDoCompressionPoolReuseAndDamage(t *testing.T) {
	t.Parallel()
	page := strings.Repeat("<li>pooled decoder</li>", 500)
	bodies := map[string][]byte{}
	var b bytes.Buffer
	gw := gzip.NewWriter(&b)
	io.WriteString(gw, page)
	gw.Close()
	bodies["gzip"] = bytes.Clone(b.Bytes())
	b.Reset()
	zw := zlib.NewWriter(&b)
	io.WriteString(zw, page)
	zw.Close()
	bodies["deflate-zlib"] = bytes.Clone(b.Bytes())
	b.Reset()
	fw, _ := flate.NewWriter(&b, flate.BestSpeed)
	io.WriteString(fw, page)
	fw.Close()
	bodies["deflate-raw"] = bytes.Clone(b.Bytes())
	b.Reset()
	bw := brotli.NewWriter(&b)
	io.WriteString(bw, page)
	bw.Close()
	bodies["br"] = bytes.Clone(b.Bytes())

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/")
		enc, _, _ := strings.Cut(name, "-")
		w.Header().Set("Content-Type", "text/html")
		if name == "cut-gzip" {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(bodies["gzip"][:len(bodies["gzip"])/2])
			return
		}
		if name == "bad-gzip-header" {
			w.Header().Set("Content-Encoding", "gzip")
			io.WriteString(w, "\x1f\x8bnot really gzip")
			return
		}
		w.Header().Set("Content-Encoding", enc)
		w.Write(bodies[name])
	}))
	t.Cleanup(srv.Close)
	c := newTestClient(t, Options{AllowPrivate: true})
	for round := range 3 {
		for _, name := range []string{"gzip", "deflate-zlib", "deflate-raw", "br"} {
			resp, err := c.Do(testCtx(t, 5*time.Second), Request{URL: srv.URL + "/" + name})
			if err != nil {
				t.Fatal(err)
			}
			if string(resp.Body) != page || resp.Truncated {
				t.Errorf("round %d %s: got %d bytes, truncated %v", round, name, len(resp.Body), resp.Truncated)
			}
		}
	}

	resp, err := c.Do(testCtx(t, 5*time.Second), Request{URL: srv.URL + "/cut-gzip"})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Truncated || len(resp.Body) == 0 || !strings.HasPrefix(page, string(resp.Body)) {
		t.Errorf("cut gzip: truncated %v, %d bytes", resp.Truncated, len(resp.Body))
	}
	resp, err = c.Do(testCtx(t, 5*time.Second), Request{URL: srv.URL + "/bad-gzip-header"})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != "\x1f\x8bnot really gzip" {
		t.Errorf("bad gzip header: body %q", resp.Body)
	}
}

func TestMediaType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ct, body, want string
	}{
		{"text/html; charset=UTF-8", "", "text/html"},
		{"Application/JSON", "", "application/json"},
		{"text/html; charset", "", "text/html"}, // malformed params
		{"", "<!DOCTYPE html><html>", "text/html"},
		{"", "%PDF-1.7", "application/pdf"},
	}
	for _, tt := range tests {
		if got := mediaType(tt.ct, []byte(tt.body)); got != tt.want {
			t.Errorf("mediaType(%q) = %q, want %q", tt.ct, got, tt.want)
		}
	}
}

func TestDoLargeDeclaredLength(t *testing.T) {
	t.Parallel()
	big := bytes.Repeat([]byte("abcdefgh"), (preSizeMax+preSizeMax/4)/8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(big)))
		w.Write(big)
	}))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		limit         int64
		wantLen       int
		wantTruncated bool
	}{{0, len(big), false}, {preSizeMax + 10, preSizeMax + 10, true}} {
		resp, err := newTestClient(t, Options{AllowPrivate: true, MaxBodyBytes: tc.limit}).Do(testCtx(t, 5*time.Second), Request{URL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Body) != tc.wantLen || resp.Truncated != tc.wantTruncated || !bytes.Equal(resp.Body, big[:tc.wantLen]) {
			t.Errorf("limit %d: got %d bytes truncated %v", tc.limit, len(resp.Body), resp.Truncated)
		}
	}
}

// zs compresses s with zstd.
func zs(s string) []byte {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		panic(err)
	}
	defer enc.Close()
	return enc.EncodeAll([]byte(s), nil)
}

// cutBody is a response body cut by a deadline as net/http's is: the
// first failed read returns the mapped context.DeadlineExceeded, every
// later one the raw error of the closed connection.
type cutBody struct {
	data  []byte
	reads int
}

func (b *cutBody) Read(p []byte) (int, error) {
	if len(b.data) > 0 {
		n := copy(p, b.data[:1])
		b.data = b.data[n:]
		return n, nil
	}
	b.reads++
	if b.reads == 1 {
		return 0, context.DeadlineExceeded
	}
	return 0, errors.New("read tcp 127.0.0.1:1->127.0.0.1:2: use of closed network connection")
}

func (b *cutBody) Close() error { return nil }

// TestReadBodyKeepsTheDeadline: a textual body cut while its first bytes
// are sniffed for gzip (TestDoTimeouts/drip under load: the deadline came
// between the first byte and the third) fails with the deadline, not with
// the closed connection read after it.
func TestReadBodyKeepsTheDeadline(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, Options{})
	resp := &http.Response{Header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}},
		ContentLength: 1000, Body: &cutBody{data: []byte("xx")}}
	_, _, _, err := c.readBody(resp, 1<<20)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want it to wrap context.DeadlineExceeded", err)
	}
}
