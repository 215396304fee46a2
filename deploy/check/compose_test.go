package check

import (
	"context"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
)

// composeEnv is the environment the compose file is loaded with in tests:
// the two secrets compose insists on, with values no real .env would have.
func composeEnv() map[string]string {
	return map[string]string{
		"POSTGRES_PASSWORD": "test-pg-password",
		"BOOTSTRAP_API_KEY": "fc-test-bootstrap-key",
	}
}

// loadCompose loads docker-compose.yml as `docker compose` would, with env
// as the variables for interpolation and the given profiles enabled. The
// env_file entries are not read, so a developer's own .env cannot change
// the outcome.
func loadCompose(t *testing.T, env map[string]string, profiles ...string) (*types.Project, error) {
	t.Helper()
	root := repoRoot(t)
	details := types.ConfigDetails{
		WorkingDir:  root,
		ConfigFiles: []types.ConfigFile{{Filename: filepath.Join(root, "docker-compose.yml")}},
		Environment: env,
	}
	return loader.LoadWithContext(context.Background(), details, func(o *loader.Options) {
		o.SetProjectName("firegate", true)
		o.Profiles = profiles
		o.SkipResolveEnvironment = true
	})
}

// project loads the compose file with the default profiles, failing on error.
func project(t *testing.T) *types.Project {
	t.Helper()
	p, err := loadCompose(t, composeEnv())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestComposeRequiresSecrets(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"POSTGRES_PASSWORD", "BOOTSTRAP_API_KEY"} {
		env := composeEnv()
		delete(env, name)
		if _, err := loadCompose(t, env); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("without %s: load error %v, want one naming it (no baked-in default secret)", name, err)
		}
		env[name] = ""
		if _, err := loadCompose(t, env); err == nil {
			t.Errorf("with %s empty: loaded, want an error", name)
		}
	}
}

func TestComposeServices(t *testing.T) {
	t.Parallel()
	p := project(t)
	if got, want := slices.Sorted(maps.Keys(p.Services)), []string{"api", "postgres", "redis", "worker"}; !slices.Equal(got, want) {
		t.Errorf("services on by default = %v, want %v", got, want)
	}

	all, err := loadCompose(t, composeEnv(), "*")
	if err != nil {
		t.Fatal(err)
	}
	for name, profile := range map[string]string{"ollama": "llm", "searxng": "search", "prometheus": "metrics"} {
		s, ok := all.Services[name]
		if !ok {
			t.Errorf("no %s service in profile %s", name, profile)
			continue
		}
		if !slices.Equal(s.Profiles, []string{profile}) {
			t.Errorf("%s profiles = %v, want [%s] (off by default)", name, s.Profiles, profile)
		}
	}
	for name, s := range all.Services {
		for _, v := range s.Volumes {
			if v.Type == types.VolumeTypeBind {
				if _, err := os.Stat(v.Source); err != nil {
					t.Errorf("%s mounts %s, which does not exist in the repository", name, v.Source)
				}
			}
		}
	}
}

// healthTest returns a service's health check command as one string.
func healthTest(t *testing.T, s types.ServiceConfig) string {
	t.Helper()
	if s.HealthCheck == nil || s.HealthCheck.Disable || len(s.HealthCheck.Test) < 2 {
		t.Fatalf("%s has no health check", s.Name)
	}
	return strings.Join(s.HealthCheck.Test[1:], " ")
}

// volumeAt returns the volume a service mounts at target.
func volumeAt(s types.ServiceConfig, target string) (types.ServiceVolumeConfig, bool) {
	for _, v := range s.Volumes {
		if v.Target == target {
			return v, true
		}
	}
	return types.ServiceVolumeConfig{}, false
}

