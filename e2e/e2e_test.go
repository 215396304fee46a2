// Package e2e starts the real server binary, as a user would, and drives it
// over HTTP: with curl-like requests and with the official JavaScript SDK.
package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/testenv"
)

const testKey = "fc-e2e0000000000000000000000000000000"

// article is the page the SDK scrapes. It reflects the X-Test and
// Accept-Language request headers into meta tags so the test can see them.
func article(r *http.Request) string {
	return `<!doctype html><html lang="en"><head><title>The Lighthouse Keeper</title>
<meta name="description" content="A story about a lamp.">
<meta name="x-test" content="` + html.EscapeString(r.Header.Get("X-Test")) + `">
<meta name="x-accept-language" content="` + html.EscapeString(r.Header.Get("Accept-Language")) + `">
<script>var tracker = 1;</script></head><body>
<header><nav><a href="/">Home</a> <a href="/about">About</a></nav></header>
<main><article><h1>The Lighthouse Keeper</h1>
<p>For forty years she kept the lamp burning through every storm that came off the grey water.</p>
<p>Ships passed in the night and never knew her name, but they knew her light.</p>
<p>Tags: <a class="tag" href="/tags/sea">sea</a> <a class="tag" href="/tags/night">night</a></p>
<div class="ad">BUY NOW</div></article></main>
<aside class="newsletter">Subscribe to our newsletter</aside>
<footer>© 2026 Coastal Stories</footer></body></html>`
}

