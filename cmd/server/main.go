// Command server runs the v2 scraping API server, and manages API keys,
// credits and limits. "server help" lists the commands and their flags
// (the list is commands() in cli.go):
//
//	server [serve]                  run the server (config from env, see docs/configuration.md)
//	server worker                   run queue workers only
//	server keys create|list|revoke  manage a team's API keys
//	server credits add|set|unlimited|show
//	server limits set               a team's concurrency, rate and zero data retention
//	server migrate                  apply database migrations and exit
//	server version                  print the version
package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/firegate/firegate/internal/admin"
	"github.com/firegate/firegate/internal/apikey"
	"github.com/firegate/firegate/internal/auth"
	"github.com/firegate/firegate/internal/cache"
	"github.com/firegate/firegate/internal/catalog"
	"github.com/firegate/firegate/internal/httpapi"
	"github.com/firegate/firegate/internal/interact"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/llm"
	"github.com/firegate/firegate/internal/media"
	"github.com/firegate/firegate/internal/mediaconv"
	"github.com/firegate/firegate/internal/netguard"
	"github.com/firegate/firegate/internal/proxypool"
	"github.com/firegate/firegate/internal/sandbox"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/search"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/postgres"
	"github.com/firegate/firegate/internal/store/sqlite"
)

func main() {
	interact.RunChildIfRequested() // a code runner of an interact session
	sandbox.RunInitIfRequested()   // the init of a sandboxed interact program
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, errUsage) {
		os.Exit(2) // the usage is on stderr already
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

// run is main without process globals, so tests can drive it. Usage
// errors are printed to stderr and returned as errUsage.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		args = []string{"serve"}
	}
	if isHelpFlag(args[0]) || args[0] == "help" {
		return help(args[1:], stdout, stderr)
	}
	c, f, ok, err := parseCommand(args, stdout, stderr)
	if !ok {
		return err
	}
	if c.name == "version" {
		fmt.Fprintln(stdout, version())
		return nil
	}
	cfg, err := loadConfig(getenv)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	log := newLogger(cfg, stderr)
	group, sub, _ := strings.Cut(c.name, " ")
	switch group {
	case "serve":
		return serve(ctx, cfg, log, stdout, false)
	case "worker":
		if cfg.QueueWorkers == 0 {
			return errors.New("worker: QUEUE_WORKERS is 0, so this worker would run nothing")
		}
		return serve(ctx, cfg, log, stdout, true)
	case "keys":
		return keysCommand(ctx, cfg, log, sub, f, stdout)
	case "credits":
		return creditsCommand(ctx, cfg, log, sub, f, stdout)
	case "limits":
		return limitsCommand(ctx, cfg, log, f, stdout)
	case "feedback":
		return feedbackCommand(ctx, cfg, log, f, stdout)
	case "migrate":
		st, err := openStore(ctx, cfg, log)
		if err != nil {
			return err
		}
		defer st.Close()
		fmt.Fprintln(stdout, "migrations applied")
		return nil
	}
	return fmt.Errorf("command %q has no implementation", c.name) // a commands() entry without a case
}

