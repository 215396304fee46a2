package scrape

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/logsafe"
	"github.com/firegate/firegate/internal/mediaconv"
	"github.com/firegate/firegate/internal/pagemeta"
	"github.com/firegate/firegate/internal/proxypool"
)

// The audio and video formats.
//
// The media are the page's URL itself when it serves media (by content
// type or first bytes: a file, an HLS playlist, a DASH manifest), else the
// page's main media (mediaconv.Find on the HTML, the rendered DOM in the
// browser path). The first that converts of at most maxMediaTries is made
// an MP3 (audio) and an MP4 (video) by the converter, whose requests go
// through the engine's client (policy, the request's proxy tier, headers,
// threat checks on every URL). The files are stored for an hour and the
// document gets signed links; no media, or none playable, gives null and a
// warning. The formats are refused under zero data retention (the link
// outlives the request) and from the cache (a link expires long before a
// cached document would).

// MediaConverter makes MP3s and MP4s of media; *mediaconv.Converter
// implements it.
type MediaConverter interface {
	Convert(ctx context.Context, req mediaconv.Request) (*mediaconv.Result, error)
}

// MediaExtractor finds the media URLs of a video platform's page, whose
// HTML does not name them; *mediaconv.Extractor (yt-dlp) implements it.
type MediaExtractor interface {
	// via is the outbound proxy the page came through (nil: direct):
	// yt-dlp's requests go through it too.
	Extract(ctx context.Context, pageURL string, audioOnly bool, via *proxypool.Proxy) ([]mediaconv.Media, error)
}

// MediaFiles keeps converted files of a team; *media.Store and
// *media.S3Store implement it.
type MediaFiles interface {
	PutFile(ctx context.Context, teamID, path, contentType string) (string, error)
}

// MediaStreamer opens media URLs for the converter, streaming their
// bodies; *fetch.Client implements it.
type MediaStreamer interface {
	Open(ctx context.Context, req fetch.Request, rangeHeader string) (*fetch.Stream, error)
}

// ErrMediaTooLarge: the media exceed MEDIA_MAX_SECONDS or MEDIA_MAX_BYTES
// (or the converter's download, memory or CPU limits).
var ErrMediaTooLarge = errcode.New("scrape: media beyond the limits", errcode.Unprocessable, "SCRAPE_MEDIA_TOO_LARGE", "")

// maxMediaTries bounds the candidates converted for one document.
const maxMediaTries = 3

// mediaMinCredits is what one media format costs at least (the reference's
// +4), and one more credit is charged per started minute past four.
const mediaMinCredits = 4

// MediaCredits is the cost of one audio or video format for media of
// duration d: one credit per started minute, at least mediaMinCredits.
func MediaCredits(d time.Duration) int {
	minutes := int((d + time.Minute - time.Nanosecond) / time.Minute)
	return max(mediaMinCredits, minutes)
}

// wantsMedia reports whether the audio or video format was requested.
func wantsMedia(o *Options) bool { return o.HasFormat(FormatAudio) || o.HasFormat(FormatVideo) }

// checkMedia refuses the media formats where they cannot be served.
func (e *Engine) checkMedia(o *Options) error {
	for _, f := range o.Formats {
		if f.Type != FormatAudio && f.Type != FormatVideo {
			continue
		}
		switch {
		case o.ZeroDataRetention:
			return unsupported(ErrZDRViolation, "formats."+f.Type,
				"The "+f.Type+" format is not supported with zero data retention: its link to the stored file outlives the request")
		case e.converter == nil || e.mediaFiles == nil || e.signedURL == nil:
			return unsupported(ErrMediaNotSupported, "formats."+f.Type,
				"The "+f.Type+" format needs ffmpeg, which this server did not find: install it (Debian's ffmpeg package) or set FFMPEG_PATH to its path")
		case o.Lockdown || o.MinAge != nil:
			return unsupported(ErrMediaNotSupported, "formats."+f.Type,
				"The "+f.Type+" format cannot be served from the cache (lockdown, minAge): its link is made for each request")
		}
	}
	return nil
}

