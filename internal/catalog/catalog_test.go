package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/testenv"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

func TestParseYAMLAndJSON(t *testing.T) {
	t.Parallel()
	yml := `providers:
  - name: weather
    description: Forecasts
    capabilities:
      - path: forecast/daily
        method: get
        url: http://${HOST}:8080/daily
        headers: {Authorization: "Bearer ${TOKEN}", X-Plain: plain}
        inputSchema: {type: object, required: [city]}
        credits: 2
        timeoutMs: 1500
        domains: [Weather.Example.com, "*.example.org"]
`
	c, err := Parse("c.yaml", []byte(yml), env(map[string]string{"HOST": "tools.internal", "TOKEN": "t0k"}))
	if err != nil {
		t.Fatal(err)
	}
	cp := c.Provider("weather").Capability("forecast/daily")
	if cp == nil || cp.Method != "GET" || cp.URL != "http://tools.internal:8080/daily" || cp.Headers["Authorization"] != "Bearer t0k" ||
		cp.Headers["X-Plain"] != "plain" || cp.Credits != 2 || cp.Timeout() != 1500*time.Millisecond {
		t.Fatalf("capability: %+v", cp)
	}
	for host, want := range map[string]bool{"weather.example.com": true, "a.weather.example.com": true, "WEATHER.example.com.": true,
		"example.org": false, "x.example.org": true, "notweather.example.com": false, "example.com": false} {
		if got := cp.MatchesHost(host); got != want {
			t.Errorf("MatchesHost(%q) = %v, want %v", host, got, want)
		}
	}
	if err := cp.validate(map[string]any{}); err == nil || !strings.Contains(err.Message, "city") {
		t.Errorf("validate without city: %v", err)
	}
	if err := cp.validate(map[string]any{"city": "x"}); err != nil {
		t.Errorf("validate: %v", err)
	}
	js := `{"providers":[{"name":"p","capabilities":[{"path":"a","url":"https://a.example/x"}]}]}`
	c, err = Parse("c.json", []byte(js), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cp := c.Provider("p").Capability("a"); cp.Method != "POST" || cp.Timeout() != defaultToolTimeout || string(cp.InputSchema) != `{"type":"object"}` {
		t.Errorf("defaults: %+v", cp)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	cap := func(s string) string {
		return `{"providers":[{"name":"p","capabilities":[` + s + `]}]}`
	}
	for name, tc := range map[string]struct{ doc, want string }{
		"unset variable":     {cap(`{"path":"a","url":"http://x/","headers":{"A":"${NOPE}"}}`), "NOPE is not set"},
		"unknown field":      {`{"providers":[{"name":"p","nope":1}]}`, "unknown field"},
		"builtin name":       {`{"providers":[{"name":"firecrawl"}]}`, "defined twice"},
		"duplicate provider": {`{"providers":[{"name":"a"},{"name":"a"}]}`, "defined twice"},
		"duplicate path":     {cap(`{"path":"a","url":"http://x/"},{"path":"a","url":"http://x/"}`), "defined twice"},
		"bad method":         {cap(`{"path":"a","url":"http://x/","method":"PUT"}`), "only GET and POST"},
		"relative url":       {cap(`{"path":"a","url":"/x"}`), "absolute http(s) URL"},
		"ftp url":            {cap(`{"path":"a","url":"ftp://x/"}`), "absolute http(s) URL"},
		"negative credits":   {cap(`{"path":"a","url":"http://x/","credits":-1}`), "credits"},
		"long timeout":       {cap(`{"path":"a","url":"http://x/","timeoutMs":300001}`), "timeoutMs"},
		"bad schema":         {cap(`{"path":"a","url":"http://x/","inputSchema":{"type":"nope"}}`), "inputSchema"},
		"remote ref":         {cap(`{"path":"a","url":"http://x/","inputSchema":{"$ref":"http://evil.example/s.json"}}`), "inputSchema"},
		"bad domain":         {cap(`{"path":"a","url":"http://x/","domains":["http://a.com/"]}`), "domains[0]"},
		"empty path":         {cap(`{"path":"","url":"http://x/"}`), "path"},
		"long name":          {`{"providers":[{"name":"` + strings.Repeat("n", 201) + `"}]}`, "name"},
		"not json":           {`providers: []`, "invalid character"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("c.json", []byte(tc.doc), env(nil))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse: %v, want an error with %q", err, tc.want)
			}
		})
	}
	if _, err := Parse("c.yaml", []byte(strings.Repeat("#", MaxFileBytes+1)), env(nil)); err == nil {
		t.Errorf("an oversized file parsed")
	}
}

func TestSourceReloads(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "catalog.yml")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("providers:\n  - name: one\n")
	if _, err := OpenSource(filepath.Join(t.TempDir(), "missing.yml"), env(nil), nil); err == nil {
		t.Errorf("a missing file opened")
	}
	src, err := OpenSource(path, env(nil), testenv.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	src.now = func() time.Time { return now }
	if src.Catalog().Provider("one") == nil {
		t.Fatal("first load")
	}
	write("providers:\n  - name: two\n  - name: three\n")
	if src.Catalog().Provider("two") != nil {
		t.Errorf("reloaded before CheckEvery passed")
	}
	now = now.Add(2 * time.Second)
	if c := src.Catalog(); c.Provider("two") == nil || c.Provider("one") != nil {
		t.Errorf("not reloaded after a change: %+v", c.Providers)
	}
	// A broken file keeps the last good catalog.
	write("providers: [ {name: ")
	now = now.Add(2 * time.Second)
	if src.Catalog().Provider("two") == nil {
		t.Errorf("a broken file replaced the catalog")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Second)
	if src.Catalog().Provider("two") == nil {
		t.Errorf("a removed file replaced the catalog")
	}
	write("providers:\n  - name: four\n")
	now = now.Add(2 * time.Second)
	if src.Catalog().Provider("four") == nil {
		t.Errorf("not reloaded after the file came back")
	}
}
