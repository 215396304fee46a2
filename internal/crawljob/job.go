package crawljob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/threat"
	"github.com/firegate/firegate/internal/webhook"
)

// JobOptions is what a crawl or batch scrape carries in store.Job.Options:
// everything its workers need, in any process.
type JobOptions struct {
	// Scrape are the validated scrape options of every page (URL unset).
	Scrape scrape.Options `json:"scrape"`
	// Rules are the crawler's URL rules (crawls only).
	Rules crawl.CrawlRules `json:"rules"`
	// Sitemap is include (""), skip or only (crawls only).
	Sitemap crawl.SitemapMode `json:"sitemap,omitempty"`
	// IgnoreRobots crawls what robots.txt disallows.
	IgnoreRobots bool `json:"ignoreRobots,omitempty"`
	// Delay is a pause after each page; it makes the job run one page at a
	// time.
	Delay time.Duration `json:"delay,omitempty"`
	// MaxConcurrency caps the job's pages in flight; 0 = the team's limit.
	MaxConcurrency int `json:"maxConcurrency,omitempty"`
	// TeamConcurrency is the team's concurrency limit when the job began;
	// 0 = unlimited.
	TeamConcurrency int `json:"teamConcurrency,omitempty"`
	// Webhook, when set, receives the job's events.
	Webhook *webhook.Spec `json:"webhook,omitempty"`
	// Request echoes the crawler options as the API shows them in
	// GET /v2/crawl/active.
	Request json.RawMessage `json:"request,omitempty"`
	// Extract, when set, makes a batch an extract (see ExtractOptions).
	Extract *ExtractOptions `json:"extract,omitempty"`
}

// Scraper scrapes one page; *scrape.Engine implements it.
type Scraper interface {
	Scrape(ctx context.Context, opts scrape.Options) (*scrape.Document, error)
}

// Charger charges credits; *billing.Ledger implements it.
type Charger interface {
	Charge(ctx context.Context, c store.Charge) (store.ChargeResult, error)
}

// Enqueuer inserts queue jobs; *queue.Queue implements it.
type Enqueuer interface {
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error
	InsertMany(ctx context.Context, params []river.InsertManyParams) error
}

// RunnerConfig are the collaborators of a Runner.
type RunnerConfig struct {
	Jobs    store.JobStore
	Scraper Scraper
	// Mapper finds sitemap URLs when a crawl starts.
	Mapper *crawl.Mapper
	// Fetcher fetches robots.txt.
	Fetcher crawl.Fetcher
	// Ledger, when nil, charges nothing.
	Ledger Charger
	// Limiter counts concurrent pages (per team, per job, per host); nil
	// counts them in this process only.
	Limiter limits.Limiter
	// Webhooks, when nil, delivers no webhooks.
	Webhooks *webhook.Sender
	// TTL is how long a job and its results are kept; default 24h.
	TTL time.Duration
	// UserAgent is the robots.txt user agent token.
	UserAgent string
	// ObservePage, optional, is told of every page this process finishes:
	// the job kind and the URL state (done, failed, skipped).
	ObservePage func(kind, state string)
	// ProgressEvery is how often a running job logs its progress; default
	// 10s.
	ProgressEvery time.Duration
	// Threat is the operator's threat blocklist; with the job's
	// threatProtection it checks the redirect hops of the sitemap fetches
	// (the pages are checked by the scraper). Nil: only the job's own
	// lists.
	Threat *threat.Checker
	// Memory, optional, is the crawl memory of change tracking (see
	// revisit); nil: crawls revisit no page of earlier crawls.
	Memory Memory
	Log    *slog.Logger
}

// Runner starts, runs and cancels crawls and batch scrapes on the queue.
// Every process that runs queue workers registers the Runner's workers; API
// processes use it to start and cancel jobs.
type Runner struct {
	cfg RunnerConfig
	q   Enqueuer
	now func() time.Time

	mu    sync.Mutex
	cache map[string]*cachedJob // job id -> decoded options and status
	// forgets counts forget calls: a status read that a forget overtook
	// (a cancel landed while it was in flight) is not cached.
	forgets uint64
	robots  map[string]*robotsEntry
}

