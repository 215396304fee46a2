// Package toolrun runs an external tool (pdftotext, pdftoppm, tesseract,
// ffmpeg, ffprobe, yt-dlp) as a child process under resource limits:
// address space, CPU time and file size, set by the shell's ulimit before
// the tool is exec'd (so a kill of the context reaches the tool itself),
// with what it prints bounded and the run killed when its context ends.
package toolrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// limitScript sets the address-space limit (KiB, $1), the CPU-time limit
// (seconds, $2) and the file-size limit (512-byte blocks, $3, as /bin/sh's
// ulimit -f counts them; "unlimited" for none), then execs the tool.
const limitScript = `ulimit -v "$1" && ulimit -t "$2" && ulimit -f "$3" && shift 3 && exec "$@"`

// Limits are the resource limits of one run.
type Limits struct {
	// MemoryBytes bounds the tool's address space.
	MemoryBytes int64
	// CPUSeconds bounds its CPU time (at least 1); callers cap it by
	// what is left of their deadline.
	CPUSeconds int
	// FileBytes bounds the size of any file it writes; 0 means no bound.
	FileBytes int64
	// MaxStdout bounds what it prints; past it the run is killed and
	// fails with a *LimitError of LimitOutput. 0 means 1 MiB.
	MaxStdout int64
}

// Run is one run of a tool.
type Run struct {
	// Tool is the program's path; Args its arguments.
	Tool string
	Args []string
	// Env, when non-nil, is the whole environment (PATH included);
	// nil inherits the server's.
	Env []string
	// Stdin, when set, is the tool's standard input.
	Stdin io.Reader
}

// Result is what a finished run printed.
type Result struct {
	Stdout []byte
	// Stderr is its first 4 KiB of standard error.
	Stderr string
}

// Which limit stopped a run.
const (
	LimitCPU    = "cpu"
	LimitMemory = "memory"
	LimitFile   = "file"
	LimitOutput = "output"
)

// LimitError is a run stopped by one of its limits: Limit names which,
// Value is that limit (seconds, bytes).
type LimitError struct {
	Tool  string
	Limit string
	Value int64
}

func (e *LimitError) Error() string {
	switch e.Limit {
	case LimitCPU:
		return fmt.Sprintf("%s stopped at its CPU limit of %d s", e.Tool, e.Value)
	case LimitMemory:
		return fmt.Sprintf("%s stopped at its memory limit of %d MB", e.Tool, e.Value>>20)
	case LimitFile:
		return fmt.Sprintf("%s would write a file larger than its limit of %d bytes", e.Tool, e.Value)
	default:
		return fmt.Sprintf("%s printed more than %d bytes", e.Tool, e.Value)
	}
}

// Exec runs r under lim until it exits or ctx ends. A run stopped by a
// limit fails with a *LimitError; a cancelled one with ctx's error; any
// other failure names the tool, its exit and the first line of its
// standard error (for the caller to prefix with its package). A tool that reports a failed allocation fails as the
// memory limit even when it exits 0 (poppler does).
func Exec(ctx context.Context, lim Limits, r Run) (*Result, error) {
	name := filepath.Base(r.Tool)
	kb := max(1, lim.MemoryBytes>>10)
	blocks := "unlimited"
	if lim.FileBytes > 0 {
		blocks = strconv.FormatInt(max(1, (lim.FileBytes+511)/512), 10)
	}
	maxOut := lim.MaxStdout
	if maxOut <= 0 {
		maxOut = 1 << 20
	}
	argv := append([]string{"-c", limitScript, "sh", strconv.FormatInt(kb, 10), strconv.Itoa(max(1, lim.CPUSeconds)), blocks, r.Tool}, r.Args...)
	cmd := exec.CommandContext(ctx, "/bin/sh", argv...)
	if r.Env != nil {
		cmd.Env = r.Env
	}
	cmd.Stdin = r.Stdin
	cmd.WaitDelay = 2 * time.Second
	stderr := &capWriter{max: 4096}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("toolrun: %s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("toolrun: %s: %w", name, err)
	}
	out, rerr := io.ReadAll(io.LimitReader(stdout, maxOut+1))
	if int64(len(out)) > maxOut {
		_ = cmd.Process.Kill() // the run fails either way; Wait reaps it
		_ = cmd.Wait()
		return nil, &LimitError{Tool: name, Limit: LimitOutput, Value: maxOut}
	}
	werr := cmd.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if werr == nil && rerr != nil {
		werr = rerr
	}
	if outOfMemory(stderr.String()) {
		return nil, &LimitError{Tool: name, Limit: LimitMemory, Value: kb << 10}
	}
	if werr == nil {
		return &Result{Stdout: out, Stderr: stderr.String()}, nil
	}
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			switch ws.Signal() {
			case syscall.SIGXCPU, syscall.SIGKILL:
				return nil, &LimitError{Tool: name, Limit: LimitCPU, Value: int64(max(1, lim.CPUSeconds))}
			case syscall.SIGXFSZ:
				return nil, &LimitError{Tool: name, Limit: LimitFile, Value: lim.FileBytes}
			}
		}
	}
	return nil, fmt.Errorf("%s: %v: %s", name, werr, FirstLine(stderr.String()))
}

// outOfMemory reports an allocation failure in the messages of the tools,
// their libraries or the loader.
func outOfMemory(stderr string) bool {
	for _, s := range []string{"Out of memory", "Cannot allocate memory", "bad_alloc", "malloc of size", "failed to map segment"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// FirstLine is the first non-empty line of s, at most 300 bytes, or "no
// message".
func FirstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			if len(line) > 300 {
				line = line[:300]
			}
			return line
		}
	}
	return "no message"
}

// capWriter keeps the first max bytes written to it.
type capWriter struct {
	buf bytes.Buffer
	max int
}

// Write implements io.Writer.
func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// String returns what was kept.
func (w *capWriter) String() string { return w.buf.String() }
