package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/store"
)

// JobsUnderTest is what RunJobs and BenchmarkJobs exercise: a store with
// the job tables (teams and keys come from store.Store).
type JobsUnderTest interface {
	store.Store
	store.JobStore
}

// claimers is the number of goroutines of the concurrent job tests, as
// many as a server's crawl workers.
const claimers = 8

// RunJobs runs the contract suite of store.JobStore. newStore must return a
// new, empty store that no other test uses, and must release it with
// t.Cleanup. Subtests run in parallel, each with its own store.
func RunJobs(t *testing.T, newStore func(t *testing.T) JobsUnderTest) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s JobsUnderTest)
	}{
		{"CreateJob", testCreateJob},
		{"CreateJobConflict", testCreateJobConflict},
		{"CreateJobNotFound", testCreateJobNotFound},
		{"CreateJobInvalid", testCreateJobInvalid},
		{"JobNotFound", testJobNotFound},
		{"ClaimURLs", testClaimURLs},
		{"ClaimURLsLimit", testClaimURLsLimit},
		{"ClaimURLsMany", testClaimURLsMany},
		{"ConcurrentClaimURLs", testConcurrentClaimURLs},
		{"FinishURL", testFinishURL},
		{"ConcurrentFinishURL", testConcurrentFinishURL},
		{"Documents", testDocuments},
		{"JobErrors", testJobErrors},
		{"RobotsBlocked", testRobotsBlocked},
		{"SetJobStatus", testSetJobStatus},
		{"ConcurrentSetJobStatus", testConcurrentSetJobStatus},
		{"ActiveJobs", testActiveJobs},
		{"ScrapingJobs", testScrapingJobs},
		{"DeleteExpiredJobs", testDeleteExpiredJobs},
		{"JobsCanceledContext", testJobsCanceledContext},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newStore(t))
		})
	}
}

// newJob returns an unsaved crawl of team expiring in a day, changed by
// opts.
func newJob(teamID string, opts ...func(*store.Job)) store.Job {
	j := store.Job{
		ID:        uuid.Must(uuid.NewV7()).String(),
		TeamID:    teamID,
		Kind:      store.JobCrawl,
		URL:       "https://example.com/",
		Options:   []byte(`{"maxDepth":2}`),
		ExpiresAt: time.Now().Add(24 * time.Hour).UTC().Truncate(time.Microsecond),
	}
	for _, o := range opts {
		o(&j)
	}
	return j
}

// mustJob creates a job of team (see newJob) or fails the test.
func mustJob(t testing.TB, s JobsUnderTest, teamID string, opts ...func(*store.Job)) store.Job {
	t.Helper()
	j, err := s.CreateJob(t.Context(), newJob(teamID, opts...))
	if err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	return j
}

// withLimit sets a job's URL limit.
func withLimit(n int) func(*store.Job) {
	return func(j *store.Job) { j.Limit = n }
}

// jobURLs returns a JobURL per key, at depth 1, fetching the key's page.
func jobURLs(keys ...string) []store.JobURL {
	urls := make([]store.JobURL, len(keys))
	for i, k := range keys {
		urls[i] = store.JobURL{Key: k, URL: "https://example.com/" + k, Depth: 1}
	}
	return urls
}

// mustClaim claims urls for parent or fails the test.
func mustClaim(t testing.TB, s JobsUnderTest, jobID, parent string, urls []store.JobURL) []store.JobURL {
	t.Helper()
	got, err := s.ClaimURLs(t.Context(), jobID, parent, urls)
	if err != nil {
		t.Fatalf("ClaimURLs(parent %q): %v", parent, err)
	}
	return got
}

// checkClaim claims urls for parent and fails unless it returns want.
func checkClaim(t *testing.T, s JobsUnderTest, jobID, parent string, urls, want []store.JobURL) {
	t.Helper()
	got := mustClaim(t, s, jobID, parent, urls)
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("ClaimURLs(parent %q, %d urls) mismatch (-want +got):\n%s", parent, len(urls), diff)
	}
}

// mustFinish finishes a URL or fails the test.
func mustFinish(t testing.TB, s JobsUnderTest, jobID, key string, r store.URLResult) (bool, int) {
	t.Helper()
	finished, pending, err := s.FinishURL(t.Context(), jobID, key, r)
	if err != nil {
		t.Fatalf("FinishURL(%q): %v", key, err)
	}
	return finished, pending
}

// mustGetJob reads a job or fails the test.
func mustGetJob(t *testing.T, s JobsUnderTest, id string) store.Job {
	t.Helper()
	j, err := s.Job(t.Context(), id)
	if err != nil {
		t.Fatalf("Job(%s): %v", id, err)
	}
	return j
}

// checkCounters fails unless the job's counters are want's.
func checkCounters(t *testing.T, s JobsUnderTest, id string, want store.Job) {
	t.Helper()
	j := mustGetJob(t, s, id)
	got := store.Job{Total: j.Total, Completed: j.Completed, Documents: j.Documents, CreditsUsed: j.CreditsUsed}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("job counters mismatch (-want +got):\n%s", diff)
	}
}

// checkURLState fails unless the URL's state is want.
func checkURLState(t *testing.T, s JobsUnderTest, jobID, key, want string) {
	t.Helper()
	got, err := s.URLState(t.Context(), jobID, key)
	if err != nil {
		t.Fatalf("URLState(%q): %v", key, err)
	}
	if got != want {
		t.Errorf("URLState(%q) = %q, want %q", key, got, want)
	}
}

// mustDocuments returns documents of a job or fails the test.
func mustDocuments(t *testing.T, s JobsUnderTest, jobID string, skip, limit int) [][]byte {
	t.Helper()
	docs, err := s.Documents(t.Context(), jobID, skip, limit)
	if err != nil {
		t.Fatalf("Documents(%d, %d): %v", skip, limit, err)
	}
	return docs
}

