package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/firegate/firegate/internal/store"
)

var _ store.JobStore = (*Store)(nil)

// The hot paths (ClaimURLs, FinishURL) send their statements as one pgx
// batch: the statements are pipelined and end with a single Sync, so they
// run in one implicit transaction and cost one round trip. The first
// statement locks the job row; every writer takes that lock before touching
// the job's URLs, which serializes the claims of a job (making its limit
// exact) and keeps the lock order jobs -> job_urls everywhere.

const jobColumns = `id, team_id, api_key_id, kind, status, url, options, url_limit,
	zero_data_retention, idempotency_key, created_at, expires_at, completed_at, error,
	url_count, done_count + failed_count, done_count, credits_used`

// lockJobAsync locks the job row and commits the transaction without
// waiting for its WAL flush. This is safe for the claims and finishes of
// pages because the queue lives in the same database: the page job's
// completion commits after them (later in the WAL), so a flushed completion
// implies flushed claims and finishes, and a lost completion makes the
// queue run the page again, which redoes whatever was lost. It roughly
// doubles a crawl's page rate on a disk with slow syncs.
const lockJobAsync = `SELECT 1 FROM jobs, set_config('synchronous_commit', 'off', true) WHERE id = $1 FOR UPDATE OF jobs`

// CreateJob stores a new job in status scraping; store.ErrConflict if the
// team already used the idempotency key or the id exists, store.ErrNotFound
// if the team (or API key) does not exist.
func (s *Store) CreateJob(ctx context.Context, j store.Job) (store.Job, error) {
	if err := checkNewJob(j); err != nil {
		return store.Job{}, fmt.Errorf("store: create job: %w", err)
	}
	id, err := parseID(j.ID)
	if err != nil {
		return store.Job{}, fmt.Errorf("store: create job: malformed id %q", j.ID)
	}
	team, err := parseID(j.TeamID)
	if err != nil {
		return store.Job{}, fmt.Errorf("store: create job: team: %w", err)
	}
	var key *string
	if j.APIKeyID != "" {
		k, err := parseID(j.APIKeyID)
		if err != nil {
			return store.Job{}, fmt.Errorf("store: create job: api key: %w", err)
		}
		ks := k.String()
		key = &ks
	}
	var idk *string
	if j.IdempotencyKey != "" {
		idk = &j.IdempotencyKey
	}
	var created *time.Time
	if !j.CreatedAt.IsZero() {
		created = &j.CreatedAt
	}
	options := j.Options
	if options == nil {
		options = []byte{}
	}
	got, err := scanJob(s.pool.QueryRow(ctx,
		`INSERT INTO jobs (id, team_id, api_key_id, kind, status, url, options, url_limit,
			zero_data_retention, idempotency_key, created_at, expires_at)
		VALUES ($1, $2, $3, $4, 'scraping', $5, $6, $7, $8, $9, COALESCE($10, now()), $11)
		RETURNING `+jobColumns,
		id, team, key, j.Kind, j.URL, options, j.Limit, j.ZeroDataRetention, idk, created, j.ExpiresAt))
	if err != nil {
		return store.Job{}, fmt.Errorf("store: create job: %w", mapErr(err))
	}
	return got, nil
}

// checkNewJob rejects a job the tables cannot hold meaningfully.
func checkNewJob(j store.Job) error {
	switch {
	case j.Kind != store.JobCrawl && j.Kind != store.JobBatch:
		return fmt.Errorf("unknown kind %q", j.Kind)
	case j.Limit < 0 || j.Limit > math.MaxInt32:
		return fmt.Errorf("limit %d out of range", j.Limit)
	case j.ExpiresAt.IsZero():
		return errors.New("no expiry time")
	}
	return nil
}

