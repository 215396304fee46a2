package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/store"
)

// testPurgeDeletedMonitors: a deleted monitor goes with its checks, pages,
// recipients and snapshots once no check of it runs (or it was deleted
// long ago); live monitors, other monitors' snapshots and plain change
// tracking snapshots stay.
func testPurgeDeletedMonitors(t *testing.T, s MonitorsUnderTest) {
	ctx := t.Context()
	team := mustTeam(t, s, "a")
	gone := mustMonitor(t, s, team.ID, monitorAt, nil)
	busy := mustMonitor(t, s, team.ID, monitorAt, nil)
	live := mustMonitor(t, s, team.ID, monitorAt, nil)
	checks := map[string]store.MonitorCheck{}
	for _, m := range []store.Monitor{gone, busy, live} {
		c, err := s.StartCheck(ctx, store.CheckStart{TeamID: team.ID, MonitorID: m.ID, Check: newCheck(store.TriggerManual, monitorAt, nil)})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.ClaimCheck(ctx, c.ID, monitorAt); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveCheckPage(ctx, store.MonitorPage{ID: uuid.NewString(), CheckID: c.ID, MonitorID: m.ID, TargetID: "t",
			URL: "https://example.com/", Status: "new", CreatedAt: monitorAt}); err != nil {
			t.Fatal(err)
		}
		if m.ID != busy.ID {
			c.Status, c.BillingStatus, c.FinishedAt = store.CheckCompleted, "confirmed", ptr(monitorAt)
			if _, err := s.FinishCheck(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		checks[m.ID] = c
		if err := s.SaveScrape(ctx, store.ScrapeSnapshot{TeamID: team.ID, URL: "https://example.com/",
			Tag: "monitor:" + m.ID + ":t", Markdown: "x", ScrapedAt: monitorAt}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SyncRecipients(ctx, m.ID, []string{"a@example.com"}, monitorAt, monitorAt); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SaveScrape(ctx, store.ScrapeSnapshot{TeamID: team.ID, URL: "https://example.com/", Tag: "", Markdown: "y", ScrapedAt: monitorAt}); err != nil {
		t.Fatal(err)
	}
	deletedAt := monitorAt.Add(time.Hour)
	for _, m := range []store.Monitor{gone, busy} {
		if err := s.DeleteMonitor(ctx, team.ID, m.ID, deletedAt); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.PurgeDeletedMonitors(ctx, deletedAt.Add(-time.Minute))
	if err != nil || n != 1 {
		t.Fatalf("PurgeDeletedMonitors = %d, %v; want 1 (the monitor without a running check)", n, err)
	}
	if pages, _ := s.CheckPages(ctx, checks[gone.ID].ID, "", 0, 10); len(pages) != 0 {
		t.Errorf("pages of a purged monitor remain: %v", pages)
	}
	if _, err := s.PreviousScrape(ctx, team.ID, "https://example.com/", "monitor:"+gone.ID+":t"); !errorsIsNotFound(err) {
		t.Errorf("snapshot of a purged monitor: %v, want not found", err)
	}
	if _, err := s.RecipientStatus(ctx, gone.ID, "a@example.com"); !errorsIsNotFound(err) {
		t.Errorf("recipient of a purged monitor: %v, want not found", err)
	}
	for _, m := range []store.Monitor{busy, live} {
		if pages, _ := s.CheckPages(ctx, checks[m.ID].ID, "", 0, 10); len(pages) != 1 {
			t.Errorf("pages of monitor %s = %v, want 1", m.ID, pages)
		}
		if _, err := s.PreviousScrape(ctx, team.ID, "https://example.com/", "monitor:"+m.ID+":t"); err != nil {
			t.Errorf("snapshot of monitor %s: %v", m.ID, err)
		}
	}
	if _, err := s.PreviousScrape(ctx, team.ID, "https://example.com/", ""); err != nil {
		t.Errorf("untagged snapshot: %v", err)
	}
	// The busy monitor's check never ends: once its deletion is older than
	// staleBefore, it goes too.
	n, err = s.PurgeDeletedMonitors(ctx, deletedAt.Add(time.Minute))
	if err != nil || n != 1 {
		t.Fatalf("PurgeDeletedMonitors after the grace = %d, %v; want 1", n, err)
	}
	if pages, _ := s.CheckPages(ctx, checks[busy.ID].ID, "", 0, 10); len(pages) != 0 {
		t.Errorf("pages of the purged busy monitor remain: %v", pages)
	}
	if _, err := s.PreviousScrape(ctx, team.ID, "https://example.com/", "monitor:"+busy.ID+":t"); !errorsIsNotFound(err) {
		t.Errorf("snapshot of the purged busy monitor: %v", err)
	}
	if _, err := s.Monitor(ctx, team.ID, live.ID); err != nil {
		t.Errorf("live monitor: %v", err)
	}
	if n, err := s.PurgeDeletedMonitors(ctx, deletedAt.Add(time.Hour)); err != nil || n != 0 {
		t.Errorf("PurgeDeletedMonitors again = %d, %v; want 0", n, err)
	}
}

func errorsIsNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// testEmailRecipients: the recipients' lifecycle (added pending and asked
// once, asked again after askBefore, confirmed, unsubscribed and kept so)
// and the claim of a check summary (confirmed only, once per check, not
// more often than notBefore allows).
func testEmailRecipients(t *testing.T, s MonitorsUnderTest) {
	ctx := t.Context()
	team := mustTeam(t, s, "a")
	m := mustMonitor(t, s, team.ID, monitorAt, nil)
	t0 := monitorAt
	ask, err := s.SyncRecipients(ctx, m.ID, []string{"a@example.com", "b@example.com"}, t0, t0.Add(-time.Hour))
	slices.Sort(ask)
	if err != nil || !slices.Equal(ask, []string{"a@example.com", "b@example.com"}) {
		t.Fatalf("first sync asks %v, %v", ask, err)
	}
	if st, err := s.RecipientStatus(ctx, m.ID, "a@example.com"); err != nil || st != store.RecipientPending {
		t.Errorf("status = %q, %v", st, err)
	}
	// Confirmations asked of an address, across monitors.
	other := mustMonitor(t, s, team.ID, monitorAt, nil)
	if _, err := s.SyncRecipients(ctx, other.ID, []string{"a@example.com"}, t0.Add(time.Second), t0); err != nil {
		t.Fatal(err)
	}
	if n, err := s.EarlierConfirmations(ctx, other.ID, "a@example.com", t0); err != nil || n != 1 {
		t.Errorf("EarlierConfirmations of the second ask = %d, %v; want 1", n, err)
	}
	if n, err := s.EarlierConfirmations(ctx, m.ID, "a@example.com", t0); err != nil || n != 0 {
		t.Errorf("EarlierConfirmations of the first ask = %d, %v; want 0", n, err)
	}
	if n, err := s.EarlierConfirmations(ctx, other.ID, "a@example.com", t0.Add(time.Millisecond)); err != nil || n != 0 {
		t.Errorf("EarlierConfirmations since after the first ask = %d, %v; want 0", n, err)
	}
	if n, err := s.EarlierConfirmations(ctx, other.ID, "nobody@example.com", t0); err != nil || n != 0 {
		t.Errorf("EarlierConfirmations of an unknown address = %d, %v", n, err)
	}
	// Listed again soon: nobody asked twice.
	if ask, err := s.SyncRecipients(ctx, m.ID, []string{"a@example.com", "b@example.com"}, t0.Add(time.Minute), t0.Add(-time.Hour)); err != nil || len(ask) != 0 {
		t.Errorf("second sync asks %v, %v", ask, err)
	}
	// Pending recipients are not sent summaries.
	if ok, err := s.ClaimSummary(ctx, m.ID, "a@example.com", "c1", t0, t0); err != nil || ok {
		t.Errorf("ClaimSummary of a pending recipient = %v, %v", ok, err)
	}
	if err := s.SetRecipientStatus(ctx, m.ID, "a@example.com", store.RecipientConfirmed, t0); err != nil {
		t.Fatal(err)
	}
	checkErr(t, "confirm unknown", s.SetRecipientStatus(ctx, m.ID, "z@example.com", store.RecipientConfirmed, t0), store.ErrNotFound)
	checkErr(t, "confirm of another monitor", s.SetRecipientStatus(ctx, uuid.NewString(), "a@example.com", store.RecipientConfirmed, t0), store.ErrNotFound)
	// b is asked again once askBefore passes its last ask; a, confirmed, is not.
	if ask, err := s.SyncRecipients(ctx, m.ID, []string{"a@example.com", "b@example.com"}, t0.Add(2*time.Hour), t0.Add(time.Hour)); err != nil ||
		!slices.Equal(ask, []string{"b@example.com"}) {
		t.Errorf("sync after askBefore asks %v, %v; want b", ask, err)
	}

	// Summaries: once per check (a retry of the same check may claim
	// again), another check only after notBefore.
	t1 := t0.Add(3 * time.Hour)
	if ok, err := s.ClaimSummary(ctx, m.ID, "a@example.com", "c1", t1, t1.Add(-5*time.Minute)); err != nil || !ok {
		t.Errorf("first ClaimSummary = %v, %v", ok, err)
	}
	if ok, _ := s.ClaimSummary(ctx, m.ID, "a@example.com", "c1", t1.Add(time.Second), t1.Add(-5*time.Minute)); !ok {
		t.Error("ClaimSummary of a retried send of the same check = false")
	}
	if ok, _ := s.ClaimSummary(ctx, m.ID, "a@example.com", "c2", t1.Add(time.Minute), t1.Add(time.Minute-5*time.Minute)); ok {
		t.Error("ClaimSummary of another check within the interval = true")
	}
	if ok, _ := s.ClaimSummary(ctx, m.ID, "a@example.com", "c2", t1.Add(6*time.Minute), t1.Add(time.Minute)); !ok {
		t.Error("ClaimSummary of another check after the interval = false")
	}

	// Unsubscribed: no summary, kept when no longer listed and not asked
	// again when listed again. Unlisted pending recipients go.
	if err := s.SetRecipientStatus(ctx, m.ID, "a@example.com", store.RecipientUnsubscribed, t1); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.ClaimSummary(ctx, m.ID, "a@example.com", "c3", t1.Add(time.Hour), t1.Add(time.Hour)); ok {
		t.Error("ClaimSummary of an unsubscribed recipient = true")
	}
	if ask, err := s.SyncRecipients(ctx, m.ID, nil, t1.Add(time.Hour), t1.Add(time.Hour)); err != nil || len(ask) != 0 {
		t.Errorf("sync to none asks %v, %v", ask, err)
	}
	if _, err := s.RecipientStatus(ctx, m.ID, "b@example.com"); !errorsIsNotFound(err) {
		t.Errorf("unlisted pending recipient: %v, want not found", err)
	}
	if ask, err := s.SyncRecipients(ctx, m.ID, []string{"a@example.com"}, t1.Add(2*time.Hour), t1.Add(2*time.Hour)); err != nil || len(ask) != 0 {
		t.Errorf("relisting an unsubscribed recipient asks %v, %v", ask, err)
	}
	if st, err := s.RecipientStatus(ctx, m.ID, "a@example.com"); err != nil || st != store.RecipientUnsubscribed {
		t.Errorf("relisted unsubscribed recipient = %q, %v", st, err)
	}
}
