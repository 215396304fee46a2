package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/firegate/firegate/internal/proxypool"
)

// Sentinel errors returned (wrapped, with detail) by Client.Do. Callers
// classify failures with errors.Is.
var (
	// ErrDNS means the target host name does not resolve.
	ErrDNS = errors.New("fetch: dns resolution failed")
	// ErrTimeout means the context deadline (or a network timeout) expired
	// before the response, including its body, was fully read. Errors
	// wrapping it also wrap the underlying cause, often
	// context.DeadlineExceeded.
	ErrTimeout = errors.New("fetch: timeout")
	// ErrTLS means the TLS handshake or certificate verification failed.
	ErrTLS = errors.New("fetch: tls error")
	// ErrBlocked means the SSRF guard refused the target: a non-public
	// address (unless private targets are allowed) or a redirect to a
	// scheme other than http or https.
	ErrBlocked = errors.New("fetch: target blocked")
	// ErrTooManyRedirects means the redirect limit was exceeded.
	ErrTooManyRedirects = errors.New("fetch: too many redirects")
	// ErrConnection covers every other network failure: refused, reset,
	// unreachable, malformed responses.
	ErrConnection = errors.New("fetch: connection failed")
	// ErrInvalidURL means the requested URL is not an absolute http(s) URL.
	ErrInvalidURL = errors.New("fetch: invalid url")
	// ErrProxy means the request's proxy failed: it could not be reached,
	// or refused the handshake or the credentials (the error also wraps a
	// *proxypool.ProxyError, whose text masks the credentials). A target
	// the proxy could not reach is ErrConnection.
	ErrProxy = errors.New("fetch: proxy failed")
)

// classify maps a transport or body-read error to one of the sentinels. ctx
// is the request context: an expired deadline wins over whatever error the
// cancellation surfaced as.
func classify(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	for _, s := range []error{ErrBlocked, ErrTooManyRedirects, ErrInvalidURL} {
		if errors.Is(err, s) {
			inner := unwrapURLError(err)
			if strings.HasPrefix(inner.Error(), "fetch: ") {
				return inner // already ours, from CheckRedirect
			}
			return fmt.Errorf("%w: %w", s, inner)
		}
	}
	if _, ok := errors.AsType[*proxypool.ProxyError](err); ok && ctx.Err() == nil {
		return fmt.Errorf("%w: %w", ErrProxy, unwrapURLError(err))
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", ErrTimeout, unwrapURLError(err))
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("fetch: %w", unwrapURLError(err))
	}
	if dnsErr, ok := errors.AsType[*net.DNSError](err); ok {
		return fmt.Errorf("%w: %w", ErrDNS, dnsErr)
	}
	if netErr, ok := errors.AsType[net.Error](err); ok && netErr.Timeout() {
		return fmt.Errorf("%w: %w", ErrTimeout, unwrapURLError(err))
	}
	if isTLSError(err) {
		return fmt.Errorf("%w: %w", ErrTLS, unwrapURLError(err))
	}
	return fmt.Errorf("%w: %w", ErrConnection, unwrapURLError(err))
}

// unwrapURLError drops the *url.Error layer ("Get \"...\": ") so messages
// stay short; the URL is known to the caller.
func unwrapURLError(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok && ue.Err != nil {
		return ue.Err
	}
	return err
}

func isTLSError(err error) bool {
	if _, ok := errors.AsType[*tls.CertificateVerificationError](err); ok {
		return true
	}
	if _, ok := errors.AsType[x509.UnknownAuthorityError](err); ok {
		return true
	}
	if _, ok := errors.AsType[x509.HostnameError](err); ok {
		return true
	}
	if _, ok := errors.AsType[x509.CertificateInvalidError](err); ok {
		return true
	}
	if _, ok := errors.AsType[tls.RecordHeaderError](err); ok {
		return true
	}
	if _, ok := errors.AsType[tls.AlertError](err); ok {
		return true
	}
	if _, ok := errors.AsType[*tls.ECHRejectionError](err); ok {
		return true
	}
	// crypto/tls reports most handshake failures as plain errors prefixed
	// "tls: "; there is no exported type for them.
	return strings.Contains(err.Error(), "tls: ")
}