// done is the result of a URL finished with doc.
func done(doc string, credits int64) store.URLResult {
	return store.URLResult{State: store.URLDone, Document: []byte(doc), Credits: credits}
}

func testCreateJob(t *testing.T, s JobsUnderTest) {
	ctx := t.Context()
	team := mustTeam(t, s, "t")
	key := mustKey(t, s, team.ID)
	in := newJob(team.ID, func(j *store.Job) {
		j.APIKeyID = key.ID
		j.Status = store.JobCompleted              // ignored: a new job is scraping
		j.Options = []byte("{\"x\":\"\x00\xff\"}") // opaque bytes round-trip
		j.Limit = 100
		j.ZeroDataRetention = true
		j.IdempotencyKey = "idem-1"
		j.Total, j.Completed, j.Documents, j.CreditsUsed = 7, 6, 5, 4 // ignored
	})
	got, err := s.CreateJob(ctx, in)
	if err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	checkRecent(t, "job CreatedAt", got.CreatedAt)
	want := in
	want.Status = store.JobScraping
	want.CreatedAt = got.CreatedAt
	want.Total, want.Completed, want.Documents, want.CreditsUsed = 0, 0, 0, 0
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CreateJob mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(got, mustGetJob(t, s, got.ID)); diff != "" {
		t.Errorf("Job mismatch (-want +got):\n%s", diff)
	}

	// A batch without key, URL or options, created at a given time in
	// another zone: kept in UTC to the microsecond.
	zone := time.FixedZone("UTC+2", 2*60*60)
	created := time.Date(2026, 3, 4, 5, 6, 7, 891234567, zone)
	batch, err := s.CreateJob(ctx, store.Job{
		ID: uuid.NewString(), TeamID: team.ID, Kind: store.JobBatch,
		CreatedAt: created, ExpiresAt: created.Add(time.Hour),
	})
	if err != nil {
		t.Fatalf("CreateJob(batch): %v", err)
	}
	wantBatch := store.Job{
		ID: batch.ID, TeamID: team.ID, Kind: store.JobBatch, Status: store.JobScraping, Options: []byte{},
		CreatedAt: created.UTC().Truncate(time.Microsecond), ExpiresAt: created.Add(time.Hour).UTC().Truncate(time.Microsecond),
	}
	if diff := cmp.Diff(wantBatch, mustGetJob(t, s, batch.ID), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Job(batch) mismatch (-want +got):\n%s", diff)
	}
	if loc := mustGetJob(t, s, batch.ID).CreatedAt.Location(); loc != time.UTC {
		t.Errorf("CreatedAt location = %v, want UTC", loc)
	}
}

func testCreateJobConflict(t *testing.T, s JobsUnderTest) {
	ctx := t.Context()
	a, b := mustTeam(t, s, "a"), mustTeam(t, s, "b")
	idem := func(j *store.Job) { j.IdempotencyKey = "same" }
	first := mustJob(t, s, a.ID, idem)
	_, err := s.CreateJob(ctx, newJob(a.ID, idem))
	checkErr(t, "CreateJob with a used idempotency key", err, store.ErrConflict)
	if _, err := s.CreateJob(ctx, newJob(b.ID, idem)); err != nil {
		t.Errorf("CreateJob with another team's idempotency key: %v", err)
	}
	_, err = s.CreateJob(ctx, newJob(b.ID, func(j *store.Job) { j.ID = first.ID }))
	checkErr(t, "CreateJob with a used id", err, store.ErrConflict)
	// Jobs without a key never conflict.
	mustJob(t, s, a.ID)
	mustJob(t, s, a.ID)
	if got := mustGetJob(t, s, first.ID); got.TeamID != a.ID {
		t.Errorf("job %s now belongs to %s, want %s", first.ID, got.TeamID, a.ID)
	}
}

func testCreateJobNotFound(t *testing.T, s JobsUnderTest) {
	ctx := t.Context()
	team := mustTeam(t, s, "t")
	tests := []struct {
		name string
		job  store.Job
	}{
		{"unknown team", newJob(uuid.NewString())},
		{"malformed team", newJob("not-a-uuid")},
		{"unknown api key", newJob(team.ID, func(j *store.Job) { j.APIKeyID = uuid.NewString() })},
		{"malformed api key", newJob(team.ID, func(j *store.Job) { j.APIKeyID = "key" })},
	}
	for _, tt := range tests {
		_, err := s.CreateJob(ctx, tt.job)
		checkErr(t, "CreateJob with "+tt.name, err, store.ErrNotFound)
	}
}

func testCreateJobInvalid(t *testing.T, s JobsUnderTest) {
	ctx := t.Context()
	team := mustTeam(t, s, "t")
	tests := []struct {
		name string
		job  store.Job
	}{
		{"unknown kind", newJob(team.ID, func(j *store.Job) { j.Kind = "scrape" })},
		{"negative limit", newJob(team.ID, withLimit(-1))},
		{"no expiry", newJob(team.ID, func(j *store.Job) { j.ExpiresAt = time.Time{} })},
		{"malformed id", newJob(team.ID, func(j *store.Job) { j.ID = "job-1" })},
	}
	for _, tt := range tests {
		if _, err := s.CreateJob(ctx, tt.job); err == nil {
			t.Errorf("CreateJob with %s succeeded", tt.name)
		}
	}
	ids, err := s.ScrapingJobs(ctx)
	if err != nil {
		t.Fatalf("ScrapingJobs: %v", err)
	}
	if len(ids) != 0 {
		t.Errorf("ScrapingJobs after invalid creates = %v, want none", ids)
	}
}

