package postgres

import (
	"context"
	"crypto/rand"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/storetest"
	"github.com/firegate/firegate/internal/testenv"
	"github.com/firegate/firegate/migrations"
)

// newSchema returns a fresh random schema name that is dropped, with all it
// holds, when the test ends (after stores registered later are closed).
func newSchema(t testing.TB, url string) string {
	t.Helper()
	schema := "test_" + strings.ToLower(rand.Text())
	t.Cleanup(func() {
		ctx := context.WithoutCancel(t.Context())
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

// openTest opens a store in schema and closes it when the test ends.
func openTest(t testing.TB, url, schema string) *Store {
	t.Helper()
	s, err := OpenOptions(t.Context(), url, testenv.Logger(t), Options{Schema: schema, MaxConns: 8})
	if err != nil {
		t.Fatalf("OpenOptions: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestContract(t *testing.T) {
	url := testenv.PostgresURL(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		return openTest(t, url, newSchema(t, url))
	})
	storetest.RunJobs(t, func(t *testing.T) storetest.JobsUnderTest {
		return openTest(t, url, newSchema(t, url))
	})
	storetest.RunAgent(t, func(t *testing.T) storetest.AgentUnderTest {
		return openTest(t, url, newSchema(t, url))
	})
	storetest.RunMonitors(t, func(t *testing.T) storetest.MonitorsUnderTest {
		return openTest(t, url, newSchema(t, url))
	})
	storetest.RunWorkers(t, func(t *testing.T) store.WorkerStore {
		return openTest(t, url, newSchema(t, url))
	})
	storetest.RunInteract(t, func(t *testing.T) storetest.InteractUnderTest {
		return openTest(t, url, newSchema(t, url))
	})
	storetest.RunActivity(t, func(t *testing.T) storetest.ActivityUnderTest {
		return openTest(t, url, newSchema(t, url))
	})
	storetest.RunCrawlMemory(t, func(t *testing.T) storetest.CrawlMemoryUnderTest {
		return openTest(t, url, newSchema(t, url))
	})
	storetest.RunFeedback(t, func(t *testing.T) storetest.FeedbackUnderTest {
		return openTest(t, url, newSchema(t, url))
	})
}

func TestConcurrentOpenMigratesOnce(t *testing.T) {
	t.Parallel()
	url := testenv.PostgresURL(t)
	schema := newSchema(t, url)
	const replicas = 4
	stores := make([]*Store, replicas)
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Go(func() {
			stores[i], errs[i] = OpenOptions(t.Context(), url, testenv.Logger(t), Options{Schema: schema, MaxConns: 2})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: OpenOptions: %v", i, err)
		}
		t.Cleanup(func() { _ = stores[i].Close() })
	}
	all, err := migrations.Load(migrations.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	var n, distinct, maxVersion int
	if err := stores[0].pool.QueryRow(t.Context(),
		"SELECT count(*), count(DISTINCT version), max(version) FROM schema_migrations").Scan(&n, &distinct, &maxVersion); err != nil {
		t.Fatalf("read schema_migrations: %v", err)
	}
	if n != len(all) || distinct != n || maxVersion != all[len(all)-1].Version {
		t.Errorf("schema_migrations has %d rows (%d versions) up to version %d, want each of the %d migrations once", n, distinct, maxVersion, len(all))
	}
	// Every replica works on the same tables.
	if _, err := stores[1].CreateTeam(t.Context(), "shared"); err != nil {
		t.Fatalf("CreateTeam: %v", err)
	}
	if _, err := stores[2].TeamByName(t.Context(), "shared"); err != nil {
		t.Errorf("TeamByName on another replica: %v", err)
	}
	// Reopening applies nothing and still works.
	again := openTest(t, url, schema)
	if err := again.Ping(t.Context()); err != nil {
		t.Errorf("Ping after reopen: %v", err)
	}
}

func TestSchemaIsolation(t *testing.T) {
	t.Parallel()
	url := testenv.PostgresURL(t)
	a := openTest(t, url, newSchema(t, url))
	b := openTest(t, url, newSchema(t, url))
	if _, err := a.CreateTeam(t.Context(), "only-in-a"); err != nil {
		t.Fatalf("CreateTeam: %v", err)
	}
	if _, err := b.TeamByName(t.Context(), "only-in-a"); err == nil {
		t.Error("team created in schema a is visible in schema b")
	}
}

func TestTransactRollsBack(t *testing.T) {
	t.Parallel()
	url := testenv.PostgresURL(t)
	s := openTest(t, url, newSchema(t, url))
	ctx := t.Context()
	errBoom := context.DeadlineExceeded // any sentinel
	err := s.Transact(ctx, func(tx DBTX) error {
		if _, err := tx.Exec(ctx, "INSERT INTO teams (id, name) VALUES (gen_random_uuid(), 'tx')"); err != nil {
			return err
		}
		return errBoom
	})
	if err != errBoom { //nolint:errorlint // Transact returns fn's error as is
		t.Fatalf("Transact error = %v, want %v", err, errBoom)
	}
	if _, err := s.TeamByName(ctx, "tx"); err == nil {
		t.Error("team inserted in a rolled back transaction exists")
	}
	if err := s.Transact(ctx, func(tx DBTX) error {
		_, err := tx.Exec(ctx, "INSERT INTO teams (id, name) VALUES (gen_random_uuid(), 'tx')")
		return err
	}); err != nil {
		t.Fatalf("Transact: %v", err)
	}
	if _, err := s.TeamByName(ctx, "tx"); err != nil {
		t.Errorf("TeamByName after commit: %v", err)
	}
}

func TestOpenBadURL(t *testing.T) {
	t.Parallel()
	if _, err := Open(t.Context(), "postgres://%zz", testenv.Logger(t)); err == nil {
		t.Error("Open with a malformed URL succeeded")
	}
}

func BenchmarkCrawlMemory(b *testing.B) {
	url := testenv.PostgresURL(b)
	storetest.BenchmarkCrawlMemory(b, openTest(b, url, newSchema(b, url)))
}
