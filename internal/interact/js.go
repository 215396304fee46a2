package interact

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"

	"github.com/firegate/firegate/internal/actions"
	"github.com/firegate/firegate/internal/browser"
	"github.com/firegate/firegate/internal/store"
)

// Code.
//
// Code runs in goja, a JavaScript interpreter, in a child process of the
// server (see child.go),
// with no module loader, file system, network, timers or process access:
// its only way out is the page object, bound to the session's tab, whose
// requests pass the session's network guard. The code is the body of an
// async function (so top-level await works); page methods block and
// return values, which await passes through. Output goes to stdout and
// stderr through console; the result is stdout. A thrown error or a
// rejected promise exits 1 with its text on stderr; the timeout (or the
// memory watchdog) interrupts the interpreter and the page operation in
// progress: killed, exit 137.

// ExecParams is code to run in a session.
type ExecParams struct {
	Code     string
	Language string // javascript; node, python and bash when sandboxed (see runner.go), else node as javascript
	Timeout  time.Duration
}

// ExecResult is the outcome of code.
type ExecResult struct {
	Stdout    string
	Stderr    string
	ExitCode  int
	Killed    bool
	Truncated bool   // stdout or stderr reached MaxOutput
	Error     string // why it failed, "" when it exited 0
}

// Limits of code runs.
const (
	// MaxOutput bounds each of stdout and stderr.
	MaxOutput = 1 << 20
	// maxCallStack bounds the interpreter's call depth.
	maxCallStack = 2000
	// DefaultJSMemory is how much the heap may grow while code runs
	// before it is killed.
	DefaultJSMemory = 256 << 20
	// memoryPoll is how often the memory watchdog samples the heap.
	memoryPoll = 10 * time.Millisecond
	exitKilled = 137
)

// Execute runs code in the session of rec and records the activity.
func (m *Manager) Execute(ctx context.Context, rec store.InteractSession, p ExecParams) (ExecResult, error) {
	if err := m.CheckLanguage(p.Language); err != nil {
		return ExecResult{}, err
	}
	l, err := m.acquire(ctx, rec)
	if err != nil {
		return ExecResult{}, err
	}
	m.touch(ctx, l)
	defer m.touch(ctx, l)
	defer l.kickRecorder() // a snapshot of what the code left
	release, err := m.runners.Acquire(ctx, rec.TeamID)
	if err != nil {
		return ExecResult{}, err
	}
	defer release()
	if m.sandboxed(p.Language) {
		return m.runSandboxed(ctx, l, p)
	}
	return runChild(ctx, l.sess, p.Code, p.Timeout, m.jsMemory())
}

func (m *Manager) jsMemory() uint64 {
	if m.cfg.JSMemory > 0 {
		return uint64(m.cfg.JSMemory)
	}
	return DefaultJSMemory
}

// Page is what code drives; *browser.Session implements it.
type Page interface {
	Goto(ctx context.Context, url string) (int, error)
	Do(ctx context.Context, list ...actions.Action) (actions.Results, error)
	Evaluate(ctx context.Context, script string) (actions.JSReturn, error)
	Content(ctx context.Context) (actions.Scrape, error)
	Screenshot(ctx context.Context, fullPage bool) ([]byte, error)
}

var _ Page = (*browser.Session)(nil)

// output is a bounded text buffer.
type output struct {
	mu        sync.Mutex
	b         strings.Builder
	truncated bool
}

func (o *output) write(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if left := MaxOutput - o.b.Len(); len(s) > left {
		s, o.truncated = s[:max(left, 0)], true
	}
	o.b.WriteString(s)
}

