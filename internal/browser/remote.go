package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"
)

// A remote Chrome (Options.RemoteURL) is reached over a WebSocket of the
// pool's own rather than chromedp's, whose reader takes a message of up
// to 256 MiB whole and ends the whole connection past it: Chrome's
// messages are read in pieces and bounded as the pipe's are (pipe.go).

// remoteAllocator attaches chromedp to a running Chrome.
type remoteAllocator struct {
	url    string
	filter *msgFilter
	wg     sync.WaitGroup
}

// Allocate dials the browser's DevTools endpoint.
func (a *remoteAllocator) Allocate(ctx context.Context, opts ...chromedp.BrowserOption) (*chromedp.Browser, error) {
	if chromedp.FromContext(ctx) == nil {
		return nil, chromedp.ErrInvalidContext
	}
	dctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	wsURL, err := browserEndpoint(dctx, a.url)
	if err != nil {
		return nil, err
	}
	c, _, err := websocket.Dial(dctx, wsURL, &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", wsURL, err)
	}
	c.SetReadLimit(-1) // the pieces are bounded instead
	// The connection outlives ctx until chromedp has closed the pool's
	// tabs, which it does when ctx ends.
	cctx, ccancel := context.WithCancel(context.WithoutCancel(ctx))
	a.wg.Go(func() {
		<-ctx.Done()
		_ = chromedp.Cancel(ctx)
		ccancel()
	})
	return chromedp.NewBrowserTransport(cctx, &wsConn{c: c, filter: a.filter, a: assembler{max: a.filter.max}, buf: make([]byte, pipeBufSize)}, opts...)
}

// Wait waits for the connection's end.
func (a *remoteAllocator) Wait() { a.wg.Wait() }

// Attaches tells chromedp the browser runs already.
func (a *remoteAllocator) Attaches() bool { return true }

// browserEndpoint returns the browser's ws:// DevTools URL: rawURL when it
// is one, else the one Chrome names at /json/version on rawURL's host.
// Chrome answers only a Host that is an IP address or localhost, so a
// name is resolved first.
func browserEndpoint(ctx context.Context, rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("remote chrome url: %w", err)
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return "", fmt.Errorf("remote chrome url %s: %w", rawURL, err)
	}
	if host != "localhost" && net.ParseIP(host) == nil {
		addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil || len(addrs) == 0 {
			return "", fmt.Errorf("remote chrome url: resolve %s: %w", host, err)
		}
		host = addrs[0].IP.String()
	}
	u.Host = net.JoinHostPort(host, port)
	if strings.Contains(u.Path, "/devtools/browser/") {
		return u.String(), nil
	}
	switch u.Scheme {
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	}
	u.Path, u.RawQuery = "/json/version", ""
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("remote chrome: %w", err)
	}
	defer resp.Body.Close()
	var v struct {
		URL string `json:"webSocketDebuggerUrl"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&v); err != nil || v.URL == "" {
		return "", fmt.Errorf("remote chrome: %s answered no webSocketDebuggerUrl (status %d)", u, resp.StatusCode)
	}
	return v.URL, nil
}

// wsConn is a chromedp Transport over a WebSocket whose messages from
// Chrome are bounded.
type wsConn struct {
	c      *websocket.Conn
	filter *msgFilter
	a      assembler // only Read uses it
	buf    []byte
}

// Read reads the next message: one over the bound becomes the error
// response of its command, or is skipped (an event).
func (w *wsConn) Read(ctx context.Context, msg *cdproto.Message) error {
	for {
		typ, r, err := w.c.Reader(ctx)
		if err != nil {
			return err
		}
		w.a.reset()
		for {
			n, err := r.Read(w.buf)
			w.a.add(w.buf[:n])
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
		}
		if typ != websocket.MessageText {
			continue
		}
		data := w.a.msg
		if w.a.over {
			o := w.filter.report(&w.a)
			if o.id == 0 {
				continue
			}
			data = errorResponse(o)
		}
		return jsonv2.Unmarshal(data, msg, chromedp.DefaultUnmarshalOptions)
	}
}

// Write sends a message.
func (w *wsConn) Write(ctx context.Context, msg *cdproto.Message) error {
	b, err := jsonv2.Marshal(msg, chromedp.DefaultMarshalOptions)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	return w.c.Write(ctx, websocket.MessageText, b) // safe for concurrent use
}

// Close closes the connection.
func (w *wsConn) Close() error { return w.c.CloseNow() }
