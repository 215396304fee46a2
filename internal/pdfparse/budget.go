package pdfparse

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
)

// ErrTooLarge means the PDF expands beyond a limit of Limits: a stream
// inflates past MaxStreamBytes, the streams read for the document past
// MaxDocumentBytes, one string or array of a content stream past
// MaxTokenBytes, the text past MaxTextBytes, or pdftotext past its CPU,
// memory or output limits.
var ErrTooLarge = errors.New("pdfparse: PDF expands beyond the size limits")

// Default limits (see Limits).
const (
	DefaultMaxStreamBytes   = 64 << 20
	DefaultMaxDocumentBytes = 256 << 20
	DefaultMaxTokenBytes    = 4 << 20
	DefaultMaxTextBytes     = 32 << 20
	DefaultToolMemoryBytes  = 512 << 20
	DefaultToolCPUSeconds   = 30
	// maxCMapBytes caps a font's ToUnicode CMap, which the reader library
	// holds whole; real ones stay under 2 MB.
	maxCMapBytes = 8 << 20
)

// Limits bound the work and memory one document may take. Decompressed
// bytes are counted while they are inflated, never after. Zero fields take
// the defaults.
type Limits struct {
	// MaxStreamBytes caps the decompressed size of one stream.
	MaxStreamBytes int64
	// MaxDocumentBytes caps the decompressed bytes read for the whole
	// document: every content stream each time it is interpreted (a form
	// drawn 1,000 times counts 1,000 times), plus the object and
	// cross-reference streams checked before parsing.
	MaxDocumentBytes int64
	// MaxTokenBytes caps one string, name or array of a content stream.
	MaxTokenBytes int64
	// MaxTextBytes caps the text extracted and the markdown produced (and
	// the output read from pdftotext).
	MaxTextBytes int64
	// ToolMemoryBytes and ToolCPUSeconds limit the address space and CPU
	// time of the pdftotext subprocess; its CPU time is also capped by the
	// context deadline.
	ToolMemoryBytes int64
	ToolCPUSeconds  int
}

// withDefaults fills zero fields.
func (l Limits) withDefaults() Limits {
	def := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxStreamBytes, DefaultMaxStreamBytes)
	def(&l.MaxDocumentBytes, DefaultMaxDocumentBytes)
	def(&l.MaxTokenBytes, DefaultMaxTokenBytes)
	def(&l.MaxTextBytes, DefaultMaxTextBytes)
	def(&l.ToolMemoryBytes, DefaultToolMemoryBytes)
	if l.ToolCPUSeconds <= 0 {
		l.ToolCPUSeconds = DefaultToolCPUSeconds
	}
	return l
}

// budget is what one Parse may still read and write.
type budget struct {
	ctx  context.Context
	lim  Limits
	read int64 // decompressed stream bytes read so far
	text int64 // text bytes extracted so far
}

// newBudget returns the budget of one document.
func newBudget(ctx context.Context, lim Limits) *budget {
	return &budget{ctx: ctx, lim: lim.withDefaults()}
}

// addText counts n bytes of extracted text.
func (b *budget) addText(n int) error {
	b.text += int64(n)
	if b.text > b.lim.MaxTextBytes {
		return fmt.Errorf("%w: more than %d bytes of text", ErrTooLarge, b.lim.MaxTextBytes)
	}
	return nil
}

// countReader counts the decompressed bytes of one stream against the
// stream and document limits, and checks the context on every read.
type countReader struct {
	r   io.Reader
	b   *budget
	max int64 // per-stream cap
	n   int64
}

// Read implements io.Reader.
func (c *countReader) Read(p []byte) (int, error) {
	if err := c.b.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.b.read += int64(n)
	if c.n > c.max {
		return n, fmt.Errorf("%w: a stream inflates to more than %d bytes", ErrTooLarge, c.max)
	}
	if c.b.read > c.b.lim.MaxDocumentBytes {
		return n, fmt.Errorf("%w: its streams inflate to more than %d bytes", ErrTooLarge, c.b.lim.MaxDocumentBytes)
	}
	return n, err
}

// checkStreams inflates, into nothing, every FlateDecode object stream and
// cross-reference stream of the raw file, counting against the budget. The
// reader library inflates these itself (object streams once per object
// looked up), so they are bounded here, before it sees them. Content
// streams and CMaps are counted where they are read.
func checkStreams(b *budget, data []byte) error {
	for _, typ := range [][]byte{[]byte("/ObjStm"), []byte("/XRef")} {
		for off := 0; ; {
			i := bytes.Index(data[off:], typ)
			if i < 0 {
				break
			}
			pos := off + i // the /Type value of a stream dictionary, or any other use
			off = pos + len(typ)
			s := bytes.Index(data[off:min(len(data), off+4096)], []byte("stream"))
			if s < 0 || bytes.Contains(data[off:off+s], []byte("endobj")) {
				continue
			}
			start := max(0, pos-4096)
			if k := bytes.LastIndex(data[start:pos], []byte(" obj")); k >= 0 {
				start += k
			}
			if !bytes.Contains(data[start:off+s], []byte("/FlateDecode")) {
				continue
			}
			body := off + s + len("stream")
			if body < len(data) && data[body] == '\r' {
				body++
			}
			if body < len(data) && data[body] == '\n' {
				body++
			}
			zr, err := zlib.NewReader(bytes.NewReader(data[body:]))
			if err != nil {
				continue // not inflatable here (encrypted): the reader fails on it
			}
			_, err = io.Copy(io.Discard, &countReader{r: zr, b: b, max: b.lim.MaxStreamBytes})
			if errors.Is(err, ErrTooLarge) || b.ctx.Err() != nil {
				if cerr := b.ctx.Err(); cerr != nil {
					return cerr
				}
				return err
			}
			off = body
		}
	}
	return nil
}

// streamSize inflates a stream into nothing and returns its size, or
// ErrTooLarge past max. Other read errors return the bytes read so far.
func streamSize(b *budget, rd io.Reader, max int64) (int64, error) {
	c := &countReader{r: rd, b: b, max: max}
	_, err := io.Copy(io.Discard, c)
	if errors.Is(err, ErrTooLarge) {
		return c.n, err
	}
	if cerr := b.ctx.Err(); cerr != nil {
		return c.n, cerr
	}
	return c.n, nil
}
