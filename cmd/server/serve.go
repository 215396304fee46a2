package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/firegate/firegate/internal/admin"
	"github.com/firegate/firegate/internal/agent"
	"github.com/firegate/firegate/internal/auth"
	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/browser"
	"github.com/firegate/firegate/internal/cache"
	"github.com/firegate/firegate/internal/console"
	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/crawljob"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/httpapi"
	"github.com/firegate/firegate/internal/interact"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/llm"
	"github.com/firegate/firegate/internal/mail"
	"github.com/firegate/firegate/internal/mcp"
	"github.com/firegate/firegate/internal/media"
	"github.com/firegate/firegate/internal/monitor"
	"github.com/firegate/firegate/internal/netguard"
	"github.com/firegate/firegate/internal/proxypool"
	"github.com/firegate/firegate/internal/sandbox"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/threat"
)

// server holds the parts of a running server as serve builds them, in
// steps: the store and what is shared over it (openStore, openShared), the
// scrape engine (buildEngine), the queue and its runners (startJobs) and
// the API (buildAPI). A step that starts something registers its stop with
// onClose; close runs them last first, so that the API stops before the
// jobs, the jobs before the ledger flushes, and the store closes last.
type server struct {
	cfg        Config
	log        *slog.Logger
	workerOnly bool
	closers    []func()

	// openStore and openShared
	runner   interact.Runner // a nil interface without INTERACT_RUNTIMES
	st       store.Store
	docCache cache.Cache
	limiter  limits.Limiter
	locker   scrape.ProfileLocker
	media    mediaBackend
	links    *media.Signer
	obs      observers
	policy   *netguard.Policy

	// buildEngine
	pool     *browser.Pool // nil without a browser
	fetcher  *fetch.Client
	mapper   *crawl.Mapper
	searcher httpapi.Searcher // a nil interface without SEARXNG_ENDPOINT
	ledger   *billing.Ledger
	model    *llm.Client // nil without a language model
	threats  *threat.Checker
	engine   *scrape.Engine

	// startJobs
	jobs *jobs
}

// onClose registers fn to run when the server stops.
func (s *server) onClose(fn func()) { s.closers = append(s.closers, fn) }

// close stops what the steps started, last first.
func (s *server) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// serve runs the server: the API and the queue workers, or with workerOnly
// the workers and the operations routes alone.
func serve(ctx context.Context, cfg Config, log *slog.Logger, stdout io.Writer, workerOnly bool) error {
	// Bind first: a second server on a busy port stops here, before it
	// opens the store, starts a queue worker or runs migrations.
	ln, err := net.Listen("tcp", cfg.Addr())
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer ln.Close() // closed by Serve on the way out; this covers the returns before it
	s := &server{cfg: cfg, log: log, workerOnly: workerOnly}
	defer s.close()
	for _, step := range []func(context.Context) error{
		func(ctx context.Context) error { return s.openStore(ctx, stdout) },
		s.openShared, s.buildEngine, s.startJobs,
	} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	api, err := s.buildAPI(ctx)
	if err != nil {
		return err
	}
	return s.listen(ctx, ln, api)
}

// openStore starts the interact sandbox when INTERACT_RUNTIMES asks for
// one, then opens the store and makes sure it has the teams and keys
// AUTH_MODE needs.
func (s *server) openStore(ctx context.Context, stdout io.Writer) error {
	cfg, log := s.cfg, s.log
	if len(cfg.InteractLangs) > 0 && !s.workerOnly {
		sb, err := sandbox.New(ctx, sandbox.Config{Runtimes: cfg.InteractLangs, NodeModules: cfg.InteractNodeMod, Log: log})
		if err != nil {
			return fmt.Errorf("INTERACT_RUNTIMES=%s: %w (unset INTERACT_RUNTIMES to run no programs)", strings.Join(cfg.InteractLangs, ","), err)
		}
		s.onClose(func() { _ = sb.Close() })
		s.runner = sb
		log.InfoContext(ctx, "interact programs run in a bubblewrap sandbox", "runtimes", cfg.InteractLangs)
	}
	st, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	s.onClose(func() { st.Close() })
	s.st = st
	if cfg.AuthMode == "off" {
		// Every request is the one self-hosted team's: its row must exist
		// for what the store keeps per team (jobs, activity, monitors).
		if err := st.EnsureTeam(ctx, auth.SelfHostedTeamID, selfHostedTeamName); err != nil {
			return fmt.Errorf("AUTH_MODE=off: the self-hosted team (id %s, name %q): %w", auth.SelfHostedTeamID, selfHostedTeamName, err)
		}
		log.WarnContext(ctx, "auth disabled: any or no key is accepted", "auth_mode", cfg.AuthMode)
		return nil
	}
	return bootstrapKeys(ctx, cfg, st, log, stdout)
}

