package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/sandbox"
	"github.com/firegate/firegate/internal/testenv"
)

// TestInteractSandboxedPrograms: with INTERACT_RUNTIMES=node,bash, execute
// runs bash and node programs in the sandbox: bash sees no host file nor
// network and its fork bomb is killed at the timeout; node drives the
// session's page with playwright-core; python, not enabled, is a 400
// naming language.
func TestInteractSandboxedPrograms(t *testing.T) {
	for _, bin := range []string{"bwrap", "/usr/bin/node", "/usr/bin/bash"} {
		if _, err := exec.LookPath(bin); err != nil {
			testenv.Unavailable(t, "%s is not installed: %v", bin, err)
		}
	}
	mods, _ := filepath.Abs("../../e2e/sdk/node_modules")
	if _, err := os.Stat(filepath.Join(mods, "playwright-core")); err != nil {
		testenv.Unavailable(t, "playwright-core is not installed in e2e/sdk (cd e2e/sdk && npm install): %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	sb, err := sandbox.New(ctx, sandbox.Config{Runtimes: []string{sandbox.Node, sandbox.Bash}, NodeModules: mods, Log: testenv.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sb.Close() }()
	s := interactServerWith(t, 5, sb)
	site := interactSite(t)
	rec, body := do(t, s, http.MethodPost, "/v2/browser", "fc-a", `{"ttl":120}`)
	if rec.Code != 200 {
		t.Fatalf("create: %d %v", rec.Code, body)
	}
	id := body["id"].(string)
	exec := func(lang, code string, timeout int) map[string]any {
		t.Helper()
		rec, body := do(t, s, http.MethodPost, "/v2/browser/"+id+"/execute", "fc-a", fmt.Sprintf(`{"language":%q,"code":%q,"timeout":%d}`, lang, code, timeout))
		if rec.Code != 200 {
			t.Fatalf("%s: %d %v", lang, rec.Code, body)
		}
		return body
	}

	body = exec("bash", `cat /etc/passwd; ls /work /root 2>&1 | wc -l; (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null && echo connected || echo refused; echo "cdp $CDP_URL"`, 20)
	if body["success"] != true || body["stdout"] != "sandbox:x:1000:1000:sandbox:/tmp:/usr/sbin/nologin\n2\nrefused\ncdp ws://127.0.0.1:9222/\n" {
		t.Fatalf("bash: %v", body)
	}
	body = exec("bash", `while :; do sleep 100 & done`, 5)
	if body["success"] != false || body["killed"] != true || body["exitCode"] != 137.0 || !strings.Contains(fmt.Sprint(body["stderr"]), "fork: retry: Resource temporarily unavailable") ||
		!strings.Contains(fmt.Sprint(body["stderr"]), "timed out after 5s") {
		t.Fatalf("fork bomb: %v", body)
	}
	body = exec("node", fmt.Sprintf(`await page.goto(%q); await page.click('#b'); console.log(await page.title(), await page.textContent('#n'))`, site.URL), 60)
	if body["success"] != true || body["stdout"] != "Counter 1\n" || body["result"] != "Counter 1\n" {
		t.Fatalf("node: %v", body)
	}
	rec, body = do(t, s, http.MethodPost, "/v2/browser/"+id+"/execute", "fc-a", `{"language":"python","code":"print(1)"}`)
	wantErr(t, "python", rec, body, 400, "INTERACT_LANGUAGE_NOT_SUPPORTED", "INTERACT_RUNTIMES")
	if d, _ := body["details"].([]any); len(d) != 1 || fmt.Sprint(d[0].(map[string]any)["path"]) != "[language]" {
		t.Errorf("python: details %v", body["details"])
	}
}
