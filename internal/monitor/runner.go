package monitor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/firegate/firegate/internal/apierr"
	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/changetrack"
	"github.com/firegate/firegate/internal/crawljob"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/logsafe"
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

// webhookArgs deliver one webhook body.
type webhookArgs struct {
	Check string          `json:"check"`
	Event string          `json:"event"`
	Spec  webhook.Spec    `json:"spec"`
	Body  json.RawMessage `json:"body"`
}

func (webhookArgs) Kind() string                 { return "monitor_webhook" }
func (webhookArgs) InsertOpts() river.InsertOpts { return webhook.DeliveryInsertOpts() }

func (a webhookArgs) Delivery() (webhook.Spec, []byte, []any) {
	return a.Spec, a.Body, []any{"check_id", a.Check, "event", a.Event}
}

// Scheduling bounds.
const (
	dueBatch   = 100
	sweepAfter = time.Minute
	purgeEvery = time.Hour
	// purgeGrace is how long a deleted monitor whose check never finished
	// is kept before it is purged all the same.
	purgeGrace = 24 * time.Hour
)

// Tick starts the checks due now: for each due monitor it claims the slot
// (the store's compare-and-set of next_run_at, so of several schedulers
// one wins) and moves next_run_at to the first run after now, so slots
// missed while no scheduler ran give one check, not one per slot. It also
// re-enqueues checks left queued (an insert lost to a crash), repairs
// checks left running (see recoverRunning) and, hourly, purges checks past
// their retention.
func (r *Runner) Tick(ctx context.Context) error {
	now := r.now()
	due, err := r.cfg.Store.DueMonitors(ctx, now, dueBatch)
	if err != nil {
		return err
	}
	for _, m := range due {
		r.startScheduled(ctx, m, now)
	}
	ids, err := r.cfg.Store.QueuedChecks(ctx, now.Add(-sweepAfter), dueBatch)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := enqueueCheck(ctx, r.q, id); err != nil {
			r.cfg.Log.WarnContext(ctx, "monitor: re-enqueue check", "check_id", id, "err", err)
		}
	}
	stale, err := r.cfg.Store.StaleRunningChecks(ctx, now.Add(-(r.cfg.CheckTimeout + sweepAfter)), dueBatch)
	if err != nil {
		return err
	}
	if len(stale) > 0 {
		r.recoverRunning(ctx, stale, now)
	}
	r.mu.Lock()
	purge := now.Sub(r.lastPurge) >= purgeEvery
	if purge {
		r.lastPurge = now
	}
	r.mu.Unlock()
	if purge {
		n, err := r.cfg.Store.DeleteExpiredChecks(ctx, now)
		if err != nil {
			return err
		}
		if n > 0 {
			r.cfg.Log.InfoContext(ctx, "monitor: expired checks purged", "checks", n)
		}
		n, err = r.cfg.Store.PurgeDeletedMonitors(ctx, now.Add(-purgeGrace))
		if err != nil {
			return err
		}
		if n > 0 {
			r.cfg.Log.InfoContext(ctx, "monitor: deleted monitors purged with their checks and snapshots", "monitors", n)
		}
	}
	return nil
}

// discardedLister lists the queue's discarded jobs; *queue.Queue
// implements it.
type discardedLister interface {
	Discarded(ctx context.Context, kind string, each func(*rivertype.JobRow) error) error
}

