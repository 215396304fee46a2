// Package httpapi serves the v2 HTTP API: routing, auth, request decoding and
// validation, and the one mapping from errors to the API's error envelope.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/firegate/firegate/internal/auth"
	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/cache"
	"github.com/firegate/firegate/internal/catalog"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/threat"
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

// Ledger checks and charges credits; *billing.Ledger implements it.
type Ledger interface {
	Check(ctx context.Context, teamID string, minimum int64) error
	Charge(ctx context.Context, c store.Charge) (store.ChargeResult, error)
	Current(ctx context.Context, teamID string) (billing.CurrentUsage, error)
	History(ctx context.Context, teamID string, byAPIKey bool) ([]store.UsagePeriod, error)
	Daily(ctx context.Context, teamID string, days int) ([]store.UsagePeriod, error)
}

// Deps are the collaborators of the server.
type Deps struct {
	Scraper Scraper
	Auth    Authenticator
	// Ledger, when nil, disables credits (every team unlimited).
	Ledger Ledger
	// Limiter, when nil, disables rate and concurrency limits.
	Limiter limits.Limiter
	// Defaults are the limits of teams without overrides.
	Defaults LimitDefaults
	// Results keeps documents for GET /v2/scrape/{id}; nil keeps none.
	Results cache.Cache
	// Media serves screenshots and PDFs at /media/{id}; nil serves none.
	Media MediaFiles
	// MediaLinks checks the signed links of audio and video (and any
	// /media link carrying a signature); nil refuses them.
	MediaLinks LinkVerifier
	// Parser converts uploads for POST /v2/parse; nil answers 501.
	Parser FileParser
	// Mapper lists site URLs for POST /v2/map; nil answers 501.
	Mapper Mapper
	// Searcher answers POST /v2/search; nil answers 400
	// SEARCH_NOT_CONFIGURED (no SEARXNG_ENDPOINT).
	Searcher Searcher
	// Jobs starts and cancels crawls and batch scrapes, JobStore reads
	// them; nil Jobs answers 501 on those routes.
	Jobs     Jobs
	JobStore store.JobStore
	// Agents starts, reads and cancels agent runs; nil answers 501 on the
	// agent routes.
	Agents Agents
	// PublicURL is this server's base URL in the url of started jobs;
	// empty uses the request's host.
	PublicURL string
	// Metrics records requests and serves GET /metrics; nil: no metrics
	// and no /metrics route.
	Metrics Metrics
	// Monitors serves /v2/monitor*; nil answers 501 on those routes.
	Monitors Monitors
	// ReadyChecks are run by GET /ready; none: ready while serving.
	ReadyChecks []ReadyCheck
	// BodyTimeout bounds the time a client has to send a request body
	// (HTTP_READ_TIMEOUT); 0 = no bound. It needs a server whose
	// connections support read deadlines (net/http's do).
	BodyTimeout time.Duration
	// MaxWatchers caps the WebSocket watchers one team holds open on this
	// process (WATCHERS_PER_TEAM); 0 = DefaultMaxWatchers. The next one is
	// closed with 1013 (try again later).
	MaxWatchers int
	// AuthFailureLimit is how many failed authentications one client
	// address may make per minute (AUTH_FAILURES_PER_MINUTE) before every
	// request from it answers 429 AUTH_RATE_LIMITED until the minute ends;
	// 0 = no limit.
	AuthFailureLimit int
	// Model is the language model for the crawl prompt and params-preview;
	// nil means none is configured: those and POST /v2/extract answer that
	// (the scrape formats are the Scraper's business).
	Model Model
	// Interact runs the live browser sessions of /v2/interact, /v2/browser
	// and /v2/scrape/{id}/interact; nil answers 501 on those routes.
	Interact Interact
	// TrustedProxies are the peers whose X-Forwarded-For names the client
	// (TRUSTED_PROXIES); from anyone else the header is ignored.
	TrustedProxies []netip.Prefix
	// Threat is the operator's threat blocklist (THREAT_BLOCKLIST_FILE);
	// nil applies only the lists of a request's threatProtection.
	Threat *threat.Checker
	// Catalog configures catalog calls of POST /v2/scrape and domainTools
	// (the operator's tools and the network policy they are called
	// through); nil answers 403 CATALOG_NOT_ENABLED. CatalogKeys keeps
	// their x-request-id keys; nil: keys are echoed but not kept.
	Catalog     *catalog.Options
	CatalogKeys *catalog.Keys
	// Activity keeps the teams' requests for GET /v2/team/activity; nil
	// keeps none and the route answers 501.
	Activity store.ActivityStore
	// Feedback keeps POST /v2/feedback and /v2/search/{id}/feedback; nil
	// answers 501 there.
	Feedback store.FeedbackStore
	// MCP serves /mcp (the MCP server) behind the same key check as /v2;
	// nil: no /mcp route.
	MCP http.Handler
	// Console serves the web console at /console and /console/*, outside
	// the key check (its page calls /v2 with the key the user gives); nil:
	// no console.
	Console http.Handler
	// AdminKey is the operator's key (ADMIN_API_KEY) of the /admin routes,
	// which Admin serves; either empty or nil: no /admin routes (404).
	AdminKey string
	Admin    Admin

	Log *slog.Logger
}

