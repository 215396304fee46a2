package store

import (
	"context"
	"time"
)

// Job kinds.
const (
	JobCrawl = "crawl"
	JobBatch = "batch"
)

// Job statuses, as the API reports them.
const (
	JobScraping  = "scraping"
	JobCompleted = "completed"
	JobFailed    = "failed"
	JobCancelled = "cancelled"
)

// States of a URL claimed by a job.
const (
	URLPending = "pending" // claimed, not finished
	URLDone    = "done"    // finished with a document
	URLFailed  = "failed"  // finished with an error (listed in JobErrors)
	URLSkipped = "skipped" // finished without a document or error (cancelled, ...)
)

// Job is a crawl or batch scrape: its settings, its status and, when read
// back, its counters.
type Job struct {
	ID       string // UUID minted by the caller (UUIDv7)
	TeamID   string
	APIKeyID string // "" when none
	Kind     string // JobCrawl or JobBatch
	Status   string // one of the Job* statuses; CreateJob stores JobScraping
	URL      string // crawl start URL; "" for a batch
	// Options is the opaque JSON the workers need (crawler options, scrape
	// options, webhook); the store does not look inside.
	Options []byte
	// Limit caps how many URLs ClaimURLs accepts over the job's life; 0 is
	// unlimited.
	Limit             int
	ZeroDataRetention bool
	// IdempotencyKey, optional, is unique per team: CreateJob with a key the
	// team already used returns ErrConflict.
	IdempotencyKey string
	CreatedAt      time.Time // set by CreateJob when zero
	ExpiresAt      time.Time // when the job and its results are purged
	CompletedAt    *time.Time
	Error          string // why the job failed

	// Counters, filled by Job and ActiveJobs; ignored by CreateJob.
	Total       int   // URLs claimed
	Completed   int   // URLs done or failed
	Documents   int   // URLs done
	CreditsUsed int64 // sum of FinishURL credits
}

// JobURL is one URL a job scrapes. Key identifies it within the job (the
// normalized form that makes twins one URL); URL is what gets fetched.
type JobURL struct {
	Key   string
	URL   string
	Depth int // link hops from the start URL or sitemap
}

// URLResult is how one claimed URL ended.
type URLResult struct {
	State    string // URLDone, URLFailed or URLSkipped
	Document []byte // the document JSON, for URLDone
	Code     string // error code, for URLFailed
	Error    string // error message, for URLFailed
	Credits  int64  // credits charged for this URL (added to CreditsUsed)
}

// JobError is one failed URL of a job.
type JobError struct {
	ID        string // UUID
	URL       string
	Code      string
	Error     string
	CreatedAt time.Time
}

// JobStore keeps crawls and batch scrapes durably: the job rows, the URLs each
// job claimed (so no URL is scraped twice), the documents in finish order,
// errors and robots.txt blocks. Implementations are safe for concurrent use
// by many worker processes.
type JobStore interface {
	// CreateJob stores a new job in status JobScraping; ErrConflict if the
	// team already used j.IdempotencyKey (or the id exists), ErrNotFound if
	// the team does not exist.
	CreateJob(ctx context.Context, j Job) (Job, error)
	// Job returns a job with its counters, or ErrNotFound.
	Job(ctx context.Context, id string) (Job, error)
	// ClaimURLs adds urls to the job, skipping keys the job already has and
	// stopping when the job's Limit is reached (exactly, even under
	// concurrent calls); a job not in status JobScraping claims nothing new. It returns, in input order, the URLs this parent
	// owns: those it claimed now plus those it claimed in an earlier call
	// with the same parent (so a retried job re-enqueues what it claimed
	// before it died). parent is the key of the URL whose page linked them,
	// or "" for seeds. ErrNotFound if the job does not exist.
	ClaimURLs(ctx context.Context, jobID, parent string, urls []JobURL) ([]JobURL, error)
	// URLState returns the state of a claimed URL, or ErrNotFound.
	URLState(ctx context.Context, jobID, key string) (string, error)
	// FinishURL records how a pending URL ended: its document (appended to
	// the job's results in finish order), or its error, and its credits. A
	// URL that is no longer pending is left alone (finished=false), so a
	// retried job never adds a second document. pending is how many of the
	// job's URLs are still pending after the call. ErrNotFound if the URL
	// was never claimed.
	FinishURL(ctx context.Context, jobID, key string, r URLResult) (finished bool, pending int, err error)
	// Documents returns up to limit documents of the job in finish order,
	// skipping the first skip.
	Documents(ctx context.Context, jobID string, skip, limit int) ([][]byte, error)
	// JobErrors returns the job's failed URLs, oldest first.
	JobErrors(ctx context.Context, jobID string) ([]JobError, error)
	// AddRobotsBlocked records URLs robots.txt kept the job from; repeats
	// are ignored.
	AddRobotsBlocked(ctx context.Context, jobID string, urls []string) error
	// RobotsBlocked returns the job's robots-blocked URLs in insertion order.
	RobotsBlocked(ctx context.Context, jobID string) ([]string, error)
	// SetJobStatus moves a job from one of the from statuses to status,
	// recording errMsg and, for a terminal status, CompletedAt. It returns
	// false, changing nothing, when the job is in none of the from
	// statuses; ErrNotFound if it does not exist.
	SetJobStatus(ctx context.Context, id string, from []string, status, errMsg string) (bool, error)
	// ActiveJobs returns the team's jobs of kind in status JobScraping,
	// oldest first, with counters.
	ActiveJobs(ctx context.Context, teamID, kind string) ([]Job, error)
	// ScrapingJobs returns the ids of all jobs in status JobScraping, for a
	// restarted server to check on.
	ScrapingJobs(ctx context.Context) ([]string, error)
	// DeleteExpiredJobs deletes jobs (with their URLs, documents and
	// errors) whose ExpiresAt is before now, returning how many.
	DeleteExpiredJobs(ctx context.Context, now time.Time) (int, error)
}
