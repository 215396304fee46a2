package pagemeta

import (
	"net/url"
	"strconv"
	"strings"
)

func (w *walker) links(base *url.URL) []string {
	return resolveAll(base, w.hrefs, true)
}

func (w *walker) images(base *url.URL) []string {
	return resolveAll(base, w.imgs, false)
}

// resolveAll resolves raws against base, keeping http(s) results (and
// mailto: ones when mailto is set) in order without duplicates.
func resolveAll(base *url.URL, raws []string, mailto bool) []string {
	out := make([]string, 0, len(raws))
	seen := make(map[string]struct{}, len(raws))
	// Pages repeat the same href many times; resolve each spelling once.
	done := make(map[string]struct{}, len(raws))
	prefix := originPrefix(base)
	for _, raw := range raws {
		if _, ok := done[raw]; ok {
			continue
		}
		done[raw] = struct{}{}
		var s string
		var ok bool
		if mailto && hasSchemeFold(strings.TrimSpace(raw), "mailto") {
			s = cleanURL(raw)
			ok = len(s) > len("mailto:")
		} else if s, ok = fastResolve(prefix, raw); !ok {
			s, ok = resolveHTTP(base, raw)
		}
		if !ok {
			continue
		}
		if _, dup := seen[s]; dup {
			continue
		}
		seen[s] = struct{}{}
		out = append(out, s)
	}
	return out
}

// originPrefix is how resolveHTTP serialises base's scheme and host, so
// that an absolute-path reference "/p" resolves to prefix+"/p"; "" when
// base cannot serve the fast path.
func originPrefix(base *url.URL) string {
	if base == nil || base.User != nil {
		return ""
	}
	root, ok := resolveHTTP(base, "/")
	if !ok || !strings.HasSuffix(root, "/") {
		return ""
	}
	return root[:len(root)-1]
}

// fastResolve handles the common shapes without url.Parse: absolute
// http(s) URLs and absolute-path references made only of characters that
// net/url serialises verbatim, with a lower-case host, a path and no dot
// segments. Its result always equals resolveHTTP's; ok is false when the
// reference needs the full parser.
func fastResolve(prefix, raw string) (string, bool) {
	if !plainURL(raw) {
		return "", false
	}
	// net/url drops an empty fragment and escapes a second '#'.
	if h := strings.IndexByte(raw, '#'); h >= 0 && (h == len(raw)-1 || strings.IndexByte(raw[h+1:], '#') >= 0) {
		return "", false
	}
	var rest string
	switch {
	case strings.HasPrefix(raw, "https://"):
		rest = raw[len("https://"):]
	case strings.HasPrefix(raw, "http://"):
		rest = raw[len("http://"):]
	case len(raw) > 0 && raw[0] == '/' && (len(raw) == 1 || raw[1] != '/') && prefix != "":
		if strings.Contains(raw, "/.") {
			return "", false
		}
		return prefix + raw, true
	default:
		return "", false
	}
	slash := strings.IndexByte(rest, '/')
	if slash <= 0 {
		return "", false // no path (needs "/"), or empty host
	}
	host := rest[:slash]
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.') {
			return "", false // upper case, port, userinfo, query or fragment
		}
	}
	if strings.Contains(rest[slash:], "/.") {
		return "", false
	}
	return raw, true
}

// plainURL reports whether s consists only of characters that net/url
// keeps unchanged in every URL component.
func plainURL(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-._~:/?#@!$&'()*+,;=", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// resolveHTTP resolves raw against base and returns the absolute URL when
// it is http or https. The host is lower-cased and an empty path becomes
// "/", as browsers serialise URLs.
func resolveHTTP(base *url.URL, raw string) (string, bool) {
	s := cleanURL(raw)
	if s == "" {
		return "", false
	}
	if scheme := schemeOf(s); scheme != "" && !strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https") {
		return "", false
	}
	var u *url.URL
	var err error
	if base != nil {
		u, err = base.Parse(s)
	} else {
		u, err = url.Parse(s)
	}
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return "", false
	}
	u.Host = asciiLower(u.Host)
	if u.Path == "" && u.RawPath == "" {
		u.Path = "/"
	}
	return u.String(), true
}

// cleanURL strips leading and trailing C0 controls and spaces and removes
// tabs and newlines anywhere, as the URL standard does for attribute values.
func cleanURL(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, s)
	}
	return s
}

// schemeOf returns the scheme of s ("" for relative references).
func schemeOf(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9', c == '+', c == '-', c == '.':
			if i == 0 {
				return ""
			}
		case c == ':':
			return s[:i]
		default:
			return ""
		}
	}
	return ""
}

// hasSchemeFold reports whether s starts with scheme followed by ':',
// ignoring case.
func hasSchemeFold(s, scheme string) bool {
	return len(s) > len(scheme) && s[len(scheme)] == ':' && strings.EqualFold(s[:len(scheme)], scheme)
}

// largestCandidate returns the URL of the biggest image candidate in a
// srcset: the largest width descriptor, else the largest density (a
// candidate without descriptor counts as 1x). data: candidates are ignored.
func largestCandidate(srcset string) string {
	const ws = " \t\n\r\f"
	best := ""
	bestW, bestX := -1, -1.0
	s := srcset
	for {
		s = strings.TrimLeft(s, ws+",")
		if s == "" {
			return best
		}
		var u, desc string
		if i := strings.IndexAny(s, ws); i >= 0 {
			u, s = s[:i], s[i:]
		} else {
			u, s = s, ""
		}
		if strings.HasSuffix(u, ",") {
			u = strings.TrimRight(u, ",")
		} else {
			depth, j := 0, 0
			for ; j < len(s); j++ {
				c := s[j]
				if c == '(' {
					depth++
				} else if c == ')' && depth > 0 {
					depth--
				} else if c == ',' && depth == 0 {
					break
				}
			}
			desc, s = s[:j], s[j:]
		}
		if u == "" || hasSchemeFold(u, "data") {
			continue
		}
		w, x := descriptor(desc)
		switch {
		case w > 0:
			if w > bestW {
				best, bestW = u, w
			}
		case bestW < 0 && x > bestX:
			best, bestX = u, x
		}
	}
}

// descriptor parses srcset descriptors into a width (0 when absent) and a
// density (1 when absent).
func descriptor(desc string) (int, float64) {
	w, x := 0, 1.0
	for f := range strings.FieldsSeq(desc) {
		if len(f) < 2 {
			continue
		}
		num := f[:len(f)-1]
		switch f[len(f)-1] {
		case 'w', 'W':
			if n, err := strconv.Atoi(num); err == nil && n > 0 {
				w = n
			}
		case 'x', 'X':
			if d, err := strconv.ParseFloat(num, 64); err == nil && d > 0 {
				x = d
			}
		}
	}
	return w, x
}
