package mediaconv

import (
	"bytes"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// uriAttr is a quoted URI attribute of an HLS tag (EXT-X-KEY, EXT-X-MAP,
// EXT-X-MEDIA, ...).
var uriAttr = regexp.MustCompile(`URI="([^"]*)"`)

// hlsAttr is one attribute of an HLS tag's attribute list.
var hlsAttr = regexp.MustCompile(`([A-Z0-9-]+)=("[^"]*"|[^,]*)`)

// rewriteHLS rewrites the URLs of an HLS playlist fetched from base to the
// gateway. A master playlist keeps only its variant of the highest
// bandwidth and that variant's default audio rendition: ffmpeg would
// otherwise open every variant.
func rewriteHLS(data []byte, base *url.URL, g *gateway) []byte {
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n"), "\n")
	if isMaster(lines) {
		lines = bestVariant(lines)
	}
	var out strings.Builder
	for _, line := range lines {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
		case strings.HasPrefix(trimmed, "#"):
			line = uriAttr.ReplaceAllStringFunc(line, func(m string) string {
				return `URI="` + g.rewrite(base, m[len(`URI="`):len(m)-1]) + `"`
			})
		default:
			line = g.rewrite(base, trimmed)
		}
		out.WriteString(line)
		out.WriteByte('\n')
	}
	return []byte(out.String())
}

// rewrite resolves ref against base and returns its gateway URL; a
// reference that is not http(s) is left as it is (ffmpeg may not open it).
func (g *gateway) rewrite(base *url.URL, ref string) string {
	u, err := base.Parse(ref)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ref
	}
	return g.url(u)
}

// isMaster reports a master playlist (one listing variants).
func isMaster(lines []string) bool {
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "#EXT-X-STREAM-INF:") {
			return true
		}
	}
	return false
}

// attrs parses the attribute list of an HLS tag line.
func attrs(line string) map[string]string {
	_, list, _ := strings.Cut(line, ":")
	m := map[string]string{}
	for _, kv := range hlsAttr.FindAllStringSubmatch(list, -1) {
		m[kv[1]] = strings.Trim(kv[2], `"`)
	}
	return m
}

// bestVariant keeps, of a master playlist, the tags that are not about
// variants or renditions, the variant of the highest BANDWIDTH (the first
// of equals) with its URI line, and the audio rendition of its group that
// is DEFAULT (else the first).
func bestVariant(lines []string) []string {
	best, bestBW := -1, int64(-1)
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, "#EXT-X-STREAM-INF:") {
			continue
		}
		bw, _ := strconv.ParseInt(attrs(t)["BANDWIDTH"], 10, 64)
		if bw > bestBW {
			best, bestBW = i, bw
		}
	}
	group := attrs(strings.TrimSpace(lines[best]))["AUDIO"]
	audio := -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, "#EXT-X-MEDIA:") {
			continue
		}
		a := attrs(t)
		if a["TYPE"] != "AUDIO" || group == "" || a["GROUP-ID"] != group {
			continue
		}
		if audio < 0 || a["DEFAULT"] == "YES" && attrs(strings.TrimSpace(lines[audio]))["DEFAULT"] != "YES" {
			audio = i
		}
	}
	var out []string
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		switch {
		case strings.HasPrefix(t, "#EXT-X-STREAM-INF:"):
			if i == best {
				out = append(out, lines[i])
				for i+1 < len(lines) { // its URI: the next line that is not a tag
					i++
					if u := strings.TrimSpace(lines[i]); u != "" && !strings.HasPrefix(u, "#") {
						out = append(out, lines[i])
						break
					}
				}
			}
		case strings.HasPrefix(t, "#EXT-X-MEDIA:"):
			if i == audio {
				out = append(out, lines[i])
			}
		case strings.HasPrefix(t, "#EXT-X-I-FRAME-STREAM-INF:"), strings.HasPrefix(t, "#EXT-X-SESSION-"):
		case t != "" && !strings.HasPrefix(t, "#"):
			// the URI of a variant not kept
		default:
			out = append(out, lines[i])
		}
	}
	return out
}

// DASH references that may be absolute URLs: BaseURL elements and the
// segment attributes.
var (
	dashBaseURL = regexp.MustCompile(`(<BaseURL[^>]*>)\s*([^<]*?)\s*(</BaseURL>)`)
	dashAttr    = regexp.MustCompile(`\b(media|initialization|sourceURL|index)="(https?://[^"]*)"`)
	mpdOpen     = regexp.MustCompile(`<MPD\b[^>]*>`)
)

// rewriteDASH rewrites the absolute URLs of a DASH manifest fetched from
// base to the gateway, and gives a manifest without a BaseURL of its own
// one pointing at base's mirror, so that its relative references resolve
// against base even after a redirect. URLs are rewritten as text (the
// scheme and host become the mirror's prefix), so XML escapes and segment
// templates ($Number$) pass unchanged.
func rewriteDASH(data []byte, base *url.URL, g *gateway) []byte {
	abs := func(s string) string {
		for _, scheme := range []string{"https", "http"} {
			if rest, ok := strings.CutPrefix(s, scheme+"://"); ok {
				host, path, _ := strings.Cut(rest, "/")
				return g.base + g.prefix(scheme, host) + "/" + path
			}
		}
		return s
	}
	hasBase := dashBaseURL.Match(data)
	out := dashBaseURL.ReplaceAllFunc(data, func(m []byte) []byte {
		p := dashBaseURL.FindSubmatch(m)
		return bytes.Join([][]byte{p[1], []byte(abs(string(p[2]))), p[3]}, nil)
	})
	out = dashAttr.ReplaceAllFunc(out, func(m []byte) []byte {
		p := dashAttr.FindSubmatch(m)
		return []byte(string(p[1]) + `="` + abs(string(p[2])) + `"`)
	})
	if !hasBase || !topLevelBase(out) {
		dir := *base
		dir.RawQuery, dir.Fragment = "", ""
		if i := strings.LastIndex(dir.Path, "/"); i >= 0 {
			dir.Path = dir.Path[:i+1]
		}
		dir.RawPath = ""
		if loc := mpdOpen.FindIndex(out); loc != nil {
			insert := "<BaseURL>" + xmlEscape(g.url(&dir)) + "</BaseURL>"
			out = append(out[:loc[1]:loc[1]], append([]byte(insert), out[loc[1]:]...)...)
		}
	}
	return out
}

// topLevelBase reports a BaseURL that is a child of MPD itself (before the
// first Period).
func topLevelBase(data []byte) bool {
	b := bytes.Index(data, []byte("<BaseURL"))
	p := bytes.Index(data, []byte("<Period"))
	return b >= 0 && (p < 0 || b < p)
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
