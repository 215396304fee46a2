package main

import (
	"fmt"
	"log/slog"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/firegate/firegate/internal/media"
	"github.com/firegate/firegate/internal/testenv"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadConfigDefaults(t *testing.T) {
	t.Parallel()
	got, err := loadConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Port: 3002, DataDir: "./data", AuthMode: "on", FetchMaxBytes: 10 << 20, SitemapMaxBytes: 64 << 20,
		CacheMaxBytes: 48 << 20, CacheTTL: 168 * time.Hour, TeamConcurrency: 64, WatchersPerTeam: 1000, AuthFailures: 20,
		InteractPerTeam: 5, InteractMax: 20, InteractJSMemMB: 256,
		Browser: "auto", RenderPolicy: "auto", PublicURL: "http://localhost:3002", MediaDir: "data/media",
		MediaS3Prefix: "media/", MediaS3UseSSL: true, MediaTeamQuota: 1 << 30, MediaMaxSeconds: 3600, MediaMaxBytes: 512 << 20,
		ShutdownTimeout: 30 * time.Second, HTTPReadHeader: 10 * time.Second, HTTPReadBody: time.Minute, HTTPIdle: 2 * time.Minute,
		LogLevel: slog.LevelInfo, LogFormat: "json", Metrics: "on",
		QueueWorkers: 32, JobTTL: 24 * time.Hour, JobTimeout: 5 * time.Minute, JobRescueAfter: 6 * time.Minute, MonitorTick: 15 * time.Second,
		LLMStructured: "json_schema", LLMConcurrency: 4, LLMContext: 32768, LLMMaxRetries: 2,
		SearxngTimeout: 15 * time.Second}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if got.Addr() != ":3002" {
		t.Errorf("addr %q", got.Addr())
	}
}

