package mediaconv

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"time"

	"github.com/firegate/firegate/internal/logsafe"
)

// maxExtractSeconds bounds one yt-dlp run (and its CPU time).
const maxExtractSeconds = 60

// ExtractorOptions configures an Extractor.
type ExtractorOptions struct {
	// YtdlpPath is the yt-dlp binary; empty looks for yt-dlp on PATH.
	YtdlpPath string
	// Proxy is the http://host:port of a proxy that applies the network
	// policy (netguard.Proxy): yt-dlp's every request goes through it.
	Proxy string
	// MemoryBytes is yt-dlp's address space; default 2 GiB.
	MemoryBytes int64
}

// Extractor finds the media of pages of video platforms, which do not name
// them in their HTML, with yt-dlp: it only asks yt-dlp for the media's URL,
// which the converter then fetches through its gateway like any other.
type Extractor struct {
	path  string
	proxy string
	mem   int64
	log   *slog.Logger
}

// NewExtractor finds yt-dlp; an error wrapping ErrNotInstalled says it is
// missing.
func NewExtractor(opts ExtractorOptions, log *slog.Logger) (*Extractor, error) {
	name := opts.YtdlpPath
	if name == "" {
		name = "yt-dlp"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrNotInstalled, name, err)
	}
	if opts.Proxy == "" {
		return nil, errors.New("mediaconv: yt-dlp needs a guarded proxy")
	}
	if opts.MemoryBytes <= 0 {
		opts.MemoryBytes = DefaultMemoryBytes
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Extractor{path: p, proxy: opts.Proxy, mem: opts.MemoryBytes, log: log}, nil
}

// Extract returns the URL of the media of the page at pageURL: a file with
// sound only when audioOnly (else with video and sound where the platform
// has one), as yt-dlp chooses it. ErrNotMedia when yt-dlp finds none.
func (x *Extractor) Extract(ctx context.Context, pageURL string, audioOnly bool) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, maxExtractSeconds*time.Second)
	defer cancel()
	home, err := os.MkdirTemp("", "ytdlp-*")
	if err != nil {
		return nil, fmt.Errorf("mediaconv: yt-dlp: %w", err)
	}
	defer os.RemoveAll(home)
	format := "best[ext=mp4]/best"
	if audioOnly {
		format = "bestaudio/best"
	}
	env := []string{"HOME=" + home, "http_proxy=" + x.proxy, "https_proxy=" + x.proxy, "no_proxy="}
	lim := limits{memoryBytes: x.mem, cpuSeconds: maxExtractSeconds, fileBytes: 1 << 20}
	out, err := run(ctx, lim, env, x.path, "--ignore-config", "--no-cache-dir", "--no-playlist", "--no-warnings",
		"--proxy", x.proxy, "--socket-timeout", "30", "-f", format, "--get-url", "--", pageURL)
	if err != nil {
		var le *LimitError
		if errors.As(err, &le) || ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: yt-dlp on %s: %w", ErrNotMedia, logsafe.URL(pageURL), err)
	}
	var urls []string
	sc := bufio.NewScanner(bytes.NewReader(out.stdout))
	for sc.Scan() && len(urls) < 2 {
		if u, err := url.Parse(string(bytes.TrimSpace(sc.Bytes()))); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
			urls = append(urls, u.String())
		}
	}
	if len(urls) == 0 {
		return nil, fmt.Errorf("%w: yt-dlp found no media on %s", ErrNotMedia, logsafe.URL(pageURL))
	}
	return urls, nil
}
