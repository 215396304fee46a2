package mediaconv

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRewriteHLS(t *testing.T) {
	t.Parallel()
	g := &gateway{base: "http://127.0.0.1:9"}
	base, _ := url.Parse("https://cdn.example.com/v/master.m3u8?token=1")
	master := "#EXTM3U\r\n#EXT-X-VERSION:6\r\n#EXT-X-INDEPENDENT-SEGMENTS\r\n" +
		`#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="lo",NAME="en",DEFAULT=YES,URI="a/lo.m3u8"` + "\r\n" +
		`#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="hi",NAME="de",DEFAULT=NO,URI="a/hi-de.m3u8"` + "\r\n" +
		`#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="hi",NAME="en",DEFAULT=YES,URI="/a/hi-en.m3u8"` + "\r\n" +
		`#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="s",NAME="en",URI="s.m3u8"` + "\r\n" +
		`#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,AUDIO="lo",CODECS="avc1.4d401e,mp4a.40.2"` + "\r\nlow/index.m3u8\r\n" +
		`#EXT-X-STREAM-INF:BANDWIDTH=5000000,RESOLUTION=1920x1080,AUDIO="hi",CODECS="avc1.640028,mp4a.40.2"` + "\r\nhttps://other.example.net/high/index.m3u8?x=1\r\n" +
		`#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=90000,URI="iframes.m3u8"` + "\r\n"
	want := "#EXTM3U\n#EXT-X-VERSION:6\n#EXT-X-INDEPENDENT-SEGMENTS\n" +
		`#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="hi",NAME="en",DEFAULT=YES,URI="http://127.0.0.1:9/o/https/cdn.example.com/a/hi-en.m3u8"` + "\n" +
		`#EXT-X-STREAM-INF:BANDWIDTH=5000000,RESOLUTION=1920x1080,AUDIO="hi",CODECS="avc1.640028,mp4a.40.2"` + "\n" +
		"http://127.0.0.1:9/o/https/other.example.net/high/index.m3u8?x=1\n"
	if diff := cmp.Diff(want, string(rewriteHLS([]byte(master), base, g))); diff != "" {
		t.Errorf("master (-want +got):\n%s", diff)
	}
	media := "#EXTM3U\n#EXT-X-TARGETDURATION:4\n" +
		`#EXT-X-KEY:METHOD=AES-128,URI="key.bin?k=2",IV=0x1` + "\n" +
		`#EXT-X-MAP:URI="init.mp4"` + "\n" +
		"#EXTINF:4.0,\nseg 1.m4s\n#EXTINF:4.0,\nfile:///etc/passwd\n#EXT-X-ENDLIST\n"
	want = "#EXTM3U\n#EXT-X-TARGETDURATION:4\n" +
		`#EXT-X-KEY:METHOD=AES-128,URI="http://127.0.0.1:9/o/https/cdn.example.com/v/key.bin?k=2",IV=0x1` + "\n" +
		`#EXT-X-MAP:URI="http://127.0.0.1:9/o/https/cdn.example.com/v/init.mp4"` + "\n" +
		"#EXTINF:4.0,\nhttp://127.0.0.1:9/o/https/cdn.example.com/v/seg%201.m4s\n#EXTINF:4.0,\nfile:///etc/passwd\n#EXT-X-ENDLIST\n"
	if diff := cmp.Diff(want, string(rewriteHLS([]byte(media), base, g))); diff != "" {
		t.Errorf("media playlist (-want +got):\n%s", diff)
	}
}

func TestRewriteDASH(t *testing.T) {
	t.Parallel()
	g := &gateway{base: "http://127.0.0.1:9"}
	base, _ := url.Parse("https://cdn.example.com/d/stream/manifest.mpd?sig=a")
	tests := []struct{ name, in, want string }{
		{"no BaseURL: one pointing at the manifest's directory",
			`<?xml version="1.0"?><MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static"><Period><AdaptationSet><Representation id="0"><SegmentTemplate media="chunk-$Number%05d$.m4s" initialization="https://x.example.org/init.mp4?a=1&amp;b=2"/></Representation></AdaptationSet></Period></MPD>`,
			`<?xml version="1.0"?><MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static"><BaseURL>http://127.0.0.1:9/o/https/cdn.example.com/d/stream/</BaseURL><Period><AdaptationSet><Representation id="0"><SegmentTemplate media="chunk-$Number%05d$.m4s" initialization="http://127.0.0.1:9/o/https/x.example.org/init.mp4?a=1&amp;b=2"/></Representation></AdaptationSet></Period></MPD>`},
		{"absolute BaseURLs rewritten, a relative one kept",
			`<MPD><BaseURL> https://media.example.com/v/ </BaseURL><Period><BaseURL>p1/</BaseURL><AdaptationSet><Representation><BaseURL>http://m2.example.com/a.mp4</BaseURL></Representation></AdaptationSet></Period></MPD>`,
			`<MPD><BaseURL>http://127.0.0.1:9/o/https/media.example.com/v/</BaseURL><Period><BaseURL>p1/</BaseURL><AdaptationSet><Representation><BaseURL>http://127.0.0.1:9/o/http/m2.example.com/a.mp4</BaseURL></Representation></AdaptationSet></Period></MPD>`},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, string(rewriteDASH([]byte(tt.in), base, g))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
