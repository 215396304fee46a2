package fetch

import (
	"bytes"
	"mime"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/unicode"
)

// prescanBytes is how much of the body is searched for a <meta> charset,
// as in the HTML standard's prescan.
const prescanBytes = 1024

// Text returns Body decoded to UTF-8. The charset is taken from, in order: a
// byte order mark (it overrides everything, as in browsers), the
// Content-Type header, a <meta charset> or <meta http-equiv=Content-Type>
// within the first 1024 bytes; otherwise UTF-8 when the body is valid UTF-8
// and windows-1252 when it is not. One repair is applied: a body declared
// as ISO-8859-1/windows-1252/ASCII that is valid UTF-8 with non-ASCII
// content is decoded as UTF-8 (a common server misconfiguration). Invalid
// bytes become U+FFFD; Text never fails.
func (r *Response) Text() string {
	body := r.Body
	switch {
	case bytes.HasPrefix(body, []byte("\xef\xbb\xbf")):
		return utf8Text(body[3:])
	case bytes.HasPrefix(body, []byte("\xfe\xff")):
		return decodeWith(unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM), body)
	case bytes.HasPrefix(body, []byte("\xff\xfe")):
		return decodeWith(unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM), body)
	}
	enc, name := r.declaredEncoding()
	if enc == nil {
		if utf8.Valid(body) {
			return string(body)
		}
		enc, name = charset.Lookup("windows-1252")
	}
	if name == "utf-8" {
		return utf8Text(body)
	}
	if name == "windows-1252" && hasHighBit(body) && utf8.Valid(body) {
		return string(body)
	}
	return decodeWith(enc, body)
}

// declaredEncoding returns the encoding named by the Content-Type header or,
// failing that, by a <meta> tag near the start of the body; nil when
// neither names a known charset.
func (r *Response) declaredEncoding() (encoding.Encoding, string) {
	ct := ""
	if r.Header != nil {
		ct = r.Header.Get("Content-Type")
	}
	if ct != "" {
		if _, params, err := mime.ParseMediaType(ct); err == nil {
			if label := params["charset"]; label != "" {
				if enc, name := charset.Lookup(label); enc != nil {
					return enc, name
				}
			}
		}
	}
	head := r.Body[:min(len(r.Body), prescanBytes)]
	if label := metaCharset(head); label != "" {
		enc, name := charset.Lookup(label)
		// The HTML standard treats a meta-declared UTF-16 as UTF-8: a
		// UTF-16 document could not have been read this far as ASCII.
		if strings.HasPrefix(name, "utf-16") {
			return charset.Lookup("utf-8")
		}
		if enc != nil {
			return enc, name
		}
	}
	return nil, ""
}

func utf8Text(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func decodeWith(enc encoding.Encoding, b []byte) string {
	out, err := enc.NewDecoder().Bytes(b)
	if err != nil {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	return utf8Text(out)
}

func hasHighBit(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return true
		}
	}
	return false
}

// metaCharset finds the charset label declared by a <meta charset> or
// <meta http-equiv="Content-Type" content="...; charset=..."> tag in head.
func metaCharset(head []byte) string {
	if !strings.Contains(asciiLower(string(head)), "<meta") {
		return ""
	}
	z := html.NewTokenizer(bytes.NewReader(head))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if string(name) != "meta" || !hasAttr {
				continue
			}
			var httpEquiv, content string
			for more := true; more; {
				var k, v []byte
				k, v, more = z.TagAttr()
				switch string(k) {
				case "charset":
					if s := strings.TrimSpace(string(v)); s != "" {
						return s
					}
				case "http-equiv":
					httpEquiv = string(v)
				case "content":
					content = string(v)
				}
			}
			if strings.EqualFold(strings.TrimSpace(httpEquiv), "content-type") {
				if s := charsetFromContent(content); s != "" {
					return s
				}
			}
		}
	}
}

// charsetFromContent extracts the value after "charset=" in a Content-Type
// like string, with optional quotes, as the HTML standard's algorithm does.
func charsetFromContent(s string) string {
	const ws = " \t\n\f\r"
	lower := asciiLower(s)
	off := 0
	for {
		i := strings.Index(lower[off:], "charset")
		if i < 0 {
			return ""
		}
		off += i + len("charset")
		rest := strings.TrimLeft(s[off:], ws)
		if !strings.HasPrefix(rest, "=") {
			continue
		}
		rest = strings.TrimLeft(rest[1:], ws)
		if rest == "" {
			return ""
		}
		if q := rest[0]; q == '"' || q == '\'' {
			end := strings.IndexByte(rest[1:], q)
			if end < 0 {
				return ""
			}
			return rest[1 : 1+end]
		}
		if end := strings.IndexAny(rest, ws+";"); end >= 0 {
			return rest[:end]
		}
		return rest
	}
}

// asciiLower lower-cases ASCII letters only, keeping byte offsets intact.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
