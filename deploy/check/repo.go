// Package check holds tests of firegate's deployment files (Dockerfile,
// docker-compose.yml, .env.example and the Kubernetes manifests under
// deploy/k8s) that run without a Docker engine or a cluster. It is its own
// Go module so the compose and Kubernetes libraries stay out of the server's
// module; `.ci/run` runs it after the main test suite.
//
// The helpers here read the rest of the repository: the environment
// variables the server reads (from cmd/server's source), the Debian packages
// .ci/run installs, the variables .env.example documents, and the Go
// packages the server binary is built from.
package check

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ModulePath is the server's Go module.
const ModulePath = "github.com/firegate/firegate"

// RepoRoot returns the repository root: two levels above this package's
// directory (deploy/check), which is where `go test` runs it.
func RepoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root := filepath.Clean(filepath.Join(wd, "..", ".."))
	if _, err := os.Stat(filepath.Join(root, "cmd", "server")); err != nil {
		return "", fmt.Errorf("check: repository root not found from %s: %w", wd, err)
	}
	return root, nil
}

// envNameRE is an environment variable name as the server spells them.
var envNameRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// fieldCommentRE is the `// NAME: meaning` comment of a Config field.
var fieldCommentRE = regexp.MustCompile(`^\s*([A-Z][A-Z0-9_]*):`)

// ServerEnvVars returns, sorted, every environment variable the server
// reads according to its source in dir (cmd/server): the `name:` of every
// row of its settings table (a `[]setting{...}` literal), the string
// arguments of getenv/os.Getenv/os.LookupEnv calls in its non-test files
// (literals or package constants), plus the `// NAME:` comments on the
// fields of the Config struct. New variables are so picked up without
// editing the checks.
func ServerEnvVars(dir string) ([]string, error) {
	fset := token.NewFileSet()
	matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, path := range matches {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("check: no Go files in %s", dir)
	}
	consts := stringConsts(files)
	seen := map[string]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if isEnvRead(n.Fun) && len(n.Args) == 1 {
					if name, ok := stringValue(n.Args[0], consts); ok && envNameRE.MatchString(name) {
						seen[name] = true
					}
				}
			case *ast.CompositeLit:
				for _, name := range settingNames(n, consts) {
					seen[name] = true
				}
			case *ast.TypeSpec:
				if st, ok := n.Type.(*ast.StructType); ok && n.Name.Name == "Config" {
					for _, field := range st.Fields.List {
						for _, cg := range []*ast.CommentGroup{field.Doc, field.Comment} {
							if cg == nil {
								continue
							}
							for _, c := range cg.List {
								text := strings.TrimPrefix(strings.TrimPrefix(c.Text, "//"), "/*")
								if m := fieldCommentRE.FindStringSubmatch(text); m != nil {
									seen[m[1]] = true
								}
							}
						}
					}
				}
			}
			return true
		})
	}
	return sortedKeys(seen), nil
}

// settingNames returns the variable names of the rows of lit when it is
// the settings table, a `[]setting{{name: "PORT", ...}, ...}` literal.
func settingNames(lit *ast.CompositeLit, consts map[string]string) []string {
	at, ok := lit.Type.(*ast.ArrayType)
	if !ok {
		return nil
	}
	if elt, ok := at.Elt.(*ast.Ident); !ok || elt.Name != "setting" {
		return nil
	}
	var names []string
	for _, row := range lit.Elts {
		rl, ok := row.(*ast.CompositeLit)
		if !ok {
			continue
		}
		for _, e := range rl.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "name" {
				if name, ok := stringValue(kv.Value, consts); ok && envNameRE.MatchString(name) {
					names = append(names, name)
				}
			}
		}
	}
	return names
}

// isEnvRead reports whether fun is getenv, os.Getenv or os.LookupEnv.
func isEnvRead(fun ast.Expr) bool {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name == "getenv"
	case *ast.SelectorExpr:
		x, ok := f.X.(*ast.Ident)
		return ok && x.Name == "os" && (f.Sel.Name == "Getenv" || f.Sel.Name == "LookupEnv")
	}
	return false
}

// stringConsts maps the package's string constants to their values.
func stringConsts(files []*ast.File) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						if v, ok := stringValue(vs.Values[i], nil); ok {
							out[name.Name] = v
						}
					}
				}
			}
		}
	}
	return out
}

