package httpapi

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/firegate/firegate/internal/media"
)

// MediaFiles serves stored screenshots, PDFs, MP3s and MP4s; *media.Store
// implements it.
type MediaFiles interface {
	Open(id string) (io.ReadSeekCloser, string, time.Time, error)
}

// LinkVerifier checks the signature and expiry of a media link;
// *media.Signer implements it.
type LinkVerifier interface {
	Verify(id string, q url.Values, now time.Time) error
}

// handleMedia serves GET /media/{id}. Ids are unguessable (128 random
// bits) and expire, like the signed URLs of the reference API, so the route
// needs no key: the URL is the capability. Audio and video (media.Signed
// ids) are served only on a link whose signature matches (403 otherwise)
// and whose expiry is ahead (410 after); a signature on any other link is
// checked too. Range requests are answered (players seek).
func (s *Server) handleMedia(w http.ResponseWriter, r *http.Request) error {
	if s.media == nil {
		return errMediaNotFound
	}
	id := chi.URLParam(r, "id")
	q := r.URL.Query()
	signed := media.Signed(id) || media.HasSignature(q)
	if signed {
		if s.mediaLinks == nil {
			return errMediaLinkInvalid
		}
		switch err := s.mediaLinks.Verify(id, q, time.Now()); {
		case errors.Is(err, media.ErrLinkExpired):
			return errMediaLinkExpired
		case err != nil:
			return errMediaLinkInvalid
		}
	}
	f, ctype, mod, err := s.media.Open(id)
	if errors.Is(err, media.ErrNotFound) {
		return errMediaNotFound
	}
	if err != nil {
		return err
	}
	defer f.Close()
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	maxAge := 3600
	if signed {
		if exp, err := strconv.ParseInt(q.Get("expires"), 10, 64); err == nil {
			maxAge = int(min(max(time.Until(time.Unix(exp, 0)), 0), time.Hour) / time.Second)
		}
		w.Header().Set("Referrer-Policy", "no-referrer") // the link is the credential
	}
	w.Header().Set("Cache-Control", "private, max-age="+strconv.Itoa(maxAge))
	http.ServeContent(w, r, "", mod, f)
	return nil
}

var (
	errMediaNotFound    = &Error{Status: http.StatusNotFound, Code: "NOT_FOUND", Message: "Media not found or expired."}
	errMediaLinkInvalid = &Error{Status: http.StatusForbidden, Code: "MEDIA_LINK_INVALID",
		Message: "Forbidden: this media link's signature does not match; use the link exactly as the scrape returned it."}
	errMediaLinkExpired = &Error{Status: http.StatusGone, Code: "MEDIA_LINK_EXPIRED",
		Message: "This media link has expired (audio and video links last one hour); scrape the page again for a new one."}
)
