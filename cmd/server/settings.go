package main

import (
	"fmt"
	"math"

	"github.com/firegate/firegate/internal/media"
)

// setting is one environment variable of the server. The table of them
// (settings) drives loadConfig, "server help config" and
// docs/configuration.md (written from it by TestConfigurationDoc -update).
type setting struct {
	name string // the environment variable
	val  value  // its destination in Config, parser and bounds
	// def is the default, set through val before the variable is read;
	// empty: the field's zero value (or a default derived after the table,
	// which shown describes).
	def string
	// shown is how the reference shows the default: a note after def
	// ("64 MiB"), or when def is empty the whole default ("2 per CPU").
	shown string
	doc   string // what it does, markdown: the reference's table cell and the help
	more  string // optional: the long explanation, a paragraph below the table
}

// load sets the default, then the variable's value when it is set. Its
// errors name the variable, one per problem.
func (s setting) load(getenv func(string) string) []error {
	if s.def != "" {
		if err := s.val.set(s.def); err != nil {
			return []error{fmt.Errorf("%s: default %q: %w", s.name, s.def, err)} // a bad row
		}
	}
	v := getenv(s.name)
	if v == "" {
		return nil
	}
	err := s.val.set(v)
	if err == nil {
		return nil
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			errs = append(errs, fmt.Errorf("%s: %w", s.name, e))
		}
		return errs
	}
	return []error{fmt.Errorf("%s: %w", s.name, err)}
}

// shownDefault is the default as the reference and the help show it.
func (s setting) shownDefault() string {
	switch {
	case s.def != "" && s.shown != "":
		return "`" + s.def + "` (" + s.shown + ")"
	case s.def != "":
		return "`" + s.def + "`"
	case s.shown != "":
		return s.shown
	}
	return "empty"
}

// minAdminKey is the shortest ADMIN_API_KEY accepted.
const minAdminKey = 16

