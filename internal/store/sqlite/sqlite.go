// Package sqlite implements store.Store on an embedded SQLite file with the
// pure-Go modernc.org/sqlite driver (no cgo), for single-node deployments.
//
// The file is opened in WAL mode with foreign keys on. Writes go through a
// pool of exactly one connection whose transactions begin IMMEDIATE, so
// concurrent writers in this process queue in Go instead of failing with
// SQLITE_BUSY; reads use a separate read-only pool and run concurrently. A
// busy timeout covers other processes using the same file.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/migrations"
)

// busyTimeout is how long a connection waits for a lock held by another
// process before failing with SQLITE_BUSY.
const busyTimeout = 10 * time.Second

// timeFormat is how timestamps are stored: UTC, fixed width, so that text
// order is time order.
const timeFormat = "2006-01-02T15:04:05.000000Z07:00"

// DBTX is what queries need; *sql.DB, *sql.Conn and *sql.Tx satisfy it.
type DBTX interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Store is the SQLite store. It is safe for concurrent use.
type Store struct {
	write *sql.DB // one connection, IMMEDIATE transactions
	read  *sql.DB // query_only connections
	log   *slog.Logger
	now   func() time.Time
}

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed) the database file at path, creating its
// parent directory with mode 0700, and applies pending migrations. The
// database file and its -wal and -shm files are made 0600 whatever the
// mode of the directory and the umask (SQLite gives the -wal and -shm
// files the mode of the database file).
func Open(ctx context.Context, path string, log *slog.Logger) (*Store, error) {
	if path == "" || path == ":memory:" || strings.ContainsAny(path, "?#") || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("store: open sqlite: path %q must be a plain file path", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store: open sqlite: create directory: %w", err)
	}
	if err := makePrivate(path); err != nil {
		return nil, fmt.Errorf("store: open sqlite: %w", err)
	}
	params := url.Values{}
	params.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	params.Add("_pragma", "foreign_keys(1)")
	params.Add("_pragma", "synchronous(NORMAL)")
	writeParams := cloneValues(params)
	writeParams.Add("_pragma", "journal_mode(WAL)")
	writeParams.Set("_txlock", "immediate")
	readParams := cloneValues(params)
	readParams.Add("_pragma", "query_only(1)")

	write, err := sql.Open("sqlite", path+"?"+writeParams.Encode())
	if err != nil {
		return nil, fmt.Errorf("store: open sqlite: %w", err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)
	s := &Store{write: write, log: log, now: time.Now}
	// The writer connects first so that the file exists in WAL mode before
	// any reader opens it.
	if err := write.PingContext(ctx); err != nil {
		_ = write.Close()
		return nil, fmt.Errorf("store: open sqlite: %w", err)
	}
	if err := makePrivate(path); err != nil {
		_ = write.Close()
		return nil, fmt.Errorf("store: open sqlite: %w", err)
	}
	read, err := sql.Open("sqlite", path+"?"+readParams.Encode())
	if err != nil {
		_ = write.Close()
		return nil, fmt.Errorf("store: open sqlite: %w", err)
	}
	read.SetMaxOpenConns(max(4, runtime.GOMAXPROCS(0)))
	s.read = read
	if err := s.migrate(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// makePrivate creates the database file with mode 0600 when it does not
// exist, and sets 0600 on it and on its -wal, -shm and -journal files
// when they do (databases created before this rule, or by another tool).
func makePrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		fi, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if fi.Mode().Perm() != 0o600 {
			if err := os.Chmod(p, 0o600); err != nil {
				return fmt.Errorf("make %s private: %w", p, err)
			}
		}
	}
	return nil
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// WriteDB returns the single-connection write pool, whose transactions begin
// IMMEDIATE. The job queue library shares it so that its writes queue behind
// the store's on the one connection instead of failing with SQLITE_BUSY. A
// caller must not hold the connection while calling the store's methods,
// which would wait for it.
func (s *Store) WriteDB() *sql.DB { return s.write }

// Close closes both connection pools.
func (s *Store) Close() error {
	var errs []error
	if s.read != nil {
		errs = append(errs, s.read.Close())
	}
	errs = append(errs, s.write.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

// Ping checks that the database file can be read and written.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.write.PingContext(ctx); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	if err := s.read.PingContext(ctx); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	return nil
}

// Transact runs fn in an IMMEDIATE transaction on the write connection,
// committing if fn returns nil and rolling back otherwise (also on panic).
// fn must use only tx: the store's other methods would wait for the write
// connection fn holds.
func (s *Store) Transact(ctx context.Context, fn func(tx DBTX) error) (err error) {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			if rbErr := tx.Rollback(); rbErr != nil && !errors.Is(rbErr, sql.ErrTxDone) {
				s.log.ErrorContext(ctx, "store rollback failed", "error", rbErr)
			}
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	committed = true
	return nil
}

// migrate applies the pending migrations in one IMMEDIATE transaction, which
// holds the database write lock and so serializes concurrent processes.
func (s *Store) migrate(ctx context.Context) error {
	all, err := migrations.Load(migrations.SQLite)
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	return s.Transact(ctx, func(tx DBTX) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER NOT NULL PRIMARY KEY,
			applied_at TEXT    NOT NULL
		) STRICT`); err != nil {
			return fmt.Errorf("store: migrate: create schema_migrations: %w", err)
		}
		rows, err := tx.QueryContext(ctx, "SELECT version FROM schema_migrations")
		if err != nil {
			return fmt.Errorf("store: migrate: applied versions: %w", err)
		}
		applied := make(map[int]bool)
		for rows.Next() {
			var v int
			if err := rows.Scan(&v); err != nil {
				_ = rows.Close()
				return fmt.Errorf("store: migrate: applied versions: %w", err)
			}
			applied[v] = true
			if !slices.ContainsFunc(all, func(m migrations.Migration) bool { return m.Version == v }) {
				s.log.WarnContext(ctx, "database has a migration this binary does not know", "version", v)
			}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("store: migrate: applied versions: %w", err)
		}
		_ = rows.Close()
		for _, m := range all {
			if applied[m.Version] {
				continue
			}
			if _, err := tx.ExecContext(ctx, m.Up); err != nil {
				return fmt.Errorf("store: migrate: apply %04d_%s: %w", m.Version, m.Name, err)
			}
			if _, err := tx.ExecContext(ctx,
				"INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
				m.Version, formatTime(s.now())); err != nil {
				return fmt.Errorf("store: migrate: record %04d_%s: %w", m.Version, m.Name, err)
			}
			s.log.InfoContext(ctx, "migration applied", "version", m.Version, "name", m.Name)
		}
		return nil
	})
}

// formatTime renders t as stored, truncated to microseconds like Postgres.
func formatTime(t time.Time) string {
	return t.UTC().Truncate(time.Microsecond).Format(timeFormat)
}

// parseTime reads a stored timestamp.
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeFormat, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad stored time %q: %w", s, err)
	}
	return t.UTC(), nil
}

// mapErr wraps err as store.ErrNotFound or store.ErrConflict when it is a
// missing row, a unique or a foreign key violation, keeping the cause.
func mapErr(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %w", store.ErrNotFound, err)
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		switch liteErr.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w: %w", store.ErrConflict, err)
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return fmt.Errorf("%w: %w", store.ErrNotFound, err)
		}
	}
	return err
}
