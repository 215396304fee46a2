package interact

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/firegate/firegate/internal/actions"
)

// Code runs in a child process.
//
// goja cannot bound the memory or the time of its built-ins (a single
// 'x'.repeat(2**30), a fill of a huge sparse array or a backtracking
// regular expression runs to its end whatever the interrupt), so each run
// is a child process of the server's own binary, started with only
// ChildEnv in its environment. Before reading the code it limits its heap
// (the Go memory limit and the watchdog of runJS) and its writable memory
// (RLIMIT_DATA, twice the heap limit plus childDataMargin: past it the
// child dies, not the server), and it drives the session's page by asking
// the parent over its stdin and stdout (one JSON message a line). It stops
// the code itself at the timeout; the parent kills it childGrace later
// whatever it is doing. A child that dies is reported killed. The server
// binary and the test binaries that run code call RunChildIfRequested
// first thing.

// ChildEnv is the variable that makes the binary a code runner.
const ChildEnv = "FIREGATE_INTERACT_JS_CHILD"

// childDataMargin is the writable private memory (RLIMIT_DATA) a child
// may use beyond its heap limit: the Go runtime's own structures, stacks,
// and a garbage collection's headroom.
const childDataMargin = 256 << 20

// childStart is what the parent sends first.
type childStart struct {
	Code      string `json:"code"`
	TimeoutMS int64  `json:"timeoutMs"`
	MemLimit  uint64 `json:"memLimit"`
}

// childMsg is a child's request (Op) or its final result (Done).
type childMsg struct {
	ID   int64            `json:"id,omitempty"`
	Op   string           `json:"op,omitempty"`
	URL  string           `json:"url,omitempty"`
	Acts []actions.Action `json:"actions,omitempty"`
	Text string           `json:"text,omitempty"`
	Full bool             `json:"full,omitempty"`
	Done *ExecResult      `json:"done,omitempty"`
}

