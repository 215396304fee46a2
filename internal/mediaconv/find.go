package mediaconv

import (
	"encoding/json"
	"mime"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Candidate is a media URL found on a page.
type Candidate struct {
	URL string
	// Kind is "video" or "audio" when the page says which, else "".
	Kind string
	// From names where it was found: "video", "audio" (the elements or
	// their <source> children), "og:video", "og:audio",
	// "twitter:player:stream", "json-ld", "request" (a media request
	// the page made in the browser), or "yt-dlp".
	From string
	// Headers are request headers the URL needs (from yt-dlp), sent with
	// the request's own.
	Headers map[string]string `json:",omitempty"`
}

// maxJSONLD bounds one JSON-LD script read for media.
const maxJSONLD = 1 << 20

// maxCandidates bounds the candidates of one page.
const maxCandidates = 32

// Find returns the media of a page, its main media first: <video>
// elements, the largest (by their width and height attributes) first, each
// with its src and then its <source> children in order; <audio> elements
// likewise; og:video and og:audio metadata (not those typed as HTML
// players); twitter:player:stream; JSON-LD VideoObject and AudioObject
// contentUrl. URLs are resolved against base (nil: only absolute ones
// count); only http(s) URLs are kept, each once.
func Find(root *html.Node, base *url.URL) []Candidate {
	f := &finder{base: base, seen: map[string]bool{}}
	var videos, audios []*html.Node
	var metas []*html.Node
	var scripts []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Video:
				videos = append(videos, n)
			case atom.Audio:
				audios = append(audios, n)
			case atom.Meta:
				metas = append(metas, n)
			case atom.Script:
				if t, _, _ := mime.ParseMediaType(attr(n, "type")); t == "application/ld+json" {
					scripts = append(scripts, n)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	slices.SortStableFunc(videos, func(a, b *html.Node) int { return area(b) - area(a) })
	for _, v := range videos {
		f.element(v, "video")
	}
	for _, a := range audios {
		f.element(a, "audio")
	}
	f.metadata(metas)
	for _, s := range scripts {
		if s.FirstChild != nil && s.FirstChild.Type == html.TextNode && len(s.FirstChild.Data) <= maxJSONLD {
			var v any
			if json.Unmarshal([]byte(s.FirstChild.Data), &v) == nil {
				f.jsonLD(v, 0)
			}
		}
	}
	return f.out
}

type finder struct {
	base *url.URL
	seen map[string]bool
	out  []Candidate
}

// add keeps ref, resolved, when it is a new http(s) URL.
func (f *finder) add(ref, kind, from string) {
	ref = strings.TrimSpace(ref)
	if ref == "" || len(f.out) >= maxCandidates {
		return
	}
	u, err := url.Parse(ref)
	if err != nil {
		return
	}
	if f.base != nil {
		u = f.base.ResolveReference(u)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return
	}
	u.Fragment = ""
	s := u.String()
	if f.seen[s] {
		return
	}
	f.seen[s] = true
	f.out = append(f.out, Candidate{URL: s, Kind: kind, From: from})
}

// element adds a <video> or <audio> element's src and its sources.
func (f *finder) element(n *html.Node, kind string) {
	f.add(attr(n, "src"), kind, kind)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.DataAtom == atom.Source && playableType(attr(c, "type")) {
			f.add(attr(c, "src"), kind, kind)
		}
	}
}

// playableType reports a <source> type ffmpeg may read: none given, or an
// audio, video or streaming type.
func playableType(t string) bool {
	if t == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(t)
	if err != nil {
		return false
	}
	return strings.HasPrefix(mt, "video/") || strings.HasPrefix(mt, "audio/") || Sniff(mt, nil) != NotMedia
}

// metadata adds og:video, og:audio and twitter:player:stream URLs in page
// order, skipping those an og:*:type after them says are HTML or Flash
// players.
func (f *finder) metadata(metas []*html.Node) {
	var es []metaEntry
	for _, m := range metas {
		key := strings.ToLower(strings.TrimSpace(attr(m, "property")))
		if key == "" {
			key = strings.ToLower(strings.TrimSpace(attr(m, "name")))
		}
		es = append(es, metaEntry{key, attr(m, "content")})
	}
	for i, e := range es {
		var kind string
		switch e.key {
		case "og:video", "og:video:url", "og:video:secure_url":
			kind = "video"
		case "og:audio", "og:audio:url", "og:audio:secure_url":
			kind = "audio"
		case "twitter:player:stream":
			f.add(e.val, "", e.key)
			continue
		default:
			continue
		}
		if player(es, i, "og:"+kind+":type") {
			continue
		}
		f.add(e.val, kind, "og:"+kind)
	}
}

// metaEntry is a <meta> element's property (or name) and content.
type metaEntry struct{ key, val string }

// player reports whether the first typeKey entry after i, before the next
// media URL of the same structured property, names a player page.
func player(es []metaEntry, i int, typeKey string) bool {
	prefix := strings.TrimSuffix(typeKey, ":type")
	for _, e := range es[i+1:] {
		if e.key == typeKey {
			t, _, _ := mime.ParseMediaType(e.val)
			return t == "text/html" || t == "application/x-shockwave-flash"
		}
		if e.key == prefix {
			return false
		}
	}
	return false
}

// jsonLD adds the contentUrl of VideoObject and AudioObject nodes found in
// a JSON-LD value, at most 32 levels deep.
func (f *finder) jsonLD(v any, depth int) {
	if depth > 32 {
		return
	}
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			f.jsonLD(e, depth+1)
		}
	case map[string]any:
		if kind := ldKind(v["@type"]); kind != "" {
			switch u := v["contentUrl"].(type) {
			case string:
				f.add(u, kind, "json-ld")
			case []any:
				for _, e := range u {
					if s, ok := e.(string); ok {
						f.add(s, kind, "json-ld")
					}
				}
			}
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys) // a stable order: maps have none
		for _, k := range keys {
			f.jsonLD(v[k], depth+1)
		}
	}
}

