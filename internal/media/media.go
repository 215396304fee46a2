// Package media stores screenshots, PDFs and the MP3s and MP4s of the audio
// and video formats produced by scrapes under unguessable ids for a limited
// time (24 hours by default, as the API promises for screenshot URLs; one
// hour for audio and video, whose links are signed: see Signer), as files
// in one directory (Store) or as objects in an S3-compatible bucket
// (S3Store). Expired files are not served and are deleted by a janitor.
package media

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// ErrNotFound is returned by Open for an unknown, malformed or expired id.
var ErrNotFound = errors.New("media: not found")

// DefaultTTL is how long a stored file is served.
const DefaultTTL = 24 * time.Hour

// DefaultSignedTTL is how long an audio or video file (an id for which
// Signed is true) is served: the life of its signed link.
const DefaultSignedTTL = time.Hour

// idPattern is the shape of every id: the tag of the team that stored it
// and a dash (absent in ids stored without a team), 128 random bits in hex,
// and an extension naming the content type.
var idPattern = regexp.MustCompile(`^(?:[0-9a-f]{16}-)?[0-9a-f]{32}\.(png|jpg|webp|pdf|mp3|mp4|bin)$`)

// tmpPrefix marks files being written.
const tmpPrefix = ".tmp-"

// extension returns the file extension for a content type.
func extension(contentType string) string {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "image/png":
		return "png"
	case "image/jpeg":
		return "jpg"
	case "image/webp":
		return "webp"
	case "application/pdf":
		return "pdf"
	case "audio/mpeg":
		return "mp3"
	case "video/mp4":
		return "mp4"
	}
	return "bin"
}

// contentTypeOf returns the content type for an id's extension.
func contentTypeOf(id string) string {
	switch filepath.Ext(id) {
	case ".png":
		return "image/png"
	case ".jpg":
		return "image/jpeg"
	case ".webp":
		return "image/webp"
	case ".pdf":
		return "application/pdf"
	case ".mp3":
		return "audio/mpeg"
	case ".mp4":
		return "video/mp4"
	}
	return "application/octet-stream"
}

// Signed reports whether id is an audio or video file (mp3, mp4): served
// only through a signed link (see Signer) and kept for the signed TTL.
func Signed(id string) bool {
	switch filepath.Ext(id) {
	case ".mp3", ".mp4":
		return true
	}
	return false
}

// ttls are the lives of stored files: signed ones (audio, video) and the
// others (screenshots, PDFs).
type ttls struct{ plain, signed time.Duration }

func newTTLs(plain, signed time.Duration) ttls {
	if plain <= 0 {
		plain = DefaultTTL
	}
	if signed <= 0 {
		signed = DefaultSignedTTL
	}
	return ttls{plain: plain, signed: signed}
}

// of is the life of the file id.
func (t ttls) of(id string) time.Duration {
	if Signed(id) {
		return t.signed
	}
	return t.plain
}

// newID returns a fresh id of the team tagged tag for contentType: the tag
// and a dash when there is one, 128 random bits in hex and the extension
// naming the type, matching idPattern.
func newID(tag, contentType string) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	id := hex.EncodeToString(b[:]) + "." + extension(contentType)
	if tag != "" {
		id = tag + "-" + id
	}
	return id, nil
}

// Options configures a Store.
type Options struct {
	Dir string        // created with mode 0700 if missing
	TTL time.Duration // 0 means DefaultTTL
	// SignedTTL is the life of audio and video files; 0 means
	// DefaultSignedTTL.
	SignedTTL time.Duration
	// TeamQuota bounds the bytes of unexpired files one team may have
	// stored; 0 = no quota.
	TeamQuota int64
}

// Store is a directory of expiring media files, each created with mode
// 0600. It is safe for concurrent use, also by several processes sharing
// the directory (each then enforces the team quota on its own view,
// refreshed every 30 s).
type Store struct {
	dir   string
	ttl   ttls
	log   *slog.Logger
	now   func() time.Time
	quota quota
}

// New opens (creating it if needed) the store directory.
func New(opts Options, log *slog.Logger) (*Store, error) {
	if opts.Dir == "" {
		return nil, errors.New("media: no directory")
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("media: create dir: %w", err)
	}
	s := &Store{dir: opts.Dir, ttl: newTTLs(opts.TTL, opts.SignedTTL), log: log, now: time.Now}
	s.quota = quota{limit: opts.TeamQuota, now: func() time.Time { return s.now() }, teams: make(map[string]*teamUsage)}
	return s, nil
}

// TTL returns how long a file is served after Put (audio and video:
// SignedTTL).
func (s *Store) TTL() time.Duration { return s.ttl.plain }

// SignedTTL returns how long an audio or video file is served after
// PutFile: the life its signed link must not outlast.
func (s *Store) SignedTTL() time.Duration { return s.ttl.signed }

