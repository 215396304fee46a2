package interact

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/sandbox"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/testenv"
)

// testSandbox is a sandbox running langs, or skips (fails with
// REQUIRE_INTEGRATION=1) without bwrap, node or playwright-core.
func testSandbox(t testing.TB, langs ...string) *sandbox.Sandbox {
	t.Helper()
	for _, bin := range []string{"bwrap", "/usr/bin/node", "/usr/bin/python3"} {
		if _, err := exec.LookPath(bin); err != nil {
			testenv.Unavailable(t, "%s is not installed: %v", bin, err)
		}
	}
	mods, err := filepath.Abs("../../e2e/sdk/node_modules")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(mods, "playwright-core")); err != nil {
		testenv.Unavailable(t, "playwright-core is not installed in e2e/sdk (cd e2e/sdk && npm install): %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	sb, err := sandbox.New(ctx, sandbox.Config{Runtimes: langs, NodeModules: mods, Log: testenv.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	return sb
}

// TestSandboxedPrograms: with python enabled, a python program runs in
// the sandbox (not the server's environment: no host files, no network);
// bash, not enabled, is refused naming INTERACT_RUNTIMES; node, not
// enabled, still runs in the JavaScript interpreter.
func TestSandboxedPrograms(t *testing.T) {
	sb := testSandbox(t, sandbox.Python)
	m := New(Config{Store: testStore(t), Browser: testPool(t), Runner: sb, Log: testenv.Logger(t)})
	ctx := ctxFor(t, 90*time.Second)
	rec, err := m.Create(ctx, CreateParams{TeamID: team, TTL: time.Minute, ActivityTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Delete(ctx, team, rec.ID)

	res, err := m.Execute(ctx, rec, ExecParams{Language: "python", Timeout: 20 * time.Second, Code: `
import os, socket
print(open('/etc/passwd').read().strip())
print(os.path.exists('/work'), os.path.exists('/root'), os.getcwd())
try:
    socket.create_connection(('127.0.0.1', 5432), timeout=3)
    print('connected')
except OSError as e:
    print('no network')
`})
	if err != nil {
		t.Fatal(err)
	}
	want := "sandbox:x:1000:1000:sandbox:/tmp:/usr/sbin/nologin\nFalse False /tmp\nno network\n"
	if res.ExitCode != 0 || res.Stdout != want {
		t.Fatalf("python: %+v", res)
	}
	res, err = m.Execute(ctx, rec, ExecParams{Language: "python", Timeout: 2 * time.Second, Code: "while True: pass"})
	if err != nil || !res.Killed || res.ExitCode != 137 || !strings.Contains(res.Error, "timed out") {
		t.Fatalf("python loop: %+v %v", res, err)
	}
	if _, err := m.Execute(ctx, rec, ExecParams{Language: "bash", Code: "id", Timeout: time.Second}); !errors.Is(err, ErrLanguage) || !strings.Contains(err.Error(), "INTERACT_RUNTIMES") {
		t.Fatalf("bash: %v, want ErrLanguage naming INTERACT_RUNTIMES", err)
	}
	// node is not enabled: the interpreter runs it, with its page.
	res, err = m.Execute(ctx, rec, ExecParams{Language: "node", Timeout: 10 * time.Second, Code: `console.log(typeof process, typeof page.goto)`})
	if err != nil || res.Stdout != "undefined function\n" {
		t.Fatalf("node: %+v %v", res, err)
	}
}

// TestSandboxedNodePage: with node enabled, a node program in the sandbox
// drives the session's own page with playwright-core over the session's
// confined DevTools connection: it sees the replayed page, changes it,
// navigates, and the session is where it left it (read back by the
// JavaScript interpreter).
func TestSandboxedNodePage(t *testing.T) {
	sb := testSandbox(t, sandbox.Node)
	srv := site(t)
	m := New(Config{Store: testStore(t), Browser: testPool(t), Runner: sb, Log: testenv.Logger(t)})
	ctx := ctxFor(t, 120*time.Second)
	rec, err := m.Create(ctx, CreateParams{TeamID: team, TTL: time.Minute, ActivityTTL: time.Minute, Replay: &Replay{URL: srv.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Delete(ctx, team, rec.ID)
	res, err := m.Execute(ctx, rec, ExecParams{Language: "node", Timeout: 60 * time.Second, Code: fmt.Sprintf(`
console.log(await page.title(), page.url() === %q, typeof process.pid);
await page.fill('#q', 'boots');
await page.click('#go');
console.log(await page.textContent('#out'));
console.log(browser.contexts().length, context.pages().length);
const r = await page.goto(%q);
console.log(r.status(), await page.title());
`, srv.URL+"/", srv.URL+"/next")})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Killed || res.Stdout != "Shop true number\nsearched boots\n1 1\n200 Next\n" {
		t.Fatalf("node: %+v", res)
	}
	res, err = m.Execute(ctx, rec, ExecParams{Language: "javascript", Timeout: 10 * time.Second, Code: `console.log(await page.title(), await page.evaluate(() => document.querySelector('h1').textContent))`})
	if err != nil || res.Stdout != "Next second page\n" {
		t.Fatalf("the session after the program: %+v %v", res, err)
	}
}

// startSignal is a Runner (the real sandbox) that tells when a run
// starts.
type startSignal struct {
	Runner
	started chan string // the code of each run started
}

func (s startSignal) Run(ctx context.Context, sp sandbox.Spec) (sandbox.Result, error) {
	select {
	case s.started <- sp.Code:
	default: // nobody counts any more
	}
	return s.Runner.Run(ctx, sp)
}

// teamB is a second team (runner tests).
const teamB = "0195e0a0-0000-7000-8000-00000000000b"

// saturate keeps team's session of m running n `sleep` programs of
// sleep seconds each (one after another in n goroutines) until ctx ends;
// it returns how many of them ended before ctx did.
func saturate(ctx context.Context, t testing.TB, m *Manager, rec store.InteractSession, n, sleep int) (ended *atomic.Int64, wait func()) {
	ended = &atomic.Int64{}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for ctx.Err() == nil {
				res, err := m.Execute(ctx, rec, ExecParams{Language: "bash", Code: fmt.Sprintf("sleep %d", sleep), Timeout: time.Duration(sleep+10) * time.Second})
				if ctx.Err() != nil {
					return
				}
				if err != nil || res.ExitCode != 0 {
					t.Errorf("the saturating program: %+v %v", res, err)
					return
				}
				ended.Add(1)
			}
		})
	}
	return ended, wg.Wait
}

// TestRunnersSharedBetweenTeams: with one team keeping more long
// programs going than there are code runners, another team's short
// program runs at once, while every program of the first is still
// running (before, it waited for one of them to end: 18.8 s behind four
// `sleep 20`).
func TestRunnersSharedBetweenTeams(t *testing.T) {
	sig := startSignal{Runner: testSandbox(t, sandbox.Bash), started: make(chan string, 64)}
	m := New(Config{Store: testStore(t), Browser: testPool(t), Runner: sig, Log: testenv.Logger(t)})
	ctx := ctxFor(t, testenv.Patient(120*time.Second))
	recA, err := m.Create(ctx, CreateParams{TeamID: team, TTL: time.Minute, ActivityTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Delete(context.WithoutCancel(ctx), team, recA.ID)
	recB, err := m.Create(ctx, CreateParams{TeamID: teamB, TTL: time.Minute, ActivityTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Delete(context.WithoutCancel(ctx), teamB, recB.ID)

	slots := max(2, 2*runtime.NumCPU())
	aCtx, stopA := context.WithCancel(ctx)
	ended, wait := saturate(aCtx, t, m, recA, slots+2, 20)
	defer wait()
	defer stopA()
	// Team A holds every runner it may (the rest of its programs wait).
	for range m.runners.Stats().MaxPerKey {
		<-sig.started
	}
	res, err := m.Execute(ctx, recB, ExecParams{Language: "bash", Code: "echo b", Timeout: 20 * time.Second})
	if err != nil || res.Stdout != "b\n" {
		t.Fatalf("team B: %+v %v", res, err)
	}
	if n := ended.Load(); n != 0 {
		t.Fatalf("team B's program ran only after %d of team A's ended", n)
	}
	if held, waiting := m.runners.Held(team); held != m.runners.Stats().MaxPerKey || waiting == 0 {
		t.Errorf("team A holds %d runners, %d waiting; want %d and some waiting", held, waiting, m.runners.Stats().MaxPerKey)
	}
}

// BenchmarkRunnersOtherTeam is another team's `echo` while one team
// keeps more `sleep 20` programs going than there are code runners: the
// other team's wait under saturation.
func BenchmarkRunnersOtherTeam(b *testing.B) {
	sig := startSignal{Runner: testSandbox(b, sandbox.Bash), started: make(chan string, 1024)}
	m := New(Config{Store: testStore(b), Browser: testPool(b), Runner: sig, Log: testenv.Logger(b)})
	ctx := b.Context()
	recA, err := m.Create(ctx, CreateParams{TeamID: team, TTL: time.Hour, ActivityTTL: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	recB, err := m.Create(ctx, CreateParams{TeamID: teamB, TTL: time.Hour, ActivityTTL: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	aCtx, stopA := context.WithCancel(ctx)
	_, wait := saturate(aCtx, b, m, recA, max(2, 2*runtime.NumCPU())+2, 20)
	defer wait()
	defer stopA()
	for range m.runners.Stats().MaxPerKey {
		<-sig.started // team A holds the runners it may
	}
	for b.Loop() {
		res, err := m.Execute(ctx, recB, ExecParams{Language: "bash", Code: "echo b", Timeout: time.Minute})
		if err != nil || res.Stdout != "b\n" {
			b.Fatalf("team B: %+v %v", res, err)
		}
	}
}
