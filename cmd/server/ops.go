package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/firegate/firegate/internal/browser"
	"github.com/firegate/firegate/internal/cache"
	"github.com/firegate/firegate/internal/httpapi"
	"github.com/firegate/firegate/internal/metrics"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
)

// observers are the metrics as each package takes them; all nil with
// METRICS=off (a nil *metrics.Metrics must not reach an interface, where
// it would not compare equal to nil).
type observers struct {
	m      *metrics.Metrics
	scrape scrape.Observer
	api    httpapi.Metrics
}

// newObservers builds the metrics unless METRICS=off.
func newObservers(cfg Config, log *slog.Logger) observers {
	if cfg.Metrics == "off" {
		return observers{}
	}
	m := metrics.New(metrics.Options{Log: log})
	return observers{m: m, scrape: m, api: m}
}

// readyChecks are the dependencies GET /ready checks: the store, the cache
// backend when it can be pinged (Redis), and the browser pool when there is
// one (a Chrome not started yet is ready: it starts on first use).
func readyChecks(st store.Store, docCache cache.Cache, pool *browser.Pool) []httpapi.ReadyCheck {
	checks := []httpapi.ReadyCheck{{Name: "store", Check: func(ctx context.Context) (string, error) {
		return "", st.Ping(ctx)
	}}}
	if p, ok := docCache.(interface{ Ping(context.Context) error }); ok {
		checks = append(checks, httpapi.ReadyCheck{Name: "cache", Check: func(ctx context.Context) (string, error) {
			return "", p.Ping(ctx)
		}})
	}
	if pool != nil {
		checks = append(checks, httpapi.ReadyCheck{Name: "browser", Check: func(ctx context.Context) (string, error) {
			err := pool.Ping(ctx)
			if errors.Is(err, browser.ErrNotStarted) {
				return "not started", nil
			}
			return "", err
		}})
	}
	return checks
}

// browserTabs reads a pool's tabs for the metrics.
func browserTabs(pool *browser.Pool) func() (int, int) {
	return func() (int, int) {
		s := pool.Stats()
		return s.InUse, s.MaxTabs
	}
}
