package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/firegate/firegate/internal/store"
)

var _ store.JobStore = (*Store)(nil)

// Every write below runs on the single write connection, most in one
// IMMEDIATE transaction: it holds the database write lock from its first
// statement, so a job's claims are serialized (its limit is exact) within
// this process and against other processes sharing the file.

const jobColumns = `id, team_id, api_key_id, kind, status, url, options, url_limit,
	zero_data_retention, idempotency_key, created_at, expires_at, completed_at, error,
	url_count, done_count + failed_count, done_count, credits_used`

// claimChunk is how many URLs one INSERT statement of ClaimURLs carries (5
// bound values each, well under SQLite's limit on variables).
const claimChunk = 200

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
	var key sql.NullString
	if j.APIKeyID != "" {
		k, err := parseID(j.APIKeyID)
		if err != nil {
			return store.Job{}, fmt.Errorf("store: create job: api key: %w", err)
		}
		key = sql.NullString{String: k, Valid: true}
	}
	idk := sql.NullString{String: j.IdempotencyKey, Valid: j.IdempotencyKey != ""}
	created := j.CreatedAt
	if created.IsZero() {
		created = s.now()
	}
	options := j.Options
	if options == nil {
		options = []byte{}
	}
	got, err := scanJob(s.write.QueryRowContext(ctx,
		`INSERT INTO jobs (id, team_id, api_key_id, kind, status, url, options, url_limit,
			zero_data_retention, idempotency_key, created_at, expires_at)
		VALUES (?, ?, ?, ?, 'scraping', ?, ?, ?, ?, ?, ?, ?)
		RETURNING `+jobColumns,
		id, team, key, j.Kind, j.URL, options, j.Limit, j.ZeroDataRetention, idk,
		formatTime(created), formatTime(j.ExpiresAt)))
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
	id, err := parseID(id)
	if err != nil {
		return store.Job{}, fmt.Errorf("store: job: %w", err)
	}
	j, err := scanJob(s.read.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = ?`, id))
	if err != nil {
		return store.Job{}, fmt.Errorf("store: job: %w", mapErr(err))
	}
	return j, nil
}

// ClaimURLs adds urls the job does not have yet, up to its limit, and
// returns in input order those parent owns (claimed now or before);
// store.ErrNotFound if the job does not exist.
func (s *Store) ClaimURLs(ctx context.Context, jobID, parent string, urls []store.JobURL) ([]store.JobURL, error) {
	job, err := parseID(jobID)
	if err != nil {
		return nil, fmt.Errorf("store: claim urls: %w", err)
	}
	// First occurrence of each key, in input order.
	input := make([]store.JobURL, 0, len(urls))
	seen := make(map[string]bool, len(urls))
	for _, u := range urls {
		if !seen[u.Key] {
			seen[u.Key] = true
			input = append(input, u)
		}
	}
	var owned []store.JobURL
	err = s.Transact(ctx, func(tx DBTX) error {
		owned = make([]store.JobURL, 0, len(input))
		var limit, count int
		var status string
		if err := tx.QueryRowContext(ctx,
			`SELECT url_limit, url_count, status FROM jobs WHERE id = ?`, job).Scan(&limit, &count, &status); err != nil {
			return mapErr(err)
		}
		// The claimed ones among the input: owned[key] tells whether parent
		// owns them.
		type claimed struct {
			url   store.JobURL
			owned bool
		}
		had := make(map[string]claimed)
		for chunk := range slices.Chunk(input, claimChunk) {
			args := make([]any, 0, 1+len(chunk))
			args = append(args, job)
			for _, u := range chunk {
				args = append(args, u.Key)
			}
			rows, err := tx.QueryContext(ctx,
				`SELECT key, url, depth, parent FROM job_urls
				WHERE job_id = ? AND key IN (`+placeholders(len(chunk))+`)`, args...)
			if err != nil {
				return mapErr(err)
			}
			for rows.Next() {
				var (
					u  store.JobURL
					by string
				)
				if err := rows.Scan(&u.Key, &u.URL, &u.Depth, &by); err != nil {
					_ = rows.Close()
					return err
				}
				had[u.Key] = claimed{url: u, owned: by == parent}
			}
			if err := rows.Err(); err != nil {
				_ = rows.Close()
				return mapErr(err)
			}
			_ = rows.Close()
		}
		room := math.MaxInt
		switch {
		case status != store.JobScraping:
			room = 0 // a finished or cancelled job claims nothing new
		case limit > 0:
			room = max(limit-count, 0)
		}
		var fresh []store.JobURL
		for _, u := range input {
			c, ok := had[u.Key]
			switch {
			case ok && c.owned:
				owned = append(owned, c.url)
			case !ok && len(fresh) < room:
				fresh = append(fresh, u)
				owned = append(owned, u)
			}
		}
		if len(fresh) == 0 {
			return nil
		}
		if err := insertURLs(ctx, tx, job, parent, fresh); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx,
			`UPDATE jobs SET url_count = url_count + ? WHERE id = ?`, len(fresh), job)
		return mapErr(err)
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim urls: %w", err)
	}
	return owned, nil
}

// insertURLs inserts urls as pending URLs of job claimed by parent, a chunk
// of rows per statement.
func insertURLs(ctx context.Context, tx DBTX, job, parent string, urls []store.JobURL) error {
	for chunk := range slices.Chunk(urls, claimChunk) {
		args := make([]any, 0, 5*len(chunk))
		for _, u := range chunk {
			args = append(args, job, u.Key, u.URL, u.Depth, parent)
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO job_urls (job_id, key, url, depth, parent) VALUES `+rowPlaceholders(len(chunk), 5),
			args...); err != nil {
			return mapErr(err)
		}
	}
	return nil
}