// Job returns a job with its counters, or store.ErrNotFound.
func (s *Store) Job(ctx context.Context, id string) (store.Job, error) {
	u, err := parseID(id)
	if err != nil {
		return store.Job{}, fmt.Errorf("store: job: %w", err)
	}
	j, err := scanJob(s.pool.QueryRow(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = $1`, u))
	if err != nil {
		return store.Job{}, fmt.Errorf("store: job: %w", mapErr(err))
	}
	return j, nil
}

// claimURLs inserts the URLs of the input arrays ($3 keys, $4 urls, $5
// depths) the job does not have yet, first occurrence of a key first, up to
// the job's remaining limit, bumps url_count, and returns (key, url, depth)
// of the URLs parent $2 owns: those inserted now and those it claimed
// before, in no particular order. It must run after lockJob, in the same
// transaction but a later statement, so that its snapshot sees every claim
// committed before the lock was granted.
const claimURLs = `WITH input AS (
	SELECT DISTINCT ON (t.key) t.key, t.url, t.depth, t.ord
	FROM unnest($3::text[], $4::text[], $5::integer[]) WITH ORDINALITY AS t(key, url, depth, ord)
	ORDER BY t.key, t.ord
), existing AS (
	SELECT u.key, u.url, u.depth, u.parent
	FROM input i JOIN job_urls u ON u.job_id = $1 AND u.key = i.key
), fresh AS (
	SELECT i.key, i.url, i.depth
	FROM input i
	WHERE NOT EXISTS (SELECT 1 FROM existing e WHERE e.key = i.key)
	ORDER BY i.ord
	LIMIT (SELECT CASE WHEN status <> 'scraping' THEN 0 WHEN url_limit = 0 THEN NULL
		ELSE greatest(url_limit - url_count, 0) END
		FROM jobs WHERE id = $1)
), ins AS (
	INSERT INTO job_urls (job_id, key, url, depth, parent)
	SELECT $1, key, url, depth, $2 FROM fresh
	ON CONFLICT DO NOTHING
	RETURNING key, url, depth
), bump AS (
	UPDATE jobs SET url_count = url_count + (SELECT count(*) FROM ins)
	WHERE id = $1 AND EXISTS (SELECT 1 FROM ins)
)
SELECT key, url, depth FROM ins
UNION ALL
SELECT key, url, depth FROM existing WHERE parent = $2`

// ClaimURLs adds urls the job does not have yet, up to its limit, and
// returns in input order those parent owns (claimed now or before);
// store.ErrNotFound if the job does not exist. Lock, insert and counter
// update take one round trip.
func (s *Store) ClaimURLs(ctx context.Context, jobID, parent string, urls []store.JobURL) ([]store.JobURL, error) {
	job, err := parseID(jobID)
	if err != nil {
		return nil, fmt.Errorf("store: claim urls: %w", err)
	}
	keys := make([]string, len(urls))
	locs := make([]string, len(urls))
	depths := make([]int32, len(urls))
	first := make(map[string]int, len(urls)) // input position of each key
	for i, u := range urls {
		keys[i], locs[i], depths[i] = u.Key, u.URL, int32(u.Depth) //nolint:gosec // depths are small
		if _, ok := first[u.Key]; !ok {
			first[u.Key] = i
		}
	}
	b := &pgx.Batch{}
	b.Queue(lockJobAsync, job)
	b.Queue(claimURLs, job, parent, keys, locs, depths)
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	var one int
	if err := br.QueryRow().Scan(&one); err != nil {
		return nil, fmt.Errorf("store: claim urls: %w", mapErr(err))
	}
	rows, err := br.Query()
	if err != nil {
		return nil, fmt.Errorf("store: claim urls: %w", mapErr(err))
	}
	owned, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.JobURL, error) {
		var (
			u     store.JobURL
			depth int32
		)
		err := row.Scan(&u.Key, &u.URL, &depth)
		u.Depth = int(depth)
		return u, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim urls: %w", mapErr(err))
	}
	if err := br.Close(); err != nil {
		return nil, fmt.Errorf("store: claim urls: %w", mapErr(err))
	}
	slices.SortFunc(owned, func(a, b store.JobURL) int { return first[a.Key] - first[b.Key] })
	return owned, nil
}

// URLState returns the state of a claimed URL, or store.ErrNotFound.
func (s *Store) URLState(ctx context.Context, jobID, key string) (string, error) {
	job, err := parseID(jobID)
	if err != nil {
		return "", fmt.Errorf("store: url state: %w", err)
	}
	var state string
	if err := s.pool.QueryRow(ctx,
		`SELECT state FROM job_urls WHERE job_id = $1 AND key = $2`, job, key).Scan(&state); err != nil {
		return "", fmt.Errorf("store: url state: %w", mapErr(err))
	}
	return state, nil
}

// finishURL moves URL $2 of job $1 from pending to state $3, bumps the
// job's counters and credits ($4), appends document $5 (done) or error $6,
// $7, $8 (failed), and returns whether the URL was pending, whether it
// exists, and the job's pending count after. It must run after lockJob.
const finishURL = `WITH fin AS (
	UPDATE job_urls SET state = $3
	WHERE job_id = $1 AND key = $2 AND state = 'pending'
	RETURNING url
), j AS (
	UPDATE jobs SET
		done_count = done_count + ($3 = 'done')::integer,
		failed_count = failed_count + ($3 = 'failed')::integer,
		skipped_count = skipped_count + ($3 = 'skipped')::integer,
		credits_used = credits_used + $4
	WHERE id = $1 AND EXISTS (SELECT 1 FROM fin)
	RETURNING done_count, failed_count, url_count - done_count - failed_count - skipped_count AS pending
), doc AS (
	INSERT INTO job_documents (job_id, seq, document)
	SELECT $1, j.done_count, $5 FROM j WHERE $3 = 'done'
), err AS (
	INSERT INTO job_errors (id, job_id, seq, url, code, error)
	SELECT $6, $1, j.failed_count, fin.url, $7, $8 FROM j, fin WHERE $3 = 'failed'
)
SELECT
	EXISTS (SELECT 1 FROM fin),
	EXISTS (SELECT 1 FROM job_urls WHERE job_id = $1 AND key = $2),
	COALESCE((SELECT pending FROM j),
		(SELECT url_count - done_count - failed_count - skipped_count FROM jobs WHERE id = $1), 0)`

// FinishURL records how a pending URL ended; a URL no longer pending is
// left alone (finished=false). store.ErrNotFound if the URL was never
// claimed. Lock, state change, counters and document or error take one
// round trip.
func (s *Store) FinishURL(ctx context.Context, jobID, key string, r store.URLResult) (finished bool, pending int, err error) {
	if err := checkResult(r); err != nil {
		return false, 0, fmt.Errorf("store: finish url: %w", err)
	}
	job, err := parseID(jobID)
	if err != nil {
		return false, 0, fmt.Errorf("store: finish url: %w", err)
	}
	doc := r.Document
	if doc == nil {
		doc = []byte{}
	}
	errID, err := newID()
	if err != nil {
		return false, 0, fmt.Errorf("store: finish url: %w", err)
	}
	b := &pgx.Batch{}
	b.Queue(lockJobAsync, job)
	b.Queue(finishURL, job, key, r.State, r.Credits, doc, errID, r.Code, r.Error)
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	var one int
	if err := br.QueryRow().Scan(&one); err != nil {
		return false, 0, fmt.Errorf("store: finish url: %w", mapErr(err))
	}
	var exists bool
	if err := br.QueryRow().Scan(&finished, &exists, &pending); err != nil {
		return false, 0, fmt.Errorf("store: finish url: %w", mapErr(err))
	}
	if err := br.Close(); err != nil {
		return false, 0, fmt.Errorf("store: finish url: %w", mapErr(err))
	}
	if !exists {
		return false, 0, fmt.Errorf("store: finish url: %w: %q was not claimed", store.ErrNotFound, key)
	}
	return finished, pending, nil
}

// checkResult rejects a result FinishURL cannot record.
func checkResult(r store.URLResult) error {
	switch {
	case r.State != store.URLDone && r.State != store.URLFailed && r.State != store.URLSkipped:
		return fmt.Errorf("bad url state %q", r.State)
	case r.Credits < 0:
		return fmt.Errorf("negative credits %d", r.Credits)
	}
	return nil
}

// Documents returns up to limit documents of the job in finish order,
// skipping the first skip. The sequence numbers have no gaps, so the page
// is a range of the primary key.
func (s *Store) Documents(ctx context.Context, jobID string, skip, limit int) ([][]byte, error) {
	job, err := parseID(jobID)
	if err != nil {
		return nil, fmt.Errorf("store: documents: %w", err)
	}
	skip, limit = min(max(skip, 0), math.MaxInt32), min(limit, math.MaxInt32)
	if limit <= 0 {
		return [][]byte{}, nil
	}
	rows, err := s.pool.Query(ctx,
		`SELECT document FROM job_documents
		WHERE job_id = $1 AND seq > $2::bigint AND seq <= $2::bigint + $3::bigint
		ORDER BY seq`, job, int64(skip), int64(limit))
	if err != nil {
		return nil, fmt.Errorf("store: documents: %w", mapErr(err))
	}
	docs, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, fmt.Errorf("store: documents: %w", mapErr(err))
	}
	return docs, nil
}

// JobErrors returns the job's failed URLs in the order they failed.
func (s *Store) JobErrors(ctx context.Context, jobID string) ([]store.JobError, error) {
	job, err := parseID(jobID)
	if err != nil {
		return nil, fmt.Errorf("store: job errors: %w", err)
	}
	rows, err := s.pool.Query(ctx,
		`SELECT id, url, code, error, created_at FROM job_errors WHERE job_id = $1 ORDER BY seq`, job)
	if err != nil {
		return nil, fmt.Errorf("store: job errors: %w", mapErr(err))
	}
	errs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.JobError, error) {
		var e store.JobError
		err := row.Scan(&e.ID, &e.URL, &e.Code, &e.Error, &e.CreatedAt)
		e.CreatedAt = e.CreatedAt.UTC()
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: job errors: %w", mapErr(err))
	}
	return errs, nil
}

// AddRobotsBlocked records URLs robots.txt kept the job from, ignoring
// repeats; store.ErrNotFound if the job does not exist.
func (s *Store) AddRobotsBlocked(ctx context.Context, jobID string, urls []string) error {
	job, err := parseID(jobID)
	if err != nil {
		return fmt.Errorf("store: add robots blocked: %w", err)
	}
	urls = dedupe(urls)
	if len(urls) == 0 {
		return nil
	}
	// The identity column is drawn in the order rows leave the sorted
	// SELECT, which is the input order.
	if _, err := s.pool.Exec(ctx,
		`INSERT INTO job_robots_blocked (job_id, url)
		SELECT $1, t.url FROM unnest($2::text[]) WITH ORDINALITY AS t(url, ord) ORDER BY t.ord
		ON CONFLICT DO NOTHING`, job, urls); err != nil {
		return fmt.Errorf("store: add robots blocked: %w", mapErr(err))
	}
	return nil
}

// dedupe returns urls without repeats, first occurrences in order.
func dedupe(urls []string) []string {
	seen := make(map[string]bool, len(urls))
	return slices.DeleteFunc(slices.Clone(urls), func(u string) bool {
		if seen[u] {
			return true
		}
		seen[u] = true
		return false
	})
}

// RobotsBlocked returns the job's robots-blocked URLs in insertion order.
func (s *Store) RobotsBlocked(ctx context.Context, jobID string) ([]string, error) {
	job, err := parseID(jobID)
	if err != nil {
		return nil, fmt.Errorf("store: robots blocked: %w", err)
	}
	rows, err := s.pool.Query(ctx,
		`SELECT url FROM job_robots_blocked WHERE job_id = $1 ORDER BY seq`, job)
	if err != nil {
		return nil, fmt.Errorf("store: robots blocked: %w", mapErr(err))
	}
	urls, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store: robots blocked: %w", mapErr(err))
	}
	return urls, nil
}

// SetJobStatus moves a job from one of the from statuses to status in one
// conditional UPDATE; false when the job is in none of them,
// store.ErrNotFound when it does not exist.
func (s *Store) SetJobStatus(ctx context.Context, id string, from []string, status, errMsg string) (bool, error) {
	if !validStatus(status) {
		return false, fmt.Errorf("store: set job status: bad status %q", status)
	}
	u, err := parseID(id)
	if err != nil {
		return false, fmt.Errorf("store: set job status: %w", err)
	}
	if from == nil {
		from = []string{}
	}
	var changed, exists bool
	err = s.pool.QueryRow(ctx,
		`WITH upd AS (
			UPDATE jobs SET status = $2, error = $3,
				completed_at = CASE WHEN $2 = 'scraping' THEN NULL ELSE now() END
			WHERE id = $1 AND status = ANY($4::text[])
			RETURNING 1
		)
		SELECT EXISTS (SELECT 1 FROM upd), EXISTS (SELECT 1 FROM jobs WHERE id = $1)`,
		u, status, errMsg, from).Scan(&changed, &exists)
	if err != nil {
		return false, fmt.Errorf("store: set job status: %w", mapErr(err))
	}
	if !exists {
		return false, fmt.Errorf("store: set job status: %w", store.ErrNotFound)
	}
	return changed, nil
}

// validStatus reports whether status is one of the job statuses.
func validStatus(status string) bool {
	switch status {
	case store.JobScraping, store.JobCompleted, store.JobFailed, store.JobCancelled:
		return true
	}
	return false
}

// ActiveJobs returns the team's jobs of kind in status scraping, oldest
// first, with counters.
func (s *Store) ActiveJobs(ctx context.Context, teamID, kind string) ([]store.Job, error) {
	team, err := parseID(teamID)
	if err != nil {
		return nil, fmt.Errorf("store: active jobs: %w", err)
	}
	rows, err := s.pool.Query(ctx,
		`SELECT `+jobColumns+` FROM jobs
		WHERE team_id = $1 AND status = 'scraping' AND kind = $2
		ORDER BY created_at, id`, team, kind)
	if err != nil {
		return nil, fmt.Errorf("store: active jobs: %w", mapErr(err))
	}
	jobs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Job, error) { return scanJob(row) })
	if err != nil {
		return nil, fmt.Errorf("store: active jobs: %w", mapErr(err))
	}
	return jobs, nil
}

// ScrapingJobs returns the ids of all jobs in status scraping, oldest first.
func (s *Store) ScrapingJobs(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx,
		`SELECT id::text FROM jobs WHERE status = 'scraping' ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("store: scraping jobs: %w", mapErr(err))
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store: scraping jobs: %w", mapErr(err))
	}
	return ids, nil
}

// DeleteExpiredJobs deletes the jobs that expired before now; their URLs,
// documents, errors and robots blocks go with them (ON DELETE CASCADE).
func (s *Store) DeleteExpiredJobs(ctx context.Context, now time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM jobs WHERE expires_at < $1`, now)
	if err != nil {
		return 0, fmt.Errorf("store: delete expired jobs: %w", mapErr(err))
	}
	return int(tag.RowsAffected()), nil
}

func scanJob(row pgx.Row) (store.Job, error) {
	var (
		j        store.Job
		key, idk *string
		limit    int32
	)
	if err := row.Scan(&j.ID, &j.TeamID, &key, &j.Kind, &j.Status, &j.URL, &j.Options, &limit,
		&j.ZeroDataRetention, &idk, &j.CreatedAt, &j.ExpiresAt, &j.CompletedAt, &j.Error,
		&j.Total, &j.Completed, &j.Documents, &j.CreditsUsed); err != nil {
		return store.Job{}, err
	}
	j.Limit = int(limit)
	if key != nil {
		j.APIKeyID = *key
	}
	if idk != nil {
		j.IdempotencyKey = *idk
	}
	j.CreatedAt, j.ExpiresAt = j.CreatedAt.UTC(), j.ExpiresAt.UTC()
	if j.CompletedAt != nil {
		c := j.CompletedAt.UTC()
		j.CompletedAt = &c
	}
	return j, nil
}
