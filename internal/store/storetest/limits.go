package storetest

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/store"
)

func testTeamLimits(t *testing.T, s store.Store) {
	ctx := t.Context()
	team, other := mustTeam(t, s, "t"), mustTeam(t, s, "other")
	intp := func(n int) *int { return &n }
	steps := []store.TeamLimits{
		{ConcurrencyLimit: intp(5), RateMultiplier: intp(3), ZeroDataRetention: true, ZeroDataRetentionForced: true, Catalog: true, ThirdPartyTerms: true},
		{ZeroDataRetention: true, ZeroDataRetentionForced: true},
		{ZeroDataRetention: true},
		{Catalog: true},
		{ConcurrencyLimit: intp(0)},
		{RateMultiplier: intp(1)},
		{},
	}
	if got, err := s.TeamLimits(ctx, team.ID); err != nil || !cmp.Equal(got, store.TeamLimits{}) {
		t.Errorf("TeamLimits of a new team = %+v, %v; want zero", got, err)
	}
	for _, want := range steps {
		if err := s.SetTeamLimits(ctx, team.ID, want); err != nil {
			t.Fatalf("SetTeamLimits(%+v): %v", want, err)
		}
		got, err := s.TeamLimits(ctx, team.ID)
		if err != nil {
			t.Fatalf("TeamLimits: %v", err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("TeamLimits mismatch (-want +got):\n%s", diff)
		}
	}
	if got, err := s.TeamLimits(ctx, other.ID); err != nil || !cmp.Equal(got, store.TeamLimits{}) {
		t.Errorf("TeamLimits of another team = %+v, %v; want zero", got, err)
	}
	if err := s.SetTeamLimits(ctx, team.ID, store.TeamLimits{ConcurrencyLimit: intp(-1)}); err == nil {
		t.Error("SetTeamLimits with a negative limit succeeded")
	}
}

func testTeamLimitsNotFound(t *testing.T, s store.Store) {
	ctx := t.Context()
	for _, id := range []string{uuid.NewString(), "not-a-uuid", ""} {
		_, err := s.TeamLimits(ctx, id)
		checkErr(t, fmt.Sprintf("TeamLimits(%q)", id), err, store.ErrNotFound)
		err = s.SetTeamLimits(ctx, id, store.TeamLimits{})
		checkErr(t, fmt.Sprintf("SetTeamLimits(%q)", id), err, store.ErrNotFound)
	}
}
