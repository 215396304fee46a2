package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/store"
)

// MonitorsUnderTest is what RunMonitors exercises.
type MonitorsUnderTest interface {
	store.Store
	store.MonitorStore
}

// RunMonitors runs the contract suite of store.MonitorStore. newStore must
// return a new, empty store that no other test uses.
func RunMonitors(t *testing.T, newStore func(t *testing.T) MonitorsUnderTest) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s MonitorsUnderTest)
	}{
		{"MonitorCRUD", testMonitorCRUD},
		{"StartCheckScheduled", testStartCheckScheduled},
		{"StartCheckManual", testStartCheckManual},
		{"ConcurrentStartCheck", testConcurrentStartCheck},
		{"CheckLifecycle", testCheckLifecycle},
		{"DeleteExpiredChecks", testDeleteExpiredChecks},
		{"DeleteExpiredChecksBoundary", testDeleteExpiredChecksBoundary},
		{"PurgeDeletedMonitors", testPurgeDeletedMonitors},
		{"EmailRecipients", testEmailRecipients},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newStore(t))
		})
	}
}

// monitorAt is the fixed time the monitor tests start from.
var monitorAt = time.Date(2026, 5, 6, 7, 8, 9, 123456000, time.UTC)

func mustMonitor(t *testing.T, s MonitorsUnderTest, teamID string, created time.Time, next *time.Time) store.Monitor {
	t.Helper()
	m, err := s.CreateMonitor(t.Context(), store.Monitor{
		ID: uuid.NewString(), TeamID: teamID, Name: "m", Status: store.MonitorActive, Cron: "*/5 * * * *",
		Timezone: "UTC", Config: []byte(`{"targets":[]}`), RetentionDays: 30, EstimatedCreditsPerMonth: 42,
		NextRunAt: next, CreatedAt: created,
	})
	if err != nil {
		t.Fatalf("CreateMonitor: %v", err)
	}
	return m
}

func ptr[T any](v T) *T { return &v }

