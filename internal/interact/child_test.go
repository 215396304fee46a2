package interact

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/testenv"
)

// TestEvaluateBounded: a value the page returns to code (page.evaluate,
// page.content) is measured in the page and refused past MaxPageValue
// with an error naming the limit, before it leaves Chrome: the server
// does not read it (it allocates far less than the value). Before, a
// 150 MB string took the server from 55 MB to 1.36 GB.
func TestEvaluateBounded(t *testing.T) {
	srv := site(t)
	m := New(Config{Store: testStore(t), Browser: testPool(t), Log: testenv.Logger(t)})
	ctx := ctxFor(t, testenv.Patient(90*time.Second))
	rec, err := m.Create(ctx, CreateParams{TeamID: team, TTL: time.Minute, ActivityTTL: time.Minute, Replay: &Replay{URL: srv.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Delete(ctx, team, rec.ID)

	const size = 9_000_000 // over MaxPageValue
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := m.Execute(ctx, rec, ExecParams{Language: "javascript", Timeout: testenv.Patient(30 * time.Second), Code: fmt.Sprintf(`
try { const s = await page.evaluate((n) => 'x'.repeat(n), %d); console.log('read', s.length); } catch (e) { console.log(e.message); }
try { await page.evaluate((n) => { document.body.appendChild(document.createComment('y'.repeat(n))); }, %d); const h = await page.content(); console.log('read', h.length); } catch (e) { console.log(e.message); }
`, size, size)})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	grew := after.TotalAlloc - before.TotalAlloc
	t.Logf("the server allocated %d MB", grew>>20)
	want := fmt.Sprintf("page.evaluate: the result is %d characters of JSON, more than the limit of %d (8 MiB)\npage.content: the result is ", size+2, MaxPageValue)
	if res.ExitCode != 0 || !strings.HasPrefix(res.Stdout, want) || !strings.Contains(res.Stdout, fmt.Sprintf("more than the limit of %d (8 MiB)", MaxPageValue)) {
		t.Fatalf("got %+v; want stdout starting %q", res, want)
	}
	if grew > 16<<20 {
		t.Errorf("the server allocated %d MB while the page held %d MB values", grew>>20, size>>20)
	}
}

// TestEvaluateValues: the bounded evaluation keeps what page.evaluate
// returned and threw: values of every kind, statements, a function body
// using return or await, errors as "script error: ...", and it runs on a
// page whose CSP forbids eval.
func TestEvaluateValues(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'none'; require-trusted-types-for 'script'")
		fmt.Fprint(w, `<html><head><title>Strict</title></head><body><p id="p">text</p></body></html>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	m := New(Config{Store: testStore(t), Browser: testPool(t), Log: testenv.Logger(t)})
	ctx := ctxFor(t, testenv.Patient(90*time.Second))
	rec, err := m.Create(ctx, CreateParams{TeamID: team, TTL: time.Minute, ActivityTTL: time.Minute, Replay: &Replay{URL: srv.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Delete(ctx, team, rec.ID)
	code := `
const show = async (f, ...a) => { try { console.log(JSON.stringify(await page.evaluate(f, ...a))); } catch (e) { console.log('threw', e.message); } };
await show(() => { return {a: [1, 'two', null, true], b: {c: 1.5}}; });
await show(() => ({h: 1, g: 2, f: 3, e: 4, d: 5, c: 6, b: 7, a: [{z: 1, y: 2}]}));
await show((n) => (((n * 3))), 5);
await show(() => JSON.parse('{"__proto__": {"x": 1}, "k": 2}'));
await show((x) => x * 2, 21);
await show('1 + 2');
await show('let q = 4; q * q');
await show('return document.title');
await show('await new Promise(r => r(0)); return 7');
await show(() => Promise.resolve('later'));
await show(() => undefined);
await show(() => NaN);
await show(() => -Infinity);
await show(() => new Date(0));
await show(() => document.getElementById('p'));
await show(() => { throw new Error('boom'); });
await show(() => { throw 'plain'; });
await show(() => { const o = {}; o.o = o; return o; });
await show(() => { throw new Error('z'.repeat(100000)); });
await show('let = ;');
console.log(await page.title(), page.url === undefined ? '' : 'url', (await page.content()).includes('<p id="p">text</p>'));
`
	res, err := m.Execute(ctx, rec, ExecParams{Language: "javascript", Timeout: testenv.Patient(20 * time.Second), Code: code})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":[1,"two",null,true],"b":{"c":1.5}}
{"a":[{"y":2,"z":1}],"b":7,"c":6,"d":5,"e":4,"f":3,"g":2,"h":1}
15
{"__proto__":{"x":1},"k":2}
42
3
16
"Strict"
7
"later"
null
"NaN"
"-Infinity"
"1970-01-01T00:00:00.000Z"
{}
threw script error: Error: boom
threw script error: uncaught "plain"
threw script error: TypeError: Converting circular structure to JSON
threw script error: an error message of 100007 characters
threw script error: SyntaxError: Unexpected token ';'
Strict url true
`
	if got := res.Stdout; res.ExitCode != 0 || got != want {
		t.Fatalf("exit %d, stderr %q, stdout:\n%.5000s\nwant:\n%s", res.ExitCode, res.Stderr, got, want)
	}
}
