package check

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
)

// ciTestOnlyPackages are the Debian packages .ci/run installs for the tests
// themselves, not for the server: Node.js and npm run the official
// JavaScript SDK in the end-to-end test, postgresql-client gives CI
// pg_isready and pg_ctlcluster, valgrind counts the instructions of the
// pipeline cost budget step, and yt-dlp is the optional downloader of
// video platforms' media, which the operator chooses to install (the image
// leaves it out: YTDLP_PATH). Every other package .ci/run installs is
// something the server runs at run time (Chromium, its fonts, pdftoppm,
// tesseract) and must be in the image too, so a tool added for a feature's
// tests without reaching the image fails here until it is sorted into one
// list or the other.
var ciTestOnlyPackages = []string{"nodejs", "npm", "postgresql-client", "valgrind", "yt-dlp"}

// stage is one FROM ... block of the Dockerfile.
type stage struct {
	name  string
	from  string
	nodes []*parser.Node
}

// args returns the words after an instruction.
func args(n *parser.Node) []string {
	var out []string
	for x := n.Next; x != nil; x = x.Next {
		out = append(out, x.Value)
	}
	return out
}

// instr returns the stage's instructions of one kind (upper case).
func (s stage) instr(kind string) []*parser.Node {
	var out []*parser.Node
	for _, n := range s.nodes {
		if strings.EqualFold(n.Value, kind) {
			out = append(out, n)
		}
	}
	return out
}

// env returns the stage's ENV settings.
func (s stage) env() map[string]string {
	out := map[string]string{}
	for _, n := range s.instr("ENV") {
		a := args(n)
		for i := 0; i+1 < len(a); i += 3 { // key, value, separator
			out[a[i]] = a[i+1]
		}
	}
	return out
}

// dockerfile parses the repository's Dockerfile into its global ARGs and
// stages.
func dockerfile(t *testing.T) (map[string]string, []stage) {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := parser.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	globals := map[string]string{}
	var stages []stage
	for _, n := range res.AST.Children {
		switch {
		case strings.EqualFold(n.Value, "FROM"):
			a := args(n)
			s := stage{from: a[0]}
			if len(a) == 3 && strings.EqualFold(a[1], "AS") {
				s.name = a[2]
			}
			stages = append(stages, s)
		case len(stages) == 0 && strings.EqualFold(n.Value, "ARG"):
			k, v, _ := strings.Cut(args(n)[0], "=")
			globals[k] = v
		case len(stages) > 0:
			stages[len(stages)-1].nodes = append(stages[len(stages)-1].nodes, n)
		}
	}
	if len(stages) < 2 {
		t.Fatalf("Dockerfile has %d stages, want a build stage and a runtime stage", len(stages))
	}
	return globals, stages
}

// goVersionRE is the go directive of a go.mod.
var goVersionRE = regexp.MustCompile(`(?m)^go (\d+)\.(\d+)`)

