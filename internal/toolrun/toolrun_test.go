package toolrun

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func sh(script string) Run { return Run{Tool: "/bin/sh", Args: []string{"-c", script}} }

// TestExecLimits runs real child processes into each limit.
func TestExecLimits(t *testing.T) {
	t.Parallel()
	lim := Limits{MemoryBytes: 512 << 20, CPUSeconds: 10}
	res, err := Exec(t.Context(), lim, sh(`echo hello; echo note >&2`))
	if err != nil || string(res.Stdout) != "hello\n" || res.Stderr != "note\n" {
		t.Fatalf("plain run: %+v %v", res, err)
	}
	for _, tc := range []struct {
		name, limit string
		lim         Limits
		run         Run
	}{
		{"cpu", LimitCPU, Limits{MemoryBytes: 512 << 20, CPUSeconds: 1}, sh(`while :; do :; done`)},
		{"file", LimitFile, Limits{MemoryBytes: 512 << 20, CPUSeconds: 10, FileBytes: 64 << 10},
			sh(`exec head -c 1048576 /dev/zero > "` + filepath.Join(t.TempDir(), "big") + `"`)},
		{"output", LimitOutput, Limits{MemoryBytes: 512 << 20, CPUSeconds: 10, MaxStdout: 1000}, sh(`yes`)},
		{"memory message", LimitMemory, lim, sh(`echo "Out of memory" >&2`)},
	} {
		_, err := Exec(t.Context(), tc.lim, tc.run)
		var le *LimitError
		if !errors.As(err, &le) || le.Limit != tc.limit || le.Tool != "sh" {
			t.Errorf("%s: %v, want a %s LimitError", tc.name, err, tc.limit)
		}
	}
	_, err = Exec(t.Context(), lim, sh(`echo "first line" >&2; echo second >&2; exit 3`))
	if err == nil || !strings.Contains(err.Error(), "sh: exit status 3: first line") {
		t.Errorf("failed run: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := Exec(ctx, lim, sh(`exec sleep 30`)); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second {
		t.Errorf("cancelled run: %v after %v", err, time.Since(start))
	}
}
