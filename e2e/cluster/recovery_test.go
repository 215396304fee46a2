package cluster

import (
	"context"
	"database/sql"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"

	"github.com/firegate/firegate/internal/crawl/testsite"
	"github.com/firegate/firegate/internal/testenv"
)

// The recovery tests run at the server's default JOB_* settings (the other
// cluster tests shorten JOB_RESCUE_AFTER): a killed worker's pages must run
// again because its heartbeat stopped, well before River's rescuer
// (JOB_TIMEOUT + 1m) would take them.

// recoveryBound is how long after a kill (or a restart) the crawl must be
// complete: the heartbeat makes it ~15-20 s, the rescuer would take 6 min.
const recoveryBound = 60 * time.Second

// defaultJobs unsets the test defaults of the JOB_* settings.
var defaultJobs = map[string]string{"JOB_TIMEOUT": "", "JOB_RESCUE_AFTER": ""}

var workerIDRe = regexp.MustCompile(`msg="queue: worker started" worker_id=(\S+)`)

// workerID is the queue worker id a process logged at start.
func workerID(t testing.TB, p *proc) string {
	t.Helper()
	var m []string
	if !testenv.WaitFor(10*time.Second, func() bool {
		m = workerIDRe.FindStringSubmatch(p.logs.String())
		return m != nil
	}) {
		t.Fatalf("no worker id in the logs:\n%s", tail(p.logs.String(), 2000))
	}
	return m[1]
}

// runningPagesPostgres counts the page jobs River shows running on worker.
func runningPagesPostgres(t testing.TB, dbURL, worker string) int {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(t.Context()))
	var n int
	if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'page' AND state = 'running'
		AND attempted_by[array_length(attempted_by, 1)] = $1`, worker).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// runningPagesSQLite counts the page jobs River shows running on worker in
// the data directory's file.
func runningPagesSQLite(t testing.TB, dataDir, worker string) int {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(dataDir, "firegate.db")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'page' AND state = 'running'
		AND json_extract(attempted_by, '$[#-1]') = ?`, worker).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitProgress polls until the crawl has at least n pages done.
func waitProgress(t testing.TB, api *proc, id string, n int) {
	t.Helper()
	var st status
	if !testenv.WaitFor(60*time.Second, func() bool {
		st = poll(t, api, id)
		return st.Completed >= n || st.Status != "scraping"
	}) || st.Completed < n {
		t.Fatalf("crawl did not reach %d pages: %s %d/%d", n, st.Status, st.Completed, st.Total)
	}
}

// waitRecovered waits until the crawl completes, at most until deadline,
// and checks it found every page exactly once.
func waitRecovered(t *testing.T, api *proc, site *testsite.Site, id string, from time.Time) time.Duration {
	t.Helper()
	st := waitDone(t, api, id, time.Until(from.Add(recoveryBound)))
	took := time.Since(from)
	if st.Status != "completed" {
		t.Fatalf("status %s", st.Status)
	}
	checkExact(t, site, sources(t, api, id))
	return took
}

// checkReleased asserts some live process handed the dead worker's pages
// back through the heartbeat (not River's rescuer).
func checkReleased(t *testing.T, dead string, alive ...*proc) {
	t.Helper()
	for _, p := range alive {
		for _, line := range strings.Split(p.logs.String(), "\n") {
			if strings.Contains(line, "worker presumed dead") && strings.Contains(line, "worker_id="+dead+" ") {
				return
			}
		}
	}
	t.Errorf("no live process logged worker %s as dead", dead)
}

// TestWorkerKilledRecovers: an API replica and two workers at the default
// JOB_* settings crawl 300 pages; worker A is SIGKILLed with pages in
// flight. Worker B, alive, must finish the crawl, A's pages included,
// every page once, within 60 s of the kill.
func TestWorkerKilledRecovers(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 300, LinkDelay: 100 * time.Millisecond})
	target := httptest.NewServer(site)
	t.Cleanup(target.Close)
	db := database(t)
	common := merge(defaultJobs, map[string]string{"DATABASE_URL": db})
	api := start(t, merge(common, map[string]string{"QUEUE_WORKERS": "0"}))
	a := start(t, merge(common, map[string]string{"QUEUE_WORKERS": "8"}), "worker")
	b := start(t, merge(common, map[string]string{"QUEUE_WORKERS": "8"}), "worker")
	aID := workerID(t, a)

	id := startCrawl(t, api, `{"url":"`+target.URL+`/","limit":1000}`)
	waitProgress(t, api, id, 30)
	a.kill()
	killed := time.Now()
	inFlight := runningPagesPostgres(t, db, aID)
	if inFlight == 0 {
		t.Fatalf("worker A had no page in flight when killed: the test proves nothing")
	}
	took := waitRecovered(t, api, site, id, killed)
	t.Logf("kill -> completed: %v (%d pages were in flight on the killed worker)", took.Round(100*time.Millisecond), inFlight)
	checkReleased(t, aID, api, b)
}

// TestServerKilledRecovers: the one-process server at the default JOB_*
// settings is SIGKILLed mid-crawl of 300 pages and started again on the
// same data; the crawl must complete, every page once, within 60 s of the
// restart. Both on the embedded SQLite file and on Postgres.
func TestServerKilledRecovers(t *testing.T) {
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			site := testsite.New(testsite.Options{Pages: 300, LinkDelay: 100 * time.Millisecond})
			target := httptest.NewServer(site)
			t.Cleanup(target.Close)
			env := merge(defaultJobs, map[string]string{"QUEUE_WORKERS": "8"})
			var running func(worker string) int
			switch name {
			case "sqlite":
				dir := t.TempDir()
				env["DATA_DIR"] = dir
				running = func(w string) int { return runningPagesSQLite(t, dir, w) }
			case "postgres":
				db := database(t)
				env["DATABASE_URL"] = db
				running = func(w string) int { return runningPagesPostgres(t, db, w) }
			}
			first := start(t, env)
			firstID := workerID(t, first)
			id := startCrawl(t, first, `{"url":"`+target.URL+`/","limit":1000}`)
			waitProgress(t, first, id, 30)
			first.kill()
			inFlight := running(firstID)
			if inFlight == 0 {
				t.Fatalf("the server had no page in flight when killed: the test proves nothing")
			}
			restarted := time.Now()
			second := start(t, env)
			took := waitRecovered(t, second, site, id, restarted)
			t.Logf("restart -> completed: %v (%d pages were in flight when killed)", took.Round(100*time.Millisecond), inFlight)
			checkReleased(t, firstID, second)
			if strings.Contains(first.logs.String(), "job completed") {
				t.Errorf("the killed server completed the crawl; the test proves nothing")
			}
		})
	}
}
