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
	"github.com/firegate/firegate/internal/netguard"
	"github.com/firegate/firegate/internal/proxypool"
)

// Config is every setting of the server, read from the environment once
// by loadConfig. The comment of a field names its variable; the variable's
// row in settings (settings.go) says what it does and how it is read.
type Config struct {
	Host            string         // HOST
	Port            int            // PORT
	DataDir         string         // DATA_DIR
	DatabaseURL     string         // DATABASE_URL
	AuthMode        string         // AUTH_MODE
	BootstrapAPIKey string         // BOOTSTRAP_API_KEY
	AdminAPIKey     string         // ADMIN_API_KEY
	AllowPrivate    bool           // ALLOW_PRIVATE_TARGETS
	AllowTargets    []string       // ALLOW_TARGETS
	FetchMaxBytes   int64          // FETCH_MAX_BYTES
	SitemapMaxBytes int64          // SITEMAP_MAX_BYTES
	ShutdownTimeout time.Duration  // SHUTDOWN_TIMEOUT
	HTTPReadHeader  time.Duration  // HTTP_READ_HEADER_TIMEOUT
	HTTPReadBody    time.Duration  // HTTP_READ_TIMEOUT
	HTTPIdle        time.Duration  // HTTP_IDLE_TIMEOUT
	LogLevel        slog.Level     // LOG_LEVEL
	LogFormat       string         // LOG_FORMAT
	RedisURL        string         // REDIS_URL
	CacheMaxBytes   int64          // CACHE_MAX_BYTES
	CacheTTL        time.Duration  // CACHE_TTL
	TeamConcurrency int            // TEAM_CONCURRENCY_LIMIT
	TeamRateMult    int            // TEAM_RATE_MULTIPLIER
	WatchersPerTeam int            // WATCHERS_PER_TEAM
	AuthFailures    int            // AUTH_FAILURES_PER_MINUTE
	TrustedProxies  []netip.Prefix // TRUSTED_PROXIES
	Browser         string         // BROWSER
	RenderPolicy    string         // RENDER_POLICY
	ChromePath      string         // CHROME_PATH
	BrowserWSURL    string         // BROWSER_WS_URL
	BrowserProxy    string         // BROWSER_PROXY_LISTEN
	BrowserProxyURL string         // BROWSER_PROXY_URL
	BrowserMaxTabs  int            // BROWSER_MAX_TABS
	BrowserTabHold  time.Duration  // BROWSER_MAX_TAB_HOLD
	InteractPerTeam int            // INTERACT_MAX_SESSIONS_PER_TEAM
	InteractMax     int            // INTERACT_MAX_SESSIONS
	InteractJSMemMB int            // INTERACT_JS_MEMORY_MB
	InteractLangs   []string       // INTERACT_RUNTIMES
	InteractNodeMod string         // INTERACT_NODE_MODULES
	PublicURL       string         // PUBLIC_URL
	MediaDir        string         // MEDIA_DIR
	MediaTeamQuota  int64          // MEDIA_TEAM_QUOTA_BYTES
	MediaS3Endpoint string         // MEDIA_S3_ENDPOINT
	MediaS3Bucket   string         // MEDIA_S3_BUCKET
	MediaS3Prefix   string         // MEDIA_S3_PREFIX
	MediaS3Access   string         // MEDIA_S3_ACCESS_KEY
	MediaS3Secret   string         // MEDIA_S3_SECRET_KEY
	MediaS3Region   string         // MEDIA_S3_REGION
	MediaS3UseSSL   bool           // MEDIA_S3_USE_SSL
	MediaURLSecret  string         // MEDIA_URL_SECRET
	FFmpegPath      string         // FFMPEG_PATH
	YtdlpPath       string         // YTDLP_PATH
	MediaMaxSeconds int            // MEDIA_MAX_SECONDS
	MediaMaxBytes   int64          // MEDIA_MAX_BYTES
	QueueWorkers    int            // QUEUE_WORKERS
	JobTTL          time.Duration  // JOB_TTL
	JobTimeout      time.Duration  // JOB_TIMEOUT
	JobRescueAfter  time.Duration  // JOB_RESCUE_AFTER
	MonitorTick     time.Duration  // MONITOR_TICK
	SearxngEndpoint string         // SEARXNG_ENDPOINT
	SearxngTimeout  time.Duration  // SEARXNG_TIMEOUT
	ThreatBlocklist string         // THREAT_BLOCKLIST_FILE
	CatalogFile     string         // CATALOG_FILE
	WebhookSecret   string         // WEBHOOK_SECRET
	SMTPURL         string         // SMTP_URL
	SMTPFrom        string         // SMTP_FROM
	SMTP            mail.Config    // parsed from SMTP_URL and SMTP_FROM
	EmailSecret     string         // EMAIL_TOKEN_SECRET
	PprofAddr       string         // PPROF_ADDR
	Metrics         string         // METRICS
	LLMBaseURL      string         // OPENAI_BASE_URL
	LLMAPIKey       string         // OPENAI_API_KEY
	LLMModel        string         // MODEL_NAME
	LLMStructured   string         // LLM_STRUCTURED_OUTPUT
	LLMConcurrency  int            // LLM_MAX_CONCURRENCY
	LLMContext      int            // LLM_CONTEXT_TOKENS
	LLMMaxRetries   int            // LLM_MAX_RETRIES

	// Outbound proxies (see internal/proxypool).
	BasicProxies    *proxypool.Pool // PROXY_URLS
	EnhancedProxies *proxypool.Pool // ENHANCED_PROXY_URLS
}

