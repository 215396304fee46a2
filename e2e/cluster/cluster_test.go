// Package cluster runs the server binary as several processes sharing one
// database, as a deployment with API and worker replicas does, and checks
// what the queue promises: a page whose worker dies is finished by another,
// a restarted server resumes its crawls, and work spreads over workers.
package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/firegate/firegate/internal/crawl/testsite"
	"github.com/firegate/firegate/internal/testenv"
)

const testKey = "fc-cluster000000000000000000000000000"

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds cmd/server once per test run.
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "firegate-cluster")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "server")
		out, err := exec.Command("go", "build", "-o", binPath, "../../cmd/server").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// database returns a DATABASE_URL whose connections use a fresh schema,
// dropped when the test ends.
func database(t testing.TB) string {
	t.Helper()
	base := testenv.PostgresURL(t)
	schema := "cluster_" + strings.ToLower(rand.Text())
	conn, err := pgx.Connect(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(context.Background(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	_ = conn.Close(context.Background())
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), base)
		if err != nil {
			return
		}
		_, _ = conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		_ = conn.Close(context.Background())
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema
}

// proc is one running server process.
type proc struct {
	cmd  *exec.Cmd
	url  string
	logs *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// start runs the binary with args and env (on top of the test defaults; an
// empty value unsets a default) and waits for /health.
func start(t testing.TB, env map[string]string, args ...string) *proc {
	t.Helper()
	port := freePort(t)
	vars := map[string]string{
		"HOST": "127.0.0.1", "PORT": fmt.Sprint(port), "BOOTSTRAP_API_KEY": testKey,
		"ALLOW_PRIVATE_TARGETS": "true", "BROWSER": "off", "LOG_FORMAT": "text", "LOG_LEVEL": "info",
		"JOB_TIMEOUT": "5s", "JOB_RESCUE_AFTER": "6s", "SHUTDOWN_TIMEOUT": "3s", "TEAM_CONCURRENCY_LIMIT": "0",
	}
	for k, v := range env {
		vars[k] = v
		if v == "" {
			delete(vars, k) // unset: the server's default
		}
	}
	cmd := exec.Command(binary(t), args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, url: fmt.Sprintf("http://127.0.0.1:%d", port), logs: logs}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("logs of %v:\n%s", args, tail(logs.String(), 4000))
		}
	})
	if !testenv.WaitFor(30*time.Second, func() bool {
		resp, err := http.Get(p.url + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}) {
		t.Fatalf("server %v did not become healthy:\n%s", args, logs.String())
	}
	return p
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// kill ends the process at once, as a crashed machine would.
func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
}

// stop ends the process gracefully (SIGTERM) and waits.
func (p *proc) stop(t testing.TB) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Errorf("server did not stop within 20s")
		p.kill()
	}
}

func call(t testing.TB, method, url, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, url, err, b)
		}
	}
	return resp.StatusCode
}

type status struct {
	Success   bool   `json:"success"`
	Status    string `json:"status"`
	Total     int    `json:"total"`
	Completed int    `json:"completed"`
	Next      string `json:"next"`
	Data      []struct {
		Metadata struct {
			SourceURL string `json:"sourceURL"`
		} `json:"metadata"`
	} `json:"data"`
}

// startCrawl starts a crawl of site through api and returns its id.
func startCrawl(t testing.TB, api *proc, body string) string {
	t.Helper()
	var out struct {
		Success bool   `json:"success"`
		ID      string `json:"id"`
		Error   string `json:"error"`
		Details any    `json:"details"`
	}
	if code := call(t, http.MethodPost, api.url+"/v2/crawl", body, &out); code != 200 || !out.Success {
		t.Fatalf("start crawl: %d %+v", code, out)
	}
	return out.ID
}

// poll reads the crawl's status (first page only).
func poll(t testing.TB, api *proc, id string) status {
	t.Helper()
	var st status
	if code := call(t, http.MethodGet, api.url+"/v2/crawl/"+id+"?limit=1", "", &st); code != 200 {
		t.Fatalf("status: %d", code)
	}
	return st
}

// waitDone polls until the crawl leaves scraping.
func waitDone(t testing.TB, api *proc, id string, timeout time.Duration) status {
	t.Helper()
	var st status
	if !testenv.WaitFor(timeout, func() bool {
		st = poll(t, api, id)
		return st.Status != "scraping"
	}) {
		t.Fatalf("crawl still scraping after %v: %d/%d", timeout, st.Completed, st.Total)
	}
	return st
}

