package proxypool

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"syscall"
	"time"
)

// ProxyError is a failure of the proxy itself: it could not be reached,
// its TLS handshake failed, or it refused the credentials or the
// handshake. The proxy is marked failed (Proxy.Failed) when it is
// returned. Its text names the proxy masked.
type ProxyError struct {
	Proxy *Proxy
	Err   error
}

func (e *ProxyError) Error() string { return fmt.Sprintf("proxy %s: %v", e.Proxy, e.Err) }

// Unwrap returns the cause.
func (e *ProxyError) Unwrap() error { return e.Err }

// ProxyFailure reports that the proxy itself failed (netguard.Reason).
func (e *ProxyError) ProxyFailure() bool { return true }

// ForwardURL is the proxy's URL, with its credentials, for plain-HTTP
// requests in absolute form (http.Transport.Proxy); nil for a SOCKS5
// proxy, which only tunnels.
func (p *Proxy) ForwardURL() *url.URL {
	if p.u.Scheme == "socks5" {
		return nil
	}
	return p.URL()
}

// DialProxy connects to the proxy itself (addr is its host:port, as
// http.Transport asks for it); a failure marks the proxy failed and is a
// *ProxyError.
func (p *Proxy) DialProxy(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: handshakeTimeout, KeepAlive: 30 * time.Second}
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		if ctx.Err() == nil {
			p.Failed()
		}
		return nil, &ProxyError{Proxy: p, Err: err}
	}
	return conn, nil
}

// TargetError is the proxy's answer that it could not reach the target:
// a CONNECT status other than 200, or a SOCKS5 reply other than success.
// A refused connection unwraps to syscall.ECONNREFUSED, a timeout to
// os.ErrDeadlineExceeded, and an unknown host to a *net.DNSError, so that
// callers classify them as they would a direct dial's errors.
type TargetError struct {
	Addr   string // the target asked for
	Reason string // the proxy's status or reply
	cause  error
}

func (e *TargetError) Error() string {
	return fmt.Sprintf("proxy could not reach %s: %s", e.Addr, e.Reason)
}

// Unwrap returns the class of failure, when known.
func (e *TargetError) Unwrap() error { return e.cause }

// handshakeTimeout bounds a proxy's handshake when ctx has no deadline.
const handshakeTimeout = 30 * time.Second

// DialContext opens a connection to addr (host:port; a name is sent to the
// proxy unresolved) through the proxy: a CONNECT tunnel through an http or
// https proxy, a SOCKS5 CONNECT through a socks5 one. The caller checks
// the target against its network policy first; the proxy itself is dialled
// without one (the operator configured it). A failure of the proxy is a
// *ProxyError and marks the proxy failed; the proxy's refusal to reach the
// target is a *TargetError.
func (p *Proxy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, fmt.Errorf("proxypool: dial %s: only tcp goes through a proxy", network)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, handshakeTimeout)
		defer cancel()
	}
	var nd net.Dialer
	conn, err := nd.DialContext(ctx, "tcp", p.u.Host)
	if err != nil {
		if ctx.Err() == nil {
			p.Failed()
		}
		return nil, p.fail(err)
	}
	// The handshake is bounded by ctx: closing the connection ends a read
	// or write that waits.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	var out net.Conn
	switch p.u.Scheme {
	case "https":
		tc := tls.Client(conn, &tls.Config{ServerName: hostOf(p.u.Host), NextProtos: []string{"http/1.1"}})
		if err = tc.HandshakeContext(ctx); err != nil {
			err = p.fail(fmt.Errorf("tls handshake: %w", err))
			break
		}
		out, err = p.connect(tc, addr)
	case "http":
		out, err = p.connect(conn, addr)
	default:
		out, err = p.socks5(conn, addr)
	}
	if !stop() {
		// ctx ended the handshake: the connection is closed.
		if err == nil {
			out.Close()
		}
		return nil, fmt.Errorf("proxy %s: %w", p, ctx.Err())
	}
	if err != nil {
		conn.Close()
		if _, ok := errors.AsType[*ProxyError](err); ok {
			p.Failed()
		}
		return nil, err
	}
	return out, nil
}

// fail wraps a failure of the proxy; DialContext marks the proxy failed
// when it returns one (unless ctx ended the handshake).
func (p *Proxy) fail(err error) error {
	return &ProxyError{Proxy: p, Err: err}
}

func hostOf(hostport string) string {
	h, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return hostport
	}
	return h
}

// authorization is the Proxy-Authorization value, or "".
func (p *Proxy) authorization() string {
	if p.u.User == nil {
		return ""
	}
	pw, _ := p.u.User.Password()
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(p.u.User.Username()+":"+pw))
}

// connect sends CONNECT addr over conn and reads the answer.
func (p *Proxy) connect(conn net.Conn, addr string) (net.Conn, error) {
	req := "CONNECT " + addr + " HTTP/1.1\r\nHost: " + addr + "\r\n"
	if a := p.authorization(); a != "" {
		req += "Proxy-Authorization: " + a + "\r\n"
	}
	if _, err := io.WriteString(conn, req+"\r\n"); err != nil {
		return nil, p.fail(fmt.Errorf("send CONNECT: %w", err))
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return nil, p.fail(fmt.Errorf("read CONNECT answer: %w", err))
	}
	// The answer's body is never read: on 200 the tunnel follows (a
	// "body" without length would read it), otherwise conn is closed.
	switch {
	case resp.StatusCode == http.StatusOK:
	case resp.StatusCode == http.StatusProxyAuthRequired:
		return nil, p.fail(errors.New("credentials refused (407)"))
	default:
		te := &TargetError{Addr: addr, Reason: resp.Status}
		if resp.StatusCode == http.StatusGatewayTimeout {
			te.cause = errDeadline
		}
		return nil, te
	}
	if br.Buffered() > 0 {
		return &bufferedConn{Conn: conn, r: br}, nil
	}
	return conn, nil
}

