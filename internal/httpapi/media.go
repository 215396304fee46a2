package httpapi

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/firegate/firegate/internal/media"
)

// MediaFiles serves stored screenshots and PDFs; *media.Store implements it.
type MediaFiles interface {
	Open(id string) (io.ReadSeekCloser, string, time.Time, error)
}

// handleMedia serves GET /media/{id}. Ids are unguessable (128 random
// bits) and expire, like the signed URLs of the reference API, so the route
// needs no key: the URL is the capability.
func (s *Server) handleMedia(w http.ResponseWriter, r *http.Request) error {
	if s.media == nil {
		return errMediaNotFound
	}
	f, ctype, mod, err := s.media.Open(chi.URLParam(r, "id"))
	if errors.Is(err, media.ErrNotFound) {
		return errMediaNotFound
	}
	if err != nil {
		return err
	}
	defer f.Close()
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "private, max-age=3600")
	http.ServeContent(w, r, "", mod, f)
	return nil
}

var errMediaNotFound = &Error{Status: http.StatusNotFound, Code: "NOT_FOUND", Message: "Media not found or expired."}
