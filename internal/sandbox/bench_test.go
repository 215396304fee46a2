package sandbox

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// BenchmarkRun is the cost of one sandboxed run of a trivial program: bwrap
// and its namespaces, the init, the interpreter's start (and for
// node-page, playwright-core's load and connectOverCDP to a Chrome).
func BenchmarkRun(b *testing.B) {
	s := newSandbox(b)
	for _, c := range []struct{ name, lang, code string }{
		{"bash", Bash, `echo ok`},
		{"python", Python, `print("ok")`},
		{"node", Node, `console.log("ok")`},
		{"node-page", Node, `console.log(page ? "ok" : "no page")`},
	} {
		b.Run(c.name, func(b *testing.B) {
			sp := Spec{Language: c.lang, Code: c.code, Timeout: 30 * time.Second}
			if c.name == "node-page" {
				addr := startChrome(b)
				sp.CDP = func(ctx context.Context) (net.Conn, error) {
					var d net.Dialer
					return d.DialContext(ctx, "tcp", addr)
				}
			}
			for b.Loop() {
				res, err := s.Run(context.Background(), sp)
				if err != nil || strings.TrimSpace(res.Stdout) != "ok" {
					b.Fatalf("%+v %v", res, err)
				}
			}
		})
	}
}
