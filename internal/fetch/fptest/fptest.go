// Package fptest is a fingerprint test server on loopback: an HTTPS
// server that records what each client sends before any page: its TLS
// ClientHello (parsed from the raw bytes: version, cipher suites,
// extensions in order, groups, signature algorithms, ALPN), and then, over
// HTTP/2, its SETTINGS, first WINDOW_UPDATE, and the header fields of its
// request in order (pseudo-headers included), or over HTTP/1.1 its header
// lines in order. It answers every request with a small HTML page.
package fptest

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Hello is a parsed TLS ClientHello.
type Hello struct {
	Version      uint16
	CipherSuites []uint16
	Extensions   []uint16 // types, in the order sent
	Groups       []uint16
	SigAlgs      []uint16
	ALPN         []string
	ServerName   string
	// Data holds each extension's bytes by type (the last of a type).
	Data map[uint16][]byte
}

// Fingerprint is what one connection sent.
type Fingerprint struct {
	Hello Hello
	// Proto is "h2" or "http/1.1".
	Proto string
	// Settings are the HTTP/2 SETTINGS as id:value, in order.
	Settings []string
	// WindowUpdate is the first connection-level WINDOW_UPDATE increment.
	WindowUpdate uint32
	// Headers are the request's header names in order (lower-case, the
	// pseudo-headers first over HTTP/2) and Values their values.
	Headers []string
	Values  map[string]string
	Path    string
}

// Server is a running fingerprint server.
type Server struct {
	ln   net.Listener
	cert tls.Certificate
	// Page is served to every request; its default is a small page.
	Page string

	mu  sync.Mutex
	fps []Fingerprint
}

// New starts a server on 127.0.0.1 with a self-signed certificate for
// 127.0.0.1 and localhost; it stops when the test ends.
func New(tb testing.TB) *Server {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	// httptest's certificate is for 127.0.0.1, ::1 and example.com.
	ts := httptest.NewUnstartedServer(nil)
	ts.StartTLS()
	cert := ts.TLS.Certificates[0]
	ts.Close()
	s := &Server{ln: ln, cert: cert, Page: "<!doctype html><html><head><title>fp</title></head><body><p>fingerprinted</p></body></html>"}
	go s.serve()
	tb.Cleanup(func() { ln.Close() })
	return s
}

// URL is https://127.0.0.1:port.
func (s *Server) URL() string { return "https://" + s.ln.Addr().String() }

// Fingerprints returns what the connections sent so far.
func (s *Server) Fingerprints() []Fingerprint {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.fps)
}

func (s *Server) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		go s.handle(c)
	}
}

// replayConn reads the ClientHello again, then the rest.
type replayConn struct {
	net.Conn
	r io.Reader
}

func (c *replayConn) Read(b []byte) (int, error) { return c.r.Read(b) }

func (s *Server) handle(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(c)
	raw, err := readClientHello(br)
	if err != nil {
		return
	}
	hello, err := ParseClientHello(raw)
	if err != nil {
		return
	}
	fp := Fingerprint{Hello: hello, Values: map[string]string{}}
	tc := tls.Server(&replayConn{Conn: c, r: io.MultiReader(bytes.NewReader(raw), br)}, &tls.Config{
		Certificates: []tls.Certificate{s.cert},
		NextProtos:   []string{"h2", "http/1.1"},
	})
	if err := tc.Handshake(); err != nil {
		return
	}
	fp.Proto = tc.ConnectionState().NegotiatedProtocol
	if fp.Proto == "h2" {
		s.serveH2(tc, &fp)
	} else {
		fp.Proto = "http/1.1"
		s.serveH1(tc, &fp)
	}
}

func (s *Server) record(fp Fingerprint) {
	s.mu.Lock()
	s.fps = append(s.fps, fp)
	s.mu.Unlock()
}

// serveH1 reads one request's header lines in order and answers.
func (s *Server) serveH1(c net.Conn, fp *Fingerprint) {
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil {
		return
	}
	if f := strings.Fields(line); len(f) > 1 {
		fp.Path = f[1]
	}
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			return
		}
		l = strings.TrimRight(l, "\r\n")
		if l == "" {
			break
		}
		name, value, _ := strings.Cut(l, ":")
		name = strings.ToLower(name)
		fp.Headers = append(fp.Headers, name)
		fp.Values[name] = strings.TrimSpace(value)
	}
	s.record(*fp)
	fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(s.Page), s.Page)
}