// sources lists every document's source URL, following next.
func sources(t testing.TB, api *proc, id string) []string {
	t.Helper()
	var out []string
	url := api.url + "/v2/crawl/" + id + "?limit=200"
	for url != "" {
		var st status
		if code := call(t, http.MethodGet, url, "", &st); code != 200 {
			t.Fatalf("status page: %d", code)
		}
		for _, d := range st.Data {
			out = append(out, d.Metadata.SourceURL)
		}
		url = st.Next
	}
	return out
}

// checkExact asserts the crawl found every expected page once.
func checkExact(t testing.TB, site *testsite.Site, got []string) {
	t.Helper()
	spec := testsite.Spec{}
	want := site.Expect(spec).Pages
	seen := map[string]int{}
	var ids []string
	for _, u := range got {
		id := site.Identity(spec, u)
		seen[id]++
		if seen[id] == 1 {
			ids = append(ids, id)
		}
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("%s is in the results %d times", id, n)
		}
	}
	sort.Strings(ids)
	if !slices.Equal(ids, want) {
		var missing []string
		for _, w := range want {
			if seen[w] == 0 {
				missing = append(missing, w)
			}
		}
		t.Errorf("%d pages, want %d; missing %v", len(ids), len(want), missing)
	}
}

// TestWorkerKilledMidCrawl: an API replica without workers, worker A
// crawling, A killed (SIGKILL) mid-crawl, worker B started: B finishes the
// crawl, including the pages A held when it died, with no page twice.
func TestWorkerKilledMidCrawl(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 150, LinkDelay: 40 * time.Millisecond})
	target := httptest.NewServer(site)
	t.Cleanup(target.Close)
	db := database(t)
	common := map[string]string{"DATABASE_URL": db}
	api := start(t, merge(common, map[string]string{"QUEUE_WORKERS": "0"}))
	a := start(t, merge(common, map[string]string{"QUEUE_WORKERS": "8"}), "worker")

	id := startCrawl(t, api, `{"url":"`+target.URL+`/","limit":1000}`)
	waitProgress(t, api, id, 30)
	a.kill()
	b := start(t, merge(common, map[string]string{"QUEUE_WORKERS": "8"}), "worker")
	st := waitDone(t, api, id, 90*time.Second)
	if st.Status != "completed" {
		t.Fatalf("status %s", st.Status)
	}
	checkExact(t, site, sources(t, api, id))
	if !strings.Contains(b.logs.String(), "job completed") {
		t.Errorf("worker B did not complete the crawl")
	}
}

// TestServerRestartMidCrawl: the one-process default on the embedded store
// stops (SIGTERM) mid-crawl and starts again on the same data directory;
// the crawl resumes and completes exactly.
func TestServerRestartMidCrawl(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 120, LinkDelay: 60 * time.Millisecond})
	target := httptest.NewServer(site)
	t.Cleanup(target.Close)
	env := map[string]string{"DATA_DIR": t.TempDir(), "QUEUE_WORKERS": "8"}
	first := start(t, env)
	id := startCrawl(t, first, `{"url":"`+target.URL+`/","limit":1000}`)
	waitProgress(t, first, id, 20)
	first.stop(t)
	second := start(t, env)
	st := waitDone(t, second, id, 90*time.Second)
	if st.Status != "completed" {
		t.Fatalf("status %s", st.Status)
	}
	checkExact(t, site, sources(t, second, id))
	if strings.Contains(first.logs.String(), "job completed") || !strings.Contains(second.logs.String(), "job completed") {
		t.Errorf("the restarted server did not finish the crawl")
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// BenchmarkWorkers crawls a site of slow pages (I/O bound) with one and
// with two worker processes of 8 slots each, reporting pages per second:
// two must be faster, showing that pages spread over workers.
func BenchmarkWorkers(b *testing.B) {
	site := testsite.New(testsite.Options{Pages: 300, LinkDelay: 100 * time.Millisecond})
	target := httptest.NewServer(site)
	b.Cleanup(target.Close)
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			db := database(b)
			common := map[string]string{"DATABASE_URL": db}
			api := start(b, merge(common, map[string]string{"QUEUE_WORKERS": "0"}))
			for range n {
				start(b, merge(common, map[string]string{"QUEUE_WORKERS": "8"}), "worker")
			}
			pages := 0
			b.ResetTimer()
			begin := time.Now()
			for range b.N {
				id := startCrawl(b, api, `{"url":"`+target.URL+`/","limit":1000,"sitemap":"skip","scrapeOptions":{"maxAge":0}}`)
				st := waitDone(b, api, id, 5*time.Minute)
				pages += st.Completed
			}
			b.ReportMetric(float64(pages)/time.Since(begin).Seconds(), "pages/s")
		})
	}
}