func newLogger(cfg Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// openStore opens Postgres when DATABASE_URL is set, else the embedded
// SQLite file; both apply migrations on open.
// selfHostedTeamName names the team of AUTH_MODE=off in the store.
const selfHostedTeamName = "self-hosted (AUTH_MODE=off)"

func openStore(ctx context.Context, cfg Config, log *slog.Logger) (store.Store, error) {
	if cfg.DatabaseURL != "" {
		// Pages in flight each need a connection now and then, besides the
		// API and the queue's own: pgxpool's default (4 on small machines)
		// would make them wait. A pool_max_conns in the URL still wins.
		var opts postgres.Options
		if !strings.Contains(cfg.DatabaseURL, "pool_max_conns") {
			opts.MaxConns = int32(max(10, cfg.QueueWorkers/4+8))
		}
		st, err := postgres.OpenOptions(ctx, cfg.DatabaseURL, log, opts)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		return st, nil
	}
	st, err := sqlite.Open(ctx, cfg.SQLitePath(), log)
	if err != nil {
		return nil, fmt.Errorf("open embedded store %s: %w", cfg.SQLitePath(), err)
	}
	return st, nil
}

// openRedisBacked returns the document cache and the limiter. With
// REDIS_URL both live in Redis and are shared by replicas (the cache behind
// a circuit breaker, so an outage degrades to no cache, never to failed
// scrapes); otherwise they are in-process. The cache is nil when
// CACHE_MAX_BYTES is 0 and there is no Redis.
func openRedisBacked(cfg Config, log *slog.Logger) (cache.Cache, limits.Limiter, scrape.ProfileLocker, func(), error) {
	if cfg.RedisURL != "" {
		opts, err := cache.RedisOptions(cfg.RedisURL)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		client := redis.NewClient(opts)
		c := cache.NewResilient(cache.NewRedis(client, "firegate:doc:", log), log, cache.ResilientOptions{})
		l := limits.NewRedis(client, "firegate:limits:", log, limits.RedisOptions{})
		return c, l, limiterLocker{l}, func() { client.Close() }, nil
	}
	var c cache.Cache
	if cfg.CacheMaxBytes > 0 {
		c = cache.NewMemory(cfg.CacheMaxBytes)
	}
	return c, limits.NewLocal(), scrape.NewMemoryLocker(), func() {}, nil
}

// newLLM returns the language model client, or nil (no model formats)
// when no endpoint is configured.
func newLLM(cfg Config, obs llm.Observer, log *slog.Logger) (*llm.Client, error) {
	if !cfg.LLMConfigured() {
		log.Info("no language model configured: json, summary, question, highlights and onlyCleanContent answer 400 SCRAPE_LLM_NOT_CONFIGURED")
		return nil, nil
	}
	retries := cfg.LLMMaxRetries
	if retries == 0 {
		retries = -1 // llm.Options: 0 is the default, negative is none
	}
	c, err := llm.New(llm.Options{BaseURL: cfg.LLMBaseURL, APIKey: cfg.LLMAPIKey, Model: cfg.LLMModel,
		StructuredOutput: cfg.LLMStructured, MaxConcurrency: cfg.LLMConcurrency, MaxRetries: retries, Log: log, Observer: obs})
	if err != nil {
		return nil, fmt.Errorf("language model: %w", err)
	}
	log.Info("language model configured", "model", cfg.LLMModel, "structured_output", cfg.LLMStructured,
		"max_concurrency", cfg.LLMConcurrency, "context_tokens", cfg.LLMContext)
	return c, nil
}

// mediaBackend is what serve needs of a media store: the engine stores,
// the API serves, and the janitor deletes expired files.
type mediaBackend interface {
	scrape.MediaStore
	scrape.MediaFiles
	httpapi.MediaFiles
	RunJanitor(ctx context.Context, every time.Duration)
}

// newMediaConverter returns the converter of the audio and video formats,
// or nil (they answer 400 naming FFMPEG_PATH) when ffmpeg is not found:
// the server runs without it.
func newMediaConverter(ctx context.Context, cfg Config, log *slog.Logger) scrape.MediaConverter {
	c, err := mediaconv.New(mediaconv.Options{FFmpegPath: cfg.FFmpegPath, MaxSeconds: cfg.MediaMaxSeconds, MaxBytes: cfg.MediaMaxBytes}, log)
	if err != nil {
		log.WarnContext(ctx, "ffmpeg not found: the audio and video formats answer 400 (install ffmpeg or set FFMPEG_PATH)", "ffmpeg_path", cfg.FFmpegPath, "err", err)
		return nil // a nil interface, not a nil *Converter
	}
	log.InfoContext(ctx, "audio and video formats enabled", "max_seconds", cfg.MediaMaxSeconds, "max_bytes", cfg.MediaMaxBytes)
	return c
}

// newMediaExtractor returns yt-dlp for the media of video platforms' pages
// (YTDLP_PATH, else yt-dlp on PATH), behind a guarded proxy of its own
// through which its every request passes the network policy, and the
// function that stops that proxy; nil (and a no-op) without yt-dlp.
func newMediaExtractor(ctx context.Context, cfg Config, policy *netguard.Policy, log *slog.Logger) (scrape.MediaExtractor, func()) {
	if _, err := exec.LookPath(cmp.Or(cfg.YtdlpPath, "yt-dlp")); err != nil {
		if cfg.YtdlpPath != "" {
			log.WarnContext(ctx, "YTDLP_PATH not found: video platforms' pages give no audio or video", "ytdlp_path", cfg.YtdlpPath, "err", err)
		}
		return nil, func() {}
	}
	proxy := netguard.NewProxy(policy, netguard.ProxyOptions{}, log)
	addr, err := proxy.Start("127.0.0.1:0")
	if err != nil {
		log.WarnContext(ctx, "yt-dlp off: its guarded proxy did not start", "err", err)
		return nil, func() {}
	}
	x, err := mediaconv.NewExtractor(mediaconv.ExtractorOptions{YtdlpPath: cfg.YtdlpPath, Proxy: "http://" + addr}, log)
	if err != nil {
		_ = proxy.Close()
		log.WarnContext(ctx, "yt-dlp off", "err", err)
		return nil, func() {}
	}
	log.InfoContext(ctx, "yt-dlp finds the media of pages that name none", "ytdlp_path", cfg.YtdlpPath)
	return &ytdlp{x: x, guard: proxy}, func() { _ = proxy.Close() }
}

// ytdlp runs yt-dlp behind its guarded proxy: through the proxy's main
// listener for a page fetched direct, through its route to the page's
// outbound proxy otherwise (the route checks every target against the
// network policy, then hands it to that proxy).
type ytdlp struct {
	x     *mediaconv.Extractor
	guard *netguard.Proxy
}

func (y *ytdlp) Extract(ctx context.Context, pageURL string, audioOnly bool, via *proxypool.Proxy) ([]mediaconv.Media, error) {
	route := ""
	if via != nil {
		addr, err := y.guard.Route("127.0.0.1", via)
		if err != nil {
			return nil, fmt.Errorf("yt-dlp: route to %s: %w", via, err)
		}
		route = "http://" + addr
	}
	return y.x.Extract(ctx, pageURL, audioOnly, route)
}

// mediaSecretFile is the file of a generated MEDIA_URL_SECRET.
const mediaSecretFile = "media-url-secret"

// mediaSigner signs and checks the audio and video links with
// MEDIA_URL_SECRET, or when it is unset with a secret generated on first
// start and kept beside the media files they link to: in MEDIA_DIR
// (DATA_DIR/media by default, shared by the processes that serve those
// files), or in DATA_DIR when the media are in S3. Links so outlive a
// restart; processes that share no such directory need MEDIA_URL_SECRET.
func mediaSigner(cfg Config, log *slog.Logger) (*media.Signer, error) {
	if cfg.MediaURLSecret != "" {
		return media.NewSigner([]byte(cfg.MediaURLSecret))
	}
	dir := cfg.MediaDir
	if cfg.MediaS3Endpoint != "" {
		dir = cfg.DataDir
	}
	path := filepath.Join(dir, mediaSecretFile)
	secret, err := readOrCreateSecret(path)
	if err != nil {
		return nil, fmt.Errorf("MEDIA_URL_SECRET (unset, so kept in %s): %w", path, err)
	}
	if secret.created {
		log.Info("generated the media link secret", "path", path)
	}
	s, err := media.NewSigner(secret.value)
	if err != nil {
		return nil, fmt.Errorf("MEDIA_URL_SECRET (unset, so kept in %s): %w", path, err)
	}
	return s, nil
}

// fileSecret is a secret read from its file, or made and written there.
type fileSecret struct {
	value   []byte
	created bool
}

// readOrCreateSecret reads the secret at path, or writes a new one (32
// random bytes in hex, mode 0600) when there is none; of processes racing
// to create it, one writes and the others read what it wrote.
func readOrCreateSecret(path string) (fileSecret, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		return fileSecret{value: bytes.TrimSpace(b)}, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return fileSecret{}, err
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return fileSecret{}, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fileSecret{}, err
	}
	// Written aside, then linked into place: the link fails if the file
	// exists, and the file is never seen half written.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-secret-*") // mode 0600
	if err != nil {
		return fileSecret{}, err
	}
	defer os.Remove(tmp.Name())
	value := []byte(hex.EncodeToString(raw[:]))
	_, werr := tmp.Write(append(value, '\n'))
	if err := errors.Join(werr, tmp.Close()); err != nil {
		return fileSecret{}, err
	}
	if err := os.Link(tmp.Name(), path); errors.Is(err, os.ErrExist) {
		b, err := os.ReadFile(path)
		return fileSecret{value: bytes.TrimSpace(b)}, err
	} else if err != nil {
		return fileSecret{}, err
	}
	return fileSecret{value: value, created: true}, nil
}