// LimitDefaults are the server-wide defaults of per-team limits.
type LimitDefaults struct {
	// Concurrency is the number of concurrent scrapes per team; 0 = unlimited.
	Concurrency int
	// RateMultiplier multiplies the base per-minute rates; 0 = unlimited.
	RateMultiplier int
}

// Server is the HTTP API. Create it with New; it is an http.Handler.
type Server struct {
	scraper        Scraper
	auth           Authenticator
	ledger         Ledger
	limiter        limits.Limiter
	defaults       LimitDefaults
	log            *slog.Logger
	ready          atomic.Bool
	router         chi.Router
	results        results
	media          MediaFiles
	mediaLinks     LinkVerifier
	parser         FileParser
	mapper         Mapper
	searcher       Searcher
	jobs           Jobs
	jobStore       store.JobStore
	agents         Agents
	monitors       Monitors
	publicURL      string
	metrics        Metrics
	checks         []ReadyCheck
	bodyTimeout    time.Duration
	watchers       *watchHub
	authFails      *authFailures // nil: no limit
	trustedProxies []netip.Prefix
	model          Model
	threat         *threat.Checker
	interact       Interact
	replays        replays
	catalog        *catalog.Service
	catalogKeys    *catalog.Keys
	activity       store.ActivityStore
	feedback       store.FeedbackStore
	// activityCleaned is when expired activities were last deleted (Unix
	// ns).
	activityCleaned atomic.Int64
	lastOK          sync.Map // team id -> time.Time of the last successful scrape
}

