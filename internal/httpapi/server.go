// Package httpapi serves the v2 HTTP API: routing, auth, request decoding and
// validation, and the one mapping from errors to the API's error envelope.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/go-chi/chi/v5"

	"github.com/firegate/firegate/internal/auth"
	"github.com/firegate/firegate/internal/scrape"
)

// MaxBodyBytes is the largest request body accepted (10 MB); larger -> 413.
const MaxBodyBytes = 10 << 20

// Scraper runs one scrape; *scrape.Engine implements it.
type Scraper interface {
	Scrape(ctx context.Context, opts scrape.Options) (*scrape.Document, error)
}

// Authenticator resolves a bearer key to a team; *auth.Authenticator
// implements it.
type Authenticator interface {
	Authenticate(ctx context.Context, key string) (auth.Team, error)
}

// Deps are the collaborators of the server.
type Deps struct {
	Scraper Scraper
	Auth    Authenticator
	Log     *slog.Logger
}

// Server is the HTTP API. Create it with New; it is an http.Handler.
type Server struct {
	scraper Scraper
	auth    Authenticator
	log     *slog.Logger
	ready   atomic.Bool
	router  chi.Router
}

// New builds the server and its routes.
func New(d Deps) *Server {
	s := &Server{scraper: d.Scraper, auth: d.Auth, log: d.Log}
	r := chi.NewRouter()
	r.Use(s.requestID, s.accessLog, s.recoverPanics)
	r.NotFound(s.handle(func(w http.ResponseWriter, r *http.Request) error {
		return &Error{Status: http.StatusNotFound, Code: "NOT_FOUND", Message: "Not Found"}
	}))
	r.MethodNotAllowed(s.handle(func(w http.ResponseWriter, r *http.Request) error {
		return &Error{Status: http.StatusMethodNotAllowed, Code: "METHOD_NOT_ALLOWED", Message: "Method Not Allowed"}
	}))
	r.Get("/health", s.handleHealth)
	r.Route("/v2", func(r chi.Router) {
		r.Use(s.limitBody, s.authenticate)
		r.Post("/scrape", s.handle(s.handleScrape))
		for _, p := range notImplemented {
			r.HandleFunc(p, s.handle(handleNotImplemented))
		}
	})
	s.router = r
	return s
}

// SetReady marks the server ready (GET /health answers 200) or not (503).
func (s *Server) SetReady(ok bool) { s.ready.Store(ok) }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.router.ServeHTTP(w, r) }

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if !s.ready.Load() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "starting"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
}

// notImplemented lists the v2 routes this server knows but does not serve
// yet; they answer 501 rather than a bare 404.
var notImplemented = []string{
	"/scrape/{id}", "/scrape/{id}/interact",
	"/batch/scrape", "/batch/scrape/*",
	"/crawl", "/crawl/*",
	"/map", "/search", "/search/*", "/feedback",
	"/extract", "/extract/*",
	"/agent", "/agent/*",
	"/parse", "/parse/*",
	"/interact", "/interact/*", "/browser", "/browser/*",
	"/monitor", "/monitor/*",
	"/team/*", "/concurrency-check",
}

func handleNotImplemented(w http.ResponseWriter, r *http.Request) error {
	return &Error{Status: http.StatusNotImplemented, Code: "NOT_IMPLEMENTED",
		Message: "Not Implemented: " + r.Method + " " + r.URL.Path + " is not available on this server yet"}
}
