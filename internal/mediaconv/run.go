package mediaconv

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/firegate/firegate/internal/toolrun"
)

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

// run runs tool with args under lim (internal/toolrun: the limits the
// PDF tools run under), with an emptied environment plus env, killed when
// ctx ends. A tool stopped by a limit gives a *LimitError naming it; other
// failures an error with the first line of its standard error.
func run(ctx context.Context, lim limits, env []string, tool string, args ...string) (*runResult, error) {
	cpu := lim.cpuSeconds
	if dl, ok := ctx.Deadline(); ok {
		cpu = max(1, min(cpu, int(math.Ceil(time.Until(dl).Seconds()))*threads+1))
	}
	res, err := toolrun.Exec(ctx, toolrun.Limits{MemoryBytes: lim.memoryBytes, CPUSeconds: cpu, FileBytes: max(1, lim.fileBytes), MaxStdout: maxProbeOutput},
		toolrun.Run{Tool: tool, Args: args, Env: append([]string{"PATH=/usr/local/bin:/usr/bin:/bin"}, env...)})
	if err == nil {
		return &runResult{stdout: res.Stdout, stderr: res.Stderr}, nil
	}
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr
	}
	var le *toolrun.LimitError
	if errors.As(err, &le) {
		switch le.Limit {
		case toolrun.LimitCPU:
			return nil, &LimitError{Kind: ErrTooLarge, Msg: fmt.Sprintf("Converting the media took more than its CPU limit of %d s.", cpu)}
		case toolrun.LimitFile:
			return nil, &LimitError{Kind: ErrTooLarge, Msg: fmt.Sprintf("The converted media would be larger than its file limit of %d bytes (MEDIA_MAX_BYTES).", lim.fileBytes)}
		case toolrun.LimitMemory:
			return nil, &LimitError{Kind: ErrTooLarge, Msg: fmt.Sprintf("Converting the media needed more than its memory limit of %d MB.", max(1, lim.memoryBytes>>10)>>10)}
		default:
			return nil, fmt.Errorf("mediaconv: %s printed more than %d bytes", filepath.Base(tool), maxProbeOutput)
		}
	}
	return nil, fmt.Errorf("mediaconv: %w", err)
}