func testJobNotFound(t *testing.T, s JobsUnderTest) {
	ctx := t.Context()
	team := mustTeam(t, s, "t")
	job := mustJob(t, s, team.ID)
	mustClaim(t, s, job.ID, "", jobURLs("a"))
	missing := uuid.NewString()
	tests := []struct {
		name string
		call func() error
	}{
		{"Job random id", func() error { _, err := s.Job(ctx, missing); return err }},
		{"Job malformed id", func() error { _, err := s.Job(ctx, "not-a-uuid"); return err }},
		{"Job empty id", func() error { _, err := s.Job(ctx, ""); return err }},
		{"ClaimURLs", func() error { _, err := s.ClaimURLs(ctx, missing, "", jobURLs("a")); return err }},
		{"ClaimURLs nothing", func() error { _, err := s.ClaimURLs(ctx, missing, "", nil); return err }},
		{"URLState of a missing job", func() error { _, err := s.URLState(ctx, missing, "a"); return err }},
		{"URLState of an unclaimed key", func() error { _, err := s.URLState(ctx, job.ID, "b"); return err }},
		{"FinishURL of a missing job", func() error { _, _, err := s.FinishURL(ctx, missing, "a", done("", 0)); return err }},
		{"FinishURL of an unclaimed key", func() error { _, _, err := s.FinishURL(ctx, job.ID, "b", done("", 0)); return err }},
		{"SetJobStatus", func() error {
			_, err := s.SetJobStatus(ctx, missing, []string{store.JobScraping}, store.JobCancelled, "")
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErr(t, tt.name, tt.call(), store.ErrNotFound)
		})
	}
	// The failed calls changed nothing.
	checkCounters(t, s, job.ID, store.Job{Total: 1})
}

func testClaimURLs(t *testing.T, s JobsUnderTest) {
	team := mustTeam(t, s, "t")
	job := mustJob(t, s, team.ID).ID
	a, b, c, d, e, f := jobURLs("a")[0], jobURLs("b")[0], jobURLs("c")[0], jobURLs("d")[0], jobURLs("e")[0], jobURLs("f")[0]
	a.Depth = 0
	aTwin := store.JobURL{Key: "a", URL: "https://example.com/a?twin", Depth: 3}

	// Seeds; a key given twice is claimed once, at its first occurrence.
	checkClaim(t, s, job, "", []store.JobURL{a, b, aTwin, c}, []store.JobURL{a, b, c})
	checkURLState(t, s, job, "a", store.URLPending)
	// Page a links b (owned by the seeds), d and e.
	checkClaim(t, s, job, "a", []store.JobURL{b, d, e}, []store.JobURL{d, e})
	// Page a retried: it owns d and e again, in input order, and claims f.
	checkClaim(t, s, job, "a", []store.JobURL{e, f, b, d}, []store.JobURL{e, f, d})
	// Retried seeds get what was stored, not the new spelling.
	checkClaim(t, s, job, "", []store.JobURL{aTwin, c}, []store.JobURL{a, c})
	// Another page linking only known URLs owns nothing.
	checkClaim(t, s, job, "b", []store.JobURL{a, f}, nil)
	checkClaim(t, s, job, "b", nil, nil)
	checkCounters(t, s, job, store.Job{Total: 6})

	// Jobs do not share URLs.
	other := mustJob(t, s, team.ID).ID
	checkClaim(t, s, other, "", []store.JobURL{a, b}, []store.JobURL{a, b})
	checkCounters(t, s, job, store.Job{Total: 6})
	checkCounters(t, s, other, store.Job{Total: 2})
}

func testClaimURLsLimit(t *testing.T, s JobsUnderTest) {
	team := mustTeam(t, s, "t")
	job := mustJob(t, s, team.ID, withLimit(5)).ID
	u := func(keys ...string) []store.JobURL { return jobURLs(keys...) }

	checkClaim(t, s, job, "", u("a", "b", "c"), u("a", "b", "c"))
	// Two of the three new ones fit, first come first.
	checkClaim(t, s, job, "a", u("c", "d", "e", "f", "g"), u("d", "e"))
	checkClaim(t, s, job, "b", u("h"), nil)
	// At the limit a retried page still gets what it owns.
	checkClaim(t, s, job, "a", u("d", "f", "e"), u("d", "e"))
	checkCounters(t, s, job, store.Job{Total: 5})
	_, err := s.URLState(t.Context(), job, "f")
	checkErr(t, "URLState of a URL over the limit", err, store.ErrNotFound)

	// Finishing URLs frees no room: the limit counts claims.
	mustFinish(t, s, job, "a", done("A", 1))
	checkClaim(t, s, job, "b", u("h"), nil)

	// A job that left scraping claims nothing new, whatever its limit;
	// a retried page still gets what it owns.
	open := mustJob(t, s, team.ID).ID
	checkClaim(t, s, open, "", u("a"), u("a"))
	if ok, err := s.SetJobStatus(t.Context(), open, []string{store.JobScraping}, store.JobCancelled, ""); err != nil || !ok {
		t.Fatalf("SetJobStatus: %v %v", ok, err)
	}
	checkClaim(t, s, open, "a", u("x", "y"), nil)
	checkClaim(t, s, open, "", u("a", "z"), u("a"))
	checkCounters(t, s, open, store.Job{Total: 1})
}

