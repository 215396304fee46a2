// Package queuetest stages queue jobs in tests as a worker that died
// leaves them.
package queuetest

import (
	"database/sql"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/firegate/firegate/internal/testenv"
)

// StageRunning makes the one job of kind whose args member arg is value
// running on attempt, started by worker, as a process that died with it
// would leave it. db is the store the queue runs on: one with Pool (Postgres)
// or WriteDB (SQLite). It fails t unless exactly one job matched.
func StageRunning(t testing.TB, db any, kind, arg, value string, attempt int, worker string) {
	t.Helper()
	var n int64
	switch db := db.(type) {
	case interface{ Pool() *pgxpool.Pool }:
		tag, err := db.Pool().Exec(t.Context(), `UPDATE river_job SET state = 'running', attempt = $3,
			attempted_at = now(), attempted_by = ARRAY[$4] WHERE kind = $1 AND args->>$5 = $2`, kind, value, attempt, worker, arg)
		if err != nil {
			t.Fatal(err)
		}
		n = tag.RowsAffected()
	case interface{ WriteDB() *sql.DB }:
		res, err := db.WriteDB().ExecContext(t.Context(), `UPDATE river_job SET state = 'running', attempt = ?3,
			attempted_at = datetime('now', 'subsec'), attempted_by = json_array(?4)
			WHERE kind = ?1 AND json_extract(args, '$.' || ?5) = ?2`, kind, value, attempt, worker, arg)
		if err != nil {
			t.Fatal(err)
		}
		n, _ = res.RowsAffected()
	default:
		t.Fatalf("queuetest: %T is neither a Postgres nor a SQLite store", db)
	}
	if n != 1 {
		t.Fatalf("stage %s job with %s %s: %d jobs", kind, arg, value, n)
	}
}

// StageDead records worker's last heartbeat an hour ago, as a process that
// died then leaves its row: the first sweep of a queue whose DeadAfter is
// under an hour finds it dead, without the test waiting for a beat to age.
func StageDead(t testing.TB, db any, worker string) {
	t.Helper()
	var n int64
	switch db := db.(type) {
	case interface{ Pool() *pgxpool.Pool }:
		n = pgExec(t, db.Pool(), `INSERT INTO workers (id, started_at, beat_at) VALUES ($1, now() - interval '2 hours', now() - interval '1 hour')
			ON CONFLICT (id) DO UPDATE SET beat_at = excluded.beat_at`, worker)
	case interface{ WriteDB() *sql.DB }:
		// The store's timestamp format (sqlite.timeFormat).
		const format = "2006-01-02T15:04:05.000000Z07:00"
		now := time.Now().UTC()
		n = sqliteExec(t, db.WriteDB(), `INSERT INTO workers (id, started_at, beat_at) VALUES (?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET beat_at = excluded.beat_at`,
			worker, now.Add(-2*time.Hour).Format(format), now.Add(-time.Hour).Format(format))
	default:
		t.Fatalf("queuetest: %T is neither a Postgres nor a SQLite store", db)
	}
	if n != 1 {
		t.Fatalf("stage worker %s dead: %d rows", worker, n)
	}
}

// waitStaged runs stage (an UPDATE of the one job matched, when it is not
// running) until it changes a row: a job running now is left to end its
// attempt. It fails t after 30 s.
func waitStaged(t testing.TB, what string, stage func() int64) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func() bool { return stage() == 1 }, "stage %s: no such job waiting to run", what)
}

// idleStates are the states of a job waiting for its next attempt.
const idleStates = `('available', 'retryable', 'scheduled')`

// StageNextAttempt makes the one job of kind whose args member arg is value,
// once it is waiting for its next attempt, available now with attempt
// attempts spent, so its next run is attempt+1 (with attempt
// max_attempts-1, its last). It waits for a running job to end its attempt.
func StageNextAttempt(t testing.TB, db any, kind, arg, value string, attempt int) {
	t.Helper()
	waitStaged(t, kind+" "+value, func() int64 {
		switch db := db.(type) {
		case interface{ Pool() *pgxpool.Pool }:
			return pgExec(t, db.Pool(), `UPDATE river_job SET state = 'available', attempt = $3, scheduled_at = now()
				WHERE kind = $1 AND args->>$4 = $2 AND state IN `+idleStates, kind, value, attempt, arg)
		case interface{ WriteDB() *sql.DB }:
			return sqliteExec(t, db.WriteDB(), `UPDATE river_job SET state = 'available', attempt = ?3,
				scheduled_at = datetime('now', 'subsec')
				WHERE kind = ?1 AND json_extract(args, '$.' || ?4) = ?2 AND state IN `+idleStates, kind, value, attempt, arg)
		}
		t.Fatalf("queuetest: %T is neither a Postgres nor a SQLite store", db)
		return 0
	})
}

// StageDiscarded makes the one job of kind whose args member arg is value,
// once it is waiting for its next attempt, discarded as River leaves a job
// whose attempts are spent, its last attempt ending with reason (as the
// job of a process that was down when it was discarded would be found).
func StageDiscarded(t testing.TB, db any, kind, arg, value, reason string) {
	t.Helper()
	waitStaged(t, kind+" "+value, func() int64 {
		switch db := db.(type) {
		case interface{ Pool() *pgxpool.Pool }:
			return pgExec(t, db.Pool(), `UPDATE river_job SET state = 'discarded', attempt = max_attempts, finalized_at = now(),
				errors = array_append(errors, jsonb_build_object('at', now(), 'attempt', max_attempts, 'error', $3::text, 'trace', ''))
				WHERE kind = $1 AND args->>$4 = $2 AND state IN `+idleStates, kind, value, reason, arg)
		case interface{ WriteDB() *sql.DB }:
			return sqliteExec(t, db.WriteDB(), `UPDATE river_job SET state = 'discarded', attempt = max_attempts,
				finalized_at = datetime('now', 'subsec'),
				errors = json_insert(coalesce(errors, json('[]')), '$[#]',
					json_object('at', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'attempt', max_attempts, 'error', ?3, 'trace', ''))
				WHERE kind = ?1 AND json_extract(args, '$.' || ?4) = ?2 AND state IN `+idleStates, kind, value, reason, arg)
		}
		t.Fatalf("queuetest: %T is neither a Postgres nor a SQLite store", db)
		return 0
	})
}

func pgExec(t testing.TB, pool *pgxpool.Pool, q string, args ...any) int64 {
	t.Helper()
	tag, err := pool.Exec(t.Context(), q, args...)
	if err != nil {
		t.Fatal(err)
	}
	return tag.RowsAffected()
}

func sqliteExec(t testing.TB, db *sql.DB, q string, args ...any) int64 {
	t.Helper()
	res, err := db.ExecContext(t.Context(), q, args...)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := res.RowsAffected()
	return n
}
