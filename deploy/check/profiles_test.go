package check

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
)

// The llm and search profiles configure the server themselves: with the
// profile on and nothing in .env, the api and workers find the profile's
// service by name (issue 32: "the llm profile sets OPENAI_BASE_URL and
// MODEL_NAME itself").
func TestComposeProfilesConfigureTheServer(t *testing.T) {
	t.Parallel()
	off := project(t)
	on, err := loadCompose(t, composeEnv(), "llm", "search")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"api", "worker"} {
		for _, dep := range []string{"ollama", "searxng"} {
			d, ok := on.Services[name].DependsOn[dep]
			if !ok || d.Required || d.Condition != types.ServiceConditionStarted {
				t.Errorf("with the profiles, %s depends_on %s = %+v (present %v), want started, not required", name, dep, d, ok)
			}
		}
		if ep := off.Services[name].Entrypoint; len(ep) < 3 || ep[0] != "/bin/sh" || ep[1] != "-c" {
			t.Errorf("%s entrypoint %q, want /bin/sh -c SCRIPT", name, ep)
		}
	}
	script := entrypointScript(t, on.Services["api"])

	for _, tc := range []struct {
		name  string
		hosts string            // names the fake getent resolves
		env   map[string]string // the container's environment from .env
		want  map[string]string // "" = unset or empty
	}{
		{"no profile", "", nil,
			map[string]string{"OPENAI_BASE_URL": "", "MODEL_NAME": "", "SEARXNG_ENDPOINT": ""}},
		{"llm profile", "ollama", nil,
			map[string]string{"OPENAI_BASE_URL": "http://ollama:11434/v1", "MODEL_NAME": "qwen2.5:3b", "SEARXNG_ENDPOINT": ""}},
		{"llm profile, .env's model", "ollama", map[string]string{"MODEL_NAME": "llama3.2:1b"},
			map[string]string{"OPENAI_BASE_URL": "http://ollama:11434/v1", "MODEL_NAME": "llama3.2:1b"}},
		{"llm profile, .env's endpoint wins", "ollama", map[string]string{"OPENAI_BASE_URL": "https://api.example.com/v1", "MODEL_NAME": "m"},
			map[string]string{"OPENAI_BASE_URL": "https://api.example.com/v1", "MODEL_NAME": "m"}},
		{"search profile", "searxng", map[string]string{"SEARXNG_ENDPOINT": ""},
			map[string]string{"SEARXNG_ENDPOINT": "http://searxng:8080", "OPENAI_BASE_URL": ""}},
		{"search profile, .env's instance wins", "searxng ollama", map[string]string{"SEARXNG_ENDPOINT": "http://search.internal:8888"},
			map[string]string{"SEARXNG_ENDPOINT": "http://search.internal:8888", "OPENAI_BASE_URL": "http://ollama:11434/v1"}},
	} {
		got, args := runEntrypoint(t, script, tc.hosts, tc.env)
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q", tc.name, k, got[k], v)
			}
		}
		if args != "serve" {
			t.Errorf("%s: the server got arguments %q, want the service's command (serve)", tc.name, args)
		}
	}
}

// entrypointScript is the service's entrypoint script with the exec of the
// server replaced by a probe that prints its environment and arguments.
func entrypointScript(t *testing.T, s types.ServiceConfig) string {
	t.Helper()
	const server = "exec /usr/bin/tini -- /usr/local/bin/server "
	if len(s.Entrypoint) != 4 || s.Entrypoint[3] != "server" {
		t.Fatalf("entrypoint %q: want /bin/sh -c SCRIPT server, so that $@ is the command", s.Entrypoint)
	}
	script := s.Entrypoint[2]
	if strings.Count(script, server) != 1 {
		t.Fatalf("entrypoint script does not exec the server once through tini:\n%s", script)
	}
	return strings.Replace(script, server, "exec probe ", 1)
}

// runEntrypoint runs the script as the container would (sh -c SCRIPT server
// serve) with a getent that resolves only hosts, and returns the
// environment and arguments the server would get.
func runEntrypoint(t *testing.T, script, hosts string, env map[string]string) (map[string]string, string) {
	t.Helper()
	bin := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("getent", `for h in $FAKE_HOSTS; do [ "$2" = "$h" ] && exit 0; done; exit 2`+"\n")
	write("probe", `env; echo "ARGS=$*"`+"\n")
	cmd := exec.Command("/bin/sh", "-c", script, "server", "serve")
	cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "FAKE_HOSTS=" + hosts}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("entrypoint: %v\n%s", err, out)
	}
	got, args := map[string]string{}, ""
	for line := range strings.Lines(string(out)) {
		line = strings.TrimSuffix(line, "\n")
		if a, ok := strings.CutPrefix(line, "ARGS="); ok {
			args = a
		} else if k, v, ok := strings.Cut(line, "="); ok && !slices.Contains([]string{"PATH", "PWD", "SHLVL", "_"}, k) {
			got[k] = v
		}
	}
	return got, args
}
