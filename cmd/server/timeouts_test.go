package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// startServer runs the server on a free port with the settings of e (plus
// a private data dir) and returns its base URL; it stops with the test.
func startServer(t *testing.T, e map[string]string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	e["HOST"], e["PORT"] = "127.0.0.1", fmt.Sprint(port)
	if e["DATA_DIR"] == "" {
		e["DATA_DIR"] = t.TempDir()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, env(e), io.Discard, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHealthy(t, base)
	return base
}

// TestSlowClientsAreCutOff talks raw TCP to the real server: a client that
// sends its headers and then trickles the body gets 408 and a closed
// connection at HTTP_READ_TIMEOUT; one that never finishes its headers is
// dropped at HTTP_READ_HEADER_TIMEOUT; a scrape that runs longer than both
// is not cut.
func TestSlowClientsAreCutOff(t *testing.T) {
	t.Parallel()
	site := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A scrape longer than both timeouts: the duration is the test.
		time.Sleep(2500 * time.Millisecond)
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><body><h1>Slow but fine</h1></body></html>")
	})}
	sln, _ := net.Listen("tcp", "127.0.0.1:0")
	go site.Serve(sln)
	defer site.Close()
	base := startServer(t, map[string]string{"AUTH_MODE": "off", "ALLOW_PRIVATE_TARGETS": "true", "BROWSER": "off",
		"QUEUE_WORKERS": "0", "HTTP_READ_HEADER_TIMEOUT": "1s", "HTTP_READ_TIMEOUT": "1s", "HTTP_IDLE_TIMEOUT": "2s"})
	addr := strings.TrimPrefix(base, "http://")

	t.Run("slow body", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		start := time.Now()
		fmt.Fprintf(c, "POST /v2/scrape HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{")
		stop := make(chan struct{})
		defer close(stop)
		go func() { // one byte every 200 ms: 40 s for the whole body
			for {
				select {
				case <-stop:
					return
				case <-time.After(200 * time.Millisecond):
				}
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		}()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("no response after %v: %v", time.Since(start), err)
		}
		body, _ := io.ReadAll(resp.Body)
		took := time.Since(start)
		if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), `"code":"REQUEST_BODY_TIMEOUT"`) {
			t.Fatalf("slow body: %d %s", resp.StatusCode, body)
		}
		if took < 900*time.Millisecond || took > 3*time.Second {
			t.Errorf("cut off after %v, want about 1s", took)
		}
		if n, err := c.Read(make([]byte, 1)); err == nil {
			t.Errorf("connection still open after the 408 (read %d bytes)", n)
		}
	})

	t.Run("slow headers", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		start := time.Now()
		fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: x\r\n")
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = io.ReadAll(c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("connection with unfinished headers still open after 10s")
		}
		if took := time.Since(start); took < 900*time.Millisecond || took > 3*time.Second {
			t.Errorf("dropped after %v, want about 1s", took)
		}
	})

	t.Run("long scrape is not cut", func(t *testing.T) {
		resp, err := http.Post(base+"/v2/scrape", "application/json", strings.NewReader(`{"url":"http://`+sln.Addr().String()+`/"}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), "Slow but fine") {
			t.Fatalf("scrape longer than the read timeouts: %d %s", resp.StatusCode, b)
		}
	})
}
