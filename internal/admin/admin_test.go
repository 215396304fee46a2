package admin_test

import (
	"errors"
	"testing"

	"github.com/firegate/firegate/internal/admin"
	"github.com/firegate/firegate/internal/apikey"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/teststore"
	"github.com/firegate/firegate/internal/testenv"
)

type fullStore interface {
	store.Store
	store.ActivityStore
}

// TestAdmin runs the operator's changes on both stores: a team ensured
// twice is one team, a key made works and is revoked by id alone (its team
// looked up), a key of another team is not found through the wrong team,
// forcing zero data retention allows it, and the team list shows it all
// with every change recorded.
func TestAdmin(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(testing.TB) fullStore{
		"sqlite":   func(tb testing.TB) fullStore { return teststore.SQLite(tb) },
		"postgres": func(tb testing.TB) fullStore { return teststore.Postgres(tb) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := open(t)
			ctx := t.Context()
			a := admin.New(admin.Options{Store: st, Activity: st, By: "tester", Log: testenv.Logger(t)})
			one, err := a.EnsureTeam(ctx, "one")
			if err != nil {
				t.Fatal(err)
			}
			if again, err := a.EnsureTeam(ctx, "one"); err != nil || again.ID != one.ID {
				t.Fatalf("EnsureTeam again: %+v %v", again, err)
			}
			if _, err := a.CreateTeam(ctx, ""); !errors.Is(err, admin.ErrBadName) {
				t.Errorf("empty name: %v", err)
			}
			two, err := a.CreateTeam(ctx, "two")
			if err != nil {
				t.Fatal(err)
			}
			key, k, err := a.CreateKey(ctx, one.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got, team, err := st.APIKeyByHash(ctx, apikey.Hash(key)); err != nil || got.ID != k.ID || team.ID != one.ID {
				t.Fatalf("the new key: %+v %+v %v", got, team, err)
			}
			if err := a.RevokeKey(ctx, two.ID, k.ID); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("revoke through the wrong team: %v, want ErrNotFound", err)
			}
			if err := a.RevokeKey(ctx, "", k.ID); err != nil {
				t.Fatalf("revoke by id: %v", err)
			}
			if _, _, err := st.APIKeyByHash(ctx, apikey.Hash(key)); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("revoked key still active: %v", err)
			}
			if err := a.SetLimits(ctx, two.ID, store.TeamLimits{ZeroDataRetentionForced: true}); err != nil {
				t.Fatal(err)
			}
			if _, err := a.SetCredits(ctx, two.ID, 10); err != nil {
				t.Fatal(err)
			}
			teams, err := a.Teams(ctx)
			if err != nil || len(teams) != 2 {
				t.Fatalf("Teams: %+v %v", teams, err)
			}
			if got := teams[0]; got.Team.Name != "one" || len(got.Keys) != 1 || got.Keys[0].RevokedAt == nil || !got.Balance.Unlimited {
				t.Errorf("team one: %+v", got)
			}
			if got := teams[1]; got.Team.Name != "two" || !got.Limits.ZeroDataRetention || got.Balance.Remaining != 10 {
				t.Errorf("team two: %+v", got)
			}
			acts, err := st.ListActivity(ctx, one.ID, store.ActivityQuery{Limit: 10})
			if err != nil || len(acts) != 3 || acts[0].Target != "key revoked: "+k.Prefix+"…" || acts[2].Target != "team created: one" || acts[0].Username != "tester" {
				t.Errorf("team one's activity: %+v %v", acts, err)
			}
		})
	}
}
