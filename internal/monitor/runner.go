package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/firegate/firegate/internal/crawljob"
	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/queue"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/webhook"
)

// Scraper scrapes one page; *scrape.Engine implements it.
type Scraper interface {
	Scrape(ctx context.Context, opts scrape.Options) (*scrape.Document, error)
}

// Crawler starts a crawl job; *crawljob.Runner implements it.
type Crawler interface {
	StartCrawl(ctx context.Context, j store.Job, o crawljob.JobOptions) error
}

// JobReader reads crawl jobs back; the store implements it.
type JobReader interface {
	Job(ctx context.Context, id string) (store.Job, error)
	Documents(ctx context.Context, jobID string, skip, limit int) ([][]byte, error)
	JobErrors(ctx context.Context, jobID string) ([]store.JobError, error)
}

// WebhookSender delivers one webhook body; *webhook.Sender implements it.
type WebhookSender interface {
	Send(ctx context.Context, spec webhook.Spec, body []byte) error
}

// Webhook event types.
const (
	EventPage           = "monitor.page"
	EventCheckCompleted = "monitor.check.completed"
)

// Page statuses (changetrack's plus error).
const PageError = "error"

// RunnerConfig are the collaborators of a Runner.
type RunnerConfig struct {
	Store   Store
	Scraper Scraper
	// Ledger, when nil, charges nothing.
	Ledger Ledger
	// Webhooks, when nil, sends no webhooks.
	Webhooks WebhookSender
	// Model, when set, judges new and changed pages of monitors with a
	// goal and judging on; nil: judgment stays null.
	Model Model
	// Searcher runs the queries of search targets; nil: they fail.
	Searcher Searcher
	// Crawler starts the crawls of crawl targets and Jobs reads them back;
	// without them a crawl target fails in each check.
	Crawler Crawler
	Jobs    JobReader
	// CrawlPoll is how long a check waits before looking at its crawls
	// again; default 2s.
	CrawlPoll time.Duration
	// Now is the clock of the scheduler and the checks; default time.Now.
	Now func() time.Time
	Log *slog.Logger
	// PageConcurrency is how many pages of one check are scraped at once;
	// default 4.
	PageConcurrency int
	// PageTimeout bounds one page's scrape; default 2 minutes.
	PageTimeout time.Duration
	// CheckTimeout bounds one check; default 30 minutes.
	CheckTimeout time.Duration
	// Limiter, with TeamConcurrency, holds one of the team's concurrency
	// slots for each page a check scrapes, as the scrape routes and crawls
	// do: a team at its limit delays its monitors' pages. Nil: no limit.
	Limiter limits.Limiter
	// TeamConcurrency returns a team's concurrency limit (0: unlimited);
	// nil: unlimited. Crawl targets' crawls take it too.
	TeamConcurrency func(ctx context.Context, teamID string) (int, error)
	// ZDRForced reports whether a team has zero data retention forced on;
	// its monitors' checks fail without scraping anything, since a check
	// keeps the pages it compares. Nil: no team has it.
	ZDRForced func(ctx context.Context, teamID string) (bool, error)
	// Email, when set, sends the monitors' email notifications.
	Email *Email
}

// ZDRForcedMessage is why a check of a team with zero data retention
// forced on fails: monitors keep the pages they compare.
const ZDRForcedMessage = "Your team has zero data retention enabled. This is not supported on monitor."

// Runner runs the scheduler and the check and webhook workers.
type Runner struct {
	cfg RunnerConfig
	q   Enqueuer

	mu        sync.Mutex
	lastPurge time.Time
}

// NewRunner builds a runner; Bind it to the queue before starting it.
func NewRunner(cfg RunnerConfig) *Runner {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.PageConcurrency <= 0 {
		cfg.PageConcurrency = 4
	}
	if cfg.PageTimeout <= 0 {
		cfg.PageTimeout = 2 * time.Minute
	}
	if cfg.CheckTimeout <= 0 {
		cfg.CheckTimeout = 30 * time.Minute
	}
	if cfg.CrawlPoll <= 0 {
		cfg.CrawlPoll = 2 * time.Second
	}
	return &Runner{cfg: cfg}
}