// recoverRunning repairs checks left running that no worker claimed for
// longer than a check may take (ids): a check whose job River discarded
// (its attempts spent, the last worker dead with it, so the last attempt
// could not fail it) fails with the last attempt's error; any other is
// queued again and resumes (a job of it still waiting in the queue is not
// doubled: check jobs are unique by check).
func (r *Runner) recoverRunning(ctx context.Context, ids []string, now time.Time) {
	discarded := map[string]string{}
	if q, ok := r.q.(discardedLister); ok {
		err := q.Discarded(ctx, checkArgs{}.Kind(), func(row *rivertype.JobRow) error {
			var a checkArgs
			if json.Unmarshal(row.EncodedArgs, &a) == nil && a.Check != "" {
				reason := "unknown"
				if n := len(row.Errors); n > 0 {
					reason = row.Errors[n-1].Error
				}
				discarded[a.Check] = reason
			}
			return nil
		})
		if err != nil {
			r.cfg.Log.WarnContext(ctx, "monitor: list discarded check jobs", "err", err)
			return
		}
	}
	for _, id := range ids {
		reason, gone := discarded[id]
		if !gone {
			r.cfg.Log.WarnContext(ctx, "monitor: check left running without a worker; queued again", "check_id", id)
			if err := enqueueCheck(ctx, r.q, id); err != nil {
				r.cfg.Log.WarnContext(ctx, "monitor: re-enqueue running check", "check_id", id, "err", err)
			}
			continue
		}
		// River keeps only the last error's text: the check's error quotes
		// it by the error id it is logged under.
		shown := r.shown(ctx, errors.New(reason), "check_id", id)
		sb, _ := json.Marshal(Summary{})
		ok, err := r.cfg.Store.FinishCheck(ctx, store.MonitorCheck{ID: id, Status: store.CheckFailed, FinishedAt: &now,
			Summary: sb, BillingStatus: "not_applicable",
			Error: "The check could not be completed: its job failed on all of its attempts; the last one: " + shown})
		if err != nil {
			r.cfg.Log.ErrorContext(ctx, "monitor: fail check left running", "check_id", id, "err", err)
			continue
		}
		if ok {
			r.cfg.Log.WarnContext(ctx, "monitor: check left running with its job discarded; failed", "check_id", id, "err", reason)
		}
	}
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

func (r *Runner) startScheduled(ctx context.Context, m store.Monitor, now time.Time) {
	log := r.cfg.Log.With("monitor_id", m.ID)
	sched, err := ParseSchedule(m.Cron, "", m.Timezone)
	if err != nil {
		log.ErrorContext(ctx, "monitor: stored schedule", "err", err)
		return
	}
	var cfg Config
	if err := json.Unmarshal(m.Config, &cfg); err != nil {
		log.ErrorContext(ctx, "monitor: stored config", "err", err)
		return
	}
	c, err := r.cfg.Store.StartCheck(ctx, store.CheckStart{
		TeamID: m.TeamID, MonitorID: m.ID, DueAt: m.NextRunAt, NextRunAt: nonZero(sched.Next(now)),
		Check: store.MonitorCheck{ID: newID(), Trigger: store.TriggerScheduled, ScheduledFor: m.NextRunAt,
			EstimatedCredits: CheckCost(cfg), CreatedAt: now},
	})
	switch {
	case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrMonitorPaused), errors.Is(err, store.ErrNotFound):
		return // another scheduler took the slot, or the monitor changed
	case err != nil:
		log.ErrorContext(ctx, "monitor: start check", "err", err)
		return
	}
	if c.Status == store.CheckSkippedOverlap {
		log.InfoContext(ctx, "monitor: check skipped, the previous one still runs", "check_id", c.ID)
		r.notify(ctx, cfg.Webhook, EventCheckCompleted, c.ID, true, completedData(m.ID, c.ID, c.Status, Summary{}))
		return
	}
	if err := enqueueCheck(ctx, r.q, c.ID); err != nil {
		log.WarnContext(ctx, "monitor: enqueue check (the sweep retries)", "check_id", c.ID, "err", err)
	}
}

// Run ticks every interval until ctx ends.
func (r *Runner) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := r.Tick(ctx); err != nil && ctx.Err() == nil {
			r.cfg.Log.WarnContext(ctx, "monitor: scheduler tick", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
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
		sb, _ := json.Marshal(Summary{})
		_, ferr := w.r.cfg.Store.FinishCheck(context.WithoutCancel(ctx), store.MonitorCheck{ID: job.Args.Check,
			Status: store.CheckFailed, FinishedAt: &now, Summary: sb, BillingStatus: "not_applicable",
			Error: "The check could not be completed: " + w.r.shown(ctx, err, "check_id", job.Args.Check)})
		if ferr != nil {
			w.r.cfg.Log.ErrorContext(ctx, "monitor: fail check", "check_id", job.Args.Check, "err", ferr)
		}
	}
	return err
}

// notify queues one webhook delivery when the monitor has a webhook that
// wants the event.
func (r *Runner) notify(ctx context.Context, spec *webhook.Spec, event, checkID string, success bool, data any) {
	if r.cfg.Webhooks == nil || r.q == nil {
		return
	}
	var opts *river.InsertOpts
	if event == EventCheckCompleted {
		// After the page events queued before it.
		opts = &river.InsertOpts{ScheduledAt: time.Now().Add(time.Second)}
	}
	ev := webhook.Event{Type: event, JobID: checkID, Success: success, Data: []any{data}}
	err := webhook.Enqueue(ctx, r.q, spec, ev, newID(), opts, func(body []byte) webhook.Delivery {
		return webhookArgs{Check: checkID, Event: event, Spec: *spec, Body: body}
	})
	if err != nil {
		r.cfg.Log.ErrorContext(ctx, "monitor: queue webhook", "check_id", checkID, "event", event, "err", err)
	}
}