// NewRunner returns a Runner; Bind must be called before use.
func NewRunner(cfg RunnerConfig) *Runner {
	if cfg.TTL <= 0 {
		cfg.TTL = 24 * time.Hour
	}
	if cfg.ProgressEvery <= 0 {
		cfg.ProgressEvery = 10 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Limiter == nil {
		cfg.Limiter = limits.NewLocal()
	}
	return &Runner{cfg: cfg, now: time.Now, cache: map[string]*cachedJob{}, robots: map[string]*robotsEntry{}}
}

// Bind gives the Runner its queue (built after the workers were registered).
func (r *Runner) Bind(q Enqueuer) { r.q = q }

// Register adds the Runner's workers to w.
func (r *Runner) Register(w *river.Workers) {
	river.AddWorker(w, &kickoffWorker{r: r})
	river.AddWorker(w, &pageWorker{r: r})
	var sender webhook.Poster // a nil *webhook.Sender must stay a nil Poster
	if r.cfg.Webhooks != nil {
		sender = r.cfg.Webhooks
	}
	river.AddWorker(w, webhook.NewWorker[webhookArgs](sender, r.cfg.Log, "webhook delivery failed"))
	river.AddWorker(w, &purgeWorker{r: r})
}

// PeriodicJobs are the Runner's scheduled jobs: the purge of expired jobs.
func (r *Runner) PeriodicJobs() []*river.PeriodicJob {
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(10*time.Minute),
		func() (river.JobArgs, *river.InsertOpts) { return purgeArgs{}, nil },
		&river.PeriodicJobOpts{RunOnStart: true})}
}

// Errors of starting and cancelling jobs.
var (
	// ErrJobNotFound means no such job (or it expired).
	ErrJobNotFound = errors.New("crawl: job not found")
	// ErrJobFinished means the job already completed (cancel is refused).
	ErrJobFinished = errors.New("crawl: job already completed")
	// ErrIdempotencyKeyUsed means the team used the idempotency key before.
	ErrIdempotencyKeyUsed = errors.New("crawl: idempotency key already used")
)

// NewJobID mints a job id (UUIDv7).
func NewJobID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}

// StartCrawl stores a new crawl and queues its kickoff. j.ID, TeamID, URL,
// Limit and Options must be set.
func (r *Runner) StartCrawl(ctx context.Context, j store.Job, o JobOptions) error {
	j.Kind = store.JobCrawl
	if err := r.create(ctx, &j, o); err != nil {
		return err
	}
	if err := r.q.Insert(ctx, kickoffArgs{Job: j.ID}, nil); err != nil {
		r.fail(ctx, j.ID, "could not queue the crawl")
		return err
	}
	return nil
}

// StartBatch stores a new batch scrape of urls, queues a page job for each
// and sends the started event.
func (r *Runner) StartBatch(ctx context.Context, j store.Job, o JobOptions, urls []string) error {
	j.Kind = store.JobBatch
	if err := r.create(ctx, &j, o); err != nil {
		return err
	}
	r.notifyNow(ctx, j.ID, &o, webhookKind(j.Kind, &o).Started(j.ID))
	if err := r.seed(ctx, j.ID, batchURLs(urls)); err != nil {
		r.fail(ctx, j.ID, "could not queue the batch")
		return err
	}
	return nil
}

// AppendBatch adds urls to a batch scrape of team teamID, reopening it if it
// had completed; URLs the batch already has are left alone (when all are,
// a completed batch stays completed). ErrJobNotFound if there is no such
// batch of that team.
func (r *Runner) AppendBatch(ctx context.Context, teamID, id string, urls []string) error {
	j, err := r.cfg.Jobs.Job(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (j.TeamID != teamID || j.Kind != store.JobBatch)) {
		return ErrJobNotFound
	}
	if err != nil {
		return err
	}
	var o JobOptions
	if json.Unmarshal(j.Options, &o) == nil && o.Extract != nil {
		return ErrJobNotFound // an extract is not a batch one may append to
	}
	// Reopen first: a job that is not scraping claims nothing.
	reopened, err := r.cfg.Jobs.SetJobStatus(ctx, id, []string{store.JobCompleted}, store.JobScraping, "")
	if err != nil {
		return err
	}
	r.forget(id)
	// Claimed under a parent of their own, the URLs returned are only those
	// new to the batch (its seeds were claimed under "").
	claimed, err := r.cfg.Jobs.ClaimURLs(ctx, id, "append:"+NewJobID(), batchURLs(urls))
	if err != nil {
		return fmt.Errorf("crawl: claim urls: %w", err)
	}
	if len(claimed) == 0 {
		if reopened {
			// Nothing new: no page would ever complete it again.
			_, err = r.cfg.Jobs.SetJobStatus(ctx, id, []string{store.JobScraping}, store.JobCompleted, "")
		}
		return err
	}
	return r.enqueuePages(ctx, id, claimed)
}

// batchURLs are the JobURLs of a batch: each distinct URL once, as given.
func batchURLs(urls []string) []store.JobURL {
	out := make([]store.JobURL, 0, len(urls))
	for _, u := range urls {
		out = append(out, store.JobURL{Key: u, URL: u})
	}
	return out
}