func testMonitorCRUD(t *testing.T, s MonitorsUnderTest) {
	ctx := t.Context()
	a, b := mustTeam(t, s, "a"), mustTeam(t, s, "b")
	first := mustMonitor(t, s, a.ID, monitorAt, ptr(monitorAt.Add(time.Minute)))
	second := mustMonitor(t, s, a.ID, monitorAt.Add(time.Second), nil)
	if first.Status != store.MonitorActive || first.Cron != "*/5 * * * *" || string(first.Config) != `{"targets":[]}` ||
		first.RetentionDays != 30 || first.EstimatedCreditsPerMonth != 42 || first.NextRunAt == nil ||
		!first.NextRunAt.Equal(monitorAt.Add(time.Minute)) || !first.CreatedAt.Equal(monitorAt) ||
		!first.UpdatedAt.Equal(monitorAt) || first.CurrentCheckID != "" || first.LastRunAt != nil {
		t.Errorf("created monitor = %+v", first)
	}
	got, err := s.Monitor(ctx, a.ID, first.ID)
	if err != nil || got.ID != first.ID || got.Name != "m" {
		t.Errorf("Monitor = %+v, %v", got, err)
	}
	_, err = s.Monitor(ctx, b.ID, first.ID)
	checkErr(t, "Monitor of another team", err, store.ErrNotFound)
	_, err = s.Monitor(ctx, a.ID, "not-a-uuid")
	checkErr(t, "Monitor with a malformed id", err, store.ErrNotFound)
	_, err = s.CreateMonitor(ctx, store.Monitor{ID: uuid.NewString(), TeamID: uuid.NewString(), Name: "x",
		Status: store.MonitorActive, Cron: "* * * * *", Timezone: "UTC", RetentionDays: 1, CreatedAt: monitorAt})
	checkErr(t, "CreateMonitor for an unknown team", err, store.ErrNotFound)

	list, err := s.ListMonitors(ctx, a.ID, 10, 0)
	if err != nil || len(list) != 2 || list[0].ID != second.ID || list[1].ID != first.ID {
		t.Errorf("ListMonitors = %v, %v; want newest first", list, err)
	}
	if list, _ := s.ListMonitors(ctx, a.ID, 1, 1); len(list) != 1 || list[0].ID != first.ID {
		t.Errorf("ListMonitors(limit 1, offset 1) = %v", list)
	}
	if list, _ := s.ListMonitors(ctx, b.ID, 10, 0); len(list) != 0 {
		t.Errorf("ListMonitors of team b = %v", list)
	}

	upd := first
	upd.Name, upd.Status, upd.Cron, upd.Timezone = "renamed", store.MonitorPaused, "0 9 * * *", "Europe/Paris"
	upd.Config, upd.RetentionDays, upd.NextRunAt, upd.UpdatedAt = []byte(`{"x":1}`), 7, nil, monitorAt.Add(time.Hour)
	got, err = s.UpdateMonitor(ctx, upd)
	if err != nil || got.Name != "renamed" || got.Status != store.MonitorPaused || got.Cron != "0 9 * * *" ||
		got.Timezone != "Europe/Paris" || string(got.Config) != `{"x":1}` || got.RetentionDays != 7 ||
		got.NextRunAt != nil || !got.UpdatedAt.Equal(monitorAt.Add(time.Hour)) || !got.CreatedAt.Equal(monitorAt) {
		t.Errorf("UpdateMonitor = %+v, %v", got, err)
	}
	upd.TeamID = b.ID
	_, err = s.UpdateMonitor(ctx, upd)
	checkErr(t, "UpdateMonitor of another team's monitor", err, store.ErrNotFound)

	checkErr(t, "DeleteMonitor by another team", s.DeleteMonitor(ctx, b.ID, first.ID, monitorAt), store.ErrNotFound)
	if err := s.DeleteMonitor(ctx, a.ID, first.ID, monitorAt); err != nil {
		t.Fatalf("DeleteMonitor: %v", err)
	}
	checkErr(t, "DeleteMonitor twice", s.DeleteMonitor(ctx, a.ID, first.ID, monitorAt), store.ErrNotFound)
	_, err = s.Monitor(ctx, a.ID, first.ID)
	checkErr(t, "Monitor after delete", err, store.ErrNotFound)
	upd.TeamID = a.ID
	_, err = s.UpdateMonitor(ctx, upd)
	checkErr(t, "UpdateMonitor after delete", err, store.ErrNotFound)
	if list, _ := s.ListMonitors(ctx, a.ID, 10, 0); len(list) != 1 || list[0].ID != second.ID {
		t.Errorf("ListMonitors after delete = %v", list)
	}
}

func newCheck(trigger string, at time.Time, scheduled *time.Time) store.MonitorCheck {
	return store.MonitorCheck{ID: uuid.NewString(), Trigger: trigger, ScheduledFor: scheduled, EstimatedCredits: 3, CreatedAt: at}
}

