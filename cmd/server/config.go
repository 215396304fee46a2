package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/firegate/firegate/internal/mail"
	"github.com/firegate/firegate/internal/media"
	"github.com/firegate/firegate/internal/netguard"
	"github.com/firegate/firegate/internal/proxypool"
)

// Config is every setting of the server, read from the environment once.
type Config struct {
	Host            string         // HOST: listen host, default all interfaces
	Port            int            // PORT: listen port, default 3002
	DataDir         string         // DATA_DIR: embedded store and first-start key, default ./data
	DatabaseURL     string         // DATABASE_URL: Postgres; empty = embedded SQLite under DataDir
	AuthMode        string         // AUTH_MODE: "on" (default) or "off" (any or no key, one team)
	BootstrapAPIKey string         // BOOTSTRAP_API_KEY: a key ensured to exist at start
	AdminAPIKey     string         // ADMIN_API_KEY: the operator's key of /admin and the console's operator view; empty = none (/admin answers 404)
	AllowPrivate    bool           // ALLOW_PRIVATE_TARGETS: fetch loopback/private addresses
	AllowTargets    []string       // ALLOW_TARGETS: CIDRs and host names admitted although not public
	FetchMaxBytes   int64          // FETCH_MAX_BYTES: response size cap, default 10 MiB
	SitemapMaxBytes int64          // SITEMAP_MAX_BYTES: decompressed sitemap bytes one map or crawl kickoff reads, default 64 MiB
	ShutdownTimeout time.Duration  // SHUTDOWN_TIMEOUT: drain time on SIGTERM, default 30s
	HTTPReadHeader  time.Duration  // HTTP_READ_HEADER_TIMEOUT: time to send the request headers, default 10s
	HTTPReadBody    time.Duration  // HTTP_READ_TIMEOUT: time to send the request body once the headers are in, default 60s
	HTTPIdle        time.Duration  // HTTP_IDLE_TIMEOUT: how long an idle keep-alive connection is kept, default 120s
	LogLevel        slog.Level     // LOG_LEVEL: debug, info (default), warn, error
	LogFormat       string         // LOG_FORMAT: json (default) or text
	RedisURL        string         // REDIS_URL: shared cache; empty = in-process cache
	CacheMaxBytes   int64          // CACHE_MAX_BYTES: in-process cache bound, default 48 MiB
	CacheTTL        time.Duration  // CACHE_TTL: how long a cached document is kept, default 168h
	TeamConcurrency int            // TEAM_CONCURRENCY_LIMIT: concurrent scrapes per team, default 64, 0 = unlimited
	TeamRateMult    int            // TEAM_RATE_MULTIPLIER: multiplier of the base per-minute rates, default 0 = unlimited
	WatchersPerTeam int            // WATCHERS_PER_TEAM: WebSocket watchers one team may hold open per process, default 1000
	AuthFailures    int            // AUTH_FAILURES_PER_MINUTE: failed authentications per client address per minute before 429, default 20, 0 = no limit
	TrustedProxies  []netip.Prefix // TRUSTED_PROXIES: peers (IPs or CIDRs, comma-separated) whose X-Forwarded-For names the client; default none
	Browser         string         // BROWSER: "auto" (default: use Chrome when one is found) or "off"
	RenderPolicy    string         // RENDER_POLICY: "auto" (default: render fetched pages that look incomplete without their scripts) or "always" (render every fetched HTML page)
	ChromePath      string         // CHROME_PATH: Chrome binary; empty = chromium/google-chrome on PATH
	BrowserWSURL    string         // BROWSER_WS_URL: a running Chrome's DevTools address instead of a local one
	BrowserProxy    string         // BROWSER_PROXY_LISTEN: where the guarded proxy for Chrome listens, default 127.0.0.1:0
	BrowserProxyURL string         // BROWSER_PROXY_URL: that proxy's URL as a remote Chrome reaches it
	BrowserMaxTabs  int            // BROWSER_MAX_TABS: tabs open at once, default 2 per CPU
	BrowserTabHold  time.Duration  // BROWSER_MAX_TAB_HOLD: longest one render holds its tab, default (0) 120s
	InteractPerTeam int            // INTERACT_MAX_SESSIONS_PER_TEAM: active browser sessions per team, default 5
	InteractMax     int            // INTERACT_MAX_SESSIONS: browser sessions this process holds at once, default 20
	InteractJSMemMB int            // INTERACT_JS_MEMORY_MB: heap growth allowed to one code run before it is killed, default 256
	InteractLangs   []string       // INTERACT_RUNTIMES: languages of interact code run as programs in a bubblewrap sandbox (node, python, bash, comma-separated); empty = none
	InteractNodeMod string         // INTERACT_NODE_MODULES: node_modules directory with playwright-core for sandboxed node programs, required when node is enabled
	PublicURL       string         // PUBLIC_URL: base URL of this server in screenshot/PDF links
	MediaDir        string         // MEDIA_DIR: screenshots and PDFs, default DATA_DIR/media
	MediaTeamQuota  int64          // MEDIA_TEAM_QUOTA_BYTES: bytes of unexpired media one team may store, default 1 GiB, 0 = no quota
	MediaS3Endpoint string         // MEDIA_S3_ENDPOINT: S3-compatible host[:port] for media instead of MEDIA_DIR; empty = local files
	MediaS3Bucket   string         // MEDIA_S3_BUCKET: existing bucket, required with MEDIA_S3_ENDPOINT
	MediaS3Prefix   string         // MEDIA_S3_PREFIX: key prefix of media objects, default media/
	MediaS3Access   string         // MEDIA_S3_ACCESS_KEY: access key id; empty with the secret = anonymous
	MediaS3Secret   string         // MEDIA_S3_SECRET_KEY: secret access key
	MediaS3Region   string         // MEDIA_S3_REGION: bucket region; empty = asked of the service
	MediaS3UseSSL   bool           // MEDIA_S3_USE_SSL: https to the endpoint, default true
	MediaURLSecret  string         // MEDIA_URL_SECRET: HMAC secret of the audio/video links (32+ characters); empty = generated into MEDIA_DIR (DATA_DIR with S3)
	FFmpegPath      string         // FFMPEG_PATH: ffmpeg of the audio/video formats (ffprobe beside it); empty = ffmpeg on PATH; missing = the formats answer 400
	YtdlpPath       string         // YTDLP_PATH: yt-dlp for video platforms' media; empty = yt-dlp on PATH; missing = off
	MediaMaxSeconds int            // MEDIA_MAX_SECONDS: longest media the audio/video formats convert, default 3600
	MediaMaxBytes   int64          // MEDIA_MAX_BYTES: largest MP3/MP4 they make, default 512 MiB
	QueueWorkers    int            // QUEUE_WORKERS: crawl and batch pages scraped at once by this process, default 32; 0 = this process runs no jobs
	JobTTL          time.Duration  // JOB_TTL: how long crawl and batch results and agent runs are kept, default 24h
	JobTimeout      time.Duration  // JOB_TIMEOUT: longest run of one queued job, default 5m
	JobRescueAfter  time.Duration  // JOB_RESCUE_AFTER: a job running this long is presumed dead and retried elsewhere, default JOB_TIMEOUT + 1m
	MonitorTick     time.Duration  // MONITOR_TICK: how often a worker process looks for due monitor checks, default 15s
	SearxngEndpoint string         // SEARXNG_ENDPOINT: SearXNG base URL for /v2/search; empty = search answers 400 SEARCH_NOT_CONFIGURED
	SearxngTimeout  time.Duration  // SEARXNG_TIMEOUT: longest wait for one SearXNG answer, default 15s
	ThreatBlocklist string         // THREAT_BLOCKLIST_FILE: the operator's threat blocklist (hosts-file or one domain per line), enforced on every request and reloaded when it changes; empty = none
	CatalogFile     string         // CATALOG_FILE: the operator's tool catalog (JSON, or YAML by its .yaml/.yml name), reloaded on change; empty = only the built-in firecrawl provider
	WebhookSecret   string         // WEBHOOK_SECRET: HMAC-SHA256 secret of the X-Firecrawl-Signature header; empty = unsigned
	SMTPURL         string         // SMTP_URL: the SMTP relay of monitor emails, smtp://user:pass@host:587?from=addr (STARTTLS) or smtps://...; empty = notification.email answers 400 EMAIL_NOT_CONFIGURED
	SMTPFrom        string         // SMTP_FROM: sender of monitor emails, instead of SMTP_URL's from
	SMTP            mail.Config    // parsed from SMTP_URL and SMTP_FROM
	EmailSecret     string         // EMAIL_TOKEN_SECRET: HMAC secret (32+ characters) signing the confirm and unsubscribe links, required with SMTP_URL
	PprofAddr       string         // PPROF_ADDR: serve net/http/pprof here (e.g. 127.0.0.1:6060); empty = off
	Metrics         string         // METRICS: "on" (default: record series, serve GET /metrics unauthenticated) or "off"
	LLMBaseURL      string         // OPENAI_BASE_URL: OpenAI-compatible endpoint up to /v1; empty = no language model (https://api.openai.com/v1 when only OPENAI_API_KEY is set)
	LLMAPIKey       string         // OPENAI_API_KEY: bearer token of the endpoint, optional
	LLMModel        string         // MODEL_NAME: model of every call, required with an endpoint
	LLMStructured   string         // LLM_STRUCTURED_OUTPUT: json_schema (default), json_object or prompt
	LLMConcurrency  int            // LLM_MAX_CONCURRENCY: model calls in flight per process, default 4
	LLMContext      int            // LLM_CONTEXT_TOKENS: the model's context; longer pages are cut into parts, default 32768
	LLMMaxRetries   int            // LLM_MAX_RETRIES: retries of a call failing with 429, 5xx or a connection error, default 2

	// Outbound proxies (see internal/proxypool).
	BasicProxies    *proxypool.Pool // PROXY_URLS: the basic pool, comma-separated [CC=]scheme://[user:pass@]host:port (http, https, socks5); empty = direct
	EnhancedProxies *proxypool.Pool // ENHANCED_PROXY_URLS: the enhanced pool, same form; empty = the basic pool
}

