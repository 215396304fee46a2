package crawljob

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"

	"github.com/firegate/firegate/internal/store"
)

// racingJobs is a job store of one job whose first status read is held
// after it has read the job, so that a cancel can land while it is in
// flight.
type racingJobs struct {
	store.JobStore
	mu      sync.Mutex
	job     store.Job
	held    bool
	reading chan struct{} // closed when the held read has its copy
	resume  chan struct{} // closed to let the held read return
}

func (s *racingJobs) Job(ctx context.Context, id string) (store.Job, error) {
	s.mu.Lock()
	j, hold := s.job, !s.held
	s.held = true
	s.mu.Unlock()
	if hold {
		close(s.reading)
		<-s.resume
	}
	return j, nil
}

func (s *racingJobs) SetJobStatus(ctx context.Context, id string, from []string, to, msg string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.job.Status = to
	return true, nil
}

// A status read that a cancel overtakes must not be cached: pages that
// start after the cancel would trust its "scraping" for statusTTL and
// scrape a cancelled job (TestBatchJobRoutes saw two such pages).
func TestCancelOvertakingAReadIsNotCached(t *testing.T) {
	opts, _ := json.Marshal(JobOptions{})
	st := &racingJobs{job: store.Job{ID: "j1", TeamID: "t1", Kind: store.JobBatch, Status: store.JobScraping, Options: opts},
		reading: make(chan struct{}), resume: make(chan struct{})}
	r := NewRunner(RunnerConfig{Jobs: st, Log: slog.New(slog.DiscardHandler)})
	ctx := context.Background()

	read := make(chan *cachedJob)
	go func() {
		c, err := r.job(ctx, "j1")
		if err != nil {
			t.Error(err)
		}
		read <- c
	}()
	<-st.reading // the read has the job as it was: scraping
	if err := r.Cancel(ctx, "t1", "j1"); err != nil {
		t.Fatal(err)
	}
	close(st.resume)
	if c := <-read; c.job.Status != store.JobScraping {
		t.Fatalf("the overtaken read saw %q", c.job.Status)
	}
	c, err := r.job(ctx, "j1")
	if err != nil {
		t.Fatal(err)
	}
	if c.job.Status != store.JobCancelled {
		t.Errorf("a page starting after the cancel sees %q, want %q", c.job.Status, store.JobCancelled)
	}
}
