// Package storetest is the contract test suite every store.Store
// implementation must pass. An implementation's tests call Run with a
// constructor that returns a fresh, empty, isolated store.
package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/store"
)

// concurrency is the number of goroutines of the concurrent-write tests.
const concurrency = 50

// Run runs the contract suite. newStore must return a new, empty store that no
// other test uses, and must release it (Close, drop schema, ...) with
// t.Cleanup. Subtests run in parallel, each with its own store.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"Ping", testPing},
		{"CreateTeam", testCreateTeam},
		{"CreateTeamConflict", testCreateTeamConflict},
		{"TeamNotFound", testTeamNotFound},
		{"CreateAPIKey", testCreateAPIKey},
		{"CreateAPIKeyConflict", testCreateAPIKeyConflict},
		{"CreateAPIKeyUnknownTeam", testCreateAPIKeyUnknownTeam},
		{"APIKeyByHashNotFound", testAPIKeyByHashNotFound},
		{"RevokeAPIKey", testRevokeAPIKey},
		{"RevokeAPIKeyNotFound", testRevokeAPIKeyNotFound},
		{"ListAPIKeys", testListAPIKeys},
		{"ListAPIKeysNotFound", testListAPIKeysNotFound},
		{"CountAPIKeys", testCountAPIKeys},
		{"ConcurrentCreateAPIKey", testConcurrentCreateAPIKey},
		{"ConcurrentCreateTeam", testConcurrentCreateTeam},
		{"EnsureTeam", testEnsureTeam},
		{"CanceledContext", testCanceledContext},
		{"CreditsDefaultUnlimited", testCreditsDefaultUnlimited},
		{"SetAndAddCredits", testSetAndAddCredits},
		{"CreditsNotFound", testCreditsNotFound},
		{"NegativeCredits", testNegativeCredits},
		{"ChargeCredits", testChargeCredits},
		{"ChargeCreditsClamp", testChargeCreditsClamp},
		{"ChargeCreditsIdempotent", testChargeCreditsIdempotent},
		{"ChargeCreditsAPIKey", testChargeCreditsAPIKey},
		{"ConcurrentCharges", testConcurrentCharges},
		{"ConcurrentChargesRunOut", testConcurrentChargesRunOut},
		{"ConcurrentIdempotentCharges", testConcurrentIdempotentCharges},
		{"CreditUsageByPeriod", testCreditUsageByPeriod},
		{"CreditUsageByDay", testCreditUsageByDay},
		{"ListTeams", testListTeams},
		{"TeamLimits", testTeamLimits},
		{"TeamLimitsNotFound", testTeamLimitsNotFound},
		{"ProfileState", testProfileState},
		{"ProfileStateTeams", testProfileStateTeams},
		{"ProfileStateNotFound", testProfileStateNotFound},
		{"ProfileName", testProfileName},
		{"ScrapeSnapshots", testScrapeSnapshots},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newStore(t))
		})
	}
}

// newHash returns the SHA-256 of a random string, as stored for a key.
func newHash(t *testing.T) []byte {
	t.Helper()
	sum := sha256.Sum256([]byte(rand.Text()))
	return sum[:]
}

// mustTeam creates a team or fails the test.
func mustTeam(t *testing.T, s store.Store, name string) store.Team {
	t.Helper()
	team, err := s.CreateTeam(t.Context(), name)
	if err != nil {
		t.Fatalf("CreateTeam(%q): %v", name, err)
	}
	return team
}

// mustKey creates a key for team with a random hash or fails the test.
func mustKey(t *testing.T, s store.Store, teamID string) store.APIKey {
	t.Helper()
	key, err := s.CreateAPIKey(t.Context(), teamID, newHash(t), "fc-abcd")
	if err != nil {
		t.Fatalf("CreateAPIKey(%q): %v", teamID, err)
	}
	return key
}