// Put stores data of team teamID (empty: no team, no quota) and returns
// its id, such as "9a1c...-3f9c...e1.png"; the extension follows
// contentType (png, jpg, webp, pdf, else bin). It fails with
// ErrQuotaExceeded when the team's unexpired files and data together would
// exceed the team quota.
func (s *Store) Put(ctx context.Context, teamID string, data []byte, contentType string) (id string, err error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("media: put: %w", err)
	}
	tag := teamTag(teamID)
	done, err := s.quota.reserve(ctx, tag, int64(len(data)), s.teamBytes)
	if err != nil {
		return "", fmt.Errorf("media: put: %w", err)
	}
	defer func() { done(err == nil) }()
	id, err = newID(tag, contentType)
	if err != nil {
		return "", fmt.Errorf("media: put: %w", err)
	}
	f, err := os.CreateTemp(s.dir, tmpPrefix+"*") // mode 0600
	if err != nil {
		return "", fmt.Errorf("media: put: %w", err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("media: put: %w", err)
	}
	if err := os.Rename(f.Name(), filepath.Join(s.dir, id)); err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("media: put: %w", err)
	}
	return id, nil
}

// PutFile stores the file at path (an MP3 or MP4 made by a conversion) for
// team teamID like Put, copying it without holding it in memory; the
// caller removes path.
func (s *Store) PutFile(ctx context.Context, teamID, path, contentType string) (id string, err error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("media: put: %w", err)
	}
	src, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("media: put: %w", err)
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return "", fmt.Errorf("media: put: %w", err)
	}
	tag := teamTag(teamID)
	done, err := s.quota.reserve(ctx, tag, fi.Size(), s.teamBytes)
	if err != nil {
		return "", fmt.Errorf("media: put: %w", err)
	}
	defer func() { done(err == nil) }()
	id, err = newID(tag, contentType)
	if err != nil {
		return "", fmt.Errorf("media: put: %w", err)
	}
	f, err := os.CreateTemp(s.dir, tmpPrefix+"*") // mode 0600
	if err != nil {
		return "", fmt.Errorf("media: put: %w", err)
	}
	n, werr := io.Copy(f, src)
	if werr == nil && n != fi.Size() {
		werr = fmt.Errorf("copied %d of %d bytes", n, fi.Size())
	}
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("media: put: %w", err)
	}
	if err := os.Rename(f.Name(), filepath.Join(s.dir, id)); err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("media: put: %w", err)
	}
	return id, nil
}

// Open returns the file of id with its content type and time of storage,
// for http.ServeContent. Unknown, malformed and expired ids give
// ErrNotFound; an expired file is deleted.
func (s *Store) Open(id string) (io.ReadSeekCloser, string, time.Time, error) {
	if !idPattern.MatchString(id) {
		return nil, "", time.Time{}, ErrNotFound
	}
	path := filepath.Join(s.dir, id)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", time.Time{}, ErrNotFound
	}
	if err != nil {
		return nil, "", time.Time{}, fmt.Errorf("media: open: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, "", time.Time{}, fmt.Errorf("media: open: %w", err)
	}
	if s.expired(id, fi.ModTime()) {
		f.Close()
		_ = os.Remove(path)
		return nil, "", time.Time{}, ErrNotFound
	}
	return f, contentTypeOf(id), fi.ModTime(), nil
}

func (s *Store) expired(id string, mod time.Time) bool { return s.now().Sub(mod) >= s.ttl.of(id) }

// teamBytes measures the unexpired files of the team tagged tag.
func (s *Store) teamBytes(ctx context.Context, tag string) (int64, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return 0, fmt.Errorf("media: measure team usage: %w", err)
	}
	var n int64
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), tag+"-") || !idPattern.MatchString(e.Name()) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("media: measure team usage: %w", err)
		}
		fi, err := e.Info()
		if err != nil || s.expired(e.Name(), fi.ModTime()) {
			continue // deleted meanwhile, or about to be
		}
		n += fi.Size()
	}
	return n, nil
}

// Sweep deletes expired files (and abandoned partial writes) and returns
// how many it deleted.
func (s *Store) Sweep(ctx context.Context) (int, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return 0, fmt.Errorf("media: sweep: %w", err)
	}
	n := 0
	var errs []error
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return n, fmt.Errorf("media: sweep: %w", err)
		}
		name := e.Name()
		if !idPattern.MatchString(name) && !strings.HasPrefix(name, tmpPrefix) {
			continue
		}
		fi, err := e.Info()
		if err != nil || !s.expired(name, fi.ModTime()) {
			continue
		}
		if err := os.Remove(filepath.Join(s.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		n++
	}
	if err := errors.Join(errs...); err != nil {
		return n, fmt.Errorf("media: sweep: %w", err)
	}
	return n, nil
}

// RunJanitor sweeps now and then every interval (0 means one hour) until
// ctx ends. Run it in its own goroutine.
func (s *Store) RunJanitor(ctx context.Context, every time.Duration) {
	runJanitor(ctx, every, s.log, s.Sweep)
}

// runJanitor calls sweep now and then every interval (0 means one hour)
// until ctx ends, logging what it deleted and its failures.
func runJanitor(ctx context.Context, every time.Duration, log *slog.Logger, sweep func(context.Context) (int, error)) {
	if every <= 0 {
		every = time.Hour
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		n, err := sweep(ctx)
		if err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, "media sweep failed", "err", err)
		} else if n > 0 {
			log.InfoContext(ctx, "media expired files deleted", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