// isMedia reports whether a response is media itself (a file, an HLS
// playlist, a DASH manifest), by its type or first bytes.
func isMedia(resp *fetch.Response) bool {
	return mediaconv.Sniff(contentTypeHeader(resp), resp.Body) != mediaconv.NotMedia
}

// mediaCandidates lists the media of the answer a document was made of:
// its URL when it is media itself, else the main media of its HTML, then
// the media the page requested in the browser (rt.media).
func mediaCandidates(rt *route) []mediaconv.Candidate {
	resp := rt.resp
	if resp == nil || resp.URL == "" {
		return nil
	}
	if isMedia(resp) {
		return []mediaconv.Candidate{{URL: resp.URL, From: "url"}}
	}
	var out []mediaconv.Candidate
	if classifyContent(resp) == contentHTML {
		if root, err := parseHTML(resp.Text()); err == nil {
			if pageURL, err := url.Parse(resp.URL); err == nil {
				out = mediaconv.Find(root, pagemeta.BaseURL(root, pageURL))
			}
		}
	}
	seen := map[string]bool{}
	for _, c := range out {
		seen[c.URL] = true
	}
	for _, u := range rt.media {
		if !seen[u] {
			seen[u] = true
			out = append(out, mediaconv.Candidate{URL: u, Kind: mediaconv.KindOfURL(u), From: "request"})
		}
	}
	return out
}