// runJS runs code against page for at most timeout.
func runJS(ctx context.Context, page Page, code string, timeout time.Duration, memLimit uint64) ExecResult {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	vm := goja.New()
	vm.SetMaxCallStackSize(maxCallStack)
	var stdout, stderr output
	var killMu sync.Mutex
	killReason := ""
	kill := func(reason string) {
		killMu.Lock()
		if killReason == "" {
			killReason = reason
		}
		killMu.Unlock()
		vm.Interrupt(reason)
		cancel()
	}
	stopTimer := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			kill(fmt.Sprintf("timed out after %s", timeout))
		} else {
			kill("cancelled")
		}
	})
	defer stopTimer()
	stopWatch := watchMemory(ctx, memLimit, func() { kill(fmt.Sprintf("used more than %d MB of memory", memLimit>>20)) })
	defer stopWatch()

	b := &binder{vm: vm, ctx: ctx, page: page}
	if err := b.install(&stdout, &stderr); err != nil {
		return ExecResult{ExitCode: 1, Stderr: err.Error(), Error: err.Error()}
	}
	res := ExecResult{}
	v, err := vm.RunScript("code.js", "(async () => {\n"+code+"\n})()")
	if err == nil {
		if p, ok := v.Export().(*goja.Promise); ok {
			switch p.State() {
			case goja.PromiseStateRejected:
				err = &thrown{text: describe(vm, p.Result())}
			case goja.PromiseStatePending:
				err = &thrown{text: "the code's promise never settled (this sandbox has no timers or events)"}
			}
		}
	}
	killMu.Lock()
	reason := killReason
	killMu.Unlock()
	if reason == "" && ctx.Err() != nil {
		// A page operation saw the deadline before the timer fired.
		reason = fmt.Sprintf("timed out after %s", timeout)
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			reason = "cancelled"
		}
	}
	switch {
	case reason != "":
		res.Killed, res.ExitCode, res.Error = true, exitKilled, "killed: "+reason
		stderr.write("killed: " + reason + "\n")
	case err != nil:
		msg := err.Error()
		var ex *goja.Exception
		if errors.As(err, &ex) {
			msg = describe(vm, ex.Value())
		}
		res.ExitCode, res.Error = 1, msg
		stderr.write(msg + "\n")
	}
	res.Stdout, res.Stderr = stdout.b.String(), stderr.b.String()
	res.Truncated = stdout.truncated || stderr.truncated
	return res
}

// thrown is a rejection of the code's promise.
type thrown struct{ text string }

func (t *thrown) Error() string { return t.text }

// describe renders a thrown value: an Error's stack or message, else its
// string form.
func describe(vm *goja.Runtime, v goja.Value) string {
	if v == nil || goja.IsUndefined(v) {
		return "undefined"
	}
	if o, ok := v.(*goja.Object); ok {
		if s := o.Get("stack"); s != nil && !goja.IsUndefined(s) && s.String() != "" {
			// Frames of the page's Go methods say nothing to the caller.
			var lines []string
			for line := range strings.SplitSeq(strings.TrimRight(s.String(), "\n"), "\n") {
				if !strings.HasSuffix(line, "(native)") {
					lines = append(lines, line)
				}
			}
			return strings.Join(lines, "\n")
		}
		if msg := o.Get("message"); msg != nil && !goja.IsUndefined(msg) {
			name := "Error"
			if n := o.Get("name"); n != nil && !goja.IsUndefined(n) {
				name = n.String()
			}
			return name + ": " + msg.String()
		}
	}
	return formatValue(vm, v)
}

// formatValue renders a console argument: strings as they are, other
// values as JSON where they have one.
func formatValue(vm *goja.Runtime, v goja.Value) string {
	if v == nil || goja.IsUndefined(v) {
		return "undefined"
	}
	if goja.IsNull(v) {
		return "null"
	}
	if s, ok := v.Export().(string); ok {
		return s
	}
	if _, ok := goja.AssertFunction(v); ok {
		return "[Function]"
	}
	if o, ok := v.(*goja.Object); ok {
		if msg := o.Get("message"); msg != nil && !goja.IsUndefined(msg) && o.Get("stack") != nil {
			return describe(vm, v)
		}
	}
	stringify, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("stringify"))
	if out, err := stringify(goja.Undefined(), v); err == nil && !goja.IsUndefined(out) {
		return out.String()
	}
	return v.String()
}