// LLMConfigured reports whether a language model endpoint is set.
func (c Config) LLMConfigured() bool { return c.LLMBaseURL != "" }

// Addr is the listen address.
func (c Config) Addr() string { return net.JoinHostPort(c.Host, strconv.Itoa(c.Port)) }

// SQLitePath is the embedded store's file.
func (c Config) SQLitePath() string { return filepath.Join(c.DataDir, "firegate.db") }

// loadConfig reads the configuration through getenv (os.Getenv in main, a
// map in tests), applying defaults and returning every parse error.
func loadConfig(getenv func(string) string) (Config, error) {
	c := Config{
		Host:            getenv("HOST"),
		Port:            3002,
		DataDir:         "./data",
		DatabaseURL:     getenv("DATABASE_URL"),
		AuthMode:        "on",
		BootstrapAPIKey: getenv("BOOTSTRAP_API_KEY"),
		AdminAPIKey:     getenv("ADMIN_API_KEY"),
		PprofAddr:       getenv("PPROF_ADDR"),
		Metrics:         "on",
		Browser:         "auto",
		RenderPolicy:    "auto",
		ChromePath:      getenv("CHROME_PATH"),
		BrowserWSURL:    getenv("BROWSER_WS_URL"),
		BrowserProxy:    getenv("BROWSER_PROXY_LISTEN"),
		BrowserProxyURL: getenv("BROWSER_PROXY_URL"),
		PublicURL:       strings.TrimRight(getenv("PUBLIC_URL"), "/"),
		MediaDir:        getenv("MEDIA_DIR"),
		MediaS3Endpoint: getenv("MEDIA_S3_ENDPOINT"),
		MediaS3Bucket:   getenv("MEDIA_S3_BUCKET"),
		MediaS3Prefix:   "media/",
		MediaTeamQuota:  1 << 30,
		MediaS3Access:   getenv("MEDIA_S3_ACCESS_KEY"),
		MediaS3Secret:   getenv("MEDIA_S3_SECRET_KEY"),
		MediaS3Region:   getenv("MEDIA_S3_REGION"),
		MediaS3UseSSL:   true,
		MediaURLSecret:  getenv("MEDIA_URL_SECRET"),
		FFmpegPath:      strings.TrimSpace(getenv("FFMPEG_PATH")),
		YtdlpPath:       strings.TrimSpace(getenv("YTDLP_PATH")),
		MediaMaxSeconds: 3600,
		MediaMaxBytes:   512 << 20,
		RedisURL:        getenv("REDIS_URL"),
		CacheMaxBytes:   48 << 20,
		CacheTTL:        7 * 24 * time.Hour,
		TeamConcurrency: 64,
		WatchersPerTeam: 1000,
		InteractPerTeam: 5,
		InteractMax:     20,
		InteractJSMemMB: 256,
		AuthFailures:    20,
		FetchMaxBytes:   10 << 20,
		SitemapMaxBytes: 64 << 20,
		ShutdownTimeout: 30 * time.Second,
		HTTPReadHeader:  10 * time.Second,
		HTTPReadBody:    60 * time.Second,
		HTTPIdle:        120 * time.Second,
		QueueWorkers:    32,
		JobTTL:          24 * time.Hour,
		JobTimeout:      5 * time.Minute,
		MonitorTick:     15 * time.Second,
		WebhookSecret:   getenv("WEBHOOK_SECRET"),
		SMTPURL:         strings.TrimSpace(getenv("SMTP_URL")),
		SMTPFrom:        strings.TrimSpace(getenv("SMTP_FROM")),
		EmailSecret:     getenv("EMAIL_TOKEN_SECRET"),
		LLMBaseURL:      strings.TrimRight(getenv("OPENAI_BASE_URL"), "/"),
		LLMAPIKey:       getenv("OPENAI_API_KEY"),
		LLMModel:        getenv("MODEL_NAME"),
		LLMStructured:   "json_schema",
		LLMConcurrency:  4,
		LLMContext:      32768,
		LLMMaxRetries:   2,
		SearxngEndpoint: strings.TrimSpace(getenv("SEARXNG_ENDPOINT")),
		CatalogFile:     strings.TrimSpace(getenv("CATALOG_FILE")),
		SearxngTimeout:  15 * time.Second,
		ThreatBlocklist: strings.TrimSpace(getenv("THREAT_BLOCKLIST_FILE")),
		LogLevel:        slog.LevelInfo,
		LogFormat:       "json",
	}
	var errs []error
	if v := getenv("PORT"); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p < 0 || p > 65535 {
			errs = append(errs, fmt.Errorf("PORT: %q is not a port number", v))
		}
		c.Port = p
	}
	if v := getenv("DATA_DIR"); v != "" {
		c.DataDir = v
	}
	if v := getenv("AUTH_MODE"); v != "" {
		c.AuthMode = strings.ToLower(v)
	}
	if v := getenv("ALLOW_PRIVATE_TARGETS"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("ALLOW_PRIVATE_TARGETS: %q is not a boolean", v))
		}
		c.AllowPrivate = b
	}
	if v := getenv("ALLOW_TARGETS"); v != "" {
		for e := range strings.SplitSeq(v, ",") {
			if e = strings.TrimSpace(e); e != "" {
				c.AllowTargets = append(c.AllowTargets, e)
			}
		}
		if _, err := netguard.New(netguard.Options{Allow: c.AllowTargets}); err != nil {
			errs = append(errs, fmt.Errorf("ALLOW_TARGETS: %w", err))
		}
	}
	for _, pv := range []struct {
		name string
		dst  **proxypool.Pool
	}{{"PROXY_URLS", &c.BasicProxies}, {"ENHANCED_PROXY_URLS", &c.EnhancedProxies}} {
		if v := getenv(pv.name); strings.TrimSpace(v) != "" {
			pool, err := proxypool.Parse(v, proxypool.Options{})
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", pv.name, err))
			}
			*pv.dst = pool
		}
	}
	if c.BrowserProxyURL != "" {
		if u, err := url.Parse(c.BrowserProxyURL); err != nil || u.Scheme != "http" || u.Host == "" {
			errs = append(errs, fmt.Errorf("BROWSER_PROXY_URL: %q is not an http://host:port URL", c.BrowserProxyURL))
		}
	}
	if v := getenv("FETCH_MAX_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1024 {
			errs = append(errs, fmt.Errorf("FETCH_MAX_BYTES: %q must be an integer of at least 1024", v))
		}
		c.FetchMaxBytes = n
	}
	if v := getenv("SITEMAP_MAX_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1024 {
			errs = append(errs, fmt.Errorf("SITEMAP_MAX_BYTES: %q must be an integer of at least 1024", v))
		}
		c.SitemapMaxBytes = n
	}
	if v := getenv("SHUTDOWN_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			errs = append(errs, fmt.Errorf("SHUTDOWN_TIMEOUT: %q is not a duration like 30s", v))
		}
		c.ShutdownTimeout = d
	}
	for _, d := range []struct {
		name string
		dst  *time.Duration
	}{{"HTTP_READ_HEADER_TIMEOUT", &c.HTTPReadHeader}, {"HTTP_READ_TIMEOUT", &c.HTTPReadBody}, {"HTTP_IDLE_TIMEOUT", &c.HTTPIdle},
		{"SEARXNG_TIMEOUT", &c.SearxngTimeout}, {"BROWSER_MAX_TAB_HOLD", &c.BrowserTabHold}} {
		if v := getenv(d.name); v != "" {
			t, err := time.ParseDuration(v)
			if err != nil || t <= 0 {
				errs = append(errs, fmt.Errorf("%s: %q is not a positive duration like 10s", d.name, v))
			}
			*d.dst = t
		}
	}
	if v := getenv("CACHE_MAX_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("CACHE_MAX_BYTES: %q must be a non-negative integer (0 disables the in-process cache)", v))
		}
		c.CacheMaxBytes = n
	}
	if v := getenv("CACHE_TTL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("CACHE_TTL: %q is not a positive duration like 168h", v))
		}
		c.CacheTTL = d
	}
	if v := getenv("TEAM_CONCURRENCY_LIMIT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("TEAM_CONCURRENCY_LIMIT: %q must be a non-negative integer (0 = unlimited)", v))
		}
		c.TeamConcurrency = n
	}
	if v := getenv("TEAM_RATE_MULTIPLIER"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("TEAM_RATE_MULTIPLIER: %q must be a non-negative integer (0 = unlimited)", v))
		}
		c.TeamRateMult = n
	}
	for _, e := range []struct {
		name string
		dst  *int
	}{{"INTERACT_MAX_SESSIONS_PER_TEAM", &c.InteractPerTeam}, {"INTERACT_MAX_SESSIONS", &c.InteractMax}, {"INTERACT_JS_MEMORY_MB", &c.InteractJSMemMB}} {
		if v := getenv(e.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				errs = append(errs, fmt.Errorf("%s: %q must be a positive integer", e.name, v))
			}
			*e.dst = n
		}
	}
	if v := getenv("WATCHERS_PER_TEAM"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("WATCHERS_PER_TEAM: %q must be a positive integer", v))
		}
		c.WatchersPerTeam = n
	}
	if v := getenv("AUTH_FAILURES_PER_MINUTE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("AUTH_FAILURES_PER_MINUTE: %q must be a non-negative integer (0 = no limit)", v))
		}
		c.AuthFailures = n
	}
	if v := getenv("TRUSTED_PROXIES"); v != "" {
		for _, f := range strings.Split(v, ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			p, err := netip.ParsePrefix(f)
			if err != nil {
				a, aerr := netip.ParseAddr(f)
				if aerr != nil {
					errs = append(errs, fmt.Errorf("TRUSTED_PROXIES: %q is not an IP address or CIDR", f))
					continue
				}
				p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
			}
			c.TrustedProxies = append(c.TrustedProxies, p.Masked())
		}
	}
	if v := getenv("QUEUE_WORKERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 10000 {
			errs = append(errs, fmt.Errorf("QUEUE_WORKERS: %q must be an integer from 0 to 10000", v))
		}
		c.QueueWorkers = n
	}
	for _, d := range []struct {
		name string
		dst  *time.Duration
	}{{"JOB_TTL", &c.JobTTL}, {"JOB_TIMEOUT", &c.JobTimeout}, {"JOB_RESCUE_AFTER", &c.JobRescueAfter}, {"MONITOR_TICK", &c.MonitorTick}} {
		if v := getenv(d.name); v != "" {
			t, err := time.ParseDuration(v)
			if err != nil || t <= 0 {
				errs = append(errs, fmt.Errorf("%s: %q is not a positive duration like 5m", d.name, v))
			}
			*d.dst = t
		}
	}
	if c.JobRescueAfter == 0 {
		c.JobRescueAfter = c.JobTimeout + time.Minute
	} else if c.JobRescueAfter <= c.JobTimeout {
		errs = append(errs, errors.New("JOB_RESCUE_AFTER: must be longer than JOB_TIMEOUT"))
	}
	if v := getenv("BROWSER"); v != "" {
		c.Browser = strings.ToLower(v)
	}
	if v := getenv("RENDER_POLICY"); v != "" {
		c.RenderPolicy = strings.ToLower(strings.TrimSpace(v))
	}
	if v := getenv("BROWSER_MAX_TABS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("BROWSER_MAX_TABS: %q must be a positive integer", v))
		}
		c.BrowserMaxTabs = n
	}
	if v := getenv("LOG_LEVEL"); v != "" {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			errs = append(errs, fmt.Errorf("LOG_LEVEL: %q is not one of debug, info, warn, error", v))
		}
	}
	if v := getenv("LOG_FORMAT"); v != "" {
		c.LogFormat = strings.ToLower(v)
	}
	if v := getenv("METRICS"); v != "" {
		c.Metrics = strings.ToLower(v)
	}
	if v := getenv("MEDIA_TEAM_QUOTA_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("MEDIA_TEAM_QUOTA_BYTES: %q must be a non-negative integer (0 = no quota)", v))
		}
		c.MediaTeamQuota = n
	}
	if v := getenv("MEDIA_MAX_SECONDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("MEDIA_MAX_SECONDS: %q must be a positive number of seconds", v))
		}
		c.MediaMaxSeconds = n
	}
	if v := getenv("MEDIA_MAX_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("MEDIA_MAX_BYTES: %q must be a positive number of bytes", v))
		}
		c.MediaMaxBytes = n
	}
	if v := getenv("MEDIA_S3_PREFIX"); v != "" {
		c.MediaS3Prefix = v
	}
	if v := getenv("MEDIA_S3_USE_SSL"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("MEDIA_S3_USE_SSL: %q is not a boolean", v))
		}
		c.MediaS3UseSSL = b
	}
	errs = append(errs, c.loadRuntimes(getenv)...)
	errs = append(errs, c.loadLLM(getenv)...)
	errs = append(errs, c.loadSMTP()...)
	if c.MediaDir == "" {
		c.MediaDir = filepath.Join(c.DataDir, "media")
	}
	if c.PublicURL == "" {
		host := c.Host
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "localhost"
		}
		c.PublicURL = "http://" + net.JoinHostPort(host, strconv.Itoa(c.Port))
	}
	errs = append(errs, c.validate()...)
	return c, errors.Join(errs...)
}