func testClaimURLsMany(t *testing.T, s JobsUnderTest) {
	team := mustTeam(t, s, "t")
	keys := make([]string, 1500)
	for i := range keys {
		keys[i] = fmt.Sprintf("page/%04d", i)
	}
	urls := jobURLs(keys...)
	unlimited := mustJob(t, s, team.ID).ID
	checkClaim(t, s, unlimited, "", urls, urls)
	checkClaim(t, s, unlimited, "", urls, urls)
	checkClaim(t, s, unlimited, "x", urls, nil)
	checkCounters(t, s, unlimited, store.Job{Total: len(urls)})

	limited := mustJob(t, s, team.ID, withLimit(450)).ID
	checkClaim(t, s, limited, "", urls, urls[:450])
	checkCounters(t, s, limited, store.Job{Total: 450})
}

func testConcurrentClaimURLs(t *testing.T, s JobsUnderTest) {
	tests := []struct {
		name  string
		limit int
		want  int
	}{
		{"limited", 50, 50},
		{"unlimited", 0, claimPool},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claimConcurrently(t, []JobsUnderTest{s}, tt.limit, tt.want)
		})
	}
}

// ClaimAcrossStores checks that a job's limit holds exactly when claimers
// use several stores on one database, as several server processes would.
func ClaimAcrossStores(t *testing.T, stores ...JobsUnderTest) {
	t.Helper()
	claimConcurrently(t, stores, 50, 50)
}

// claimPool is the number of distinct keys concurrent claimers draw from.
const claimPool = 100

