package browser

import (
	"encoding/json"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/testenv"
)

// signalScript reports the signals bot checks read, as JSON in #signals.
const signalScript = `<script>
(async () => {
  const s = {};
  s.ua = navigator.userAgent;
  s.brands = navigator.userAgentData ? navigator.userAgentData.brands.map(b => b.brand) : null;
  s.platform = navigator.userAgentData ? navigator.userAgentData.platform : null;
  s.webdriver = navigator.webdriver;
  s.plugins = Array.from(navigator.plugins).map(p => p.name);
  s.mimeTypes = Array.from(navigator.mimeTypes).map(m => m.type);
  s.pdfViewer = navigator.pdfViewerEnabled;
  s.chrome = typeof window.chrome === 'object' && window.chrome !== null;
  s.chromeRuntime = !!(window.chrome && window.chrome.runtime !== undefined);
  s.languages = navigator.languages;
  s.language = navigator.language;
  s.timezone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  s.locale = Intl.DateTimeFormat().resolvedOptions().locale;
  s.screen = [screen.width, screen.height, screen.availWidth, screen.availHeight];
  s.outer = [window.outerWidth, window.outerHeight];
  s.inner = [window.innerWidth, window.innerHeight];
  try {
    const gl = document.createElement('canvas').getContext('webgl');
    const ext = gl && gl.getExtension('WEBGL_debug_renderer_info');
    s.webgl = gl ? [gl.getParameter(ext ? ext.UNMASKED_VENDOR_WEBGL : gl.VENDOR), gl.getParameter(ext ? ext.UNMASKED_RENDERER_WEBGL : gl.RENDERER)] : null;
  } catch (e) { s.webgl = ['error', String(e)]; }
  s.permissions = await navigator.permissions.query({name: 'notifications'}).then(p => p.state + '/' + Notification.permission, e => 'error');
  document.getElementById('signals').textContent = JSON.stringify(s);
})();
</script>`

// signals are what signalScript reports.
type signals struct {
	UA          string   `json:"ua"`
	Brands      []string `json:"brands"`
	Platform    string   `json:"platform"`
	Webdriver   bool     `json:"webdriver"`
	Plugins     []string `json:"plugins"`
	MimeTypes   []string `json:"mimeTypes"`
	PDFViewer   bool     `json:"pdfViewer"`
	Chrome      bool     `json:"chrome"`
	Runtime     bool     `json:"chromeRuntime"`
	Languages   []string `json:"languages"`
	Language    string   `json:"language"`
	Timezone    string   `json:"timezone"`
	Locale      string   `json:"locale"`
	Screen      []int    `json:"screen"`
	Outer       []int    `json:"outer"`
	Inner       []int    `json:"inner"`
	WebGL       []string `json:"webgl"`
	Permissions string   `json:"permissions"`
	// AcceptLanguage is what the server got.
	AcceptLanguage string `json:"-"`
}

var signalsRe = regexp.MustCompile(`(?s)<pre id="signals">(.*?)</pre>`)

// renderSignals renders the signal page in pool p.
func renderSignals(t *testing.T, p *Pool, req Request) signals {
	t.Helper()
	var mu sync.Mutex
	var acceptLang string
	s := newSite(t, nil, map[string]http.HandlerFunc{"/": func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		acceptLang = r.Header.Get("Accept-Language")
		mu.Unlock()
		fmt.Fprint(w, `<html><body><pre id="signals"></pre>`+signalScript+`</body></html>`)
	}})
	req.URL = s.URL + "/"
	req.WaitFor = 300 * time.Millisecond
	res, err := p.Render(testCtx(t, 60*time.Second), req)
	if err != nil {
		t.Fatal(err)
	}
	m := signalsRe.FindStringSubmatch(res.HTML)
	if m == nil || m[1] == "" {
		t.Fatalf("no signals in %s", res.HTML)
	}
	var sg signals
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &sg); err != nil {
		t.Fatalf("%v: %s", err, m[1])
	}
	mu.Lock()
	sg.AcceptLanguage = acceptLang
	mu.Unlock()
	return sg
}