// openShared opens what the engine, the jobs and the API share: the cache,
// limiter and profile locks (Redis or in-process), the media store and its
// link signer, the metrics and the network policy.
func (s *server) openShared(ctx context.Context) error {
	docCache, limiter, locker, closeRedis, err := openRedisBacked(s.cfg, s.log)
	if err != nil {
		return err
	}
	s.onClose(closeRedis)
	s.docCache, s.limiter, s.locker = docCache, limiter, locker
	if s.media, err = openMedia(ctx, s.cfg, s.log); err != nil {
		return fmt.Errorf("media store: %w", err)
	}
	go s.media.RunJanitor(ctx, 10*time.Minute) // audio and video last an hour
	if s.links, err = mediaSigner(s.cfg, s.log); err != nil {
		return err
	}
	s.obs = newObservers(s.cfg, s.log)
	s.policy, err = s.cfg.netPolicy()
	return err
}

// buildEngine builds the scrape engine and what it scrapes with: the
// browser, the fetcher, the mapper, the searcher, the ledger, the language
// model, the threat checker and the media converter and extractor.
func (s *server) buildEngine(ctx context.Context) error {
	cfg, log := s.cfg, s.log
	extractor, closeExtractor := newMediaExtractor(ctx, cfg, s.policy, log)
	s.onClose(closeExtractor)
	renderer := s.openBrowser(ctx)
	proxies := proxypool.Pools{Basic: cfg.BasicProxies, Enhanced: cfg.EnhancedProxies}
	s.fetcher = fetch.New(fetch.Options{Policy: s.policy, MaxBodyBytes: cfg.FetchMaxBytes}, log)
	s.mapper = crawl.NewMapper(s.fetcher, crawl.MapperOptions{MaxSitemapTotalBytes: cfg.SitemapMaxBytes, Proxies: proxies}, log)
	var err error
	if s.searcher, err = openSearch(cfg, log); err != nil {
		return err
	}
	s.startLedger(ctx)
	var llmObs llm.Observer // a nil interface with METRICS=off
	if s.obs.m != nil {
		llmObs = s.obs.m
	}
	if s.model, err = newLLM(cfg, llmObs, log); err != nil {
		return err
	}
	var engineModel scrape.LLM // stays a nil interface without a model
	if s.model != nil {
		engineModel = s.model
	}
	if s.threats, err = threat.New(threat.Options{BlocklistFile: cfg.ThreatBlocklist, Log: log}); err != nil {
		return fmt.Errorf("THREAT_BLOCKLIST_FILE: %w", err)
	}
	s.engine = scrape.New(scrape.Config{Threat: s.threats, Fetcher: s.fetcher, Cache: s.docCache, CacheTTL: cfg.CacheTTL, Log: log,
		Browser: renderer, Media: s.media, MediaURL: func(id string) string { return cfg.PublicURL + "/media/" + id },
		Profiles: profileStore{s.st}, Locker: s.locker, Changes: changeStore{s.st}, Metrics: s.obs.scrape, LLM: engineModel, LLMContextTokens: cfg.LLMContext,
		Proxies:   proxies,
		Converter: newMediaConverter(ctx, cfg, log), MediaFiles: s.media, Streamer: s.fetcher, Extractor: extractor,
		RenderAlways: cfg.RenderPolicy == "always",
		SignedMediaURL: func(id string) string {
			return cfg.PublicURL + "/media/" + id + "?" + s.links.Query(id, time.Now().Add(media.DefaultSignedTTL))
		}})
	if n, m := cfg.BasicProxies.Len(), cfg.EnhancedProxies.Len(); n+m > 0 {
		log.InfoContext(ctx, "outbound proxies", "basic", n, "enhanced", m)
	}
	return nil
}

// openBrowser makes the browser pool with BROWSER=auto and returns it as
// the engine's renderer, or nil (plain HTTP only) when there is no browser.
func (s *server) openBrowser(ctx context.Context) scrape.Renderer {
	cfg := s.cfg
	if cfg.Browser != "auto" {
		return nil
	}
	pool := browser.New(browser.Options{ChromePath: cfg.ChromePath, RemoteURL: cfg.BrowserWSURL, MaxTabs: cfg.BrowserMaxTabs, MaxHold: cfg.BrowserTabHold,
		Policy: s.policy, ProxyListen: cfg.BrowserProxy, ProxyURL: cfg.BrowserProxyURL,
		UserDataDir: filepath.Join(cfg.DataDir, "chrome"), DevTools: !s.workerOnly}, s.log) // DevTools: the sessions' cdpUrl
	s.onClose(func() { pool.Close() })
	if err := pool.Available(); err != nil {
		s.log.WarnContext(ctx, "browser unavailable: pages are fetched over plain HTTP only; actions and screenshots answer 400", "err", err)
		return nil
	}
	s.pool = pool
	s.obs.m.SetBrowserTabs(browserTabs(pool))
	s.log.InfoContext(ctx, "browser available (started on first use)")
	return pool
}

