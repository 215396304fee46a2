// Package urlnorm spells a URL one way, so trivially different spellings
// of one page share a cache entry, a change-tracking history and a crawl
// slot: scheme and host lower case, a default or empty port and the
// fragment dropped, an empty path made "/". The query is kept as it is.
package urlnorm

import (
	"net"
	"net/url"
	"strings"
)

// Normalize returns a normalised copy of u.
func Normalize(u *url.URL) *url.URL {
	n := *u
	n.Scheme = strings.ToLower(n.Scheme)
	n.Host = strings.ToLower(n.Host)
	if p := n.Port(); p == "" || p == DefaultPort(n.Scheme) {
		n.Host = JoinHost(n.Hostname(), "")
	}
	n.Fragment, n.RawFragment = "", ""
	if n.Path == "" {
		n.Path, n.RawPath = "/", ""
	}
	return &n
}

// String is Normalize of the URL raw spells; raw as it is when it does
// not parse.
func String(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return Normalize(u).String()
}

// DefaultPort is the port scheme implies: "80" for http, "443" for https,
// "" for any other.
func DefaultPort(scheme string) string {
	switch strings.ToLower(scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

// JoinHost joins a host name and an optional port, bracketing IPv6.
func JoinHost(host, port string) string {
	if port != "" {
		return net.JoinHostPort(host, port)
	}
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}
