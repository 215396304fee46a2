package fetch

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// maxPooledBuf bounds the scratch buffers kept for reuse so that one huge
// page does not pin memory.
const maxPooledBuf = 4 << 20

// pools holds reusable scratch buffers and decompressors. Bodies handed to
// callers are always fresh, exactly sized slices.
type pools struct {
	buf   sync.Pool // *bytes.Buffer
	gzip  sync.Pool // *gzip.Reader
	br    sync.Pool // *brotli.Reader
	flate sync.Pool // io.ReadCloser that implements flate.Resetter
	zlib  sync.Pool // io.ReadCloser that implements zlib.Resetter
}

func newPools() *pools { return &pools{} }

func (p *pools) getBuf() *bytes.Buffer {
	if b, ok := p.buf.Get().(*bytes.Buffer); ok {
		b.Reset()
		return b
	}
	return new(bytes.Buffer)
}

func (p *pools) putBuf(b *bytes.Buffer) {
	if b.Cap() <= maxPooledBuf {
		p.buf.Put(b)
	}
}

// readBody reads resp.Body up to limit decoded bytes, removing any supported
// Content-Encoding. decoded reports that Body no longer matches the
// Content-Encoding header (a decoder ran, or the label was found false).
func (c *Client) readBody(resp *http.Response, limit int64) (body []byte, truncated, decoded bool, err error) {
	codings := contentCodings(resp.Header.Get("Content-Encoding"))
	if len(codings) > 0 && !supported(codings) {
		codings = nil // unknown coding: hand the bytes over untouched
	}
	if len(codings) == 0 && !sniffGzip(resp) {
		body, truncated, err = readRaw(resp.Body, resp.ContentLength, limit)
		return body, truncated, false, err
	}
	if len(codings) == 0 {
		codings = []string{"gzip"}
	}

	// Compressed: buffer the (bounded) compressed bytes, then decode them.
	// Buffering lets us fall back to the raw bytes when a server labels an
	// uncompressed body as compressed.
	scratch := c.pools.getBuf()
	defer c.pools.putBuf(scratch)
	raw, rawTrunc, err := readInto(scratch, resp.Body, resp.ContentLength, limit)
	if err != nil {
		return nil, false, false, err
	}
	out, ok, partial := c.decode(raw, codings, limit)
	if !ok {
		return bytes.Clone(raw), rawTrunc, true, nil
	}
	return out, rawTrunc || partial, true, nil
}

// sniffGzip reports a gzip body sent without Content-Encoding for a textual
// media type (some misconfigured servers do this). Archives served as
// application/gzip are left alone.
func sniffGzip(resp *http.Response) bool {
	ct := strings.ToLower(resp.Header.Get("Content-Type"))
	if !strings.HasPrefix(ct, "text/") && !strings.Contains(ct, "html") && !strings.Contains(ct, "xml") &&
		!strings.Contains(ct, "json") {
		return false
	}
	// net/http's body cannot peek; wrap it so the sniffed bytes are kept.
	br := newPeekReader(resp.Body)
	resp.Body = br
	b, _ := br.peek(3)
	return len(b) == 3 && b[0] == 0x1f && b[1] == 0x8b && b[2] == 0x08
}

// peekReader lets sniffGzip look at the first bytes without losing them,
// nor the error that cut the peek short: net/http maps a body's first read
// error (a deadline's close of the connection reads as "use of closed
// network connection", returned as context.DeadlineExceeded) and returns
// the raw one to every later read, so the peek's error is the one kept.
type peekReader struct {
	head []byte
	err  error // what ended the peek early, returned once head is read
	rc   io.ReadCloser
}

func newPeekReader(rc io.ReadCloser) *peekReader { return &peekReader{rc: rc} }

func (p *peekReader) peek(n int) ([]byte, error) {
	var buf [8]byte
	for len(p.head) < n {
		m, err := p.rc.Read(buf[:n-len(p.head)])
		p.head = append(p.head, buf[:m]...)
		if err != nil {
			p.err = err
			return p.head, err
		}
	}
	return p.head, nil
}

// Read returns the peeked bytes first, then the rest of the body.
func (p *peekReader) Read(b []byte) (int, error) {
	if len(p.head) > 0 {
		n := copy(b, p.head)
		p.head = p.head[n:]
		return n, nil
	}
	if p.err != nil {
		return 0, p.err
	}
	return p.rc.Read(b)
}

// Close closes the wrapped body.
func (p *peekReader) Close() error { return p.rc.Close() }

// preSizeMax is the largest declared Content-Length trusted for an upfront
// allocation; beyond it the buffer grows as bytes actually arrive, so a lying
// header cannot make every request allocate the full cap.
const preSizeMax = 1 << 20

// readRaw reads an identity body. With a known (moderate) Content-Length it
// reads into an exactly sized slice, one allocation; otherwise the buffer
// grows as data arrives.
func readRaw(r io.Reader, contentLength, limit int64) ([]byte, bool, error) {
	if contentLength >= 0 && contentLength <= preSizeMax {
		n := min(contentLength, limit)
		buf := make([]byte, n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, false, fmt.Errorf("read body: %w", err)
		}
		return buf, contentLength > limit, nil
	}
	var buf bytes.Buffer
	b, trunc, err := readInto(&buf, r, min(contentLength, preSizeMax), limit)
	if err != nil {
		return nil, false, err
	}
	return b, trunc, nil
}