// loadRuntimes reads INTERACT_RUNTIMES and INTERACT_NODE_MODULES.
func (c *Config) loadRuntimes(getenv func(string) string) []error {
	var errs []error
	c.InteractNodeMod = getenv("INTERACT_NODE_MODULES")
	for f := range strings.SplitSeq(getenv("INTERACT_RUNTIMES"), ",") {
		f = strings.TrimSpace(f)
		switch f {
		case "":
		case "node", "python", "bash":
			if !slices.Contains(c.InteractLangs, f) {
				c.InteractLangs = append(c.InteractLangs, f)
			}
		default:
			errs = append(errs, fmt.Errorf("INTERACT_RUNTIMES: %q is not one of node, python, bash", f))
		}
	}
	if slices.Contains(c.InteractLangs, "node") && c.InteractNodeMod == "" {
		errs = append(errs, errors.New("INTERACT_RUNTIMES: node programs need INTERACT_NODE_MODULES, a node_modules directory with playwright-core (npm install playwright-core)"))
	}
	return errs
}

// minAdminKey is the shortest ADMIN_API_KEY accepted.
const minAdminKey = 16

// validate checks cross-field rules.
func (c Config) validate() []error {
	var errs []error
	if c.AuthMode != "on" && c.AuthMode != "off" {
		errs = append(errs, fmt.Errorf("AUTH_MODE: %q must be on or off", c.AuthMode))
	}
	if c.RenderPolicy != "auto" && c.RenderPolicy != "always" {
		errs = append(errs, fmt.Errorf("RENDER_POLICY: %q must be auto or always", c.RenderPolicy))
	}
	if c.Browser != "auto" && c.Browser != "off" {
		errs = append(errs, fmt.Errorf("BROWSER: %q must be auto or off", c.Browser))
	}
	if c.PublicURL != "" && !strings.HasPrefix(c.PublicURL, "http://") && !strings.HasPrefix(c.PublicURL, "https://") {
		errs = append(errs, errors.New("PUBLIC_URL: must be an http:// or https:// URL"))
	}
	if c.LogFormat != "json" && c.LogFormat != "text" {
		errs = append(errs, fmt.Errorf("LOG_FORMAT: %q must be json or text", c.LogFormat))
	}
	if c.Metrics != "on" && c.Metrics != "off" {
		errs = append(errs, fmt.Errorf("METRICS: %q must be on or off", c.Metrics))
	}
	if c.RedisURL != "" && !strings.HasPrefix(c.RedisURL, "redis://") && !strings.HasPrefix(c.RedisURL, "rediss://") {
		errs = append(errs, errors.New("REDIS_URL: must be a redis:// or rediss:// URL"))
	}
	if c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
		errs = append(errs, errors.New("DATABASE_URL: must be a postgres:// URL"))
	}
	if c.SearxngEndpoint != "" {
		if u, err := url.Parse(c.SearxngEndpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("SEARXNG_ENDPOINT: %q must be an http:// or https:// URL such as http://searxng:8080", c.SearxngEndpoint))
		}
	}
	errs = append(errs, c.validateMediaS3()...)
	if c.AdminAPIKey != "" && len(c.AdminAPIKey) < minAdminKey {
		errs = append(errs, fmt.Errorf("ADMIN_API_KEY: at least %d characters (e.g. openssl rand -hex 32), or unset for no /admin routes", minAdminKey))
	}
	if c.MediaURLSecret != "" && len(c.MediaURLSecret) < media.MinSecretLen {
		errs = append(errs, fmt.Errorf("MEDIA_URL_SECRET: at least %d characters (e.g. openssl rand -hex 32), or unset to have one generated beside the media", media.MinSecretLen))
	}
	return errs
}