// completedPayload is the data item of monitor.check.completed.
type completedPayload struct {
	MonitorID string  `json:"monitorId"`
	CheckID   string  `json:"checkId"`
	Status    string  `json:"status"`
	Summary   Summary `json:"summary"`
}

func completedData(monitorID, checkID, status string, s Summary) completedPayload {
	return completedPayload{MonitorID: monitorID, CheckID: checkID, Status: status, Summary: s}
}

// pagePayload is the data item of monitor.page.
type pagePayload struct {
	MonitorID        string          `json:"monitorId"`
	CheckID          string          `json:"checkId"`
	URL              string          `json:"url"`
	Status           string          `json:"status"`
	PreviousScrapeID *string         `json:"previousScrapeId"`
	CurrentScrapeID  *string         `json:"currentScrapeId"`
	Error            *string         `json:"error"`
	IsMeaningful     *bool           `json:"isMeaningful"`
	Judgment         json.RawMessage `json:"judgment"`
	Diff             json.RawMessage `json:"diff"`
}

// targetResult is one entry of a check's targetResults.
type targetResult struct {
	TargetID     string   `json:"targetId"`
	Type         string   `json:"type"`
	ExpectedJobs []string `json:"expectedJobs,omitempty"`
	CrawlID      string   `json:"crawlId,omitempty"`
	Error        string   `json:"error,omitempty"`
}

// crawlJobID is the id of the crawl a check starts for a target: derived
// from both, so a retried check finds the crawl it started instead of
// starting another.
func crawlJobID(checkID, targetID string) string {
	return uuid.NewSHA1(crawlNamespace, []byte(checkID+"/"+targetID)).String()
}

var crawlNamespace = uuid.MustParse("7d4a2c1e-3b5f-4e8a-9c6d-0f1e2a3b4c5d")

// startCrawls starts the crawls of the check's crawl targets that have
// none yet and reports whether any is still running. The crawl ids are
// recorded in the check's target results before anything waits on them.
func (r *Runner) startCrawls(ctx context.Context, c *store.MonitorCheck, cfg Config) (running bool, err error) {
	var results []targetResult
	if len(c.TargetResults) > 0 {
		_ = json.Unmarshal(c.TargetResults, &results)
	}
	byTarget := map[string]*targetResult{}
	for i := range results {
		byTarget[results[i].TargetID] = &results[i]
	}
	changed := false
	for _, t := range cfg.Targets {
		if t.Type != TargetCrawl || r.cfg.Crawler == nil || r.cfg.Jobs == nil {
			continue
		}
		tr := byTarget[t.ID]
		if tr == nil {
			results = append(results, targetResult{TargetID: t.ID, Type: t.Type})
			tr = &results[len(results)-1]
			byTarget = map[string]*targetResult{}
			for i := range results {
				byTarget[results[i].TargetID] = &results[i]
			}
		}
		if tr.CrawlID == "" {
			id := crawlJobID(c.ID, t.ID)
			o := *t.Crawl
			o.Scrape = pageOptions(o.Scrape, "", c.TeamID)
			if o.TeamConcurrency, err = r.teamLimit(ctx, c.TeamID); err != nil {
				return false, fmt.Errorf("monitor: team limit: %w", err)
			}
			if o.MaxConcurrency > 0 && o.TeamConcurrency > 0 {
				o.MaxConcurrency = min(o.MaxConcurrency, o.TeamConcurrency)
			}
			err := r.cfg.Crawler.StartCrawl(ctx, store.Job{ID: id, TeamID: c.TeamID, URL: t.URL, Limit: t.Limit,
				ZeroDataRetention: o.Scrape.ZeroDataRetention}, o)
			if err != nil && !errors.Is(err, crawljob.ErrIdempotencyKeyUsed) {
				return false, fmt.Errorf("monitor: start crawl: %w", err)
			}
			tr.CrawlID = id
			changed = true
		}
		j, err := r.cfg.Jobs.Job(ctx, tr.CrawlID)
		if err != nil {
			return false, fmt.Errorf("monitor: crawl %s: %w", tr.CrawlID, err)
		}
		if j.Status == store.JobScraping {
			running = true
		}
	}
	if changed {
		b, _ := json.Marshal(results)
		if _, err := r.cfg.Store.SetCheckTargetResults(ctx, c.ID, b); err != nil {
			return false, err
		}
		c.TargetResults = b
	}
	return running, nil
}

