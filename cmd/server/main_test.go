package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/apikey"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/testenv"
)

func TestFirstStartCreatesOneKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	cfg, err := loadConfig(env(map[string]string{"DATA_DIR": dir}))
	if err != nil {
		t.Fatal(err)
	}
	log := testenv.Logger(t)
	st, err := openStore(ctx, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	var out bytes.Buffer
	if err := bootstrapKeys(ctx, cfg, st, log, &out); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "api-key")
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", info.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	key := strings.TrimSpace(string(b))
	if !apikey.WellFormed(key) || !strings.Contains(out.String(), key) {
		t.Fatalf("key %q not printed: %s", key, out.String())
	}
	if _, _, err := st.APIKeyByHash(ctx, apikey.Hash(key)); err != nil {
		t.Fatalf("printed key is not stored: %v", err)
	}

	out.Reset()
	if err := bootstrapKeys(ctx, cfg, st, log, &out); err != nil {
		t.Fatal(err)
	}
	if n, _ := st.CountAPIKeys(ctx); n != 1 || out.Len() != 0 {
		t.Errorf("second start: %d keys, printed %q", n, out.String())
	}
}

func TestBootstrapKeyIsEnsured(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg, _ := loadConfig(env(map[string]string{"DATA_DIR": t.TempDir(), "BOOTSTRAP_API_KEY": "compose-key-1234"}))
	log := testenv.Logger(t)
	st, err := openStore(ctx, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for range 2 { // idempotent across restarts
		var out bytes.Buffer
		if err := bootstrapKeys(ctx, cfg, st, log, &out); err != nil {
			t.Fatal(err)
		}
		if out.Len() != 0 {
			t.Errorf("no key should be generated when BOOTSTRAP_API_KEY is set: %q", out.String())
		}
	}
	if _, team, err := st.APIKeyByHash(ctx, apikey.Hash("compose-key-1234")); err != nil || team.Name != defaultTeam {
		t.Fatalf("bootstrap key: team %+v err %v", team, err)
	}
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "api-key")); !os.IsNotExist(err) {
		t.Errorf("api-key file written although a key existed: %v", err)
	}
}

// TestKeysCommands runs the key sub-commands on both stores.
func TestKeysCommands(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := map[string]string{"DATA_DIR": t.TempDir()}
			if name == "postgres" {
				e["DATABASE_URL"] = testenv.PostgresURL(t)
			}
			ctx := context.Background()
			team := fmt.Sprintf("team-%d", time.Now().UnixNano())
			var out bytes.Buffer
			if err := run(ctx, []string{"keys", "create", "--team", team}, env(e), &out, io.Discard); err != nil {
				t.Fatal(err)
			}
			key := strings.TrimSpace(out.String())
			if !apikey.WellFormed(key) {
				t.Fatalf("printed %q", key)
			}
			out.Reset()
			if err := run(ctx, []string{"keys", "list", "--team", team}, env(e), &out, io.Discard); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(out.String(), key) || !strings.Contains(out.String(), apikey.Prefix(key)) || !strings.Contains(out.String(), "active") {
				t.Fatalf("list must show the prefix, never the key: %q", out.String())
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "ID PREFIX CREATED STATE" {
				t.Fatalf("list: want a header row and one key row: %q", out.String())
			}
			id := strings.Fields(lines[1])[0]
			if err := run(ctx, []string{"keys", "revoke", "--id", id}, env(e), io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
			out.Reset()
			run(ctx, []string{"keys", "list", "--team", team}, env(e), &out, io.Discard)
			if !strings.Contains(out.String(), "revoked") {
				t.Errorf("after revoke: %q", out.String())
			}
		})
	}
}

// TestServeShutsDownGracefully starts the server, holds a request in
// flight, cancels the run context and checks the request still completes.
func TestServeShutsDownGracefully(t *testing.T) {
	t.Parallel()
	slow := make(chan struct{})
	arrived := make(chan struct{}, 1)
	site := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-slow
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><body><h1>Done</h1></body></html>")
	})}
	sln, _ := net.Listen("tcp", "127.0.0.1:0")
	go site.Serve(sln)
	defer site.Close()

	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	e := map[string]string{"HOST": "127.0.0.1", "PORT": fmt.Sprint(port), "DATA_DIR": t.TempDir(),
		"AUTH_MODE": "off", "ALLOW_PRIVATE_TARGETS": "true", "SHUTDOWN_TIMEOUT": "10s"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, env(e), io.Discard, io.Discard) }()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHealthy(t, base)

	type result struct {
		status int
		body   string
		err    error
	}
	res := make(chan result, 1)
	go func() {
		resp, err := http.Post(base+"/v2/scrape", "application/json",
			strings.NewReader(`{"url":"http://`+sln.Addr().String()+`/"}`))
		if err != nil {
			res <- result{err: err}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		res <- result{status: resp.StatusCode, body: string(b)}
	}()
	select {
	case <-arrived: // the scrape is now waiting on the site
	case r := <-res:
		t.Fatalf("the scrape ended before it reached the site: %+v", r)
	case <-time.After(30 * time.Second):
		t.Fatal("the scrape did not reach the site")
	}
	cancel()
	// Shutdown has begun once the server stops accepting connections; the
	// scrape in flight must still complete.
	waitRefused(t, port)
	close(slow)
	r := <-res
	if r.err != nil || r.status != 200 || !strings.Contains(r.body, "# Done") {
		t.Fatalf("in-flight request was not drained: %+v", r)
	}
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
}

