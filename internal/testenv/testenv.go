// Package testenv gives tests access to external services (Postgres, Redis,
// Chrome) and a logger that writes to the test log.
//
// When a service is unreachable the test is skipped, unless the environment
// variable REQUIRE_INTEGRATION=1 is set (as in CI), in which case it fails.
package testenv

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

// Environment variables read by this package.
const (
	EnvRequireIntegration = "REQUIRE_INTEGRATION"
	EnvDatabaseURL        = "TEST_DATABASE_URL"
	EnvRedisURL           = "TEST_REDIS_URL"
	EnvChromePath         = "CHROME_PATH"
)

// Defaults used when the environment variables are unset.
const (
	DefaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	DefaultRedisURL    = "redis://127.0.0.1:6379/0"
)

// checkTimeout bounds how long a reachability check may take.
const checkTimeout = 3 * time.Second

// chromeNames returns the executables ChromePath looks for on PATH, in order.
func chromeNames() []string {
	return []string{"/usr/lib/chromium/chromium-headless-shell", "chromium-headless-shell", "headless-shell", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}
}

// Unavailable skips the test because a required service is missing, or fails
// it when REQUIRE_INTEGRATION=1.
func Unavailable(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(EnvRequireIntegration) == "1" {
		tb.Fatalf("%s (%s=1, not skipping)", msg, EnvRequireIntegration)
	}
	tb.Skip(msg)
}

// PostgresURL returns TEST_DATABASE_URL (or DefaultDatabaseURL) after checking
// that a connection can be made within 3 seconds.
func PostgresURL(tb testing.TB) string {
	tb.Helper()
	url := os.Getenv(EnvDatabaseURL)
	if url == "" {
		url = DefaultDatabaseURL
	}
	ctx, cancel := context.WithTimeout(tb.Context(), checkTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		Unavailable(tb, "testenv: postgres at %s unavailable: %v", redact(url), err)
		return ""
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := conn.Ping(ctx); err != nil {
		Unavailable(tb, "testenv: postgres at %s unavailable: %v", redact(url), err)
	}
	return url
}

// RedisURL returns TEST_REDIS_URL (or DefaultRedisURL) after checking that a
// PING succeeds within 3 seconds.
func RedisURL(tb testing.TB) string {
	tb.Helper()
	url := os.Getenv(EnvRedisURL)
	if url == "" {
		url = DefaultRedisURL
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		tb.Fatalf("testenv: bad %s %q: %v", EnvRedisURL, redact(url), err)
	}
	opts.DialTimeout = checkTimeout
	opts.MaxRetries = -1
	ctx, cancel := context.WithTimeout(tb.Context(), checkTimeout)
	defer cancel()
	client := redis.NewClient(opts)
	defer client.Close()
	if err := client.Ping(ctx).Err(); err != nil {
		Unavailable(tb, "testenv: redis at %s unavailable: %v", redact(url), err)
	}
	return url
}

// ChromePath returns CHROME_PATH if set, else the first of chromium,
// chromium-browser, google-chrome, google-chrome-stable found on PATH.
func ChromePath(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv(EnvChromePath); p != "" {
		if _, err := os.Stat(p); err != nil {
			Unavailable(tb, "testenv: %s=%q: %v", EnvChromePath, p, err)
		}
		return p
	}
	for _, name := range chromeNames() {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	Unavailable(tb, "testenv: no Chrome found (set %s or put one of %s on PATH)", EnvChromePath, strings.Join(chromeNames(), ", "))
	return ""
}

// Logger returns a debug-level text logger that writes to tb.Log. Lines logged
// after the test has finished are dropped instead of panicking.
func Logger(tb testing.TB) *slog.Logger {
	w := &testWriter{tb: tb}
	tb.Cleanup(w.stop)
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// testWriter forwards each write to tb.Log until stop is called.
type testWriter struct {
	mu   sync.Mutex
	tb   testing.TB
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.tb.Log(strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}

func (w *testWriter) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
}

// redact hides the password of a URL-style connection string.
func redact(url string) string {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return url
	}
	userinfo, host, ok := strings.Cut(rest, "@")
	if !ok {
		return url
	}
	if user, _, hasPass := strings.Cut(userinfo, ":"); hasPass {
		return scheme + "://" + user + ":xxxxx@" + host
	}
	return url
}
