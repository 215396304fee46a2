package interact

import (
	"context"
	"fmt"
	"net/http"

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