// stringValue is the value of a string literal, or of an identifier naming
// one of consts.
func stringValue(e ast.Expr, consts map[string]string) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.Ident:
		v, ok := consts[e.Name]
		return v, ok
	}
	return "", false
}

// pkgsLineRE matches a `pkgs+=(a b c)` line of .ci/run.
var pkgsLineRE = regexp.MustCompile(`pkgs\+=\(([^)]*)\)`)

// CIPackages returns the Debian packages the CI script at path installs
// (its `pkgs+=(...)` entries), sorted.
func CIPackages(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, m := range pkgsLineRE.FindAllStringSubmatch(string(b), -1) {
		for _, p := range strings.Fields(m[1]) {
			seen[p] = true
		}
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("check: no pkgs+=(...) entries in %s", path)
	}
	return sortedKeys(seen), nil
}

// envLineRE matches `NAME=value` or a commented-out `# NAME=value` line.
var envLineRE = regexp.MustCompile(`^(#\s*)?([A-Z][A-Z0-9_]*)=(.*)$`)

// EnvExample is what .env.example says about one variable.
type EnvExample struct {
	Name string
	// Active is true for an uncommented line (the value is set when the
	// file is copied to .env), false for a `# NAME=default` line.
	Active bool
	Value  string
	// Doc is the comment block right above the line (or above the run of
	// variable lines it belongs to).
	Doc string
}

// ReadEnvExample parses an .env.example file: every `NAME=` line, set or
// commented out, with the comment block that documents it.
func ReadEnvExample(path string) (map[string]EnvExample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]EnvExample{}
	var doc []string
	afterVar := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if m := envLineRE.FindStringSubmatch(line); m != nil {
			if _, dup := out[m[2]]; dup {
				return nil, fmt.Errorf("check: %s: %s is listed twice", path, m[2])
			}
			// A run of variable lines shares the comment above it.
			out[m[2]] = EnvExample{Name: m[2], Active: m[1] == "", Value: m[3], Doc: strings.Join(doc, " ")}
			afterVar = true
			continue
		}
		if afterVar {
			doc, afterVar = nil, false
		}
		if strings.HasPrefix(line, "#") {
			doc = append(doc, strings.TrimSpace(strings.TrimPrefix(line, "#")))
		} else {
			doc = nil
		}
	}
	return out, sc.Err()
}

// ServerPackageDirs returns the directories (relative to root, slash
// separated) of the module's own packages the command in cmdDir is built
// from, following imports transitively, plus each one's go:embed patterns.
func ServerPackageDirs(root, cmdDir string) (map[string][]string, error) {
	out := map[string][]string{}
	queue := []string{cmdDir}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		if _, done := out[dir]; done {
			continue
		}
		matches, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(dir), "*.go"))
		if err != nil {
			return nil, err
		}
		embeds := []string{}
		for _, path := range matches {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
			if err != nil {
				return nil, err
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if rel, ok := strings.CutPrefix(p, ModulePath+"/"); ok {
					queue = append(queue, rel)
				}
			}
			for _, cg := range f.Comments {
				for _, c := range cg.List {
					if rest, ok := strings.CutPrefix(c.Text, "//go:embed "); ok {
						embeds = append(embeds, strings.Fields(rest)...)
					}
				}
			}
		}
		slices.Sort(embeds)
		out[dir] = embeds
	}
	return out, nil
}

// CheckValueLike reports whether value has the same kind as the example
// value .env.example shows for a variable: a duration (24h) wants a
// duration, an integer wants an integer, a boolean wants a boolean. Other
// examples accept anything.
func CheckValueLike(example, value string) error {
	switch {
	case example == "" || value == "":
		return nil
	case isInt(example):
		if !isInt(value) {
			return fmt.Errorf("%q is not an integer like %s", value, example)
		}
	case isDuration(example):
		if !isDuration(value) {
			return fmt.Errorf("%q is not a duration like %s", value, example)
		}
	case example == "true" || example == "false":
		if _, err := strconv.ParseBool(value); err != nil {
			return fmt.Errorf("%q is not a boolean", value)
		}
	}
	return nil
}

func isInt(s string) bool {
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

func isDuration(s string) bool {
	_, err := time.ParseDuration(s)
	return err == nil && !isInt(s)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
