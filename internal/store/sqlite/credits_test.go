package sqlite

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/firegate/firegate/internal/store"
)

func TestCreditUsageAcrossMonths(t *testing.T) {
	t.Parallel()
	s := openTest(t, filepath.Join(t.TempDir(), "credits.db"))
	ctx := t.Context()
	team, err := s.CreateTeam(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	zone := time.FixedZone("UTC+5", 5*3600)
	at := []time.Time{
		time.Date(2026, 1, 31, 23, 59, 59, 999999000, time.UTC),
		time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 1, 4, 0, 0, 0, zone), // Feb 28 23:00 UTC
		time.Date(2026, 4, 15, 12, 0, 0, 0, time.UTC),
	}
	for i, ts := range at {
		s.now = func() time.Time { return ts }
		if _, err := s.ChargeCredits(ctx, store.Charge{TeamID: team.ID, Credits: int64(1) << i, Kind: "scrape"}); err != nil {
			t.Fatal(err)
		}
	}
	month := func(m time.Month) time.Time { return time.Date(2026, m, 1, 0, 0, 0, 0, time.UTC) }
	got, err := s.CreditUsageByPeriod(ctx, team.ID, month(1), month(4), false)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.UsagePeriod{
		{Start: month(1), End: month(2), Credits: 1},
		{Start: month(2), End: month(3), Credits: 2 + 4},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CreditUsageByPeriod mismatch (-want +got):\n%s", diff)
	}
}