// loadLLM reads the numeric and enum language model settings and checks
// the endpoint ones together.
func (c *Config) loadLLM(getenv func(string) string) []error {
	var errs []error
	if c.LLMBaseURL == "" && c.LLMAPIKey != "" {
		c.LLMBaseURL = "https://api.openai.com/v1"
	}
	if v := getenv("LLM_STRUCTURED_OUTPUT"); v != "" {
		c.LLMStructured = strings.ToLower(v)
		if c.LLMStructured != "json_schema" && c.LLMStructured != "json_object" && c.LLMStructured != "prompt" {
			errs = append(errs, fmt.Errorf("LLM_STRUCTURED_OUTPUT: %q must be json_schema, json_object or prompt", v))
		}
	}
	for _, n := range []struct {
		name string
		dst  *int
		min  int
	}{{"LLM_MAX_CONCURRENCY", &c.LLMConcurrency, 1}, {"LLM_CONTEXT_TOKENS", &c.LLMContext, 1024}, {"LLM_MAX_RETRIES", &c.LLMMaxRetries, 0}} {
		v := getenv(n.name)
		if v == "" {
			continue
		}
		i, err := strconv.Atoi(v)
		if err != nil || i < n.min || i > 10_000_000 {
			errs = append(errs, fmt.Errorf("%s: %q must be an integer of at least %d", n.name, v, n.min))
			continue
		}
		*n.dst = i
	}
	if c.LLMBaseURL != "" {
		if !strings.HasPrefix(c.LLMBaseURL, "http://") && !strings.HasPrefix(c.LLMBaseURL, "https://") {
			errs = append(errs, errors.New("OPENAI_BASE_URL: must be an http:// or https:// URL (such as http://localhost:11434/v1)"))
		}
		if c.LLMModel == "" {
			errs = append(errs, errors.New("MODEL_NAME: required with OPENAI_BASE_URL or OPENAI_API_KEY"))
		}
	}
	return errs
}