// childReply answers a request.
type childReply struct {
	ID     int64           `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// RunChildIfRequested runs a code runner and exits when ChildEnv is set;
// otherwise it returns at once.
func RunChildIfRequested() {
	if os.Getenv(ChildEnv) != "1" {
		return
	}
	os.Exit(childMain(os.Stdin, os.Stdout))
}

// childMain reads the start message, limits itself, runs the code against
// a page served by the parent and writes the result.
func childMain(in io.Reader, out io.Writer) int {
	r := bufio.NewReaderSize(in, 1<<16)
	var start childStart
	line, err := r.ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &start) != nil {
		return 2
	}
	if start.MemLimit > 0 {
		debug.SetMemoryLimit(int64(start.MemLimit))
		if !raceBuild {
			lim := 2*start.MemLimit + childDataMargin
			_ = syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: lim, Max: lim})
		}
	}
	p := &rpcPage{r: r, w: json.NewEncoder(out)}
	res := runJS(context.Background(), p, start.Code, time.Duration(start.TimeoutMS)*time.Millisecond, start.MemLimit)
	if err := p.w.Encode(childMsg{Done: &res}); err != nil {
		return 2
	}
	return 0
}

// rpcPage is the child's Page: every call is a request to the parent.
type rpcPage struct {
	mu   sync.Mutex
	r    *bufio.Reader
	w    *json.Encoder
	next int64
}

func (p *rpcPage) call(m childMsg, out any) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	m.ID = p.next
	if err := p.w.Encode(m); err != nil {
		return err
	}
	line, err := p.r.ReadBytes('\n')
	if err != nil {
		return err
	}
	var rep childReply
	if err := json.Unmarshal(line, &rep); err != nil {
		return err
	}
	if rep.Error != "" {
		return errors.New(rep.Error)
	}
	if out != nil && len(rep.Result) > 0 {
		return json.Unmarshal(rep.Result, out)
	}
	return nil
}

func (p *rpcPage) Goto(_ context.Context, url string) (int, error) {
	var status int
	err := p.call(childMsg{Op: "goto", URL: url}, &status)
	return status, err
}

func (p *rpcPage) Do(_ context.Context, list ...actions.Action) (actions.Results, error) {
	return actions.Results{}, p.call(childMsg{Op: "do", Acts: list}, nil)
}

func (p *rpcPage) Evaluate(_ context.Context, script string) (actions.JSReturn, error) {
	var v actions.JSReturn
	err := p.call(childMsg{Op: "evaluate", Text: script}, &v)
	return v, err
}

func (p *rpcPage) Content(_ context.Context) (actions.Scrape, error) {
	var s actions.Scrape
	err := p.call(childMsg{Op: "content"}, &s)
	return s, err
}

func (p *rpcPage) Screenshot(_ context.Context, full bool) ([]byte, error) {
	var b []byte
	err := p.call(childMsg{Op: "screenshot", Full: full}, &b)
	return b, err
}

// childGrace is how long after the timeout a child still running is
// killed.
const childGrace = 2 * time.Second

// maxChildLine bounds a message from the child (a request or the result:
// two outputs of MaxOutput, JSON-escaped).
const maxChildLine = 16 * MaxOutput

// runChild runs code in a child process against page for at most timeout.
func runChild(ctx context.Context, page Page, code string, timeout time.Duration, memLimit uint64) (ExecResult, error) {
	self, err := os.Executable()
	if err != nil {
		return ExecResult{}, fmt.Errorf("interact: find the server binary: %w", err)
	}
	// The child stops the code itself at the timeout and reports what it
	// printed; the parent kills it a little later whatever it is doing.
	ctx, cancel := context.WithTimeout(ctx, timeout+childGrace)
	defer cancel()
	cmd := exec.Command(self)
	cmd.Env = []string{ChildEnv + "=1", "GOMAXPROCS=1", "GOTRACEBACK=none"}
	cmd.Dir = os.TempDir()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return ExecResult{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return ExecResult{}, err
	}
	if err := cmd.Start(); err != nil {
		return ExecResult{}, fmt.Errorf("interact: start the code runner: %w", err)
	}
	// The deadline kills the child whatever it is doing.
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Kill() })
	defer stop()
	result, perr := serveChild(ctx, page, stdin, stdout, childStart{Code: code, TimeoutMS: timeout.Milliseconds(), MemLimit: memLimit})
	_ = stdin.Close()
	_ = cmd.Process.Kill() // it has said all it will say
	werr := cmd.Wait()
	if perr == nil && result != nil {
		return *result, nil
	}
	// No result: the child was killed (the timeout, its memory limit) or
	// failed.
	res := ExecResult{ExitCode: exitKilled, Killed: true}
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.Error = fmt.Sprintf("killed: timed out after %s", timeout)
	case ctx.Err() != nil:
		res.Error = "killed: cancelled"
	default:
		res.Error = fmt.Sprintf("killed: the code runner stopped (memory limit of %d MB reached, or a crash: %v)", memLimit>>20, werr)
	}
	res.Stderr = res.Error + "\n"
	return res, nil
}

// serveChild sends the start message and answers the child's requests
// until its result arrives.
func serveChild(ctx context.Context, page Page, stdin io.Writer, stdout io.Reader, start childStart) (*ExecResult, error) {
	enc := json.NewEncoder(stdin)
	if err := enc.Encode(start); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 1<<16), maxChildLine)
	for sc.Scan() {
		var m childMsg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return nil, fmt.Errorf("interact: bad message from the code runner: %w", err)
		}
		if m.Done != nil {
			return m.Done, nil
		}
		rep := childReply{ID: m.ID}
		var v any
		var err error
		switch m.Op {
		case "goto":
			v, err = page.Goto(ctx, m.URL)
		case "do":
			if len(m.Acts) > 100 {
				err = errors.New("too many actions")
			} else {
				_, err = page.Do(ctx, m.Acts...)
			}
		case "evaluate":
			v, err = evaluateBounded(ctx, page, "page.evaluate", m.Text)
		case "content":
			v, err = contentBounded(ctx, page)
		case "screenshot":
			v, err = page.Screenshot(ctx, m.Full)
		default:
			err = fmt.Errorf("unknown operation %q", m.Op)
		}
		if err != nil {
			rep.Error = errorText(err)
		} else if rep.Result, err = json.Marshal(v); err != nil {
			rep.Error = err.Error()
		}
		if err := enc.Encode(rep); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, io.ErrUnexpectedEOF
}

// errorText is what the code sees of a page error: an action's reason, or
// the error's text.
func errorText(err error) string {
	var ae *actions.Error
	if errors.As(err, &ae) {
		return ae.Reason
	}
	return err.Error()
}

// MaxPageValue bounds what code reads from the page in one call
// (page.evaluate, page.content, url, title): the length of the value's
// JSON, measured in the page before the value leaves it.
const MaxPageValue = 8 << 20

// boundedScript evaluates a script (its source, a JSON string: never
// parsed as part of this wrapper's text) in the page as Evaluate does (an
// expression or statements, else the body of an async function when it
// uses return or await), awaits its value, and returns a small object
// instead of the value: {t: its type, j: its JSON} when that JSON is at
// most max characters long, {t, u: its text} for a number or bigint that
// JSON has no form for, {t} without JSON, or {t: "error", e: why} when it
// threw, rejected, or its JSON is longer than max. Only primitive strings
// of bounded length leave the page whatever the page's scripts have
// redefined (a string's length, typeof and the + of numbers and strings
// cannot be changed). eval of data runs under the page's CSP because
// Runtime.evaluate allows it (allowUnsafeEvalBlockedByCSP defaults to true).
const boundedScript = `(async (src, what, max) => {
const fail = (e) => {
	let m = "an exception";
	try {
		if (e !== null && typeof e === "object" && typeof e.message === "string") {
			const n = typeof e.name === "string" && e.name !== "" ? e.name : "Error";
			m = e.message === "" ? n : n + ": " + e.message;
		} else if (typeof e === "string") {
			m = "uncaught \"" + e + "\"";
		} else {
			m = "uncaught " + e;
		}
	} catch (_) {}
	if (typeof m !== "string") m = "an exception";
	if (m.length > 2000) m = "an error message of " + m.length + " characters";
	return {t: "error", e: "script error: " + m};
};
let v;
try {
	try {
		v = (0, eval)(src);
	} catch (e) {
		if (!(e instanceof SyntaxError) || !/Illegal return|await/.test(e.message)) throw e;
		v = (0, eval)("(async () => {\n" + src + "\n})()");
	}
	v = await v;
} catch (e) {
	return fail(e);
}
const t = typeof v;
if (t === "number" && (v !== v || v === Infinity || v === -Infinity || (v === 0 && 1 / v < 0))) return {t, u: v === 0 ? "-0" : "" + v};
if (t === "bigint") return {t, u: v + "n"};
let j;
try {
	j = JSON.stringify(v);
} catch (e) {
	return fail(e);
}
if (typeof j !== "string") return {t};
if (j.length > max) return {t: "error", e: what + ": the result is " + j.length + " characters of JSON, more than the limit of " + max + " (" + (max / 1048576) + " MiB)"};
return {t, j};
})(%s, %s, %d)`

// evaluateBounded runs script in the page as page.Evaluate does, but the
// value is measured in the page and refused past MaxPageValue (an error
// naming the limit) before it is sent: the server never reads more than
// that of it. The value is its JSON (a json.RawMessage).
func evaluateBounded(ctx context.Context, page Page, what, script string) (actions.JSReturn, error) {
	src, err := json.Marshal(script)
	if err != nil {
		return actions.JSReturn{}, err
	}
	name, _ := json.Marshal(what) // cannot fail: a string
	r, err := page.Evaluate(ctx, fmt.Sprintf(boundedScript, src, name, MaxPageValue))
	if err != nil {
		return actions.JSReturn{}, err
	}
	o, _ := r.Value.(map[string]any)
	t, _ := o["t"].(string)
	switch {
	case t == "":
		return actions.JSReturn{}, fmt.Errorf("%s: the page did not answer as expected", what)
	case t == "error":
		e, _ := o["e"].(string)
		first, _, _ := strings.Cut(e, "\n")
		return actions.JSReturn{}, errors.New(first)
	}
	v := actions.JSReturn{Type: t}
	if u, ok := o["u"].(string); ok {
		v.Value = u
	} else if j, ok := o["j"].(string); ok {
		if !json.Valid([]byte(j)) {
			return actions.JSReturn{}, fmt.Errorf("%s: the result is not JSON", what)
		}
		v.Value = json.RawMessage(j)
	}
	return v, nil
}

// contentBounded is the page's URL and HTML, at most MaxPageValue of it.
func contentBounded(ctx context.Context, page Page) (actions.Scrape, error) {
	v, err := evaluateBounded(ctx, page, "page.content", `({url: location.href, html: document.documentElement ? document.documentElement.outerHTML : ""})`)
	if err != nil {
		return actions.Scrape{}, err
	}
	var doc struct {
		URL  string `json:"url"`
		HTML string `json:"html"`
	}
	raw, _ := v.Value.(json.RawMessage)
	if err := json.Unmarshal(raw, &doc); err != nil {
		return actions.Scrape{}, fmt.Errorf("page.content: %w", err)
	}
	return actions.Scrape{URL: doc.URL, HTML: doc.HTML}, nil
}
