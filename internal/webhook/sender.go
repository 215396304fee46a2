package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/firegate/firegate/internal/netguard"
)

// DefaultTimeout bounds one delivery when Options.Timeout is zero: the
// receiver must answer 2xx within it.
const DefaultTimeout = 10 * time.Second

// DefaultUserAgent is sent when Options.UserAgent is empty and the spec sets
// no User-Agent header.
const DefaultUserAgent = "firegate-webhook/1"

// maxDrain is how much of a response body is read so the connection can be
// reused; the rest is dropped with the connection.
const maxDrain = 64 << 10

// Sentinel errors wrapped by the *Error values Send returns.
var (
	// ErrBlocked means the target resolved to a loopback, private,
	// link-local, metadata or otherwise non-public address and private
	// targets are not allowed. Permanent.
	ErrBlocked = errors.New("webhook: target is not a public address")
	// ErrTimeout means the receiver did not answer within the timeout (or
	// the caller's deadline). Retryable.
	ErrTimeout = errors.New("webhook: timeout")
)

// Error is the error Send returns for a failed delivery.
type Error struct {
	// StatusCode is the receiver's HTTP status, or 0 when none was received.
	StatusCode int
	// Permanent is set when retrying the same delivery cannot succeed: the
	// target is refused, the spec is invalid, or the receiver answered a
	// 3xx or a 4xx other than 408, 425 and 429.
	Permanent bool
	// Err is the cause.
	Err error
}

// Error returns "webhook: " followed by the cause.
func (e *Error) Error() string {
	msg := e.Err.Error()
	if strings.HasPrefix(msg, "webhook: ") {
		return msg
	}
	return "webhook: " + msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Permanent reports whether err is a delivery failure that retrying cannot
// fix. Every other error, context cancellation included, is retryable.
func Permanent(err error) bool {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Permanent
	}
	return errors.Is(err, ErrBlocked) || errors.Is(err, ErrInvalidSpec)
}

// Options configures a Sender. The zero value is usable: no signature,
// 10 s timeout, private targets refused.
type Options struct {
	// Secret signs each body (see Sign) into the X-Firecrawl-Signature
	// header; empty sends no signature.
	Secret string
	// Timeout bounds one delivery, from dialling to reading the status.
	// Zero means DefaultTimeout.
	Timeout time.Duration
	// Policy decides which addresses may be dialled (at dial time, after
	// its own lookup); refusals are ErrBlocked. Nil means one built from
	// AllowPrivate.
	Policy *netguard.Policy
	// AllowPrivate, when Policy is nil, admits every address; false
	// refuses what is not globally reachable.
	AllowPrivate bool
	// UserAgent is the User-Agent header; empty means DefaultUserAgent. A
	// User-Agent in the spec's headers wins.
	UserAgent string
}

// Sender delivers webhook bodies. It is safe for concurrent use; create one
// per process.
type Sender struct {
	opts   Options
	log    *slog.Logger
	client *http.Client
	tr     *http.Transport
}