// attachMedia converts the media of the answer rt got (fetched through its
// proxy), stores the files and sets the document's audio and video links
// (null, with a warning, when there is nothing to convert) and their
// credits.
func (e *Engine) attachMedia(ctx context.Context, o *Options, doc *Document, rt *route) error {
	if !wantsMedia(o) {
		return nil
	}
	wantAudio, wantVideo := o.HasFormat(FormatAudio), o.HasFormat(FormatVideo)
	null := json.RawMessage("null")
	if wantAudio {
		doc.Audio = &null
	}
	if wantVideo {
		doc.Video = &null
	}
	cands := mediaCandidates(rt)
	if len(cands) == 0 && !rt.rendered && e.browserOK() {
		// A player may set its source by script: the page in the
		// browser shows it, or the requests it makes do.
		if resp, _, err := e.renderInBrowser(ctx, o, rt); err == nil {
			rt.resp = resp
			cands = mediaCandidates(rt)
		} else {
			e.log.DebugContext(ctx, "media: browser render failed", "url", logsafe.URL(o.URL), "err", err)
		}
	}
	if len(cands) == 0 && e.extractor != nil && rt.resp != nil && rt.resp.URL != "" {
		found, err := e.extractor.Extract(ctx, rt.resp.URL, wantAudio && !wantVideo, rt.Proxy)
		if err != nil {
			e.log.DebugContext(ctx, "media: yt-dlp found nothing", "url", logsafe.URL(rt.resp.URL), "err", err)
		}
		for _, m := range found {
			cands = append(cands, mediaconv.Candidate{URL: m.URL, Kind: mediaconv.KindOfURL(m.URL), From: "yt-dlp", Headers: m.Headers})
		}
	}
	cands = mediaconv.Order(cands, wantVideo)
	if len(cands) == 0 {
		addWarning(doc, "No audio or video was found on the page.")
		return nil
	}
	dir, err := os.MkdirTemp(e.mediaTmp, "scrape-media-*")
	if err != nil {
		return fmt.Errorf("scrape: media: %w", err)
	}
	defer os.RemoveAll(dir)
	hops := e.newHopGuard(o)
	var res *mediaconv.Result
	var unreadable, trackless []string
	for _, c := range cands[:min(len(cands), maxMediaTries)] {
		res, err = e.converter.Convert(ctx, mediaconv.Request{URL: c.URL, Open: e.mediaOpener(o, hops, rt, c.Headers), Audio: wantAudio, Video: wantVideo, Dir: dir})
		if err == nil {
			break
		}
		if herr := hops.err(); herr != nil {
			return herr
		}
		var le *mediaconv.LimitError
		switch {
		case errors.As(err, &le):
			return &errcode.Failure{Kind: ErrMediaTooLarge, Msg: le.Msg, Cause: err}
		case ctx.Err() != nil:
			return &errcode.Failure{Kind: ErrTimeout, Msg: "Converting the page's media took longer than the timeout; raise timeout (at most 300000 ms) for long media.", Cause: err}
		case errors.Is(err, mediaconv.ErrNoTrack):
			trackless = append(trackless, logsafe.URL(c.URL))
		default:
			unreadable = append(unreadable, logsafe.URL(c.URL))
		}
		e.log.DebugContext(ctx, "media candidate not converted", "url", logsafe.URL(c.URL), "from", c.From, "err", err)
		res = nil
	}
	if res == nil {
		w := "No playable audio or video was found on the page"
		if len(unreadable) > 0 {
			w += "; could not read " + strings.Join(unreadable, ", ")
		}
		if len(trackless) > 0 {
			w += "; without the track asked for: " + strings.Join(trackless, ", ")
		}
		addWarning(doc, w+".")
		return nil
	}
	store := func(f *mediaconv.File, into **json.RawMessage, what string) error {
		if f == nil {
			addWarning(doc, "The page's media has no "+what+" track.")
			return nil
		}
		id, err := e.mediaFiles.PutFile(context.WithoutCancel(ctx), o.TeamID, f.Path, f.ContentType)
		if err != nil {
			return fmt.Errorf("scrape: store media: %w", err)
		}
		link, err := json.Marshal(e.signedURL(id))
		if err != nil {
			return fmt.Errorf("scrape: media link: %w", err)
		}
		raw := json.RawMessage(link)
		*into = &raw
		d := f.Duration
		if d <= 0 {
			d = res.Duration
		}
		doc.Metadata.CreditsUsed += MediaCredits(d)
		return nil
	}
	if wantAudio {
		if err := store(res.Audio, &doc.Audio, "audio"); err != nil {
			return err
		}
	}
	if wantVideo {
		if err := store(res.Video, &doc.Video, "video"); err != nil {
			return err
		}
	}
	return nil
}

// mediaOpener fetches for the converter through the engine's client, with
// the request's headers (and extra, the candidate's, over them) and TLS
// choice, the proxy the page came through, and the threat checks on the
// URL and every redirect hop.
func (e *Engine) mediaOpener(o *Options, hops *hopGuard, rt *route, extra map[string]string) mediaconv.Opener {
	headers := o.Headers
	if len(extra) > 0 {
		headers = maps.Clone(o.Headers)
		if headers == nil {
			headers = map[string]string{}
		}
		maps.Copy(headers, extra)
	}
	return func(ctx context.Context, r mediaconv.OpenRequest) (*mediaconv.OpenResponse, error) {
		u, err := url.Parse(r.URL)
		if err != nil {
			return nil, err
		}
		if err := hops.check(u); err != nil {
			return nil, err
		}
		s, err := e.streamer.Open(ctx, fetch.Request{
			URL:            r.URL,
			Headers:        headers,
			Mobile:         o.Mobile,
			AcceptLanguage: fetch.AcceptLanguage(o.Location.Languages),
			SkipTLSVerify:  o.SkipTLSVerification,
			CheckHop:       hops.check,
			Proxy:          rt.Proxy,
		}, r.Range)
		if err != nil {
			return nil, err
		}
		return &mediaconv.OpenResponse{URL: s.URL, StatusCode: s.StatusCode, Header: s.Header, Body: s.Body}, nil
	}
}
