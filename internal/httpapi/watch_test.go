package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"

	"github.com/firegate/firegate/internal/crawl/testsite"
	"github.com/firegate/firegate/internal/crawljob"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/testenv"
)

// Tests of the WebSocket watcher on the job status paths, dialled with
// github.com/coder/websocket; the fixture is in crawl_test.go.

// wsWatch is a watcher connection of a test.
type wsWatch struct {
	t     *testing.T
	c     *websocket.Conn
	ctx   context.Context
	proto string // the subprotocol the server accepted
}

// dialWatch opens the watcher of path on base, offering key as the
// subprotocol (none when empty) and sending header pairs.
func dialWatch(t *testing.T, base, path, key string, header ...string) *wsWatch {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	opts := &websocket.DialOptions{HTTPHeader: http.Header{}}
	if key != "" {
		opts.Subprotocols = []string{key}
	}
	for i := 0; i+1 < len(header); i += 2 {
		opts.HTTPHeader.Set(header[i], header[i+1])
	}
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+path, opts)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	t.Cleanup(func() { c.CloseNow() })
	c.SetReadLimit(64 << 20)
	if got := c.Subprotocol(); got != resp.Header.Get("Sec-WebSocket-Protocol") {
		t.Errorf("subprotocol %q, header %q", got, resp.Header.Get("Sec-WebSocket-Protocol"))
	}
	return &wsWatch{t: t, c: c, ctx: ctx, proto: c.Subprotocol()}
}

// next reads one message; ok is false when the server closed instead,
// with its close status.
func (w *wsWatch) next() (msg map[string]any, closed websocket.CloseError, ok bool) {
	w.t.Helper()
	_, data, err := w.c.Read(w.ctx)
	if err != nil {
		if errors.As(err, &closed) {
			return nil, closed, false
		}
		w.t.Fatalf("read: %v", err)
	}
	if err := json.Unmarshal(data, &msg); err != nil {
		w.t.Fatalf("message is not a JSON object: %q", data)
	}
	return msg, websocket.CloseError{}, true
}

// rest reads messages until the server closes.
func (w *wsWatch) rest() ([]map[string]any, websocket.CloseError) {
	w.t.Helper()
	var msgs []map[string]any
	for {
		m, closed, ok := w.next()
		if !ok {
			return msgs, closed
		}
		msgs = append(msgs, m)
	}
}

// catchupOf checks that m is a catchup message and returns its status.
func catchupOf(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	if m["type"] != "catchup" {
		t.Fatalf("first message %v, want a catchup", m)
	}
	if diff := cmp.Diff([]string{"data", "type"}, keysOf(m)); diff != "" {
		t.Errorf("catchup keys (-want +got)\n%s", diff)
	}
	st, ok := m["data"].(map[string]any)
	if !ok {
		t.Fatalf("catchup data %v is not a status", m["data"])
	}
	checkStatusShape(t, st)
	if _, ok := st["next"]; ok {
		t.Errorf("catchup status has next %v", st["next"])
	}
	return st
}

// documentsOf checks that msgs are document messages and returns their
// sourceURLs.
func documentsOf(t *testing.T, msgs []map[string]any) []string {
	t.Helper()
	var out []string
	for _, m := range msgs {
		if m["type"] != "document" {
			t.Errorf("message %v, want a document", m["type"])
			continue
		}
		if diff := cmp.Diff([]string{"data", "type"}, keysOf(m)); diff != "" {
			t.Errorf("document message keys (-want +got)\n%s", diff)
		}
		out = append(out, sourceURLOf(t, m["data"]))
	}
	return out
}