// checkRecent fails unless ts lies within a minute of now (clock skew between
// the test and a database server is tolerated) and is in UTC.
func checkRecent(t *testing.T, what string, ts time.Time) {
	t.Helper()
	if d := time.Since(ts); d < -time.Minute || d > time.Minute {
		t.Errorf("%s = %v, want within a minute of now", what, ts)
	}
	if ts.Location() != time.UTC {
		t.Errorf("%s location = %v, want UTC", what, ts.Location())
	}
}

// checkErr fails unless errors.Is(err, want); want nil means no error.
func checkErr(t *testing.T, what string, err, want error) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Errorf("%s: unexpected error %v", what, err)
	case want != nil && !errors.Is(err, want):
		t.Errorf("%s: error = %v, want %v", what, err, want)
	}
}

func testPing(t *testing.T, s store.Store) {
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}

func testCreateTeam(t *testing.T, s store.Store) {
	ctx := t.Context()
	team := mustTeam(t, s, "acme")
	if _, err := uuid.Parse(team.ID); err != nil {
		t.Errorf("team ID %q is not a UUID: %v", team.ID, err)
	}
	if team.Name != "acme" {
		t.Errorf("team Name = %q, want %q", team.Name, "acme")
	}
	checkRecent(t, "team CreatedAt", team.CreatedAt)

	byName, err := s.TeamByName(ctx, "acme")
	if err != nil {
		t.Fatalf("TeamByName: %v", err)
	}
	if diff := cmp.Diff(team, byName); diff != "" {
		t.Errorf("TeamByName mismatch (-want +got):\n%s", diff)
	}
	byID, err := s.TeamByID(ctx, team.ID)
	if err != nil {
		t.Fatalf("TeamByID: %v", err)
	}
	if diff := cmp.Diff(team, byID); diff != "" {
		t.Errorf("TeamByID mismatch (-want +got):\n%s", diff)
	}

	other := mustTeam(t, s, "Acme")
	if other.ID == team.ID {
		t.Errorf("two teams share ID %q", team.ID)
	}
}

func testCreateTeamConflict(t *testing.T, s store.Store) {
	mustTeam(t, s, "dup")
	_, err := s.CreateTeam(t.Context(), "dup")
	checkErr(t, "CreateTeam duplicate", err, store.ErrConflict)
}

func testTeamNotFound(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustTeam(t, s, "exists")
	tests := []struct {
		name string
		call func() error
	}{
		{"by name", func() error { _, err := s.TeamByName(ctx, "missing"); return err }},
		{"by name case differs", func() error { _, err := s.TeamByName(ctx, "EXISTS"); return err }},
		{"by empty name", func() error { _, err := s.TeamByName(ctx, ""); return err }},
		{"by random id", func() error { _, err := s.TeamByID(ctx, uuid.NewString()); return err }},
		{"by malformed id", func() error { _, err := s.TeamByID(ctx, "not-a-uuid"); return err }},
		{"by empty id", func() error { _, err := s.TeamByID(ctx, ""); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErr(t, tt.name, tt.call(), store.ErrNotFound)
		})
	}
}

