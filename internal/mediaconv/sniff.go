package mediaconv

import (
	"bytes"
	"mime"
	"strings"
)

// Kind is what a response holds, as far as media go.
type Kind int

// Kinds of Sniff.
const (
	NotMedia  Kind = iota
	MediaFile      // one media file: MP4, M4A, WebM, MP3, WAV, Ogg, FLAC, MPEG-TS, ...
	HLS            // an HLS playlist (.m3u8)
	DASH           // a DASH manifest (.mpd)
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case MediaFile:
		return "file"
	case HLS:
		return "hls"
	case DASH:
		return "dash"
	}
	return "none"
}

// Sniff tells whether a response of content type ctype (a Content-Type
// value, parameters allowed) whose body starts with head is media: by the
// type, else by the first bytes (a server may send media as
// application/octet-stream or text/plain).
func Sniff(ctype string, head []byte) Kind {
	mt, _, err := mime.ParseMediaType(ctype)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(ctype))
	}
	switch mt {
	case "application/vnd.apple.mpegurl", "application/x-mpegurl", "audio/mpegurl", "audio/x-mpegurl":
		return HLS
	case "application/dash+xml":
		return DASH
	case "application/ogg", "application/mp4":
		return MediaFile
	}
	if strings.HasPrefix(mt, "video/") || strings.HasPrefix(mt, "audio/") {
		return MediaFile
	}
	return sniffBytes(head)
}

// sniffBytes recognises media by their first bytes.
func sniffBytes(b []byte) Kind {
	text := bytes.TrimLeft(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")), " \t\r\n")
	switch {
	case bytes.HasPrefix(text, []byte("#EXTM3U")):
		return HLS
	case bytes.HasPrefix(text, []byte("<")) && isMPD(text):
		return DASH
	case len(b) >= 12 && isBox(b[4:8]):
		return MediaFile // ISO base media: MP4, M4A, MOV, 3GP
	case bytes.HasPrefix(b, []byte("\x1a\x45\xdf\xa3")), // Matroska, WebM
		bytes.HasPrefix(b, []byte("OggS")),
		bytes.HasPrefix(b, []byte("fLaC")),
		bytes.HasPrefix(b, []byte("ID3")), // MP3 with a tag
		len(b) >= 12 && bytes.HasPrefix(b, []byte("RIFF")) && (string(b[8:12]) == "WAVE" || string(b[8:12]) == "AVI "),
		len(b) >= 12 && bytes.HasPrefix(b, []byte("FORM")) && string(b[8:12]) == "AIFF",
		len(b) >= 189 && b[0] == 0x47 && b[188] == 0x47, // MPEG-TS packets
		isMPEGAudioFrame(b):
		return MediaFile
	}
	return NotMedia
}

// isBox reports an ISO base media box type that starts such files.
func isBox(t []byte) bool {
	switch string(t) {
	case "ftyp", "moov", "mdat", "free", "wide", "skip":
		return true
	}
	return false
}

// isMPD reports an XML document whose root element is MPD.
func isMPD(b []byte) bool {
	if len(b) > 4096 {
		b = b[:4096]
	}
	i := bytes.Index(b, []byte("<MPD"))
	return i >= 0 && i+4 < len(b) && (b[i+4] == ' ' || b[i+4] == '>' || b[i+4] == '\n' || b[i+4] == '\r' || b[i+4] == '\t')
}

// isMPEGAudioFrame reports an MPEG audio (MP3, MP2) or ADTS (AAC) frame
// header at the start: 11 sync bits, a valid version, layer II or III (a
// layer I header is also a UTF-16 byte order mark), bitrate and rate.
func isMPEGAudioFrame(b []byte) bool {
	if len(b) < 4 || b[0] != 0xff || b[1]&0xe0 != 0xe0 {
		return false
	}
	if b[1]&0xf6 == 0xf0 { // ADTS: layer 00
		return b[2]>>2&0x0f < 13
	}
	version, layer := b[1]>>3&3, b[1]>>1&3
	bitrate, rate := b[2]>>4, b[2]>>2&3
	return version != 1 && (layer == 1 || layer == 2) && bitrate != 0 && bitrate != 15 && rate != 3
}