func TestComposeFiregateServices(t *testing.T) {
	t.Parallel()
	p := project(t)
	root := repoRoot(t)
	api, worker := p.Services["api"], p.Services["worker"]

	for _, tc := range []struct {
		s       types.ServiceConfig
		command string
		health  string
	}{
		{api, "serve", "/ready"},
		{worker, "worker", "/health"},
	} {
		s := tc.s
		if !slices.Equal([]string(s.Command), []string{tc.command}) {
			t.Errorf("%s command = %v, want [%s]", s.Name, s.Command, tc.command)
		}
		if s.Build == nil || filepath.Clean(s.Build.Context) != root {
			t.Errorf("%s does not build the repository's Dockerfile", s.Name)
		}
		if h := healthTest(t, s); !strings.Contains(h, "http://127.0.0.1:3002"+tc.health) {
			t.Errorf("%s health check %q, want one on http://127.0.0.1:3002%s", s.Name, h, tc.health)
		}
		for _, dep := range []string{"postgres", "redis"} {
			if d, ok := s.DependsOn[dep]; !ok || d.Condition != types.ServiceConditionHealthy {
				t.Errorf("%s depends_on %s = %+v, want condition service_healthy", s.Name, dep, d)
			}
		}
		if len(s.EnvFiles) != 1 || filepath.Base(s.EnvFiles[0].Path) != ".env" || bool(s.EnvFiles[0].Required) {
			t.Errorf("%s env_file = %+v, want .env, not required", s.Name, s.EnvFiles)
		}
		env := s.Environment
		if got := deref(env["PORT"]); got != "3002" {
			t.Errorf("%s PORT = %q, want 3002 (what the health check and ports use), whatever .env says", s.Name, got)
		}
		if got := deref(env["DATA_DIR"]); got != "/data" {
			t.Errorf("%s DATA_DIR = %q, want /data (the image's volume)", s.Name, got)
		}
		db, err := url.Parse(deref(env["DATABASE_URL"]))
		if err != nil || db.Hostname() != "postgres" {
			t.Errorf("%s DATABASE_URL = %q, want the postgres service", s.Name, deref(env["DATABASE_URL"]))
		} else if pw, _ := db.User.Password(); pw != composeEnv()["POSTGRES_PASSWORD"] {
			t.Errorf("%s DATABASE_URL password is not ${POSTGRES_PASSWORD}", s.Name)
		}
		if r, err := url.Parse(deref(env["REDIS_URL"])); err != nil || r.Scheme != "redis" || r.Hostname() != "redis" {
			t.Errorf("%s REDIS_URL = %q, want redis://redis...", s.Name, deref(env["REDIS_URL"]))
		}
		if media, ok := volumeAt(s, "/data/media"); !ok || media.Type != types.VolumeTypeVolume || media.Source != "media" {
			t.Errorf("%s does not mount the shared media volume at /data/media", s.Name)
		}
	}

	if api.Image == "" || api.Image != worker.Image {
		t.Errorf("api image %q and worker image %q differ: both run the one server image", api.Image, worker.Image)
	}
	if got := deref(api.Environment["BOOTSTRAP_API_KEY"]); got != composeEnv()["BOOTSTRAP_API_KEY"] {
		t.Errorf("api BOOTSTRAP_API_KEY = %q, want ${BOOTSTRAP_API_KEY}", got)
	}
	if !slices.ContainsFunc(api.Ports, func(pc types.ServicePortConfig) bool { return pc.Target == 3002 }) {
		t.Error("api does not publish port 3002")
	}
	if data, ok := volumeAt(api, "/data"); !ok || data.Type != types.VolumeTypeVolume {
		t.Error("api does not keep /data on a named volume")
	}

	// The api enqueues; the workers run the jobs.
	if got := deref(api.Environment["QUEUE_WORKERS"]); got != "0" {
		t.Errorf("api QUEUE_WORKERS = %q, want 0 (jobs run on the worker service)", got)
	}
	if v, ok := worker.Environment["QUEUE_WORKERS"]; ok && deref(v) == "0" {
		t.Error("worker QUEUE_WORKERS is 0: nothing would run the jobs")
	}
	ex := envExample(t)
	for _, s := range []types.ServiceConfig{api, worker} {
		for k, v := range s.Environment {
			if err := CheckValueLike(ex[k].Value, deref(v)); err != nil {
				t.Errorf("%s %s: %v", s.Name, k, err)
			}
		}
	}

	// Scaled with --scale worker=N: nothing may pin one container.
	if worker.ContainerName != "" {
		t.Errorf("worker has container_name %q: --scale would fail", worker.ContainerName)
	}
	if len(worker.Ports) != 0 {
		t.Errorf("worker publishes ports %v: --scale would collide on the host", worker.Ports)
	}
	if _, ok := volumeAt(worker, "/data"); ok {
		t.Error("worker mounts a volume at /data: replicas would share the api's key file and Chrome profiles")
	}
}

func TestComposeBackingServices(t *testing.T) {
	t.Parallel()
	p := project(t)

	pg := p.Services["postgres"]
	if !regexp.MustCompile(`^postgres:1[67]\b`).MatchString(pg.Image) {
		t.Errorf("postgres image %s, want postgres:16 or 17", pg.Image)
	}
	if h := healthTest(t, pg); !strings.Contains(h, "pg_isready") {
		t.Errorf("postgres health check %q does not use pg_isready", h)
	}
	if v, ok := volumeAt(pg, "/var/lib/postgresql/data"); !ok || v.Type != types.VolumeTypeVolume {
		t.Error("postgres data is not on a named volume")
	}
	if got := deref(pg.Environment["POSTGRES_PASSWORD"]); got != composeEnv()["POSTGRES_PASSWORD"] {
		t.Errorf("postgres POSTGRES_PASSWORD = %q, want ${POSTGRES_PASSWORD}", got)
	}

	rd := p.Services["redis"]
	if !strings.HasPrefix(rd.Image, "redis:7") {
		t.Errorf("redis image %s, want redis:7", rd.Image)
	}
	if h := healthTest(t, rd); !strings.Contains(h, "redis-cli") || !strings.Contains(h, "ping") {
		t.Errorf("redis health check %q is not redis-cli ping", h)
	}
	if v, ok := volumeAt(rd, "/data"); !ok || v.Type != types.VolumeTypeVolume {
		t.Error("redis data is not on a named volume")
	}
	for _, s := range []types.ServiceConfig{pg, rd} {
		if len(s.Ports) != 0 {
			t.Errorf("%s publishes host ports %v: only the api needs to be reachable", s.Name, s.Ports)
		}
	}
}

// composeVarRE matches a ${VAR...} reference in the compose file.
var composeVarRE = regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]*)`)

// TestComposeEnvDocumented: every variable the compose file interpolates,
// and every variable the server reads, is documented in .env.example or set
// by the compose file for the api and worker.
func TestComposeEnvDocumented(t *testing.T) {
	t.Parallel()
	ex := envExample(t)
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range composeVarRE.FindAllStringSubmatch(string(raw), -1) {
		if _, ok := ex[m[1]]; !ok {
			t.Errorf("docker-compose.yml uses ${%s}, which .env.example does not document", m[1])
		}
	}

	p := project(t)
	for _, name := range serverEnv(t) {
		_, inAPI := p.Services["api"].Environment[name]
		_, inWorker := p.Services["worker"].Environment[name]
		if _, documented := ex[name]; !documented && !(inAPI && inWorker) {
			t.Errorf("the server reads %s, which neither .env.example documents nor compose sets", name)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