// startLedger starts the ledger that batches usage into the store; it
// flushes on the way out, before the store closes.
func (s *server) startLedger(ctx context.Context) {
	s.ledger = billing.NewLedger(s.st, s.log)
	if s.obs.m != nil {
		s.ledger.ObserveCharges(s.obs.m.ObserveCharge)
	}
	done := make(chan struct{})
	lctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	go func() { s.ledger.Run(lctx, time.Second); close(done) }()
	s.onClose(func() { stop(); <-done })
}

// startJobs opens the queue with the crawl, agent and monitor runners and
// starts it, and in a process with workers the monitor scheduler.
func (s *server) startJobs(ctx context.Context) error {
	cfg := s.cfg
	rc := crawljob.RunnerConfig{Scraper: s.engine, Mapper: s.mapper, Fetcher: s.fetcher, Threat: s.threats,
		Ledger: s.ledger, Limiter: s.limiter}
	if s.obs.m != nil {
		rc.ObservePage = s.obs.m.ObserveJobPage
	}
	if m, ok := s.st.(store.CrawlMemoryStore); ok {
		rc.Memory = m // crawls with changeTracking revisit earlier crawls' pages
	}
	ac := agent.Config{Scraper: s.engine, Mapper: s.mapper, Ledger: s.ledger, Threat: s.threats}
	if s.model != nil {
		ac.Model = s.model
	}
	if s.searcher != nil {
		ac.Searcher = s.searcher
	}
	j, err := openJobs(ctx, cfg, s.st, s.policy, rc, ac, s.monitorConfig(ctx), s.log)
	if err != nil {
		return err
	}
	s.jobs = j
	if s.obs.m != nil {
		s.obs.m.SetQueueDepth(j.q.Depth)
	}
	// Not ctx: cancelling the context the queue started with is a hard
	// stop that cancels running pages at once; the drain below (Stop with
	// SHUTDOWN_TIMEOUT) is what ends it.
	if err := j.q.Start(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	s.onClose(func() {
		// Running pages get the drain time to finish; the rest go back to
		// the queue for another worker (or this one after a restart).
		qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
		defer cancel()
		if err := j.q.Stop(qctx); err != nil {
			s.log.Error("queue stop", "err", err)
		}
	})
	if cfg.QueueWorkers > 0 {
		// Every worker process runs the monitor scheduler: the store's
		// claim on each due slot makes one of them start its check.
		schedCtx, stopSched := context.WithCancel(context.WithoutCancel(ctx))
		schedDone := make(chan struct{})
		go func() { j.monitors.Run(schedCtx, cfg.MonitorTick); close(schedDone) }()
		s.onClose(func() { stopSched(); <-schedDone })
	}
	return nil
}

// monitorConfig is the monitor runner's scrape-side configuration: the
// team limits its checks obey, the model and searcher, and the emails.
func (s *server) monitorConfig(ctx context.Context) monitor.RunnerConfig {
	cfg, st := s.cfg, s.st
	mc := monitor.RunnerConfig{Ledger: s.ledger, Limiter: s.limiter}
	if cfg.AuthMode == "on" {
		// A check's pages hold the team's concurrency slots like its
		// scrapes (with auth off the one team is unlimited).
		mc.TeamConcurrency = func(ctx context.Context, teamID string) (int, error) {
			l, err := st.TeamLimits(ctx, teamID)
			if err != nil {
				return 0, err
			}
			if l.ConcurrencyLimit != nil {
				return *l.ConcurrencyLimit, nil
			}
			return cfg.TeamConcurrency, nil
		}
		mc.ZDRForced = func(ctx context.Context, teamID string) (bool, error) {
			l, err := st.TeamLimits(ctx, teamID)
			return l.ZeroDataRetentionForced, err
		}
	}
	if s.model != nil {
		mc.Model = s.model // judges pages of monitors with a goal
	}
	if s.searcher != nil {
		mc.Searcher = s.searcher
	}
	if cfg.SMTPURL != "" {
		mc.Email = &monitor.Email{Sender: mail.NewSender(cfg.SMTP), Secret: []byte(cfg.EmailSecret), PublicURL: cfg.PublicURL, Log: s.log}
		s.log.InfoContext(ctx, "monitor emails on", "smtp_host", cfg.SMTP.Host, "smtp_port", cfg.SMTP.Port, "tls", cfg.SMTP.TLS)
	}
	return mc
}

// startSessions starts the interact session manager when there is a
// browser (and the process serves the API); it returns a nil interface
// otherwise.
func (s *server) startSessions(ctx context.Context) httpapi.Interact {
	ist, ok := s.st.(store.InteractStore)
	if s.pool == nil || s.workerOnly || !ok {
		return nil
	}
	var model interact.Model // stays a nil interface without a model
	if s.model != nil {
		model = s.model
	}
	cfg := s.cfg
	m := interact.New(interact.Config{Store: ist, Browser: s.pool, Ledger: s.ledger, Profiles: profileStore{s.st}, Locker: s.locker,
		MaxPerTeam: cfg.InteractPerTeam, MaxSessions: cfg.InteractMax, RecordingTTL: cfg.JobTTL, JSMemory: int64(cfg.InteractJSMemMB) << 20,
		Model: model, Runner: s.runner, Log: s.log})
	reapCtx, stopReap := context.WithCancel(ctx)
	reapDone := make(chan struct{})
	go func() { m.Run(reapCtx); close(reapDone) }()
	// Sessions end (and are billed) before the pool and the store close.
	s.onClose(func() { stopReap(); <-reapDone })
	return m
}

// buildAPI builds the HTTP API over the parts the other steps built, with
// the interact sessions, the catalog, the readiness checks and the MCP
// server it serves at /mcp.
func (s *server) buildAPI(ctx context.Context) (*httpapi.Server, error) {
	cfg, st := s.cfg, s.st
	sessions := s.startSessions(ctx)
	catalogOpts, catalogKeys, err := openCatalog(cfg, st, s.policy, s.log)
	if err != nil {
		return nil, err
	}
	if catalogKeys != nil {
		go catalogKeys.Janitor(ctx)
	}
	checks := readyChecks(st, s.docCache, s.pool)
	checks = append(checks, httpapi.ReadyCheck{Name: "queue", Check: func(ctx context.Context) (string, error) {
		return "", s.jobs.q.Ping(ctx)
	}})
	var apiModel httpapi.Model // stays a nil interface without a model
	if s.model != nil {
		apiModel = s.model
	}
	// The MCP server's tools call the API in process: it needs the API,
	// which serves it at /mcp.
	var api *httpapi.Server
	mcpServer := mcp.New(mcp.Options{API: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { api.ServeHTTP(w, r) }),
		Version: version(), Log: s.log})
	api = httpapi.New(httpapi.Deps{
		MCP:              mcpServer,
		Console:          console.New(console.Options{PublicURL: cfg.PublicURL}),
		AdminKey:         cfg.AdminAPIKey,
		Admin:            admin.New(admin.Options{Store: st, Activity: activityStore(st), By: "operator (admin api)", Log: s.log}),
		Jobs:             s.jobs.runner,
		JobStore:         s.jobs.store,
		Agents:           s.jobs.agents,
		Monitors:         s.jobs.monitorAPI,
		PublicURL:        cfg.PublicURL,
		Model:            apiModel,
		Scraper:          s.engine,
		Parser:           s.engine,
		Mapper:           s.mapper,
		Searcher:         s.searcher,
		Media:            s.media,
		MediaLinks:       s.links,
		Auth:             auth.New(st, auth.Options{Disabled: cfg.AuthMode == "off"}),
		Ledger:           s.ledger,
		Limiter:          s.limiter,
		Results:          s.docCache,
		Defaults:         httpapi.LimitDefaults{Concurrency: cfg.TeamConcurrency, RateMultiplier: cfg.TeamRateMult},
		Metrics:          s.obs.api,
		ReadyChecks:      checks,
		BodyTimeout:      cfg.HTTPReadBody,
		MaxWatchers:      cfg.WatchersPerTeam,
		AuthFailureLimit: cfg.AuthFailures,
		TrustedProxies:   cfg.TrustedProxies,
		Threat:           s.threats,
		Interact:         sessions,
		Catalog:          catalogOpts,
		CatalogKeys:      catalogKeys,
		Activity:         activityStore(st),
		Feedback:         feedbackStore(st),
		Log:              s.log,
	})
	return api, nil
}

// listen serves api on ln (only the operations routes in a worker) until
// ctx ends, then drains for SHUTDOWN_TIMEOUT.
func (s *server) listen(ctx context.Context, ln net.Listener, api *httpapi.Server) error {
	cfg, log := s.cfg, s.log
	if cfg.PprofAddr != "" {
		go servePprof(ctx, cfg.PprofAddr, log)
	}
	var handler http.Handler = api
	if s.workerOnly {
		handler = opsOnly(api)
	}
	srv := newHTTPServer(ctx, cfg, handler)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	api.SetReady(true)
	log.InfoContext(ctx, "server listening", "addr", ln.Addr().String(), "store", storeKind(cfg),
		"worker_only", s.workerOnly, "queue_workers", cfg.QueueWorkers)

	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	api.SetReady(false)
	log.InfoContext(ctx, "shutting down", "drain_timeout", cfg.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	log.InfoContext(ctx, "server stopped")
	return nil
}