// claimConcurrently has claimers (using stores in turn) claim overlapping
// keys of a new job with limit, and checks that want keys were claimed,
// each by one parent.
func claimConcurrently(t *testing.T, stores []JobsUnderTest, limit, want int) {
	t.Helper()
	s := stores[0]
	team, err := s.CreateTeam(t.Context(), "claim-"+uuid.NewString())
	if err != nil {
		t.Fatalf("CreateTeam: %v", err)
	}
	job := mustJob(t, s, team.ID, withLimit(limit)).ID
	parent := func(i int) string { return fmt.Sprintf("parent-%d", i) }
	owned := make([][]store.JobURL, claimers)
	errs := make([]error, claimers)
	var wg sync.WaitGroup
	for i := range claimers {
		s := stores[i%len(stores)]
		wg.Go(func() {
			// Each claimer asks for 60 overlapping keys in a random order,
			// in batches of 10, as pages of a crawl would.
			keys := make([]string, 0, 60)
			for k := range 60 {
				keys = append(keys, fmt.Sprintf("k%03d", (i*13+k)%claimPool))
			}
			rand.Shuffle(len(keys), func(a, b int) { keys[a], keys[b] = keys[b], keys[a] })
			for batch := range slices.Chunk(keys, 10) {
				got, err := s.ClaimURLs(t.Context(), job, parent(i), jobURLs(batch...))
				if err != nil {
					errs[i] = err
					return
				}
				owned[i] = append(owned[i], got...)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent ClaimURLs: %v", err)
	}
	by := make(map[string]int)
	for i, urls := range owned {
		for _, u := range urls {
			if prev, ok := by[u.Key]; ok {
				t.Errorf("key %s claimed by parents %d and %d", u.Key, prev, i)
			}
			by[u.Key] = i
		}
	}
	if len(by) != want {
		t.Errorf("%d keys claimed, want %d", len(by), want)
	}
	checkCounters(t, s, job, store.Job{Total: want})
	// A retry of each parent finds exactly what it owned.
	all := make([]string, 0, claimPool)
	for k := range claimPool {
		all = append(all, fmt.Sprintf("k%03d", k))
	}
	for i := range claimers {
		got := mustClaim(t, s, job, parent(i), jobURLs(all...))
		want := slices.Clone(owned[i])
		slices.SortFunc(want, func(a, b store.JobURL) int { return strings.Compare(a.Key, b.Key) })
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("retry of %s mismatch (-want +got):\n%s", parent(i), diff)
		}
	}
	checkCounters(t, s, job, store.Job{Total: want})
}

func testFinishURL(t *testing.T, s JobsUnderTest) {
	ctx := t.Context()
	team := mustTeam(t, s, "t")
	job := mustJob(t, s, team.ID).ID
	mustClaim(t, s, job, "", jobURLs("a", "b", "c", "d", "e"))
	doc := []byte("{\"markdown\":\"\x00\xff\"}") // opaque bytes round-trip

	steps := []struct {
		key          string
		r            store.URLResult
		wantFinished bool
		wantPending  int
	}{
		{"a", store.URLResult{State: store.URLDone, Document: doc, Credits: 2}, true, 4},
		{"a", store.URLResult{State: store.URLDone, Document: []byte("again"), Credits: 5}, false, 4},
		{"a", store.URLResult{State: store.URLFailed, Code: "X", Error: "x", Credits: 5}, false, 4},
		{"b", store.URLResult{State: store.URLFailed, Code: "SCRAPE_TIMEOUT", Error: "timed out", Credits: 1}, true, 3},
		{"b", store.URLResult{State: store.URLDone, Document: []byte("late")}, false, 3},
		{"c", store.URLResult{State: store.URLSkipped}, true, 2},
		{"c", store.URLResult{State: store.URLSkipped, Credits: 9}, false, 2},
		{"d", store.URLResult{State: store.URLDone}, true, 1},
	}
	for _, st := range steps {
		finished, pending := mustFinish(t, s, job, st.key, st.r)
		if finished != st.wantFinished || pending != st.wantPending {
			t.Errorf("FinishURL(%q, %s) = %v, %d; want %v, %d",
				st.key, st.r.State, finished, pending, st.wantFinished, st.wantPending)
		}
	}
	for key, want := range map[string]string{"a": store.URLDone, "b": store.URLFailed, "c": store.URLSkipped, "d": store.URLDone, "e": store.URLPending} {
		checkURLState(t, s, job, key, want)
	}
	checkCounters(t, s, job, store.Job{Total: 5, Completed: 3, Documents: 2, CreditsUsed: 3})
	if diff := cmp.Diff([][]byte{doc, {}}, mustDocuments(t, s, job, 0, 10)); diff != "" {
		t.Errorf("Documents mismatch (-want +got):\n%s", diff)
	}
	errs, err := s.JobErrors(ctx, job)
	if err != nil {
		t.Fatalf("JobErrors: %v", err)
	}
	wantErrs := []store.JobError{{URL: "https://example.com/b", Code: "SCRAPE_TIMEOUT", Error: "timed out"}}
	if diff := cmp.Diff(wantErrs, errs, cmpopts.IgnoreFields(store.JobError{}, "ID", "CreatedAt")); diff != "" {
		t.Errorf("JobErrors mismatch (-want +got):\n%s", diff)
	}

	// Results FinishURL cannot record fail and change nothing.
	for _, r := range []store.URLResult{{State: store.URLPending}, {State: "bogus"}, {State: store.URLDone, Credits: -1}} {
		if _, _, err := s.FinishURL(ctx, job, "e", r); err == nil {
			t.Errorf("FinishURL(%+v) succeeded", r)
		}
	}
	checkURLState(t, s, job, "e", store.URLPending)
	if finished, pending := mustFinish(t, s, job, "e", done("E", 0)); !finished || pending != 0 {
		t.Errorf("FinishURL of the last URL = %v, %d; want true, 0", finished, pending)
	}
	checkCounters(t, s, job, store.Job{Total: 5, Completed: 4, Documents: 3, CreditsUsed: 3})
}

func testConcurrentFinishURL(t *testing.T, s JobsUnderTest) {
	team := mustTeam(t, s, "t")
	job := mustJob(t, s, team.ID).ID
	const n = 100
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%03d", i)
	}
	mustClaim(t, s, job, "", jobURLs(keys...))
	// Every claimer tries to finish every URL, in its own order; every
	// tenth URL fails.
	result := func(key string) store.URLResult {
		if key[len(key)-1] == '0' {
			return store.URLResult{State: store.URLFailed, Code: "C", Error: key, Credits: 1}
		}
		return done(key, 1)
	}
	finishedBy := make([][]string, claimers)
	minPending := make([]int, claimers)
	errs := make([]error, claimers)
	var wg sync.WaitGroup
	for i := range claimers {
		wg.Go(func() {
			order := slices.Clone(keys)
			rand.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
			minPending[i] = n
			for _, k := range order {
				finished, pending, err := s.FinishURL(t.Context(), job, k, result(k))
				if err != nil {
					errs[i] = err
					return
				}
				if finished {
					finishedBy[i] = append(finishedBy[i], k)
				}
				minPending[i] = min(minPending[i], pending)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent FinishURL: %v", err)
	}
	var all []string
	for _, ks := range finishedBy {
		all = append(all, ks...)
	}
	slices.Sort(all)
	if diff := cmp.Diff(keys, all); diff != "" {
		t.Errorf("URLs finished (-want each once +got):\n%s", diff)
	}
	if m := slices.Min(minPending); m != 0 {
		t.Errorf("lowest pending count seen = %d, want 0", m)
	}
	checkCounters(t, s, job, store.Job{Total: n, Completed: n, Documents: n - n/10, CreditsUsed: n})
	docs := mustDocuments(t, s, job, 0, 2*n)
	got := make([]string, len(docs))
	for i, d := range docs {
		got[i] = string(d)
	}
	slices.Sort(got)
	want := slices.DeleteFunc(slices.Clone(keys), func(k string) bool { return result(k).State != store.URLDone })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Documents (-want each once +got):\n%s", diff)
	}
	errList, err := s.JobErrors(t.Context(), job)
	if err != nil {
		t.Fatalf("JobErrors: %v", err)
	}
	if len(errList) != n/10 {
		t.Errorf("%d job errors, want %d", len(errList), n/10)
	}
}

func testDocuments(t *testing.T, s JobsUnderTest) {
	team := mustTeam(t, s, "t")
	job := mustJob(t, s, team.ID).ID
	mustClaim(t, s, job, "", jobURLs("a", "b", "c", "d", "e", "f"))
	// Finish order, not claim order, is document order; failed and
	// skipped URLs have no document.
	for _, k := range []string{"e", "d", "c"} {
		mustFinish(t, s, job, k, done(k, 0))
	}
	mustFinish(t, s, job, "f", store.URLResult{State: store.URLFailed, Code: "C", Error: "e"})
	mustFinish(t, s, job, "b", store.URLResult{State: store.URLSkipped})
	mustFinish(t, s, job, "a", done("a", 0))
	other := mustJob(t, s, team.ID).ID
	mustClaim(t, s, other, "", jobURLs("z"))
	mustFinish(t, s, other, "z", done("z", 0))

	docs := func(ds ...string) [][]byte {
		out := make([][]byte, len(ds))
		for i, d := range ds {
			out[i] = []byte(d)
		}
		return out
	}
	tests := []struct {
		skip, limit int
		want        [][]byte
	}{
		{0, 10, docs("e", "d", "c", "a")},
		{0, 4, docs("e", "d", "c", "a")},
		{0, 2, docs("e", "d")},
		{1, 2, docs("d", "c")},
		{3, 10, docs("a")},
		{4, 10, nil},
		{100, 10, nil},
		{0, 0, nil},
		{-5, 1, docs("e")},
		{0, math.MaxInt, docs("e", "d", "c", "a")},
		{math.MaxInt, math.MaxInt, nil},
	}
	for _, tt := range tests {
		got := mustDocuments(t, s, job, tt.skip, tt.limit)
		if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Documents(%d, %d) mismatch (-want +got):\n%s", tt.skip, tt.limit, diff)
		}
	}
	if got := mustDocuments(t, s, uuid.NewString(), 0, 10); len(got) != 0 {
		t.Errorf("Documents of a missing job = %q, want none", got)
	}
}

func testJobErrors(t *testing.T, s JobsUnderTest) {
	ctx := t.Context()
	team := mustTeam(t, s, "t")
	job := mustJob(t, s, team.ID).ID
	if errs, err := s.JobErrors(ctx, job); err != nil || len(errs) != 0 {
		t.Errorf("JobErrors of a new job = %v, %v; want none", errs, err)
	}
	mustClaim(t, s, job, "", jobURLs("a", "b", "c", "d"))
	for _, k := range []string{"c", "a", "b"} {
		mustFinish(t, s, job, k, store.URLResult{State: store.URLFailed, Code: "CODE_" + k, Error: "failed " + k})
	}
	mustFinish(t, s, job, "d", done("d", 0))
	errs, err := s.JobErrors(ctx, job)
	if err != nil {
		t.Fatalf("JobErrors: %v", err)
	}
	want := []store.JobError{
		{URL: "https://example.com/c", Code: "CODE_c", Error: "failed c"},
		{URL: "https://example.com/a", Code: "CODE_a", Error: "failed a"},
		{URL: "https://example.com/b", Code: "CODE_b", Error: "failed b"},
	}
	if diff := cmp.Diff(want, errs, cmpopts.IgnoreFields(store.JobError{}, "ID", "CreatedAt")); diff != "" {
		t.Errorf("JobErrors mismatch (-want +got):\n%s", diff)
	}
	ids := make(map[string]bool)
	for i, e := range errs {
		if _, err := uuid.Parse(e.ID); err != nil {
			t.Errorf("error %d ID %q is not a UUID", i, e.ID)
		}
		ids[e.ID] = true
		checkRecent(t, "error CreatedAt", e.CreatedAt)
		if i > 0 && e.CreatedAt.Before(errs[i-1].CreatedAt) {
			t.Errorf("error %d CreatedAt %v before error %d's %v", i, e.CreatedAt, i-1, errs[i-1].CreatedAt)
		}
	}
	if len(ids) != len(errs) {
		t.Errorf("error IDs are not distinct: %v", errs)
	}
}

func testRobotsBlocked(t *testing.T, s JobsUnderTest) {
	ctx := t.Context()
	team := mustTeam(t, s, "t")
	job, other := mustJob(t, s, team.ID).ID, mustJob(t, s, team.ID).ID
	check := func(jobID string, want []string) {
		t.Helper()
		got, err := s.RobotsBlocked(ctx, jobID)
		if err != nil {
			t.Fatalf("RobotsBlocked: %v", err)
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("RobotsBlocked mismatch (-want +got):\n%s", diff)
		}
	}
	check(job, nil)
	adds := [][]string{
		{"https://x.test/z", "https://x.test/a", "https://x.test/z"},
		nil,
		{"https://x.test/m", "https://x.test/a"},
		{"https://x.test/b"},
	}
	for _, urls := range adds {
		if err := s.AddRobotsBlocked(ctx, job, urls); err != nil {
			t.Fatalf("AddRobotsBlocked(%v): %v", urls, err)
		}
	}
	if err := s.AddRobotsBlocked(ctx, other, []string{"https://x.test/a"}); err != nil {
		t.Fatalf("AddRobotsBlocked(other job): %v", err)
	}
	check(job, []string{"https://x.test/z", "https://x.test/a", "https://x.test/m", "https://x.test/b"})
	check(other, []string{"https://x.test/a"})
}

func testSetJobStatus(t *testing.T, s JobsUnderTest) {
	ctx := t.Context()
	team := mustTeam(t, s, "t")
	job := mustJob(t, s, team.ID)
	scraping := []string{store.JobScraping}
	steps := []struct {
		name          string
		from          []string
		status, err   string
		wantChanged   bool
		wantStatus    string
		wantError     string
		wantCompleted bool
	}{
		{"from another status", []string{store.JobCompleted, store.JobFailed}, store.JobCancelled, "x", false, store.JobScraping, "", false},
		{"from no status", nil, store.JobCancelled, "x", false, store.JobScraping, "", false},
		{"complete", scraping, store.JobCompleted, "", true, store.JobCompleted, "", true},
		{"cancel a completed job", scraping, store.JobCancelled, "", false, store.JobCompleted, "", true},
		{"resume", []string{store.JobFailed, store.JobCompleted}, store.JobScraping, "", true, store.JobScraping, "", false},
		{"fail", scraping, store.JobFailed, "robots.txt disallows the start URL", true, store.JobFailed, "robots.txt disallows the start URL", true},
		{"cancel a failed job", []string{store.JobScraping, store.JobFailed}, store.JobCancelled, "", true, store.JobCancelled, "", true},
	}
	for _, st := range steps {
		changed, err := s.SetJobStatus(ctx, job.ID, st.from, st.status, st.err)
		if err != nil {
			t.Fatalf("%s: SetJobStatus: %v", st.name, err)
		}
		if changed != st.wantChanged {
			t.Errorf("%s: SetJobStatus = %v, want %v", st.name, changed, st.wantChanged)
		}
		got := mustGetJob(t, s, job.ID)
		if got.Status != st.wantStatus || got.Error != st.wantError || (got.CompletedAt != nil) != st.wantCompleted {
			t.Errorf("%s: job status %q, error %q, completed at %v; want %q, %q, completed %v",
				st.name, got.Status, got.Error, got.CompletedAt, st.wantStatus, st.wantError, st.wantCompleted)
		}
		if got.CompletedAt != nil {
			checkRecent(t, st.name+": CompletedAt", *got.CompletedAt)
		}
	}
	if _, err := s.SetJobStatus(ctx, job.ID, scraping, "paused", ""); err == nil {
		t.Error("SetJobStatus to an unknown status succeeded")
	}
}

func testConcurrentSetJobStatus(t *testing.T, s JobsUnderTest) {
	team := mustTeam(t, s, "t")
	job := mustJob(t, s, team.ID).ID
	changed := make([]bool, claimers)
	errs := make([]error, claimers)
	var wg sync.WaitGroup
	for i := range claimers {
		status := store.JobCompleted
		if i%2 == 1 {
			status = store.JobCancelled
		}
		wg.Go(func() {
			changed[i], errs[i] = s.SetJobStatus(t.Context(), job, []string{store.JobScraping}, status, "")
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent SetJobStatus: %v", err)
	}
	winners := 0
	for _, c := range changed {
		if c {
			winners++
		}
	}
	if winners != 1 {
		t.Errorf("%d concurrent transitions from scraping succeeded, want 1", winners)
	}
}

func testActiveJobs(t *testing.T, s JobsUnderTest) {
	ctx := t.Context()
	a, b := mustTeam(t, s, "a"), mustTeam(t, s, "b")
	base := time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
	at := func(kind string, d time.Duration) func(*store.Job) {
		return func(j *store.Job) { j.Kind, j.CreatedAt = kind, base.Add(d) }
	}
	// Created out of time order, to see the order is by CreatedAt.
	late := mustJob(t, s, a.ID, at(store.JobCrawl, 3*time.Second))
	early := mustJob(t, s, a.ID, at(store.JobCrawl, time.Second))
	batch := mustJob(t, s, a.ID, at(store.JobBatch, 2*time.Second))
	finished := mustJob(t, s, a.ID, at(store.JobCrawl, 0))
	mustJob(t, s, b.ID, at(store.JobCrawl, 0))
	if _, err := s.SetJobStatus(ctx, finished.ID, []string{store.JobScraping}, store.JobCompleted, ""); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, s, late.ID, "", jobURLs("x", "y"))
	mustFinish(t, s, late.ID, "x", done("x", 3))

	tests := []struct {
		team, kind string
		want       []string
	}{
		{a.ID, store.JobCrawl, []string{early.ID, late.ID}},
		{a.ID, store.JobBatch, []string{batch.ID}},
		{b.ID, store.JobBatch, nil},
		{uuid.NewString(), store.JobCrawl, nil},
	}
	for _, tt := range tests {
		got, err := s.ActiveJobs(ctx, tt.team, tt.kind)
		if err != nil {
			t.Fatalf("ActiveJobs: %v", err)
		}
		var want []store.Job
		for _, id := range tt.want {
			want = append(want, mustGetJob(t, s, id))
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("ActiveJobs(%s) mismatch (-want +got):\n%s", tt.kind, diff)
		}
	}
	// The counters are filled.
	got, err := s.ActiveJobs(ctx, a.ID, store.JobCrawl)
	if err != nil || len(got) != 2 {
		t.Fatalf("ActiveJobs = %v, %v", got, err)
	}
	if c := got[1]; c.Total != 2 || c.Completed != 1 || c.Documents != 1 || c.CreditsUsed != 3 {
		t.Errorf("ActiveJobs counters = %d, %d, %d, %d; want 2, 1, 1, 3", c.Total, c.Completed, c.Documents, c.CreditsUsed)
	}
}

func testScrapingJobs(t *testing.T, s JobsUnderTest) {
	ctx := t.Context()
	a, b := mustTeam(t, s, "a"), mustTeam(t, s, "b")
	base := time.Now().Add(-time.Hour).UTC()
	at := func(d time.Duration) func(*store.Job) {
		return func(j *store.Job) { j.CreatedAt = base.Add(d) }
	}
	second := mustJob(t, s, a.ID, at(2*time.Second))
	first := mustJob(t, s, b.ID, at(time.Second), func(j *store.Job) { j.Kind = store.JobBatch })
	cancelled := mustJob(t, s, a.ID, at(0))
	if _, err := s.SetJobStatus(ctx, cancelled.ID, []string{store.JobScraping}, store.JobCancelled, ""); err != nil {
		t.Fatal(err)
	}
	ids, err := s.ScrapingJobs(ctx)
	if err != nil {
		t.Fatalf("ScrapingJobs: %v", err)
	}
	if diff := cmp.Diff([]string{first.ID, second.ID}, ids); diff != "" {
		t.Errorf("ScrapingJobs mismatch (-want +got):\n%s", diff)
	}
}

func testDeleteExpiredJobs(t *testing.T, s JobsUnderTest) {
	ctx := t.Context()
	team := mustTeam(t, s, "t")
	now := time.Now().UTC().Truncate(time.Microsecond)
	expires := func(at time.Time) func(*store.Job) {
		return func(j *store.Job) { j.ExpiresAt = at }
	}
	old := mustJob(t, s, team.ID, expires(now.Add(-time.Hour)))
	edge := mustJob(t, s, team.ID, expires(now))
	live := mustJob(t, s, team.ID, expires(now.Add(time.Hour)))
	for _, j := range []store.Job{old, live} {
		mustClaim(t, s, j.ID, "", jobURLs("a", "b", "c"))
		mustFinish(t, s, j.ID, "a", done("A", 1))
		mustFinish(t, s, j.ID, "b", store.URLResult{State: store.URLFailed, Code: "C", Error: "e"})
		if err := s.AddRobotsBlocked(ctx, j.ID, []string{"https://example.com/private"}); err != nil {
			t.Fatal(err)
		}
	}

	n, err := s.DeleteExpiredJobs(ctx, now)
	if err != nil {
		t.Fatalf("DeleteExpiredJobs: %v", err)
	}
	if n != 1 {
		t.Errorf("DeleteExpiredJobs = %d, want 1", n)
	}
	_, err = s.Job(ctx, old.ID)
	checkErr(t, "Job of a purged job", err, store.ErrNotFound)
	_, err = s.URLState(ctx, old.ID, "c")
	checkErr(t, "URLState of a purged job", err, store.ErrNotFound)
	if docs := mustDocuments(t, s, old.ID, 0, 10); len(docs) != 0 {
		t.Errorf("Documents of a purged job = %q, want none", docs)
	}
	if errs, err := s.JobErrors(ctx, old.ID); err != nil || len(errs) != 0 {
		t.Errorf("JobErrors of a purged job = %v, %v; want none", errs, err)
	}
	if urls, err := s.RobotsBlocked(ctx, old.ID); err != nil || len(urls) != 0 {
		t.Errorf("RobotsBlocked of a purged job = %v, %v; want none", urls, err)
	}
	// A job expiring exactly now stays; the live job keeps everything.
	mustGetJob(t, s, edge.ID)
	checkCounters(t, s, live.ID, store.Job{Total: 3, Completed: 2, Documents: 1, CreditsUsed: 1})
	checkURLState(t, s, live.ID, "c", store.URLPending)
	if docs := mustDocuments(t, s, live.ID, 0, 10); len(docs) != 1 || !bytes.Equal(docs[0], []byte("A")) {
		t.Errorf("Documents of the live job = %q, want [A]", docs)
	}
	// A purged job's keys may be reused by a new job.
	again := mustJob(t, s, team.ID, func(j *store.Job) { j.ID = old.ID })
	checkClaim(t, s, again.ID, "", jobURLs("c"), jobURLs("c"))

	if n, err := s.DeleteExpiredJobs(ctx, now.Add(48*time.Hour)); err != nil || n != 3 {
		t.Errorf("DeleteExpiredJobs later = %d, %v; want 3", n, err)
	}
	if ids, err := s.ScrapingJobs(ctx); err != nil || len(ids) != 0 {
		t.Errorf("ScrapingJobs after purging all = %v, %v; want none", ids, err)
	}
}

func testJobsCanceledContext(t *testing.T, s JobsUnderTest) {
	team := mustTeam(t, s, "t")
	job := mustJob(t, s, team.ID).ID
	mustClaim(t, s, job, "", jobURLs("a"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name string
		call func() error
	}{
		{"CreateJob", func() error { _, err := s.CreateJob(ctx, newJob(team.ID)); return err }},
		{"Job", func() error { _, err := s.Job(ctx, job); return err }},
		{"ClaimURLs", func() error { _, err := s.ClaimURLs(ctx, job, "", jobURLs("b")); return err }},
		{"FinishURL", func() error { _, _, err := s.FinishURL(ctx, job, "a", done("A", 1)); return err }},
		{"Documents", func() error { _, err := s.Documents(ctx, job, 0, 10); return err }},
		{"SetJobStatus", func() error {
			_, err := s.SetJobStatus(ctx, job, []string{store.JobScraping}, store.JobCompleted, "")
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErr(t, tt.name, tt.call(), context.Canceled)
		})
	}
	checkURLState(t, s, job, "a", store.URLPending)
	checkCounters(t, s, job, store.Job{Total: 1})
}

// BenchmarkJobs measures the store work of one crawled page: ClaimURLs of
// its links (10 new, 10 already claimed) and FinishURL with a 16 KiB
// document. "serial" runs one page at a time; "parallel" runs 8 pages at
// a time per GOMAXPROCS, as many crawl workers would. pages/s is reported.
func BenchmarkJobs(b *testing.B, s JobsUnderTest) {
	team, err := s.CreateTeam(b.Context(), "bench")
	if err != nil {
		b.Fatalf("CreateTeam: %v", err)
	}
	doc := bytes.Repeat([]byte(`{"markdown":"# Title\n\nSome text of the page."}`), 16<<10/48)
	page := func(i int) string { return fmt.Sprintf("page/%d", i) }

	// setup creates a job whose pages 0..b.N-1 are claimed and pending.
	setup := func(b *testing.B) string {
		b.Helper()
		job := mustJob(b, s, team.ID).ID
		for start := 0; start < b.N; start += 1000 {
			keys := make([]string, 0, 1000)
			for i := start; i < min(start+1000, b.N); i++ {
				keys = append(keys, page(i))
			}
			mustClaim(b, s, job, "", jobURLs(keys...))
		}
		return job
	}
	// crawl does the store work of page i: claims its links and finishes it.
	crawl := func(ctx context.Context, n int, job string, i int) error {
		links := make([]string, 0, 20)
		for j := range 10 {
			links = append(links, fmt.Sprintf("link/%d/%d", i, j), page((i*7+j)%n))
		}
		if _, err := s.ClaimURLs(ctx, job, page(i), jobURLs(links...)); err != nil {
			return err
		}
		finished, _, err := s.FinishURL(ctx, job, page(i), store.URLResult{State: store.URLDone, Document: doc, Credits: 1})
		if err == nil && !finished {
			err = fmt.Errorf("page %d was not pending", i)
		}
		return err
	}

	b.Run("serial", func(b *testing.B) {
		job := setup(b)
		b.ResetTimer()
		for i := range b.N {
			if err := crawl(b.Context(), b.N, job, i); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
	})
	b.Run("parallel", func(b *testing.B) {
		job := setup(b)
		var next atomic.Int64
		b.SetParallelism(claimers)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := crawl(b.Context(), b.N, job, int(next.Add(1)-1)); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
	})
}
