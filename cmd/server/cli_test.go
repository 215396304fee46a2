package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUsage drives run with the help and error forms: help goes to stdout
// and succeeds; an unknown command or flag prints the usage to stderr and
// returns errUsage (exit status 2). None of these reads the config, so a
// broken environment does not hide the help.
func TestUsage(t *testing.T) {
	t.Parallel()
	badEnv := env(map[string]string{"PORT": "not-a-port"})
	allCommands := []string{"serve", "worker", "keys create", "keys list", "keys revoke", "credits add",
		"credits set", "credits unlimited", "credits show", "limits set", "feedback list", "migrate", "version", "--team", "--amount",
		"--concurrency", "--rate-multiplier", "--zdr", "--zdr-forced", "--catalog", "--accept-third-party-terms", "--credits", "--id",
		"TEAM_CONCURRENCY_LIMIT)"}
	tests := []struct {
		name      string
		args      []string
		wantErr   error
		stdoutHas []string
		stderrHas []string
		stdoutNot []string
		emptyOut  bool // nothing on stdout
		emptyErrW bool // nothing on stderr
	}{
		{name: "--help", args: []string{"--help"}, stdoutHas: allCommands, emptyErrW: true},
		{name: "-h", args: []string{"-h"}, stdoutHas: allCommands, emptyErrW: true},
		{name: "help", args: []string{"help"}, stdoutHas: allCommands, emptyErrW: true},
		{name: "help keys", args: []string{"help", "keys"}, stdoutHas: []string{"keys create", "keys list", "keys revoke", "--credits"},
			stdoutNot: []string{"credits add", "limits set"}, emptyErrW: true},
		{name: "help keys list", args: []string{"help", "keys", "list"}, stdoutHas: []string{"keys list", "--team"},
			stdoutNot: []string{"keys create"}, emptyErrW: true},
		{name: "command -h", args: []string{"limits", "set", "-h"}, stdoutHas: []string{"limits set", "--concurrency", "--zdr"},
			stdoutNot: []string{"keys create"}, emptyErrW: true},
		{name: "group -h", args: []string{"credits", "--help"}, stdoutHas: []string{"credits add", "credits show"}, emptyErrW: true},
		{name: "unknown command", args: []string{"bogus"}, wantErr: errUsage, emptyOut: true,
			stderrHas: append([]string{`unknown command "bogus"`}, allCommands...)},
		{name: "unknown help topic", args: []string{"help", "bogus"}, wantErr: errUsage, emptyOut: true,
			stderrHas: []string{`unknown command "bogus"`, "keys create"}},
		{name: "group without sub-command", args: []string{"keys"}, wantErr: errUsage, emptyOut: true,
			stderrHas: []string{"sub-command is required", "keys revoke"}},
		{name: "unknown sub-command", args: []string{"credits", "spend"}, wantErr: errUsage, emptyOut: true,
			stderrHas: []string{`unknown sub-command "spend"`, "credits add"}},
		{name: "unknown flag", args: []string{"keys", "list", "--nope"}, wantErr: errUsage, emptyOut: true,
			stderrHas: []string{"server keys list", "-nope", "--team"}},
		{name: "stray argument", args: []string{"migrate", "now"}, wantErr: errUsage, emptyOut: true,
			stderrHas: []string{`unexpected argument "now"`}},
		{name: "help config", args: []string{"help", "config"}, emptyErrW: true,
			stdoutHas: []string{"PORT (default: 3002)", "JOB_RESCUE_AFTER (default: JOB_TIMEOUT + 1m)", "LLM_MAX_RETRIES (default: 2)", "docs/configuration.md"},
			stdoutNot: []string{"keys create", "`"}},
		{name: "version", args: []string{"version"}, stdoutHas: []string{"firegate", "go1."}, emptyErrW: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, badEnv, &stdout, &stderr)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("run %q: err %v, want %v", tt.args, err, tt.wantErr)
			}
			for _, s := range tt.stdoutHas {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout.String())
				}
			}
			for _, s := range tt.stdoutNot {
				if strings.Contains(stdout.String(), s) {
					t.Errorf("stdout has %q:\n%s", s, stdout.String())
				}
			}
			for _, s := range tt.stderrHas {
				if !strings.Contains(stderr.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr.String())
				}
			}
			if tt.emptyOut && stdout.Len() != 0 {
				t.Errorf("stdout not empty: %q", stdout.String())
			}
			if tt.emptyErrW && stderr.Len() != 0 {
				t.Errorf("stderr not empty: %q", stderr.String())
			}
		})
	}
}

// TestEveryCommandRuns checks that each listed command has a case in run:
// run with an empty store directory, none answers "has no implementation".
func TestEveryCommandRuns(t *testing.T) {
	t.Parallel()
	for _, c := range commands() {
		switch c.name {
		case "serve", "worker", "help":
			continue // serve blocks; help is handled before commands
		}
		args := append(strings.Fields(c.name), "--team", "nobody")
		if c.flags == nil || c.name == "keys revoke" {
			args = strings.Fields(c.name)
		}
		err := run(context.Background(), args, env(map[string]string{"DATA_DIR": t.TempDir()}), &bytes.Buffer{}, &bytes.Buffer{})
		if err != nil && strings.Contains(err.Error(), "no implementation") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestExitStatus builds the binary and checks the status the shell sees:
// 0 for help, 2 for an unknown command (usage on stderr only), 1 for a
// failing command.
func TestExitStatus(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "server")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	tests := []struct {
		args      []string
		status    int
		stdoutHas string
		stderrHas string
	}{
		{[]string{"--help"}, 0, "keys create", ""},
		{[]string{"help"}, 0, "credits unlimited", ""},
		{[]string{"-h"}, 0, "limits set", ""},
		{[]string{"bogus"}, 2, "", "Usage: server"},
		{[]string{"keys", "revoke"}, 1, "", "--id is required"},
	}
	for _, tt := range tests {
		cmd := exec.Command(bin, tt.args...)
		cmd.Env = append(os.Environ(), "DATA_DIR="+t.TempDir())
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		status := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			status = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if status != tt.status || !strings.Contains(stdout.String(), tt.stdoutHas) || !strings.Contains(stderr.String(), tt.stderrHas) {
			t.Errorf("server %q: status %d (want %d)\nstdout: %s\nstderr: %s", tt.args, status, tt.status, stdout.String(), stderr.String())
		}
		if tt.status == 2 && stdout.Len() != 0 {
			t.Errorf("server %q: usage error wrote to stdout: %q", tt.args, stdout.String())
		}
	}
}
