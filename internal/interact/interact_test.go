package interact

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/actions"
	"github.com/firegate/firegate/internal/browser"
	"github.com/firegate/firegate/internal/sandbox"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/sqlite"
	"github.com/firegate/firegate/internal/testenv"
)

// One Chrome for the package's tests (the machine is small).
var (
	poolOnce sync.Once
	pool     *browser.Pool
)

func testPool(t testing.TB) *browser.Pool {
	t.Helper()
	path := testenv.ChromePath(t)
	poolOnce.Do(func() {
		pool = browser.New(browser.Options{ChromePath: path, MaxTabs: 2, AllowPrivate: true, DevTools: true}, testenv.Logger(t))
	})
	return pool
}

func TestMain(m *testing.M) {
	RunChildIfRequested()        // code runs in a child process of this binary
	sandbox.RunInitIfRequested() // and programs in a sandbox whose init it is
	code := m.Run()
	if pool != nil {
		if err := pool.Close(); err != nil {
			fmt.Println("close pool:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func testStore(t testing.TB) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "firegate.db"), testenv.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// clock is a settable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// ledger records charges.
type ledger struct {
	mu      sync.Mutex
	charges []store.Charge
}

func (l *ledger) Charge(_ context.Context, c store.Charge) (store.ChargeResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.charges = append(l.charges, c)
	return store.ChargeResult{}, nil
}

const formPage = `<html><head><title>Shop</title></head><body>
<input id="q"><button id="go" onclick="document.getElementById('out').textContent = 'searched ' + document.getElementById('q').value">Go</button>
<p id="out"></p><a id="next" href="/next">next</a></body></html>`

func site(t testing.TB) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, formPage) })
	mux.HandleFunc("/form", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><head><title>Search</title></head><body><form onsubmit="event.preventDefault();document.getElementById('out').textContent='You searched for '+this.q.value">
<input id="q" name="q" placeholder="Search"></form><p id="out"></p></body></html>`)
	})
	mux.HandleFunc("/next", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><head><title>Next</title></head><body><h1>second page</h1></body></html>`)
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

const team = "0195e0a0-0000-7000-8000-000000000001"

// TestReplayAndCode replays a scrape with actions, then runs code that
// reads and drives the page: state carries over between runs.
func TestReplayAndCode(t *testing.T) {
	srv := site(t)
	led := &ledger{}
	m := New(Config{Store: testStore(t), Browser: testPool(t), Ledger: led, Log: testenv.Logger(t)})
	ctx := ctxFor(t, 60*time.Second)
	rec, err := m.Create(ctx, CreateParams{TeamID: team, ScrapeID: "s1", TTL: time.Minute, ActivityTTL: time.Minute,
		Replay: &Replay{URL: srv.URL + "/", Actions: []actions.Action{
			{Type: actions.TypeClick, Selector: "#q"}, {Type: actions.TypeWrite, Text: "shoes"}, {Type: actions.TypeClick, Selector: "#go"},
		}}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Execute(ctx, rec, ExecParams{Language: "node", Timeout: 20 * time.Second, Code: `
const out = await page.evaluate(() => document.getElementById('out').textContent);
console.log(out, await page.title(), page.url().endsWith('/'));
await page.fill('#q', 'boots');
await page.click('#go');
console.log(await page.evaluate((id) => document.getElementById(id).textContent, 'out'));
console.error('to stderr', {a: 1});
`})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Killed || res.Stdout != "searched shoes Shop true\nsearched boots\n" || res.Stderr != "to stderr {\"a\":1}\n" {
		t.Fatalf("first run: %+v", res)
	}
	// The next run sees where the last one left the page.
	res, err = m.Execute(ctx, rec, ExecParams{Timeout: 20 * time.Second, Code: `
console.log(await page.evaluate('document.getElementById("out").textContent'));
const r = await page.goto(page.url() + 'next');
console.log(r.status(), await page.title());
await page.waitForSelector('h1', {timeout: 5000});
console.log((await page.content()).includes('second page'), (await page.screenshot()).length > 100);`})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Stdout != "searched boots\n200 Next\ntrue true\n" {
		t.Fatalf("second run: %+v", res)
	}

	end, err := m.DeleteForScrape(ctx, team, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if end.CreditsBilled != 2 || end.DurationMS < 0 {
		t.Errorf("Delete = %+v, want the minimum of 2 credits", end)
	}
	if len(led.charges) != 1 || led.charges[0].Credits != 2 || led.charges[0].IdempotencyKey != "interact:"+rec.ID {
		t.Errorf("charges = %+v", led.charges)
	}
	if _, err := m.Execute(ctx, rec, ExecParams{Code: "1", Timeout: time.Second}); !errors.Is(err, ErrDestroyed) {
		t.Errorf("Execute after delete: %v, want ErrDestroyed", err)
	}
	rec, _ = m.ForScrape(ctx, team, "s1")
	if rec.Status != store.InteractDestroyed || rec.EndReason != "deleted" {
		t.Errorf("record after delete: %+v", rec)
	}
	if _, err := m.DeleteForScrape(ctx, team, "s1"); !errors.Is(err, ErrDestroyed) {
		t.Errorf("second delete: %v, want ErrDestroyed", err)
	}
	if m.Held() != 0 {
		t.Errorf("%d sessions held after delete", m.Held())
	}
}

// TestCodeFailures: errors, timeouts, loops, memory, require and other
// languages.
func TestCodeFailures(t *testing.T) {
	srv := site(t)
	m := New(Config{Store: testStore(t), Browser: testPool(t), JSMemory: 64 << 20, Log: testenv.Logger(t)})
	ctx := ctxFor(t, 90*time.Second)
	rec, err := m.Create(ctx, CreateParams{TeamID: team, TTL: time.Minute, ActivityTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Delete(ctx, team, rec.ID)
	tests := []struct {
		name, code string
		timeout    time.Duration
		exit       int
		killed     bool
		stderr     string
		maxTime    time.Duration
	}{
		{"throw", `console.log('before'); throw new Error('boom');`, 5 * time.Second, 1, false, "Error: boom", 5 * time.Second},
		{"rejection", `await Promise.reject(new TypeError('nope'))`, 5 * time.Second, 1, false, "TypeError: nope", 5 * time.Second},
		{"syntax", `let x = ;`, 5 * time.Second, 1, false, "SyntaxError", 5 * time.Second},
		{"missing element", `await page.click('#missing')`, 5 * time.Second, 1, false, "#missing", 5 * time.Second},
		{"require", `const fs = require('fs'); fs.readFileSync('/etc/passwd')`, 5 * time.Second, 1, false, "require is not available", 5 * time.Second},
		{"no process", `process.exit(0)`, 5 * time.Second, 1, false, "process is not defined", 5 * time.Second},
		{"busy loop", `while (true) {}`, time.Second, exitKilled, true, "timed out after 1s", 4 * time.Second},
		{"blocked in page", `await page.waitForSelector('#never')`, time.Second, exitKilled, true, "timed out", 4 * time.Second},
		{"page loop", `await page.evaluate(() => { while (true) {} })`, time.Second, exitKilled, true, "timed out", 4 * time.Second},
		{"memory", `let a = []; while (true) a.push('x'.repeat(1000) + a.length);`, 60 * time.Second, exitKilled, true, "memory", 60 * time.Second},
		{"private", `await page.goto('file:///etc/passwd')`, 5 * time.Second, 1, false, "not an http(s) URL", 5 * time.Second},
		// One built-in call allocating gigabytes, which no interrupt stops:
		// the code runner process dies, not the server. The timeouts are
		// far above what reaching the memory limit takes on a loaded
		// machine, so only the memory limit can end them.
		{"huge repeat", `console.log('x'.repeat(2**31).length)`, 60 * time.Second, exitKilled, true, "memory limit", 60 * time.Second},
		{"huge fill", `console.log(new Array(1e9).fill(0).length)`, 60 * time.Second, exitKilled, true, "memory limit", 60 * time.Second},
		{"doubling", `let s = 'x'; for (let i = 0; i < 40; i++) s = s + s;`, 60 * time.Second, exitKilled, true, "memory", 60 * time.Second},
		{"output then timeout", `console.log('before'); while (true) {}`, time.Second, exitKilled, true, "timed out", 4 * time.Second},
	}
	for _, tt := range tests {
		if raceBuild && strings.HasPrefix(tt.name, "huge") {
			continue // the race detector's runner has no RLIMIT_DATA: these would take the machine's memory
		}
		start := time.Now()
		res, err := m.Execute(ctx, rec, ExecParams{Language: "javascript", Code: tt.code, Timeout: tt.timeout})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if d := time.Since(start); d > tt.maxTime {
			t.Errorf("%s: took %v", tt.name, d)
		}
		if res.ExitCode != tt.exit || res.Killed != tt.killed || !strings.Contains(res.Stderr, tt.stderr) || res.Error == "" {
			t.Errorf("%s: %+v; want exit %d killed %v stderr containing %q", tt.name, res, tt.exit, tt.killed, tt.stderr)
		}
	}
	// What was printed before the timeout is kept.
	if res, _ := m.Execute(ctx, rec, ExecParams{Code: `console.log('before'); while (true) {}`, Timeout: time.Second}); res.Stdout != "before\n" || !res.Killed {
		t.Errorf("output before a timeout: %+v", res)
	}
	// The session still works after all that (a page loop was interrupted
	// with the page's evaluation still running: the next one waits for
	// nothing).
	res, err := m.Execute(ctx, rec, ExecParams{Code: fmt.Sprintf(`await page.goto(%q); console.log(await page.title())`, srv.URL+"/"), Timeout: 20 * time.Second})
	if err != nil || res.Stdout != "Shop\n" {
		t.Errorf("after failures: %+v, %v", res, err)
	}
	// Output is bounded.
	res, _ = m.Execute(ctx, rec, ExecParams{Code: `const s = 'y'.repeat(1 << 16); for (let i = 0; i < 40; i++) console.log(s);`, Timeout: 10 * time.Second})
	if !res.Truncated || len(res.Stdout) != MaxOutput {
		t.Errorf("big output: truncated %v, %d bytes", res.Truncated, len(res.Stdout))
	}
	for _, lang := range []string{"python", "bash"} {
		if _, err := m.Execute(ctx, rec, ExecParams{Language: lang, Code: "print(1)", Timeout: time.Second}); !errors.Is(err, ErrLanguage) {
			t.Errorf("%s: %v, want ErrLanguage", lang, err)
		}
	}
}

// TestExpiryAndCap: the ttl and the activity ttl end sessions (the reaper
// and requests both see it), the team cap answers ErrTooMany and frees up
// when a session ends, another team's sessions are not found.
func TestExpiryAndCap(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	led := &ledger{}
	st := testStore(t)
	m := New(Config{Store: st, Browser: testPool(t), Ledger: led, MaxPerTeam: 2, Now: clk.now, Log: testenv.Logger(t)})
	ctx := ctxFor(t, 60*time.Second)
	a, err := m.Create(ctx, CreateParams{TeamID: team, TTL: 10 * time.Minute, ActivityTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Create(ctx, CreateParams{TeamID: team, TTL: 2 * time.Minute, ActivityTTL: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create(ctx, CreateParams{TeamID: team, TTL: time.Minute, ActivityTTL: time.Minute}); !errors.Is(err, ErrTooMany) {
		t.Fatalf("third session: %v, want ErrTooMany", err)
	}
	other := "0195e0a0-0000-7000-8000-000000000002"
	if _, err := m.Get(ctx, other, a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("other team Get: %v, want ErrNotFound", err)
	}
	if _, err := m.Delete(ctx, other, a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("other team Delete: %v, want ErrNotFound", err)
	}

	// 50s on, a is used: its inactivity deadline moves to 1m50s.
	clk.add(50 * time.Second)
	if res, err := m.Execute(ctx, a, ExecParams{Code: "console.log(1)", Timeout: 5 * time.Second}); err != nil || res.Stdout != "1\n" {
		t.Fatalf("Execute a: %+v, %v", res, err)
	}
	clk.add(50 * time.Second) // 1m40s: nothing expired yet
	m.Reap(ctx)
	if m.Held() != 2 {
		t.Fatalf("held %d after reap at 1m40s, want 2", m.Held())
	}
	clk.add(15 * time.Second) // 1m55s: a idle
	m.Reap(ctx)
	if ra, _ := m.Get(ctx, team, a.ID); ra.Status != store.InteractDestroyed || ra.EndReason != "activity" {
		t.Errorf("a after its activity ttl: %+v", ra)
	}
	if m.Held() != 1 {
		t.Errorf("held %d, want 1", m.Held())
	}
	// The cap has room again.
	c, err := m.Create(ctx, CreateParams{TeamID: team, TTL: 10 * time.Minute, ActivityTTL: 10 * time.Minute})
	if err != nil {
		t.Fatalf("session after one ended: %v", err)
	}
	// b reaches its ttl at 2m: a request sees it before the reaper does.
	clk.add(10 * time.Second)
	rb, _ := m.Get(ctx, team, b.ID)
	if _, err := m.Execute(ctx, rb, ExecParams{Code: "1", Timeout: time.Second}); !errors.Is(err, ErrDestroyed) {
		t.Errorf("Execute b after its ttl: %v, want ErrDestroyed", err)
	}
	rb, _ = m.Get(ctx, team, b.ID)
	if rb.Status != store.InteractDestroyed || rb.EndReason != "ttl" || rb.DurationMS != (2*time.Minute).Milliseconds() || rb.CreditsBilled != 4 {
		t.Errorf("b after its ttl: %+v (want billed to the ttl: 2 min = 4 credits)", rb)
	}
	m.Shutdown(ctx)
	if rc, _ := m.Get(ctx, team, c.ID); rc.Status != store.InteractDestroyed || rc.EndReason != "shutdown" {
		t.Errorf("c after shutdown: %+v", rc)
	}
	if len(led.charges) != 3 {
		t.Errorf("%d charges, want 3: %+v", len(led.charges), led.charges)
	}
}