// openMedia returns the S3 media store when MEDIA_S3_ENDPOINT is set (its
// bucket checked within ctx), else the directory MEDIA_DIR.
func openMedia(ctx context.Context, cfg Config, log *slog.Logger) (mediaBackend, error) {
	if cfg.MediaS3Endpoint == "" {
		s, err := media.New(media.Options{Dir: cfg.MediaDir, TeamQuota: cfg.MediaTeamQuota}, log)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	s, err := media.NewS3Store(ctx, media.S3Options{Endpoint: cfg.MediaS3Endpoint, Bucket: cfg.MediaS3Bucket,
		Prefix: cfg.MediaS3Prefix, AccessKey: cfg.MediaS3Access, SecretKey: cfg.MediaS3Secret,
		Region: cfg.MediaS3Region, UseSSL: cfg.MediaS3UseSSL, TeamQuota: cfg.MediaTeamQuota}, log)
	if err != nil {
		return nil, err
	}
	log.InfoContext(ctx, "media stored in S3", "endpoint", cfg.MediaS3Endpoint, "bucket", cfg.MediaS3Bucket, "prefix", cfg.MediaS3Prefix)
	return s, nil
}

// limiterLocker holds a profile's saving lock as a concurrency slot of 1 in
// the shared limiter, so the lock spans replicas and expires with a crashed
// holder's lease.
type limiterLocker struct{ l limits.Limiter }

func (k limiterLocker) TryLock(ctx context.Context, key string) (func(), bool, error) {
	wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	release, _, err := k.l.Acquire(wctx, key, 1)
	if errors.Is(err, limits.ErrConcurrencyTimeout) && ctx.Err() == nil {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return release, true, nil
}

// profileStore adapts the durable store to scrape.ProfileStore.
type profileStore struct{ st store.Store }

func (p profileStore) LoadProfile(ctx context.Context, teamID, name string) ([]byte, error) {
	b, err := p.st.ProfileState(ctx, teamID, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return b, err
}

func (p profileStore) SaveProfile(ctx context.Context, teamID, name string, state []byte) error {
	return p.st.SaveProfileState(ctx, teamID, name, state)
}

// changeStore adapts the durable store to scrape.ChangeStore.
type changeStore struct{ st store.Store }

func (c changeStore) PreviousScrape(ctx context.Context, teamID, url, tag string) (scrape.Snapshot, bool, error) {
	s, err := c.st.PreviousScrape(ctx, teamID, url, tag)
	if errors.Is(err, store.ErrNotFound) {
		return scrape.Snapshot{}, false, nil
	}
	if err != nil {
		return scrape.Snapshot{}, false, err
	}
	return scrape.Snapshot{Markdown: s.Markdown, JSON: s.JSON, ScrapedAt: s.ScrapedAt}, true, nil
}

func (c changeStore) SaveScrape(ctx context.Context, teamID, url, tag string, s scrape.Snapshot) error {
	return c.st.SaveScrape(ctx, store.ScrapeSnapshot{TeamID: teamID, URL: url, Tag: tag, Markdown: s.Markdown, JSON: s.JSON, ScrapedAt: s.ScrapedAt})
}

// newHTTPServer is the API's http.Server: headers must arrive within
// HTTP_READ_HEADER_TIMEOUT and idle keep-alive connections close after
// HTTP_IDLE_TIMEOUT. The body deadline (HTTP_READ_TIMEOUT) is applied per
// request by the API (httpapi.Deps.BodyTimeout), which answers 408 with a
// clear code. There is no WriteTimeout: it would cut long scrapes and
// WebSocket watchers, which their own timeouts bound.
func newHTTPServer(ctx context.Context, cfg Config, h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.HTTPReadHeader,
		IdleTimeout:       cfg.HTTPIdle,
		MaxHeaderBytes:    1 << 20,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
}

// servePprof serves the runtime profiles on a separate listener, for
// operators; it stops with ctx.
func servePprof(ctx context.Context, addr string, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	log.InfoContext(ctx, "pprof listening", "addr", addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.ErrorContext(ctx, "pprof stopped", "err", err)
	}
}

func storeKind(cfg Config) string {
	if cfg.DatabaseURL != "" {
		return "postgres"
	}
	return "sqlite:" + cfg.SQLitePath()
}

const defaultTeam = "default"

// bootstrapKeys ensures BOOTSTRAP_API_KEY exists, and on a store with no key
// at all creates one, prints it once and writes it to DATA_DIR/api-key.
func bootstrapKeys(ctx context.Context, cfg Config, st store.Store, log *slog.Logger, stdout io.Writer) error {
	adm := cliAdmin(st, log)
	if k := cfg.BootstrapAPIKey; k != "" {
		if len(k) > auth.MaxKeyLen {
			return fmt.Errorf("BOOTSTRAP_API_KEY: longer than %d characters", auth.MaxKeyLen)
		}
		team, err := adm.EnsureTeam(ctx, defaultTeam)
		if err != nil {
			return err
		}
		_, err = st.CreateAPIKey(ctx, team.ID, apikey.Hash(k), apikey.Prefix(k))
		if err != nil && !errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("bootstrap key: %w", err)
		}
	}
	n, err := st.CountAPIKeys(ctx)
	if err != nil {
		return fmt.Errorf("count keys: %w", err)
	}
	if n > 0 {
		return nil
	}
	team, err := adm.EnsureTeam(ctx, defaultTeam)
	if err != nil {
		return err
	}
	key, _, err := adm.CreateKey(ctx, team.ID)
	if err != nil {
		return fmt.Errorf("first key: %w", err)
	}
	path := filepath.Join(cfg.DataDir, "api-key")
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fmt.Fprintf(stdout, "Created the first API key (team %q); it is shown once and saved to %s:\n\n    %s\n\n", defaultTeam, path, key)
	log.InfoContext(ctx, "created first api key", "team", defaultTeam, "key_prefix", apikey.Prefix(key), "path", path)
	return nil
}

// cliAdmin makes the sub-commands' changes, recorded in the teams'
// activity as the operator's through the command line.
func cliAdmin(st store.Store, log *slog.Logger) *admin.Admin {
	return admin.New(admin.Options{Store: st, Activity: activityStore(st), By: "operator (cli)", Log: log})
}

// keysCommand runs keys create, list and revoke.
func keysCommand(ctx context.Context, cfg Config, log *slog.Logger, sub string, f cliFlags, stdout io.Writer) error {
	if sub == "revoke" && f.id == "" {
		return errors.New("keys revoke: --id is required")
	}
	st, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer st.Close()
	adm := cliAdmin(st, log)
	switch sub {
	case "create":
		team, err := adm.EnsureTeam(ctx, f.team)
		if err != nil {
			return err
		}
		key, _, err := adm.CreateKey(ctx, team.ID)
		if err != nil {
			return err
		}
		if f.credits >= 0 {
			if _, err := adm.SetCredits(ctx, team.ID, f.credits); err != nil {
				return fmt.Errorf("set credits: %w", err)
			}
		}
		fmt.Fprintln(stdout, key)
		return nil
	case "list":
		team, err := st.TeamByName(ctx, f.team)
		if err != nil {
			return teamError(f.team, err)
		}
		keys, err := st.ListAPIKeys(ctx, team.ID)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tPREFIX\tCREATED\tSTATE")
		for _, k := range keys {
			state := "active"
			if k.RevokedAt != nil {
				state = "revoked " + k.RevokedAt.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s…\t%s\t%s\n", k.ID, k.Prefix, k.CreatedAt.UTC().Format(time.RFC3339), state)
		}
		return tw.Flush()
	case "revoke":
		if err := adm.RevokeKey(ctx, "", f.id); err != nil {
			return fmt.Errorf("revoke %s: %w", f.id, err)
		}
		fmt.Fprintln(stdout, "revoked", f.id)
		return nil
	default:
		return fmt.Errorf("keys: unknown sub-command %q", sub)
	}
}

// openTeam opens the store and finds a team by name, for the sub-commands;
// the caller closes the store.
func openTeam(ctx context.Context, cfg Config, log *slog.Logger, name string) (store.Store, store.Team, error) {
	st, err := openStore(ctx, cfg, log)
	if err != nil {
		return nil, store.Team{}, err
	}
	team, err := st.TeamByName(ctx, name)
	if err != nil {
		st.Close()
		return nil, store.Team{}, teamError(name, err)
	}
	return st, team, nil
}

// teamError is the error of a sub-command whose team could not be found:
// a team that does not exist says so (and how one is made), in words
// rather than the store's.
func teamError(name string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("team %q does not exist (a team is created with its first key: server keys create --team %s)", name, name)
	}
	return fmt.Errorf("team %q: %w", name, err)
}

// creditsCommand runs credits add, set, unlimited and show.
func creditsCommand(ctx context.Context, cfg Config, log *slog.Logger, sub string, f cliFlags, stdout io.Writer) error {
	if (sub == "add" || sub == "set") && f.amount < 0 {
		return fmt.Errorf("credits %s: --amount must be given and not negative", sub)
	}
	st, team, err := openTeam(ctx, cfg, log, f.team)
	if err != nil {
		return err
	}
	defer st.Close()
	adm := cliAdmin(st, log)
	switch sub {
	case "add":
		_, err = adm.AddCredits(ctx, team.ID, f.amount)
	case "set":
		_, err = adm.SetCredits(ctx, team.ID, f.amount)
	case "unlimited":
		err = adm.SetUnlimited(ctx, team.ID)
	case "show":
	default:
		return fmt.Errorf("credits: unknown sub-command %q", sub)
	}
	if err != nil {
		return fmt.Errorf("credits %s: %w", sub, err)
	}
	b, err := st.CreditBalance(ctx, team.ID)
	if err != nil {
		return err
	}
	if b.Unlimited {
		fmt.Fprintf(stdout, "team %s: unlimited\n", team.Name)
	} else {
		fmt.Fprintf(stdout, "team %s: %d of %d credits remaining\n", team.Name, b.Remaining, b.Plan)
	}
	return nil
}

// limitsCommand runs limits set.
func limitsCommand(ctx context.Context, cfg Config, log *slog.Logger, f cliFlags, stdout io.Writer) error {
	st, team, err := openTeam(ctx, cfg, log, f.team)
	if err != nil {
		return err
	}
	defer st.Close()
	l := store.TeamLimits{ZeroDataRetention: f.zdr, ZeroDataRetentionForced: f.zdrForced,
		Catalog: f.catalog, ThirdPartyTerms: f.terms}
	if f.concurrency >= 0 {
		l.ConcurrencyLimit = &f.concurrency
	}
	if f.rate >= 0 {
		l.RateMultiplier = &f.rate
	}
	if err := cliAdmin(st, log).SetLimits(ctx, team.ID, l); err != nil {
		return fmt.Errorf("limits set: %w", err)
	}
	fmt.Fprintf(stdout, "team %s: limits set\n", team.Name)
	return nil
}

// feedbackCommand runs feedback list: one line per feedback, newest first.
func feedbackCommand(ctx context.Context, cfg Config, log *slog.Logger, f cliFlags, stdout io.Writer) error {
	if f.limit < 1 {
		return errors.New("feedback list: --limit must be at least 1")
	}
	st, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer st.Close()
	fs := feedbackStore(st)
	if fs == nil {
		return errors.New("feedback list: this store keeps no feedback")
	}
	q := store.FeedbackQuery{Limit: f.limit}
	if f.team != "" {
		team, err := st.TeamByName(ctx, f.team)
		if err != nil {
			return teamError(f.team, err)
		}
		q.TeamID = team.ID
	}
	list, err := fs.ListFeedback(ctx, q)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CREATED\tTEAM\tENDPOINT\tID\tRATING\tNOTE\tDETAILS")
	for _, fb := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", fb.CreatedAt.UTC().Format(time.RFC3339), fb.TeamName, fb.Endpoint, fb.JobID,
			fb.Rating, oneLine(fb.Note, 80), oneLine(string(fb.Details), 120))
	}
	return tw.Flush()
}