// crawlTarget compares the pages of a target's finished crawl with the
// monitor's previous check: each document compared with its snapshot,
// each failed URL an error page, and each page of the previous check the
// crawl did not find again removed.
func (r *Runner) crawlTarget(ctx context.Context, c store.MonitorCheck, m store.Monitor, cfg Config, t Target, crawlID string) ([]store.MonitorPage, int64, error) {
	job, err := r.cfg.Jobs.Job(ctx, crawlID)
	if err != nil {
		return nil, 0, err
	}
	var pages []store.MonitorPage
	var judgeCredits int64
	seen := map[string]bool{}
	const batch = 50
	for skip := 0; ; skip += batch {
		docs, err := r.cfg.Jobs.Documents(ctx, crawlID, skip, batch)
		if err != nil {
			return nil, 0, err
		}
		for _, raw := range docs {
			var doc scrape.Document
			if err := json.Unmarshal(raw, &doc); err != nil {
				continue
			}
			u := doc.Metadata.SourceURL
			if u == "" {
				u = doc.Metadata.URL
			}
			if u == "" || seen[u] {
				continue
			}
			seen[u] = true
			page, judged := r.recordPage(ctx, c, m, cfg, t, u, &doc, nil)
			pages = append(pages, page)
			judgeCredits += judged
		}
		if len(docs) < batch {
			break
		}
	}
	failed, err := r.cfg.Jobs.JobErrors(ctx, crawlID)
	if err != nil {
		return nil, 0, err
	}
	for _, f := range failed {
		if seen[f.URL] {
			continue
		}
		seen[f.URL] = true
		// The crawl recorded the page's error as a client sees it.
		page, _ := r.recordPage(ctx, c, m, cfg, t, f.URL, nil, &scrape.Failure{Kind: scrape.ErrSite, Msg: f.Error})
		pages = append(pages, page)
	}
	// Pages of the previous check that this crawl did not find again.
	prev, err := r.previousCheck(ctx, c)
	if err != nil {
		return nil, 0, err
	}
	if prev != "" {
		for skip := 0; ; skip += batch {
			old, err := r.cfg.Store.CheckPages(ctx, prev, "", skip, batch)
			if err != nil {
				return nil, 0, err
			}
			for _, p := range old {
				if p.TargetID != t.ID || seen[p.URL] || p.Status == changetrack.StatusRemoved || p.Status == PageError {
					continue
				}
				seen[p.URL] = true
				page := store.MonitorPage{ID: newID(), CheckID: c.ID, MonitorID: m.ID, TargetID: t.ID, URL: p.URL,
					Status: changetrack.StatusRemoved, PreviousScrapeID: p.CurrentScrapeID, CreatedAt: r.now()}
				pages = append(pages, r.savePage(ctx, c, m, cfg, page, pageData{}, nil))
			}
			if len(old) < batch {
				break
			}
		}
	}
	return pages, job.CreditsUsed + judgeCredits, nil
}

// previousCheck is the id of the monitor's newest finished check before
// c that recorded pages, or "".
func (r *Runner) previousCheck(ctx context.Context, c store.MonitorCheck) (string, error) {
	checks, err := r.cfg.Store.MonitorChecks(ctx, c.TeamID, c.MonitorID, "", 20, 0)
	if err != nil {
		return "", err
	}
	for _, p := range checks {
		if p.ID != c.ID && p.CreatedAt.Before(c.CreatedAt) &&
			(p.Status == store.CheckCompleted || p.Status == store.CheckPartial) {
			return p.ID, nil
		}
	}
	return "", nil
}

