package pdfparse

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/firegate/firegate/internal/toolrun"
)

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

// runLimited runs tool with args under the budget's tool limits
// (internal/toolrun: address space, CPU time capped by what is left of the
// deadline, output at MaxTextBytes) and returns what it printed. A tool
// stopped by a limit fails with ErrTooLarge.
func runLimited(b *budget, tool string, args ...string) ([]byte, error) {
	return runLimitedEnv(b, nil, tool, args...)
}

// runLimitedEnv is runLimited with the environment env (nil: the
// server's).
func runLimitedEnv(b *budget, env []string, tool string, args ...string) ([]byte, error) {
	cpu := b.lim.ToolCPUSeconds
	if dl, ok := b.ctx.Deadline(); ok {
		cpu = max(1, min(cpu, int(math.Ceil(time.Until(dl).Seconds()))))
	}
	res, err := toolrun.Exec(b.ctx, toolrun.Limits{MemoryBytes: b.lim.ToolMemoryBytes, CPUSeconds: cpu, MaxStdout: b.lim.MaxTextBytes},
		toolrun.Run{Tool: tool, Args: args, Env: env})
	if err == nil {
		return res.Stdout, nil
	}
	if cerr := b.ctx.Err(); cerr != nil {
		return nil, cerr
	}
	var le *toolrun.LimitError
	if errors.As(err, &le) {
		if le.Limit == toolrun.LimitOutput {
			return nil, fmt.Errorf("%w: %s wrote more than %d bytes", ErrTooLarge, le.Tool, le.Value)
		}
		return nil, fmt.Errorf("%w: %s", ErrTooLarge, le)
	}
	return nil, fmt.Errorf("pdfparse: %w", err)
}

// rootText is the message of err without the sentinel's prefix.
func rootText(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		return s[i+2:]
	}
	return s
}
