// Package mediaconv turns the media at a URL (a file, an HLS playlist or a
// DASH manifest) into an MP3 of its audio or an MP4 of its video with
// ffmpeg, run as a child process under resource limits whose only way to
// the network is a loopback gateway that fetches through the caller's
// client. It also tells media responses apart (Sniff) and finds the main
// media of an HTML page (Find).
package mediaconv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/firegate/firegate/internal/logsafe"
)

// Defaults of Options.
const (
	DefaultMaxSeconds  = 3600
	DefaultMaxBytes    = 512 << 20
	DefaultMemoryBytes = 2 << 30
)

// threads is how many threads ffmpeg decodes and encodes with; its CPU time
// limit is the time left times this.
const threads = 2

// fileSlack is how much more than MaxBytes ffmpeg may write before the
// kernel stops it: -fs stops it cleanly just past MaxBytes, and moving the
// MP4 index to the front rewrites what was written.
const fileSlack = 64 << 20

// Content types of the outputs.
const (
	TypeMP3 = "audio/mpeg"
	TypeMP4 = "video/mp4"
)

// Options configures a Converter. Zero fields take the defaults.
type Options struct {
	// FFmpegPath is the ffmpeg binary; empty looks for ffmpeg on PATH.
	FFmpegPath string
	// FFprobePath is the ffprobe binary; empty looks for ffprobe beside
	// ffmpeg, then on PATH.
	FFprobePath string
	// MaxSeconds bounds the duration of the media converted
	// (MEDIA_MAX_SECONDS); default 3600.
	MaxSeconds int
	// MaxBytes bounds each output file (MEDIA_MAX_BYTES); default 512 MiB.
	// The media downloaded for one conversion are bounded by four times
	// this and 64 MiB.
	MaxBytes int64
	// MemoryBytes is the address space of each ffmpeg and ffprobe run;
	// default 2 GiB.
	MemoryBytes int64
	// MaxConcurrent bounds the conversions running at once (more wait);
	// default the number of CPUs.
	MaxConcurrent int
}

// Converter runs conversions. It is safe for concurrent use.
type Converter struct {
	opts    Options
	ffmpeg  string
	ffprobe string
	slots   chan struct{}
	log     *slog.Logger
}

// New finds ffmpeg and ffprobe; an error wrapping ErrNotInstalled says
// which is missing.
func New(opts Options, log *slog.Logger) (*Converter, error) {
	if opts.MaxSeconds <= 0 {
		opts.MaxSeconds = DefaultMaxSeconds
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.MemoryBytes <= 0 {
		opts.MemoryBytes = DefaultMemoryBytes
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = runtime.NumCPU()
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	name := opts.FFmpegPath
	if name == "" {
		name = "ffmpeg"
	}
	ffmpeg, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrNotInstalled, name, err)
	}
	ffprobe := opts.FFprobePath
	if ffprobe == "" {
		ffprobe = filepath.Join(filepath.Dir(ffmpeg), "ffprobe")
		if _, err := exec.LookPath(ffprobe); err != nil {
			ffprobe = "ffprobe"
		}
	}
	if ffprobe, err = exec.LookPath(ffprobe); err != nil {
		return nil, fmt.Errorf("%w: ffprobe: %w", ErrNotInstalled, err)
	}
	return &Converter{opts: opts, ffmpeg: ffmpeg, ffprobe: ffprobe, slots: make(chan struct{}, opts.MaxConcurrent), log: log}, nil
}

// MaxSeconds is the longest media converted.
func (c *Converter) MaxSeconds() int { return c.opts.MaxSeconds }

// Request is one conversion.
type Request struct {
	// URL is the media: a file, an HLS playlist or a DASH manifest.
	URL string
	// Open fetches for ffmpeg (see Opener).
	Open Opener
	// Audio asks for an MP3 of the audio, Video for an MP4 of the video
	// (with its audio).
	Audio, Video bool
	// Dir is the directory the outputs are written to; the caller
	// removes them.
	Dir string
}

// File is one output.
type File struct {
	Path        string
	ContentType string // TypeMP3 or TypeMP4
	Size        int64
	Duration    time.Duration
}

// Result holds the outputs asked for. Audio or Video is nil when the media
// has no track of its kind (a silent video, a sound file asked for video);
// when neither could be made Convert fails with ErrNoTrack instead.
type Result struct {
	Audio, Video *File
	// Duration is the source's, as probed (0 when it did not say).
	Duration time.Duration
}