// RunCheck runs one queued check to its end. It is the check job's body;
// a check that is not queued or running (finished, or claimed by nobody)
// is left alone.
func (r *Runner) RunCheck(ctx context.Context, id string) error {
	c, ok, err := r.cfg.Store.ClaimCheck(ctx, id, r.now())
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil || !ok {
		return err
	}
	log := r.cfg.Log.With("check_id", c.ID, "monitor_id", c.MonitorID)
	m, err := r.cfg.Store.Monitor(ctx, c.TeamID, c.MonitorID)
	if errors.Is(err, store.ErrNotFound) {
		return r.finish(ctx, c, store.CheckFailed, Summary{}, nil, "The monitor was deleted", nil)
	}
	if err != nil {
		return err
	}
	var cfg Config
	if err := json.Unmarshal(m.Config, &cfg); err != nil {
		return r.finish(ctx, c, store.CheckFailed, Summary{}, nil, "The monitor's stored configuration is unreadable", &cfg)
	}
	if r.cfg.ZDRForced != nil {
		forced, err := r.cfg.ZDRForced(ctx, c.TeamID)
		if err != nil {
			return fmt.Errorf("monitor: team settings: %w", err)
		}
		if forced {
			c.BillingStatus = "not_applicable"
			return r.finish(ctx, c, store.CheckFailed, Summary{}, nil, ZDRForcedMessage, &cfg)
		}
	}
	est := CheckCost(cfg)
	// Credits are checked once, before the check has started anything (a
	// check waiting on its crawls runs this again).
	if r.cfg.Ledger != nil && est > 0 && len(c.TargetResults) == 0 {
		if err := r.cfg.Ledger.Check(ctx, c.TeamID, est); err != nil {
			if errors.Is(err, billing.ErrInsufficientCredits) {
				c.BillingStatus = "not_applicable"
				return r.finish(ctx, c, store.CheckSkippedCredits, Summary{}, nil,
					fmt.Sprintf("Insufficient credits: this check is estimated at %d credits", est), &cfg)
			}
			return r.finish(ctx, c, store.CheckFailed, Summary{}, nil, "Credits could not be checked: "+r.shown(ctx, err, "check_id", c.ID), &cfg)
		}
		c.ReservedCredits = &est
	}
	running, err := r.startCrawls(ctx, &c, cfg)
	if err != nil {
		return err
	}
	if running {
		// Look again later without holding a worker.
		return river.JobSnooze(r.cfg.CrawlPoll)
	}
	crawlIDs := map[string]string{}
	var started []targetResult
	if len(c.TargetResults) > 0 {
		_ = json.Unmarshal(c.TargetResults, &started)
	}
	for _, tr := range started {
		crawlIDs[tr.TargetID] = tr.CrawlID
	}

	var (
		sum     Summary
		results []targetResult // for the check's status and error
		entries []any          // targetResults as shown
		actual  int64
	)
	for _, t := range cfg.Targets {
		tr := targetResult{TargetID: t.ID, Type: t.Type}
		var pages []store.MonitorPage
		var credits int64
		var entry any
		switch {
		case t.Type == TargetSearch:
			var sr searchResult
			pages, credits, sr = r.searchTarget(ctx, c, m, cfg, t)
			tr.Error, entry = sr.Error, sr
		case t.Type == TargetScrape:
			pages, credits = r.scrapeTarget(ctx, c, m, cfg, t)
			entry = tr
		case t.Type == TargetCrawl && crawlIDs[t.ID] != "":
			tr.CrawlID = crawlIDs[t.ID]
			pages, credits, err = r.crawlTarget(ctx, c, m, cfg, t, tr.CrawlID)
			if err != nil {
				return err
			}
			entry = tr
		default:
			tr.Error = t.Type + " targets are not supported on this server yet"
			results, entries = append(results, tr), append(entries, tr)
			continue
		}
		actual += credits
		for _, p := range pages {
			sum.TotalPages++
			switch p.Status {
			case changetrack.StatusSame:
				sum.Same++
			case changetrack.StatusChanged:
				sum.Changed++
			case changetrack.StatusNew:
				sum.New++
			case changetrack.StatusRemoved:
				sum.Removed++
			default:
				sum.Error++
			}
		}
		results, entries = append(results, tr), append(entries, entry)
	}
	if ctx.Err() != nil {
		// Cancelled (shutdown or timeout): the job is retried and the
		// check, still running, is claimed again.
		return ctx.Err()
	}
	status := store.CheckCompleted
	errMsg := ""
	switch {
	case sum.TotalPages > 0 && sum.Error == sum.TotalPages:
		status, errMsg = store.CheckFailed, "Every page of the check failed"
	case sum.Error > 0:
		status = store.CheckPartial
	}
	for _, tr := range results {
		if tr.Error != "" {
			if status == store.CheckCompleted {
				status = store.CheckPartial
			}
			if errMsg == "" {
				errMsg = tr.Error
			}
		}
	}
	if r.cfg.Ledger != nil {
		c.ActualCredits = &actual
		c.BillingStatus = "confirmed"
	}
	rb, _ := json.Marshal(entries)
	c.TargetResults = rb
	if err := r.finish(ctx, c, status, sum, rb, errMsg, &cfg); err != nil {
		return err
	}
	log.InfoContext(ctx, "monitor: check finished", "status", status, "pages", sum.TotalPages,
		"changed", sum.Changed, "new", sum.New, "removed", sum.Removed, "errors", sum.Error, "credits", actual)
	return nil
}