func TestWatchStreamsACrawl(t *testing.T) {
	for _, kind := range fxStores {
		t.Run(kind, func(t *testing.T) {
			g := newGatedSite(t, testsite.Options{Pages: 30})
			f := newJobsFixture(t, kind, fxOptions{})
			defer g.open()
			id := f.start(t, "/v2/crawl", `{"url":"`+g.url+`/","sitemap":"skip","limit":8}`)
			path := "/v2/crawl/" + id
			f.waitStatus(t, path, "the home page", func(m map[string]any) bool { return m["completed"] == float64(1) })

			w := dialWatch(t, f.base, path, fxKeyOne)
			if w.proto != fxKeyOne {
				t.Errorf("accepted subprotocol %q, want the key echoed", w.proto)
			}
			first, _, ok := w.next()
			if !ok {
				t.Fatal("closed before the catchup")
			}
			catchup := catchupOf(t, first)
			if catchup["status"] != "scraping" || catchup["total"] != float64(8) || catchup["completed"] != float64(1) {
				t.Errorf("catchup status %v", catchup)
			}
			got := sourceURLs(t, dataOf(t, catchup))
			if diff := cmp.Diff([]string{g.url + "/"}, got); diff != "" {
				t.Errorf("catchup documents (-want +got)\n%s", diff)
			}
			// Let the crawl go on: every other document streams, then done.
			g.open()
			msgs, closed := w.rest()
			if closed.Code != websocket.StatusNormalClosure {
				t.Errorf("close %d %q, want 1000", closed.Code, closed.Reason)
			}
			if len(msgs) == 0 {
				t.Fatal("no message after the catchup")
			}
			if diff := cmp.Diff(map[string]any{"type": "done"}, msgs[len(msgs)-1]); diff != "" {
				t.Errorf("last message (-want +got)\n%s", diff)
			}
			streamed := documentsOf(t, msgs[:len(msgs)-1])
			if len(streamed) == 0 {
				t.Error("no document message")
			}
			got = append(got, streamed...)
			if diff := cmp.Diff(f.docURLs(t, id), got); diff != "" {
				t.Errorf("watched documents differ from the crawl's, in order (-crawl +watched)\n%s", diff)
			}
			if st := f.status(t, path, fxKeyOne); st["status"] != "completed" {
				t.Errorf("done sent while the status is %v", st["status"])
			}

			// Watching the finished crawl: everything in the catchup, then done.
			w = dialWatch(t, f.base, path, fxKeyOne)
			msgs, closed = w.rest()
			if closed.Code != websocket.StatusNormalClosure || len(msgs) != 2 {
				t.Fatalf("finished crawl: close %d, %d messages", closed.Code, len(msgs))
			}
			catchup = catchupOf(t, msgs[0])
			if catchup["status"] != "completed" || catchup["completedAt"] == nil {
				t.Errorf("catchup of a finished crawl %v", catchup)
			}
			if diff := cmp.Diff(got, sourceURLs(t, dataOf(t, catchup))); diff != "" {
				t.Errorf("catchup documents (-want +got)\n%s", diff)
			}
			if diff := cmp.Diff(map[string]any{"type": "done"}, msgs[1]); diff != "" {
				t.Errorf("last message (-want +got)\n%s", diff)
			}

			// The key may come in the Authorization header instead.
			w = dialWatch(t, f.base, path, "", "Authorization", "Bearer "+fxKeyOne)
			if msgs, closed = w.rest(); closed.Code != websocket.StatusNormalClosure || len(msgs) != 2 || w.proto != "" {
				t.Errorf("key in the header: close %d, %d messages, subprotocol %q", closed.Code, len(msgs), w.proto)
			}
		})
	}
}

func TestWatchRefusals(t *testing.T) {
	_, target := serveSite(t, testsite.Options{Pages: 30})
	for _, kind := range fxStores {
		t.Run(kind, func(t *testing.T) {
			f := newJobsFixture(t, kind, fxOptions{})
			id := f.start(t, "/v2/crawl", `{"url":"`+target+`/","limit":2,"sitemap":"skip"}`)
			batch := f.start(t, "/v2/batch/scrape", `{"urls":["`+target+`/about"]}`)
			f.waitDone(t, "/v2/crawl/"+id)
			for _, tc := range []struct {
				name, path, key string
				code            websocket.StatusCode
			}{
				{"bad key", "/v2/crawl/" + id, "fc-wrong", 3000},
				{"another team", "/v2/crawl/" + id, fxKeyTwo, 3003},
				{"unknown id", "/v2/crawl/" + unknownJobID, fxKeyOne, websocket.StatusPolicyViolation},
				{"malformed id", "/v2/crawl/not-a-uuid", fxKeyOne, websocket.StatusPolicyViolation},
				{"a batch on the crawl path", "/v2/crawl/" + batch, fxKeyOne, websocket.StatusPolicyViolation},
				{"a crawl on the batch path", "/v2/batch/scrape/" + id, fxKeyOne, websocket.StatusPolicyViolation},
				{"malformed id on the batch path", "/v2/batch/scrape/nope", fxKeyOne, websocket.StatusPolicyViolation},
			} {
				t.Run(tc.name, func(t *testing.T) {
					w := dialWatch(t, f.base, tc.path, tc.key)
					if w.proto != tc.key {
						t.Errorf("accepted subprotocol %q, want %q", w.proto, tc.key)
					}
					msgs, closed := w.rest()
					if closed.Code != tc.code || len(msgs) != 0 {
						t.Errorf("close %d %q after %v, want %d and no message", closed.Code, closed.Reason, msgs, tc.code)
					}
				})
			}
			// No key at all is an auth failure too.
			w := dialWatch(t, f.base, "/v2/crawl/"+id, "")
			if _, closed := w.rest(); closed.Code != 3000 {
				t.Errorf("no key: close %d, want 3000", closed.Code)
			}
		})
	}
}

