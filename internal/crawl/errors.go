package crawl

import "errors"

// Sentinel errors of the mapper. httpapi maps each to a status, code and
// message; they are wrapped with %w to add detail.
var (
	// ErrTimeout means the map did not finish within its timeout.
	ErrTimeout = errors.New("crawl: map timed out")
	// ErrBlocked means the start URL resolves to an address the fetcher
	// refuses (a non-public address when private targets are not allowed).
	ErrBlocked = errors.New("crawl: target not allowed")
	// ErrUnreachable means the start page could not be fetched (DNS,
	// connection or TLS failure) and no sitemap yielded any URL.
	ErrUnreachable = errors.New("crawl: site unreachable")
	// ErrInvalidOptions means MapOptions are unusable: a start URL that is
	// not absolute http(s), or a path pattern that does not compile.
	ErrInvalidOptions = errors.New("crawl: invalid map options")
)
