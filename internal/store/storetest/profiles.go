package storetest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/store"
)

// checkProfile fails unless the team's profile holds want.
func checkProfile(t *testing.T, s store.Store, teamID, name string, want []byte) {
	t.Helper()
	got, err := s.ProfileState(t.Context(), teamID, name)
	if err != nil {
		t.Fatalf("ProfileState(%q): %v", name, err)
	}
	if got == nil || !bytes.Equal(got, want) {
		t.Errorf("ProfileState(%q) = %q, want %q", name, got, want)
	}
}

func testProfileState(t *testing.T, s store.Store) {
	ctx := t.Context()
	team := mustTeam(t, s, "t")
	_, err := s.ProfileState(ctx, team.ID, "main")
	checkErr(t, "ProfileState before save", err, store.ErrNotFound)

	// Binary state, NUL and invalid UTF-8 included, round-trips exactly.
	first := []byte("{\"cookies\":[]}\x00\xff\xfe")
	if err := s.SaveProfileState(ctx, team.ID, "main", first); err != nil {
		t.Fatalf("SaveProfileState: %v", err)
	}
	checkProfile(t, s, team.ID, "main", first)

	// Saving again replaces the state, longer or shorter.
	for _, state := range [][]byte{bytes.Repeat([]byte("x"), 1<<20), []byte("short"), {}, nil} {
		if err := s.SaveProfileState(ctx, team.ID, "main", state); err != nil {
			t.Fatalf("SaveProfileState(%d bytes): %v", len(state), err)
		}
		checkProfile(t, s, team.ID, "main", state)
	}

	// Names are exact: case and other names are other profiles.
	if err := s.SaveProfileState(ctx, team.ID, "Main", []byte("upper")); err != nil {
		t.Fatalf("SaveProfileState(Main): %v", err)
	}
	checkProfile(t, s, team.ID, "Main", []byte("upper"))
	checkProfile(t, s, team.ID, "main", nil)
	_, err = s.ProfileState(ctx, team.ID, "other")
	checkErr(t, "ProfileState of an unsaved name", err, store.ErrNotFound)
}

func testProfileStateTeams(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, b := mustTeam(t, s, "a"), mustTeam(t, s, "b")
	if err := s.SaveProfileState(ctx, a.ID, "shared", []byte("a1")); err != nil {
		t.Fatalf("SaveProfileState(a): %v", err)
	}
	_, err := s.ProfileState(ctx, b.ID, "shared")
	checkErr(t, "ProfileState of the other team", err, store.ErrNotFound)
	if err := s.SaveProfileState(ctx, b.ID, "shared", []byte("b1")); err != nil {
		t.Fatalf("SaveProfileState(b): %v", err)
	}
	checkProfile(t, s, a.ID, "shared", []byte("a1"))
	checkProfile(t, s, b.ID, "shared", []byte("b1"))
	if err := s.SaveProfileState(ctx, a.ID, "shared", []byte("a2")); err != nil {
		t.Fatalf("SaveProfileState(a again): %v", err)
	}
	checkProfile(t, s, a.ID, "shared", []byte("a2"))
	checkProfile(t, s, b.ID, "shared", []byte("b1"))
}

func testProfileStateNotFound(t *testing.T, s store.Store) {
	ctx := t.Context()
	team := mustTeam(t, s, "t")
	if err := s.SaveProfileState(ctx, team.ID, "p", []byte("x")); err != nil {
		t.Fatalf("SaveProfileState: %v", err)
	}
	for _, id := range []string{uuid.NewString(), "not-a-uuid", ""} {
		_, err := s.ProfileState(ctx, id, "p")
		checkErr(t, fmt.Sprintf("ProfileState(%q)", id), err, store.ErrNotFound)
		err = s.SaveProfileState(ctx, id, "p", []byte("y"))
		checkErr(t, fmt.Sprintf("SaveProfileState(%q)", id), err, store.ErrNotFound)
	}
	checkProfile(t, s, team.ID, "p", []byte("x"))
}

func testProfileName(t *testing.T, s store.Store) {
	ctx := t.Context()
	team := mustTeam(t, s, "t")
	for _, name := range []string{"a", strings.Repeat("n", store.MaxProfileNameLen), strings.Repeat("é", store.MaxProfileNameLen), "with space/and:punct"} {
		if err := s.SaveProfileState(ctx, team.ID, name, []byte(name)); err != nil {
			t.Errorf("SaveProfileState(%q): %v", name, err)
			continue
		}
		checkProfile(t, s, team.ID, name, []byte(name))
	}
	for _, name := range []string{"", strings.Repeat("n", store.MaxProfileNameLen+1), "nul\x00", "bad\xff"} {
		if err := s.SaveProfileState(ctx, team.ID, name, []byte("x")); err == nil {
			t.Errorf("SaveProfileState(%q) succeeded, want an error", name)
		}
		_, err := s.ProfileState(ctx, team.ID, name)
		checkErr(t, fmt.Sprintf("ProfileState(%q)", name), err, store.ErrNotFound)
	}
}