// NewSender returns a Sender with its own connection pool. A nil log
// discards.
func NewSender(opts Options, log *slog.Logger) *Sender {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.UserAgent == "" {
		opts.UserAgent = DefaultUserAgent
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	policy := opts.Policy
	if policy == nil {
		policy, _ = netguard.New(netguard.Options{AllowAll: opts.AllowPrivate}) // no Allow entries: cannot fail
	}
	d := &netguard.Dialer{Policy: policy, Timeout: opts.Timeout, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:                  nil, // a proxy would dial on our behalf, past the guard
		DialContext:            d.DialFunc(ErrBlocked),
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           256,
		MaxIdleConnsPerHost:    16,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    opts.Timeout,
		ResponseHeaderTimeout:  opts.Timeout,
		MaxResponseHeaderBytes: 64 << 10,
	}
	client := &http.Client{
		Transport: tr,
		// Redirects are not followed: the 3xx is the answer, and a
		// permanent failure.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &Sender{opts: opts, log: log, client: client, tr: tr}
}

// CloseIdleConnections closes idle keep-alive connections; call it on
// shutdown.
func (s *Sender) CloseIdleConnections() { s.tr.CloseIdleConnections() }

// Send POSTs body (an Envelope) as JSON to spec.URL with spec.Headers and,
// when a secret is configured, the signature header. Spec headers cannot
// replace Content-Type, the signature, Host, Content-Length or
// Transfer-Encoding. It makes one attempt bounded by the timeout and
// succeeds only on a 2xx answer; redirects are not followed. Failures are
// *Error values; use Permanent to decide whether to retry.
func (s *Sender) Send(ctx context.Context, spec Spec, body []byte) error {
	if err := checkURL(spec.URL); err != nil {
		return &Error{Permanent: true, Err: specErr("webhook.url", "%s", err)}
	}
	for name, val := range spec.Headers {
		if err := checkHeader(name, val); err != nil && !strings.EqualFold(name, SignatureHeader) {
			return &Error{Permanent: true, Err: specErr("webhook.headers."+name, "%s", err)}
		}
	}
	u, _ := url.Parse(spec.URL) // validated above
	host := u.Host

	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, spec.URL, bytes.NewReader(body))
	if err != nil {
		return &Error{Permanent: true, Err: fmt.Errorf("webhook: build request: %w", err)}
	}
	s.setHeaders(req, spec, body)

	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		e := classify(ctx, err, host)
		s.log.WarnContext(ctx, "webhook delivery failed", "host", host, "permanent", e.Permanent,
			"elapsed_ms", time.Since(start).Milliseconds(), "error", e)
		return e
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	_ = resp.Body.Close()

	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		s.log.DebugContext(ctx, "webhook delivered", "host", host, "status", resp.StatusCode,
			"elapsed_ms", time.Since(start).Milliseconds())
		return nil
	}
	e := &Error{
		StatusCode: resp.StatusCode,
		Permanent:  permanentStatus(resp.StatusCode),
		Err:        fmt.Errorf("webhook: %s answered %d %s", host, resp.StatusCode, http.StatusText(resp.StatusCode)),
	}
	s.log.WarnContext(ctx, "webhook delivery failed", "host", host, "status", resp.StatusCode,
		"permanent", e.Permanent, "elapsed_ms", time.Since(start).Milliseconds())
	return e
}

// reservedHeader reports whether a spec header is ignored because Send
// owns it (or net/http derives it from the request).
func reservedHeader(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Content-Type", SignatureHeader, "Host", "Content-Length", "Transfer-Encoding":
		return true
	}
	return false
}

func (s *Sender) setHeaders(req *http.Request, spec Spec, body []byte) {
	names := make([]string, 0, len(spec.Headers))
	for name := range spec.Headers {
		names = append(names, name)
	}
	sort.Strings(names) // deterministic when two names differ only in case
	req.Header.Set("User-Agent", s.opts.UserAgent)
	for _, name := range names {
		if !reservedHeader(name) {
			req.Header.Set(name, spec.Headers[name])
		}
	}
	req.Header.Set("Content-Type", "application/json")
	if s.opts.Secret != "" {
		req.Header.Set(SignatureHeader, Sign(s.opts.Secret, body))
	}
}

// permanentStatus reports whether a non-2xx status means retrying is
// pointless: redirects (not followed) and client errors other than request
// timeout, too early and too many requests.
func permanentStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusTooEarly, http.StatusTooManyRequests:
		return false
	}
	return code >= 300 && code < 500
}

// classify turns a transport error into an *Error. The *url.Error layer is
// dropped so the full URL (which may carry a token) stays out of messages.
func classify(ctx context.Context, err error, host string) *Error {
	if ue, ok := errors.AsType[*url.Error](err); ok && ue.Err != nil {
		err = ue.Err
	}
	switch {
	case errors.Is(err, ErrBlocked):
		if be, ok := errors.AsType[*netguard.BlockedError](err); ok && be.Addr.IsValid() {
			return &Error{Permanent: true, Err: fmt.Errorf("%w: %s resolved to %s", ErrBlocked, host, be.Addr)}
		}
		return &Error{Permanent: true, Err: fmt.Errorf("%w: %s: %w", ErrBlocked, host, err)}
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return &Error{Err: fmt.Errorf("%w: %s: %w", ErrTimeout, host, err)}
	case errors.Is(err, context.Canceled):
		return &Error{Err: fmt.Errorf("webhook: %s: %w", host, err)}
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return &Error{Err: fmt.Errorf("%w: %s: %w", ErrTimeout, host, err)}
	}
	return &Error{Err: fmt.Errorf("webhook: %s: %w", host, err)}
}

// Sign returns the X-Firecrawl-Signature value for body:
// "sha256=" followed by the hex HMAC-SHA256 of body keyed with secret.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether signature (a header value) is Sign(secret, body),
// comparing in constant time.
func Verify(secret string, body []byte, signature string) bool {
	return hmac.Equal([]byte(signature), []byte(Sign(secret, body)))
}
