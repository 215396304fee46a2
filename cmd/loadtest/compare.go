package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// compareConfig is the side-by-side mode (-compare): every server is
// started by this command and driven in turn, round after round, with the
// same page, body and concurrency, so that the machine's load is shared
// alike between them.
type compareConfig struct {
	bins    string // name=path,... of server binaries; "" builds ./cmd/server
	minimal string // the minimal pipeline's binary; "" builds cmd/loadtest/minimal
	concs   []int
	rounds  int
	dur     time.Duration
	warmup  time.Duration
	target  string
	body    []byte
}

// side is one server under test.
type side struct {
	name, api, key string
	cmd            *exec.Cmd
}

// sample is one measured run of a side.
type sample struct {
	ok, failed int
	elapsed    time.Duration
	lat        []time.Duration
	cpu        time.Duration // the server process's user+system time
	firstErr   string
}

func compare(c compareConfig) error {
	dir, err := os.MkdirTemp("", "loadtest-compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var sides []*side
	defer func() {
		for _, s := range sides {
			stop(s.cmd)
		}
	}()
	minBin := c.minimal
	if minBin == "" {
		minBin = filepath.Join(dir, "minimal")
		if err := build(minBin, "cmd/loadtest/minimal", "."); err != nil {
			return fmt.Errorf("build the minimal pipeline (run from the repository root, or pass -minimal): %w", err)
		}
	}
	s, err := startSide("minimal", minBin, dir, false)
	if err != nil {
		return err
	}
	sides = append(sides, s)
	bins := c.bins
	if bins == "" {
		bin := filepath.Join(dir, "firegate")
		if err := build(bin, ".", "./cmd/server"); err != nil {
			return fmt.Errorf("build ./cmd/server (run from the repository root, or pass -bin): %w", err)
		}
		bins = "firegate=" + bin
	}
	for spec := range strings.SplitSeq(bins, ",") {
		name, bin, ok := strings.Cut(spec, "=")
		if !ok {
			name, bin = filepath.Base(spec), spec
		}
		s, err := startSide(name, bin, dir, true)
		if err != nil {
			return err
		}
		sides = append(sides, s)
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512, MaxConnsPerHost: 512}}
	fmt.Printf("target %s, %v per run after %v of warm-up, %d rounds\n", c.target, c.dur, c.warmup, c.rounds)
	fmt.Printf("%-10s %4s %5s %10s %9s %9s %9s %12s %6s\n", "server", "c", "round", "scrapes/s", "p50", "p90", "p99", "CPU/request", "failed")
	results := map[string]map[int][]sample{}
	for _, conc := range c.concs {
		for r := range c.rounds {
			// Alternate the order so that neither side always runs
			// first.
			order := slices.Clone(sides)
			if r%2 == 1 {
				slices.Reverse(order)
			}
			for _, s := range order {
				drive(client, s, c.body, conc, c.warmup)
				smp := drive(client, s, c.body, conc, c.dur)
				if results[s.name] == nil {
					results[s.name] = map[int][]sample{}
				}
				results[s.name][conc] = append(results[s.name][conc], smp)
				fmt.Printf("%-10s %4d %5d %10.0f %9v %9v %9v %12v %6d\n", s.name, conc, r+1, smp.rate(),
					pctOf(smp.lat, 50), pctOf(smp.lat, 90), pctOf(smp.lat, 99), smp.cpuPer().Round(time.Microsecond), smp.failed)
				if smp.firstErr != "" {
					fmt.Printf("           first error: %s\n", smp.firstErr)
				}
			}
		}
	}

	fmt.Printf("\n%-10s %4s %10s %10s %12s %14s\n", "server", "c", "scrapes/s", "vs minimal", "CPU/request", "peak RSS")
	for _, conc := range c.concs {
		base := meanRate(results["minimal"][conc])
		for _, s := range sides {
			rate := meanRate(results[s.name][conc])
			rss, err := peakRSS(s.cmd.Process.Pid)
			if err != nil {
				rss = "?"
			}
			fmt.Printf("%-10s %4d %10.0f %9.2fx %12v %14s\n", s.name, conc, rate, rate/base,
				meanCPU(results[s.name][conc]).Round(time.Microsecond), rss)
		}
	}
	return nil
}

func build(out, dir, pkg string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// startSide starts a server binary on a free port with its own data
// directory and waits until it answers. A firegate server gets a bootstrap
// key, private targets allowed (the page is on 127.0.0.1) and warnings-only
// logs; everything else is its defaults.
func startSide(name, bin, dir string, firegate bool) (*side, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	key := "fc-loadtest-0123456789abcdef"
	env := append(os.Environ(), "PORT="+port, "HOST=127.0.0.1", "LOG_LEVEL=warn")
	if firegate {
		env = append(env, "DATA_DIR="+filepath.Join(dir, "data-"+name), "BOOTSTRAP_API_KEY="+key, "ALLOW_PRIVATE_TARGETS=true")
	}
	cmd := exec.Command(bin)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	s := &side{name: name, api: "http://127.0.0.1:" + port, key: key, cmd: cmd}
	if err := waitReady(s.api, 30*time.Second); err != nil {
		stop(cmd)
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

func stop(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

func waitReady(api string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		resp, err := http.Get(api + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("not healthy in time")
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), nil
}

// drive drives s with conc clients for d and reads the CPU the server
// process spent meanwhile.
func drive(client *http.Client, s *side, body []byte, conc int, d time.Duration) sample {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cpu0 := procCPU(s.cmd.Process.Pid)
	var failed atomic.Int64
	var firstErr atomic.Value
	lat := make([][]time.Duration, conc)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range conc {
		wg.Go(func() {
			for ctx.Err() == nil {
				t0 := time.Now()
				err := scrapeOnce(ctx, client, s.api, s.key, body)
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				lat[i] = append(lat[i], time.Since(t0))
			}
		})
	}
	wg.Wait()
	smp := sample{elapsed: time.Since(start), lat: slices.Concat(lat...), failed: int(failed.Load()),
		cpu: procCPU(s.cmd.Process.Pid) - cpu0}
	slices.Sort(smp.lat)
	smp.ok = len(smp.lat)
	if e, ok := firstErr.Load().(string); ok {
		smp.firstErr = e
	}
	return smp
}

func (s sample) rate() float64 { return float64(s.ok) / s.elapsed.Seconds() }

func (s sample) cpuPer() time.Duration {
	if s.ok == 0 {
		return 0
	}
	return s.cpu / time.Duration(s.ok)
}

func meanRate(ss []sample) float64 {
	t := 0.0
	for _, s := range ss {
		t += s.rate()
	}
	return t / float64(max(len(ss), 1))
}

// meanCPU is the CPU per request over all runs: total CPU over total
// requests.
func meanCPU(ss []sample) time.Duration {
	var cpu time.Duration
	ok := 0
	for _, s := range ss {
		cpu += s.cpu
		ok += s.ok
	}
	if ok == 0 {
		return 0
	}
	return cpu / time.Duration(ok)
}

func pctOf(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return pct(sorted, p)
}

// procCPU is the user and system time a process has used (Linux).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name in parentheses may hold spaces: the fields after
	// it start at the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	// utime and stime are fields 14 and 15 of stat, 12 and 13 after the
	// name; in clock ticks of 1/100 s (USER_HZ on Linux).
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond
}

// requestBody is the scrape request sent to every server.
func requestBody(target, formats string, cached bool) ([]byte, error) {
	req := map[string]any{"url": target, "formats": strings.Split(formats, ",")}
	if !cached {
		req["maxAge"], req["storeInCache"] = 0, false
	}
	return json.Marshal(req)
}
