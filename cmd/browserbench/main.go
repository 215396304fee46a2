// Command browserbench measures the browser path side by side in one run:
// a minimal chromedp renderer (one Chrome, a new tab per page, nothing
// blocked, nothing cleaned, no proxy) and the firegate server (the built
// binary, its network policy on, Chrome behind the guarded proxy, browser
// contexts per team), both rendering the same client-rendered page served
// on 127.0.0.1 at the same concurrency with the same waitFor. It prints
// pages/s, latency and the proportional set size (PSS) of each side's
// processes (server + Chrome, or Chrome + this command's renderer).
//
//	go run ./cmd/browserbench -c 8 -d 20s -wait 100ms
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"math/rand/v2"
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

	"github.com/chromedp/chromedp"
)

var verbose = flag.Bool("v", false, "print each process's PSS at the peak")

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "browserbench:", err)
		os.Exit(1)
	}
}

type config struct {
	conc   int
	dur    time.Duration
	wait   time.Duration
	pageKB int
	media  int
	chrome string
	bin    string
	teams  int
	tabs   int
	only   string
}

func run() error {
	var c config
	flag.IntVar(&c.conc, "c", 8, "concurrent renders")
	flag.DurationVar(&c.dur, "d", 20*time.Second, "measuring time of each side (after a warm-up)")
	flag.DurationVar(&c.wait, "wait", 100*time.Millisecond, "waitFor of every render")
	flag.IntVar(&c.pageKB, "page-kb", 20, "size of the client-rendered content in KB")
	flag.IntVar(&c.media, "media", 0, "images in the content (640x480 JPEG, a new URL each render), with a cacheable stylesheet and web font")
	flag.StringVar(&c.chrome, "chrome", "", "Chrome binary (default: chromium on PATH)")
	flag.StringVar(&c.bin, "bin", "", "firegate server binary (default: go build ./cmd/server)")
	flag.IntVar(&c.tabs, "tabs", 0, "BROWSER_MAX_TABS of the server (default: -c)")
	flag.IntVar(&c.teams, "teams", 1, "API keys of distinct teams the server side rotates through")
	flag.StringVar(&c.only, "only", "", "run one side only: minimal or server")
	flag.Parse()
	if c.chrome == "" {
		for _, n := range []string{"/usr/lib/chromium/chromium-headless-shell", "chromium-headless-shell", "headless-shell", "chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(n); err == nil {
				c.chrome = p
				break
			}
		}
		if c.chrome == "" {
			return errors.New("no Chrome found: set -chrome")
		}
	}
	page, stop, err := servePage(c.pageKB*1024, c.media)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Printf("page %s (client-rendered, %d KB, %d images), concurrency %d, waitFor %v, %v per side\n\n", page, c.pageKB, c.media, c.conc, c.wait, c.dur)
	if c.only == "" || c.only == "minimal" {
		r, err := minimal(c, page)
		if err != nil {
			return fmt.Errorf("minimal renderer: %w", err)
		}
		r.print("minimal chromedp renderer")
	}
	if c.only == "" || c.only == "server" {
		r, err := server(c, page)
		if err != nil {
			return fmt.Errorf("server: %w", err)
		}
		r.print("firegate server (POST /v2/scrape)")
	}
	return nil
}

// result is one side's measurement.
type result struct {
	pages    int
	failed   int
	firstErr string
	elapsed  time.Duration
	lat      []time.Duration
	pssKB    int64
	procs    int
	detail   []string      // the processes at the peak sample, with -v
	cpu      time.Duration // CPU time of the processes during the measured run
	cpuKinds []string      // CPU time by kind of process, with -v
}

