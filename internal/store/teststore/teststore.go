// Package teststore opens throwaway stores for tests of packages that use
// store.Store: a Postgres store in a fresh schema dropped when the test ends,
// or an SQLite store in a temporary directory.
package teststore

import (
	"context"
	"crypto/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/firegate/firegate/internal/store/postgres"
	"github.com/firegate/firegate/internal/store/sqlite"
	"github.com/firegate/firegate/internal/testenv"
)

// Postgres returns a migrated store in a new random schema of the database at
// testenv.PostgresURL (skipping the test if it is unreachable, failing under
// REQUIRE_INTEGRATION=1). The store is closed and the schema dropped when the
// test ends.
func Postgres(tb testing.TB) *postgres.Store {
	tb.Helper()
	url := testenv.PostgresURL(tb)
	schema := "test_" + strings.ToLower(rand.Text())
	tb.Cleanup(func() { dropSchema(tb, url, schema) })
	s, err := postgres.OpenOptions(tb.Context(), url, testenv.Logger(tb), postgres.Options{Schema: schema, MaxConns: 16})
	if err != nil {
		tb.Fatalf("teststore: open postgres: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// SQLite returns a migrated store on a file in tb.TempDir(), closed when the
// test ends.
func SQLite(tb testing.TB) *sqlite.Store {
	tb.Helper()
	s, err := sqlite.Open(tb.Context(), filepath.Join(tb.TempDir(), "store.db"), testenv.Logger(tb))
	if err != nil {
		tb.Fatalf("teststore: open sqlite: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("teststore: close sqlite: %v", err)
		}
	})
	return s
}

func dropSchema(tb testing.TB, url, schema string) {
	ctx := context.WithoutCancel(tb.Context())
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		tb.Errorf("teststore: drop schema %s: %v", schema, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
		tb.Errorf("teststore: drop schema %s: %v", schema, err)
	}
}