// finish records the check's end and sends monitor.check.completed.
func (r *Runner) finish(ctx context.Context, c store.MonitorCheck, status string, sum Summary, results []byte, errMsg string, cfg *Config) error {
	sb, _ := json.Marshal(sum)
	now := r.now()
	c.Status, c.Summary, c.TargetResults, c.Error, c.FinishedAt = status, sb, results, errMsg, &now
	if c.BillingStatus == "" {
		c.BillingStatus = "not_applicable"
	}
	ok, err := r.cfg.Store.FinishCheck(context.WithoutCancel(ctx), c)
	if err != nil {
		return err
	}
	if ok && cfg != nil && status != store.CheckSkippedCredits {
		r.notify(ctx, cfg.Webhook, EventCheckCompleted, c.ID, sum.Error == 0 && status != store.CheckFailed,
			completedData(c.MonitorID, c.ID, status, sum))
		r.queueSummaries(ctx, c, status, sum, cfg)
	}
	return nil
}

// scrapeTarget checks every URL of a scrape target, a few at a time, and
// returns the pages in URL order with the credits charged.
func (r *Runner) scrapeTarget(ctx context.Context, c store.MonitorCheck, m store.Monitor, cfg Config, t Target) ([]store.MonitorPage, int64) {
	pages := make([]store.MonitorPage, len(t.URLs))
	credits := make([]int64, len(t.URLs))
	sem := make(chan struct{}, r.cfg.PageConcurrency)
	var wg sync.WaitGroup
	for i, u := range t.URLs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return nil, 0
		}
		wg.Go(func() {
			defer func() { <-sem }()
			defer r.recoverPage(ctx, c, m, cfg, t, u, &pages[i], &credits[i])
			pages[i], credits[i] = r.checkPage(ctx, c, m, cfg, t, u)
		})
	}
	wg.Wait()
	var total int64
	for _, n := range credits {
		total += n
	}
	return pages, total
}

// recoverPage, deferred around a page's check on its own goroutine, turns
// a panic (in the scraper, the comparison, the model's judgment) into an
// error page with an error id, logged with its stack: a page a bug chokes
// on fails its own check instead of ending the server, whose other teams'
// work a crash would end too.
func (r *Runner) recoverPage(ctx context.Context, c store.MonitorCheck, m store.Monitor, cfg Config, t Target, u string, page *store.MonitorPage, credits *int64) {
	p := recover()
	if p == nil {
		return
	}
	err := fmt.Errorf("monitor: panic while checking the page: %v", p)
	r.cfg.Log.ErrorContext(ctx, "monitor: page check panicked", "check_id", c.ID, "url", logsafe.URL(u), "stack", string(debug.Stack()))
	*page = r.savePage(ctx, c, m, cfg, store.MonitorPage{ID: newID(), CheckID: c.ID, MonitorID: m.ID, TargetID: t.ID, URL: u,
		CreatedAt: r.now(), Status: PageError, Error: r.shown(ctx, err, "check_id", c.ID, "url", logsafe.URL(u))}, pageData{}, nil)
	*credits = 0
}

// checkPage scrapes one URL, compares it with the monitor's previous
// scrape of it, records the page, charges it and sends monitor.page.
func (r *Runner) checkPage(ctx context.Context, c store.MonitorCheck, m store.Monitor, cfg Config, t Target, u string) (store.MonitorPage, int64) {
	opts := pageOptions(t.Scrape, u, c.TeamID)
	var doc *scrape.Document
	release, err := r.slot(ctx, c.TeamID)
	if err == nil {
		pctx, cancel := context.WithTimeout(ctx, r.cfg.PageTimeout)
		doc, err = r.cfg.Scraper.Scrape(pctx, opts)
		cancel()
		release()
	}
	var credits int64
	if err == nil {
		credits = int64(doc.Metadata.CreditsUsed)
		if credits <= 0 {
			credits = PageCost(opts)
		}
	}
	page, judged := r.recordPage(ctx, c, m, cfg, t, u, doc, err)
	if credits > 0 && r.cfg.Ledger != nil {
		_, err := r.cfg.Ledger.Charge(context.WithoutCancel(ctx), store.Charge{
			TeamID: c.TeamID, Credits: credits, Kind: "monitor",
			IdempotencyKey: "monitor:" + c.ID + ":" + t.ID + ":" + u, Clamp: true,
		})
		if err != nil {
			r.cfg.Log.ErrorContext(ctx, "monitor: charge", "check_id", c.ID, "err", err)
		}
	}
	return page, credits + judged
}