func (r *Runner) create(ctx context.Context, j *store.Job, o JobOptions) error {
	opts, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("crawl: encode job options: %w", err)
	}
	j.Options = opts
	j.Status = store.JobScraping
	now := r.now().UTC()
	j.CreatedAt, j.ExpiresAt = now, now.Add(r.cfg.TTL)
	created, err := r.cfg.Jobs.CreateJob(ctx, *j)
	if errors.Is(err, store.ErrConflict) {
		return ErrIdempotencyKeyUsed
	}
	if err != nil {
		return fmt.Errorf("crawl: create job: %w", err)
	}
	*j = created
	return nil
}

// seed claims urls for the job as seeds and queues a page job for each.
func (r *Runner) seed(ctx context.Context, id string, urls []store.JobURL) error {
	claimed, err := r.cfg.Jobs.ClaimURLs(ctx, id, "", urls)
	if err != nil {
		return fmt.Errorf("crawl: claim urls: %w", err)
	}
	return r.enqueuePages(ctx, id, claimed)
}

func (r *Runner) enqueuePages(ctx context.Context, id string, urls []store.JobURL) error {
	params := make([]river.InsertManyParams, len(urls))
	for i, u := range urls {
		// Shallower pages first (River's priorities are 1 to 4), so that a
		// page is usually claimed through its shortest link path, the depth
		// maxDiscoveryDepth judges.
		params[i] = river.InsertManyParams{Args: pageArgs{Job: id, Key: u.Key, URL: u.URL, Depth: u.Depth},
			InsertOpts: &river.InsertOpts{Priority: min(u.Depth+1, 4)}}
	}
	return r.q.InsertMany(ctx, params)
}

// Cancel cancels a running job of team teamID: ErrJobNotFound if there is
// none, ErrJobFinished if it already completed. Pages in flight finish;
// queued pages are skipped.
func (r *Runner) Cancel(ctx context.Context, teamID, id string) error {
	j, err := r.cfg.Jobs.Job(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && j.TeamID != teamID) {
		return ErrJobNotFound
	}
	if err != nil {
		return err
	}
	switch j.Status {
	case store.JobCancelled:
		return nil
	case store.JobCompleted, store.JobFailed:
		return ErrJobFinished
	}
	ok, err := r.cfg.Jobs.SetJobStatus(ctx, id, []string{store.JobScraping}, store.JobCancelled, "")
	if err != nil {
		return err
	}
	r.forget(id)
	if !ok {
		return ErrJobFinished
	}
	r.cfg.Log.InfoContext(ctx, "job cancelled", "job_id", id, "kind", j.Kind, "team_id", teamID)
	return nil
}

// fail marks a job failed (best effort: used when queueing it failed).
func (r *Runner) fail(ctx context.Context, id, msg string) {
	ctx = context.WithoutCancel(ctx)
	if _, err := r.cfg.Jobs.SetJobStatus(ctx, id, []string{store.JobScraping}, store.JobFailed, msg); err != nil {
		r.cfg.Log.ErrorContext(ctx, "mark job failed", "job_id", id, "err", err)
	}
}

// cachedJob is a job's decoded options, with its status as last read.
type cachedJob struct {
	job      store.Job
	opts     JobOptions
	rules    *crawl.Rules // crawls only
	readAt   time.Time
	progress time.Time           // last progress log
	started  time.Time           // first page seen by this process
	pages    int                 // pages finished by this process since started
	seen     map[string]struct{} // keys claimed and queued (see Runner.unseen)
}

// statusTTL is how long a job's status is trusted before it is read again:
// how long a cancelled job may keep starting pages in a process.
const statusTTL = 500 * time.Millisecond

// job returns the job's decoded options and recent status; ErrJobNotFound
// when it is gone.
func (r *Runner) job(ctx context.Context, id string) (*cachedJob, error) {
	return r.jobWithin(ctx, id, statusTTL)
}

