package mediaconv

import (
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
)

func TestFind(t *testing.T) {
	t.Parallel()
	base, _ := url.Parse("https://example.com/talks/one")
	tests := []struct {
		name string
		page string
		want []Candidate
	}{
		{"largest video first, then its sources", `<video src="/small.mp4" width="64" height="36"></video>
			<video width="1280" height="720"><source src="big.webm" type="video/webm"><source src="big.mp4" type="video/mp4; codecs=avc1"><source src="x.swf" type="application/x-shockwave-flash"></video>`,
			[]Candidate{{URL: "https://example.com/talks/big.webm", Kind: "video", From: "video"}, {URL: "https://example.com/talks/big.mp4", Kind: "video", From: "video"}, {URL: "https://example.com/small.mp4", Kind: "video", From: "video"}}},
		{"audio element and stream source", `<audio src="ep1.mp3"></audio><audio><source src="live.m3u8" type="application/x-mpegURL"></audio>`,
			[]Candidate{{URL: "https://example.com/talks/ep1.mp3", Kind: "audio", From: "audio"}, {URL: "https://example.com/talks/live.m3u8", Kind: "audio", From: "audio"}}},
		{"open graph, player pages skipped", `<meta property="og:video" content="https://example.com/embed/1"><meta property="og:video:type" content="text/html">
			<meta property="og:video" content="https://cdn.example.com/1.mp4"><meta property="og:video:type" content="video/mp4">
			<meta property="og:audio:secure_url" content="https://cdn.example.com/1.mp3">`,
			[]Candidate{{URL: "https://cdn.example.com/1.mp4", Kind: "video", From: "og:video"}, {URL: "https://cdn.example.com/1.mp3", Kind: "audio", From: "og:audio"}}},
		{"twitter stream", `<meta name="twitter:player" content="https://example.com/embed"><meta name="twitter:player:stream" content="/s.mp4">`,
			[]Candidate{{URL: "https://example.com/s.mp4", Kind: "", From: "twitter:player:stream"}}},
		{"json-ld in a graph and nested", `<script type="application/ld+json">{"@graph":[{"@type":"WebPage"},{"@type":"Article","video":{"@type":"VideoObject","contentUrl":"/v.mp4","embedUrl":"/embed"}}]}</script>
			<script type="application/ld+json">[{"@type":["AudioObject"],"contentUrl":["a.ogg"]}]</script>`,
			[]Candidate{{URL: "https://example.com/v.mp4", Kind: "video", From: "json-ld"}, {URL: "https://example.com/talks/a.ogg", Kind: "audio", From: "json-ld"}}},
		{"elements before metadata, each URL once", `<meta property="og:video" content="/v.mp4"><video src="/v.mp4"></video>`,
			[]Candidate{{URL: "https://example.com/v.mp4", Kind: "video", From: "video"}}},
		{"no media", `<img src="a.png"><a href="v.mp4">video</a><video src="blob:https://example.com/1"></video><video src="data:video/mp4;base64,AAAA"></video>`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root, err := html.Parse(strings.NewReader("<html><head></head><body>" + tt.page + "</body></html>"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, Find(root, base)); diff != "" {
				t.Errorf("Find (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOrder(t *testing.T) {
	t.Parallel()
	cands := []Candidate{{URL: "a", Kind: "audio"}, {URL: "u"}, {URL: "v", Kind: "video"}, {URL: "a2", Kind: "audio"}}
	urls := func(cs []Candidate) string {
		var s []string
		for _, c := range cs {
			s = append(s, c.URL)
		}
		return strings.Join(s, " ")
	}
	if got := urls(Order(cands, true)); got != "v u a a2" {
		t.Errorf("video order %q", got)
	}
	if got := urls(Order(cands, false)); got != "a a2 u v" {
		t.Errorf("audio order %q", got)
	}
}

func TestKindOfURL(t *testing.T) {
	t.Parallel()
	for u, want := range map[string]string{
		"https://x/a.MP3?x=1": "audio", "https://x/v.webm": "video", "https://x/live.m3u8": "", "https://x/page": "", "%zz": "",
	} {
		if got := KindOfURL(u); got != want {
			t.Errorf("KindOfURL(%q) = %q, want %q", u, got, want)
		}
	}
}

func TestSniff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ctype string
		head  string
		want  Kind
	}{
		{"video/mp4", "", MediaFile},
		{"audio/mpeg; charset=binary", "", MediaFile},
		{"application/vnd.apple.mpegurl", "", HLS},
		{"audio/x-mpegurl", "", HLS},
		{"application/dash+xml", "", DASH},
		{"text/plain", "\ufeff#EXTM3U\n#EXT-X-VERSION:3\n", HLS},
		{"application/xml", `<?xml version="1.0"?>` + "\n" + `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static">`, DASH},
		{"application/octet-stream", "\x00\x00\x00\x20ftypisom\x00\x00\x02\x00", MediaFile},
		{"application/octet-stream", "\x00\x00\x00\x1cftypM4A \x00\x00\x00\x00", MediaFile},
		{"", "\x1a\x45\xdf\xa3\x9f\x42\x86\x81", MediaFile},
		{"", "ID3\x04\x00\x00\x00\x00\x00\x00", MediaFile},
		{"", "\xff\xfb\x90\x64\x00\x00\x00\x00", MediaFile}, // MP3 frame, no tag
		{"", "RIFF\x24\x00\x00\x00WAVEfmt ", MediaFile},
		{"", "OggS\x00\x02\x00\x00", MediaFile},
		{"text/html", "<!doctype html><html><body><video src=x.mp4></video>", NotMedia},
		{"application/xml", `<?xml version="1.0"?><MPDX>`, NotMedia},
		{"text/plain", "\xff\xfe text in UTF-16", NotMedia},
		{"application/pdf", "%PDF-1.7", NotMedia},
	}
	for _, tt := range tests {
		if got := Sniff(tt.ctype, []byte(tt.head)); got != tt.want {
			t.Errorf("Sniff(%q, %q) = %v, want %v", tt.ctype, tt.head, got, tt.want)
		}
	}
}