// ldKind is "video" or "audio" for a JSON-LD @type naming a VideoObject
// or AudioObject (as a string or in a list), else "".
func ldKind(t any) string {
	var types []string
	switch t := t.(type) {
	case string:
		types = []string{t}
	case []any:
		for _, e := range t {
			if s, ok := e.(string); ok {
				types = append(types, s)
			}
		}
	}
	for _, s := range types {
		switch strings.TrimPrefix(strings.TrimPrefix(s, "https://schema.org/"), "http://schema.org/") {
		case "VideoObject":
			return "video"
		case "AudioObject":
			return "audio"
		}
	}
	return ""
}

// KindOfURL is "audio" or "video" when a URL's path names a file of that
// kind by its extension, else "" (manifests, unknown).
func KindOfURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	switch strings.ToLower(path.Ext(u.Path)) {
	case ".mp3", ".m4a", ".aac", ".wav", ".oga", ".opus", ".flac":
		return "audio"
	case ".mp4", ".m4v", ".mov", ".webm", ".ogv":
		return "video"
	}
	return ""
}

// area is an element's declared width times height (0 when not given).
func area(n *html.Node) int {
	w, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(attr(n, "width")), "px"))
	h, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(attr(n, "height")), "px"))
	if w <= 0 || h <= 0 || w > 1<<15 || h > 1<<15 {
		return 0
	}
	return w * h
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

// Order returns the candidates to try, best first: for a video (video
// true) those known to be video, then those of unknown kind, then audio
// ones (which fail for lack of a video track); for audio alone, audio
// ones, then unknown, then video ones (their audio track). Within a kind
// the page's order is kept.
func Order(cands []Candidate, video bool) []Candidate {
	rank := func(c Candidate) int {
		switch {
		case c.Kind == "":
			return 1
		case (c.Kind == "video") == video:
			return 0
		}
		return 2
	}
	out := slices.Clone(cands)
	slices.SortStableFunc(out, func(a, b Candidate) int { return rank(a) - rank(b) })
	return out
}
