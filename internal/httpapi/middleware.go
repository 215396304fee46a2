package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/firegate/firegate/internal/auth"
	"github.com/firegate/firegate/internal/logsafe"
)

type ctxKey int

const (
	ctxRequestID ctxKey = iota
	ctxTeam
)

// validRequestID accepts client-sent ids of 1 to 128 safe characters.
var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// requestID takes X-Request-Id when it is well formed, else mints one, and
// echoes it in the response.
func (s *Server) requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !validRequestID.MatchString(id) {
			var b [12]byte
			_, _ = rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxRequestID, &requestInfo{id: id})))
	})
}

// requestInfo is what the access log reports beyond the request line: the
// id, and what the auth middleware and handlers learn on the way.
type requestInfo struct {
	id     string
	teamID string
	url    string // the target URL, never under zero data retention
}

func requestIDFrom(ctx context.Context) string {
	if ri, ok := ctx.Value(ctxRequestID).(*requestInfo); ok {
		return ri.id
	}
	return ""
}

// noteTeam records the authenticated team for the access log.
func noteTeam(ctx context.Context, teamID string) {
	if ri, ok := ctx.Value(ctxRequestID).(*requestInfo); ok {
		ri.teamID = teamID
	}
}

// noteTargetURL records the URL a scrape, map or crawl request works on for
// the access log. Callers skip it when zero data retention was requested.
func noteTargetURL(ctx context.Context, u string) {
	if ri, ok := ctx.Value(ctxRequestID).(*requestInfo); ok {
		ri.url = logsafe.URL(u)
	}
}

// statusRecorder remembers the status written, for the access log.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

// Unwrap gives http.ResponseController and the WebSocket upgrade (which
// hijacks the connection) the underlying writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += n
	return n, err
}

// accessLog logs one line per request (probes excepted) with its team and
// target URL when known, and records it in the metrics. It never logs keys
// or bodies.
func (s *Server) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		d := time.Since(start)
		if s.metrics != nil {
			s.observe(r, rec.status, d)
		}
		switch r.URL.Path {
		case "/health", "/ready", "/metrics":
			return
		}
		ctx := r.Context()
		ri, _ := ctx.Value(ctxRequestID).(*requestInfo)
		if ri == nil {
			ri = &requestInfo{}
		}
		attrs := []any{
			"request_id", ri.id,
			"method", r.Method,
			"path", r.URL.Path,
			"status", rec.status,
			"bytes", rec.bytes,
			"duration_ms", float64(d.Microseconds()) / 1000,
		}
		if ri.teamID != "" {
			attrs = append(attrs, "team_id", ri.teamID)
		}
		if ri.url != "" {
			attrs = append(attrs, "url", ri.url)
		}
		s.log.InfoContext(ctx, "http request", attrs...)
	})
}

// recoverPanics turns a panic into a 500 UNKNOWN_ERROR envelope.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.writeError(w, r, fmt.Errorf("panic: %v", v))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// limitBody caps request bodies at MaxBodyBytes; reading past it fails with
// *http.MaxBytesError, which decoding maps to 413.
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit := int64(MaxBodyBytes)
		if r.URL.Path == "/v2/parse" {
			limit = parseBodyLimit // file uploads: up to 50 MB
		}
		if r.ContentLength > limit {
			s.writeError(w, r, errBodyTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next.ServeHTTP(w, r)
	})
}

// errKeyMissing is the 401 of a request without a bearer key (no
// Authorization header, another scheme, the key alone): a wrong key is the
// contract's "Unauthorized: Invalid token".
var errKeyMissing = &Error{Status: http.StatusUnauthorized, Code: "UNAUTHORIZED",
	Message: `Unauthorized: Token missing. Send the header "Authorization: Bearer <your API key>".`}

var errBodyTooLarge = &Error{Status: http.StatusRequestEntityTooLarge, Code: "PAYLOAD_TOO_LARGE", Message: "Request body is too large"}

// authenticate resolves the bearer key to a team or answers 401.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isWebSocket(r) && r.Method == http.MethodGet && isWatchPath(r.URL.Path) {
			// The watcher authenticates after the upgrade, so that it can
			// answer with the WebSocket close codes.
			next.ServeHTTP(w, r)
			return
		}
		key := bearer(r.Header.Get("Authorization"))
		team, err := s.authenticateKey(r, key)
		if err != nil {
			if key == "" && errors.Is(err, auth.ErrInvalidKey) {
				err = errKeyMissing
			}
			s.writeError(w, r, err)
			return
		}
		noteTeam(r.Context(), team.ID)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxTeam, team)))
	})
}

// authenticateKey resolves key to a team for request r, refusing clients
// over their failed authentications and counting a new failure.
func (s *Server) authenticateKey(r *http.Request, key string) (auth.Team, error) {
	if s.authFails == nil {
		return s.auth.Authenticate(r.Context(), key)
	}
	addr := s.clientAddr(r)
	if wait := s.authFails.blocked(addr); wait > 0 {
		return auth.Team{}, errAuthRateLimited(wait)
	}
	team, err := s.auth.Authenticate(r.Context(), key)
	if errors.Is(err, auth.ErrInvalidKey) {
		s.authFails.fail(addr)
	}
	return team, err
}

// bearer extracts the token of an "Authorization: Bearer <token>" header.
func bearer(h string) string {
	const prefix = "bearer "
	if len(h) < len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return ""
	}
	return strings.TrimSpace(h[len(prefix):])
}

func teamFrom(ctx context.Context) auth.Team {
	t, _ := ctx.Value(ctxTeam).(auth.Team)
	return t
}
