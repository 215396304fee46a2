package mediaconv

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/firegate/firegate/internal/logsafe"
)

// Opener fetches one media URL for ffmpeg, through the caller's HTTP client
// and so its network policy, proxies and threat checks. Range, when set, is
// the Range header ffmpeg asked for; it must be sent on every redirect hop.
// The response's Body is read as ffmpeg consumes it and closed after.
type Opener func(ctx context.Context, req OpenRequest) (*OpenResponse, error)

// OpenRequest is one request of ffmpeg through the gateway.
type OpenRequest struct {
	URL   string
	Range string
}

// OpenResponse is the origin's answer, after redirects.
type OpenResponse struct {
	URL        string // final URL
	StatusCode int
	Header     http.Header
	Body       io.ReadCloser
}

// tokenHeader carries the gateway's per-conversion secret on every request
// of ffmpeg (its -headers option reaches playlist, segment and key
// requests), so other local processes cannot use the gateway.
const tokenHeader = "X-Firegate-Media-Token"

// maxManifestBytes bounds an HLS playlist or DASH manifest read to be
// rewritten.
const maxManifestBytes = 4 << 20

// gateway is a loopback HTTP server through which ffmpeg reaches media:
// it is ffmpeg's only way out (the child process may speak http and tcp
// only, and every http request it makes goes to the gateway as its proxy).
// URLs of the origin are mirrored under /o/<scheme>/<host>/<path>, so that
// relative references of playlists and manifests resolve within it; the
// URLs a playlist or manifest names are rewritten to that form; a request
// for another path (a reference relative to the root) is taken as one to
// the origin of the first URL.
type gateway struct {
	open   Opener
	log    *slog.Logger
	token  string
	ln     net.Listener
	srv    *http.Server
	base   string   // http://127.0.0.1:port
	origin *url.URL // of the converted URL: root-relative references

	budget   int64 // bytes of media it may pass on, 0 = unbounded
	passed   atomic.Int64
	exceeded atomic.Bool

	mu       sync.Mutex
	firstErr error // the first failure of an origin request, for the error message
}

