package check

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"sigs.k8s.io/yaml"
)

// searxngSettings is the part of the SearXNG settings file the checks read.
type searxngSettings struct {
	UseDefaultSettings bool `json:"use_default_settings"`
	Server             struct {
		Port    int   `json:"port"`
		Limiter *bool `json:"limiter"`
	} `json:"server"`
	Search struct {
		Formats []string `json:"formats"`
	} `json:"search"`
}

// TestComposeSearchProfile checks the `search` profile: SearXNG's settings
// enable the JSON format firegate reads and no limiter; the api and worker
// have no SEARXNG_ENDPOINT unless .env sets it (search then answers 400
// SEARCH_NOT_CONFIGURED, not 502 for an engine that is not running), and
// the value .env.example offers for the profile is that service's port.
func TestComposeSearchProfile(t *testing.T) {
	t.Parallel()
	p, err := loadCompose(t, composeEnv(), "search")
	if err != nil {
		t.Fatal(err)
	}
	sx, ok := p.Services["searxng"]
	if !ok {
		t.Fatal("no searxng service in the search profile")
	}
	v, ok := volumeAt(sx, "/etc/searxng/settings.yml")
	if !ok {
		t.Fatal("searxng does not mount a settings.yml")
	}
	raw, err := os.ReadFile(v.Source)
	if err != nil {
		t.Fatal(err)
	}
	var st searxngSettings
	if err := yaml.Unmarshal(raw, &st); err != nil {
		t.Fatalf("%s: %v", v.Source, err)
	}
	if !slices.Contains(st.Search.Formats, "json") {
		t.Errorf("%s: search.formats = %v, want json listed (SearXNG answers 403 otherwise)", filepath.Base(v.Source), st.Search.Formats)
	}
	if st.Server.Limiter == nil || *st.Server.Limiter {
		t.Errorf("%s: server.limiter must be false (the limiter needs its own Valkey and would throttle firegate)", filepath.Base(v.Source))
	}
	if !st.UseDefaultSettings {
		t.Error("settings.yml must keep use_default_settings: true (it only lists differences)")
	}
	port := st.Server.Port
	if port == 0 {
		port = 8080
	}
	if got := deref(sx.Environment["SEARXNG_PORT"]); got != "" && got != strconv.Itoa(port) {
		t.Errorf("searxng SEARXNG_PORT %s disagrees with settings port %d", got, port)
	}
	if len(sx.Ports) != 0 {
		t.Errorf("searxng publishes %v: only firegate should reach it", sx.Ports)
	}

	for _, name := range []string{"api", "worker"} {
		if got := deref(p.Services[name].Environment["SEARXNG_ENDPOINT"]); got != "" {
			t.Errorf("%s SEARXNG_ENDPOINT = %q without .env setting it, want empty", name, got)
		}
	}
	examples, err := ReadEnvExample(filepath.Join(repoRoot(t), ".env.example"))
	if err != nil {
		t.Fatal(err)
	}
	offered := examples["SEARXNG_ENDPOINT"].Value
	u, err := url.Parse(offered)
	if err != nil || u.Scheme != "http" || u.Hostname() != "searxng" || u.Port() != strconv.Itoa(port) {
		t.Errorf(".env.example SEARXNG_ENDPOINT = %q, want http://searxng:%d (the profile's service)", offered, port)
	}

	// .env can point at another instance.
	env := composeEnv()
	env["SEARXNG_ENDPOINT"] = "https://search.example.org"
	p, err = loadCompose(t, env)
	if err != nil {
		t.Fatal(err)
	}
	if got := deref(p.Services["api"].Environment["SEARXNG_ENDPOINT"]); got != "https://search.example.org" {
		t.Errorf("api SEARXNG_ENDPOINT = %q, want .env's value", got)
	}
}
