package httpapi

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"
)

// errBodyTimeout answers a request whose body did not arrive within the
// body timeout (a client that sends its headers, then trickles the body).
var errBodyTimeout = &Error{Status: http.StatusRequestTimeout, Code: "REQUEST_BODY_TIMEOUT",
	Message: "Request timed out: the request body was not received in time"}

// bodyDeadline bounds the time a client has to send its request body,
// counted from the end of its headers: a per-request read deadline rather
// than http.Server.ReadTimeout, so that a body cut off answers 408
// REQUEST_BODY_TIMEOUT (not a malformed-JSON 400). The deadline is cleared
// once the body has been read to its end, so long scrapes are unaffected;
// WebSocket watchers have no body and net/http clears deadlines when it
// hands their connection over.
func (s *Server) bodyDeadline(next http.Handler) http.Handler {
	if s.bodyTimeout <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(s.bodyTimeout)); err != nil {
			next.ServeHTTP(w, r) // a writer without deadlines (tests)
			return
		}
		r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody clears the read deadline at the end of the body and turns
// the deadline's expiry into errBodyTimeout.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == nil:
	case errors.Is(err, os.ErrDeadlineExceeded):
		return n, errBodyTimeout
	case !b.done:
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}
