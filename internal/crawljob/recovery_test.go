package crawljob_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/crawljob"
	"github.com/firegate/firegate/internal/queue/queuetest"
	"github.com/firegate/firegate/internal/store"
)

// countingSite answers every path with a small page and counts the
// requests per path.
type countingSite struct {
	mu   sync.Mutex
	hits map[string]int
}

func (s *countingSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/html")
	fmt.Fprintf(w, "<html><head><title>%s</title></head><body><p>page %s</p></body></html>", r.URL.Path, r.URL.Path)
}

func (s *countingSite) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// TestDeadWorkersPages: a batch whose pages were in the hands of a worker
// that died. A page it held on an early attempt runs again on the next; a
// page it held on the next-to-last attempt (its workers died on every
// attempt so far: it may be what kills them) is failed on the last one
// without being fetched, so the batch still completes instead of waiting
// forever on a discarded job.
func TestDeadWorkersPages(t *testing.T) {
	for _, kind := range stores {
		t.Run(kind, func(t *testing.T) {
			site := &countingSite{hits: map[string]int{}}
			srv := httptest.NewServer(site)
			t.Cleanup(srv.Close)
			st := openStore(t, kind)
			ws := st.(store.WorkerStore)
			// The dead worker's beat is staged an hour old (StageDead).
			const deadAfter = time.Minute
			h := newHarness(t, st, harnessOptions{workers: 4, liveness: ws, deadAfter: deadAfter, deferStart: true})
			o := defaultOptions()
			id := crawljob.NewJobID()
			urls := []string{srv.URL + "/fine", srv.URL + "/retried", srv.URL + "/poison"}
			if err := h.runner.StartBatch(t.Context(), store.Job{ID: id, TeamID: h.team.ID}, o, urls); err != nil {
				t.Fatal(err)
			}
			const maxAttempts = 5 // the queue's default
			queuetest.StageRunning(t, st, "page", "url", srv.URL+"/retried", 1, "dead")
			queuetest.StageRunning(t, st, "page", "url", srv.URL+"/poison", maxAttempts-1, "dead")
			queuetest.StageDead(t, st, "dead")
			if err := h.q.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			j := h.wait(t, id, 20*time.Second)
			if j.Status != store.JobCompleted || j.Total != 3 || j.Documents != 2 || j.Completed != 3 {
				t.Errorf("job %s: total %d completed %d documents %d; want completed 3/3 with 2 documents",
					j.Status, j.Total, j.Completed, j.Documents)
			}
			for path, want := range map[string]int{"/fine": 1, "/retried": 1, "/poison": 0} {
				if got := site.count(path); got != want {
					t.Errorf("%s fetched %d times, want %d", path, got, want)
				}
			}
			errs, err := st.JobErrors(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if len(errs) != 1 || errs[0].URL != srv.URL+"/poison" || !strings.Contains(errs[0].Error, "died or hung on 1 of its 4 attempts") {
				t.Errorf("job errors %+v; want the poison page given up after 4 attempts", errs)
			}
		})
	}
}
