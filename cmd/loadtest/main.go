// Command loadtest drives a running server with concurrent scrapes of a
// local page and prints throughput, latency percentiles and the server's
// peak RSS. It only targets the addresses it is given (loopback by default)
// and stops after -n requests or -d, whichever comes first.
//
//	go run ./cmd/loadtest -key KEY -c 32 -d 20s -pid $(pgrep -n server)
//
// With -compare it measures side by side in one run instead: it builds and
// starts the server (./cmd/server, or the binaries of -bin) and the minimal
// fetch + readability + html-to-markdown pipeline of cmd/loadtest/minimal,
// then drives each in turn, alternating, -rounds times at each concurrency
// of -cs, and prints per run and per server the scrapes per second, the
// ratio to the minimal pipeline, the server's CPU per request and its peak
// RSS:
//
//	go run ./cmd/loadtest -compare -cs 8,32 -rounds 2 -d 10s
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

func run() error {
	api := flag.String("api", "http://127.0.0.1:3002", "server base URL")
	key := flag.String("key", os.Getenv("API_KEY"), "API key (default $API_KEY)")
	conc := flag.Int("c", 32, "concurrent clients")
	total := flag.Int("n", 200000, "stop after this many requests")
	dur := flag.Duration("d", 15*time.Second, "stop after this long")
	target := flag.String("target", "", "page to scrape (default: a 20 KB article served by this command on 127.0.0.1)")
	pageKB := flag.Int("page-kb", 20, "size of the served page in KB")
	formats := flag.String("formats", "markdown", "comma-separated formats")
	pid := flag.Int("pid", 0, "server process id, to report its peak RSS (Linux)")
	cached := flag.Bool("cache", false, "let the server cache (API defaults) instead of sending maxAge:0 and storeInCache:false")
	side := flag.Bool("compare", false, "start the server(s) and the minimal pipeline and measure them side by side")
	bins := flag.String("bin", "", "with -compare: name=path,... of server binaries (default: go build ./cmd/server)")
	minimal := flag.String("minimal", "", "with -compare: the minimal pipeline's binary (default: go build in cmd/loadtest/minimal)")
	concs := flag.String("cs", "8,32", "with -compare: the concurrencies, comma-separated")
	rounds := flag.Int("rounds", 2, "with -compare: runs of each server at each concurrency, alternated")
	warmup := flag.Duration("warmup", 2*time.Second, "with -compare: unmeasured load before each run")
	flag.Parse()

	if *target == "" {
		page := articlePage(*pageKB * 1024)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(page)
		})}
		go srv.Serve(ln)
		defer srv.Close()
		*target = "http://" + ln.Addr().String() + "/article"
	}
	body, err := requestBody(*target, *formats, *cached)
	if err != nil {
		return err
	}
	if *side {
		c := compareConfig{bins: *bins, minimal: *minimal, rounds: *rounds, dur: *dur, warmup: *warmup, target: *target, body: body}
		for v := range strings.SplitSeq(*concs, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 1 {
				return fmt.Errorf("-cs: %q is not a concurrency", v)
			}
			c.concs = append(c.concs, n)
		}
		return compare(c)
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *conc * 2, MaxConnsPerHost: *conc * 2}}
	ctx, cancel := context.WithTimeout(context.Background(), *dur)
	defer cancel()

	var sent atomic.Int64
	var failures atomic.Int64
	var firstErr atomic.Value
	lat := make([][]time.Duration, *conc)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range *conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && sent.Add(1) <= int64(*total) {
				t0 := time.Now()
				err := scrapeOnce(ctx, client, *api, *key, body)
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				lat[i] = append(lat[i], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)

	all := slices.Concat(lat...)
	slices.Sort(all)
	fmt.Printf("target      %s (%s)\n", *target, *formats)
	fmt.Printf("concurrency %d, duration %v\n", *conc, elapsed.Round(time.Millisecond))
	fmt.Printf("ok %d, failed %d\n", len(all), failures.Load())
	if e := firstErr.Load(); e != nil {
		fmt.Printf("first error: %s\n", e)
	}
	if len(all) > 0 {
		fmt.Printf("throughput  %.0f scrapes/s\n", float64(len(all))/elapsed.Seconds())
		fmt.Printf("latency     p50 %v  p90 %v  p99 %v  max %v\n", pct(all, 50), pct(all, 90), pct(all, 99), all[len(all)-1])
	}
	if *pid > 0 {
		if rss, err := peakRSS(*pid); err == nil {
			fmt.Printf("server peak RSS %s\n", rss)
		} else {
			fmt.Printf("server peak RSS: %v\n", err)
		}
	}
	return nil
}

func scrapeOnce(ctx context.Context, c *http.Client, api, key string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, api+"/v2/scrape", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(b[:min(len(b), 64)], []byte(`"success":true`)) {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, b)
	}
	return nil
}

func pct(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	if i > 0 {
		i--
	}
	return sorted[i].Round(10 * time.Microsecond)
}

// peakRSS reads VmHWM (the peak resident set) of a process.
func peakRSS(pid int) (string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:")), nil
		}
	}
	return "", fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// articlePage builds a realistic article page of about size bytes: header,
// navigation, paragraphs with links, a list, a table and a footer.
func articlePage(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Load test article</title>
<meta name="description" content="A page for load tests."><meta property="og:title" content="Load test article">
<link rel="stylesheet" href="/s.css"><script src="/app.js"></script></head><body>
<header><a href="/">Site</a><nav><ul><li><a href="/news">News</a></li><li><a href="/sport">Sport</a></li><li><a href="/about">About</a></li></ul></nav></header>
<main><article><h1>Load test article</h1><p class="byline">By A. Writer</p>`)
	words := strings.Fields("the harbour lights were dim when the boats came in and the keeper wrote in her log of wind and tide and the long grey swell that rolled beneath the pier")
	n := 0
	for b.Len() < size-600 {
		if n%6 == 5 {
			fmt.Fprintf(&b, "<h2>Section %d</h2>", n/6+1)
		}
		b.WriteString("<p>")
		for j := 0; j < 60; j++ {
			w := words[(n*7+j)%len(words)]
			if j%17 == 3 {
				fmt.Fprintf(&b, `<a href="/story/%d">%s</a> `, n*100+j, w)
			} else if j%23 == 5 {
				fmt.Fprintf(&b, "<strong>%s</strong> ", w)
			} else {
				b.WriteString(w + " ")
			}
		}
		b.WriteString("</p>\n")
		if n%9 == 8 {
			b.WriteString("<ul><li>first point</li><li>second point</li><li>third point</li></ul>")
		}
		n++
	}
	b.WriteString(`<table><tr><th>Tide</th><th>Time</th></tr><tr><td>High</td><td>06:12</td></tr><tr><td>Low</td><td>12:30</td></tr></table>`)
	b.WriteString(`</article><aside class="related"><h3>Related</h3><ul><li><a href="/r1">Other story</a></li></ul></aside></main>
<footer><p>© 2026 Site</p><a href="/privacy">Privacy</a></footer></body></html>`)
	return b.Bytes()
}