// readInto reads at most limit bytes of r into buf (pre-growing it by
// sizeHint when positive) and reports whether more were available. The
// returned slice aliases buf.
func readInto(buf *bytes.Buffer, r io.Reader, sizeHint, limit int64) ([]byte, bool, error) {
	buf.Reset()
	if sizeHint > 0 {
		buf.Grow(int(min(sizeHint, limit)) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(io.LimitReader(r, limit+1)); err != nil {
		return nil, false, fmt.Errorf("read body: %w", err)
	}
	b := buf.Bytes()
	if int64(len(b)) > limit {
		return b[:limit], true, nil
	}
	return b, false, nil
}

// contentCodings splits a Content-Encoding value into lower-case codings,
// dropping "identity".
func contentCodings(v string) []string {
	if v == "" {
		return nil
	}
	var out []string
	for f := range strings.SplitSeq(v, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f != "" && f != "identity" {
			out = append(out, f)
		}
	}
	return out
}

func supported(codings []string) bool {
	for _, c := range codings {
		switch c {
		case "gzip", "x-gzip", "deflate", "br", "zstd":
		default:
			return false
		}
	}
	return true
}

// decode undoes codings (applied in order by the server, so undone in
// reverse) on raw, producing at most limit bytes. ok is false when a
// single-coding body turns out not to be encoded at all; partial reports a
// stream that ended early or was cut at limit.
func (c *Client) decode(raw []byte, codings []string, limit int64) (out []byte, ok, partial bool) {
	if len(codings) == 1 && !looksEncoded(raw, codings[0]) {
		return nil, false, false
	}
	var r io.Reader = bytes.NewReader(raw)
	var release []func()
	defer func() {
		for _, f := range release {
			f()
		}
	}()
	for i := len(codings) - 1; i >= 0; i-- {
		dr, rel, err := c.decoder(r, codings[i])
		if err != nil {
			return nil, false, false
		}
		release = append(release, rel)
		r = dr
	}
	scratch := c.pools.getBuf()
	defer c.pools.putBuf(scratch)
	b, trunc, err := readInto(scratch, r, int64(len(raw))*4, limit)
	if err != nil {
		b = scratch.Bytes()
		if len(b) == 0 && len(codings) == 1 {
			return nil, false, false
		}
		if int64(len(b)) > limit {
			b = b[:limit]
		}
		return bytes.Clone(b), true, true
	}
	return bytes.Clone(b), true, trunc
}

// looksEncoded checks the magic bytes of formats that have them.
func looksEncoded(raw []byte, coding string) bool {
	switch coding {
	case "gzip", "x-gzip":
		return len(raw) >= 2 && raw[0] == 0x1f && raw[1] == 0x8b
	case "deflate":
		return len(raw) > 0 // zlib or raw deflate; decode errors fall back
	}
	return len(raw) > 0
}

// isZlib reports a zlib header (RFC 1950): CM=8 and a valid FCHECK.
func isZlib(raw []byte) bool {
	return len(raw) >= 2 && raw[0]&0x0f == 8 && (uint16(raw[0])<<8|uint16(raw[1]))%31 == 0
}

// decoder returns a pooled decompressor reading from r and a func that
// returns it to its pool.
func (c *Client) decoder(r io.Reader, coding string) (io.Reader, func(), error) {
	p := c.pools
	switch coding {
	case "gzip", "x-gzip":
		if zr, ok := p.gzip.Get().(*gzip.Reader); ok {
			if err := zr.Reset(r); err != nil {
				return nil, nil, fmt.Errorf("gzip: %w", err)
			}
			return zr, func() { p.gzip.Put(zr) }, nil
		}
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, nil, fmt.Errorf("gzip: %w", err)
		}
		return zr, func() { p.gzip.Put(zr) }, nil
	case "br":
		if br, ok := p.br.Get().(*brotli.Reader); ok {
			if err := br.Reset(r); err != nil {
				return nil, nil, fmt.Errorf("brotli: %w", err)
			}
			return br, func() { p.br.Put(br) }, nil
		}
		br := brotli.NewReader(r)
		return br, func() { p.br.Put(br) }, nil
	case "zstd":
		zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxMemory(256<<20))
		if err != nil {
			return nil, nil, fmt.Errorf("zstd: %w", err)
		}
		return zr, zr.Close, nil
	case "deflate":
		// "deflate" is zlib-wrapped per RFC 9110, but many servers send raw
		// DEFLATE; tell them apart by the zlib header.
		bs, _ := r.(*bytes.Reader)
		var head [2]byte
		if bs != nil {
			n, _ := bs.ReadAt(head[:], 0)
			if n == 2 && isZlib(head[:]) {
				return p.zlibReader(r)
			}
			return p.flateReader(r)
		}
		return p.flateReader(r)
	}
	return nil, nil, fmt.Errorf("unsupported content coding %q", coding)
}

func (p *pools) zlibReader(r io.Reader) (io.Reader, func(), error) {
	if zr, ok := p.zlib.Get().(io.ReadCloser); ok {
		if err := zr.(zlib.Resetter).Reset(r, nil); err != nil {
			return nil, nil, fmt.Errorf("zlib: %w", err)
		}
		return zr, func() { p.zlib.Put(zr) }, nil
	}
	zr, err := zlib.NewReader(r)
	if err != nil {
		return nil, nil, fmt.Errorf("zlib: %w", err)
	}
	return zr, func() { p.zlib.Put(zr) }, nil
}

func (p *pools) flateReader(r io.Reader) (io.Reader, func(), error) {
	if fr, ok := p.flate.Get().(io.ReadCloser); ok {
		if err := fr.(flate.Resetter).Reset(r, nil); err != nil {
			return nil, nil, fmt.Errorf("flate: %w", err)
		}
		return fr, func() { p.flate.Put(fr) }, nil
	}
	fr := flate.NewReader(r)
	return fr, func() { p.flate.Put(fr) }, nil
}
