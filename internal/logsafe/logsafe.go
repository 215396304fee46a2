// Package logsafe removes secrets from values before they are logged or
// used as metric labels.
package logsafe

import (
	"net/url"
	"strings"
)

// URL returns raw without the userinfo (user:password@) of its authority.
// A value that does not parse as a URL is returned with anything that looks
// like userinfo after "://" removed.
func URL(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndexByte(rest[:end], '@')
	if at < 0 {
		return raw
	}
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		u.User = nil
		return u.String()
	}
	return scheme + "://" + rest[at+1:]
}
