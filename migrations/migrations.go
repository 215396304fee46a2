// Package migrations embeds the numbered SQL schema migrations of the durable
// store, one directory per SQL dialect (postgres/, sqlite/). Files are named
// NNNN_title.up.sql and NNNN_title.down.sql. A file that has been applied
// anywhere must never be edited; add a new numbered file instead.
//
// The store implementations apply the up migrations at Open and record them in
// a schema_migrations(version, applied_at) table.
package migrations

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Files holds the SQL files of every dialect, under postgres/ and sqlite/.
//
//go:embed postgres/*.sql sqlite/*.sql
var Files embed.FS

// Dialect names a SQL dialect and the directory of its files in Files.
type Dialect string

// The supported dialects.
const (
	Postgres Dialect = "postgres"
	SQLite   Dialect = "sqlite"
)

// Migration is one numbered schema change.
type Migration struct {
	Version int    // 1, 2, ... from the NNNN file name prefix
	Name    string // the title part of the file name
	Up      string // SQL applying the change
	Down    string // SQL reverting it
}

// Load returns the migrations of dialect d sorted by version. It fails if a
// file name is malformed, a version is duplicated, there is no version 1,
// or an up file has no down file (or the reverse). Versions may have gaps:
// numbers are handed out to features developed side by side, which land in
// any order, and the stores apply every version they have not recorded,
// whatever its place.
func Load(d Dialect) ([]Migration, error) {
	return load(Files, string(d))
}

func load(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("migrations: read %s: %w", dir, err)
	}
	byVersion := make(map[int]*Migration)
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		version, name, direction, err := parseName(e.Name())
		if err != nil {
			return nil, fmt.Errorf("migrations: %s: %w", dir, err)
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("migrations: read %s: %w", e.Name(), err)
		}
		m := byVersion[version]
		if m == nil {
			m = &Migration{Version: version, Name: name}
			byVersion[version] = m
		}
		if m.Name != name {
			return nil, fmt.Errorf("migrations: %s: version %d has two names %q and %q", dir, version, m.Name, name)
		}
		switch direction {
		case "up":
			m.Up = string(b)
		case "down":
			m.Down = string(b)
		}
	}
	out := make([]Migration, 0, len(byVersion))
	for _, m := range byVersion {
		if strings.TrimSpace(m.Up) == "" || strings.TrimSpace(m.Down) == "" {
			return nil, fmt.Errorf("migrations: %s: version %d needs non-empty up and down files", dir, m.Version)
		}
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	if len(out) > 0 && out[0].Version != 1 {
		return nil, fmt.Errorf("migrations: %s: version 1 missing", dir)
	}
	return out, nil
}

// parseName splits "0001_init.up.sql" into 1, "init", "up".
func parseName(file string) (version int, name, direction string, err error) {
	base, ok := strings.CutSuffix(file, ".sql")
	if !ok {
		return 0, "", "", fmt.Errorf("unexpected file %q", file)
	}
	switch {
	case strings.HasSuffix(base, ".up"):
		direction = "up"
	case strings.HasSuffix(base, ".down"):
		direction = "down"
	default:
		return 0, "", "", fmt.Errorf("file %q is neither .up.sql nor .down.sql", file)
	}
	base = strings.TrimSuffix(base, "."+direction)
	num, name, ok := strings.Cut(base, "_")
	if !ok || len(num) != 4 || name == "" {
		return 0, "", "", fmt.Errorf("file %q is not named NNNN_title.%s.sql", file, direction)
	}
	version, err = strconv.Atoi(num)
	if err != nil || version < 1 {
		return 0, "", "", fmt.Errorf("file %q has a bad version number", file)
	}
	return version, name, direction, nil
}