// Convert probes the media at req.URL and writes the outputs asked for. It
// holds one of the converter's slots while it runs and stops at ctx's
// deadline. Errors: ErrNotMedia (nothing ffmpeg can read there), ErrNoTrack,
// a *LimitError (ErrTooLong, ErrTooLarge), or ctx's error.
func (c *Converter) Convert(ctx context.Context, req Request) (*Result, error) {
	u, err := url.Parse(req.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: %q is not an absolute http(s) URL", ErrNotMedia, logsafe.URL(req.URL))
	}
	if !req.Audio && !req.Video {
		return &Result{}, nil
	}
	select {
	case c.slots <- struct{}{}:
		defer func() { <-c.slots }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	g, err := startGateway(ctx, req.Open, u, c.downloadBudget(), c.log)
	if err != nil {
		return nil, err
	}
	defer g.close()
	src := g.url(u)

	p, err := c.probe(ctx, g, src)
	if err != nil {
		return nil, err
	}
	res := &Result{Duration: p.duration()}
	if max := time.Duration(c.opts.MaxSeconds) * time.Second; res.Duration > max {
		return nil, c.tooLong(res.Duration)
	}
	audio, video := p.best("audio"), p.best("video")
	args := []string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-threads", strconv.Itoa(threads)}
	args = append(args, g.ffmpegArgs()...)
	if p.Format.FormatName == "hls" {
		// A live playlist that stops growing ends after three reloads
		// instead of a thousand.
		args = append(args, "-m3u8_hold_counters", "3")
	}
	args = append(args, "-i", src)
	var outs []*File
	if req.Audio && audio != nil {
		f := &File{Path: filepath.Join(req.Dir, "audio.mp3"), ContentType: TypeMP3}
		args = append(args, c.audioArgs(audio, f.Path)...)
		res.Audio = f
		outs = append(outs, f)
	}
	if req.Video && video != nil {
		f := &File{Path: filepath.Join(req.Dir, "video.mp4"), ContentType: TypeMP4}
		args = append(args, c.videoArgs(video, audio, f.Path)...)
		res.Video = f
		outs = append(outs, f)
	}
	if len(outs) == 0 {
		what := "an audio track"
		if req.Video {
			what = "a video track"
		}
		if req.Audio && req.Video {
			what = "an audio or video track"
		}
		return nil, fmt.Errorf("%w: the media has no %s", ErrNoTrack, what)
	}
	lim := limits{memoryBytes: c.opts.MemoryBytes, cpuSeconds: c.opts.MaxSeconds * threads * 4, fileBytes: c.opts.MaxBytes + fileSlack}
	if _, err := run(ctx, lim, g.env(), c.ffmpeg, args...); err != nil {
		if g.exceeded.Load() {
			return nil, c.downloadTooLarge()
		}
		var le *LimitError
		if errors.As(err, &le) || ctx.Err() != nil {
			return nil, err
		}
		if oerr := g.err(); oerr != nil {
			return nil, fmt.Errorf("%w: %w (%w)", ErrNotMedia, oerr, err)
		}
		return nil, fmt.Errorf("%w: %w", ErrNotMedia, err)
	}
	for _, f := range outs {
		if err := c.check(ctx, f); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// downloadBudget bounds the bytes fetched for one conversion: four times
// MaxBytes (a video's audio is much smaller than the video) and 64 MiB.
func (c *Converter) downloadBudget() int64 { return 4*c.opts.MaxBytes + 64<<20 }

func (c *Converter) downloadTooLarge() error {
	return &LimitError{Kind: ErrTooLarge, Msg: fmt.Sprintf("The media to download are larger than %d bytes (four times MEDIA_MAX_BYTES and 64 MiB).", c.downloadBudget())}
}

// probe runs ffprobe on the media through the gateway.
func (c *Converter) probe(ctx context.Context, g *gateway, src string) (*probe, error) {
	args := append([]string{"-v", "error", "-hide_banner"}, g.ffmpegArgs()...)
	args = append(args, "-print_format", "json", "-show_format", "-show_streams", "-i", src)
	lim := limits{memoryBytes: c.opts.MemoryBytes, cpuSeconds: 60, fileBytes: 512}
	out, err := run(ctx, lim, g.env(), c.ffprobe, args...)
	if err != nil {
		if g.exceeded.Load() {
			return nil, c.downloadTooLarge()
		}
		var le *LimitError
		if errors.As(err, &le) || ctx.Err() != nil {
			return nil, err
		}
		if oerr := g.err(); oerr != nil {
			return nil, fmt.Errorf("%w: %w", ErrNotMedia, oerr)
		}
		return nil, fmt.Errorf("%w: %w", ErrNotMedia, err)
	}
	p, err := parseProbe(out.stdout)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotMedia, err)
	}
	if p.best("audio") == nil && p.best("video") == nil {
		return nil, fmt.Errorf("%w: no audio or video stream", ErrNotMedia)
	}
	return p, nil
}

// outputArgs are the options every output gets: its duration and size
// bounds.
func (c *Converter) outputArgs() []string {
	return []string{"-t", strconv.Itoa(c.opts.MaxSeconds + 1), "-fs", strconv.FormatInt(c.opts.MaxBytes+1, 10), "-threads", strconv.Itoa(threads)}
}

// audioArgs writes the audio stream a as an MP3 to path: copied when it is
// MP3 already, else encoded (LAME, VBR quality 4, about 165 kbit/s).
func (c *Converter) audioArgs(a *stream, path string) []string {
	args := []string{"-map", "0:" + strconv.Itoa(a.Index), "-vn", "-sn", "-dn", "-map_metadata", "-1"}
	if a.CodecName == "mp3" {
		args = append(args, "-c:a", "copy")
	} else {
		args = append(args, "-c:a", "libmp3lame", "-q:a", "4")
	}
	args = append(args, c.outputArgs()...)
	return append(args, "-f", "mp3", path)
}

// videoArgs writes the video stream v and the audio stream a (nil: none)
// as an MP4 to path, copying what MP4 can hold as it is and encoding the
// rest (H.264, AAC), with the index at the front for players that stream.
func (c *Converter) videoArgs(v, a *stream, path string) []string {
	args := []string{"-map", "0:" + strconv.Itoa(v.Index)}
	if a != nil {
		args = append(args, "-map", "0:"+strconv.Itoa(a.Index))
	}
	args = append(args, "-sn", "-dn")
	if mp4Video[v.CodecName] {
		args = append(args, "-c:v", "copy")
		if v.CodecName == "hevc" {
			args = append(args, "-tag:v", "hvc1")
		}
	} else {
		args = append(args, "-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-pix_fmt", "yuv420p")
	}
	if a != nil {
		if mp4Audio[a.CodecName] {
			args = append(args, "-c:a", "copy")
		} else {
			args = append(args, "-c:a", "aac", "-b:a", "160k")
		}
	}
	args = append(args, c.outputArgs()...)
	return append(args, "-movflags", "+faststart", "-f", "mp4", path)
}

// check measures an output: its size against MaxBytes and its duration
// (probed from the file) against MaxSeconds.
func (c *Converter) check(ctx context.Context, f *File) error {
	fi, err := os.Stat(f.Path)
	if err != nil {
		return fmt.Errorf("%w: ffmpeg wrote no output: %w", ErrNotMedia, err)
	}
	f.Size = fi.Size()
	if f.Size > c.opts.MaxBytes {
		return &LimitError{Kind: ErrTooLarge, Msg: fmt.Sprintf("The converted media would be larger than MEDIA_MAX_BYTES (%d bytes).", c.opts.MaxBytes)}
	}
	lim := limits{memoryBytes: c.opts.MemoryBytes, cpuSeconds: 60, fileBytes: 512}
	out, err := run(ctx, lim, nil, c.ffprobe, "-v", "error", "-hide_banner", "-protocol_whitelist", "file",
		"-print_format", "json", "-show_format", "-i", f.Path)
	if err != nil {
		return fmt.Errorf("mediaconv: probe output: %w", err)
	}
	p, err := parseProbe(out.stdout)
	if err != nil {
		return err
	}
	f.Duration = p.duration()
	if f.Duration > time.Duration(c.opts.MaxSeconds)*time.Second {
		return c.tooLong(f.Duration)
	}
	return nil
}

func (c *Converter) tooLong(d time.Duration) error {
	return &LimitError{Kind: ErrTooLong, Msg: fmt.Sprintf("The media lasts %d s, longer than MEDIA_MAX_SECONDS (%d s).", int(d.Seconds()), c.opts.MaxSeconds)}
}