// oneLine is s on one line, cut to at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	if s == "" {
		return "-"
	}
	return s
}

// openCatalog loads CATALOG_FILE (none: only the built-in provider) and
// the x-request-id keys of catalog calls kept in the store. A catalog file
// that does not load stops the server.
func openCatalog(cfg Config, st store.Store, policy *netguard.Policy, log *slog.Logger) (*catalog.Options, *catalog.Keys, error) {
	opts := &catalog.Options{Policy: policy, Log: log}
	if cfg.CatalogFile != "" {
		src, err := catalog.OpenSource(cfg.CatalogFile, os.LookupEnv, log)
		if err != nil {
			return nil, nil, fmt.Errorf("CATALOG_FILE: %w", err)
		}
		opts.Source = src
		log.Info("catalog loaded", "path", cfg.CatalogFile, "providers", len(src.Catalog().Providers))
	}
	ist, ok := st.(store.IdempotencyStore)
	if !ok {
		return nil, nil, errors.New("catalog: the store keeps no idempotency keys")
	}
	return opts, catalog.NewKeys(ist, log), nil
}

// openSearch returns the searcher of POST /v2/search: SearXNG at
// SEARXNG_ENDPOINT, or nil (search answers 400 SEARCH_NOT_CONFIGURED).
func openSearch(cfg Config, log *slog.Logger) (httpapi.Searcher, error) {
	if cfg.SearxngEndpoint == "" {
		return nil, nil
	}
	b, err := search.NewSearXNG(search.SearXNGOptions{Endpoint: cfg.SearxngEndpoint, Timeout: cfg.SearxngTimeout})
	if err != nil {
		return nil, err
	}
	log.Info("search engine configured", "searxng_endpoint", cfg.SearxngEndpoint)
	return search.New(b, search.Options{}, log), nil
}

// activityStore is the store's activity table for GET /v2/team/activity
// (both stores have one).
func activityStore(st store.Store) store.ActivityStore {
	if as, ok := st.(store.ActivityStore); ok {
		return as
	}
	return nil
}

// feedbackStore is the store's feedback table, or nil (POST /v2/feedback
// answers 501).
func feedbackStore(st store.Store) store.FeedbackStore {
	if fs, ok := st.(store.FeedbackStore); ok {
		return fs
	}
	return nil
}