// LLMConfigured reports whether a language model endpoint is set.
func (c Config) LLMConfigured() bool { return c.LLMBaseURL != "" }

// Addr is the listen address.
func (c Config) Addr() string { return net.JoinHostPort(c.Host, strconv.Itoa(c.Port)) }

// SQLitePath is the embedded store's file.
func (c Config) SQLitePath() string { return filepath.Join(c.DataDir, "firegate.db") }

// loadConfig reads the configuration through getenv (os.Getenv in main, a
// map in tests): every row of the settings table, then the defaults that
// follow from other settings and the rules between them. It returns every
// error, each naming its variable.
func loadConfig(getenv func(string) string) (Config, error) {
	var c Config
	var errs []error
	for _, s := range c.settings() {
		errs = append(errs, s.load(getenv)...)
	}
	errs = append(errs, c.derive()...)
	return c, errors.Join(errs...)
}

// derive fills the defaults that follow from other settings and checks the
// rules between settings.
func (c *Config) derive() []error {
	var errs []error
	if c.JobRescueAfter == 0 {
		c.JobRescueAfter = c.JobTimeout + time.Minute
	} else if c.JobRescueAfter <= c.JobTimeout {
		errs = append(errs, errors.New("JOB_RESCUE_AFTER: must be longer than JOB_TIMEOUT"))
	}
	if slices.Contains(c.InteractLangs, "node") && c.InteractNodeMod == "" {
		errs = append(errs, errors.New("INTERACT_RUNTIMES: node programs need INTERACT_NODE_MODULES, a node_modules directory with playwright-core (npm install playwright-core)"))
	}
	errs = append(errs, c.deriveLLM()...)
	errs = append(errs, c.loadSMTP()...) // before PUBLIC_URL's default: SMTP_URL requires it set
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
	return append(errs, c.validateMediaS3()...)
}

// httpHostPort checks BROWSER_PROXY_URL: http://host:port.
func httpHostPort(v string) error {
	if u, err := url.Parse(v); err != nil || u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("%q is not an http://host:port URL", v)
	}
	return nil
}

// hostPort checks MEDIA_S3_ENDPOINT: host[:port], no scheme or path.
func hostPort(v string) error {
	if strings.Contains(v, "/") {
		return fmt.Errorf("%q must be host[:port] without scheme or path (MEDIA_S3_USE_SSL chooses https)", v)
	}
	return nil
}

// searxngURL checks SEARXNG_ENDPOINT: an http(s) URL with a host.
func searxngURL(v string) error {
	if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q must be an http:// or https:// URL such as http://searxng:8080", v)
	}
	return nil
}

// deriveLLM defaults the endpoint to OpenAI's when only a key is set, and
// requires a model with an endpoint.
func (c *Config) deriveLLM() []error {
	if c.LLMBaseURL == "" && c.LLMAPIKey != "" {
		c.LLMBaseURL = "https://api.openai.com/v1"
	}
	if c.LLMBaseURL != "" && c.LLMModel == "" {
		return []error{errors.New("MODEL_NAME: required with OPENAI_BASE_URL or OPENAI_API_KEY")}
	}
	return nil
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
