package interact

import (
	"testing"
	"time"

	"github.com/firegate/firegate/internal/sandbox"
	"github.com/firegate/firegate/internal/testenv"
)

// BenchmarkSessionLifecycle opens a session, runs a line of code that reads
// the page's title, and ends it: the fixed cost of a browser session.
func BenchmarkSessionLifecycle(b *testing.B) {
	srv := site(b)
	pool := testPool(b)
	st := testStore(b)
	m := New(Config{Store: st, Browser: pool, MaxPerTeam: 1000, MaxSessions: 1000, Log: testenv.Logger(b)})
	ctx := b.Context()
	for b.Loop() {
		rec, err := m.Create(ctx, CreateParams{TeamID: team, TTL: time.Minute, ActivityTTL: time.Minute, Replay: &Replay{URL: srv.URL + "/"}})
		if err != nil {
			b.Fatal(err)
		}
		res, err := m.Execute(ctx, rec, ExecParams{Code: "console.log(await page.title())", Timeout: 10 * time.Second})
		if err != nil || res.Stdout != "Shop\n" {
			b.Fatalf("%+v, %v", res, err)
		}
		if _, err := m.Delete(ctx, team, rec.ID); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecute runs a line of code in one open session.
func BenchmarkExecute(b *testing.B) {
	srv := site(b)
	m := New(Config{Store: testStore(b), Browser: testPool(b), Log: testenv.Logger(b)})
	ctx := b.Context()
	rec, err := m.Create(ctx, CreateParams{TeamID: team, TTL: time.Hour, ActivityTTL: time.Hour, Replay: &Replay{URL: srv.URL + "/"}})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Delete(ctx, team, rec.ID)
	for b.Loop() {
		res, err := m.Execute(ctx, rec, ExecParams{Code: "console.log(await page.title())", Timeout: 10 * time.Second})
		if err != nil || res.Stdout != "Shop\n" {
			b.Fatalf("%+v, %v", res, err)
		}
	}
}

// BenchmarkExecuteSandboxed runs a program reading the page's title in
// one open session, in the bubblewrap sandbox: python without a page
// (the sandbox and the interpreter), node with playwright-core connected
// to the session over its confined DevTools connection.
func BenchmarkExecuteSandboxed(b *testing.B) {
	srv := site(b)
	sb := testSandbox(b, sandbox.Node, sandbox.Python)
	m := New(Config{Store: testStore(b), Browser: testPool(b), Runner: sb, Log: testenv.Logger(b)})
	ctx := b.Context()
	rec, err := m.Create(ctx, CreateParams{TeamID: team, TTL: time.Hour, ActivityTTL: time.Hour, Replay: &Replay{URL: srv.URL + "/"}})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Delete(ctx, team, rec.ID)
	for _, c := range []struct{ lang, code, want string }{
		{"python", `print("Shop")`, "Shop\n"},
		{"node", "console.log(await page.title())", "Shop\n"},
	} {
		b.Run(c.lang, func(b *testing.B) {
			for b.Loop() {
				res, err := m.Execute(ctx, rec, ExecParams{Language: c.lang, Code: c.code, Timeout: 30 * time.Second})
				if err != nil || res.Stdout != c.want {
					b.Fatalf("%+v, %v", res, err)
				}
			}
		})
	}
}
