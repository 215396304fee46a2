package main

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadConfigDefaults(t *testing.T) {
	t.Parallel()
	got, err := loadConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Port: 3002, DataDir: "./data", AuthMode: "on", FetchMaxBytes: 10 << 20,
		CacheMaxBytes: 48 << 20, CacheTTL: 168 * time.Hour, TeamConcurrency: 64,
		Browser: "auto", PublicURL: "http://localhost:3002", MediaDir: "data/media",
		ShutdownTimeout: 30 * time.Second, LogLevel: slog.LevelInfo, LogFormat: "json"}
	if diff := cmp.Diff(want, got); diff != "" {
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
		"AUTH_MODE": "OFF", "BOOTSTRAP_API_KEY": "k", "ALLOW_PRIVATE_TARGETS": "true", "FETCH_MAX_BYTES": "2048",
		"SHUTDOWN_TIMEOUT": "5s", "LOG_LEVEL": "debug", "LOG_FORMAT": "text", "PPROF_ADDR": "127.0.0.1:6060",
		"REDIS_URL": "redis://127.0.0.1:6379/1", "CACHE_MAX_BYTES": "1000", "CACHE_TTL": "1h",
		"TEAM_CONCURRENCY_LIMIT": "0", "TEAM_RATE_MULTIPLIER": "3",
		"BROWSER": "off", "CHROME_PATH": "/usr/bin/chromium", "BROWSER_WS_URL": "ws://chrome:9222", "BROWSER_MAX_TABS": "8",
		"PUBLIC_URL": "https://scrape.example.com/", "MEDIA_DIR": "/srv/media",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Host: "127.0.0.1", Port: 8080, DataDir: "/tmp/x", DatabaseURL: "postgres://u@h/db", AuthMode: "off",
		BootstrapAPIKey: "k", AllowPrivate: true, FetchMaxBytes: 2048, ShutdownTimeout: 5 * time.Second,
		LogLevel: slog.LevelDebug, LogFormat: "text", PprofAddr: "127.0.0.1:6060",
		RedisURL: "redis://127.0.0.1:6379/1", CacheMaxBytes: 1000, CacheTTL: time.Hour,
		TeamConcurrency: 0, TeamRateMult: 3,
		Browser: "off", ChromePath: "/usr/bin/chromium", BrowserWSURL: "ws://chrome:9222", BrowserMaxTabs: 8,
		PublicURL: "https://scrape.example.com", MediaDir: "/srv/media"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if got.Addr() != "127.0.0.1:8080" {
		t.Errorf("addr %q", got.Addr())
	}
}

func TestLoadConfigErrorsNameTheVariable(t *testing.T) {
	t.Parallel()
	_, err := loadConfig(env(map[string]string{
		"PORT": "http", "ALLOW_PRIVATE_TARGETS": "maybe", "FETCH_MAX_BYTES": "1", "SHUTDOWN_TIMEOUT": "soon",
		"LOG_LEVEL": "loud", "LOG_FORMAT": "xml", "AUTH_MODE": "sometimes", "DATABASE_URL": "mysql://x",
		"REDIS_URL": "http://x", "CACHE_MAX_BYTES": "-1", "CACHE_TTL": "0s",
		"TEAM_CONCURRENCY_LIMIT": "-2", "TEAM_RATE_MULTIPLIER": "x",
		"BROWSER": "maybe", "BROWSER_MAX_TABS": "0", "PUBLIC_URL": "ftp://x",
	}))
	if err == nil {
		t.Fatal("want errors")
	}
	for _, name := range []string{"PORT", "ALLOW_PRIVATE_TARGETS", "FETCH_MAX_BYTES", "SHUTDOWN_TIMEOUT", "LOG_LEVEL", "LOG_FORMAT", "AUTH_MODE", "DATABASE_URL", "REDIS_URL", "CACHE_MAX_BYTES", "CACHE_TTL", "TEAM_CONCURRENCY_LIMIT", "TEAM_RATE_MULTIPLIER", "BROWSER", "BROWSER_MAX_TABS", "PUBLIC_URL"} {
		if !strings.Contains(err.Error(), name+":") {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
}
