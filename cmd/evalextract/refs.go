package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
)

// referenceTexts returns the reference libraries' text of every page of
// the corpus in dir (system name -> page id -> text), computed by the refs
// module (cmd/evalextract/refs) and cached: they change only with the
// corpus and that module, not with the server's extractor.
func referenceTexts(dir string, refresh bool) (map[string]map[string]string, error) {
	refs, err := refsModule()
	if err != nil {
		return nil, err
	}
	key, err := cacheKey(dir, refs)
	if err != nil {
		return nil, err
	}
	cacheDir, err := os.UserCacheDir()
	if err != nil {
		cacheDir = os.TempDir()
	}
	cacheDir = filepath.Join(cacheDir, "firegate-evalextract")
	path := filepath.Join(cacheDir, "refs-"+key+".json")
	if !refresh {
		if m, err := readTexts(path); err == nil {
			return m, nil
		}
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	tmp := path + ".tmp"
	fmt.Fprintf(os.Stderr, "evalextract: computing the reference libraries' texts of %s (cached in %s)\n", dir, cacheDir)
	cmd := exec.Command("go", "run", ".", "-corpus", abs, "-texts", tmp)
	cmd.Dir = refs
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("run %s: %w", refs, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, err
	}
	return readTexts(path)
}

func readTexts(path string) (map[string]map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// refsModule finds cmd/evalextract/refs from the working directory or one
// of its parents (the repository's root, where go run is started).
func refsModule() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "cmd", "evalextract", "refs")
		if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("cmd/evalextract/refs not found above the working directory")
		}
		dir = parent
	}
}

// cacheKey hashes what the reference texts depend on: the corpus's files
// (names, sizes, times) and the refs module's sources and versions.
func cacheKey(dir, refs string) (string, error) {
	h := sha256.New()
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	fmt.Fprintln(h, abs)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintln(h, p, info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		return "", err
	}
	for _, f := range []string{"main.go", "go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(refs, f))
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func sortedKeys(m map[string]map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