// startGateway listens on a loopback port and serves until close.
func startGateway(ctx context.Context, open Opener, origin *url.URL, budget int64, log *slog.Logger) (*gateway, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("mediaconv: gateway token: %w", err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("mediaconv: gateway: %w", err)
	}
	g := &gateway{open: open, log: log, token: hex.EncodeToString(b[:]), ln: ln, base: "http://" + ln.Addr().String(),
		origin: &url.URL{Scheme: origin.Scheme, Host: origin.Host}, budget: budget}
	g.srv = &http.Server{
		Handler:           http.HandlerFunc(g.serve),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	go func() { _ = g.srv.Serve(ln) }()
	return g, nil
}

// close stops the gateway and ends the requests in flight.
func (g *gateway) close() { _ = g.srv.Close() }

// ffmpegArgs are the input options that send ffmpeg's requests through the
// gateway: http only, the gateway as proxy, the token on every request.
func (g *gateway) ffmpegArgs() []string {
	return []string{"-protocol_whitelist", "http,tcp,crypto", "-http_proxy", g.base,
		"-headers", tokenHeader + ": " + g.token + "\r\n", "-rw_timeout", "30000000"}
}

// env is the child's environment naming the gateway as its proxy too.
func (g *gateway) env() []string { return []string{"http_proxy=" + g.base, "no_proxy="} }

// url maps an origin URL to its mirror on the gateway.
func (g *gateway) url(u *url.URL) string {
	return g.base + g.prefix(u.Scheme, u.Host) + u.EscapedPath() + query(u)
}

func (g *gateway) prefix(scheme, host string) string { return "/o/" + scheme + "/" + host }

func query(u *url.URL) string {
	if u.RawQuery == "" && !u.ForceQuery {
		return ""
	}
	return "?" + u.RawQuery
}

// originOf is the origin URL of a request to the gateway: the mirror path,
// a proxy request of ffmpeg for an http URL it was not given through the
// gateway, or a path relative to the root of the first URL's origin.
func (g *gateway) originOf(r *http.Request) (*url.URL, error) {
	if r.URL.Host != "" && "http://"+r.URL.Host != g.base {
		u := *r.URL
		u.Scheme = "http"
		return &u, nil
	}
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/o/")
	if !ok {
		u, err := url.Parse(g.origin.String() + r.URL.EscapedPath() + query(r.URL))
		if err != nil {
			return nil, err
		}
		return u, nil
	}
	scheme, rest, _ := strings.Cut(rest, "/")
	host, path, _ := strings.Cut(rest, "/")
	if (scheme != "http" && scheme != "https") || host == "" {
		return nil, fmt.Errorf("mediaconv: gateway: bad path %q", r.URL.EscapedPath())
	}
	return url.Parse(scheme + "://" + host + "/" + path + query(r.URL))
}

// serve answers one request of ffmpeg from the origin.
func (g *gateway) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(tokenHeader) != g.token {
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	u, err := g.originOf(r)
	if err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	resp, err := g.open(r.Context(), OpenRequest{URL: u.String(), Range: r.Header.Get("Range")})
	if err != nil {
		g.fail(fmt.Errorf("%s: %w", logsafe.URL(u.String()), err))
		http.Error(w, "bad gateway", http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		g.fail(fmt.Errorf("%s: HTTP %d", logsafe.URL(u.String()), resp.StatusCode))
	}
	body := bufio.NewReaderSize(resp.Body, 4096)
	head, _ := body.Peek(512)
	final, err := url.Parse(resp.URL)
	if err != nil || final.Host == "" {
		final = u
	}
	if kind := Sniff(resp.Header.Get("Content-Type"), head); (kind == HLS || kind == DASH) && resp.StatusCode < 300 && startsAtZero(resp) {
		g.serveManifest(w, kind, final, body)
		return
	}
	h := w.Header()
	for _, k := range []string{"Content-Type", "Content-Length", "Content-Range", "Accept-Ranges", "Last-Modified", "ETag"} {
		if v := resp.Header.Get(k); v != "" {
			h.Set(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	if r.Method == http.MethodHead {
		return
	}
	if _, err := io.Copy(w, &budgetReader{r: body, g: g}); err != nil && g.exceeded.Load() {
		panic(http.ErrAbortHandler) // ffmpeg sees a cut connection and stops
	}
}

// startsAtZero reports a response that holds a body from its first byte.
func startsAtZero(resp *OpenResponse) bool {
	cr := resp.Header.Get("Content-Range")
	return resp.StatusCode != http.StatusPartialContent || strings.HasPrefix(cr, "bytes 0-")
}

// serveManifest reads a playlist or manifest, rewrites its URLs to the
// gateway and serves it whole.
func (g *gateway) serveManifest(w http.ResponseWriter, kind Kind, final *url.URL, body io.Reader) {
	data, err := io.ReadAll(io.LimitReader(body, maxManifestBytes+1))
	if err != nil {
		g.fail(fmt.Errorf("%s: %w", logsafe.URL(final.String()), err))
		http.Error(w, "bad gateway", http.StatusBadGateway)
		return
	}
	if len(data) > maxManifestBytes {
		g.fail(fmt.Errorf("%s: playlist larger than %d bytes", logsafe.URL(final.String()), maxManifestBytes))
		http.Error(w, "bad gateway", http.StatusBadGateway)
		return
	}
	var out []byte
	ctype := "application/vnd.apple.mpegurl"
	if kind == HLS {
		out = rewriteHLS(data, final, g)
	} else {
		out, ctype = rewriteDASH(data, final, g), "application/dash+xml"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

// fail records the first origin failure.
func (g *gateway) fail(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.firstErr == nil {
		g.firstErr = err
	}
}

// err is the first origin failure, or nil.
func (g *gateway) err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.firstErr
}

// errBudget stops a copy past the gateway's byte budget.
var errBudget = errors.New("mediaconv: download budget exceeded")

// budgetReader counts the media bytes passed to ffmpeg against the budget.
type budgetReader struct {
	r io.Reader
	g *gateway
}

func (b *budgetReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if total := b.g.passed.Add(int64(n)); b.g.budget > 0 && total > b.g.budget {
		b.g.exceeded.Store(true)
		return n, errBudget
	}
	return n, err
}
