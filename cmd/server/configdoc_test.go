package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite docs/configuration.md from the settings table")

// configDocPath is the configuration reference, relative to this package.
const configDocPath = "../../docs/configuration.md"

// configDoc is docs/configuration.md as the settings table writes it: one
// table row per variable (name, default, what it does), then the long
// explanations of the rows that have one.
func configDoc() string {
	var b strings.Builder
	b.WriteString(`# Configuration

<!-- Written from the settings table (cmd/server/settings.go) by
     go test ./cmd/server -run TestConfigurationDoc -update
     Edit the table, then run that; TestConfigurationDoc fails while they differ. -->

All settings come from the environment, read once at start (` + "`cmd/server/config.go`" + `,
one row per variable in ` + "`cmd/server/settings.go`" + `). A value that does not parse, or breaks a
rule between settings, stops the server with an error naming the variable. ` + "`server help config`" + `
prints this list; ` + "`.env.example`" + ` shows every variable with its default for docker compose.

| Variable | Default | Meaning |
| - | - | - |
`)
	var more []setting
	for _, s := range (&Config{}).settings() {
		doc := s.doc
		if s.more != "" {
			doc += " ([more](#" + strings.ToLower(s.name) + "))"
			more = append(more, s)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", s.name, cell(s.shownDefault()), cell(doc))
	}
	if len(more) > 0 {
		b.WriteString("\n## Details\n")
		for _, s := range more {
			fmt.Fprintf(&b, "\n### `%s`\n\n%s\n", s.name, s.more)
		}
	}
	return b.String()
}

// cell escapes the pipes of a table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// TestConfigurationDoc: docs/configuration.md is what the settings table
// writes, so it lists every variable with its default. -update rewrites it.
func TestConfigurationDoc(t *testing.T) {
	want := configDoc()
	if *update {
		if err := os.WriteFile(configDocPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Parallel()
	got, err := os.ReadFile(configDocPath)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("%s differs from the settings table: run go test ./cmd/server -run TestConfigurationDoc -update (-table +file)\n%s",
			filepath.Base(configDocPath), diff)
	}
}

// TestREADMEPointsToConfigurationDoc: the README's configuration section
// sends readers to the reference.
func TestREADMEPointsToConfigurationDoc(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Configuration\n")
	if sec, _, _ = strings.Cut(sec, "\n## "); !ok || !strings.Contains(sec, "(docs/configuration.md)") {
		t.Errorf("README.md has no Configuration section linking docs/configuration.md")
	}
}

// TestSettingsTable checks the table's shape: every field of Config but the
// derived ones is the destination of exactly one row, names are unique
// environment variable names, every row says what it does, and every
// default parses (loadConfig sets them all).
func TestSettingsTable(t *testing.T) {
	t.Parallel()
	derived := map[string]bool{"SMTP": true} // parsed from SMTP_URL and SMTP_FROM
	var c Config
	rows := c.settings()
	byTarget := map[any]string{}
	names := map[string]bool{}
	for _, s := range rows {
		if names[s.name] {
			t.Errorf("%s has two rows", s.name)
		}
		names[s.name] = true
		if s.name != strings.ToUpper(s.name) || strings.ContainsAny(s.name, " -") {
			t.Errorf("%q is not an environment variable name", s.name)
		}
		if strings.TrimSpace(s.doc) == "" {
			t.Errorf("%s: no doc", s.name)
		}
		if prev, dup := byTarget[s.val.target()]; dup {
			t.Errorf("%s and %s write the same field", prev, s.name)
		}
		byTarget[s.val.target()] = s.name
		if s.def != "" {
			if err := s.val.set(s.def); err != nil {
				t.Errorf("%s: default %q: %v", s.name, s.def, err)
			}
		}
	}
	v := reflect.ValueOf(&c).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if _, ok := byTarget[v.Field(i).Addr().Interface()]; !ok && !derived[f.Name] {
			t.Errorf("Config.%s is set by no row of the settings table", f.Name)
		}
	}
}