// New builds the server and its routes.
func New(d Deps) *Server {
	s := &Server{scraper: d.Scraper, auth: d.Auth, ledger: d.Ledger, limiter: d.Limiter, defaults: d.Defaults, log: d.Log,
		results: results{c: d.Results, now: time.Now}, media: d.Media, mediaLinks: d.MediaLinks, parser: d.Parser, mapper: d.Mapper, searcher: d.Searcher,
		jobs: d.Jobs, jobStore: d.JobStore, agents: d.Agents, monitors: d.Monitors, publicURL: strings.TrimRight(d.PublicURL, "/"),
		metrics: d.Metrics, checks: d.ReadyChecks, bodyTimeout: d.BodyTimeout,
		watchers: newWatchHub(d.JobStore, watchPoll, d.MaxWatchers), trustedProxies: d.TrustedProxies, model: d.Model,
		threat: d.Threat, activity: d.Activity, feedback: d.Feedback,
		interact: d.Interact, replays: replays{c: d.Results, now: time.Now}}
	s.catalogKeys = d.CatalogKeys
	if d.Catalog != nil {
		svc, err := catalog.New(*d.Catalog, s.catalogBuiltins()...)
		if err != nil {
			s.log.Error("catalog calls disabled", "err", err)
		} else {
			s.catalog = svc
		}
	}
	if d.AuthFailureLimit > 0 {
		s.authFails = newAuthFailures(d.AuthFailureLimit)
	}
	r := chi.NewRouter()
	r.Use(s.requestID, s.accessLog, s.recoverPanics, s.bodyDeadline)
	r.NotFound(s.handle(func(w http.ResponseWriter, r *http.Request) error {
		return &Error{Status: http.StatusNotFound, Code: "NOT_FOUND", Message: "Not Found"}
	}))
	r.MethodNotAllowed(s.handle(func(w http.ResponseWriter, r *http.Request) error {
		return &Error{Status: http.StatusMethodNotAllowed, Code: "METHOD_NOT_ALLOWED", Message: "Method Not Allowed"}
	}))
	r.Get("/health", s.handleHealth)
	r.Get("/ready", s.handleReady)
	if d.Metrics != nil {
		r.Method(http.MethodGet, "/metrics", d.Metrics.Handler())
	}
	r.Get("/media/{id}", s.handle(s.handleMedia))
	r.Head("/media/{id}", s.handle(s.handleMedia)) // players ask for the size first
	if d.Interact != nil {
		s.liveRoutes(r) // token-authenticated, outside the API key check
	}
	if d.Monitors != nil {
		s.monitorEmailRoutes(r) // token-authenticated, outside the API key check
	}
	r.Route("/v2", func(r chi.Router) {
		r.Use(s.limitBody, s.authenticate)
		r.Post("/scrape", s.handle(s.handleScrape))
		r.Get("/scrape/{id}", s.handle(s.handleGetScrape))
		r.Post("/parse", s.handle(s.handleParse))
		r.Post("/map", s.handle(s.handleMap))
		r.Post("/search", s.handle(s.handleSearch))
		if d.Jobs != nil && d.JobStore != nil {
			s.jobRoutes(r)
		}
		if d.Agents != nil {
			s.agentRoutes(r)
		} else {
			r.HandleFunc("/agent", s.handle(handleNotImplemented))
			r.HandleFunc("/agent/*", s.handle(handleNotImplemented))
		}
		if d.Monitors != nil {
			s.monitorRoutes(r)
		}
		if d.Interact != nil {
			s.interactRoutes(r)
		}
		r.Get("/team/credit-usage", s.handle(s.handleCreditUsage))
		r.Get("/team/credit-usage/historical", s.handle(s.handleCreditHistory))
		r.Get("/team/token-usage", s.handle(s.handleTokenUsage))
		r.Get("/team/token-usage/historical", s.handle(s.handleTokenHistory))
		r.Get("/concurrency-check", s.handle(s.handleConcurrencyCheck))
		r.Get("/team/queue-status", s.handle(s.handleQueueStatus))
		r.Get("/team/activity", s.handle(s.handleActivity))
		if d.Feedback != nil {
			s.feedbackRoutes(r)
		}
		for _, p := range notImplemented {
			if d.Feedback != nil && p == "/feedback" {
				continue
			}
			if d.Jobs != nil && d.JobStore != nil && isJobRoute(p) {
				continue
			}
			if d.Monitors != nil && isMonitorRoute(p) {
				continue
			}
			if d.Interact != nil && isInteractRoute(p) {
				continue
			}
			r.HandleFunc(p, s.handle(handleNotImplemented))
		}
	})
	if d.MCP != nil {
		r.With(s.limitBody, s.authenticate).Handle("/mcp", withoutRoute(d.MCP))
	}
	if d.Console != nil {
		r.Handle("/console", d.Console)
		r.Handle("/console/*", d.Console)
	}
	// firecrawl-mcp's catalog categories (firecrawl_find_tools without
	// arguments).
	r.With(s.authenticate).Get("/exchange/discover", s.handle(s.handleExchangeDiscover))
	if d.AdminKey != "" && d.Admin != nil {
		s.adminRoutes(r, d.AdminKey, d.Admin)
	}
	s.v1Routes(r)
	s.router = r
	return s
}

// withoutRoute serves h without chi's routing state of this request: the
// MCP server's tools send requests of their own to the router with the
// request's context, and chi would take them for a sub-router's (routing
// what is left of this request's path instead of theirs).
func withoutRoute(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), chi.RouteCtxKey, nil)))
	})
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
	"/scrape/{id}/interact",
	"/batch/scrape", "/batch/scrape/*",
	"/crawl", "/crawl/*",
	"/search/*", "/feedback",
	"/extract", "/extract/*",
	"/parse/*",
	"/interact", "/interact/*", "/browser", "/browser/*",
	"/monitor", "/monitor/*",
}

// isInteractRoute reports the notImplemented routes that interactRoutes
// replaces (under /interact/* and /browser/*, its own routes win over the
// 501 catch-all; other paths there still answer 501).
func isInteractRoute(p string) bool {
	switch p {
	case "/scrape/{id}/interact", "/interact", "/browser":
		return true
	}
	return false
}

func handleNotImplemented(w http.ResponseWriter, r *http.Request) error {
	return &Error{Status: http.StatusNotImplemented, Code: "NOT_IMPLEMENTED",
		Message: "Not Implemented: " + r.Method + " " + r.URL.Path + " is not available on this server yet"}
}
