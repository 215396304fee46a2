package mediaconv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// limitScript runs a command under an address-space limit (KiB, $1), a
// CPU-time limit (seconds, $2) and a file-size limit (512-byte blocks, $3,
// as /bin/sh's ulimit -f counts them), the limits the PDF tools run under.
// exec keeps the pid, so a context kill reaches the tool itself.
const limitScript = `ulimit -v "$1" && ulimit -t "$2" && ulimit -f "$3" && shift 3 && exec "$@"`

// limits are the resource limits of one tool run.
type limits struct {
	memoryBytes int64 // address space
	cpuSeconds  int   // CPU time, capped further by the deadline
	fileBytes   int64 // the largest file the tool may write
}

// runResult is what a finished tool run wrote.
type runResult struct {
	stdout []byte
	stderr string
}

// maxProbeOutput bounds what ffprobe may print: its JSON for a file with
// many streams stays far below.
const maxProbeOutput = 1 << 20

// run runs tool with args under lim, with an emptied environment plus env,
// killed when ctx ends. A tool stopped by a limit gives a *LimitError naming
// it; other failures an error with the first line of its standard error.
func run(ctx context.Context, lim limits, env []string, tool string, args ...string) (*runResult, error) {
	cpu := lim.cpuSeconds
	if dl, ok := ctx.Deadline(); ok {
		cpu = max(1, min(cpu, int(math.Ceil(time.Until(dl).Seconds()))*threads+1))
	}
	kb := max(1, lim.memoryBytes>>10)
	blocks := max(1, (lim.fileBytes+511)/512)
	argv := append([]string{"-c", limitScript, "sh", strconv.FormatInt(kb, 10), strconv.Itoa(cpu), strconv.FormatInt(blocks, 10), tool}, args...)
	cmd := exec.CommandContext(ctx, "/bin/sh", argv...)
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin"}, env...)
	cmd.WaitDelay = 2 * time.Second
	stdout := &capWriter{max: maxProbeOutput}
	stderr := &capWriter{max: 4096}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr
	}
	name := filepath.Base(tool)
	if err == nil {
		if stdout.over {
			return nil, fmt.Errorf("mediaconv: %s printed more than %d bytes", name, maxProbeOutput)
		}
		return &runResult{stdout: stdout.buf.Bytes(), stderr: stderr.String()}, nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			switch ws.Signal() {
			case syscall.SIGXCPU, syscall.SIGKILL:
				return nil, &LimitError{Kind: ErrTooLarge, Msg: fmt.Sprintf("Converting the media took more than its CPU limit of %d s.", cpu)}
			case syscall.SIGXFSZ:
				return nil, &LimitError{Kind: ErrTooLarge, Msg: fmt.Sprintf("The converted media would be larger than its file limit of %d bytes (MEDIA_MAX_BYTES).", lim.fileBytes)}
			}
		}
		if outOfMemory(stderr.String()) {
			return nil, &LimitError{Kind: ErrTooLarge, Msg: fmt.Sprintf("Converting the media needed more than its memory limit of %d MB.", kb>>10)}
		}
	}
	return nil, fmt.Errorf("mediaconv: %s: %v: %s", name, err, firstLine(stderr.String()))
}

// outOfMemory reports an allocation failure in the messages of ffmpeg, its
// libraries or the loader.
func outOfMemory(stderr string) bool {
	for _, s := range []string{"Cannot allocate memory", "Out of memory", "malloc of size", "failed to map segment"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// firstLine is the first non-empty line of s, at most 300 bytes.
func firstLine(s string) string {
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

// capWriter keeps the first max bytes written to it and notes more.
type capWriter struct {
	buf  bytes.Buffer
	max  int
	over bool
}

// Write implements io.Writer.
func (w *capWriter) Write(p []byte) (int, error) {
	room := w.max - w.buf.Len()
	if room < len(p) {
		w.over = true
	}
	if room > 0 {
		w.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// String returns what was kept.
func (w *capWriter) String() string { return w.buf.String() }
