package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
)

// Metrics records requests and serves GET /metrics; *metrics.Metrics
// implements it.
type Metrics interface {
	// ObserveRequest records one answered request by route pattern.
	ObserveRequest(route, method string, code int, d time.Duration)
	// Handler serves the series.
	Handler() http.Handler
}

// ReadyCheck is one dependency GET /ready checks, such as the store, the
// cache backend, the browser or the queue.
type ReadyCheck struct {
	Name string
	// Check returns nil when the dependency answers. state, when not
	// empty, replaces "ok" in the report (e.g. "not started" for a browser
	// that starts on first use, which is ready).
	Check func(ctx context.Context) (state string, err error)
}

// readyCheckTimeout bounds each readiness check.
const readyCheckTimeout = 2 * time.Second

// unmatchedRoute labels requests no route matched, so that unknown paths do
// not make a series each.
const unmatchedRoute = "unmatched"

// observe records the request in the metrics, by chi's route pattern. A
// request answered before routing finished (a 401 or 413 of the /v2
// middleware) has only the sub-router's "/v2/*" so far: its route is looked
// up; one that matches no route is labelled unmatchedRoute.
func (s *Server) observe(r *http.Request, status int, d time.Duration) {
	route := ""
	if rc := chi.RouteContext(r.Context()); rc != nil {
		route = rc.RoutePattern()
	}
	if route == "" || strings.HasSuffix(route, "/*") {
		route = s.router.Find(chi.NewRouteContext(), r.Method, r.URL.Path)
	}
	if route == "" {
		route = unmatchedRoute
	}
	if status == 0 {
		status = http.StatusOK
	}
	s.metrics.ObserveRequest(route, r.Method, status, d)
}

// readyReport is one check's entry in the GET /ready body.
type readyReport struct {
	Status     string  `json:"status"`
	Error      string  `json:"error,omitempty"`
	DurationMS float64 `json:"duration_ms"`
}

// handleReady serves GET /ready, the readiness probe: 200
// {"status":"ready","checks":{...}} when the server is serving and every
// check passes within 2 s, else 503 {"status":"not ready",...} naming the
// failed checks. The checks run concurrently. Causes are logged, not
// returned: the route is unauthenticated.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	checks := make(map[string]readyReport, len(s.checks)+1)
	ok := s.ready.Load()
	if !ok {
		checks["server"] = readyReport{Status: "fail", Error: "starting or shutting down"}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range s.checks {
		wg.Go(func() {
			rep := s.runCheck(ctx, c)
			mu.Lock()
			defer mu.Unlock()
			checks[c.Name] = rep
			if rep.Status == "fail" {
				ok = false
			}
		})
	}
	wg.Wait()
	status, code := "ready", http.StatusOK
	if !ok {
		status, code = "not ready", http.StatusServiceUnavailable
	}
	writeJSON(w, code, map[string]any{"status": status, "checks": checks})
}

// runCheck runs one check under readyCheckTimeout; a check that does not
// return by then fails (and is left to finish on its own).
func (s *Server) runCheck(ctx context.Context, c ReadyCheck) readyReport {
	cctx, cancel := context.WithTimeout(ctx, readyCheckTimeout)
	defer cancel()
	start := time.Now()
	type result struct {
		state string
		err   error
	}
	done := make(chan result, 1)
	go func() {
		state, err := c.Check(cctx)
		done <- result{state, err}
	}()
	var res result
	select {
	case res = <-done:
	case <-cctx.Done():
		res.err = cctx.Err()
	}
	state, err := res.state, res.err
	rep := readyReport{Status: "ok", DurationMS: float64(time.Since(start).Microseconds()) / 1000}
	switch {
	case err != nil:
		rep.Status, rep.Error = "fail", "unreachable"
		if errors.Is(err, context.DeadlineExceeded) || cctx.Err() != nil {
			rep.Error = "timed out after " + readyCheckTimeout.String()
		}
		s.log.WarnContext(ctx, "readiness check failed", "check", c.Name, "err", err, "request_id", requestIDFrom(ctx))
	case state != "":
		rep.Status = state
	}
	return rep
}