// signalProblems lists the signals that give automation away, or do not
// agree with each other or with the languages and time zone asked for.
func signalProblems(sg signals, langs []string, tz string) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if strings.Contains(sg.UA, "Headless") {
		bad("user agent %q", sg.UA)
	}
	for _, b := range sg.Brands {
		if strings.Contains(b, "Headless") {
			bad("brand %q", b)
		}
	}
	if len(sg.Brands) == 0 {
		bad("no userAgentData brands")
	}
	if sg.Webdriver {
		bad("navigator.webdriver true")
	}
	if len(sg.Plugins) != 5 || !strings.Contains(strings.Join(sg.Plugins, ","), "PDF Viewer") {
		bad("plugins %v", sg.Plugins)
	}
	if len(sg.MimeTypes) != 2 {
		bad("mime types %v", sg.MimeTypes)
	}
	if !sg.Chrome {
		bad("no window.chrome")
	}
	if sg.Permissions == "prompt/denied" {
		bad("notification permission prompt but Notification.permission denied")
	}
	if len(langs) > 0 {
		if len(sg.Languages) == 0 || sg.Languages[0] != langs[0] || sg.Language != langs[0] {
			bad("languages %v / %s, want %v", sg.Languages, sg.Language, langs)
		}
		if !strings.HasPrefix(sg.AcceptLanguage, langs[0]) {
			bad("Accept-Language %q, want %v", sg.AcceptLanguage, langs)
		}
		if !strings.HasPrefix(sg.Locale, strings.Split(langs[0], "-")[0]) {
			bad("locale %q, want %v", sg.Locale, langs)
		}
	}
	if tz != "" && sg.Timezone != tz {
		bad("time zone %q, want %q", sg.Timezone, tz)
	}
	if len(sg.Screen) == 4 && len(sg.Outer) == 2 && len(sg.Inner) == 2 {
		sw, sh, aw, ah := sg.Screen[0], sg.Screen[1], sg.Screen[2], sg.Screen[3]
		ow, oh, iw, ih := sg.Outer[0], sg.Outer[1], sg.Inner[0], sg.Inner[1]
		if aw > sw || ah > sh || ow > aw || oh > ah || iw > ow || ih >= oh || ow == 0 {
			bad("sizes screen %dx%d avail %dx%d outer %dx%d inner %dx%d", sw, sh, aw, ah, ow, oh, iw, ih)
		}
	}
	if len(sg.WebGL) == 2 && (strings.Contains(sg.WebGL[1], "SwiftShader") || strings.Contains(sg.WebGL[1], "llvmpipe") || sg.WebGL[0] == "error") {
		bad("webgl %v", sg.WebGL)
	}
	return out
}

func TestBrowserSignals(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	langs, tz := []string{"de-DE", "de"}, "Europe/Berlin"
	plain := renderSignals(t, p, Request{Languages: langs, Timezone: tz})
	t.Logf("default profile (%s): %v\n%+v", p.opts.ChromePath, signalProblems(plain, langs, tz), plain)
	if len(plain.Brands) == 0 || strings.Contains(strings.Join(plain.Brands, ","), "Headless") {
		t.Errorf("default profile: userAgentData brands %q, want Chrome's", plain.Brands)
	}
	stealth := renderSignals(t, p, Request{Languages: langs, Timezone: tz, Stealth: true})
	if problems := signalProblems(stealth, langs, tz); len(problems) > 0 {
		t.Errorf("the stealth profile gives itself away:\n%s\n%+v", strings.Join(problems, "\n"), stealth)
	}
}

// TestBrowserSignalsFullChromium measures the same signals with the full
// Chromium (/usr/bin/chromium) in its new headless mode.
func TestBrowserSignalsFullChromium(t *testing.T) {
	t.Parallel()
	const full = "/usr/lib/chromium/chromium"
	if _, err := os.Stat(full); err != nil {
		// A measurement of the other binary, which the server does not
		// need (the headless shell serves both profiles); CI installs
		// only the shell.
		t.Skipf("%s: %v", full, err)
	}
	p := New(Options{ChromePath: full, AllowPrivate: true, MaxTabs: 2}, slog.New(slog.DiscardHandler))
	t.Cleanup(func() { _ = p.Close() })
	langs, tz := []string{"de-DE", "de"}, "Europe/Berlin"
	plain := renderSignals(t, p, Request{Languages: langs, Timezone: tz})
	t.Logf("default profile (full chromium): %v\n%+v", signalProblems(plain, langs, tz), plain)
	stealth := renderSignals(t, p, Request{Languages: langs, Timezone: tz, Stealth: true})
	if problems := signalProblems(stealth, langs, tz); len(problems) > 0 {
		t.Errorf("the stealth profile gives itself away (full chromium):\n%s\n%+v", strings.Join(problems, "\n"), stealth)
	}
}

// BenchmarkRenderProfiles renders the static bench page with 4 workers in
// each binary and profile: pages/s and the p50 latency.
func BenchmarkRenderProfiles(b *testing.B) {
	shell := testenv.ChromePath(b)
	const full = "/usr/lib/chromium/chromium"
	for _, bc := range []struct {
		name    string
		path    string
		stealth bool
	}{{"shell/default", shell, false}, {"shell/stealth", shell, true}, {"chromium/default", full, false}, {"chromium/stealth", full, true}} {
		b.Run(bc.name, func(b *testing.B) {
			if _, err := os.Stat(bc.path); err != nil {
				b.Skip(err)
			}
			p := New(Options{ChromePath: bc.path, AllowPrivate: true, MaxTabs: 4}, slog.New(slog.DiscardHandler))
			defer p.Close()
			s := newSite(b, map[string]string{"/": benchPage}, nil)
			ctx := testCtx(b, 10*time.Minute)
			req := Request{URL: s.URL + "/", Stealth: bc.stealth}
			const conc = 4
			var wg sync.WaitGroup
			for range conc {
				wg.Go(func() {
					if _, err := p.Render(ctx, req); err != nil {
						b.Error(err)
					}
				})
			}
			wg.Wait()
			var next atomic.Int64
			lat := make([]time.Duration, b.N)
			b.ResetTimer()
			start := time.Now()
			for range conc {
				wg.Go(func() {
					for {
						i := next.Add(1) - 1
						if i >= int64(b.N) {
							return
						}
						t0 := time.Now()
						if _, err := p.Render(ctx, req); err != nil {
							b.Error(err)
							return
						}
						lat[i] = time.Since(t0)
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "pages/s")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		})
	}
}
