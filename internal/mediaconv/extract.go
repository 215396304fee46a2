package mediaconv

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"strings"
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

// Media is a media URL yt-dlp found, with the request headers it says the
// URL needs (User-Agent, Referer, Origin, Cookie; others are left out).
type Media struct {
	URL     string
	Headers map[string]string
}

// mediaHeaders are the headers of yt-dlp's http_headers passed on.
var mediaHeaders = []string{"User-Agent", "Referer", "Origin", "Cookie"} //nolint:gochecknoglobals // a fixed list

// Extract returns the media of the page at pageURL: a file with sound only
// when audioOnly (else with video and sound where the platform has one),
// as yt-dlp chooses it. ErrNotMedia when yt-dlp finds none. via, when set,
// is the http://host:port of the guarded proxy's route yt-dlp goes through
// this time (the route to the outbound proxy the page came through); ""
// is ExtractorOptions.Proxy.
func (x *Extractor) Extract(ctx context.Context, pageURL string, audioOnly bool, via string) ([]Media, error) {
	proxy := cmp.Or(via, x.proxy)
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
	env := []string{"HOME=" + home, "http_proxy=" + proxy, "https_proxy=" + proxy, "no_proxy="}
	lim := limits{memoryBytes: x.mem, cpuSeconds: maxExtractSeconds, fileBytes: 1 << 20}
	out, err := run(ctx, lim, env, x.path, "--ignore-config", "--no-cache-dir", "--no-playlist", "--no-warnings",
		"--proxy", proxy, "--socket-timeout", "30", "-f", format,
		"--print", "%(url)s", "--print", "%(http_headers)j", "--", pageURL)
	if err != nil {
		var le *LimitError
		if errors.As(err, &le) || ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: yt-dlp on %s: %w", ErrNotMedia, logsafe.URL(pageURL), err)
	}
	media := parseExtract(out.stdout)
	if len(media) == 0 {
		return nil, fmt.Errorf("%w: yt-dlp found no media on %s", ErrNotMedia, logsafe.URL(pageURL))
	}
	return media, nil
}

// parseExtract reads yt-dlp's output: a URL line, then a line with the
// JSON of its headers (at most two such pairs are kept).
func parseExtract(out []byte) []Media {
	var media []Media
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), maxProbeOutput)
	for sc.Scan() && len(media) < 2 {
		line := bytes.TrimSpace(sc.Bytes())
		if u, err := url.Parse(string(line)); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
			media = append(media, Media{URL: u.String()})
			continue
		}
		var h map[string]any
		if len(media) == 0 || media[len(media)-1].Headers != nil || json.Unmarshal(line, &h) != nil {
			continue
		}
		kept := map[string]string{}
		for _, k := range mediaHeaders {
			if v, ok := h[k].(string); ok && v != "" && !strings.ContainsAny(v, "\r\n") {
				kept[k] = v
			}
		}
		media[len(media)-1].Headers = kept
	}
	return media
}