// jobWithin is job with a status at most maxAge old (0: read now).
func (r *Runner) jobWithin(ctx context.Context, id string, maxAge time.Duration) (*cachedJob, error) {
	r.mu.Lock()
	c := r.cache[id]
	forgets := r.forgets
	r.mu.Unlock()
	if c != nil && r.now().Sub(c.readAt) < maxAge {
		return c, nil
	}
	j, err := r.cfg.Jobs.Job(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		r.forget(id)
		return nil, ErrJobNotFound
	}
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// A forget since the read began (a cancel, say) may have changed what
	// was read: the copy serves this caller only, and the next read goes
	// to the store.
	keep := r.forgets == forgets
	if old := r.cache[id]; old != nil && keep {
		// A new copy rather than an update in place: pages holding the old
		// one read its job and readAt without the lock. The seen set stays
		// shared.
		if old.seen == nil {
			old.seen = make(map[string]struct{})
		}
		c = new(cachedJob)
		*c = *old
		c.job, c.readAt = j, r.now()
		r.cache[id] = c
		return c, nil
	}
	c = &cachedJob{job: j, readAt: r.now(), started: r.now(), progress: r.now()}
	if err := json.Unmarshal(j.Options, &c.opts); err != nil {
		return nil, fmt.Errorf("crawl: decode job options: %w", err)
	}
	if j.Kind == store.JobCrawl {
		rules, err := crawl.NewRules(j.URL, c.opts.Rules)
		if err != nil {
			return nil, fmt.Errorf("crawl: job rules: %w", err)
		}
		c.rules = rules
	}
	if !keep {
		return c, nil
	}
	if len(r.cache) >= 1024 {
		clear(r.cache)
	}
	r.cache[id] = c
	return c, nil
}

// forget drops a job from the cache so its next use reads it again.
func (r *Runner) forget(id string) {
	r.mu.Lock()
	delete(r.cache, id)
	r.forgets++
	r.mu.Unlock()
}

// webhookKind is the event prefix of a job of that kind and options.
func webhookKind(kind string, o *JobOptions) webhook.Kind {
	if o.Extract != nil {
		return webhook.KindExtract
	}
	if kind == store.JobBatch {
		return webhook.KindBatchScrape
	}
	return webhook.KindCrawl
}

// envelope builds the webhook body of ev when the job has a webhook that
// wants it; ok is false when nothing is to be sent.
func (r *Runner) envelope(ctx context.Context, jobID string, o *JobOptions, ev webhook.Event) (body []byte, ok bool) {
	if o.Webhook == nil || o.Webhook.IsZero() || !o.Webhook.Wants(ev.Type) || r.cfg.Webhooks == nil {
		return nil, false
	}
	if o.Extract != nil && strings.HasSuffix(ev.Type, "."+webhook.EventPage) {
		return nil, false // an extract sends no page events
	}
	body, err := webhook.Envelope(*o.Webhook, ev, NewJobID())
	if err != nil {
		r.cfg.Log.ErrorContext(ctx, "webhook envelope", "job_id", jobID, "event", ev.Type, "err", err)
		return nil, false
	}
	return body, true
}

// enqueueWebhook queues the delivery of body.
func (r *Runner) enqueueWebhook(ctx context.Context, jobID string, o *JobOptions, event string, body []byte, opts *river.InsertOpts) {
	args := webhookArgs{ID: jobID, Event: event, Spec: *o.Webhook, Body: body}
	if err := r.q.Insert(context.WithoutCancel(ctx), args, opts); err != nil {
		r.cfg.Log.ErrorContext(ctx, "queue webhook", "job_id", jobID, "event", event, "err", err)
	}
}

// notify queues a webhook delivery of ev. last delays it a little so that
// it lands after the page events queued before it.
func (r *Runner) notify(ctx context.Context, jobID string, o *JobOptions, ev webhook.Event, last bool) {
	body, ok := r.envelope(ctx, jobID, o, ev)
	if !ok {
		return
	}
	var opts *river.InsertOpts
	if last {
		opts = &river.InsertOpts{ScheduledAt: r.now().Add(time.Second)}
	}
	r.enqueueWebhook(ctx, jobID, o, ev.Type, body, opts)
}

// startedTimeout bounds the direct delivery of a started event.
const startedTimeout = 5 * time.Second

// notifyNow delivers ev at once, before the job's pages are queued, so that
// the started event reaches the receiver before any page event; a delivery
// that fails in a way a retry may fix is queued like the other events.
func (r *Runner) notifyNow(ctx context.Context, jobID string, o *JobOptions, ev webhook.Event) {
	body, ok := r.envelope(ctx, jobID, o, ev)
	if !ok {
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), startedTimeout)
	err := r.cfg.Webhooks.Send(sctx, *o.Webhook, body)
	cancel()
	if err == nil {
		return
	}
	r.cfg.Log.WarnContext(ctx, "webhook delivery failed", "job_id", jobID, "event", ev.Type, "attempt", 1, "err", err)
	if !webhook.Permanent(err) {
		r.enqueueWebhook(ctx, jobID, o, ev.Type, body, nil)
	}
}

// startHost is the host of a job's start URL, for logs.
func startHost(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Host
}
