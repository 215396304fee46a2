// Package queuetest stages queue jobs in tests as a worker that died
// leaves them.
package queuetest

import (
	"database/sql"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
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
