package check

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// repoRoot is RepoRoot for tests.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// serverEnv returns the variables the server reads, failing when the parse
// found none of the ones it has always read (a broken parser must not make
// every later check pass).
func serverEnv(t *testing.T) []string {
	t.Helper()
	vars, err := ServerEnvVars(filepath.Join(repoRoot(t), "cmd", "server"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"PORT", "DATA_DIR", "DATABASE_URL", "REDIS_URL", "BROWSER_WS_URL", "BOOTSTRAP_API_KEY", "MEDIA_S3_ENDPOINT"} {
		if !slices.Contains(vars, want) {
			t.Fatalf("ServerEnvVars found no %s in cmd/server (parser out of date?): %v", want, vars)
		}
	}
	return vars
}

// envExample reads .env.example.
func envExample(t *testing.T) map[string]EnvExample {
	t.Helper()
	ex, err := ReadEnvExample(filepath.Join(repoRoot(t), ".env.example"))
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

func TestServerEnvVarsParser(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := `package main

import "os"

const envQueue = "QUEUE_WORKERS"

type Config struct {
	Port int // PORT: listen port
	// S3_KEY: documented above the field
	Key string
	Other string // not a variable: lower case
}

type setting struct{ name, doc string }

func (c *Config) settings() []setting {
	return []setting{
		{name: "TABLE_ROW", doc: "a row of the settings table"},
		{name: envTableConst},
		{doc: "a row without a name"},
	}
}

const envTableConst = "TABLE_CONST"

var notTable = []struct{ name string }{{name: "NOT_A_SETTING"}}

func load(getenv func(string) string) {
	_ = getenv("DATABASE_URL")
	_ = getenv(envQueue)
	_ = os.Getenv("HOME_DIR")
	_, _ = os.LookupEnv("X2")
	_ = getenv("lower")
}
`
	if err := os.WriteFile(filepath.Join(dir, "config.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// Test files are not the server.
	if err := os.WriteFile(filepath.Join(dir, "config_test.go"), []byte("package main\nfunc f(getenv func(string) string) { getenv(\"TEST_ONLY\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ServerEnvVars(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"DATABASE_URL", "HOME_DIR", "PORT", "QUEUE_WORKERS", "S3_KEY", "TABLE_CONST", "TABLE_ROW", "X2"}
	if !slices.Equal(got, want) {
		t.Errorf("ServerEnvVars = %v, want %v", got, want)
	}
}

func TestReadEnvExampleParser(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), ".env.example")
	src := "# header\n\n# Secret one.\nA=\n# Two in a run.\n# B=1\n# C=\n\n# Next block.\n# D=x y\nnot a var\nE=2\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadEnvExample(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]EnvExample{
		"A": {Name: "A", Active: true, Value: "", Doc: "Secret one."},
		"B": {Name: "B", Value: "1", Doc: "Two in a run."},
		"C": {Name: "C", Value: "", Doc: "Two in a run."},
		"D": {Name: "D", Value: "x y", Doc: "Next block."},
		"E": {Name: "E", Active: true, Value: "2", Doc: ""},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d variables, want %d: %+v", len(got), len(want), got)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %+v, want %+v", k, got[k], w)
		}
	}
}

// TestEnvExampleDocumentsServerEnv: every variable the server reads has a
// documented line in .env.example, so new settings cannot ship unexplained.
func TestEnvExampleDocumentsServerEnv(t *testing.T) {
	t.Parallel()
	ex := envExample(t)
	for _, name := range serverEnv(t) {
		e, ok := ex[name]
		if !ok {
			t.Errorf(".env.example does not list %s, which cmd/server reads", name)
			continue
		}
		if strings.TrimSpace(e.Doc) == "" {
			t.Errorf(".env.example lists %s without a comment saying what it does", name)
		}
	}
}

// TestEnvExampleHoldsNoSecrets: the secrets are listed but empty, so a
// copied file never carries a shared password or key.
func TestEnvExampleHoldsNoSecrets(t *testing.T) {
	t.Parallel()
	ex := envExample(t)
	for _, name := range []string{"POSTGRES_PASSWORD", "BOOTSTRAP_API_KEY", "WEBHOOK_SECRET", "MEDIA_S3_SECRET_KEY", "OPENAI_API_KEY"} {
		e, ok := ex[name]
		if !ok {
			t.Errorf(".env.example does not list %s", name)
			continue
		}
		if e.Value != "" {
			t.Errorf(".env.example sets %s=%q: secrets must be empty there", name, e.Value)
		}
	}
}

// TestCIRunsDeployChecks: .ci/run runs this module right after the main
// test suite.
func TestCIRunsDeployChecks(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	main := slices.Index(lines, "go test -count=1 ./...")
	if main < 0 {
		t.Fatal(".ci/run has no `go test -count=1 ./...` line")
	}
	rest := strings.Join(lines[main+1:], "\n")
	if !strings.Contains(rest, "(cd deploy/check && go test -count=1 ./...)") {
		t.Error(".ci/run does not run `(cd deploy/check && go test -count=1 ./...)` after the main tests")
	}
}

// TestNestedModule: this directory is its own module, so the root module's
// `go test ./...` and `go vet ./...` do not descend into it and its
// dependencies stay out of the root go.mod.
func TestNestedModule(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "module "+ModulePath+"/deploy/check\n") {
		t.Errorf("deploy/check/go.mod does not declare module %s/deploy/check", ModulePath)
	}
}
