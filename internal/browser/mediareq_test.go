package browser

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// mediaPage requests media three ways: a video element, an audio element
// made by script, and a fetch of a manifest (as a player feeding the video
// from a blob does); a picture and a JSON fetch are no media.
const mediaPage = `<html><body><h1>Player</h1><img src="/pic.png">
<video src="/v/clip.mp4#t=1" preload="auto" muted></video>
<script>
var a = document.createElement("audio"); a.preload = "auto"; a.src = "/a/tone.mp3"; document.body.appendChild(a);
fetch("/hls/master.m3u8?token=1").then(function (r) { return r.text(); });
fetch("/api/data.json");
</script></body></html>`

func TestRenderRecordsMediaRequests(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	empty := func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotFound) }
	s := newSite(t, map[string]string{"/": mediaPage}, map[string]http.HandlerFunc{
		"/v/": empty, "/a/": empty, "/hls/": empty, "/api/": empty, "/pic.png": empty,
	})
	for _, record := range []bool{true, false} {
		res, err := p.Render(testCtx(t, 60*time.Second), Request{URL: s.URL + "/", RecordMedia: record})
		if err != nil {
			t.Fatal(err)
		}
		if !record {
			if res.MediaRequests != nil {
				t.Errorf("media recorded without RecordMedia: %v", res.MediaRequests)
			}
			continue
		}
		got := slices.Clone(res.MediaRequests)
		slices.Sort(got)
		want := []string{s.URL + "/a/tone.mp3", s.URL + "/hls/master.m3u8?token=1", s.URL + "/v/clip.mp4"}
		if !slices.Equal(got, want) {
			t.Errorf("MediaRequests %v, want %v", res.MediaRequests, want)
		}
	}
}