func testCreateAPIKey(t *testing.T, s store.Store) {
	ctx := t.Context()
	team := mustTeam(t, s, "keys")
	hash := newHash(t)
	key, err := s.CreateAPIKey(ctx, team.ID, hash, "fc-1234")
	if err != nil {
		t.Fatalf("CreateAPIKey: %v", err)
	}
	if _, err := uuid.Parse(key.ID); err != nil {
		t.Errorf("key ID %q is not a UUID: %v", key.ID, err)
	}
	checkRecent(t, "key CreatedAt", key.CreatedAt)
	want := store.APIKey{ID: key.ID, TeamID: team.ID, Hash: hash, Prefix: "fc-1234", CreatedAt: key.CreatedAt}
	if diff := cmp.Diff(want, key); diff != "" {
		t.Errorf("CreateAPIKey mismatch (-want +got):\n%s", diff)
	}

	gotKey, gotTeam, err := s.APIKeyByHash(ctx, hash)
	if err != nil {
		t.Fatalf("APIKeyByHash: %v", err)
	}
	if diff := cmp.Diff(key, gotKey); diff != "" {
		t.Errorf("APIKeyByHash key mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(team, gotTeam); diff != "" {
		t.Errorf("APIKeyByHash team mismatch (-want +got):\n%s", diff)
	}
}

func testCreateAPIKeyConflict(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, b := mustTeam(t, s, "a"), mustTeam(t, s, "b")
	hash := newHash(t)
	if _, err := s.CreateAPIKey(ctx, a.ID, hash, "fc-1"); err != nil {
		t.Fatalf("CreateAPIKey: %v", err)
	}
	_, err := s.CreateAPIKey(ctx, a.ID, hash, "fc-2")
	checkErr(t, "CreateAPIKey same team same hash", err, store.ErrConflict)
	_, err = s.CreateAPIKey(ctx, b.ID, hash, "fc-3")
	checkErr(t, "CreateAPIKey other team same hash", err, store.ErrConflict)
}

func testCreateAPIKeyUnknownTeam(t *testing.T, s store.Store) {
	ctx := t.Context()
	for _, id := range []string{uuid.NewString(), "not-a-uuid", ""} {
		_, err := s.CreateAPIKey(ctx, id, newHash(t), "fc-1")
		checkErr(t, fmt.Sprintf("CreateAPIKey(team %q)", id), err, store.ErrNotFound)
	}
	n, err := s.CountAPIKeys(ctx)
	if err != nil {
		t.Fatalf("CountAPIKeys: %v", err)
	}
	if n != 0 {
		t.Errorf("CountAPIKeys = %d after failed creates, want 0", n)
	}
}

func testAPIKeyByHashNotFound(t *testing.T, s store.Store) {
	ctx := t.Context()
	team := mustTeam(t, s, "t")
	mustKey(t, s, team.ID)
	for _, hash := range [][]byte{newHash(t), {}, nil} {
		_, _, err := s.APIKeyByHash(ctx, hash)
		checkErr(t, fmt.Sprintf("APIKeyByHash(%x)", hash), err, store.ErrNotFound)
	}
}

func testRevokeAPIKey(t *testing.T, s store.Store) {
	ctx := t.Context()
	team := mustTeam(t, s, "t")
	key, keep := mustKey(t, s, team.ID), mustKey(t, s, team.ID)

	if err := s.RevokeAPIKey(ctx, key.ID); err != nil {
		t.Fatalf("RevokeAPIKey: %v", err)
	}
	_, _, err := s.APIKeyByHash(ctx, key.Hash)
	checkErr(t, "APIKeyByHash revoked", err, store.ErrNotFound)
	if _, _, err := s.APIKeyByHash(ctx, keep.Hash); err != nil {
		t.Errorf("APIKeyByHash of other key: %v", err)
	}

	list, err := s.ListAPIKeys(ctx, team.ID)
	if err != nil {
		t.Fatalf("ListAPIKeys: %v", err)
	}
	revoked := findKey(list, key.ID)
	if revoked == nil || revoked.RevokedAt == nil {
		t.Fatalf("ListAPIKeys = %+v, want key %s listed with RevokedAt set", list, key.ID)
	}
	checkRecent(t, "RevokedAt", *revoked.RevokedAt)
	if revoked.RevokedAt.Before(revoked.CreatedAt) {
		t.Errorf("RevokedAt %v before CreatedAt %v", revoked.RevokedAt, revoked.CreatedAt)
	}
	first := *revoked.RevokedAt

	// Revoking again succeeds and keeps the first revocation time.
	if err := s.RevokeAPIKey(ctx, key.ID); err != nil {
		t.Fatalf("RevokeAPIKey again: %v", err)
	}
	list, err = s.ListAPIKeys(ctx, team.ID)
	if err != nil {
		t.Fatalf("ListAPIKeys: %v", err)
	}
	if again := findKey(list, key.ID); again == nil || again.RevokedAt == nil || !again.RevokedAt.Equal(first) {
		t.Errorf("after second revoke, key = %+v, want RevokedAt %v", again, first)
	}

	// A revoked hash still may not be reused.
	_, err = s.CreateAPIKey(ctx, team.ID, key.Hash, "fc-x")
	checkErr(t, "CreateAPIKey with revoked hash", err, store.ErrConflict)
}

func findKey(keys []store.APIKey, id string) *store.APIKey {
	for i := range keys {
		if keys[i].ID == id {
			return &keys[i]
		}
	}
	return nil
}

func testRevokeAPIKeyNotFound(t *testing.T, s store.Store) {
	for _, id := range []string{uuid.NewString(), "not-a-uuid", ""} {
		err := s.RevokeAPIKey(t.Context(), id)
		checkErr(t, fmt.Sprintf("RevokeAPIKey(%q)", id), err, store.ErrNotFound)
	}
}

func testListAPIKeys(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, b, empty := mustTeam(t, s, "a"), mustTeam(t, s, "b"), mustTeam(t, s, "empty")
	var aKeys []store.APIKey
	for range 3 {
		aKeys = append(aKeys, mustKey(t, s, a.ID))
		mustKey(t, s, b.ID)
	}
	tests := []struct {
		name   string
		teamID string
		want   []store.APIKey
	}{
		{"newest first", a.ID, []store.APIKey{aKeys[2], aKeys[1], aKeys[0]}},
		{"no keys", empty.ID, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.ListAPIKeys(ctx, tt.teamID)
			if err != nil {
				t.Fatalf("ListAPIKeys: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ListAPIKeys mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func testListAPIKeysNotFound(t *testing.T, s store.Store) {
	for _, id := range []string{uuid.NewString(), "not-a-uuid", ""} {
		_, err := s.ListAPIKeys(t.Context(), id)
		checkErr(t, fmt.Sprintf("ListAPIKeys(%q)", id), err, store.ErrNotFound)
	}
}

func testCountAPIKeys(t *testing.T, s store.Store) {
	ctx := t.Context()
	count := func() int {
		t.Helper()
		n, err := s.CountAPIKeys(ctx)
		if err != nil {
			t.Fatalf("CountAPIKeys: %v", err)
		}
		return n
	}
	if n := count(); n != 0 {
		t.Errorf("CountAPIKeys on empty store = %d, want 0", n)
	}
	a, b := mustTeam(t, s, "a"), mustTeam(t, s, "b")
	revoke := mustKey(t, s, a.ID)
	mustKey(t, s, a.ID)
	mustKey(t, s, b.ID)
	if n := count(); n != 3 {
		t.Errorf("CountAPIKeys = %d, want 3", n)
	}
	if err := s.RevokeAPIKey(ctx, revoke.ID); err != nil {
		t.Fatalf("RevokeAPIKey: %v", err)
	}
	if n := count(); n != 2 {
		t.Errorf("CountAPIKeys after revoke = %d, want 2", n)
	}
}

func testConcurrentCreateAPIKey(t *testing.T, s store.Store) {
	ctx := t.Context()
	team := mustTeam(t, s, "busy")
	errs := make([]error, concurrency)
	var wg sync.WaitGroup
	for i := range concurrency {
		wg.Go(func() {
			_, errs[i] = s.CreateAPIKey(ctx, team.ID, newHash(t), "fc-conc")
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("goroutine %d: CreateAPIKey: %v", i, err)
		}
	}
	n, err := s.CountAPIKeys(ctx)
	if err != nil {
		t.Fatalf("CountAPIKeys: %v", err)
	}
	if n != concurrency {
		t.Errorf("CountAPIKeys = %d, want %d", n, concurrency)
	}
	list, err := s.ListAPIKeys(ctx, team.ID)
	if err != nil {
		t.Fatalf("ListAPIKeys: %v", err)
	}
	if len(list) != concurrency {
		t.Errorf("len(ListAPIKeys) = %d, want %d", len(list), concurrency)
	}
	for i := 1; i < len(list); i++ {
		if list[i].CreatedAt.After(list[i-1].CreatedAt) {
			t.Errorf("ListAPIKeys not newest first at %d: %v after %v", i, list[i].CreatedAt, list[i-1].CreatedAt)
		}
	}
}

// testEnsureTeam: EnsureTeam creates a team of a given id once; again it
// changes nothing; another team's name is ErrConflict.
func testEnsureTeam(t *testing.T, s store.Store) {
	ctx := t.Context()
	const id = "00000000-0000-0000-0000-000000000000"
	for range 2 {
		if err := s.EnsureTeam(ctx, id, "fixed"); err != nil {
			t.Fatalf("EnsureTeam: %v", err)
		}
	}
	got, err := s.TeamByID(ctx, id)
	if err != nil || got.ID != id || got.Name != "fixed" {
		t.Fatalf("TeamByID after EnsureTeam: %+v %v", got, err)
	}
	if err := s.EnsureTeam(ctx, id, "renamed"); err != nil {
		t.Fatalf("EnsureTeam of an existing id: %v", err)
	}
	if got, _ := s.TeamByID(ctx, id); got.Name != "fixed" {
		t.Errorf("EnsureTeam renamed the team to %q", got.Name)
	}
	other, err := s.CreateTeam(ctx, "taken")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureTeam(ctx, "0195e0a0-0000-7000-8000-0000000000ff", other.Name); !errors.Is(err, store.ErrConflict) {
		t.Errorf("EnsureTeam with another team's name: %v, want ErrConflict", err)
	}
}

func testConcurrentCreateTeam(t *testing.T, s store.Store) {
	ctx := t.Context()
	errs := make([]error, concurrency)
	var wg sync.WaitGroup
	for i := range concurrency {
		wg.Go(func() {
			_, errs[i] = s.CreateTeam(ctx, "race")
		})
	}
	wg.Wait()
	created := 0
	for i, err := range errs {
		switch {
		case err == nil:
			created++
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("goroutine %d: CreateTeam: %v, want nil or ErrConflict", i, err)
		}
	}
	if created != 1 {
		t.Errorf("%d concurrent CreateTeam calls succeeded, want 1", created)
	}
}

func testCanceledContext(t *testing.T, s store.Store) {
	team := mustTeam(t, s, "t")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name string
		call func() error
	}{
		{"CreateTeam", func() error { _, err := s.CreateTeam(ctx, "x"); return err }},
		{"TeamByID", func() error { _, err := s.TeamByID(ctx, team.ID); return err }},
		{"CreateAPIKey", func() error { _, err := s.CreateAPIKey(ctx, team.ID, newHash(t), "fc-x"); return err }},
		{"ListAPIKeys", func() error { _, err := s.ListAPIKeys(ctx, team.ID); return err }},
		{"Ping", func() error { return s.Ping(ctx) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErr(t, tt.name, tt.call(), context.Canceled)
		})
	}
}

func testListTeams(t *testing.T, s store.Store) {
	ctx := t.Context()
	empty, err := s.ListTeams(ctx)
	if err != nil {
		t.Fatalf("ListTeams: %v", err)
	}
	b, a := mustTeam(t, s, "bravo"), mustTeam(t, s, "alpha")
	got, err := s.ListTeams(ctx)
	if err != nil {
		t.Fatalf("ListTeams: %v", err)
	}
	want := append(append([]store.Team{}, empty...), a, b) // a fresh store has no team; sorted by name
	slices.SortFunc(want, func(x, y store.Team) int { return strings.Compare(x.Name, y.Name) })
	if diff := cmp.Diff(want, got, cmpopts.EquateApproxTime(time.Millisecond)); diff != "" {
		t.Errorf("ListTeams mismatch (-want +got):\n%s", diff)
	}
}