func waitHealthy(t *testing.T, base string) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, func() bool {
		resp, err := http.Get(base + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}, "server not healthy")
}

// waitRefused waits until the server on port no longer accepts
// connections, as it stops at the start of a shutdown.
func waitRefused(t *testing.T, port int) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			return true
		}
		c.Close()
		return false
	}, "the server still accepts connections after the cancel")
}

func TestCreditsAndLimitsCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := map[string]string{"DATA_DIR": t.TempDir()}
	if err := run(ctx, []string{"keys", "create", "--team", "acme", "--credits", "5"}, env(e), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(ctx, []string{"credits", "add", "--team", "acme", "--amount", "3"}, env(e), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out.String()); got != "team acme: 8 of 8 credits remaining" {
		t.Errorf("credits add: %q", got)
	}
	out.Reset()
	if err := run(ctx, []string{"credits", "unlimited", "--team", "acme"}, env(e), &out, io.Discard); err != nil || !strings.Contains(out.String(), "unlimited") {
		t.Errorf("credits unlimited: %v %q", err, out.String())
	}
	// A team that does not exist is named as such, not by the store's
	// error (issue 32).
	for _, args := range [][]string{{"credits", "show", "--team", "nobody"}, {"keys", "list", "--team", "nobody"},
		{"limits", "set", "--team", "nobody", "--zdr"}} {
		err := run(ctx, args, env(e), io.Discard, io.Discard)
		if err == nil || err.Error() != `team "nobody" does not exist (a team is created with its first key: server keys create --team nobody)` {
			t.Errorf("%v: %v", args, err)
		}
	}
	if err := run(ctx, []string{"limits", "set", "--team", "acme", "--concurrency", "2", "--zdr"}, env(e), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	cfg, _ := loadConfig(env(e))
	st, team, err := openTeam(ctx, cfg, testenv.Logger(t), "acme")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, err := st.TeamLimits(ctx, team.ID)
	if err != nil || l.ConcurrencyLimit == nil || *l.ConcurrencyLimit != 2 || l.RateMultiplier != nil || !l.ZeroDataRetention || l.ZeroDataRetentionForced || l.Catalog || l.ThirdPartyTerms {
		t.Errorf("limits: %+v %v", l, err)
	}
	if err := run(ctx, []string{"limits", "set", "--team", "acme", "--zdr-forced"}, env(e), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if l, err = st.TeamLimits(ctx, team.ID); err != nil || !l.ZeroDataRetention || !l.ZeroDataRetentionForced || l.ConcurrencyLimit != nil {
		t.Errorf("limits with zdr forced: %+v %v", l, err)
	}
	if err := run(ctx, []string{"limits", "set", "--team", "acme", "--catalog", "--accept-third-party-terms"}, env(e), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if l, err = st.TeamLimits(ctx, team.ID); err != nil || !l.Catalog || !l.ThirdPartyTerms || l.ZeroDataRetention || l.ZeroDataRetentionForced || l.ConcurrencyLimit != nil {
		t.Errorf("limits with catalog and terms: %+v %v", l, err)
	}
}

// TestServeRefusesABrokenSandbox: with INTERACT_RUNTIMES set, a sandbox
// that cannot run (here node_modules without playwright-core) stops the
// server before it listens, naming the variable.
func TestServeRefusesABrokenSandbox(t *testing.T) {
	t.Parallel()
	e := map[string]string{"HOST": "127.0.0.1", "PORT": "0", "DATA_DIR": t.TempDir(), "AUTH_MODE": "off",
		"INTERACT_RUNTIMES": "node,python", "INTERACT_NODE_MODULES": t.TempDir()}
	err := run(t.Context(), nil, env(e), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "INTERACT_RUNTIMES=node,python: sandbox: unavailable:") || !strings.Contains(err.Error(), "has no playwright-core") {
		t.Fatalf("run = %v", err)
	}
}

// TestServeDrainsQueueJobs: a batch page being scraped when the server is
// told to stop (SIGTERM: run's context cancelled) gets the drain time to
// finish: its document is kept, and the server started again on the same
// data neither scrapes it a second time nor loses it.
func TestServeDrainsQueueJobs(t *testing.T) {
	t.Parallel()
	slow := make(chan struct{})
	arrived := make(chan struct{}, 1)
	var hits atomic.Int32
	site := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/page" {
			http.NotFound(w, r)
			return
		}
		hits.Add(1)
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-slow
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><body><h1>Drained</h1></body></html>")
	})}
	sln, _ := net.Listen("tcp", "127.0.0.1:0")
	go site.Serve(sln)
	defer site.Close()

	dataDir := t.TempDir()
	start := func(ctx context.Context) (string, int, chan error) {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		e := map[string]string{"HOST": "127.0.0.1", "PORT": fmt.Sprint(port), "DATA_DIR": dataDir,
			"AUTH_MODE": "off", "ALLOW_PRIVATE_TARGETS": "true", "SHUTDOWN_TIMEOUT": "20s", "QUEUE_WORKERS": "2", "BROWSER": "off"}
		done := make(chan error, 1)
		go func() { done <- run(ctx, nil, env(e), io.Discard, io.Discard) }()
		base := fmt.Sprintf("http://127.0.0.1:%d", port)
		waitHealthy(t, base)
		return base, port, done
	}
	ctx, cancel := context.WithCancel(context.Background())
	base, port, done := start(ctx)
	resp, err := http.Post(base+"/v2/batch/scrape", "application/json",
		strings.NewReader(`{"urls":["http://`+sln.Addr().String()+`/page"],"formats":["markdown"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var started struct {
		ID string `json:"id"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&started)
	resp.Body.Close()
	if started.ID == "" {
		t.Fatalf("batch scrape: %d %v", resp.StatusCode, err)
	}
	select {
	case <-arrived: // the page job is now waiting on the site
	case <-time.After(30 * time.Second):
		t.Fatal("the page job did not reach the site")
	}
	cancel()
	waitRefused(t, port) // shutdown has begun
	close(slow)
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}

	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	base, _, done = start(ctx2)
	var st struct {
		Status string `json:"status"`
		Data   []struct {
			Markdown string `json:"markdown"`
		} `json:"data"`
	}
	testenv.WaitFor(30*time.Second, func() bool {
		resp, err := http.Get(base + "/v2/batch/scrape/" + started.ID)
		if err != nil {
			t.Fatal(err)
		}
		_ = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		return st.Status == "completed"
	})
	if st.Status != "completed" || len(st.Data) != 1 || !strings.Contains(st.Data[0].Markdown, "Drained") || hits.Load() != 1 {
		t.Errorf("after the restart: status %q, %d documents %+v, the site asked %d times; want completed, the drained page's document, asked once",
			st.Status, len(st.Data), st.Data, hits.Load())
	}
	cancel2()
	if err := <-done; err != nil {
		t.Fatalf("second run: %v", err)
	}
}