// recordPage compares a scraped document (or records the scrape's error)
// against the monitor's previous scrape of the URL, has the model judge a
// new or changed page when the monitor has a goal and judging is on,
// saves the page and sends monitor.page. It returns the page and the
// credits its judgment cost.
func (r *Runner) recordPage(ctx context.Context, c store.MonitorCheck, m store.Monitor, cfg Config, t Target, u string, doc *scrape.Document, scrapeErr error) (store.MonitorPage, int64) {
	now := r.now()
	page := store.MonitorPage{ID: newID(), CheckID: c.ID, MonitorID: m.ID, TargetID: t.ID, URL: u, CreatedAt: now}
	if last, err := r.cfg.Store.LastPage(ctx, m.ID, t.ID, u, c.ID); err == nil {
		page.PreviousScrapeID = last.CurrentScrapeID
	}
	var data pageData
	if scrapeErr != nil {
		page.Status, page.Error = PageError, r.shown(ctx, scrapeErr, "check_id", c.ID, "url", logsafe.URL(u))
	} else if err := r.compare(ctx, c.TeamID, m.ID, t, u, doc, &page, &data, now); err != nil {
		page.Status, page.Error = PageError, "The page could not be compared with its previous scrape"
		r.cfg.Log.ErrorContext(ctx, "monitor: compare page", "check_id", c.ID, "url", u, "err", err)
	}
	var meaningful *bool
	var credits int64
	if cfg.Goal != "" && cfg.JudgeEnabled && r.cfg.Model != nil && data.judgeText != "" &&
		(page.Status == changetrack.StatusChanged || page.Status == changetrack.StatusNew) {
		j, ok, tokens, err := r.judge(ctx, cfg.Goal, u, page.Status, data.judgeText)
		credits = r.chargeJudge(ctx, c, t.ID, u, tokens)
		if err != nil {
			r.cfg.Log.WarnContext(ctx, "monitor: judgment failed; the page has none", "check_id", c.ID, "err", err)
		} else {
			data.Judgment, meaningful = j, ok
		}
	}
	return r.savePage(ctx, c, m, cfg, page, data, meaningful), credits
}

// savePage stores a page and sends its monitor.page event.
func (r *Runner) savePage(ctx context.Context, c store.MonitorCheck, m store.Monitor, cfg Config, page store.MonitorPage, data pageData, meaningful *bool) store.MonitorPage {
	page.Data, _ = json.Marshal(data)
	if err := r.cfg.Store.SaveCheckPage(context.WithoutCancel(ctx), page); err != nil {
		r.cfg.Log.ErrorContext(ctx, "monitor: save page", "check_id", c.ID, "url", page.URL, "err", err)
	}
	r.notify(ctx, cfg.Webhook, EventPage, c.ID, page.Status != PageError, pagePayload{
		MonitorID: m.ID, CheckID: c.ID, URL: page.URL, Status: page.Status,
		PreviousScrapeID: strPtr(page.PreviousScrapeID), CurrentScrapeID: strPtr(page.CurrentScrapeID),
		Error: strPtr(page.Error), IsMeaningful: meaningful, Judgment: orNull(data.Judgment), Diff: orNull(data.Diff),
	})
	return page
}

// pageOptions are a target's scrape options for one URL: always fetched
// afresh (a cached copy would hide the change the monitor looks for),
// markdown always (the comparison needs it), and no changeTracking format
// (the monitor compares itself, against its own snapshots).
func pageOptions(o scrape.Options, u, teamID string) scrape.Options {
	o.URL, o.TeamID = u, teamID
	o.MaxAge, o.MinAge = 0, nil
	formats := make([]scrape.Format, 0, len(o.Formats)+1)
	hasMarkdown := false
	for _, f := range o.Formats {
		switch f.Type {
		case scrape.FormatChangeTracking:
			continue
		case scrape.FormatMarkdown:
			hasMarkdown = true
		}
		formats = append(formats, f)
	}
	if !hasMarkdown {
		formats = append(formats, scrape.Format{Type: scrape.FormatMarkdown})
	}
	o.Formats = formats
	return o
}

