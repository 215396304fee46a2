// Package searxngtest is a scripted SearXNG-compatible server on loopback
// for tests: it records the query parameters of every call to /search and
// answers what the test scripts, in SearXNG's JSON format.
package searxngtest

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"
)

// Result is one result of a canned answer, with SearXNG's field names.
type Result struct {
	URL           string   `json:"url"`
	Title         string   `json:"title"`
	Content       string   `json:"content"`
	Score         float64  `json:"score"`
	Category      string   `json:"category,omitempty"`
	PublishedDate *string  `json:"publishedDate"`
	ImgSrc        string   `json:"img_src,omitempty"`
	ThumbnailSrc  string   `json:"thumbnail_src,omitempty"`
	Resolution    string   `json:"resolution,omitempty"`
	Engines       []string `json:"engines,omitempty"`
}

// Answer is what the server sends for one call.
type Answer struct {
	// Status is the HTTP status; 0 = 200.
	Status int
	// Results and Unresponsive (pairs of engine name and reason) make the
	// JSON body, unless Raw is set, which is sent as it is.
	Results      []Result
	Unresponsive [][]string
	Raw          string
	// Delay holds the answer back (or until the caller gives up).
	Delay time.Duration
}

// Server is the scripted server. Its URL is the SearXNG endpoint.
type Server struct {
	*httptest.Server
	mu    sync.Mutex
	calls []url.Values
}

// New starts a server answering each GET /search with answer(params); it
// stops when the test ends.
func New(t testing.TB, answer func(q url.Values) Answer) *Server {
	t.Helper()
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		s.mu.Lock()
		s.calls = append(s.calls, q)
		s.mu.Unlock()
		a := answer(q)
		if a.Delay > 0 {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(a.Delay):
			}
		}
		status := a.Status
		if status == 0 {
			status = http.StatusOK
		}
		if a.Raw != "" {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(a.Raw))
			return
		}
		results := a.Results
		if results == nil {
			results = []Result{}
		}
		unresponsive := a.Unresponsive
		if unresponsive == nil {
			unresponsive = [][]string{}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"query": q.Get("q"), "number_of_results": 0, "results": results,
			"answers": []any{}, "corrections": []any{}, "infoboxes": []any{}, "suggestions": []any{},
			"unresponsive_engines": unresponsive,
		})
	}))
	t.Cleanup(s.Close)
	return s
}

// Calls returns the query parameters of every call so far, in order.
func (s *Server) Calls() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]url.Values(nil), s.calls...)
}

// Date returns a pointer to t formatted as SearXNG writes publishedDate.
func Date(t time.Time) *string {
	s := t.UTC().Format("2006-01-02T15:04:05")
	return &s
}

// RefusedAt returns a client whose every connection is refused as if the
// engine were at addr (e.g. "10.1.2.3:8080", a private network's): the
// refusal is a real one, of a closed loopback port, reported under addr,
// as the dialer reports an engine that is down.
func RefusedAt(t testing.TB, addr string) *http.Client {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	shown, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		c, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, closed)
		var oe *net.OpError
		if errors.As(err, &oe) {
			oe.Addr = shown
		}
		return c, err
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}
