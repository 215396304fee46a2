package mediaconv

import "errors"

// Errors of the converter. Limit errors carry a message that names the
// setting (MEDIA_MAX_SECONDS, MEDIA_MAX_BYTES) so the API can show it.
var (
	// ErrNotInstalled: ffmpeg or ffprobe was not found.
	ErrNotInstalled = errors.New("mediaconv: ffmpeg not installed")
	// ErrNotMedia: the URL did not lead to media ffmpeg can read (not a
	// media file, an unreachable or refused URL, a broken playlist).
	ErrNotMedia = errors.New("mediaconv: not readable media")
	// ErrNoTrack: the media has no track of the kind asked for (no audio
	// for an MP3, no video for an MP4).
	ErrNoTrack = errors.New("mediaconv: no such track")
	// ErrTooLong: the media lasts longer than MaxSeconds.
	ErrTooLong = errors.New("mediaconv: media too long")
	// ErrTooLarge: an output would exceed MaxBytes, or the download its
	// budget, or ffmpeg its memory or CPU limit.
	ErrTooLarge = errors.New("mediaconv: media too large")
)

// LimitError is a limit that stopped a conversion; it matches ErrTooLong
// or ErrTooLarge with errors.Is and its text is written for the API user.
type LimitError struct {
	Kind error  // ErrTooLong or ErrTooLarge
	Msg  string // e.g. "The media lasts 4000 s, longer than MEDIA_MAX_SECONDS (3600 s)."
}

func (e *LimitError) Error() string { return e.Msg }

// Unwrap returns the kind.
func (e *LimitError) Unwrap() error { return e.Kind }
