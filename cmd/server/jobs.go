package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/riverqueue/river"

	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/queue"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/webhook"
)

// jobs is a process's part in crawls and batch scrapes: the queue and the
// runner whose workers it runs (none with QUEUE_WORKERS=0).
type jobs struct {
	q      *queue.Queue
	runner *crawl.Runner
	store  store.JobStore
}

// openJobs builds the queue on the store's database and the crawl runner.
// rc carries the scrape-side collaborators; the store, webhook sender and
// settings from cfg are filled in here.
func openJobs(ctx context.Context, cfg Config, st store.Store, rc crawl.RunnerConfig, log *slog.Logger) (*jobs, error) {
	js, ok := st.(store.JobStore)
	if !ok {
		return nil, fmt.Errorf("jobs: store %T keeps no jobs", st)
	}
	rc.Jobs = js
	rc.TTL = cfg.JobTTL
	rc.Log = log
	policy, err := cfg.netPolicy()
	if err != nil {
		return nil, err
	}
	rc.Webhooks = webhook.NewSender(webhook.Options{Secret: cfg.WebhookSecret, Policy: policy}, log)
	runner := crawl.NewRunner(rc)
	workers := river.NewWorkers()
	runner.Register(workers)
	opts := queue.Options{Workers: cfg.QueueWorkers, JobTimeout: cfg.JobTimeout, RescueAfter: cfg.JobRescueAfter,
		PeriodicJobs: runner.PeriodicJobs()}
	// Workers heartbeat in the store; every process hands a dead worker's
	// running pages back to the queue within seconds of its last beat.
	ws, ok := st.(store.WorkerStore)
	if !ok {
		return nil, fmt.Errorf("jobs: store %T keeps no worker heartbeats", st)
	}
	opts.Liveness = ws
	q, err := queue.Open(ctx, st, workers, opts, log)
	if err != nil {
		return nil, err
	}
	runner.Bind(q)
	return &jobs{q: q, runner: runner, store: js}, nil
}

// opsOnly serves the operations routes of api (/health, /ready, /metrics)
// and 404 for everything else: a worker's port.
func opsOnly(api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/health", "/ready", "/metrics":
			api.ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	})
}
