package crawljob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/logsafe"
	"github.com/firegate/firegate/internal/pause"
	"github.com/firegate/firegate/internal/queue"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/webhook"
)

// kickoffArgs start a crawl: robots.txt, sitemaps, seeds.
type kickoffArgs struct {
	Job string `json:"job"`
}

func (kickoffArgs) Kind() string { return "crawl_kickoff" }
func (kickoffArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queue.Control, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// pageArgs scrape one URL of a job. Unique by arguments, so a URL a retried
// parent queues again does not run twice.
type pageArgs struct {
	Job   string `json:"job"`
	Key   string `json:"key"`
	URL   string `json:"url"`
	Depth int    `json:"depth,omitempty"`
	// Hidden marks a URL known only from the crawl memory (see revisit).
	Hidden bool `json:"hidden,omitempty"`
}

func (pageArgs) Kind() string { return "page" }
func (pageArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queue.Pages, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// webhookOwner names the deliveries of crawl, batch and extract jobs.
type webhookOwner struct{}

func (webhookOwner) Kind() string  { return "webhook" }
func (webhookOwner) IDKey() string { return "job_id" }

// webhookArgs deliver one webhook body of a job.
type webhookArgs = webhook.Args[webhookOwner]

// purgeArgs delete expired jobs.
type purgeArgs struct{}

func (purgeArgs) Kind() string { return "job_purge" }
func (purgeArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queue.Control, UniqueOpts: river.UniqueOpts{ByPeriod: time.Minute}}
}

type kickoffWorker struct {
	river.WorkerDefaults[kickoffArgs]
	r *Runner
}

type pageWorker struct {
	river.WorkerDefaults[pageArgs]
	r *Runner
}

type purgeWorker struct {
	river.WorkerDefaults[purgeArgs]
	r *Runner
}

// Work starts a crawl: the start URL and, unless sitemap is skip, the
// sitemap's URLs that pass the rules and robots.txt become the seeds.
func (w *kickoffWorker) Work(ctx context.Context, job *river.Job[kickoffArgs]) error {
	r := w.r
	c, err := r.job(ctx, job.Args.Job)
	if errors.Is(err, ErrJobNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if c.job.Status != store.JobScraping {
		return nil
	}
	start, err := url.Parse(c.job.URL)
	if err != nil {
		r.fail(ctx, c.job.ID, "invalid start URL")
		return nil
	}
	robots := r.robotsFor(ctx, c, start)
	var seeds, blocked []store.JobURL
	add := func(u *url.URL) {
		ju := store.JobURL{Key: c.rules.Key(u), URL: u.String()}
		if robots != nil && !robots.Allowed(u) {
			blocked = append(blocked, ju)
			return
		}
		seeds = append(seeds, ju)
	}
	add(start)
	if c.opts.Sitemap != crawl.SitemapSkip && r.cfg.Mapper != nil {
		for _, l := range r.sitemapURLs(ctx, c) {
			u, err := url.Parse(l)
			if err != nil {
				continue
			}
			if ok, _ := c.rules.Allow(u, 0, false); ok {
				add(u)
			}
		}
	}
	if len(blocked) > 0 {
		list := make([]string, len(blocked))
		for i, b := range blocked {
			list[i] = b.URL
		}
		if err := r.cfg.Jobs.AddRobotsBlocked(ctx, c.job.ID, list); err != nil {
			return err
		}
	}
	r.notifyNow(ctx, c.job.ID, &c.opts, webhook.KindCrawl.Started(c.job.ID))
	claimed, err := r.cfg.Jobs.ClaimURLs(ctx, c.job.ID, "", dedupe(seeds))
	if err != nil {
		return err
	}
	if err := r.enqueuePages(ctx, c.job.ID, claimed); err != nil {
		return err
	}
	r.cfg.Log.InfoContext(ctx, "crawl started", "job_id", c.job.ID, "team_id", c.job.TeamID,
		"host", startHost(c.job.URL), "seeds", len(claimed), "robots_blocked", len(blocked))
	if len(claimed) == 0 {
		r.complete(ctx, c)
	}
	return nil
}

// sitemapURLs lists the site's sitemap URLs that pass the crawl's rules
// (found through robots.txt and /sitemap.xml, indexes and gzip followed),
// at most the crawl's limit of them, within the mapper's sitemap budget;
// none when there is no sitemap.
func (r *Runner) sitemapURLs(ctx context.Context, c *cachedJob) []string {
	limit := crawl.MaxLimit
	if c.job.Limit > 0 {
		limit = min(c.job.Limit, crawl.MaxLimit)
	}
	res, err := r.cfg.Mapper.Map(ctx, crawl.MapOptions{
		URL: c.job.URL, Sitemap: crawl.SitemapOnly, Limit: limit,
		KeepQueryParameters: !c.opts.Rules.IgnoreQueryParameters,
		KeepSimilarURLs:     true, NoPathFilter: true, AllowExternalLinks: true,
		Headers: c.opts.Scrape.Headers,
		Accept: func(u *url.URL) bool {
			ok, _ := c.rules.Allow(u, 0, false)
			return ok
		},
		CheckHop: r.threatHop(c),
	})
	if err != nil {
		r.cfg.Log.InfoContext(ctx, "crawl: no sitemap", "job_id", c.job.ID, "err", err)
		return nil
	}
	if res.BudgetSpent {
		r.cfg.Log.InfoContext(ctx, "crawl: sitemap budget spent", "job_id", c.job.ID, "sitemap_urls", len(res.Links))
	}
	out := make([]string, len(res.Links))
	for i, l := range res.Links {
		out[i] = l.URL
	}
	return out
}

// dedupe drops repeated keys, keeping the first.
func dedupe(urls []store.JobURL) []store.JobURL {
	seen := make(map[string]bool, len(urls))
	out := urls[:0]
	for _, u := range urls {
		if !seen[u.Key] {
			seen[u.Key] = true
			out = append(out, u)
		}
	}
	return out
}

// slotWaitFresh is how long a page may wait for its slots and still trust
// a cached job status.
const slotWaitFresh = 10 * time.Millisecond

// acquireWait is how long a page waits for a concurrency slot before it
// gives its worker back and is retried later.
const acquireWait = 5 * time.Second

// Work scrapes one page of a job and, for a crawl, claims and queues the
// links it finds. On the job's last attempt an error (or a panic) fails the
// page instead of leaving River to discard the job with the URL pending,
// which would keep the job scraping forever.
func (w *pageWorker) Work(ctx context.Context, job *river.Job[pageArgs]) (err error) {
	if job.Attempt < job.MaxAttempts {
		return w.work(ctx, job)
	}
	defer func() {
		if p := recover(); p != nil {
			w.r.cfg.Log.ErrorContext(ctx, "page worker panicked", "job_id", job.Args.Job,
				"url", logsafe.URL(job.Args.URL), "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", p)
		}
		var snooze *river.JobSnoozeError
		if err == nil || errors.As(err, &snooze) {
			return
		}
		if gerr := w.r.giveUp(ctx, job.Args, job.Attempt, err); gerr != nil {
			err = errors.Join(err, gerr)
		} else {
			err = nil
		}
	}()
	return w.work(ctx, job)
}

// maxReason bounds the last error quoted in a given-up page's message.
const maxReason = 300

// giveUp fails a page whose job spent its attempts (the last ended with
// last), unless it was settled before, and completes the job when it was
// its last page. It runs in a worker's last attempt and in Reconcile, for a
// job River discarded. The page's message quotes last as errcode.Describe
// shows it (an internal error by its error id only).
func (r *Runner) giveUp(ctx context.Context, a pageArgs, attempts int, last error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	c, err := r.job(ctx, a.Job)
	if errors.Is(err, ErrJobNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	state, err := r.cfg.Jobs.URLState(ctx, a.Job, a.Key)
	if errors.Is(err, store.ErrNotFound) || (err == nil && state != store.URLPending) {
		return nil
	}
	if err != nil {
		return err
	}
	r.cfg.Log.WarnContext(ctx, "page given up after its attempts failed", "job_id", a.Job, "url", logsafe.URL(a.URL),
		"attempts", attempts, "err", last)
	_, reason := r.describe(ctx, a, last)
	if len(reason) > maxReason {
		reason = strings.ToValidUTF8(reason[:maxReason], "") + "…"
	}
	msg := fmt.Sprintf("Scraping this page failed on all of its %d attempts; the page was given up. The last attempt's error: %s", attempts, reason)
	code, msg := r.describe(ctx, a, &errcode.Failure{Kind: scrape.ErrSite, Msg: msg})
	r.notify(ctx, a.Job, &c.opts, webhookKind(c.job.Kind, &c.opts).PageFailed(a.Job, a.URL, msg), false)
	return r.finish(ctx, c, a, store.URLResult{State: store.URLFailed, Code: code, Error: msg})
}

func (w *pageWorker) work(ctx context.Context, job *river.Job[pageArgs]) error {
	r, a := w.r, job.Args
	c, err := r.job(ctx, a.Job)
	if errors.Is(err, ErrJobNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	state := store.URLPending
	if job.Attempt > 1 {
		// A retry: the first attempt may have finished the URL before it
		// died. (A first attempt's URL is pending: FinishURL alone would
		// refuse a second document anyway.)
		state, err = r.cfg.Jobs.URLState(ctx, a.Job, a.Key)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	if state != store.URLPending || stopped(c.job.Status) {
		// Done before (a retried job) or the job was stopped: settle the
		// URL and see whether the job is complete. (A completed job's
		// pending URL is scraped: a batch appended to as it completed.)
		return r.finish(ctx, c, a, store.URLResult{State: store.URLSkipped})
	}
	if job.Attempt >= job.MaxAttempts && queue.LastAttemptDied(job.JobRow) {
		// The last attempt, and the one before died (or hung) with the
		// page in hand: the page may be what kills workers. Dying once more would
		// leave the job discarded and the URL pending forever, so the
		// page fails instead.
		died := queue.DiedAttempts(job.JobRow)
		msg := fmt.Sprintf("The worker scraping this page died or hung on %d of its %d attempts, the last one included; the page was given up.",
			died, job.Attempt-1)
		code, msg := r.describe(ctx, a, &errcode.Failure{Kind: scrape.ErrSite, Msg: msg})
		r.cfg.Log.WarnContext(ctx, "page given up after its worker died", "job_id", a.Job, "url", logsafe.URL(a.URL),
			"attempts", job.Attempt-1, "died", died)
		r.notify(ctx, a.Job, &c.opts, webhookKind(c.job.Kind, &c.opts).PageFailed(a.Job, a.URL, msg), false)
		return r.finish(ctx, c, a, store.URLResult{State: store.URLFailed, Code: code, Error: msg})
	}
	host, hostDelay := r.crawlDelay(ctx, c, a.URL)
	asked := time.Now()
	release, err := r.slots(ctx, c, host, hostDelay)
	if errors.Is(err, limits.ErrConcurrencyTimeout) && ctx.Err() == nil {
		return river.JobSnooze(time.Second)
	}
	if err != nil {
		return err
	}
	// The job may have been cancelled while the page waited for its slot:
	// a page not started yet is skipped like a queued one. After a wait
	// the status is read afresh (a cancel during the wait is the case).
	maxAge := statusTTL
	if time.Since(asked) > slotWaitFresh {
		maxAge = 0
	}
	if fresh, err := r.jobWithin(ctx, a.Job, maxAge); err != nil || stopped(fresh.job.Status) {
		release()
		if errors.Is(err, ErrJobNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return r.finish(ctx, fresh, a, store.URLResult{State: store.URLSkipped})
	}
	opts := c.opts.Scrape
	opts.URL, opts.TeamID = a.URL, c.job.TeamID
	wantLinks := hasFormat(opts.Formats, scrape.FormatLinks)
	discover := c.rules != nil && c.opts.Sitemap != crawl.SitemapOnly && !a.Hidden
	if a.Hidden {
		opts.ChangeVisibility = scrape.VisibilityHidden
	}
	if c.job.Kind == store.JobCrawl {
		opts.ProxySession = a.Job // one proxy per host for the whole crawl
	}
	if discover && !wantLinks {
		opts.Formats = append(append([]scrape.Format(nil), opts.Formats...), scrape.Format{Type: scrape.FormatLinks})
	}
	doc, scrapeErr := r.scrapeHolding(ctx, opts, release)
	if c.opts.Delay > 0 {
		_ = pause.For(ctx, c.opts.Delay)
	} else if hostDelay > 0 {
		_ = pause.For(ctx, hostDelay)
	}
	release()
	if scrapeErr == nil && c.rules != nil && doc.Metadata.StatusCode >= 400 && !removed(doc) {
		// A crawl reports error pages in /errors, not among its results
		// (a page change tracking found removed is a result).
		scrapeErr = &errcode.Failure{Kind: scrape.ErrSite,
			Msg: fmt.Sprintf("The page answered HTTP %d %s.", doc.Metadata.StatusCode, http.StatusText(doc.Metadata.StatusCode))}
	}
	if scrapeErr != nil {
		if ctx.Err() != nil {
			return ctx.Err() // shutting down or timed out: retried
		}
		code, msg := r.describe(ctx, a, scrapeErr)
		r.notify(ctx, a.Job, &c.opts, webhookKind(c.job.Kind, &c.opts).PageFailed(a.Job, a.URL, msg), false)
		return r.finish(ctx, c, a, store.URLResult{State: store.URLFailed, Code: code, Error: msg})
	}

	r.remember(ctx, c, a, doc)
	if discover && !removed(doc) {
		if err := r.discover(ctx, c, a, doc); err != nil {
			return err
		}
	}
	if !wantLinks {
		doc.Links = nil
	}
	credits := int64(doc.Metadata.CreditsUsed)
	if c.opts.Extract != nil {
		credits = extractCredits(&c.opts, doc)
	}
	data, err := jobDocument(&c.opts, doc)
	if err != nil {
		return err
	}
	r.charge(ctx, c, a, credits)
	return r.finishDoc(ctx, c, a, store.URLResult{State: store.URLDone, Document: data, Credits: credits}, data)
}

// scrapeHolding scrapes with the page's slots held; a scraper that panics
// gives them back before the panic goes on (to River, which retries the
// job), so a panicking page does not use up its team's concurrency.
func (r *Runner) scrapeHolding(ctx context.Context, opts scrape.Options, release func()) (*scrape.Document, error) {
	done := false
	defer func() {
		if !done {
			release()
		}
	}()
	doc, err := r.cfg.Scraper.Scrape(ctx, opts)
	done = true
	return doc, err
}

// discover claims the page's links the rules allow and queues them.
func (r *Runner) discover(ctx context.Context, c *cachedJob, a pageArgs, doc *scrape.Document) error {
	page, _ := url.Parse(a.URL)
	fromExternal := page != nil && c.rules.IsExternal(page)
	var next []store.JobURL
	var blocked []string
	for _, l := range doc.Links {
		u, err := url.Parse(l)
		if err != nil {
			continue
		}
		if ok, _ := c.rules.Allow(u, a.Depth+1, fromExternal); !ok {
			continue
		}
		u.Fragment = ""
		if rb := r.robotsFor(ctx, c, u); rb != nil && !rb.Allowed(u) {
			blocked = append(blocked, u.String())
			continue
		}
		next = append(next, store.JobURL{Key: c.rules.Key(u), URL: u.String(), Depth: a.Depth + 1})
	}
	if len(blocked) > 0 {
		if err := r.cfg.Jobs.AddRobotsBlocked(ctx, a.Job, blocked); err != nil {
			return err
		}
	}
	next = r.unseen(c, dedupe(next))
	if len(next) == 0 {
		return nil
	}
	claimed, err := r.cfg.Jobs.ClaimURLs(ctx, a.Job, a.Key, next)
	if err != nil {
		return err
	}
	if err := r.enqueuePages(ctx, a.Job, claimed); err != nil {
		return err
	}
	r.markSeen(c, next)
	return nil
}

// slots takes the team's concurrency slot and, when the job caps its own
// concurrency (maxConcurrency or delay), the job's.
func (r *Runner) slots(ctx context.Context, c *cachedJob, host string, hostDelay time.Duration) (func(), error) {
	wait, cancel := context.WithTimeout(ctx, acquireWait)
	defer cancel()
	releaseTeam, _, err := r.cfg.Limiter.Acquire(wait, c.job.TeamID, c.opts.TeamConcurrency)
	if err != nil {
		return nil, err
	}
	release := releaseTeam
	limit := c.opts.MaxConcurrency
	if c.opts.Delay > 0 {
		limit = 1
	}
	if limit > 0 {
		releaseJob, _, err := r.cfg.Limiter.Acquire(wait, "job:"+c.job.ID, limit)
		if err != nil {
			release()
			return nil, err
		}
		release = func() { releaseJob(); releaseTeam() }
	}
	if hostDelay > 0 && c.opts.Delay == 0 {
		releaseHost, _, err := r.cfg.Limiter.Acquire(wait, "job:"+c.job.ID+":"+host, 1)
		if err != nil {
			release()
			return nil, err
		}
		prev := release
		release = func() { releaseHost(); prev() }
	}
	return release, nil
}

// maxRobotsDelay caps a robots.txt Crawl-delay, as the API caps delay.
const maxRobotsDelay = 60 * time.Second

// crawlDelay is the Crawl-delay robots.txt asks of this crawler on the
// page's host (0 when none, or when the job sets its own delay or ignores
// robots.txt), and the host it applies to.
func (r *Runner) crawlDelay(ctx context.Context, c *cachedJob, raw string) (string, time.Duration) {
	if c.rules == nil || c.opts.Delay > 0 || c.opts.IgnoreRobots {
		return "", 0
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", 0
	}
	rb := r.robotsFor(ctx, c, u)
	if rb == nil {
		return "", 0
	}
	return strings.ToLower(u.Host), min(rb.CrawlDelay(), maxRobotsDelay)
}

// charge bills a page once, even when its job is retried.
func (r *Runner) charge(ctx context.Context, c *cachedJob, a pageArgs, credits int64) {
	if r.cfg.Ledger == nil || credits <= 0 {
		return
	}
	_, err := r.cfg.Ledger.Charge(context.WithoutCancel(ctx), store.Charge{
		TeamID: c.job.TeamID, Credits: credits, Kind: c.job.Kind, APIKeyID: c.job.APIKeyID,
		IdempotencyKey: "job:" + c.job.ID + ":" + a.Key, Clamp: true,
	})
	if err != nil {
		r.cfg.Log.ErrorContext(ctx, "charge failed", "job_id", c.job.ID, "team_id", c.job.TeamID, "err", err)
	}
}

// finishDoc records a scraped page and sends its page event.
func (r *Runner) finishDoc(ctx context.Context, c *cachedJob, a pageArgs, res store.URLResult, doc json.RawMessage) error {
	finished, pending, err := r.cfg.Jobs.FinishURL(ctx, a.Job, a.Key, res)
	if err != nil {
		return err
	}
	if finished {
		r.observe(c, res.State)
		r.notify(ctx, a.Job, &c.opts, webhookKind(c.job.Kind, &c.opts).Page(a.Job, doc), false)
		r.progress(ctx, c)
	}
	if pending == 0 {
		r.complete(ctx, c)
	}
	return nil
}

// finish records how a URL ended and completes the job when it was the last.
func (r *Runner) finish(ctx context.Context, c *cachedJob, a pageArgs, res store.URLResult) error {
	finished, pending, err := r.cfg.Jobs.FinishURL(ctx, a.Job, a.Key, res)
	if err != nil {
		return err
	}
	if finished {
		r.observe(c, res.State)
	}
	if finished && res.State == store.URLFailed {
		r.progress(ctx, c)
	}
	if pending == 0 {
		r.complete(ctx, c)
	}
	return nil
}

// complete moves a job from scraping to completed (or, for a crawl that got
// no page at all because its start page failed, to failed) and sends the
// completed event; only the process whose update wins does so.
func (r *Runner) complete(ctx context.Context, c *cachedJob) {
	ctx = context.WithoutCancel(ctx)
	j, err := r.cfg.Jobs.Job(ctx, c.job.ID)
	if err != nil {
		r.cfg.Log.ErrorContext(ctx, "complete job", "job_id", c.job.ID, "err", err)
		return
	}
	if j.Status == store.JobScraping && r.revisit(ctx, c) {
		return // the remembered pages complete the job
	}
	status, msg := store.JobCompleted, ""
	if (j.Kind == store.JobCrawl || c.opts.Extract != nil) && j.Documents == 0 {
		if errs, err := r.cfg.Jobs.JobErrors(ctx, j.ID); err == nil && len(errs) > 0 {
			status, msg = store.JobFailed, errs[0].Error
		}
	}
	ok, err := r.cfg.Jobs.SetJobStatus(ctx, j.ID, []string{store.JobScraping}, status, msg)
	if err != nil {
		r.cfg.Log.ErrorContext(ctx, "complete job", "job_id", j.ID, "err", err)
		return
	}
	if !ok {
		return
	}
	r.forget(j.ID)
	elapsed := r.now().Sub(j.CreatedAt)
	r.cfg.Log.InfoContext(ctx, "job "+status, "job_id", j.ID, "kind", j.Kind, "team_id", j.TeamID,
		"pages", j.Documents, "failed", j.Completed-j.Documents, "credits", j.CreditsUsed,
		"duration_ms", elapsed.Milliseconds())
	if c.opts.Extract != nil {
		r.extractFinished(ctx, j, c, status, msg)
		return
	}
	// A failed crawl also ends with completed: the reference never sends
	// crawl.failed, and completed is what its users wait for.
	r.notify(ctx, j.ID, &c.opts, webhookKind(j.Kind, &c.opts).Completed(j.ID), true)
}

// observe reports a finished page to the metrics.
func (r *Runner) observe(c *cachedJob, state string) {
	if r.cfg.ObservePage != nil {
		r.cfg.ObservePage(c.job.Kind, state)
	}
}

// progress logs a running job's progress at most every ProgressEvery.
func (r *Runner) progress(ctx context.Context, c *cachedJob) {
	now := r.now()
	r.mu.Lock()
	c.pages++
	due := now.Sub(c.progress) >= r.cfg.ProgressEvery
	if due {
		c.progress = now
	}
	pages, since := c.pages, now.Sub(c.started)
	r.mu.Unlock()
	if !due {
		return
	}
	j, err := r.cfg.Jobs.Job(ctx, c.job.ID)
	if err != nil {
		return
	}
	r.cfg.Log.InfoContext(ctx, "job progress", "job_id", j.ID, "kind", j.Kind, "done", j.Completed,
		"total", j.Total, "pages_per_s", float64(pages)/since.Seconds())
}

// Work deletes expired jobs and their results.
func (w *purgeWorker) Work(ctx context.Context, _ *river.Job[purgeArgs]) error {
	n, err := w.r.cfg.Jobs.DeleteExpiredJobs(ctx, w.r.now())
	if err != nil {
		return err
	}
	if n > 0 {
		w.r.cfg.Log.InfoContext(ctx, "expired jobs purged", "jobs", n)
	}
	return w.r.Reconcile(ctx)
}

// stuckAfter is how old a running job with nothing in flight must be before
// Reconcile repairs it.
const stuckAfter = 2 * time.Minute

// Reconcile repairs running jobs a crash left stranded between two steps
// that are not one transaction: a crawl whose kickoff was never queued (the
// process died between storing the job and queueing it) gets its kickoff;
// a job whose every page finished but which was never marked complete is
// completed (a job with skipped pages in that state is not detected); a
// page whose queue job River discarded, its attempts spent, with the URL
// still pending (the worker could not record the failure: the process died,
// or the store failed) is failed with the job's last error, completing its
// job when it was the last.
func (r *Runner) Reconcile(ctx context.Context) error {
	ids, err := r.cfg.Jobs.ScrapingJobs(ctx)
	if err != nil {
		return err
	}
	if err := r.giveUpDiscarded(ctx, ids); err != nil {
		return err
	}
	for _, id := range ids {
		j, err := r.cfg.Jobs.Job(ctx, id)
		if err != nil || r.now().Sub(j.CreatedAt) < stuckAfter {
			continue
		}
		switch {
		case j.Kind == store.JobCrawl && j.Total == 0:
			// Unique by arguments: a kickoff still queued is not doubled.
			if err := r.q.Insert(ctx, kickoffArgs{Job: id}, nil); err != nil {
				return err
			}
		case j.Total > 0 && j.Completed == j.Total:
			if c, err := r.job(ctx, id); err == nil {
				r.complete(ctx, c)
			}
		}
	}
	return nil
}

// discardedLister lists the queue's discarded jobs; *queue.Queue
// implements it.
type discardedLister interface {
	Discarded(ctx context.Context, kind string, each func(*rivertype.JobRow) error) error
}

// giveUpDiscarded fails the pending pages of the running jobs ids whose
// queue jobs River discarded.
func (r *Runner) giveUpDiscarded(ctx context.Context, ids []string) error {
	q, ok := r.q.(discardedLister)
	if !ok || len(ids) == 0 {
		return nil
	}
	running := make(map[string]bool, len(ids))
	for _, id := range ids {
		running[id] = true
	}
	return q.Discarded(ctx, pageArgs{}.Kind(), func(row *rivertype.JobRow) error {
		var a pageArgs
		if err := json.Unmarshal(row.EncodedArgs, &a); err != nil || !running[a.Job] {
			return nil
		}
		reason := "unknown"
		if n := len(row.Errors); n > 0 {
			reason = row.Errors[n-1].Error
		}
		if err := r.giveUp(ctx, a, row.Attempt, errors.New(reason)); err != nil {
			r.cfg.Log.ErrorContext(ctx, "give up a discarded page", "job_id", a.Job, "url", logsafe.URL(a.URL), "err", err)
		}
		return nil
	})
}

// stopped reports whether a job in status no longer starts pages.
func stopped(status string) bool {
	return status == store.JobCancelled || status == store.JobFailed
}

func hasFormat(fs []scrape.Format, t string) bool {
	for _, f := range fs {
		if f.Type == t {
			return true
		}
	}
	return false
}

// describe gives the API error code and message of a failed page, as
// errcode.Describe gives them: what a client is shown of it (the job's
// errors, webhooks, a failed job's error). An error no sentinel describes is shown
// as a generic message naming an error id, and logged here with that id and
// its full text (which may name internal hosts, addresses and packages).
func (r *Runner) describe(ctx context.Context, a pageArgs, err error) (code, msg string) {
	code, msg, id := errcode.Describe(err)
	if id != "" {
		r.cfg.Log.ErrorContext(ctx, "page failed with an unexpected error", "error_id", id, "job_id", a.Job,
			"url", logsafe.URL(a.URL), "err", err)
	}
	return code, msg
}

// robotsEntry is the robots.txt of one origin for one job.
type robotsEntry struct {
	robots *crawl.Robots
	at     time.Time
}

// robotsTTL is how long a fetched robots.txt is reused within a process.
const robotsTTL = 10 * time.Minute

// robotsFor returns the robots.txt rules for u's origin in job c, fetched
// once per process and origin; nil when the job ignores robots.txt.
func (r *Runner) robotsFor(ctx context.Context, c *cachedJob, u *url.URL) *crawl.Robots {
	if c.opts.IgnoreRobots || r.cfg.Fetcher == nil {
		return nil
	}
	key := c.job.ID + " " + strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
	r.mu.Lock()
	e := r.robots[key]
	r.mu.Unlock()
	if e != nil && r.now().Sub(e.at) < robotsTTL {
		return e.robots
	}
	fctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	// Threat protection: a blocked host's robots.txt is not fetched (its
	// pages are refused when scraped), nor a redirect to one followed.
	rb, err := crawl.FetchRobots(fctx, checkedFetcher{f: r.cfg.Fetcher, check: r.threatHop(c)}, u, r.cfg.UserAgent)
	if err != nil {
		r.cfg.Log.InfoContext(ctx, "robots.txt unavailable; allowing all", "job_id", c.job.ID, "host", u.Host, "err", err)
	}
	r.mu.Lock()
	if len(r.robots) >= 4096 {
		clear(r.robots)
	}
	r.robots[key] = &robotsEntry{robots: rb, at: r.now()}
	r.mu.Unlock()
	return rb
}

// maxSeen bounds the keys a process remembers per job.
const maxSeen = 200_000

// unseen drops the URLs this process already claimed (or saw claimed) for
// the job: most links of a site are found on many pages, and asking the
// store about each again would make claiming the crawl's bottleneck.
func (r *Runner) unseen(c *cachedJob, urls []store.JobURL) []store.JobURL {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := urls[:0]
	for _, u := range urls {
		if _, ok := c.seen[u.Key]; !ok {
			out = append(out, u)
		}
	}
	return out
}

// markSeen remembers keys once they are claimed and queued (so that a
// failure in between leaves them to be claimed again by a retry).
func (r *Runner) markSeen(c *cachedJob, urls []store.JobURL) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c.seen == nil {
		c.seen = make(map[string]struct{}, len(urls)*4)
	}
	if len(c.seen)+len(urls) > maxSeen {
		return
	}
	for _, u := range urls {
		c.seen[u.Key] = struct{}{}
	}
}