// bufferedConn is a connection whose first bytes were read ahead.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// errDeadline is what a proxy's timeout unwraps to.
var errDeadline = deadlineError{}

type deadlineError struct{}

func (deadlineError) Error() string   { return "timeout" }
func (deadlineError) Timeout() bool   { return true }
func (deadlineError) Temporary() bool { return true }
func (deadlineError) Is(target error) bool {
	return target == context.DeadlineExceeded
}

// SOCKS5 (RFC 1928, RFC 1929) constants.
const (
	socksVersion   = 5
	socksNoAuth    = 0
	socksUserPass  = 2
	socksNoMethods = 0xff
	socksConnect   = 1
	socksDomain    = 3
	socksIPv4      = 1
	socksIPv6      = 4
)

// socks5 runs a SOCKS5 CONNECT to addr over conn.
func (p *Proxy) socks5(conn net.Conn, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("proxypool: %s: %w", addr, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || len(host) > 255 {
		return nil, fmt.Errorf("proxypool: %s: bad address", addr)
	}
	method := byte(socksNoAuth)
	if p.u.User != nil {
		method = socksUserPass
	}
	if _, err := conn.Write([]byte{socksVersion, 1, method}); err != nil {
		return nil, p.fail(fmt.Errorf("socks greeting: %w", err))
	}
	var b [2]byte
	if _, err := io.ReadFull(conn, b[:]); err != nil {
		return nil, p.fail(fmt.Errorf("socks greeting: %w", err))
	}
	if b[0] != socksVersion || b[1] != method {
		return nil, p.fail(fmt.Errorf("socks server chose method %d", b[1]))
	}
	if method == socksUserPass {
		user := p.u.User.Username()
		pw, _ := p.u.User.Password()
		if len(user) > 255 || len(pw) > 255 {
			return nil, p.fail(errors.New("socks credentials longer than 255 bytes"))
		}
		msg := append([]byte{1, byte(len(user))}, user...)
		msg = append(append(msg, byte(len(pw))), pw...)
		if _, err := conn.Write(msg); err != nil {
			return nil, p.fail(fmt.Errorf("socks auth: %w", err))
		}
		if _, err := io.ReadFull(conn, b[:]); err != nil {
			return nil, p.fail(fmt.Errorf("socks auth: %w", err))
		}
		if b[1] != 0 {
			return nil, p.fail(errors.New("credentials refused"))
		}
	}
	req := []byte{socksVersion, socksConnect, 0}
	if ip := net.ParseIP(host); ip != nil {
		if v4 := ip.To4(); v4 != nil {
			req = append(append(req, socksIPv4), v4...)
		} else {
			req = append(append(req, socksIPv6), ip.To16()...)
		}
	} else {
		req = append(append(req, socksDomain, byte(len(host))), host...)
	}
	req = binary.BigEndian.AppendUint16(req, uint16(port))
	if _, err := conn.Write(req); err != nil {
		return nil, p.fail(fmt.Errorf("socks connect: %w", err))
	}
	var hdr [4]byte
	if _, err := io.ReadFull(conn, hdr[:]); err != nil {
		return nil, p.fail(fmt.Errorf("socks reply: %w", err))
	}
	if hdr[0] != socksVersion {
		return nil, p.fail(fmt.Errorf("socks reply version %d", hdr[0]))
	}
	if hdr[1] != 0 {
		return nil, socksTargetError(addr, hdr[1])
	}
	// The bound address, then the tunnel.
	var skip int
	switch hdr[3] {
	case socksIPv4:
		skip = 4
	case socksIPv6:
		skip = 16
	case socksDomain:
		var l [1]byte
		if _, err := io.ReadFull(conn, l[:]); err != nil {
			return nil, p.fail(fmt.Errorf("socks reply: %w", err))
		}
		skip = int(l[0])
	default:
		return nil, p.fail(fmt.Errorf("socks reply address type %d", hdr[3]))
	}
	if _, err := io.CopyN(io.Discard, conn, int64(skip+2)); err != nil {
		return nil, p.fail(fmt.Errorf("socks reply: %w", err))
	}
	return conn, nil
}

// socksTargetError maps a SOCKS5 reply code to a TargetError.
func socksTargetError(addr string, code byte) error {
	te := &TargetError{Addr: addr}
	switch code {
	case 2:
		te.Reason = "connection not allowed by ruleset"
	case 3:
		te.Reason = "network unreachable"
	case 4:
		te.Reason = "host unreachable"
	case 5:
		te.Reason = "connection refused"
		te.cause = syscall.ECONNREFUSED
	case 6:
		te.Reason = "TTL expired"
		te.cause = errDeadline
	default:
		te.Reason = fmt.Sprintf("socks reply %d", code)
	}
	return te
}
