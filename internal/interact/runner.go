package interact

import (
	"context"
	"fmt"
	"net/http"

	"github.com/firegate/firegate/internal/fairshare"
	"github.com/firegate/firegate/internal/sandbox"
)

// Programs.
//
// node, python and bash programs run in a bubblewrap sandbox
// (internal/sandbox) when the operator enables their language
// (INTERACT_RUNTIMES), never in the server's own environment; a language
// not enabled answers ErrLanguage (node then runs in the JavaScript
// interpreter, as javascript always does). The program reaches the
// session's page through a DevTools connection confined to the session
// (CDP_URL in its environment; node programs get page, browser and
// context from playwright-core).

// newRunners is the pool of code runners (a JavaScript child process or a
// sandbox each) of a machine of cpus CPUs: two per CPU, shared between
// teams by internal/fairshare. A team may use the runners others leave
// idle but never the last quarter of them (at least one): another team's
// first program starts at once however many long programs the first
// keeps running, and a freed runner goes to the waiting team that holds
// the fewest.
func newRunners(cpus int) *fairshare.Pool {
	slots := max(2, 2*cpus)
	p, err := fairshare.New(fairshare.Config{Slots: slots, MaxPerKey: slots - max(1, slots/4)})
	if err != nil {
		panic(err) // slots >= 2
	}
	return p
}

// Runner runs programs in a sandbox; *sandbox.Sandbox implements it.
type Runner interface {
	Enabled(lang string) bool
	Run(ctx context.Context, sp sandbox.Spec) (sandbox.Result, error)
}

// RuntimesEnv is the setting that enables the sandboxed languages.
const RuntimesEnv = "INTERACT_RUNTIMES"

// sandboxed reports whether code in lang runs in the sandbox.
func (m *Manager) sandboxed(lang string) bool {
	switch lang {
	case sandbox.Node, sandbox.Python, sandbox.Bash:
		return m.cfg.Runner != nil && m.cfg.Runner.Enabled(lang)
	}
	return false
}

// CheckLanguage returns ErrLanguage for a language this server does not
// run.
func (m *Manager) CheckLanguage(lang string) error {
	switch {
	case lang == "" || lang == "node" || lang == "javascript" || m.sandboxed(lang):
		return nil
	}
	return fmt.Errorf("%w: %q programs are not run by this server: the operator has not enabled them in %s (a bubblewrap sandbox per run); send language \"node\" (or \"javascript\") with code that uses the page object (goto, click, fill, type, press, waitForSelector, evaluate, content, screenshot, url, title)",
		ErrLanguage, lang, RuntimesEnv)
}

// sandboxMemory is the writable memory of each process of a sandboxed
// run: twice the JavaScript interpreter's heap allowance.
func (m *Manager) sandboxMemory() int64 { return 2 * int64(m.jsMemory()) }

// runSandboxed runs a program of the session of l in the sandbox.
func (m *Manager) runSandboxed(ctx context.Context, l *live, p ExecParams) (ExecResult, error) {
	sp := sandbox.Spec{Language: p.Language, Code: p.Code, Timeout: p.Timeout, Limits: sandbox.Limits{Memory: m.sandboxMemory(), Output: MaxOutput}}
	if h := m.sessionCDP(l); h != nil {
		sp.CDPHandler, sp.CDPURL = h, "ws://127.0.0.1:9222/"
	}
	res, err := m.cfg.Runner.Run(ctx, sp)
	if err != nil {
		return ExecResult{}, unavailable("The sandbox could not run the program.", err)
	}
	m.log.InfoContext(ctx, "interact program ran", "session_id", l.rec.ID, "language", p.Language, "exit_code", res.ExitCode, "killed", res.Killed)
	return ExecResult{Stdout: res.Stdout, Stderr: res.Stderr, ExitCode: res.ExitCode, Killed: res.Killed, Truncated: res.Truncated, Error: res.Reason}, nil
}

// sessionCDP returns the handler of a DevTools connection confined to
// the session of l (as its cdpUrl serves), or nil when the browser has no
// DevTools endpoint.
func (m *Manager) sessionCDP(l *live) http.Handler {
	m.mu.Lock()
	has := l.cdpToken != ""
	m.mu.Unlock()
	if !has {
		return nil
	}
	return m.CDPHandler(l.rec.TeamID, l.rec.ID)
}
