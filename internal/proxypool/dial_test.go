package proxypool_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/proxypool"
	"github.com/firegate/firegate/internal/proxypool/proxytest"
)

// one parses a single proxy entry.
func one(t *testing.T, entry string) *proxypool.Proxy {
	t.Helper()
	pool, err := proxypool.Parse(entry, proxypool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return pool.Proxies()[0]
}

// get sends a GET for / over conn to host and returns the body.
func get(t *testing.T, conn net.Conn, host string) string {
	t.Helper()
	defer conn.Close()
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", host)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestDialThroughProxies(t *testing.T) {
	t.Parallel()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") }))
	t.Cleanup(target.Close)
	_, port, _ := net.SplitHostPort(target.Listener.Addr().String())
	named := "localhost:" + port // sent to the proxy as a name
	for _, tc := range []struct {
		name  string
		start func(testing.TB, proxytest.Options) *proxytest.Proxy
		opts  proxytest.Options
		entry func(addr string) string
	}{
		{"connect", proxytest.NewHTTP, proxytest.Options{}, func(a string) string { return "http://" + a }},
		{"connect with credentials", proxytest.NewHTTP, proxytest.Options{User: "alice", Pass: "s3cr:et"}, func(a string) string { return "http://alice:s3cr%3Aet@" + a }},
		{"socks5", proxytest.NewSOCKS5, proxytest.Options{}, func(a string) string { return "socks5://" + a }},
		{"socks5 with credentials", proxytest.NewSOCKS5, proxytest.Options{User: "alice", Pass: "s3cret"}, func(a string) string { return "socks5://alice:s3cret@" + a }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			px := tc.start(t, tc.opts)
			p := one(t, tc.entry(px.Addr()))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			conn, err := p.DialContext(ctx, "tcp", named)
			if err != nil {
				t.Fatal(err)
			}
			if body := get(t, conn, named); body != "hello" {
				t.Errorf("body through the proxy = %q", body)
			}
			if got := px.Targets(); len(got) != 1 || got[0] != named {
				t.Errorf("proxy was asked for %v, want [%s] (the name, unresolved)", got, named)
			}
			if px.Tunnels() != 1 {
				t.Errorf("tunnels = %d", px.Tunnels())
			}
			// The target refuses: the proxy's answer, not its failure.
			_, err = p.DialContext(ctx, "tcp", closedPort(t))
			var te *proxypool.TargetError
			if !errors.As(err, &te) {
				t.Fatalf("dial of a closed target = %v, want a TargetError", err)
			}
			if strings.HasPrefix(tc.name, "socks5") && !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("a refused target should unwrap to ECONNREFUSED: %v", err)
			}
			if tc.opts.User == "" {
				return
			}
			// Wrong credentials: the proxy's failure, masked, and the
			// proxy is skipped for a while.
			pool, _ := proxypool.Parse(strings.Replace(tc.entry(px.Addr()), "alice:", "alice:wrong", 1)+",http://other:1", proxypool.Options{})
			bad := pool.Proxies()[0]
			_, err = bad.DialContext(ctx, "tcp", named)
			var pe *proxypool.ProxyError
			if !errors.As(err, &pe) {
				t.Fatalf("wrong credentials = %v, want a ProxyError", err)
			}
			if strings.Contains(err.Error(), "alice") || strings.Contains(err.Error(), "s3cr") || strings.Contains(err.Error(), "wrong") {
				t.Errorf("error shows credentials: %v", err)
			}
			if px.Denied() != 1 {
				t.Errorf("denied = %d", px.Denied())
			}
			for range 2 {
				if p, _ := pool.Pick(proxypool.Choice{}); p == bad {
					t.Errorf("a proxy that refused the credentials was picked again")
				}
			}
		})
	}
}

func TestDialFailureMarksProxy(t *testing.T) {
	t.Parallel()
	pool, err := proxypool.Parse("http://"+closedPort(t)+",http://"+closedPort(t), proxypool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := pool.Pick(proxypool.Choice{})
	_, err = first.DialContext(context.Background(), "tcp", "example.com:443")
	if _, ok := errors.AsType[*proxypool.ProxyError](err); !ok {
		t.Fatalf("dial of a proxy that is not there = %v, want a ProxyError", err)
	}
	for range 4 {
		if p, _ := pool.Pick(proxypool.Choice{}); p == first {
			t.Fatalf("a proxy that just failed to connect was picked again")
		}
	}
	// A target refused by a working proxy does not mark it.
	px := proxytest.NewHTTP(t, proxytest.Options{})
	pool2, _ := proxypool.Parse("http://"+px.Addr()+",http://"+closedPort(t), proxypool.Options{})
	working := pool2.Proxies()[0]
	if _, err := working.DialContext(context.Background(), "tcp", closedPort(t)); err == nil {
		t.Fatal("dial of a closed target succeeded")
	}
	picked := 0
	for range 4 {
		if p, _ := pool2.Pick(proxypool.Choice{}); p == working {
			picked++
		}
	}
	if picked != 2 {
		t.Errorf("a proxy whose target refused was taken for failed: picked %d of 4", picked)
	}
}