func (r result) print(name string) {
	slices.Sort(r.lat)
	fmt.Printf("== %s\n", name)
	fmt.Printf("   pages %d, failed %d, %.1f pages/s\n", r.pages, r.failed, float64(r.pages)/r.elapsed.Seconds())
	if len(r.lat) > 0 {
		fmt.Printf("   latency p50 %v  p90 %v\n", pct(r.lat, 50).Round(time.Millisecond), pct(r.lat, 90).Round(time.Millisecond))
	}
	fmt.Printf("   PSS %d MiB in %d processes (peak of samples)\n", r.pssKB/1024, r.procs)
	if r.pages > 0 {
		fmt.Printf("   CPU %.0f ms per page (%v in all; on an idle machine of N cores, at most N*1000/that pages/s)\n",
			float64(r.cpu.Milliseconds())/float64(r.pages), r.cpu.Round(time.Millisecond))
	}
	if r.firstErr != "" {
		fmt.Printf("   first error: %s\n", r.firstErr)
	}
	if *verbose {
		for _, d := range r.cpuKinds {
			fmt.Println("     CPU", d)
		}
		for _, d := range r.detail {
			fmt.Println("     ", d)
		}
	}
	fmt.Println()
}

func pct(d []time.Duration, p int) time.Duration {
	return d[min(len(d)-1, len(d)*p/100)]
}

// load runs render with c.conc workers: a warm-up of 2 s, then c.dur
// measured, sampling the PSS of the process trees under roots.
func load(c config, roots func() []int, render func(ctx context.Context, worker int) error) result {
	warm, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	var wg sync.WaitGroup
	for i := range c.conc {
		wg.Go(func() {
			for warm.Err() == nil {
				_ = render(warm, i)
			}
		})
	}
	wg.Wait()
	cancel()

	ctx, cancel := context.WithTimeout(context.Background(), c.dur)
	defer cancel()
	var r result
	var mu sync.Mutex
	var firstErr atomic.Value
	cpu0, kinds0 := treeCPUByKind(roots())
	start := time.Now()
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				kb, n, detail := treePSS(roots())
				mu.Lock()
				if kb > r.pssKB {
					r.pssKB, r.procs, r.detail = kb, n, detail
				}
				mu.Unlock()
			}
		}
	}()
	for i := range c.conc {
		wg.Go(func() {
			for ctx.Err() == nil {
				t0 := time.Now()
				err := render(ctx, i)
				if ctx.Err() != nil {
					return
				}
				mu.Lock()
				if err != nil {
					r.failed++
					firstErr.CompareAndSwap(nil, err.Error())
				} else {
					r.pages++
					r.lat = append(r.lat, time.Since(t0))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	r.elapsed = time.Since(start)
	cpu1, kinds1 := treeCPUByKind(roots())
	r.cpu = cpu1 - cpu0
	for k, v := range kinds1 {
		if d := v - kinds0[k]; d > 0 {
			r.cpuKinds = append(r.cpuKinds, fmt.Sprintf("%8v  %s", d.Round(10*time.Millisecond), k))
		}
	}
	slices.Sort(r.cpuKinds)
	<-sampled
	if e, ok := firstErr.Load().(string); ok {
		r.firstErr = e
	}
	return r
}

// minimal renders with one Chrome and a new tab per page.
func minimal(c config, page string) (result, error) {
	dir, err := os.MkdirTemp("", "browserbench-minimal-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(c.chrome), chromedp.UserDataDir(dir),
		chromedp.Flag("headless", "new"), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	if err := chromedp.Do(bctx); err != nil {
		return result{}, err
	}
	pid := chromedp.FromContext(bctx).Browser.Process().Pid
	render := func(ctx context.Context, _ int) error {
		tctx, cancel := chromedp.NewContext(bctx)
		defer cancel()
		rctx, cancel2 := context.WithTimeout(tctx, 30*time.Second)
		defer cancel2()
		stop := context.AfterFunc(ctx, cancel2)
		defer stop()
		if err := chromedp.Do(rctx, chromedp.Navigate(page), chromedp.Sleep(c.wait)); err != nil {
			return err
		}
		html, err := chromedp.Run(rctx, chromedp.Evaluate[string]("document.documentElement.outerHTML"))
		if err == nil && !strings.Contains(html, "rendered section 1") {
			err = errors.New("content not rendered")
		}
		return err
	}
	return load(c, func() []int { return []int{os.Getpid(), pid} }, render), nil
}

// server starts the firegate binary and scrapes the page through its API.
func server(c config, page string) (result, error) {
	bin := c.bin
	dir, err := os.MkdirTemp("", "browserbench-server-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	if bin == "" {
		bin = filepath.Join(dir, "firegate")
		build := exec.Command("go", "build", "-o", bin, "./cmd/server")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return result{}, fmt.Errorf("go build ./cmd/server (run from the repository root, or pass -bin): %w", err)
		}
	}
	port, err := freePort()
	if err != nil {
		return result{}, err
	}
	keys := make([]string, c.teams)
	for i := range keys {
		keys[i] = fmt.Sprintf("fg-bench-team-%02d-0123456789abcdef", i)
	}
	env := append(os.Environ(), "PORT="+port, "HOST=127.0.0.1", "DATA_DIR="+filepath.Join(dir, "data"),
		"CHROME_PATH="+c.chrome, "BROWSER_MAX_TABS="+strconv.Itoa(cmp.Or(c.tabs, c.conc)), "LOG_LEVEL=warn",
		"ALLOW_PRIVATE_TARGETS=false", "ALLOW_TARGETS=127.0.0.1", "TEAM_CONCURRENCY_LIMIT=0", "QUEUE_WORKERS=0")
	if c.teams > 1 {
		// One team per key, created before the server starts.
		for i := range keys {
			cmd := exec.Command(bin, "keys", "create", "--team", fmt.Sprintf("bench%02d", i))
			cmd.Env = env
			out, err := cmd.Output()
			if err != nil {
				return result{}, fmt.Errorf("keys create: %w", err)
			}
			keys[i] = strings.TrimSpace(string(out))
		}
	} else {
		env = append(env, "BOOTSTRAP_API_KEY="+keys[0])
	}
	cmd := exec.Command(bin)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}()
	api := "http://127.0.0.1:" + port
	if err := waitReady(api, 30*time.Second); err != nil {
		return result{}, err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c.conc * 2}}
	var n atomic.Int64
	render := func(ctx context.Context, _ int) error {
		key := keys[int(n.Add(1))%len(keys)]
		// Cannot fail: strings, numbers, a bool and a string slice.
		body, _ := json.Marshal(map[string]any{"url": page, "formats": []string{"markdown"}, "waitFor": c.wait.Milliseconds(),
			"maxAge": 0, "storeInCache": false, "timeout": 30000})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, api+"/v2/scrape", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte("rendered section 1")) {
			return fmt.Errorf("status %d: %.200s", resp.StatusCode, b)
		}
		return nil
	}
	return load(c, func() []int { return []int{cmd.Process.Pid} }, render), nil
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
	return errors.New("server not healthy in time")
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), nil
}