// serveH2 reads the preface, SETTINGS, WINDOW_UPDATE and the first
// request's HEADERS, and answers that stream.
func (s *Server) serveH2(c net.Conn, fp *Fingerprint) {
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c, preface); err != nil || string(preface) != http2.ClientPreface {
		return
	}
	fr := http2.NewFramer(c, c)
	fr.ReadMetaHeaders = hpack.NewDecoder(65536, nil)
	if err := fr.WriteSettings(); err != nil {
		return
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if f.IsAck() {
				continue
			}
			_ = f.ForeachSetting(func(st http2.Setting) error {
				fp.Settings = append(fp.Settings, fmt.Sprintf("%d:%d", st.ID, st.Val))
				return nil
			})
			_ = fr.WriteSettingsAck()
		case *http2.WindowUpdateFrame:
			if f.StreamID == 0 && fp.WindowUpdate == 0 {
				fp.WindowUpdate = f.Increment
			}
		case *http2.MetaHeadersFrame:
			for _, hf := range f.Fields {
				fp.Headers = append(fp.Headers, hf.Name)
				fp.Values[hf.Name] = hf.Value
				if hf.Name == ":path" {
					fp.Path = hf.Value
				}
			}
			s.record(*fp)
			var hb bytes.Buffer
			enc := hpack.NewEncoder(&hb)
			_ = enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
			_ = enc.WriteField(hpack.HeaderField{Name: "content-type", Value: "text/html"})
			_ = enc.WriteField(hpack.HeaderField{Name: "content-length", Value: fmt.Sprint(len(s.Page))})
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: f.StreamID, BlockFragment: hb.Bytes(), EndHeaders: true})
			_ = fr.WriteData(f.StreamID, true, []byte(s.Page))
			// Later requests on the connection (a favicon) are answered
			// the same way, recorded as connections of their own.
			fp = &Fingerprint{Hello: fp.Hello, Proto: "h2", Settings: fp.Settings, WindowUpdate: fp.WindowUpdate, Values: map[string]string{}}
		case *http2.GoAwayFrame:
			return
		}
	}
}

// readClientHello reads the TLS records holding the first handshake
// message and returns them as read (record headers included).
func readClientHello(br *bufio.Reader) ([]byte, error) {
	var raw, body []byte
	need := -1
	for need < 0 || len(body) < need {
		hdr := make([]byte, 5)
		if _, err := io.ReadFull(br, hdr); err != nil {
			return nil, err
		}
		if hdr[0] != 22 {
			return nil, errors.New("fptest: not a handshake record")
		}
		n := int(binary.BigEndian.Uint16(hdr[3:5]))
		rec := make([]byte, n)
		if _, err := io.ReadFull(br, rec); err != nil {
			return nil, err
		}
		raw = append(append(raw, hdr...), rec...)
		body = append(body, rec...)
		if need < 0 && len(body) >= 4 {
			need = 4 + int(body[1])<<16 | int(body[2])<<8 | int(body[3])
		}
	}
	return raw, nil
}

// ParseClientHello parses a ClientHello from its TLS records.
func ParseClientHello(raw []byte) (Hello, error) {
	var body []byte
	for len(raw) >= 5 {
		n := int(binary.BigEndian.Uint16(raw[3:5]))
		if len(raw) < 5+n {
			return Hello{}, errors.New("fptest: short record")
		}
		body = append(body, raw[5:5+n]...)
		raw = raw[5+n:]
	}
	r := reader{b: body}
	if r.u8() != 1 { // client_hello
		return Hello{}, errors.New("fptest: not a ClientHello")
	}
	r.skip(3)
	var h Hello
	h.Version = r.u16()
	r.skip(32)          // random
	r.skip(int(r.u8())) // session id
	suites := r.sub16()
	for suites.left() >= 2 {
		h.CipherSuites = append(h.CipherSuites, suites.u16())
	}
	r.skip(int(r.u8())) // compression
	exts := r.sub16()
	for exts.left() >= 4 {
		typ := exts.u16()
		data := exts.sub16()
		h.Extensions = append(h.Extensions, typ)
		if h.Data == nil {
			h.Data = map[uint16][]byte{}
		}
		h.Data[typ] = slices.Clone(data.b)
		switch typ {
		case 0: // server_name
			list := data.sub16()
			if list.u8() == 0 {
				h.ServerName = string(list.sub16().b)
			}
		case 10: // supported_groups
			g := data.sub16()
			for g.left() >= 2 {
				h.Groups = append(h.Groups, g.u16())
			}
		case 13: // signature_algorithms
			g := data.sub16()
			for g.left() >= 2 {
				h.SigAlgs = append(h.SigAlgs, g.u16())
			}
		case 16: // ALPN
			list := data.sub16()
			for list.left() > 0 {
				h.ALPN = append(h.ALPN, string(list.sub8().b))
			}
		}
	}
	if r.err {
		return h, errors.New("fptest: truncated ClientHello")
	}
	return h, nil
}

// IsGREASE reports whether v is a GREASE value (RFC 8701).
func IsGREASE(v uint16) bool { return v&0x0f0f == 0x0a0a && v>>8 == v&0xff }

// WithoutGREASE returns vs without GREASE values, sorted.
func WithoutGREASE(vs []uint16) []uint16 {
	var out []uint16
	for _, v := range vs {
		if !IsGREASE(v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// reader reads a TLS structure; past the end it yields zeros and sets err.
type reader struct {
	b   []byte
	err bool
}

func (r *reader) left() int { return len(r.b) }

func (r *reader) take(n int) []byte {
	if n < 0 || n > len(r.b) {
		r.err = true
		r.b = nil
		return make([]byte, max(n, 0))
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) skip(n int)  { r.take(n) }
func (r *reader) u8() byte    { return r.take(1)[0] }
func (r *reader) u16() uint16 { return binary.BigEndian.Uint16(r.take(2)) }
func (r *reader) sub8() *reader {
	return &reader{b: r.take(int(r.u8()))}
}
func (r *reader) sub16() *reader {
	return &reader{b: r.take(int(r.u16()))}
}