// placeholders returns n comma-separated bind parameters: "?, ?, ?".
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// rowPlaceholders returns the VALUES list of n rows of width parameters:
// "(?, ?), (?, ?)".
func rowPlaceholders(n, width int) string {
	row := "(" + placeholders(width) + ")"
	return strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

// URLState returns the state of a claimed URL, or store.ErrNotFound.
func (s *Store) URLState(ctx context.Context, jobID, key string) (string, error) {
	job, err := parseID(jobID)
	if err != nil {
		return "", fmt.Errorf("store: url state: %w", err)
	}
	var state string
	if err := s.read.QueryRowContext(ctx,
		`SELECT state FROM job_urls WHERE job_id = ? AND key = ?`, job, key).Scan(&state); err != nil {
		return "", fmt.Errorf("store: url state: %w", mapErr(err))
	}
	return state, nil
}

// pendingColumn is the number of a job's URLs still pending.
const pendingColumn = `url_count - done_count - failed_count - skipped_count`

// FinishURL records how a pending URL ended; a URL no longer pending is
// left alone (finished=false). store.ErrNotFound if the URL was never
// claimed.
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
	err = s.Transact(ctx, func(tx DBTX) error {
		finished, pending = false, 0
		var url string
		err := tx.QueryRowContext(ctx,
			`UPDATE job_urls SET state = ? WHERE job_id = ? AND key = ? AND state = 'pending' RETURNING url`,
			r.State, job, key).Scan(&url)
		if errors.Is(err, sql.ErrNoRows) {
			// Not pending: tell a finished URL from one never claimed.
			var exists bool
			err := tx.QueryRowContext(ctx,
				`SELECT EXISTS (SELECT 1 FROM job_urls WHERE job_id = ?1 AND key = ?2),
					COALESCE((SELECT `+pendingColumn+` FROM jobs WHERE id = ?1), 0)`,
				job, key).Scan(&exists, &pending)
			if err != nil {
				return mapErr(err)
			}
			if !exists {
				return fmt.Errorf("%w: %q was not claimed", store.ErrNotFound, key)
			}
			return nil
		}
		if err != nil {
			return mapErr(err)
		}
		var done, failed int
		if err := tx.QueryRowContext(ctx,
			`UPDATE jobs SET
				done_count = done_count + (?2 = 'done'),
				failed_count = failed_count + (?2 = 'failed'),
				skipped_count = skipped_count + (?2 = 'skipped'),
				credits_used = credits_used + ?3
			WHERE id = ?1
			RETURNING done_count, failed_count, `+pendingColumn,
			job, r.State, r.Credits).Scan(&done, &failed, &pending); err != nil {
			return mapErr(err)
		}
		switch r.State {
		case store.URLDone:
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO job_documents (job_id, seq, document) VALUES (?, ?, ?)`,
				job, done, doc); err != nil {
				return mapErr(err)
			}
		case store.URLFailed:
			id, err := newID()
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO job_errors (id, job_id, seq, url, code, error, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				id, job, failed, url, r.Code, r.Error, formatTime(s.now())); err != nil {
				return mapErr(err)
			}
		}
		finished = true
		return nil
	})
	if err != nil {
		return false, 0, fmt.Errorf("store: finish url: %w", err)
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
	docs := [][]byte{}
	if limit <= 0 {
		return docs, nil
	}
	rows, err := s.read.QueryContext(ctx,
		`SELECT document FROM job_documents WHERE job_id = ? AND seq > ? AND seq <= ? ORDER BY seq`,
		job, int64(skip), int64(skip)+int64(limit))
	if err != nil {
		return nil, fmt.Errorf("store: documents: %w", mapErr(err))
	}
	defer rows.Close()
	for rows.Next() {
		var doc []byte
		if err := rows.Scan(&doc); err != nil {
			return nil, fmt.Errorf("store: documents: %w", err)
		}
		if doc == nil {
			doc = []byte{}
		}
		docs = append(docs, doc)
	}
	if err := rows.Err(); err != nil {
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
	rows, err := s.read.QueryContext(ctx,
		`SELECT id, url, code, error, created_at FROM job_errors WHERE job_id = ? ORDER BY seq`, job)
	if err != nil {
		return nil, fmt.Errorf("store: job errors: %w", mapErr(err))
	}
	defer rows.Close()
	errs := []store.JobError{}
	for rows.Next() {
		var (
			e       store.JobError
			created string
		)
		if err := rows.Scan(&e.ID, &e.URL, &e.Code, &e.Error, &created); err != nil {
			return nil, fmt.Errorf("store: job errors: %w", err)
		}
		if e.CreatedAt, err = parseTime(created); err != nil {
			return nil, fmt.Errorf("store: job errors: %w", err)
		}
		errs = append(errs, e)
	}
	if err := rows.Err(); err != nil {
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
	// Rows are inserted in list order, each taking the next rowid (seq);
	// INSERT OR IGNORE skips repeats, also within one statement.
	err = s.Transact(ctx, func(tx DBTX) error {
		for chunk := range slices.Chunk(urls, claimChunk) {
			args := make([]any, 0, 2*len(chunk))
			for _, u := range chunk {
				args = append(args, job, u)
			}
			if _, err := tx.ExecContext(ctx,
				`INSERT OR IGNORE INTO job_robots_blocked (job_id, url) VALUES `+rowPlaceholders(len(chunk), 2),
				args...); err != nil {
				return mapErr(err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: add robots blocked: %w", err)
	}
	return nil
}

// RobotsBlocked returns the job's robots-blocked URLs in insertion order.
func (s *Store) RobotsBlocked(ctx context.Context, jobID string) ([]string, error) {
	job, err := parseID(jobID)
	if err != nil {
		return nil, fmt.Errorf("store: robots blocked: %w", err)
	}
	rows, err := s.read.QueryContext(ctx,
		`SELECT url FROM job_robots_blocked WHERE job_id = ? ORDER BY seq`, job)
	if err != nil {
		return nil, fmt.Errorf("store: robots blocked: %w", mapErr(err))
	}
	defer rows.Close()
	urls := []string{}
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return nil, fmt.Errorf("store: robots blocked: %w", err)
		}
		urls = append(urls, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: robots blocked: %w", mapErr(err))
	}
	return urls, nil
}

// SetJobStatus moves a job from one of the from statuses to status; false
// when the job is in none of them, store.ErrNotFound when it does not
// exist.
func (s *Store) SetJobStatus(ctx context.Context, id string, from []string, status, errMsg string) (bool, error) {
	if !validStatus(status) {
		return false, fmt.Errorf("store: set job status: bad status %q", status)
	}
	id, err := parseID(id)
	if err != nil {
		return false, fmt.Errorf("store: set job status: %w", err)
	}
	var completed sql.NullString
	if status != store.JobScraping {
		completed = sql.NullString{String: formatTime(s.now()), Valid: true}
	}
	var changed bool
	err = s.Transact(ctx, func(tx DBTX) error {
		args := []any{status, errMsg, completed, id}
		for _, f := range from {
			args = append(args, f)
		}
		res, err := tx.ExecContext(ctx,
			`UPDATE jobs SET status = ?, error = ?, completed_at = ?
			WHERE id = ? AND status IN (`+placeholders(len(from))+`)`, args...)
		if err != nil {
			return mapErr(err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if changed = n > 0; changed {
			return nil
		}
		var one int
		return mapErr(tx.QueryRowContext(ctx, `SELECT 1 FROM jobs WHERE id = ?`, id).Scan(&one))
	})
	if err != nil {
		return false, fmt.Errorf("store: set job status: %w", err)
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
	rows, err := s.read.QueryContext(ctx,
		`SELECT `+jobColumns+` FROM jobs
		WHERE team_id = ? AND status = 'scraping' AND kind = ?
		ORDER BY created_at, id`, team, kind)
	if err != nil {
		return nil, fmt.Errorf("store: active jobs: %w", mapErr(err))
	}
	defer rows.Close()
	jobs := []store.Job{}
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("store: active jobs: %w", err)
		}
		jobs = append(jobs, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: active jobs: %w", mapErr(err))
	}
	return jobs, nil
}

// ScrapingJobs returns the ids of all jobs in status scraping, oldest first.
func (s *Store) ScrapingJobs(ctx context.Context) ([]string, error) {
	rows, err := s.read.QueryContext(ctx,
		`SELECT id FROM jobs WHERE status = 'scraping' ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("store: scraping jobs: %w", mapErr(err))
	}
	defer rows.Close()
	ids := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: scraping jobs: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: scraping jobs: %w", mapErr(err))
	}
	return ids, nil
}

// DeleteExpiredJobs deletes the jobs that expired before now; their URLs,
// documents, errors and robots blocks go with them (ON DELETE CASCADE).
func (s *Store) DeleteExpiredJobs(ctx context.Context, now time.Time) (int, error) {
	res, err := s.write.ExecContext(ctx, `DELETE FROM jobs WHERE expires_at < ?`, formatTime(now))
	if err != nil {
		return 0, fmt.Errorf("store: delete expired jobs: %w", mapErr(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: delete expired jobs: %w", err)
	}
	return int(n), nil
}

func scanJob(row scanner) (store.Job, error) {
	var (
		j                   store.Job
		key, idk, completed sql.NullString
		created, expires    string
	)
	if err := row.Scan(&j.ID, &j.TeamID, &key, &j.Kind, &j.Status, &j.URL, &j.Options, &j.Limit,
		&j.ZeroDataRetention, &idk, &created, &expires, &completed, &j.Error,
		&j.Total, &j.Completed, &j.Documents, &j.CreditsUsed); err != nil {
		return store.Job{}, err
	}
	j.APIKeyID, j.IdempotencyKey = key.String, idk.String
	if j.Options == nil {
		j.Options = []byte{}
	}
	var err error
	if j.CreatedAt, err = parseTime(created); err != nil {
		return store.Job{}, err
	}
	if j.ExpiresAt, err = parseTime(expires); err != nil {
		return store.Job{}, err
	}
	if completed.Valid {
		c, err := parseTime(completed.String)
		if err != nil {
			return store.Job{}, err
		}
		j.CompletedAt = &c
	}
	return j, nil
}
