package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/testenv"
)

func TestAdminAPIKeyConfig(t *testing.T) {
	t.Parallel()
	c, err := loadConfig(env(map[string]string{"ADMIN_API_KEY": "op-0123456789abcdef"}))
	if err != nil || c.AdminAPIKey != "op-0123456789abcdef" {
		t.Errorf("ADMIN_API_KEY: %q %v", c.AdminAPIKey, err)
	}
	if c, _ := loadConfig(env(nil)); c.AdminAPIKey != "" {
		t.Errorf("default ADMIN_API_KEY %q, want none", c.AdminAPIKey)
	}
	if _, err := loadConfig(env(map[string]string{"ADMIN_API_KEY": "short"})); err == nil || !strings.Contains(err.Error(), "ADMIN_API_KEY: at least 16 characters") {
		t.Errorf("a short ADMIN_API_KEY: %v", err)
	}
}

// TestCLIChangesAreActivity: the sub-commands' changes are recorded in the
// team's activity as the operator's, like the /admin routes' changes.
func TestCLIChangesAreActivity(t *testing.T) {
	t.Parallel()
	e := map[string]string{"DATA_DIR": t.TempDir()}
	ctx := context.Background()
	for _, args := range [][]string{
		{"keys", "create", "--team", "acme", "--credits", "10"},
		{"credits", "add", "--team", "acme", "--amount", "5"},
		{"limits", "set", "--team", "acme", "--concurrency", "2"},
	} {
		if err := run(ctx, args, env(e), io.Discard, io.Discard); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	cfg, _ := loadConfig(env(e))
	st, err := openStore(ctx, cfg, testenv.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	team, err := st.TeamByName(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	acts, err := st.(store.ActivityStore).ListActivity(ctx, team.ID, store.ActivityQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	for i := len(acts) - 1; i >= 0; i-- {
		got.WriteString(acts[i].Endpoint + " " + acts[i].Username + ": " + acts[i].Target + "\n")
	}
	for _, want := range []string{"admin operator (cli): team created: acme", "admin operator (cli): key created: fc-", "admin operator (cli): credits set: 10",
		"admin operator (cli): credits added: 5", "admin operator (cli): limits set: concurrency 2, rate multiplier default"} {
		if !strings.Contains(got.String(), want) {
			t.Errorf("activity lacks %q:\n%s", want, got.String())
		}
	}
}
