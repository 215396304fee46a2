package browser

import (
	"net/url"
	"path"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/network"
)

// maxMediaRequests bounds the media URLs one render records.
const maxMediaRequests = 32

// mediaExts are the path extensions of media files and streaming
// manifests a script may fetch (segments are left out: a manifest or file
// is what a converter can use).
var mediaExts = map[string]bool{ //nolint:gochecknoglobals // a fixed table
	".m3u8": true, ".mpd": true, ".mp4": true, ".m4v": true, ".m4a": true, ".mov": true, ".webm": true,
	".mp3": true, ".aac": true, ".wav": true, ".ogg": true, ".oga": true, ".ogv": true, ".opus": true, ".flac": true,
}

// mediaRequests records the media a page requests (Request.RecordMedia):
// requests of the media type, and fetches of URLs whose path names a
// media file or manifest (a player that sets its source by script, or
// feeds the video element from a blob), in the order made, each once.
type mediaRequests struct {
	mu   sync.Mutex
	urls []string
	seen map[string]bool
}

// note records a paused request when it is media.
func (m *mediaRequests) note(t network.ResourceType, rawURL string) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return
	}
	if t != network.ResourceTypeMedia && !mediaExts[strings.ToLower(path.Ext(u.Path))] {
		return
	}
	u.Fragment = ""
	s := u.String()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen[s] || len(m.urls) >= maxMediaRequests {
		return
	}
	if m.seen == nil {
		m.seen = map[string]bool{}
	}
	m.seen[s] = true
	m.urls = append(m.urls, s)
}

// list returns the recorded URLs.
func (m *mediaRequests) list() []string {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.urls...)
}
