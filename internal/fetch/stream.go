package fetch

import (
	"context"
	"io"
	"net/http"

	"github.com/firegate/firegate/internal/logsafe"
)

// Stream is a response whose body the caller reads (Open).
type Stream struct {
	// RequestURL is the URL as requested; URL is the final URL after
	// redirects.
	RequestURL, URL string
	StatusCode      int
	Header          http.Header
	// Body is the body as served, not decoded nor capped; the caller
	// closes it.
	Body io.ReadCloser
}

// Open GETs req.URL like Do (the same policy, proxy, headers, redirects
// and errors) but hands the body over unread, for media that are streamed
// to a converter rather than held: it asks for no compression
// (Accept-Encoding: identity), and rangeHeader, when set, is sent as the
// Range header on every hop, whatever its host (media redirect to their
// CDN). ctx bounds the whole exchange, reading the body included.
func (c *Client) Open(ctx context.Context, req Request, rangeHeader string) (*Stream, error) {
	every := http.Header{"Accept": {"*/*"}, "Accept-Encoding": {"identity"}}
	if rangeHeader != "" {
		every.Set("Range", rangeHeader)
	}
	hc, hreq, err := c.prepare(ctx, req, every)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(hreq)
	if err != nil {
		err = classify(ctx, err)
		c.log.DebugContext(ctx, "fetch open failed", "url", logsafe.URL(req.URL), "error", err)
		return nil, err
	}
	return &Stream{RequestURL: req.URL, URL: resp.Request.URL.String(), StatusCode: resp.StatusCode, Header: resp.Header, Body: resp.Body}, nil
}