// settings is the table of the server's environment variables, each
// writing into a field of c, in the order the reference lists them.
//
// To add a variable: add a field to Config and its row here, run
// `go test ./cmd/server -run TestConfigurationDoc -update` (rewrites
// docs/configuration.md) and document it in .env.example.
func (c *Config) settings() []setting {
	return []setting{
		{name: "HOST", val: text(&c.Host), shown: "all interfaces",
			doc: "listen host"},
		{name: "PORT", val: integer(&c.Port, intBounds{0, 65535, "is not a port number"}), def: "3002",
			doc: "listen port"},
		{name: "DATA_DIR", val: text(&c.DataDir), def: "./data",
			doc: "embedded SQLite store and the first-start key file; the database (and its `-wal`, `-shm`) and key files are made 0600, directories the server creates 0700, whatever the mode of `DATA_DIR`"},
		{name: "DATABASE_URL", val: text(&c.DatabaseURL).checked(hasPrefix("must be a postgres:// URL", "postgres://", "postgresql://")),
			doc: "`postgres://...`: use Postgres instead of the embedded store"},
		{name: "AUTH_MODE", val: oneOf(&c.AuthMode, "on", "off"), def: "on",
			doc: "`off` accepts any or no key: every request is one unlimited team's, created in the store at start as `self-hosted (AUTH_MODE=off)` with the id `00000000-0000-0000-0000-000000000000`"},
		{name: "BOOTSTRAP_API_KEY", val: text(&c.BootstrapAPIKey),
			doc: "a key ensured to exist at start (team `default`)"},
		{name: "ADMIN_API_KEY", val: text(&c.AdminAPIKey).checked(minLen(minAdminKey, fmt.Sprintf("at least %d characters (e.g. openssl rand -hex 32), or unset for no /admin routes", minAdminKey))),
			doc: "the operator's key (16+ characters) of the `/admin` routes and the console's Operator view; empty: no operator view, `/admin` answers 404"},
		{name: "ALLOW_PRIVATE_TARGETS", val: boolean(&c.AllowPrivate), def: "false",
			doc: "allow every address: loopback, private, link-local, metadata, the machine's own (local use and tests only)"},
		{name: "ALLOW_TARGETS", val: targets(&c.AllowTargets),
			doc: "comma-separated CIDRs, addresses and host names (`*.corp.example` for subdomains) allowed although not public, e.g. `10.1.2.0/24,wiki.internal`; everything else stays refused"},
		{name: "FETCH_MAX_BYTES", val: integer(&c.FetchMaxBytes, atLeast(1024)), def: "10485760", shown: "10 MiB",
			doc: "largest response body read; larger ones are truncated with a warning"},
		{name: "SITEMAP_MAX_BYTES", val: integer(&c.SitemapMaxBytes, atLeast(1024)), def: "67108864", shown: "64 MiB",
			doc: "decompressed sitemap bytes one map or crawl kickoff reads, all sitemaps together (each file is also capped at 50 MiB); past it the map answers the links found so far, with a warning"},
		{name: "SHUTDOWN_TIMEOUT", val: duration(&c.ShutdownTimeout, "30s"), def: "30s",
			doc: "how long SIGTERM/SIGINT waits for in-flight requests and for the queue's running pages to finish (then they are cancelled and run again later)"},
		{name: "HTTP_READ_HEADER_TIMEOUT", val: timeout(&c.HTTPReadHeader, "10s"), def: "10s",
			doc: "time a client has to send its request headers; slower connections are closed"},
		{name: "HTTP_READ_TIMEOUT", val: timeout(&c.HTTPReadBody, "10s"), def: "60s",
			doc:  "time a client has to send its whole request body once the headers are in; slower ones get 408 `REQUEST_BODY_TIMEOUT` and a closed connection",
			more: "Raise it for 50 MB `/v2/parse` uploads over links slower than ~1 MB/s. Long scrapes and WebSocket watchers are not cut (there is no write timeout)."},
		{name: "HTTP_IDLE_TIMEOUT", val: timeout(&c.HTTPIdle, "10s"), def: "120s",
			doc: "how long an idle keep-alive connection is kept open"},
		{name: "LOG_LEVEL", val: logLevel(&c.LogLevel), def: "info",
			doc: "`debug`, `info`, `warn`, `error`"},
		{name: "LOG_FORMAT", val: oneOf(&c.LogFormat, "json", "text"), def: "json",
			doc: "`json` or `text` (logs go to stderr)"},
		{name: "REDIS_URL", val: text(&c.RedisURL).checked(hasPrefix("must be a redis:// or rediss:// URL", "redis://", "rediss://")),
			doc: "`redis://...`: cache shared by replicas; when Redis is down scrapes go on uncached"},
		{name: "CACHE_MAX_BYTES", val: integer(&c.CacheMaxBytes, nonNegative("0 disables the in-process cache")), def: "50331648", shown: "48 MiB",
			doc: "bound of the in-process cache (documents and `GET /v2/scrape/{id}` results) used without Redis; `0` disables caching"},
		{name: "CACHE_TTL", val: timeout(&c.CacheTTL, "168h"), def: "168h",
			doc: "how long a cached document is kept"},
		{name: "TEAM_CONCURRENCY_LIMIT", val: integer(&c.TeamConcurrency, nonNegative("0 = unlimited")), def: "64",
			doc: "concurrent scrapes, maps and parses per team (more wait in a queue); `0` = unlimited"},
		{name: "TEAM_RATE_MULTIPLIER", val: integer(&c.TeamRateMult, nonNegative("0 = unlimited")), def: "0",
			doc: "multiplier of the base per-minute rate limits; `0` = no rate limit"},
		{name: "AUTH_FAILURES_PER_MINUTE", val: integer(&c.AuthFailures, nonNegative("0 = no limit")), def: "20",
			doc:  "failed authentications (unknown or revoked keys) one client address may make in a minute before its requests answer 429 `AUTH_RATE_LIMITED`; `0` = no limit",
			more: "Past the limit every request from that address, valid key or not, answers 429 `AUTH_RATE_LIMITED` with `Retry-After` until the minute since its first failure ends (WebSocket watchers: close 1013). IPv6 clients count by /64. Counted per process."},
		{name: "TRUSTED_PROXIES", val: prefixes(&c.TrustedProxies),
			doc: "comma-separated IPs or CIDRs of reverse proxies (e.g. `10.0.0.0/8,127.0.0.1`); from these peers the rightmost `X-Forwarded-For` address that is not a proxy is the client address. From any other peer the header is ignored"},
		{name: "WATCHERS_PER_TEAM", val: integer(&c.WatchersPerTeam, positive()), def: "1000",
			doc: "WebSocket watchers (`GET /v2/crawl/{id}`, `/v2/batch/scrape/{id}` upgraded) one team may hold open on one server process; the next is closed with code 1013 (try again later). All watchers of a job share one poller"},
		{name: "BROWSER", val: oneOf(&c.Browser, "auto", "off"), def: "auto",
			doc: "`auto` uses Chromium when one is found; `off` never starts a browser"},
		{name: "RENDER_POLICY", val: oneOf(&c.RenderPolicy, "auto", "always"), def: "auto",
			doc: "`auto` renders in the browser the fetched pages that look incomplete without their scripts (client-rendered apps, hybrid pages with placeholders or script-filled content) and keeps the rest on plain HTTP; `always` renders every fetched HTML page (PDFs, JSON, text and files stay on plain HTTP). Without a browser both serve the HTML as fetched"},
		{name: "CHROME_PATH", val: text(&c.ChromePath),
			doc:  "Chrome/Chromium binary; empty looks for Debian's headless shell, then for the usual names on `PATH`",
			more: "Empty looks for Debian's headless shell binary `/usr/lib/chromium/chromium-headless-shell` (preferred: the same engine at about half the CPU per page; the `/usr/bin` wrapper script does not `exec` it, so a killed Chrome would not be noticed), then `chromium-headless-shell`, `headless-shell`, `chromium`, `chromium-browser`, `google-chrome` on `PATH`."},
		{name: "BROWSER_WS_URL", val: text(&c.BrowserWSURL),
			doc: "a running Chrome's DevTools address (`ws://...` or `http://host:9222`) instead of a local one"},
		{name: "BROWSER_MAX_TABS", val: integer(&c.BrowserMaxTabs, positive()), shown: "2 per CPU",
			doc:  "tabs open at once, shared fairly between teams",
			more: "A team may use the tabs others leave idle except the last quarter of them (at least one; none of a single tab), so another team's render starts at once however many long renders one team keeps going, and a freed tab goes to the waiting team that holds the fewest (teams holding as many take turns)."},
		{name: "BROWSER_MAX_TAB_HOLD", val: timeout(&c.BrowserTabHold, "10s"), shown: "`120s`",
			doc: "longest one render holds its tab, Chrome restarts included (a duration); past it the render ends as a timeout naming this setting"},
		{name: "INTERACT_MAX_SESSIONS_PER_TEAM", val: integer(&c.InteractPerTeam, positive()), def: "5",
			doc: "active interact/browser sessions one team may hold; the next answers 429 `TOO_MANY_SESSIONS`"},
		{name: "INTERACT_MAX_SESSIONS", val: integer(&c.InteractMax, positive()), def: "20",
			doc: "interact/browser sessions one server process holds at once (each is a browser context and tab kept open); the next answers 429"},
		{name: "INTERACT_JS_MEMORY_MB", val: integer(&c.InteractJSMemMB, positive()), def: "256",
			doc: "heap one interact `code` run may grow by before it is killed (sampled every 10 ms in its runner process, whose writable memory is limited to twice this plus 256 MB)"},
		{name: "INTERACT_RUNTIMES", val: words(&c.InteractLangs, "node", "python", "bash"),
			doc: "interact `code` languages run as programs in a bubblewrap sandbox: `node`, `python`, `bash`, comma-separated; empty: `node` code runs in the JavaScript interpreter and `python`/`bash` answer 400",
			more: "Needs `bwrap` and `/usr/bin/node`, `/usr/bin/python3`, `/usr/bin/bash`; checked at start, where a failure stops the server. Programs run as uid 65534 when the server runs as root, else as the server's own user (as the image's 10001). " +
				"The sandbox's init is placed in the system's temporary directory (`TMPDIR`, default `/tmp`), which must not be mounted `noexec` (as Docker's `--tmpfs` is by default); each server holds a lock on its own `firegate-sandbox-*` directory there, and at start removes the ones of its user whose server is gone (a crash leaves them). " +
				"In a container, unprivileged user namespaces must be allowed, which Docker's default seccomp profile refuses, and `/proc` must not be masked (Docker's default masks paths of it, with which bwrap cannot mount the sandbox's own `/proc`: `--security-opt systempaths=unconfined`)."},
		{name: "INTERACT_NODE_MODULES", val: text(&c.InteractNodeMod),
			doc: "a `node_modules` directory holding `playwright-core` (readable by uid 65534 when the server runs as root, else by the server's user), bound read-only into node programs' sandboxes for their `page`; required when `INTERACT_RUNTIMES` has `node`"},
		{name: "PROXY_URLS", val: proxies(&c.BasicProxies),
			doc:  "the basic proxy pool: comma-separated `[CC=]scheme://[user:pass@]host:port`, scheme `http`, `https` or `socks5`, `CC` an optional upper-case country code (`DE=http://u:p@10.0.0.5:3128,socks5://10.0.0.6:1080`); empty = requests leave from the server's own address",
			more: "A malformed entry stops the server at start, named with its credentials masked. Rotation is round robin among the proxies of the request's country (all of them when none is of it), skipping for a minute a proxy that failed to connect; a crawl keeps one proxy per host. Credentials never appear in logs, errors or answers."},
		{name: "ENHANCED_PROXY_URLS", val: proxies(&c.EnhancedProxies),
			doc: "the enhanced pool (`proxy: enhanced`, and `auto`'s retry of a blocked answer), same form; empty = the basic pool, with a warning"},
		{name: "BROWSER_PROXY_LISTEN", val: text(&c.BrowserProxy), shown: "`127.0.0.1:0`",
			doc: "where the guarded proxy that carries all of Chrome's traffic listens; a remote Chrome needs an address it can reach"},
		{name: "BROWSER_PROXY_URL", val: text(&c.BrowserProxyURL).checked(httpHostPort), shown: "the listen address",
			doc: "that proxy as Chrome reaches it (`http://host:port`); required for a remote Chrome's traffic to be guarded"},
		{name: "PUBLIC_URL", val: baseURL(&c.PublicURL).checked(hasPrefix("must be an http:// or https:// URL", "http://", "https://")), shown: "`http://<HOST or localhost>:<PORT>`",
			doc: "base of the screenshot, PDF, audio and video links"},
		{name: "MEDIA_DIR", val: text(&c.MediaDir), shown: "`DATA_DIR/media`",
			doc: "where screenshots and PDFs are kept for 24 h (files 0600; the directory is created 0700)"},
		{name: "MEDIA_TEAM_QUOTA_BYTES", val: integer(&c.MediaTeamQuota, nonNegative("0 = no quota")), def: "1073741824", shown: "1 GiB",
			doc:  "bytes of unexpired screenshots, PDFs, MP3s and MP4s one team may have stored (local or S3); past it a scrape that would store more answers 429 `MEDIA_QUOTA_EXCEEDED`; `0` = no quota",
			more: "Zero-data-retention scrapes, inline, still work past the quota. Usage is measured from the store and refreshed every 30 s, so processes sharing a store may overshoot by what the others wrote meanwhile."},
		{name: "MEDIA_S3_ENDPOINT", val: text(&c.MediaS3Endpoint).checked(hostPort),
			doc: "`host[:port]` of an S3-compatible service (AWS S3, MinIO, R2, ...) to keep screenshots and PDFs in instead of `MEDIA_DIR`; empty keeps local files. Objects are still served by this server under `/media/` and deleted 24 h after upload"},
		{name: "MEDIA_S3_BUCKET", val: text(&c.MediaS3Bucket),
			doc: "existing bucket for the media objects; required with `MEDIA_S3_ENDPOINT` (checked at start)"},
		{name: "MEDIA_S3_PREFIX", val: text(&c.MediaS3Prefix), def: "media/",
			doc: "key prefix of the media objects in the bucket; the janitor only deletes keys under it"},
		{name: "MEDIA_S3_ACCESS_KEY", val: text(&c.MediaS3Access),
			doc: "access key id; set together with `MEDIA_S3_SECRET_KEY` (both empty = anonymous requests)"},
		{name: "MEDIA_S3_SECRET_KEY", val: text(&c.MediaS3Secret),
			doc: "secret access key"},
		{name: "MEDIA_S3_REGION", val: text(&c.MediaS3Region),
			doc: "bucket region (e.g. `us-east-1`); empty asks the service"},
		{name: "MEDIA_S3_USE_SSL", val: boolean(&c.MediaS3UseSSL), def: "true",
			doc: "reach the endpoint over https; `false` for plain http (e.g. a local MinIO)"},
		{name: "FFMPEG_PATH", val: trimmed(&c.FFmpegPath), shown: "`ffmpeg` on `PATH`",
			doc: "the `ffmpeg` of the `audio` and `video` formats (`ffprobe` is taken beside it, else from `PATH`); not found, the server starts and those formats answer 400 `SCRAPE_MEDIA_NOT_SUPPORTED`"},
		{name: "YTDLP_PATH", val: trimmed(&c.YtdlpPath), shown: "`yt-dlp` on `PATH`",
			doc: "yt-dlp for the `audio`/`video` formats on pages that name no media (video platforms); not found, it is off. Installing it is the operator's choice and responsibility"},
		{name: "MEDIA_MAX_SECONDS", val: integer(&c.MediaMaxSeconds, intBounds{1, math.MaxInt64, "must be a positive number of seconds"}), def: "3600",
			doc: "longest media the `audio` and `video` formats convert (by the probed duration, or the output's for a live stream); longer ones answer 422 `SCRAPE_MEDIA_TOO_LARGE`"},
		{name: "MEDIA_MAX_BYTES", val: integer(&c.MediaMaxBytes, intBounds{1, math.MaxInt64, "must be a positive number of bytes"}), def: "536870912", shown: "512 MiB",
			doc: "largest MP3 or MP4 they make; past it 422 `SCRAPE_MEDIA_TOO_LARGE`. One request downloads at most four times this plus 64 MiB of media"},
		{name: "MEDIA_URL_SECRET", val: text(&c.MediaURLSecret).checked(minLen(media.MinSecretLen, fmt.Sprintf("at least %d characters (e.g. openssl rand -hex 32), or unset to have one generated beside the media", media.MinSecretLen))), shown: "generated",
			doc: "HMAC-SHA256 secret (32+ characters) of the signed `audio`/`video` links; unset, one is generated on first start and kept beside the files",
			more: "The links are `/media/{id}?expires=...&signature=...`: served without an API key, a changed link answers 403 `MEDIA_LINK_INVALID`, an expired one 410 `MEDIA_LINK_EXPIRED`. " +
				"The generated secret is kept in `MEDIA_DIR/media-url-secret` (0600; so the api and workers of the compose file, which share that volume, agree), or `DATA_DIR/media-url-secret` with S3. " +
				"Set it when processes that share neither serve the same media (S3 with several hosts); changing it invalidates the links given out."},
		{name: "QUEUE_WORKERS", val: integer(&c.QueueWorkers, intBounds{0, 10000, "must be an integer from 0 to 10000"}), def: "32",
			doc: "crawl and batch pages this process scrapes at once; `0` = this process runs no jobs (an API-only replica). `server worker` needs it above 0"},
		{name: "JOB_TTL", val: timeout(&c.JobTTL, "5m"), def: "24h",
			doc: "how long crawl and batch results, and agent runs with their traces and snapshots, are kept (`expiresAt`) before they are purged; also how long an ended interact session's recording (`/replay`) is kept"},
		{name: "JOB_TIMEOUT", val: timeout(&c.JobTimeout, "5m"), def: "5m",
			doc: "longest run of one queued job (a page, a webhook delivery)"},
		{name: "MONITOR_TICK", val: timeout(&c.MonitorTick, "5m"), def: "15s",
			doc: "how often a worker process looks for due monitor checks (a due check starts within this much of its time)"},
		{name: "JOB_RESCUE_AFTER", val: timeout(&c.JobRescueAfter, "5m"), shown: "`JOB_TIMEOUT` + 1m",
			doc:  "last resort for a worker that is alive (still heartbeating) but stuck: a job running this long is run again by another worker; must exceed `JOB_TIMEOUT`",
			more: "A dead worker's jobs do not wait for it: they go back to the queue ~15 s after its last heartbeat."},
		{name: "SEARXNG_ENDPOINT", val: trimmed(&c.SearxngEndpoint).checked(searxngURL),
			doc:  "base URL of a SearXNG instance (e.g. `http://searxng:8080`) answering `POST /v2/search`; empty: search answers 400 `SEARCH_NOT_CONFIGURED`",
			more: "The instance's `settings.yml` must list `json` under `search.formats`. The instance is trusted (reached directly); the result URLs it returns are scraped through the network policy."},
		{name: "SEARXNG_TIMEOUT", val: timeout(&c.SearxngTimeout, "10s"), def: "15s",
			doc: "longest wait for one SearXNG answer; the request's `timeout` also applies"},
		{name: "THREAT_BLOCKLIST_FILE", val: trimmed(&c.ThreatBlocklist),
			doc: "the operator's threat blocklist, enforced on every request, reloaded when it changes; empty: only the requests' own `threatProtection` lists",
			more: "Every request means scrape, crawl, batch, map, search, extract and agent, redirect hops and robots.txt and sitemap fetches included. The file holds hosts-file lines (`0.0.0.0 evil.example`) or one domain per line, `#` comments; a listed domain blocks its subdomains too. " +
				"It is read at start (a missing or unreadable file, or one over 64 MiB, stops the server), checked for changes at most once a second and reloaded; a failed reload keeps the last list."},
		{name: "CATALOG_FILE", val: trimmed(&c.CatalogFile),
			doc: "the operator's tool catalog for catalog calls (JSON, or YAML when named `.yaml`/`.yml`; at most 4 MiB), reloaded on change; a file that does not load at start stops the server. Empty: only the built-in `firecrawl` provider"},
		{name: "WEBHOOK_SECRET", val: text(&c.WebhookSecret),
			doc: "HMAC-SHA256 secret of the `X-Firecrawl-Signature` header of webhooks; empty sends them unsigned"},
		{name: "SMTP_URL", val: trimmed(&c.SMTPURL),
			doc:  "SMTP relay of monitor emails: `smtp://user:pass@host:587?from=alerts@example.com` or `smtps://...`; empty: `notification.email.enabled: true` answers 400 `EMAIL_NOT_CONFIGURED`",
			more: "`smtp://` requires STARTTLS (`&tls=opportunistic` or `&tls=none` for a relay on a trusted network); `smtps://` is TLS from the start, port 465. `PUBLIC_URL` is required with it: the confirm and unsubscribe links start with it, so it must be the address the recipients' browsers reach."},
		{name: "SMTP_FROM", val: trimmed(&c.SMTPFrom),
			doc: "sender of monitor emails (`Name <addr>` or `addr`), instead of `SMTP_URL`'s `from`"},
		{name: "EMAIL_TOKEN_SECRET", val: text(&c.EmailSecret),
			doc: "secret (at least 32 characters, e.g. `openssl rand -hex 32`) that signs the confirm and unsubscribe links; required with `SMTP_URL`, the same on every replica. Changing it voids the links already sent"},
		{name: "PPROF_ADDR", val: text(&c.PprofAddr),
			doc: "serve Go's `net/http/pprof` profiles on this address (e.g. `127.0.0.1:6060`); off when empty"},
		{name: "METRICS", val: oneOf(&c.Metrics, "on", "off"), def: "on",
			doc: "`on` records the Prometheus series and serves them unauthenticated at `GET /metrics`; `off` does neither"},
		{name: "OPENAI_BASE_URL", val: baseURL(&c.LLMBaseURL).checked(hasPrefix("must be an http:// or https:// URL (such as http://localhost:11434/v1)", "http://", "https://")),
			doc:  "OpenAI-compatible chat completions endpoint, up to and including `/v1` (e.g. `http://ollama:11434/v1`); empty = no language model, or `https://api.openai.com/v1` when only `OPENAI_API_KEY` is set",
			more: "Without a language model the model formats answer 400 `SCRAPE_LLM_NOT_CONFIGURED`."},
		{name: "OPENAI_API_KEY", val: text(&c.LLMAPIKey),
			doc: "bearer token sent to the endpoint; optional for local servers"},
		{name: "MODEL_NAME", val: text(&c.LLMModel),
			doc: "model of every call; required with an endpoint"},
		{name: "LLM_STRUCTURED_OUTPUT", val: oneOf(&c.LLMStructured, "json_schema", "json_object", "prompt"), def: "json_schema",
			doc: "how JSON answers are requested: `json_schema` (`response_format` with the caller's schema), `json_object`, or `prompt` (schema in the instructions, for endpoints without structured output); the answer is validated in every mode"},
		{name: "LLM_MAX_CONCURRENCY", val: integer(&c.LLMConcurrency, atLeast(1).upTo(10_000_000)), def: "4",
			doc: "model calls in flight per process; more wait (within the request's timeout)"},
		{name: "LLM_CONTEXT_TOKENS", val: integer(&c.LLMContext, atLeast(1024).upTo(10_000_000)), def: "32768",
			doc: "the model's context; pages longer than about three quarters of it are cut into parts"},
		{name: "LLM_MAX_RETRIES", val: integer(&c.LLMMaxRetries, atLeast(0).upTo(10_000_000)), def: "2",
			doc: "retries of a call failing with 429, 5xx or a connection error (exponential backoff, `Retry-After` honoured)"},
	}
}