// servePage serves a page whose content is built by script after load:
// about size bytes of text in sections, and with media > 0 that many
// images (a new URL at each render, as a page's own pictures are), a
// stylesheet and a web font (cacheable, as a site's shared assets are).
func servePage(size, media int) (string, func(), error) {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>Client-rendered page</title>`)
	if media > 0 {
		b.WriteString(`<link rel="stylesheet" href="/style.css">`)
	}
	b.WriteString(`</head><body><div id="app">Loading</div><script>
const words = "the harbour lights were dim when the boats came in and the keeper wrote in her log of wind and tide".split(" ");
setTimeout(() => { let html = "";`)
	fmt.Fprintf(&b, `for (let s = 0; html.length < %d; s++) { html += "<h2>rendered section " + (s + 1) + "</h2><p>";
for (let j = 0; j < 80; j++) html += words[(s * 7 + j) %% words.length] + " "; html += "</p>";
if (s < %d) html += '<img width="640" height="480" alt="picture ' + s + '" src="/img/' + s + '.jpg?r=' + Math.random() + '">'; }
document.getElementById("app").innerHTML = "<article><h1>Client-rendered</h1>" + html + "</article>"; }, 20);
</script></body></html>`, size, media)
	body := []byte(b.String())
	var img, font []byte
	if media > 0 {
		var err error
		if img, err = noiseJPEG(640, 480); err != nil {
			return "", nil, err
		}
		font, _ = os.ReadFile("/usr/share/fonts/truetype/liberation/LiberationSerif-Regular.ttf")
	}
	const css = `@font-face { font-family: "Bench"; src: url("/font.ttf"); } body { font-family: "Bench", serif; max-width: 60em; margin: auto; } img { display: block; max-width: 100%; }`
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(body)
		case media > 0 && r.URL.Path == "/style.css":
			w.Header().Set("Content-Type", "text/css")
			w.Header().Set("Cache-Control", "max-age=3600")
			io.WriteString(w, css)
		case media > 0 && r.URL.Path == "/font.ttf" && font != nil:
			w.Header().Set("Content-Type", "font/ttf")
			w.Header().Set("Cache-Control", "max-age=3600")
			w.Write(font)
		case media > 0 && strings.HasPrefix(r.URL.Path, "/img/"):
			w.Header().Set("Content-Type", "image/jpeg")
			w.Write(img)
		default:
			http.NotFound(w, r)
		}
	})}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String() + "/", func() { srv.Close() }, nil
}

// noiseJPEG encodes a w x h picture of coloured noise, which compresses
// about as badly as a photograph.
func noiseJPEG(w, h int) ([]byte, error) {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range m.Pix {
		m.Pix[i] = uint8(rng.IntN(256))
	}
	var buf bytes.Buffer
	err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: 80})
	return buf.Bytes(), err
}

// proc is one process of a tree: its pid and the fields of its
// /proc/PID/stat after the command name (ppid is f[1]).
type proc struct {
	pid int
	f   []string
}

// processTree returns the given processes and all their descendants.
func processTree(roots []int) []proc {
	children := map[int][]int{}
	stats := map[int][]string{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The fields after the parenthesised command; ppid is the 2nd.
		i := bytes.LastIndexByte(st, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(st[i+1:]))
		if len(f) < 15 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], pid)
		stats[pid] = f
	}
	var out []proc
	seen := map[int]bool{}
	var walk func(int)
	walk = func(pid int) {
		if seen[pid] {
			return
		}
		seen[pid] = true
		if f := stats[pid]; f != nil {
			out = append(out, proc{pid: pid, f: f})
		}
		for _, c := range children[pid] {
			walk(c)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	return out
}

// treePSS sums the PSS of the given processes and all their descendants;
// detail lists each process's PSS and kind.
func treePSS(roots []int) (kb int64, procs int, detail []string) {
	for _, p := range processTree(roots) {
		n := pss(p.pid)
		kb += n
		procs++
		detail = append(detail, fmt.Sprintf("%6d MiB  %s", n/1024, kind(p.pid)))
	}
	slices.Sort(detail)
	slices.Reverse(detail)
	return kb, procs, detail
}

// treeCPUByKind sums the CPU time (user and system) of the given
// processes and all their descendants, with that of the descendants they
// reaped, in all and by kind of process.
func treeCPUByKind(roots []int) (time.Duration, map[string]time.Duration) {
	byKind := map[string]time.Duration{}
	var ticks int64
	for _, p := range processTree(roots) {
		// utime, stime, cutime, cstime are fields 14-17 of stat.
		var own int64
		for _, k := range []int{11, 12, 13, 14} {
			n, _ := strconv.ParseInt(p.f[k], 10, 64)
			own += n
		}
		ticks += own
		byKind[kind(p.pid)] += time.Duration(own) * time.Second / 100
	}
	return time.Duration(ticks) * time.Second / 100, byKind // USER_HZ is 100 on Linux
}

// kind names a process by its --type flag (Chrome) or its command.
func kind(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	cmdline := strings.ReplaceAll(string(b), "\x00", " ")
	if _, rest, ok := strings.Cut(cmdline, "--type="); ok {
		t, _, _ := strings.Cut(rest, " ")
		return t
	}
	exe, _, _ := strings.Cut(cmdline, " ")
	return filepath.Base(exe)
}

func pss(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "Pss:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return n
		}
	}
	return 0
}
