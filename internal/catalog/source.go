package catalog

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"
)

func ioLimit(r io.Reader, n int64) io.Reader { return io.LimitReader(r, n) }

// Source is the catalog file, reloaded when it changes: each use looks at
// the file's size and modification time (at most once per CheckEvery)
// and parses it again when they changed. A file that no longer parses is
// logged and the last good catalog kept.
type Source struct {
	path   string
	lookup func(string) (string, bool)
	log    *slog.Logger
	// CheckEvery is the least time between two looks at the file.
	CheckEvery time.Duration
	now        func() time.Time

	mu      sync.Mutex
	cur     *Catalog
	size    int64
	mod     time.Time
	checked time.Time
}

// OpenSource loads the catalog file at path; an unreadable or invalid
// file is an error (the server does not start with it). lookup resolves
// ${VAR} (os.LookupEnv).
func OpenSource(path string, lookup func(string) (string, bool), log *slog.Logger) (*Source, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Source{path: path, lookup: lookup, log: log, CheckEvery: time.Second, now: time.Now}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	c, err := s.load()
	if err != nil {
		return nil, err
	}
	s.cur, s.size, s.mod, s.checked = c, fi.Size(), fi.ModTime(), s.now()
	return s, nil
}

func (s *Source) load() (*Catalog, error) {
	data, err := readFile(s.path)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("catalog: %s is larger than %d bytes", s.path, MaxFileBytes)
	}
	return Parse(s.path, data, s.lookup)
}

// Catalog returns the current catalog, reloading the file if it changed.
func (s *Source) Catalog() *Catalog {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if now.Sub(s.checked) < s.CheckEvery {
		return s.cur
	}
	s.checked = now
	fi, err := os.Stat(s.path)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) || s.size >= 0 {
			s.log.Warn("catalog file unreadable; the last loaded catalog is kept", "path", s.path, "err", err)
		}
		s.size = -1 // log once per disappearance
		return s.cur
	}
	if fi.Size() == s.size && fi.ModTime().Equal(s.mod) {
		return s.cur
	}
	s.size, s.mod = fi.Size(), fi.ModTime()
	c, err := s.load()
	if err != nil {
		s.log.Error("catalog file changed but does not load; the last loaded catalog is kept", "path", s.path, "err", err)
		return s.cur
	}
	s.cur = c
	s.log.Info("catalog reloaded", "path", s.path, "providers", len(c.Providers))
	return s.cur
}
