package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/riverqueue/river"

	"github.com/firegate/firegate/internal/agent"
	"github.com/firegate/firegate/internal/crawljob"
	"github.com/firegate/firegate/internal/monitor"
	"github.com/firegate/firegate/internal/netguard"
	"github.com/firegate/firegate/internal/queue"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/webhook"
)

// jobs is a process's part in crawls, batch scrapes and agent runs: the
// queue and the runners whose workers it runs (none with QUEUE_WORKERS=0).
type jobs struct {
	q      *queue.Queue
	runner *crawljob.Runner
	agents *agent.Runner
	store  store.JobStore
	// monitors runs monitor checks and, in processes with workers, the
	// monitor scheduler; monitorAPI answers the /v2/monitor routes.
	monitors   *monitor.Runner
	monitorAPI *monitor.Service
}

// openJobs builds the queue on the store's database, the crawl runner and
// the agent runner. rc and ac carry the scrape-side collaborators; the
// store, webhook sender and settings from cfg are filled in here.
func openJobs(ctx context.Context, cfg Config, st store.Store, policy *netguard.Policy, rc crawljob.RunnerConfig, ac agent.Config, mc monitor.RunnerConfig, log *slog.Logger) (*jobs, error) {
	js, ok := st.(store.JobStore)
	if !ok {
		return nil, fmt.Errorf("jobs: store %T keeps no jobs", st)
	}
	rc.Jobs = js
	rc.TTL = cfg.JobTTL
	rc.Log = log
	// The process's one policy: what it reserves (a local Chrome's
	// DevTools port) holds for webhooks too.
	rc.Webhooks = webhook.NewSender(webhook.Options{Secret: cfg.WebhookSecret, Policy: policy}, log)
	runner := crawljob.NewRunner(rc)
	runs, ok := st.(store.AgentStore)
	if !ok {
		return nil, fmt.Errorf("jobs: store %T keeps no agent runs", st)
	}
	ac.Runs, ac.Webhooks, ac.TTL, ac.Log = runs, rc.Webhooks, cfg.JobTTL, log
	agents := agent.New(ac)
	workers := river.NewWorkers()
	runner.Register(workers)
	agents.Register(workers)
	ms, ok := st.(monitor.Store)
	if !ok {
		return nil, fmt.Errorf("jobs: store %T keeps no monitors", st)
	}
	// A check runs within the queue's job timeout, so that no other worker
	// takes it over while it still runs.
	mc.Store, mc.Scraper, mc.Webhooks, mc.Crawler, mc.Jobs, mc.Log = ms, rc.Scraper, rc.Webhooks, runner, js, log
	mc.CheckTimeout = cfg.JobTimeout
	monitors := monitor.NewRunner(mc)
	monitors.Register(workers)
	opts := queue.Options{Workers: cfg.QueueWorkers, JobTimeout: cfg.JobTimeout, RescueAfter: cfg.JobRescueAfter,
		PeriodicJobs: append(runner.PeriodicJobs(), agents.PeriodicJobs()...)}
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
	agents.Bind(q)
	monitors.Bind(q)
	monitorAPI := monitor.NewService(ms, q, nil)
	monitorAPI.SetEmail(mc.Email)
	return &jobs{q: q, runner: runner, agents: agents, store: js, monitors: monitors,
		monitorAPI: monitorAPI}, nil
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