// minEmailSecret is the shortest EMAIL_TOKEN_SECRET accepted.
const minEmailSecret = 32

// loadSMTP parses SMTP_URL and SMTP_FROM and checks EMAIL_TOKEN_SECRET,
// which must come with them (and only with them).
func (c *Config) loadSMTP() []error {
	if c.SMTPURL == "" {
		var errs []error
		if c.SMTPFrom != "" {
			errs = append(errs, errors.New("SMTP_FROM: set SMTP_URL too (the relay that sends monitor emails)"))
		}
		if c.EmailSecret != "" {
			errs = append(errs, errors.New("EMAIL_TOKEN_SECRET: set SMTP_URL too (the relay that sends monitor emails)"))
		}
		return errs
	}
	var errs []error
	sc, err := mail.ParseURL(c.SMTPURL, c.SMTPFrom)
	if err != nil {
		// The URL may hold a password: the message names the problem only.
		errs = append(errs, fmt.Errorf("SMTP_URL: %v (want smtp://user:pass@host:587?from=addr or smtps://...)", err))
	}
	c.SMTP = sc
	if c.PublicURL == "" {
		// The default (this host and port) is rarely what a recipient's
		// browser reaches.
		errs = append(errs, errors.New("PUBLIC_URL: required with SMTP_URL: the confirm and unsubscribe links in the emails start with it"))
	}
	if len(c.EmailSecret) < minEmailSecret {
		errs = append(errs, fmt.Errorf("EMAIL_TOKEN_SECRET: required with SMTP_URL, at least %d characters (e.g. openssl rand -hex 32)", minEmailSecret))
	}
	return errs
}