func TestWatchBatch(t *testing.T) {
	g := newGatedSite(t, testsite.Options{Pages: 30})
	f := newJobsFixture(t, "sqlite", fxOptions{})
	defer g.open()
	id := f.start(t, "/v2/batch/scrape", `{"urls":["`+g.url+`/","`+g.url+`/about","`+g.url+`/blog/"]}`)
	path := "/v2/batch/scrape/" + id
	f.waitStatus(t, path, "the home page", func(m map[string]any) bool { return m["completed"] == float64(1) })
	w := dialWatch(t, f.base, path, fxKeyOne)
	first, _, ok := w.next()
	if !ok {
		t.Fatal("closed before the catchup")
	}
	catchup := catchupOf(t, first)
	if catchup["status"] != "scraping" || len(dataOf(t, catchup)) != 1 {
		t.Errorf("catchup %v", catchup)
	}
	g.open()
	msgs, closed := w.rest()
	if closed.Code != websocket.StatusNormalClosure || len(msgs) != 3 || msgs[2]["type"] != "done" {
		t.Fatalf("close %d, messages %v", closed.Code, msgs)
	}
	got := append(sourceURLs(t, dataOf(t, catchup)), documentsOf(t, msgs[:2])...)
	if diff := cmp.Diff(f.docURLs(t, id), got); diff != "" {
		t.Errorf("watched documents (-batch +watched)\n%s", diff)
	}
}

func TestWatchCancelledAndFailedJobs(t *testing.T) {
	g := newGatedSite(t, testsite.Options{Pages: 30})
	f := newJobsFixture(t, "sqlite", fxOptions{})
	defer g.open()
	// A crawl cancelled while watched: the watcher ends with an error.
	id := f.start(t, "/v2/crawl", `{"url":"`+g.url+`/","sitemap":"skip","limit":5}`)
	path := "/v2/crawl/" + id
	f.waitStatus(t, path, "the home page", func(m map[string]any) bool { return m["completed"] == float64(1) })
	w := dialWatch(t, f.base, path, fxKeyOne)
	if first, _, ok := w.next(); !ok || catchupOf(t, first)["status"] != "scraping" {
		t.Fatalf("first message %v", first)
	}
	if code, m := f.send(t, http.MethodDelete, path, fxKeyOne, ""); code != 200 {
		t.Fatalf("cancel: %d %v", code, m)
	}
	msgs, closed := w.rest()
	if closed.Code != websocket.StatusNormalClosure || len(msgs) != 1 || msgs[0]["type"] != "error" || msgs[0]["error"] == "" {
		t.Errorf("cancelled: close %d, messages %v", closed.Code, msgs)
	}

	// A failed job: the catchup has the failed form, then its error.
	failed := crawljob.NewJobID()
	now := time.Now().UTC()
	if _, err := f.st.CreateJob(t.Context(), store.Job{ID: failed, TeamID: f.teams[fxKeyOne].ID, Kind: store.JobCrawl,
		URL: g.url + "/", Options: []byte(`{}`), CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	const reason = "The page answered HTTP 502 Bad Gateway."
	if _, err := f.st.SetJobStatus(t.Context(), failed, []string{store.JobScraping}, store.JobFailed, reason); err != nil {
		t.Fatal(err)
	}
	w = dialWatch(t, f.base, "/v2/crawl/"+failed, fxKeyOne)
	msgs, closed = w.rest()
	if closed.Code != websocket.StatusNormalClosure || len(msgs) != 2 {
		t.Fatalf("failed: close %d, messages %v", closed.Code, msgs)
	}
	if st := catchupOf(t, msgs[0]); st["status"] != "failed" || st["success"] != false || st["error"] != reason {
		t.Errorf("catchup of a failed job %v", st)
	}
	if diff := cmp.Diff(map[string]any{"type": "error", "error": reason}, msgs[1]); diff != "" {
		t.Errorf("error message (-want +got)\n%s", diff)
	}
}

func TestWatchWithoutJobs(t *testing.T) {
	t.Parallel()
	s := New(Deps{Scraper: &fakeScraper{}, Auth: fakeAuth{}, Log: testenv.Logger(t)})
	s.SetReady(true)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	for _, p := range []string{"/v2/crawl/" + unknownJobID, "/v2/batch/scrape/" + unknownJobID} {
		_, resp, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(srv.URL, "http")+p,
			&websocket.DialOptions{Subprotocols: []string{goodKey}})
		if err == nil || resp == nil || resp.StatusCode != http.StatusNotImplemented {
			code := 0
			if resp != nil {
				code = resp.StatusCode
			}
			t.Errorf("%s: dial err %v, status %d, want a 501 answer", p, err, code)
		}
	}
}
