package mediaconv

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// probe is what ffprobe says of a media.
type probe struct {
	Streams []stream `json:"streams"`
	Format  struct {
		FormatName string `json:"format_name"`
		Duration   string `json:"duration"`
	} `json:"format"`
}

// stream is one stream of a probe.
type stream struct {
	Index       int    `json:"index"`
	CodecType   string `json:"codec_type"`
	CodecName   string `json:"codec_name"`
	Width       int    `json:"width"`
	Height      int    `json:"height"`
	BitRate     string `json:"bit_rate"`
	Disposition struct {
		Default     int `json:"default"`
		AttachedPic int `json:"attached_pic"`
	} `json:"disposition"`
	Tags map[string]string `json:"tags"`
}

// parseProbe reads ffprobe's JSON (-print_format json -show_format
// -show_streams).
func parseProbe(b []byte) (*probe, error) {
	var p probe
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("mediaconv: ffprobe output: %w", err)
	}
	return &p, nil
}

// duration is the media's duration, 0 when unknown (a live stream).
func (p *probe) duration() time.Duration {
	d, err := strconv.ParseFloat(p.Format.Duration, 64)
	if err != nil || d <= 0 || math.IsInf(d, 0) || math.IsNaN(d) || d > 1e9 {
		return 0
	}
	return time.Duration(d * float64(time.Second))
}

// bitrate is a stream's bit rate, or the variant's for HLS and DASH.
func (s *stream) bitrate() int64 {
	if n, err := strconv.ParseInt(s.BitRate, 10, 64); err == nil {
		return n
	}
	n, _ := strconv.ParseInt(s.Tags["variant_bitrate"], 10, 64)
	return n
}

// best returns the stream of type kind ("video" or "audio") to convert:
// for video the largest picture (a cover image attached to an audio file is
// no video), then the highest bit rate; for audio the default one, then the
// highest bit rate; nil when there is none.
func (p *probe) best(kind string) *stream {
	var best *stream
	for i := range p.Streams {
		s := &p.Streams[i]
		if s.CodecType != kind || s.Disposition.AttachedPic == 1 {
			continue
		}
		if best == nil || better(kind, s, best) {
			best = s
		}
	}
	return best
}

func better(kind string, s, than *stream) bool {
	if kind == "video" {
		if a, b := s.Width*s.Height, than.Width*than.Height; a != b {
			return a > b
		}
	} else if s.Disposition.Default != than.Disposition.Default {
		return s.Disposition.Default > than.Disposition.Default
	}
	return s.bitrate() > than.bitrate()
}

// MP4 can hold these codecs as they are; others are encoded again (H.264,
// AAC).
var (
	mp4Video = map[string]bool{"h264": true, "hevc": true, "av1": true, "vp9": true, "mpeg4": true}
	mp4Audio = map[string]bool{"aac": true, "mp3": true, "ac3": true, "eac3": true, "alac": true, "opus": true}
)