func targetSite(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/article", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, article(r))
	})
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "plain words\n")
	})
	mux.HandleFunc("/form", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<html><head><title>Search</title></head><body><form onsubmit="event.preventDefault();document.getElementById('out').textContent='You searched for '+this.q.value">
<input id="q" name="q"></form><p id="out"></p></body></html>`)
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "<html><body><h1>Not here</h1></body></html>", http.StatusNotFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// server is a running server binary.
type server struct {
	url  string
	bin  string
	env  []string
	cmd  *exec.Cmd
	logs *strings.Builder
}

// cli runs a sub-command of the server binary against the server's store.
func (s *server) cli(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(s.bin, args...)
	cmd.Env = s.env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("server %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// builtServer is ./cmd/server built once for the whole test binary: each
// build links a ~100 MB binary (3-5 s on a quiet machine, 20 s and more
// on a loaded one), and the tests start the server two dozen times.
var builtServer struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// TestMain removes the shared server binary when the tests are done.
func TestMain(m *testing.M) {
	code := m.Run()
	if builtServer.dir != "" {
		os.RemoveAll(builtServer.dir)
	}
	os.Exit(code)
}

// serverBinary builds ./cmd/server on first use and returns its path.
func serverBinary(t *testing.T) string {
	t.Helper()
	builtServer.once.Do(func() {
		dir, err := os.MkdirTemp("", "firegate-e2e-")
		if err != nil {
			builtServer.err = err
			return
		}
		builtServer.dir, builtServer.bin = dir, filepath.Join(dir, "server")
		build := exec.Command("go", "build", "-o", builtServer.bin, "./cmd/server")
		build.Dir = ".."
		if out, err := build.CombinedOutput(); err != nil {
			builtServer.err = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if builtServer.err != nil {
		t.Fatal(builtServer.err)
	}
	return builtServer.bin
}

// startServer runs the server binary on a free port with env extra.
func startServer(t *testing.T, extra ...string) *server {
	t.Helper()
	bin := serverBinary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()

	env := append(os.Environ(),
		"HOST=127.0.0.1",
		fmt.Sprintf("PORT=%d", port),
		"DATA_DIR="+t.TempDir(),
		"DATABASE_URL=",
		"ALLOW_PRIVATE_TARGETS=true",
		"BOOTSTRAP_API_KEY="+testKey,
		"LOG_FORMAT=text",
	)
	env = append(env, extra...)
	cmd := exec.Command(bin)
	cmd.Env = env
	logs := &strings.Builder{}
	stderr, _ := cmd.StderrPipe()
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs.WriteString(sc.Text() + "\n")
		}
		close(done)
	}()
	s := &server{url: fmt.Sprintf("http://127.0.0.1:%d", port), bin: bin, env: env, cmd: cmd, logs: logs}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		<-done
		if t.Failed() {
			t.Logf("server logs:\n%s", logs.String())
		}
	})
	if !testenv.WaitFor(30*time.Second, func() bool {
		resp, err := http.Get(s.url + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}) {
		t.Fatalf("server did not become healthy\n%s", logs.String())
	}
	return s
}

// post sends a scrape body and decodes the answer into out.
func post(t *testing.T, srv *server, body string, out any) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.url+"/v2/scrape", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}

func TestScrapeOverHTTP(t *testing.T) {
	site := targetSite(t)
	srv := startServer(t)

	body := `{"url":"` + site.URL + `/article","formats":["markdown","links"]}`
	var got struct {
		Success bool `json:"success"`
		Data    struct {
			Markdown string         `json:"markdown"`
			Links    []string       `json:"links"`
			Metadata map[string]any `json:"metadata"`
		} `json:"data"`
	}
	if status := post(t, srv, body, &got); status != 200 || !got.Success {
		t.Fatalf("status %d success %v", status, got.Success)
	}
	if !strings.Contains(got.Data.Markdown, "# The Lighthouse Keeper") || strings.Contains(got.Data.Markdown, "Coastal Stories") {
		t.Errorf("markdown:\n%s", got.Data.Markdown)
	}
	if got.Data.Metadata["url"] != site.URL+"/article" || got.Data.Metadata["cacheState"] != "miss" {
		t.Errorf("metadata = %v", got.Data.Metadata)
	}

	// The same request again is served from the cache.
	if status := post(t, srv, body, &got); status != 200 || got.Data.Metadata["cacheState"] != "hit" || got.Data.Metadata["cachedAt"] == nil {
		t.Errorf("second scrape: %d %v", status, got.Data.Metadata)
	}
	// Lockdown never fetches; a page never scraped is a 404 with the contract's code.
	var e struct {
		Success bool   `json:"success"`
		Code    string `json:"code"`
	}
	if status := post(t, srv, `{"url":"`+site.URL+`/text","lockdown":true}`, &e); status != 404 || e.Code != "SCRAPE_LOCKDOWN_CACHE_MISS" {
		t.Errorf("lockdown miss: %d %+v", status, e)
	}
}

// sdkNode returns the node binary for a test of an npm package installed
// under sdk/node_modules (pkg); a missing package or node skips the test,
// or fails it under REQUIRE_INTEGRATION=1.
func sdkNode(t *testing.T, pkg string) string {
	t.Helper()
	missing := func(msg string) {
		if os.Getenv("REQUIRE_INTEGRATION") == "1" {
			t.Fatal(msg + " (REQUIRE_INTEGRATION=1, not skipping)")
		}
		t.Skip(msg)
	}
	if _, err := os.Stat("sdk/node_modules/" + pkg); err != nil {
		missing(pkg + " is not installed: run (cd e2e/sdk && npm install --engine-strict=false)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node not found")
	}
	return node
}

// TestJavaScriptSDK runs the official SDK's scrape() against the server.
func TestJavaScriptSDK(t *testing.T) {
	node := sdkNode(t, "@mendable/firecrawl-js")
	site := targetSite(t)
	srv := startServer(t)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	limited := srv.cli(t, "keys", "create", "--team", "sdk-limited", "--credits", "100")
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "scrape.test.mjs")
	cmd.Dir = "sdk"
	cmd.Env = append(os.Environ(),
		"API_URL="+srv.url,
		"API_KEY="+testKey,
		"LIMITED_KEY="+limited,
		"PAGE_URL="+site.URL+"/article",
		"TEXT_URL="+site.URL+"/text",
		"MISSING_URL="+site.URL+"/missing",
		"FORM_URL="+site.URL+"/form",
	)
	if chromePath() != "" {
		cmd.Env = append(cmd.Env, "HAS_BROWSER=1")
	} else if os.Getenv("REQUIRE_INTEGRATION") == "1" {
		t.Fatal("chromium is not installed")
	}
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("SDK test failed: %v", err)
	}
}

// chromePath finds the Chrome the server will find.
func chromePath() string {
	if p := os.Getenv("CHROME_PATH"); p != "" {
		return p
	}
	for _, name := range []string{"/usr/lib/chromium/chromium-headless-shell", "chromium-headless-shell", "headless-shell", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}