func hasJSONFormat(o scrape.Options) bool {
	for _, f := range o.Formats {
		if f.Type == scrape.FormatJSON {
			return true
		}
	}
	return false
}

// compare fills the page's status, scrape ids, diff and snapshot from the
// document and the snapshot of the monitor's previous check, and saves the
// document as the new snapshot (except for a removed page, whose last
// content stays the reference).
func (r *Runner) compare(ctx context.Context, teamID, monitorID string, t Target, u string, doc *scrape.Document, page *store.MonitorPage, data *pageData, now time.Time) error {
	tag := "monitor:" + monitorID + ":" + t.ID
	prev, err := r.cfg.Store.PreviousScrape(ctx, teamID, u, tag)
	had := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	md := ""
	if doc.Markdown != nil {
		md = *doc.Markdown
	}
	var cur []byte
	if doc.JSON != nil && string(*doc.JSON) != "null" {
		cur = *doc.JSON
	}
	page.StatusCode = doc.Metadata.StatusCode
	page.CurrentScrapeID = doc.Metadata.ScrapeID
	page.Status = changetrack.Status(had, prev.Markdown, md, doc.Metadata.StatusCode)
	jsonMode := hasJSONFormat(t.Scrape)
	var fields map[string]fieldDiff
	if jsonMode && had && page.Status != changetrack.StatusRemoved {
		fields = jsonFieldDiff(prev.JSON, cur)
		if len(fields) > 0 && page.Status == changetrack.StatusSame {
			page.Status = changetrack.StatusChanged
		}
	}
	if page.Status == changetrack.StatusChanged {
		d := map[string]any{}
		if prev.Markdown != md {
			cd := changetrack.Compute(prev.Markdown, md)
			d["text"] = cd.Text
			data.judgeText = cd.Text
			if !jsonMode {
				d["json"] = cd.JSON
			}
		}
		if jsonMode {
			d["json"] = fields
			fb, _ := json.Marshal(fields)
			data.judgeText += "\nChanged fields (previous and current values):\n" + string(fb)
		}
		data.Diff, _ = json.Marshal(d)
	}
	if page.Status == changetrack.StatusNew {
		data.judgeText = md
	}
	if jsonMode && cur != nil {
		data.Snapshot, _ = json.Marshal(map[string]json.RawMessage{"json": cur})
	}
	if page.Status == changetrack.StatusRemoved {
		return nil
	}
	return r.cfg.Store.SaveScrape(ctx, store.ScrapeSnapshot{TeamID: teamID, URL: u, Tag: tag, Markdown: md, JSON: cur, ScrapedAt: now})
}

// fieldDiff is one changed key of a json extraction.
type fieldDiff struct {
	Previous json.RawMessage `json:"previous"`
	Current  json.RawMessage `json:"current"`
}

// jsonFieldDiff compares two extracted objects key by key (values compared
// as canonical JSON); non-objects compare as the single key "".
func jsonFieldDiff(prev, cur []byte) map[string]fieldDiff {
	pm, pok := objectOf(prev)
	cm, cok := objectOf(cur)
	out := map[string]fieldDiff{}
	if !pok || !cok {
		if !jsonEqual(prev, cur) {
			out[""] = fieldDiff{orNull(prev), orNull(cur)}
		}
		return out
	}
	keys := make([]string, 0, len(pm)+len(cm))
	for k := range pm {
		keys = append(keys, k)
	}
	for k := range cm {
		if _, ok := pm[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !jsonEqual(pm[k], cm[k]) {
			out[k] = fieldDiff{orNull(pm[k]), orNull(cm[k])}
		}
	}
	return out
}

func objectOf(b []byte) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if len(b) == 0 || json.Unmarshal(b, &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

// jsonEqual compares two JSON values whatever their spacing and key order.
func jsonEqual(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return bytes.Equal(a, b)
	}
	ca, _ := json.Marshal(va)
	cb, _ := json.Marshal(vb)
	return bytes.Equal(ca, cb)
}

// shown is what a client is shown of err (a check's or page's error, in
// the API and in webhooks), as the one error table maps it: a known error
// by its message, any other by the generic message naming an error id,
// under which err's full text (which may name internal hosts, addresses and
// packages) is logged here with attrs.
func (r *Runner) shown(ctx context.Context, err error, attrs ...any) string {
	_, msg, id := apierr.Describe(err)
	if id != "" {
		r.cfg.Log.ErrorContext(ctx, "monitor: unexpected error", append([]any{"error_id", id, "err", err}, attrs...)...)
	}
	return msg
}