func TestLoadConfigOverrides(t *testing.T) {
	t.Parallel()
	got, err := loadConfig(env(map[string]string{
		"HOST": "127.0.0.1", "PORT": "8080", "DATA_DIR": "/tmp/x", "DATABASE_URL": "postgres://u@h/db",
		"AUTH_MODE": "OFF", "BOOTSTRAP_API_KEY": "k", "ALLOW_PRIVATE_TARGETS": "true", "FETCH_MAX_BYTES": "2048", "SITEMAP_MAX_BYTES": "4096",
		"ALLOW_TARGETS": "10.1.2.0/24, wiki.internal,", "BROWSER_PROXY_LISTEN": "0.0.0.0:3128", "BROWSER_PROXY_URL": "http://10.0.0.5:3128",
		"SHUTDOWN_TIMEOUT": "5s", "HTTP_READ_HEADER_TIMEOUT": "2s", "HTTP_READ_TIMEOUT": "3s", "HTTP_IDLE_TIMEOUT": "4s",
		"LOG_LEVEL": "debug", "LOG_FORMAT": "text", "PPROF_ADDR": "127.0.0.1:6060",
		"REDIS_URL": "redis://127.0.0.1:6379/1", "CACHE_MAX_BYTES": "1000", "CACHE_TTL": "1h",
		"TEAM_CONCURRENCY_LIMIT": "0", "TEAM_RATE_MULTIPLIER": "3", "WATCHERS_PER_TEAM": "5",
		"INTERACT_MAX_SESSIONS_PER_TEAM": "2", "INTERACT_MAX_SESSIONS": "7", "INTERACT_JS_MEMORY_MB": "64",
		"AUTH_FAILURES_PER_MINUTE": "0", "TRUSTED_PROXIES": "10.0.0.0/8, 192.168.1.7,::1",
		"BROWSER": "off", "CHROME_PATH": "/usr/bin/chromium", "BROWSER_WS_URL": "ws://chrome:9222", "BROWSER_MAX_TABS": "8", "BROWSER_MAX_TAB_HOLD": "90s",
		"RENDER_POLICY": "Always", "PUBLIC_URL": "https://scrape.example.com/", "MEDIA_DIR": "/srv/media", "MEDIA_TEAM_QUOTA_BYTES": "0",
		"MEDIA_S3_ENDPOINT": "minio:9000", "MEDIA_S3_BUCKET": "shots", "MEDIA_S3_PREFIX": "firegate/",
		"MEDIA_S3_ACCESS_KEY": "AKID", "MEDIA_S3_SECRET_KEY": "s3cret", "MEDIA_S3_REGION": "eu-west-1",
		"MEDIA_S3_USE_SSL": "false", "METRICS": "OFF", "FFMPEG_PATH": " /opt/ffmpeg/bin/ffmpeg ", "YTDLP_PATH": "/opt/yt-dlp", "MEDIA_MAX_SECONDS": "600",
		"MEDIA_MAX_BYTES": "1048576", "MEDIA_URL_SECRET": "0123456789abcdef0123456789abcdef",
		"QUEUE_WORKERS": "0", "JOB_TTL": "1h", "JOB_TIMEOUT": "2m", "JOB_RESCUE_AFTER": "3m", "WEBHOOK_SECRET": "whsec",
		"OPENAI_BASE_URL": "http://ollama:11434/v1/", "OPENAI_API_KEY": "sk-x", "MODEL_NAME": "qwen2.5:3b",
		"LLM_STRUCTURED_OUTPUT": "PROMPT", "LLM_MAX_CONCURRENCY": "2", "LLM_CONTEXT_TOKENS": "8192", "LLM_MAX_RETRIES": "0",
		"SEARXNG_ENDPOINT": "http://searxng:8080", "SEARXNG_TIMEOUT": "3s", "CATALOG_FILE": " /etc/firegate/catalog.yaml ",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Host: "127.0.0.1", Port: 8080, DataDir: "/tmp/x", DatabaseURL: "postgres://u@h/db", AuthMode: "off",
		BootstrapAPIKey: "k", AllowPrivate: true, FetchMaxBytes: 2048, SitemapMaxBytes: 4096, ShutdownTimeout: 5 * time.Second,
		AllowTargets: []string{"10.1.2.0/24", "wiki.internal"}, BrowserProxy: "0.0.0.0:3128", BrowserProxyURL: "http://10.0.0.5:3128",
		HTTPReadHeader: 2 * time.Second, HTTPReadBody: 3 * time.Second, HTTPIdle: 4 * time.Second,
		LogLevel: slog.LevelDebug, LogFormat: "text", PprofAddr: "127.0.0.1:6060",
		RedisURL: "redis://127.0.0.1:6379/1", CacheMaxBytes: 1000, CacheTTL: time.Hour,
		TeamConcurrency: 0, TeamRateMult: 3, WatchersPerTeam: 5,
		InteractPerTeam: 2, InteractMax: 7, InteractJSMemMB: 64,
		AuthFailures: 0, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32"), netip.MustParsePrefix("::1/128")},
		Browser: "off", ChromePath: "/usr/bin/chromium", BrowserWSURL: "ws://chrome:9222", BrowserMaxTabs: 8, BrowserTabHold: 90 * time.Second,
		RenderPolicy: "always", PublicURL: "https://scrape.example.com", MediaDir: "/srv/media",
		MediaS3Endpoint: "minio:9000", MediaS3Bucket: "shots", MediaS3Prefix: "firegate/",
		MediaS3Access: "AKID", MediaS3Secret: "s3cret", MediaS3Region: "eu-west-1", MediaS3UseSSL: false, Metrics: "off",
		FFmpegPath: "/opt/ffmpeg/bin/ffmpeg", YtdlpPath: "/opt/yt-dlp", MediaMaxSeconds: 600, MediaMaxBytes: 1 << 20, MediaURLSecret: "0123456789abcdef0123456789abcdef",
		QueueWorkers: 0, JobTTL: time.Hour, JobTimeout: 2 * time.Minute, JobRescueAfter: 3 * time.Minute, MonitorTick: 15 * time.Second, WebhookSecret: "whsec",
		LLMBaseURL: "http://ollama:11434/v1", LLMAPIKey: "sk-x", LLMModel: "qwen2.5:3b", LLMStructured: "prompt",
		LLMConcurrency: 2, LLMContext: 8192, LLMMaxRetries: 0,
		SearxngEndpoint: "http://searxng:8080", SearxngTimeout: 3 * time.Second, CatalogFile: "/etc/firegate/catalog.yaml"}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if got.Addr() != "127.0.0.1:8080" {
		t.Errorf("addr %q", got.Addr())
	}
}

func TestLoadConfigErrorsNameTheVariable(t *testing.T) {
	t.Parallel()
	_, err := loadConfig(env(map[string]string{
		"PORT": "http", "ALLOW_PRIVATE_TARGETS": "maybe", "FETCH_MAX_BYTES": "1", "SITEMAP_MAX_BYTES": "1k", "SHUTDOWN_TIMEOUT": "soon",
		"LOG_LEVEL": "loud", "LOG_FORMAT": "xml", "AUTH_MODE": "sometimes", "DATABASE_URL": "mysql://x",
		"REDIS_URL": "http://x", "CACHE_MAX_BYTES": "-1", "CACHE_TTL": "0s",
		"TEAM_CONCURRENCY_LIMIT": "-2", "TEAM_RATE_MULTIPLIER": "x",
		"BROWSER": "maybe", "BROWSER_MAX_TABS": "0", "BROWSER_MAX_TAB_HOLD": "0s", "PUBLIC_URL": "ftp://x", "METRICS": "maybe", "RENDER_POLICY": "sometimes",
		"QUEUE_WORKERS": "-1", "JOB_TTL": "1d", "JOB_TIMEOUT": "0s",
		"HTTP_READ_HEADER_TIMEOUT": "0s", "HTTP_READ_TIMEOUT": "fast", "HTTP_IDLE_TIMEOUT": "-1s",
		"WATCHERS_PER_TEAM": "0", "AUTH_FAILURES_PER_MINUTE": "-1",
		"INTERACT_MAX_SESSIONS_PER_TEAM": "0", "INTERACT_MAX_SESSIONS": "x", "INTERACT_JS_MEMORY_MB": "-5", "MEDIA_TEAM_QUOTA_BYTES": "1GB", "MEDIA_MAX_SECONDS": "1h", "MEDIA_MAX_BYTES": "0", "MEDIA_URL_SECRET": "short", "TRUSTED_PROXIES": "10.0.0.0/8,proxy.local",
		"ALLOW_TARGETS": "10.0.0.0/8,http://intranet", "BROWSER_PROXY_URL": "socks5://x:1",
		"OPENAI_BASE_URL": "ollama:11434", "LLM_STRUCTURED_OUTPUT": "xml", "LLM_MAX_CONCURRENCY": "0", "LLM_CONTEXT_TOKENS": "10",
		"LLM_MAX_RETRIES": "-1", "SEARXNG_ENDPOINT": "searxng:8080", "SEARXNG_TIMEOUT": "soon", "INTERACT_RUNTIMES": "python,ruby",
	}))
	if err == nil {
		t.Fatal("want errors")
	}
	for _, name := range []string{"PORT", "ALLOW_PRIVATE_TARGETS", "FETCH_MAX_BYTES", "SITEMAP_MAX_BYTES", "SHUTDOWN_TIMEOUT", "LOG_LEVEL", "LOG_FORMAT", "AUTH_MODE", "DATABASE_URL", "REDIS_URL", "CACHE_MAX_BYTES", "CACHE_TTL", "TEAM_CONCURRENCY_LIMIT", "TEAM_RATE_MULTIPLIER", "BROWSER", "BROWSER_MAX_TABS", "BROWSER_MAX_TAB_HOLD", "PUBLIC_URL", "METRICS", "QUEUE_WORKERS", "JOB_TTL", "JOB_TIMEOUT", "HTTP_READ_HEADER_TIMEOUT", "HTTP_READ_TIMEOUT", "HTTP_IDLE_TIMEOUT", "WATCHERS_PER_TEAM", "AUTH_FAILURES_PER_MINUTE", "TRUSTED_PROXIES",
		"INTERACT_MAX_SESSIONS_PER_TEAM", "INTERACT_MAX_SESSIONS", "INTERACT_JS_MEMORY_MB", "MEDIA_TEAM_QUOTA_BYTES", "MEDIA_MAX_SECONDS", "MEDIA_MAX_BYTES", "MEDIA_URL_SECRET", "ALLOW_TARGETS", "BROWSER_PROXY_URL",
		"OPENAI_BASE_URL", "MODEL_NAME", "LLM_STRUCTURED_OUTPUT", "LLM_MAX_CONCURRENCY", "LLM_CONTEXT_TOKENS", "LLM_MAX_RETRIES", "SEARXNG_ENDPOINT", "SEARXNG_TIMEOUT", "INTERACT_RUNTIMES", "RENDER_POLICY"} {
		if !strings.Contains(err.Error(), name+":") {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
}

func TestLoadConfigAPIKeyAloneMeansOpenAI(t *testing.T) {
	t.Parallel()
	c, err := loadConfig(env(map[string]string{"OPENAI_API_KEY": "sk-x", "MODEL_NAME": "gpt-4o-mini"}))
	if err != nil || c.LLMBaseURL != "https://api.openai.com/v1" || !c.LLMConfigured() {
		t.Errorf("base %q err %v", c.LLMBaseURL, err)
	}
	if c, _ := loadConfig(env(nil)); c.LLMConfigured() {
		t.Error("a language model is configured by default")
	}
}

func TestLoadConfigRescueMustExceedTimeout(t *testing.T) {
	t.Parallel()
	_, err := loadConfig(env(map[string]string{"JOB_TIMEOUT": "2m", "JOB_RESCUE_AFTER": "1m"}))
	if err == nil || !strings.Contains(err.Error(), "JOB_RESCUE_AFTER:") {
		t.Fatalf("err = %v, want JOB_RESCUE_AFTER named", err)
	}
}

func TestLoadConfigMediaS3Errors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want []string // variables the error must name
	}{
		{"use ssl not a boolean", map[string]string{"MEDIA_S3_ENDPOINT": "s3:9000", "MEDIA_S3_BUCKET": "b", "MEDIA_S3_USE_SSL": "sometimes"}, []string{"MEDIA_S3_USE_SSL"}},
		{"endpoint with scheme", map[string]string{"MEDIA_S3_ENDPOINT": "https://s3.example.com", "MEDIA_S3_BUCKET": "b"}, []string{"MEDIA_S3_ENDPOINT"}},
		{"no bucket", map[string]string{"MEDIA_S3_ENDPOINT": "s3.example.com"}, []string{"MEDIA_S3_BUCKET"}},
		{"bucket without endpoint", map[string]string{"MEDIA_S3_BUCKET": "b"}, []string{"MEDIA_S3_ENDPOINT"}},
		{"absolute prefix", map[string]string{"MEDIA_S3_ENDPOINT": "s3:9000", "MEDIA_S3_BUCKET": "b", "MEDIA_S3_PREFIX": "/media/"}, []string{"MEDIA_S3_PREFIX"}},
		{"access key alone", map[string]string{"MEDIA_S3_ENDPOINT": "s3:9000", "MEDIA_S3_BUCKET": "b", "MEDIA_S3_ACCESS_KEY": "a"}, []string{"MEDIA_S3_SECRET_KEY"}},
		{"secret key alone", map[string]string{"MEDIA_S3_ENDPOINT": "s3:9000", "MEDIA_S3_BUCKET": "b", "MEDIA_S3_SECRET_KEY": "s"}, []string{"MEDIA_S3_ACCESS_KEY"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadConfig(env(tt.env))
			if err == nil {
				t.Fatal("want an error")
			}
			for _, name := range tt.want {
				if !strings.Contains(err.Error(), name+":") {
					t.Errorf("error does not name %s: %v", name, err)
				}
			}
		})
	}
}

func TestLoadConfigMediaS3Minimal(t *testing.T) {
	t.Parallel()
	got, err := loadConfig(env(map[string]string{"MEDIA_S3_ENDPOINT": "s3.example.com", "MEDIA_S3_BUCKET": "b"}))
	if err != nil {
		t.Fatal(err)
	}
	want := struct {
		Endpoint, Bucket, Prefix string
		UseSSL                   bool
	}{"s3.example.com", "b", "media/", true}
	gotS3 := struct {
		Endpoint, Bucket, Prefix string
		UseSSL                   bool
	}{got.MediaS3Endpoint, got.MediaS3Bucket, got.MediaS3Prefix, got.MediaS3UseSSL}
	if diff := cmp.Diff(want, gotS3); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

// TestOpenMediaFollowsConfig checks serve's media store is the directory by
// default and the bucket when MEDIA_S3_ENDPOINT is set.
func TestOpenMediaFollowsConfig(t *testing.T) {
	t.Parallel()
	backend := s3mem.New()
	if err := backend.CreateBucket("shots"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	tests := []struct {
		name   string
		env    map[string]string
		want   any
		stored func(id string) error // finds the stored file
	}{
		{"default", map[string]string{"DATA_DIR": dir}, &media.Store{},
			func(id string) error { _, err := os.Stat(filepath.Join(dir, "media", id)); return err }},
		{"s3", map[string]string{"DATA_DIR": dir, "MEDIA_S3_ENDPOINT": strings.TrimPrefix(srv.URL, "http://"),
			"MEDIA_S3_BUCKET": "shots", "MEDIA_S3_USE_SSL": "false", "MEDIA_S3_REGION": "us-east-1",
			"MEDIA_S3_ACCESS_KEY": "a", "MEDIA_S3_SECRET_KEY": "s"}, &media.S3Store{},
			func(id string) error { _, err := backend.HeadObject("shots", "media/"+id); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadConfig(env(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			m, err := openMedia(t.Context(), cfg, testenv.Logger(t))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := typeName(m), typeName(tt.want); got != want {
				t.Fatalf("store %s, want %s", got, want)
			}
			id, err := m.Put(t.Context(), "", []byte("png"), "image/png")
			if err != nil {
				t.Fatal(err)
			}
			f, ct, _, err := m.Open(id)
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			if ct != "image/png" {
				t.Errorf("content type %q", ct)
			}
			if err := tt.stored(id); err != nil {
				t.Errorf("%s not where the config says: %v", id, err)
			}
		})
	}
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }

func TestLoadConfigRuntimes(t *testing.T) {
	t.Parallel()
	got, err := loadConfig(env(map[string]string{"INTERACT_RUNTIMES": " python, bash,python", "INTERACT_NODE_MODULES": "/opt/nm"}))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.InteractLangs, []string{"python", "bash"}) || got.InteractNodeMod != "/opt/nm" {
		t.Errorf("got %q %q", got.InteractLangs, got.InteractNodeMod)
	}
	_, err = loadConfig(env(map[string]string{"INTERACT_RUNTIMES": "node"}))
	if err == nil || !strings.Contains(err.Error(), "INTERACT_RUNTIMES: node programs need INTERACT_NODE_MODULES") {
		t.Errorf("node without INTERACT_NODE_MODULES: %v", err)
	}
}

func TestLoadConfigSMTP(t *testing.T) {
	t.Parallel()
	secret := strings.Repeat("s", 32)
	c, err := loadConfig(env(map[string]string{"SMTP_URL": "smtp://u:p@relay.example.com?from=a@example.com", "EMAIL_TOKEN_SECRET": secret,
		"SMTP_FROM": "Alerts <alerts@example.com>", "PUBLIC_URL": "https://api.example.com"}))
	if err != nil || c.SMTP.Host != "relay.example.com" || c.SMTP.Port != 587 || c.SMTP.From != "Alerts <alerts@example.com>" || c.SMTP.Password != "p" {
		t.Errorf("SMTP = %+v, %v", c.SMTP, err)
	}
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"SMTP_URL": "smtp://relay.example.com?from=a@example.com"}, "EMAIL_TOKEN_SECRET"},
		{map[string]string{"SMTP_URL": "smtp://relay.example.com?from=a@example.com", "EMAIL_TOKEN_SECRET": secret}, "PUBLIC_URL"},
		{map[string]string{"SMTP_URL": "smtp://relay.example.com?from=a@example.com", "EMAIL_TOKEN_SECRET": "short"}, "EMAIL_TOKEN_SECRET"},
		{map[string]string{"SMTP_URL": "http://u:hunter2@relay.example.com", "EMAIL_TOKEN_SECRET": secret}, "SMTP_URL"},
		{map[string]string{"SMTP_URL": "smtp://relay.example.com", "EMAIL_TOKEN_SECRET": secret}, "SMTP_URL"},
		{map[string]string{"SMTP_FROM": "a@example.com"}, "SMTP_FROM"},
		{map[string]string{"EMAIL_TOKEN_SECRET": secret}, "EMAIL_TOKEN_SECRET"},
	} {
		_, err := loadConfig(env(tc.env))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%v: %v, want an error naming %s (and no password)", tc.env, err, tc.want)
		}
	}
}

func TestLoadConfigProxies(t *testing.T) {
	t.Parallel()
	c, err := loadConfig(env(map[string]string{
		"PROXY_URLS":          "DE=http://u:p@10.0.0.5:3128, socks5://10.0.0.6:1080",
		"ENHANCED_PROXY_URLS": "US=https://res.example:8443",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.BasicProxies.Len() != 2 || c.EnhancedProxies.Len() != 1 || c.BasicProxies.Proxies()[0].Country() != "DE" {
		t.Errorf("pools: basic %v, enhanced %v", c.BasicProxies.Proxies(), c.EnhancedProxies.Proxies())
	}
	// A malformed entry stops the server at start, named, credentials
	// masked.
	_, err = loadConfig(env(map[string]string{
		"PROXY_URLS":          "http://ok:3128,ftp://alice:hunter2@10.0.0.5:21",
		"ENHANCED_PROXY_URLS": "de=http://bob:pw@x:1",
	}))
	if err == nil {
		t.Fatal("malformed proxy entries accepted")
	}
	for _, want := range []string{`PROXY_URLS: entry 2 (ftp://***@10.0.0.5:21): scheme "ftp"`, `ENHANCED_PROXY_URLS: entry 1 (de=http://***@x:1): country "de"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	for _, secret := range []string{"alice", "hunter2", "bob", ":pw"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error shows a credential (%s): %v", secret, err)
		}
	}
}