// validateMediaS3 checks the S3 media settings, which must be complete when
// MEDIA_S3_ENDPOINT is set and unused otherwise.
func (c Config) validateMediaS3() []error {
	var errs []error
	if c.MediaS3Endpoint == "" {
		if c.MediaS3Bucket != "" {
			errs = append(errs, errors.New("MEDIA_S3_ENDPOINT: required with MEDIA_S3_BUCKET (media would otherwise go to MEDIA_DIR)"))
		}
		return errs
	}
	if strings.Contains(c.MediaS3Endpoint, "/") {
		errs = append(errs, fmt.Errorf("MEDIA_S3_ENDPOINT: %q must be host[:port] without scheme or path (MEDIA_S3_USE_SSL chooses https)", c.MediaS3Endpoint))
	}
	if c.MediaS3Bucket == "" {
		errs = append(errs, errors.New("MEDIA_S3_BUCKET: required with MEDIA_S3_ENDPOINT"))
	}
	if strings.HasPrefix(c.MediaS3Prefix, "/") {
		errs = append(errs, fmt.Errorf("MEDIA_S3_PREFIX: %q must not start with /", c.MediaS3Prefix))
	}
	if c.MediaS3Access != "" && c.MediaS3Secret == "" {
		errs = append(errs, errors.New("MEDIA_S3_SECRET_KEY: required with MEDIA_S3_ACCESS_KEY"))
	}
	if c.MediaS3Access == "" && c.MediaS3Secret != "" {
		errs = append(errs, errors.New("MEDIA_S3_ACCESS_KEY: required with MEDIA_S3_SECRET_KEY"))
	}
	return errs
}

// netPolicy builds the network policy every path out of the server dials
// through (ALLOW_PRIVATE_TARGETS, ALLOW_TARGETS).
func (c Config) netPolicy() (*netguard.Policy, error) {
	return netguard.New(netguard.Options{AllowAll: c.AllowPrivate, Allow: c.AllowTargets})
}