// TestServeBindsFirst: a second server on a busy port fails on the bind
// before it touches anything: no store is opened (DATA_DIR stays empty),
// so no migration, queue worker or monitor scheduler starts.
func TestServeBindsFirst(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dataDir := filepath.Join(t.TempDir(), "data")
	e := map[string]string{"HOST": "127.0.0.1", "PORT": fmt.Sprint(busy.Addr().(*net.TCPAddr).Port), "DATA_DIR": dataDir, "BROWSER": "off"}
	err = run(context.Background(), nil, env(e), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "listen") || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("run on a busy port: %v", err)
	}
	if entries, err := os.ReadDir(dataDir); !os.IsNotExist(err) {
		t.Errorf("DATA_DIR was touched before the bind failed: %v %v", entries, err)
	}
}

// TestFeedbackList: feedback list prints what teams rated, newest first,
// every team's or one team's.
func TestFeedbackList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := map[string]string{"DATA_DIR": t.TempDir()}
	for _, team := range []string{"acme", "zeta"} {
		if err := run(ctx, []string{"keys", "create", "--team", team}, env(e), io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	cfg, _ := loadConfig(env(e))
	st, acme, err := openTeam(ctx, cfg, testenv.Logger(t), "acme")
	if err != nil {
		t.Fatal(err)
	}
	zeta, err := st.TeamByName(ctx, "zeta")
	if err != nil {
		t.Fatal(err)
	}
	fs := feedbackStore(st)
	for _, f := range []store.Feedback{
		{TeamID: acme.ID, Endpoint: "scrape", JobID: "0190b7a0-0000-7000-8000-000000000001", Rating: "bad", Note: "the table\nis missing",
			Details: json.RawMessage(`{"issues":["missing_table"]}`), CreatedAt: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)},
		{TeamID: zeta.ID, Endpoint: "crawl", JobID: "0190b7a0-0000-7000-8000-000000000002", Rating: "good", CreatedAt: time.Date(2026, 5, 2, 10, 0, 0, 0, time.UTC)},
	} {
		if _, _, err := fs.AddFeedback(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	var out bytes.Buffer
	if err := run(ctx, []string{"feedback", "list"}, env(e), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "CREATED") || !strings.Contains(lines[1], "zeta") ||
		!strings.Contains(lines[2], "acme") || !strings.Contains(lines[2], "the table is missing") || !strings.Contains(lines[2], `{"issues":["missing_table"]}`) {
		t.Errorf("feedback list:\n%s", out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"feedback", "list", "--team", "acme"}, env(e), &out, io.Discard); err != nil || strings.Count(out.String(), "\n") != 2 || strings.Contains(out.String(), "zeta") {
		t.Errorf("feedback list --team acme: %v\n%s", err, out.String())
	}
	if err := run(ctx, []string{"feedback", "list", "--team", "nobody"}, env(e), io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("an unknown team: %v", err)
	}
}
