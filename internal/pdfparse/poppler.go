package pdfparse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// limitScript runs a command under an address-space limit (KiB, $1) and a
// CPU-time limit (seconds, $2). exec keeps the pid, so a context kill
// reaches the tool itself.
const limitScript = `ulimit -v "$1" && ulimit -t "$2" && shift 2 && exec "$@"`

// popplerText reads a PDF the built-in reader cannot open with pdftotext:
// plain text, one page per form feed, paragraphs at blank lines.
func popplerText(b *budget, data []byte, opts Options) (*Result, error) {
	name := opts.Pdftotext
	if name == "" {
		name = "pdftotext"
	}
	tool, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("pdftotext not installed: %w", err)
	}
	dir, err := os.MkdirTemp("", "pdfparse-*")
	if err != nil {
		return nil, fmt.Errorf("pdfparse: temp dir: %w", err)
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "in.pdf")
	if err := os.WriteFile(in, data, 0o600); err != nil {
		return nil, fmt.Errorf("pdfparse: temp file: %w", err)
	}
	args := []string{"-q", "-enc", "UTF-8", "-eol", "unix"}
	if opts.MaxPages > 0 {
		args = append(args, "-l", strconv.Itoa(opts.MaxPages))
	}
	out, err := runLimited(b, tool, append(args, in, "-")...)
	if err != nil {
		return nil, err
	}
	texts := strings.Split(string(out), "\f")
	if len(texts) > 1 && strings.TrimSpace(texts[len(texts)-1]) == "" {
		texts = texts[:len(texts)-1] // a form feed ends every page
	}
	if len(texts) == 0 || strings.TrimSpace(string(out)) == "" && len(texts) <= 1 {
		return nil, errors.New("pdftotext found no pages")
	}
	res := &Result{NumPages: len(texts)}
	if opts.MaxPages == 0 || len(texts) < opts.MaxPages {
		res.TotalPages = len(texts)
	}
	doc := pageJoiner{res: res, opts: &opts}
	for i, text := range texts {
		doc.add(i+1, pageResult{status: StatusOK, source: "text_layer", blocks: plainBlocks(text)})
	}
	res.Markdown = doc.md.String()
	return res, nil
}

// plainBlocks splits plain page text into paragraph blocks, joining the
// lines of a paragraph with spaces.
func plainBlocks(text string) []block {
	var out []block
	for _, para := range strings.Split(text, "\n\n") {
		var words []string
		for _, line := range strings.Split(para, "\n") {
			if line = strings.TrimSpace(strings.Map(cleanRune, line)); line != "" {
				words = append(words, strings.Join(strings.Fields(line), " "))
			}
		}
		if len(words) == 0 {
			continue
		}
		out = append(out, block{kind: "text", label: "paragraph", md: strings.Join(words, " "), conf: 0.5, ocr: -1})
	}
	return out
}

// runLimited runs a tool with the budget's memory, CPU and output limits
// and returns its standard output. The CPU limit is also capped by the
// context deadline, and a done context kills the tool. A tool stopped by a
// limit yields ErrTooLarge.
func runLimited(b *budget, tool string, args ...string) ([]byte, error) {
	cpu := b.lim.ToolCPUSeconds
	if dl, ok := b.ctx.Deadline(); ok {
		cpu = max(1, min(cpu, int(math.Ceil(time.Until(dl).Seconds()))))
	}
	kb := max(1, b.lim.ToolMemoryBytes>>10)
	argv := append([]string{"-c", limitScript, "sh", strconv.FormatInt(kb, 10), strconv.Itoa(cpu), tool}, args...)
	cmd := exec.CommandContext(b.ctx, "/bin/sh", argv...)
	cmd.WaitDelay = 2 * time.Second
	stderr := &capWriter{max: 4096}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("pdfparse: %s: %w", filepath.Base(tool), err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("pdfparse: %s: %w", filepath.Base(tool), err)
	}
	out, rerr := io.ReadAll(io.LimitReader(stdout, b.lim.MaxTextBytes+1))
	if int64(len(out)) > b.lim.MaxTextBytes {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("%w: %s wrote more than %d bytes", ErrTooLarge, filepath.Base(tool), b.lim.MaxTextBytes)
	}
	werr := cmd.Wait()
	if err := b.ctx.Err(); err != nil {
		return nil, err
	}
	if werr == nil && rerr != nil {
		werr = rerr
	}
	if strings.Contains(stderr.String(), "Out of memory") {
		// poppler reports a failed allocation and may still exit 0.
		return nil, fmt.Errorf("%w: %s stopped at its memory limit of %d MB", ErrTooLarge, filepath.Base(tool), kb>>10)
	}
	if werr == nil {
		return out, nil
	}
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			switch sig := ws.Signal(); {
			case sig == syscall.SIGKILL || sig == syscall.SIGXCPU:
				return nil, fmt.Errorf("%w: %s stopped at its CPU limit of %d s", ErrTooLarge, filepath.Base(tool), cpu)
			case strings.Contains(stderr.String(), "bad_alloc"):
				return nil, fmt.Errorf("%w: %s stopped at its memory limit of %d MB", ErrTooLarge, filepath.Base(tool), kb>>10)
			}
		}
	}
	return nil, fmt.Errorf("pdfparse: %s: %v: %s", filepath.Base(tool), werr, firstLine([]byte(stderr.String())))
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

// rootText is the message of err without the sentinel's prefix.
func rootText(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		return s[i+2:]
	}
	return s
}