// watchMemory calls kill when the heap grows more than limit over its size
// at the start, sampling until the returned stop is called. The heap is
// the process's: other work's growth can count against the code, which
// errs on the safe side.
func watchMemory(ctx context.Context, limit uint64, kill func()) func() {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return func() {}
	}
	base := sample[0].Value.Uint64()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(memoryPoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				metrics.Read(sample)
				if sample[0].Value.Uint64() > base+limit {
					kill()
					return
				}
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// binder installs the globals of a run.
type binder struct {
	vm   *goja.Runtime
	ctx  context.Context
	page Page
}

// throw raises err in the interpreter as an Error.
func (b *binder) throw(err error) {
	msg := err.Error()
	var ae *actions.Error
	if errors.As(err, &ae) {
		msg = ae.Reason
	}
	if b.ctx.Err() != nil {
		msg = "interrupted: " + msg
	}
	panic(b.vm.NewGoError(errors.New(msg)))
}

func (b *binder) install(stdout, stderr *output) error {
	vm := b.vm
	logTo := func(o *output) func(goja.FunctionCall) goja.Value {
		return func(c goja.FunctionCall) goja.Value {
			parts := make([]string, len(c.Arguments))
			for i, a := range c.Arguments {
				parts[i] = formatValue(vm, a)
			}
			o.write(strings.Join(parts, " ") + "\n")
			return goja.Undefined()
		}
	}
	console := vm.NewObject()
	for name, o := range map[string]*output{"log": stdout, "info": stdout, "debug": stdout, "error": stderr, "warn": stderr} {
		if err := console.Set(name, logTo(o)); err != nil {
			return err
		}
	}
	if err := vm.Set("console", console); err != nil {
		return err
	}
	if err := vm.Set("require", func(goja.FunctionCall) goja.Value {
		panic(vm.NewGoError(errors.New("require is not available: code runs in this server's JavaScript sandbox, where the session's page is the global `page` (goto, click, fill, type, press, waitForSelector, evaluate, content, screenshot, url, title); no modules, files, network or processes")))
	}); err != nil {
		return err
	}
	page := vm.NewObject()
	methods := map[string]func(goja.FunctionCall) goja.Value{
		"goto":            b.gotoURL,
		"click":           b.click,
		"fill":            b.fill,
		"type":            b.typeText,
		"press":           b.press,
		"waitForSelector": b.waitForSelector,
		"waitForTimeout":  b.waitForTimeout,
		"evaluate":        b.evaluate,
		"content":         b.content,
		"screenshot":      b.screenshot,
		"url":             b.url,
		"title":           b.title,
	}
	for name, fn := range methods {
		if err := page.Set(name, fn); err != nil {
			return err
		}
	}
	return vm.Set("page", page)
}

// str returns argument i as a string, throwing a TypeError if it is not
// one.
func (b *binder) str(c goja.FunctionCall, i int, what string) string {
	v := c.Argument(i)
	s, ok := v.Export().(string)
	if !ok {
		panic(b.vm.NewTypeError(what + " must be a string"))
	}
	return s
}

// do runs page actions, throwing on failure.
func (b *binder) do(list ...actions.Action) {
	if _, err := b.page.Do(b.ctx, list...); err != nil {
		b.throw(err)
	}
}

func (b *binder) gotoURL(c goja.FunctionCall) goja.Value {
	u := b.str(c, 0, "url")
	status, err := b.page.Goto(b.ctx, u)
	if err != nil {
		b.throw(err)
	}
	resp := b.vm.NewObject()
	_ = resp.Set("status", func(goja.FunctionCall) goja.Value { return b.vm.ToValue(status) })
	_ = resp.Set("ok", func(goja.FunctionCall) goja.Value {
		return b.vm.ToValue(status == 0 || (status >= 200 && status < 300))
	})
	_ = resp.Set("url", func(goja.FunctionCall) goja.Value { return b.vm.ToValue(u) })
	return resp
}

func (b *binder) click(c goja.FunctionCall) goja.Value {
	b.do(actions.Action{Type: actions.TypeClick, Selector: b.str(c, 0, "selector")})
	return goja.Undefined()
}

// focus focuses the first element matching sel, optionally clearing its
// value, throwing when there is none.
func (b *binder) focus(sel string, clear bool) {
	q, _ := json.Marshal(sel) // cannot fail: a string
	script := `(() => { const el = document.querySelector(` + string(q) + `);
if (!el) throw new Error('no element matches selector ' + ` + string(q) + `);
el.focus();`
	if clear {
		script += ` if ('value' in el) { el.value = ''; el.dispatchEvent(new Event('input', {bubbles: true})); }
else if (el.isContentEditable) { el.textContent = ''; }`
	}
	script += ` return true; })()`
	if _, err := b.page.Evaluate(b.ctx, script); err != nil {
		b.throw(err)
	}
}

func (b *binder) fill(c goja.FunctionCall) goja.Value {
	sel, text := b.str(c, 0, "selector"), b.str(c, 1, "value")
	b.focus(sel, true)
	if text != "" {
		b.do(actions.Action{Type: actions.TypeWrite, Text: text})
	}
	return goja.Undefined()
}

func (b *binder) typeText(c goja.FunctionCall) goja.Value {
	sel, text := b.str(c, 0, "selector"), b.str(c, 1, "text")
	b.focus(sel, false)
	if text != "" {
		b.do(actions.Action{Type: actions.TypeWrite, Text: text})
	}
	return goja.Undefined()
}

func (b *binder) press(c goja.FunctionCall) goja.Value {
	sel, key := b.str(c, 0, "selector"), b.str(c, 1, "key")
	b.focus(sel, false)
	b.do(actions.Action{Type: actions.TypePress, Key: key})
	return goja.Undefined()
}

// optTimeout reads {timeout: ms} of argument i, bounding ctx by it.
func (b *binder) optTimeout(c goja.FunctionCall, i int) (context.Context, context.CancelFunc) {
	if o, ok := c.Argument(i).(*goja.Object); ok {
		if t := o.Get("timeout"); t != nil && !goja.IsUndefined(t) {
			if ms := t.ToInteger(); ms > 0 {
				return context.WithTimeout(b.ctx, time.Duration(ms)*time.Millisecond)
			}
		}
	}
	return context.WithCancel(b.ctx)
}

func (b *binder) waitForSelector(c goja.FunctionCall) goja.Value {
	sel := b.str(c, 0, "selector")
	ctx, cancel := b.optTimeout(c, 1)
	defer cancel()
	if _, err := b.page.Do(ctx, actions.Action{Type: actions.TypeWait, Selector: sel}); err != nil {
		if ctx.Err() != nil && b.ctx.Err() == nil {
			panic(b.vm.NewGoError(fmt.Errorf("waitForSelector: timed out waiting for %s", sel)))
		}
		b.throw(err)
	}
	return goja.Undefined()
}

func (b *binder) waitForTimeout(c goja.FunctionCall) goja.Value {
	ms := c.Argument(0).ToInteger()
	if ms <= 0 {
		return goja.Undefined()
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-b.ctx.Done():
		b.throw(b.ctx.Err())
	}
	return goja.Undefined()
}

// evaluate runs a function (its source, called with the JSON of the
// argument) or an expression in the page and returns its JSON value.
func (b *binder) evaluate(c goja.FunctionCall) goja.Value {
	fn := c.Argument(0)
	var script string
	if _, ok := goja.AssertFunction(fn); ok {
		arg := "undefined"
		if len(c.Arguments) > 1 && !goja.IsUndefined(c.Argument(1)) {
			raw, err := json.Marshal(c.Argument(1).Export())
			if err != nil {
				panic(b.vm.NewTypeError("evaluate: the argument must be JSON-serializable: " + err.Error()))
			}
			arg = string(raw)
		}
		script = "(" + functionSource(fn.String()) + ")(" + arg + ")"
	} else {
		script = b.str(c, 0, "evaluate's argument (a function or an expression)")
	}
	v, err := b.page.Evaluate(b.ctx, script)
	if err != nil {
		b.throw(err)
	}
	return jsValue(b.vm, v.Value)
}

// functionSource is the source text of a function as the page must get it.
// goja's text of an arrow function whose body is in parentheses ends
// before the body's closing parenthesis ("() => ({a: 1}" for
// `() => ({a: 1})`, the common way to return an object): that text does
// not parse, so the parentheses it lacks are put back. Text that parses is
// kept as it is.
func functionSource(src string) string {
	if parses("(" + src + ")") {
		return src
	}
	for fixed, i := src, 0; i < 4; i++ {
		fixed += ")"
		if parses("(" + fixed + ")") {
			return fixed
		}
	}
	return src
}

// parses reports whether code is a JavaScript program.
func parses(code string) bool {
	_, err := goja.Compile("", code, true)
	return err == nil
}

// jsValue makes a decoded JSON value a plain JavaScript value, objects with
// their keys in sorted order (the order JSON from Go has everywhere else:
// javascriptReturns, the child's messages). vm.ToValue would wrap a Go map,
// whose keys a script enumerates in Go's random map order: JSON.stringify
// of the same page value differed from run to run.
func jsValue(vm *goja.Runtime, v any) goja.Value {
	switch v := v.(type) {
	case map[string]any:
		o := vm.NewObject()
		for _, k := range slices.Sorted(maps.Keys(v)) {
			// A data property, as JSON.parse makes: "__proto__" is a key.
			_ = o.DefineDataProperty(k, jsValue(vm, v[k]), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
		}
		return o
	case []any:
		items := make([]any, len(v))
		for i, e := range v {
			items[i] = jsValue(vm, e)
		}
		return vm.NewArray(items...)
	default:
		return vm.ToValue(v)
	}
}

func (b *binder) content(goja.FunctionCall) goja.Value {
	doc, err := b.page.Content(b.ctx)
	if err != nil {
		b.throw(err)
	}
	return b.vm.ToValue(doc.HTML)
}

func (b *binder) url(goja.FunctionCall) goja.Value {
	v, err := b.page.Evaluate(b.ctx, "location.href")
	if err != nil {
		b.throw(err)
	}
	s, _ := v.Value.(string)
	return b.vm.ToValue(s)
}

func (b *binder) title(goja.FunctionCall) goja.Value {
	v, err := b.page.Evaluate(b.ctx, "document.title")
	if err != nil {
		b.throw(err)
	}
	s, _ := v.Value.(string)
	return b.vm.ToValue(s)
}

// screenshot returns the PNG, base64-encoded ({fullPage} honoured).
func (b *binder) screenshot(c goja.FunctionCall) goja.Value {
	full := false
	if o, ok := c.Argument(0).(*goja.Object); ok {
		if f := o.Get("fullPage"); f != nil {
			full = f.ToBoolean()
		}
	}
	png, err := b.page.Screenshot(b.ctx, full)
	if err != nil {
		b.throw(err)
	}
	return b.vm.ToValue(base64.StdEncoding.EncodeToString(png))
}
