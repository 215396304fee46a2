package crawljob

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/firegate/firegate/internal/changetrack"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
)

// Change tracking across crawls. A crawl whose scrape options hold the
// changeTracking format remembers the URLs it scraped, per team,
// change-tracking tag and scope (MemoryScope of its start URL). When its
// links and sitemap have led to every page they will, it revisits the
// remembered URLs of its scope that it did not find: at most maxRevisit of
// them, the most recently found first, those its rules and robots.txt
// still allow, within its limit. Their changeTracking visibility is hidden
// and their links are not followed. A page that now answers 404 or 410
// after an earlier scrape (changeStatus removed) is one of the crawl's
// results rather than an error, and is forgotten. Nothing is remembered
// or revisited under zero data retention.

// Memory is the crawl memory of change tracking;
// store.CrawlMemoryStore implements it.
type Memory interface {
	RememberCrawlURLs(ctx context.Context, teamID, tag, scope string, urls []string, at time.Time) error
	CrawlMemory(ctx context.Context, teamID, tag, scope string, limit int) ([]string, error)
	ForgetCrawlURLs(ctx context.Context, teamID, tag, scope string, urls []string) error
}

// maxRevisit caps the remembered URLs a crawl considers.
const maxRevisit = 1000

// memoryParent is the ClaimURLs parent of revisited URLs.
const memoryParent = "memory:"

// memoryTimeout bounds one read or write of the crawl memory.
const memoryTimeout = 5 * time.Second

// MemoryScope is the crawl memory's scope of a start URL: lower-case
// scheme and host without a default port, no fragment, no trailing slash
// on a path other than "/".
func MemoryScope(start string) string {
	u, err := url.Parse(start)
	if err != nil {
		return start
	}
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if (u.Scheme == "http" && u.Port() == "80") || (u.Scheme == "https" && u.Port() == "443") {
		u.Host = u.Hostname()
	}
	u.Fragment, u.RawFragment = "", ""
	if len(u.Path) > 1 {
		u.Path = strings.TrimRight(u.Path, "/")
		u.RawPath = ""
	}
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String()
}

// memoryOf is the tag and scope of a crawl's memory; ok is false when the
// crawl keeps none (no changeTracking, zero data retention, no memory).
func (r *Runner) memoryOf(c *cachedJob) (tag, scope string, ok bool) {
	if r.cfg.Memory == nil || c.rules == nil || c.job.Kind != store.JobCrawl ||
		c.job.ZeroDataRetention || c.opts.Scrape.ZeroDataRetention {
		return "", "", false
	}
	f, ok := c.opts.Scrape.FormatOf(scrape.FormatChangeTracking)
	if !ok {
		return "", "", false
	}
	if f.Tag != nil {
		tag = *f.Tag
	}
	return tag, MemoryScope(c.job.URL), true
}

// removed reports whether a scrape found the page gone since its last
// scrape.
func removed(doc *scrape.Document) bool {
	return doc.ChangeTracking != nil && doc.ChangeTracking.ChangeStatus == changetrack.StatusRemoved
}

// remember records a scraped page in the crawl memory, or forgets it when
// it is gone. A failure is logged: the page itself was scraped.
func (r *Runner) remember(ctx context.Context, c *cachedJob, a pageArgs, doc *scrape.Document) {
	tag, scope, ok := r.memoryOf(c)
	if !ok || doc.ChangeTracking == nil {
		return
	}
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), memoryTimeout)
	defer cancel()
	var err error
	if removed(doc) {
		err = r.cfg.Memory.ForgetCrawlURLs(mctx, c.job.TeamID, tag, scope, []string{a.URL})
	} else {
		err = r.cfg.Memory.RememberCrawlURLs(mctx, c.job.TeamID, tag, scope, []string{a.URL}, r.now())
	}
	if err != nil {
		r.cfg.Log.WarnContext(ctx, "crawl memory not updated", "job_id", c.job.ID, "err", err)
	}
}

// revisit claims and queues the remembered URLs of a crawl's scope that
// the crawl has not claimed, once its discovery is done (no page pending).
// It reports whether any of them is pending: the last of them to finish
// completes the job. Called again then, it claims nothing new.
func (r *Runner) revisit(ctx context.Context, c *cachedJob) bool {
	tag, scope, ok := r.memoryOf(c)
	if !ok {
		return false
	}
	mctx, cancel := context.WithTimeout(ctx, memoryTimeout)
	urls, err := r.cfg.Memory.CrawlMemory(mctx, c.job.TeamID, tag, scope, maxRevisit)
	cancel()
	if err != nil {
		r.cfg.Log.WarnContext(ctx, "crawl memory not read", "job_id", c.job.ID, "err", err)
		return false
	}
	var list []store.JobURL
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			continue
		}
		if ok, _ := c.rules.Allow(u, 0, false); !ok {
			continue
		}
		if rb := r.robotsFor(ctx, c, u); rb != nil && !rb.Allowed(u) {
			continue
		}
		list = append(list, store.JobURL{Key: c.rules.Key(u), URL: u.String()})
	}
	if len(list) == 0 {
		return false
	}
	// One parent for every call: a second call returns what the first
	// claimed, and the counters tell whether any of it is still pending.
	claimed, err := r.cfg.Jobs.ClaimURLs(ctx, c.job.ID, memoryParent, dedupe(list))
	if err != nil {
		r.cfg.Log.WarnContext(ctx, "remembered pages not claimed", "job_id", c.job.ID, "err", err)
		return false
	}
	if len(claimed) == 0 {
		return false
	}
	j, err := r.cfg.Jobs.Job(ctx, c.job.ID)
	if err != nil || j.Completed >= j.Total {
		return false
	}
	params := make([]river.InsertManyParams, len(claimed))
	for i, u := range claimed {
		params[i] = river.InsertManyParams{Args: pageArgs{Job: c.job.ID, Key: u.Key, URL: u.URL, Hidden: true},
			InsertOpts: &river.InsertOpts{Priority: 4}}
	}
	if err := r.q.InsertMany(ctx, params); err != nil {
		r.cfg.Log.ErrorContext(ctx, "remembered pages not queued", "job_id", c.job.ID, "err", err)
		return false
	}
	r.cfg.Log.InfoContext(ctx, "crawl revisits remembered pages", "job_id", c.job.ID, "pages", len(claimed))
	return true
}