func TestDockerfileBuildStage(t *testing.T) {
	t.Parallel()
	globals, stages := dockerfile(t)
	build := stages[0]

	gomod, err := os.ReadFile(filepath.Join(repoRoot(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := goVersionRE.FindSubmatch(gomod)
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	want := string(m[1]) + "." + string(m[2])
	from := strings.ReplaceAll(build.from, "${GO_VERSION}", globals["GO_VERSION"])
	if !strings.HasPrefix(from, "golang:"+want) {
		t.Errorf("build stage FROM %s (= %s): want golang:%s..., the go.mod version", build.from, from, want)
	}

	var buildCmd string
	for _, n := range build.instr("RUN") {
		if a := args(n); len(a) > 0 && strings.Contains(a[0], "go build") {
			buildCmd = a[0]
		}
	}
	if buildCmd == "" {
		t.Fatal("build stage has no RUN go build")
	}
	for _, w := range []string{"-trimpath", `-ldflags="-s -w"`, "./cmd/server"} {
		if !strings.Contains(buildCmd, w) {
			t.Errorf("go build line %q lacks %s", buildCmd, w)
		}
	}
	if build.env()["CGO_ENABLED"] != "0" && !strings.Contains(buildCmd, "CGO_ENABLED=0") {
		t.Error("build stage does not set CGO_ENABLED=0: the binary must be static")
	}
}

// runtimeStage returns the last stage, the image that ships.
func runtimeStage(t *testing.T) stage {
	t.Helper()
	_, stages := dockerfile(t)
	return stages[len(stages)-1]
}

func TestDockerfileRuntimeStage(t *testing.T) {
	t.Parallel()
	rt := runtimeStage(t)
	if rt.from != "debian:bookworm-slim" {
		t.Errorf("runtime stage FROM %s, want debian:bookworm-slim", rt.from)
	}

	users := rt.instr("USER")
	if len(users) == 0 {
		t.Fatal("runtime stage has no USER: the server would run as root")
	}
	uid, _, _ := strings.Cut(args(users[len(users)-1])[0], ":")
	if uid == "root" || uid == "0" {
		t.Errorf("runtime stage runs as %s", uid)
	}
	if _, err := strconv.Atoi(uid); err != nil {
		t.Errorf("USER %s: use a numeric uid so Kubernetes' runAsNonRoot can verify it", uid)
	}

	hc := rt.instr("HEALTHCHECK")
	if len(hc) != 1 {
		t.Fatalf("runtime stage has %d HEALTHCHECKs, want 1", len(hc))
	}
	hcArgs := args(hc[0])
	if len(hcArgs) < 2 || hcArgs[0] != "CMD" || !strings.Contains(strings.Join(hcArgs[1:], " "), "/health") {
		t.Errorf("HEALTHCHECK %v does not probe /health", hcArgs)
	}
	if strings.Contains(strings.Join(hcArgs, " "), "curl") && !slices.Contains(aptPackages(t, rt), "curl") {
		t.Error("HEALTHCHECK uses curl, which the runtime stage does not install")
	}

	env := rt.env()
	for k, v := range map[string]string{"CHROME_PATH": "/usr/lib/chromium/chromium-headless-shell", "DATA_DIR": "/data", "PORT": "3002"} {
		if env[k] != v {
			t.Errorf("runtime ENV %s=%q, want %q", k, env[k], v)
		}
	}
	if vols := rt.instr("VOLUME"); len(vols) != 1 || !slices.Contains(args(vols[0]), "/data") {
		t.Error("runtime stage does not declare VOLUME /data")
	}
	if ex := rt.instr("EXPOSE"); len(ex) != 1 || !slices.Contains(args(ex[0]), "3002") {
		t.Error("runtime stage does not EXPOSE 3002")
	}
	ep := rt.instr("ENTRYPOINT")
	if len(ep) != 1 || !ep[0].Attributes["json"] || !slices.Contains(args(ep[0]), "/usr/local/bin/server") {
		t.Error("ENTRYPOINT is not the server binary in exec (JSON) form")
	}
	cmd := rt.instr("CMD")
	if len(cmd) != 1 || !slices.Equal(args(cmd[0]), []string{"serve"}) {
		t.Error(`CMD is not ["serve"]`)
	}
	copied := false
	for _, n := range rt.instr("COPY") {
		if slices.Contains(n.Flags, "--from=build") && slices.Contains(args(n), "/usr/local/bin/server") {
			copied = true
		}
	}
	if !copied {
		t.Error("runtime stage does not COPY --from=build the binary to /usr/local/bin/server")
	}
}

// aptPackages returns the packages of the stage's apt-get install commands.
func aptPackages(t *testing.T, s stage) []string {
	t.Helper()
	var pkgs []string
	for _, n := range s.instr("RUN") {
		for _, cmd := range strings.Split(strings.Join(args(n), " "), "&&") {
			words := strings.Fields(cmd)
			i := slices.Index(words, "install")
			if i < 1 || words[i-1] != "apt-get" {
				continue
			}
			for _, w := range words[i+1:] {
				if !strings.HasPrefix(w, "-") {
					pkgs = append(pkgs, w)
				}
			}
		}
	}
	if len(pkgs) == 0 {
		t.Fatal("runtime stage installs no Debian packages")
	}
	return pkgs
}

func TestDockerfileInstallsCIRuntimePackages(t *testing.T) {
	t.Parallel()
	ci, err := CIPackages(filepath.Join(repoRoot(t), ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	image := aptPackages(t, runtimeStage(t))
	for _, p := range ci {
		if slices.Contains(ciTestOnlyPackages, p) {
			continue
		}
		if !slices.Contains(image, p) {
			t.Errorf(".ci/run installs %s but the image does not: add it to the Dockerfile's apt-get install, or to ciTestOnlyPackages if only tests use it", p)
		}
	}
	// What the features need, whatever .ci/run does.
	for _, p := range []string{"chromium-headless-shell", "fonts-liberation", "poppler-utils", "tesseract-ocr", "ca-certificates"} {
		if !slices.Contains(image, p) {
			t.Errorf("the image does not install %s", p)
		}
	}
	cjk := false
	for _, p := range image {
		cjk = cjk || strings.HasPrefix(p, "fonts-noto-cjk") || strings.HasPrefix(p, "fonts-wqy")
	}
	if !cjk {
		t.Error("the image installs no CJK font: screenshots of Chinese, Japanese and Korean pages would show boxes")
	}
}

// TestDockerignoreKeepsBuildInputs: the build context has every file the
// server binary is compiled from (its module's packages, their embedded
// files, go.mod and go.sum) and none of the local secrets and clutter.
func TestDockerignoreKeepsBuildInputs(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	f, err := os.Open(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	patterns, err := ignorefile.ReadAll(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatal(err)
	}
	excluded := func(rel string) bool {
		ex, err := pm.MatchesOrParentMatches(rel)
		if err != nil {
			t.Fatal(err)
		}
		return ex
	}

	need := []string{"go.mod", "go.sum"}
	dirs, err := ServerPackageDirs(root, "cmd/server")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 3 {
		t.Fatalf("found only %d packages under cmd/server's imports: %v", len(dirs), dirs)
	}
	for dir, embeds := range dirs {
		files, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(dir), "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			if !strings.HasSuffix(file, "_test.go") {
				need = append(need, path.Join(dir, filepath.Base(file)))
			}
		}
		for _, pattern := range embeds {
			matches, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(dir), filepath.FromSlash(pattern)))
			if err != nil || len(matches) == 0 {
				t.Errorf("%s: go:embed %s matches nothing", dir, pattern)
			}
			for _, m := range matches {
				rel, _ := filepath.Rel(root, m)
				need = append(need, filepath.ToSlash(rel))
			}
		}
	}
	for _, rel := range need {
		if excluded(rel) {
			t.Errorf(".dockerignore leaves %s out of the build context, but the server is built from it", rel)
		}
	}
	for _, rel := range []string{".env", "data/api-key", ".git/config", "e2e/sdk/node_modules/x.js", "deploy/k8s/secret.yaml"} {
		if !excluded(rel) {
			t.Errorf(".dockerignore lets %s into the build context", rel)
		}
	}
}