func testStartCheckScheduled(t *testing.T, s MonitorsUnderTest) {
	ctx := t.Context()
	team := mustTeam(t, s, "a")
	due := monitorAt.Add(5 * time.Minute)
	m := mustMonitor(t, s, team.ID, monitorAt, &due)
	other := mustMonitor(t, s, team.ID, monitorAt, ptr(due.Add(time.Hour)))

	got, err := s.DueMonitors(ctx, due.Add(-time.Microsecond), 10)
	if err != nil || len(got) != 0 {
		t.Errorf("DueMonitors before due = %v, %v", got, err)
	}
	got, err = s.DueMonitors(ctx, due, 10)
	if err != nil || len(got) != 1 || got[0].ID != m.ID {
		t.Errorf("DueMonitors at due = %v, %v", got, err)
	}
	_ = other

	next := due.Add(5 * time.Minute)
	now := due.Add(time.Second)
	c, err := s.StartCheck(ctx, store.CheckStart{TeamID: team.ID, MonitorID: m.ID,
		Check: newCheck(store.TriggerScheduled, now, &due), DueAt: &due, NextRunAt: &next})
	if err != nil {
		t.Fatalf("StartCheck: %v", err)
	}
	if c.Status != store.CheckQueued || c.MonitorID != m.ID || c.TeamID != team.ID || c.Trigger != store.TriggerScheduled ||
		c.ScheduledFor == nil || !c.ScheduledFor.Equal(due) || c.EstimatedCredits != 3 || !c.CreatedAt.Equal(now) {
		t.Errorf("started check = %+v", c)
	}
	mon, _ := s.Monitor(ctx, team.ID, m.ID)
	if mon.NextRunAt == nil || !mon.NextRunAt.Equal(next) || mon.CurrentCheckID != c.ID || mon.LastRunAt == nil {
		t.Errorf("monitor after start = %+v", mon)
	}
	// The same slot again: another scheduler lost the race.
	_, err = s.StartCheck(ctx, store.CheckStart{TeamID: team.ID, MonitorID: m.ID,
		Check: newCheck(store.TriggerScheduled, now, &due), DueAt: &due, NextRunAt: &next})
	checkErr(t, "StartCheck of a taken slot", err, store.ErrConflict)

	// The next slot while the first check still runs: skipped_overlap.
	later := next.Add(5 * time.Minute)
	sk, err := s.StartCheck(ctx, store.CheckStart{TeamID: team.ID, MonitorID: m.ID,
		Check: newCheck(store.TriggerScheduled, next, &next), DueAt: &next, NextRunAt: &later})
	if err != nil || sk.Status != store.CheckSkippedOverlap || sk.FinishedAt == nil {
		t.Errorf("overlapping StartCheck = %+v, %v", sk, err)
	}
	mon, _ = s.Monitor(ctx, team.ID, m.ID)
	if mon.CurrentCheckID != c.ID || !mon.NextRunAt.Equal(later) {
		t.Errorf("monitor after skip = %+v", mon)
	}

	// A paused monitor starts nothing.
	mon.Status, mon.NextRunAt, mon.UpdatedAt = store.MonitorPaused, nil, now
	if _, err := s.UpdateMonitor(ctx, mon); err != nil {
		t.Fatal(err)
	}
	_, err = s.StartCheck(ctx, store.CheckStart{TeamID: team.ID, MonitorID: m.ID,
		Check: newCheck(store.TriggerScheduled, later, &later), DueAt: &later, NextRunAt: &later})
	checkErr(t, "StartCheck of a paused monitor", err, store.ErrMonitorPaused)
	_, err = s.StartCheck(ctx, store.CheckStart{TeamID: uuid.NewString(), MonitorID: m.ID,
		Check: newCheck(store.TriggerManual, later, nil)})
	checkErr(t, "StartCheck by another team", err, store.ErrNotFound)
}

func testStartCheckManual(t *testing.T, s MonitorsUnderTest) {
	ctx := t.Context()
	team := mustTeam(t, s, "a")
	next := monitorAt.Add(time.Hour)
	m := mustMonitor(t, s, team.ID, monitorAt, &next)
	c, err := s.StartCheck(ctx, store.CheckStart{TeamID: team.ID, MonitorID: m.ID, Check: newCheck(store.TriggerManual, monitorAt, nil)})
	if err != nil || c.Status != store.CheckQueued || c.ScheduledFor != nil {
		t.Fatalf("manual StartCheck = %+v, %v", c, err)
	}
	mon, _ := s.Monitor(ctx, team.ID, m.ID)
	if !mon.NextRunAt.Equal(next) {
		t.Errorf("a manual check moved NextRunAt to %v", mon.NextRunAt)
	}
	_, err = s.StartCheck(ctx, store.CheckStart{TeamID: team.ID, MonitorID: m.ID, Check: newCheck(store.TriggerManual, monitorAt, nil)})
	var running *store.CheckRunningError
	if !errors.As(err, &running) || running.CheckID != c.ID {
		t.Errorf("second manual StartCheck error = %v, want CheckRunningError{%s}", err, c.ID)
	}
}

func testConcurrentStartCheck(t *testing.T, s MonitorsUnderTest) {
	ctx := t.Context()
	team := mustTeam(t, s, "a")
	due := monitorAt
	m := mustMonitor(t, s, team.ID, monitorAt, &due)
	next := due.Add(5 * time.Minute)
	var wg sync.WaitGroup
	var mu sync.Mutex
	started, conflicts := 0, 0
	for range 16 {
		wg.Go(func() {
			_, err := s.StartCheck(ctx, store.CheckStart{TeamID: team.ID, MonitorID: m.ID,
				Check: newCheck(store.TriggerScheduled, due, &due), DueAt: &due, NextRunAt: &next})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				started++
			case errors.Is(err, store.ErrConflict):
				conflicts++
			default:
				t.Errorf("StartCheck: %v", err)
			}
		})
	}
	wg.Wait()
	if started != 1 || conflicts != 15 {
		t.Errorf("started %d, conflicts %d; want 1 and 15", started, conflicts)
	}
	checks, _ := s.MonitorChecks(ctx, team.ID, m.ID, "", 100, 0)
	if len(checks) != 1 {
		t.Errorf("%d checks recorded, want 1", len(checks))
	}
}

