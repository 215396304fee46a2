package crawl

import "github.com/firegate/firegate/internal/errcode"

// Sentinel errors of the mapper, with what the API answers for each; they
// are wrapped with %w to add detail.
var (
	// ErrTimeout means the map did not finish within its timeout.
	ErrTimeout = errcode.New("crawl: map timed out", errcode.Timeout, "MAP_TIMEOUT",
		"The map operation timed out before it finished. Raise timeout, lower limit, or set sitemap to skip or only.")
	// ErrBlocked means the start URL resolves to an address the fetcher
	// refuses (a non-public address when private targets are not allowed).
	ErrBlocked = errcode.New("crawl: target not allowed", errcode.Forbidden, "MAP_TARGET_NOT_ALLOWED",
		"Forbidden: the URL resolves to a private or otherwise non-public address, which this server does not fetch.")
	// ErrUnreachable means the start page could not be fetched (DNS,
	// connection or TLS failure) and no sitemap yielded any URL.
	ErrUnreachable = errcode.New("crawl: site unreachable", errcode.Failed, "MAP_FAILED",
		"Map failed: the start URL could not be fetched and no sitemap of the site listed any URL.")
	// ErrInvalidOptions means MapOptions are unusable: a start URL that is
	// not absolute http(s), or a path pattern that does not compile. A
	// client is shown the detail the wrapping error adds.
	ErrInvalidOptions = errcode.New("crawl: invalid map options", errcode.Invalid, "BAD_REQUEST", "").WithLead("Invalid options")
)
