package crawl

import (
	"net/http"

	"github.com/firegate/firegate/internal/apierr"
)

// Sentinel errors of the mapper, with what the API answers for each (the
// error table in apierr cannot import this package, which uses it); they
// are wrapped with %w to add detail.
var (
	// ErrTimeout means the map did not finish within its timeout.
	ErrTimeout = apierr.New("crawl: map timed out", http.StatusRequestTimeout, "MAP_TIMEOUT",
		"The map operation timed out before it finished. Raise timeout, lower limit, or set sitemap to skip or only.")
	// ErrBlocked means the start URL resolves to an address the fetcher
	// refuses (a non-public address when private targets are not allowed).
	ErrBlocked = apierr.New("crawl: target not allowed", http.StatusForbidden, "MAP_TARGET_NOT_ALLOWED",
		"Forbidden: the URL resolves to a private or otherwise non-public address, which this server does not fetch.")
	// ErrUnreachable means the start page could not be fetched (DNS,
	// connection or TLS failure) and no sitemap yielded any URL.
	ErrUnreachable = apierr.New("crawl: site unreachable", http.StatusInternalServerError, "MAP_FAILED",
		"Map failed: the start URL could not be fetched and no sitemap of the site listed any URL.")
	// ErrInvalidOptions means MapOptions are unusable: a start URL that is
	// not absolute http(s), or a path pattern that does not compile. The
	// API answers with the wrapped error's text.
	ErrInvalidOptions = apierr.New("crawl: invalid map options", http.StatusBadRequest, "BAD_REQUEST", "")
)