// Bind sets the queue checks and webhooks are enqueued on.
func (r *Runner) Bind(q Enqueuer) { r.q = q }

// Register adds the monitor workers.
func (r *Runner) Register(w *river.Workers) {
	river.AddWorker(w, &checkWorker{r: r})
	river.AddWorker(w, webhook.NewWorker[webhookArgs](r.cfg.Webhooks, r.cfg.Log, "monitor: webhook delivery failed"))
	river.AddWorker(w, &emailWorker{r: r})
}

func (r *Runner) now() time.Time { return r.cfg.Now().UTC().Truncate(time.Microsecond) }

// checkArgs run one check.
type checkArgs struct {
	Check string `json:"check"`
}

func (checkArgs) Kind() string { return "monitor_check" }

// InsertOpts make a check's job unique: a check enqueued again (by the
// sweep, or a scheduler racing a manual run) runs once.
func (checkArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queue.Control, MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

func enqueueCheck(ctx context.Context, q Enqueuer, id string) error {
	if q == nil {
		return errors.New("monitor: no queue")
	}
	return q.Insert(context.WithoutCancel(ctx), checkArgs{Check: id}, nil)
}

// teamLimit is the team's concurrency limit; 0 is unlimited.
func (r *Runner) teamLimit(ctx context.Context, teamID string) (int, error) {
	if r.cfg.TeamConcurrency == nil {
		return 0, nil
	}
	return r.cfg.TeamConcurrency(ctx, teamID)
}

// slot waits for one of the team's concurrency slots (until ctx ends).
func (r *Runner) slot(ctx context.Context, teamID string) (func(), error) {
	if r.cfg.Limiter == nil {
		return func() {}, nil
	}
	limit, err := r.teamLimit(ctx, teamID)
	if err != nil || limit <= 0 {
		return func() {}, err
	}
	release, _, err := r.cfg.Limiter.Acquire(ctx, teamID, limit)
	return release, err
}

type checkWorker struct {
	river.WorkerDefaults[checkArgs]
	r *Runner
}

func (w *checkWorker) Timeout(*river.Job[checkArgs]) time.Duration { return w.r.cfg.CheckTimeout }

func (w *checkWorker) Work(ctx context.Context, job *river.Job[checkArgs]) error {
	err := w.r.RunCheck(ctx, job.Args.Check)
	var snooze *rivertype.JobSnoozeError
	if err != nil && !errors.As(err, &snooze) && job.Attempt >= job.MaxAttempts {
		// The last attempt: end the check as failed, or the monitor would
		// skip every later slot as an overlap.
		now := w.r.now()
		_, ferr := w.r.cfg.Store.FinishCheck(context.WithoutCancel(ctx), store.MonitorCheck{ID: job.Args.Check,
			Status: store.CheckFailed, FinishedAt: &now, Summary: emptySummary, BillingStatus: "not_applicable",
			Error: "The check could not be completed: " + w.r.shown(ctx, err, "check_id", job.Args.Check)})
		if ferr != nil {
			w.r.cfg.Log.ErrorContext(ctx, "monitor: fail check", "check_id", job.Args.Check, "err", ferr)
		}
	}
	return err
}

// emptySummary is the summary of a check that ended before it counted any
// page.
var emptySummary = json.RawMessage(`{"totalPages":0,"same":0,"changed":0,"new":0,"removed":0,"error":0}`)

// shown is what a client is shown of err (a check's or page's error, in
// the API and in webhooks), as errcode.Describe gives it: a known error
// by its message, any other by the generic message naming an error id,
// under which err's full text (which may name internal hosts, addresses and
// packages) is logged here with attrs.
func (r *Runner) shown(ctx context.Context, err error, attrs ...any) string {
	_, msg, id := errcode.Describe(err)
	if id != "" {
		r.cfg.Log.ErrorContext(ctx, "monitor: unexpected error", append([]any{"error_id", id, "err", err}, attrs...)...)
	}
	return msg
}