func testCheckLifecycle(t *testing.T, s MonitorsUnderTest) {
	ctx := t.Context()
	team := mustTeam(t, s, "a")
	m := mustMonitor(t, s, team.ID, monitorAt, nil)
	first, err := s.StartCheck(ctx, store.CheckStart{TeamID: team.ID, MonitorID: m.ID, Check: newCheck(store.TriggerManual, monitorAt, nil)})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := s.QueuedChecks(ctx, monitorAt.Add(time.Second), 10)
	if err != nil || len(ids) != 1 || ids[0] != first.ID {
		t.Errorf("QueuedChecks = %v, %v", ids, err)
	}
	if ids, _ := s.QueuedChecks(ctx, monitorAt, 10); len(ids) != 0 {
		t.Errorf("QueuedChecks before creation = %v", ids)
	}
	_, _, err = s.ClaimCheck(ctx, uuid.NewString(), monitorAt)
	checkErr(t, "ClaimCheck of an unknown check", err, store.ErrNotFound)
	if ids, err := s.StaleRunningChecks(ctx, monitorAt.Add(time.Hour), 10); err != nil || len(ids) != 0 {
		t.Errorf("StaleRunningChecks of a queued check = %v, %v", ids, err)
	}
	c, ok, err := s.ClaimCheck(ctx, first.ID, monitorAt.Add(time.Second))
	if err != nil || !ok || c.Status != store.CheckRunning || c.StartedAt == nil {
		t.Fatalf("ClaimCheck = %+v, %v, %v", c, ok, err)
	}
	// Claiming again (a retried job) keeps the first start.
	c2, ok, err := s.ClaimCheck(ctx, first.ID, monitorAt.Add(time.Minute))
	if err != nil || !ok || !c2.StartedAt.Equal(*c.StartedAt) {
		t.Errorf("ClaimCheck again = %+v, %v, %v", c2, ok, err)
	}
	// A running check is stale once nothing claimed it since.
	if ids, err := s.StaleRunningChecks(ctx, monitorAt.Add(time.Minute), 10); err != nil || len(ids) != 0 {
		t.Errorf("StaleRunningChecks at its last claim = %v, %v", ids, err)
	}
	if ids, err := s.StaleRunningChecks(ctx, monitorAt.Add(time.Minute+time.Microsecond), 10); err != nil || len(ids) != 1 || ids[0] != first.ID {
		t.Errorf("StaleRunningChecks after its last claim = %v, %v", ids, err)
	}

	pages := []store.MonitorPage{
		{ID: uuid.NewString(), CheckID: first.ID, MonitorID: m.ID, TargetID: "t1", URL: "https://a/1", Status: "new", CurrentScrapeID: "s1", StatusCode: 200, Data: []byte(`{"d":1}`), CreatedAt: monitorAt},
		{ID: uuid.NewString(), CheckID: first.ID, MonitorID: m.ID, TargetID: "t1", URL: "https://a/2", Status: "error", Error: "boom", CreatedAt: monitorAt},
	}
	for _, p := range pages {
		if err := s.SaveCheckPage(ctx, p); err != nil {
			t.Fatalf("SaveCheckPage: %v", err)
		}
	}
	// Saving the same URL again replaces the page (a retried check).
	again := pages[0]
	again.ID = uuid.NewString()
	again.Status = "same"
	if err := s.SaveCheckPage(ctx, again); err != nil {
		t.Fatalf("SaveCheckPage again: %v", err)
	}
	got, err := s.CheckPages(ctx, first.ID, "", 0, 10)
	if err != nil || len(got) != 2 || got[0].URL != "https://a/1" || got[0].Status != "same" || got[1].Error != "boom" ||
		string(got[0].Data) != `{"d":1}` || got[0].StatusCode != 200 {
		t.Errorf("CheckPages = %+v, %v", got, err)
	}
	if got, _ := s.CheckPages(ctx, first.ID, "error", 0, 10); len(got) != 1 || got[0].URL != "https://a/2" {
		t.Errorf("CheckPages(status error) = %+v", got)
	}
	if got, _ := s.CheckPages(ctx, first.ID, "", 1, 10); len(got) != 1 || got[0].URL != "https://a/2" {
		t.Errorf("CheckPages(skip 1) = %+v", got)
	}
	_, err = s.LastPage(ctx, m.ID, "t1", "https://a/1", first.ID)
	checkErr(t, "LastPage within the same check", err, store.ErrNotFound)

	if ok, err := s.SetCheckTargetResults(ctx, first.ID, []byte(`[{"targetId":"t1","crawlId":"c"}]`)); err != nil || !ok {
		t.Errorf("SetCheckTargetResults = %v, %v", ok, err)
	}
	if got, _ := s.MonitorCheck(ctx, team.ID, m.ID, first.ID); string(got.TargetResults) != `[{"targetId":"t1","crawlId":"c"}]` {
		t.Errorf("target results = %s", got.TargetResults)
	}

	summary := []byte(`{"totalPages":2}`)
	fin := c
	fin.Status, fin.Summary, fin.TargetResults = store.CheckPartial, summary, []byte(`[]`)
	fin.ReservedCredits, fin.ActualCredits, fin.BillingStatus, fin.Error = ptr(int64(3)), ptr(int64(1)), "confirmed", ""
	fin.FinishedAt = ptr(monitorAt.Add(2 * time.Minute))
	if ok, err := s.FinishCheck(ctx, fin); err != nil || !ok {
		t.Fatalf("FinishCheck = %v, %v", ok, err)
	}
	if ok, err := s.FinishCheck(ctx, fin); err != nil || ok {
		t.Errorf("FinishCheck twice = %v, %v; want false", ok, err)
	}
	if _, ok, _ := s.ClaimCheck(ctx, first.ID, monitorAt); ok {
		t.Error("ClaimCheck of a finished check succeeded")
	}
	if ok, err := s.SetCheckTargetResults(ctx, first.ID, []byte(`[]`)); err != nil || ok {
		t.Errorf("SetCheckTargetResults of a finished check = %v, %v; want false", ok, err)
	}
	done, err := s.MonitorCheck(ctx, team.ID, m.ID, first.ID)
	if err != nil || done.Status != store.CheckPartial || string(done.Summary) != string(summary) ||
		*done.ReservedCredits != 3 || *done.ActualCredits != 1 || done.BillingStatus != "confirmed" ||
		!done.FinishedAt.Equal(*fin.FinishedAt) {
		t.Errorf("finished check = %+v, %v", done, err)
	}
	mon, _ := s.Monitor(ctx, team.ID, m.ID)
	if mon.CurrentCheckID != "" || string(mon.LastCheckSummary) != string(summary) {
		t.Errorf("monitor after finish = %+v", mon)
	}

	second, err := s.StartCheck(ctx, store.CheckStart{TeamID: team.ID, MonitorID: m.ID, Check: newCheck(store.TriggerManual, monitorAt.Add(time.Hour), nil)})
	if err != nil {
		t.Fatalf("StartCheck after finish: %v", err)
	}
	last, err := s.LastPage(ctx, m.ID, "t1", "https://a/1", second.ID)
	if err != nil || last.CurrentScrapeID != "s1" {
		t.Errorf("LastPage = %+v, %v", last, err)
	}
	_, err = s.LastPage(ctx, m.ID, "t1", "https://a/2", second.ID)
	checkErr(t, "LastPage of a URL that never scraped", err, store.ErrNotFound)

	list, err := s.MonitorChecks(ctx, team.ID, m.ID, "", 10, 0)
	if err != nil || len(list) != 2 || list[0].ID != second.ID || list[1].ID != first.ID {
		t.Errorf("MonitorChecks = %+v, %v", list, err)
	}
	if list, _ := s.MonitorChecks(ctx, team.ID, m.ID, store.CheckPartial, 10, 0); len(list) != 1 || list[0].ID != first.ID {
		t.Errorf("MonitorChecks(partial) = %+v", list)
	}
	_, err = s.MonitorCheck(ctx, uuid.NewString(), m.ID, first.ID)
	checkErr(t, "MonitorCheck of another team", err, store.ErrNotFound)
}

