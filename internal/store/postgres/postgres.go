// Package postgres implements store.Store on PostgreSQL with pgx v5. Open
// applies the embedded migrations under an advisory lock, so replicas that
// start at the same time migrate safely.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/migrations"
)

// SQLSTATE codes mapped to store errors.
const (
	codeUniqueViolation     = "23505"
	codeForeignKeyViolation = "23503"
)

// DBTX is what queries need; both *pgxpool.Pool and pgx.Tx satisfy it.
type DBTX interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Options tunes Open. The zero value is valid.
type Options struct {
	// MaxConns caps the pool size; 0 keeps pgxpool's default (or the
	// pool_max_conns URL parameter).
	MaxConns int32
	// Schema, if set, is created if missing and made the only entry of every
	// connection's search_path, so all tables live in it. Tests use a fresh
	// schema each to isolate themselves.
	Schema string
}

// Store is the PostgreSQL store. It is safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	log  *slog.Logger
}

var _ store.Store = (*Store)(nil)

// Open connects to databaseURL with default Options and applies migrations.
func Open(ctx context.Context, databaseURL string, log *slog.Logger) (*Store, error) {
	return OpenOptions(ctx, databaseURL, log, Options{})
}

// OpenOptions connects to databaseURL, checks the connection and applies
// pending migrations in one transaction under an advisory lock.
func OpenOptions(ctx context.Context, databaseURL string, log *slog.Logger, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("store: parse database url: %w", err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	if opts.Schema != "" {
		cfg.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{opts.Schema}.Sanitize()
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: open pool: %w", err)
	}
	s := &Store{pool: pool, log: log}
	if err := s.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if err := s.migrate(ctx, opts.Schema); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// Pool returns the underlying pool. The job queue library shares it, so its
// tables live in the same database and schema (search_path) as the store's
// and no second pool competes for connections.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close closes the pool, waiting for acquired connections to be released.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	return nil
}

// Transact runs fn in a transaction, committing if fn returns nil and rolling
// back otherwise (also on panic).
func (s *Store) Transact(ctx context.Context, fn func(tx DBTX) error) (err error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer func() {
		if err != nil {
			// Rollback must run even when ctx is canceled.
			if rbErr := tx.Rollback(context.WithoutCancel(ctx)); rbErr != nil && !errors.Is(rbErr, pgx.ErrTxClosed) {
				s.log.ErrorContext(ctx, "store rollback failed", "error", rbErr)
			}
		}
	}()
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
			panic(p)
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	return nil
}

// migrate applies the pending migrations in one transaction holding a
// transaction-scoped advisory lock keyed on the schema.
func (s *Store) migrate(ctx context.Context, schema string) error {
	all, err := migrations.Load(migrations.Postgres)
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	return s.Transact(ctx, func(tx DBTX) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockKey(schema)); err != nil {
			return fmt.Errorf("store: migrate: lock: %w", err)
		}
		if schema != "" {
			if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{schema}.Sanitize()); err != nil {
				return fmt.Errorf("store: migrate: create schema: %w", err)
			}
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    integer     PRIMARY KEY,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
			return fmt.Errorf("store: migrate: create schema_migrations: %w", err)
		}
		rows, err := tx.Query(ctx, "SELECT version FROM schema_migrations")
		if err != nil {
			return fmt.Errorf("store: migrate: applied versions: %w", err)
		}
		versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
		if err != nil {
			return fmt.Errorf("store: migrate: applied versions: %w", err)
		}
		applied := make(map[int]bool, len(versions))
		for _, v := range versions {
			applied[v] = true
			if !slices.ContainsFunc(all, func(m migrations.Migration) bool { return m.Version == v }) {
				s.log.WarnContext(ctx, "database has a migration this binary does not know", "version", v)
			}
		}
		for _, m := range all {
			if applied[m.Version] {
				continue
			}
			// No arguments: pgx uses the simple protocol, which allows
			// several statements in one Exec.
			if _, err := tx.Exec(ctx, m.Up); err != nil {
				return fmt.Errorf("store: migrate: apply %04d_%s: %w", m.Version, m.Name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version) VALUES ($1)", m.Version); err != nil {
				return fmt.Errorf("store: migrate: record %04d_%s: %w", m.Version, m.Name, err)
			}
			s.log.InfoContext(ctx, "migration applied", "version", m.Version, "name", m.Name, "schema", schema)
		}
		return nil
	})
}

// lockKey derives the advisory lock key of the migrator from the schema, so
// that tests migrating different schemas do not wait for each other.
func lockKey(schema string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("firegate/migrate\x00" + schema))
	return int64(h.Sum64()) //nolint:gosec // wrapping to int64 is intended
}

// mapErr wraps err as store.ErrNotFound or store.ErrConflict when it is a
// missing row, a unique or a foreign key violation, keeping the cause.
func mapErr(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: %w", store.ErrNotFound, err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case codeUniqueViolation:
			return fmt.Errorf("%w: %w", store.ErrConflict, err)
		case codeForeignKeyViolation:
			return fmt.Errorf("%w: %w", store.ErrNotFound, err)
		}
	}
	return err
}