// testDeleteExpiredChecksBoundary: a check expires when its creation is
// before now minus the retention to the microsecond (the stored precision):
// one created exactly retention before now stays, one microsecond later it
// goes, whatever the milliseconds.
func testDeleteExpiredChecksBoundary(t *testing.T, s MonitorsUnderTest) {
	ctx := t.Context()
	team := mustTeam(t, s, "a")
	m := mustMonitor(t, s, team.ID, monitorAt, nil)  // retention 30 days
	created := monitorAt.Add(400 * time.Microsecond) // .123856: not on a millisecond
	c, err := s.StartCheck(ctx, store.CheckStart{TeamID: team.ID, MonitorID: m.ID, Check: newCheck(store.TriggerManual, created, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ClaimCheck(ctx, c.ID, created); err != nil {
		t.Fatal(err)
	}
	c.Status, c.BillingStatus = store.CheckCompleted, "confirmed"
	if _, err := s.FinishCheck(ctx, c); err != nil {
		t.Fatal(err)
	}
	expiry := created.Add(30 * 24 * time.Hour)
	for _, now := range []time.Time{expiry.Add(-500 * time.Microsecond), expiry.Add(-time.Microsecond), expiry,
		expiry.Add(999 * time.Nanosecond)} {
		if n, err := s.DeleteExpiredChecks(ctx, now); err != nil || n != 0 {
			t.Errorf("DeleteExpiredChecks at expiry%+v = %d, %v; want 0", now.Sub(expiry), n, err)
		}
	}
	if n, err := s.DeleteExpiredChecks(ctx, expiry.Add(time.Microsecond)); err != nil || n != 1 {
		t.Errorf("DeleteExpiredChecks a microsecond past expiry = %d, %v; want 1", n, err)
	}
	_, err = s.MonitorCheck(ctx, team.ID, m.ID, c.ID)
	checkErr(t, "expired check", err, store.ErrNotFound)
}

func testDeleteExpiredChecks(t *testing.T, s MonitorsUnderTest) {
	ctx := t.Context()
	team := mustTeam(t, s, "a")
	m := mustMonitor(t, s, team.ID, monitorAt, nil) // retention 30 days
	old, err := s.StartCheck(ctx, store.CheckStart{TeamID: team.ID, MonitorID: m.ID, Check: newCheck(store.TriggerManual, monitorAt, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ClaimCheck(ctx, old.ID, monitorAt); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveCheckPage(ctx, store.MonitorPage{ID: uuid.NewString(), CheckID: old.ID, MonitorID: m.ID, TargetID: "t", URL: "u", Status: "new", CreatedAt: monitorAt}); err != nil {
		t.Fatal(err)
	}
	old.Status, old.BillingStatus = store.CheckCompleted, "confirmed"
	if _, err := s.FinishCheck(ctx, old); err != nil {
		t.Fatal(err)
	}
	recent, err := s.StartCheck(ctx, store.CheckStart{TeamID: team.ID, MonitorID: m.ID, Check: newCheck(store.TriggerManual, monitorAt.Add(20*24*time.Hour), nil)})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.DeleteExpiredChecks(ctx, monitorAt.Add(29*24*time.Hour)); err != nil || n != 0 {
		t.Errorf("DeleteExpiredChecks within retention = %d, %v", n, err)
	}
	// 31 days on: the old finished check goes, the queued recent one stays.
	if n, err := s.DeleteExpiredChecks(ctx, monitorAt.Add(31*24*time.Hour)); err != nil || n != 1 {
		t.Errorf("DeleteExpiredChecks = %d, %v; want 1", n, err)
	}
	_, err = s.MonitorCheck(ctx, team.ID, m.ID, old.ID)
	checkErr(t, "expired check", err, store.ErrNotFound)
	if pages, _ := s.CheckPages(ctx, old.ID, "", 0, 10); len(pages) != 0 {
		t.Errorf("pages of a deleted check remain: %v", pages)
	}
	if _, err := s.MonitorCheck(ctx, team.ID, m.ID, recent.ID); err != nil {
		t.Errorf("recent check: %v", err)
	}
}
