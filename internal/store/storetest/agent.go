package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/store"
)

// AgentUnderTest is what RunAgent exercises: a store with the agent tables.
type AgentUnderTest interface {
	store.Store
	store.AgentStore
}

// RunAgent runs the contract suite of store.AgentStore. newStore must
// return a new, empty store that no other test uses, and must release it
// with t.Cleanup. Subtests run in parallel, each with its own store.
func RunAgent(t *testing.T, newStore func(t *testing.T) AgentUnderTest) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s AgentUnderTest)
	}{
		{"AgentRunLifecycle", testAgentRunLifecycle},
		{"AgentRunNotFound", testAgentRunNotFound},
		{"AgentStepGuards", testAgentStepGuards},
		{"AgentFinishOnce", testAgentFinishOnce},
		{"AgentEventsConcurrent", testAgentEventsConcurrent},
		{"AgentRunsList", testAgentRunsList},
		{"AgentRunsSameInstant", testAgentRunsSameInstant},
		{"AgentSnapshots", testAgentSnapshots},
		{"AgentStaleAndExpired", testAgentStaleAndExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newStore(t))
		})
	}
}

func newAgentRun(t *testing.T, s AgentUnderTest, team store.Team, parent string, created time.Time) store.AgentRun {
	t.Helper()
	id, _ := uuid.NewV7()
	r, err := s.CreateAgentRun(t.Context(), store.AgentRun{ID: id.String(), TeamID: team.ID, ParentID: parent,
		Model: "spark-1-pro", Options: []byte(`{"prompt":"p"}`), MaxCredits: 100, CreatedAt: created,
		ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatalf("CreateAgentRun: %v", err)
	}
	return r
}

func eventSeqs(t *testing.T, s AgentUnderTest, id string) []string {
	t.Helper()
	evs, err := s.AgentEvents(t.Context(), id, 0, 1000)
	if err != nil {
		t.Fatalf("AgentEvents: %v", err)
	}
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = fmt.Sprintf("%d:%s", e.Seq, e.Body)
	}
	return out
}

func testAgentRunLifecycle(t *testing.T, s AgentUnderTest) {
	ctx := t.Context()
	team := mustTeam(t, s, "agents")
	r := newAgentRun(t, s, team, "", time.Time{})
	if r.Status != store.AgentProcessing || r.Step != 0 || r.State != nil || r.CreatedAt.IsZero() || r.Model != "spark-1-pro" ||
		string(r.Options) != `{"prompt":"p"}` || r.MaxCredits != 100 {
		t.Fatalf("created run = %+v", r)
	}
	ok, err := s.RecordAgentStep(ctx, r.ID, store.AgentStep{Step: 1, State: []byte(`{"s":1}`), CreditsUsed: 7,
		Events: [][]byte{[]byte(`{"a":1}`), []byte(`{"a":2}`)}})
	if err != nil || !ok {
		t.Fatalf("RecordAgentStep 1 = %v, %v", ok, err)
	}
	got, err := s.AgentRun(ctx, r.ID)
	if err != nil || got.Step != 1 || string(got.State) != `{"s":1}` || got.CreditsUsed != 7 {
		t.Fatalf("after step 1: %+v, %v", got, err)
	}
	ok, err = s.FinishAgentRun(ctx, r.ID, []string{store.AgentProcessing}, store.AgentFinish{Status: store.AgentCompleted,
		Data: []byte(`{"answer":42}`), CreditsUsed: 9, Events: [][]byte{[]byte(`{"end":true}`)}})
	if err != nil || !ok {
		t.Fatalf("FinishAgentRun = %v, %v", ok, err)
	}
	got, err = s.AgentRun(ctx, r.ID)
	if err != nil || got.Status != store.AgentCompleted || string(got.Data) != `{"answer":42}` || got.CreditsUsed != 9 || got.FinishedAt == nil {
		t.Fatalf("finished: %+v, %v", got, err)
	}
	want := []string{`1:{"a":1}`, `2:{"a":2}`, `3:{"end":true}`}
	if got := eventSeqs(t, s, r.ID); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	after, err := s.AgentEvents(ctx, r.ID, 2, 10)
	if err != nil || len(after) != 1 || after[0].Seq != 3 {
		t.Fatalf("events after 2 = %+v, %v", after, err)
	}
}

func testAgentRunNotFound(t *testing.T, s AgentUnderTest) {
	ctx := t.Context()
	missing := uuid.NewString()
	if _, err := s.AgentRun(ctx, missing); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("AgentRun(missing) = %v", err)
	}
	if _, err := s.AgentRun(ctx, "not-a-uuid"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("AgentRun(malformed) = %v", err)
	}
	if _, err := s.RecordAgentStep(ctx, missing, store.AgentStep{Step: 1}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RecordAgentStep(missing) = %v", err)
	}
	if _, err := s.FinishAgentRun(ctx, missing, []string{store.AgentProcessing}, store.AgentFinish{Status: store.AgentFailed}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("FinishAgentRun(missing) = %v", err)
	}
	_, err := s.CreateAgentRun(ctx, store.AgentRun{ID: uuid.NewString(), TeamID: uuid.NewString(), Model: "m",
		ExpiresAt: time.Now().Add(time.Hour)})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("CreateAgentRun(unknown team) = %v", err)
	}
	team := mustTeam(t, s, "agents")
	r := newAgentRun(t, s, team, "", time.Time{})
	_, err = s.CreateAgentRun(ctx, store.AgentRun{ID: r.ID, TeamID: team.ID, Model: "m", ExpiresAt: time.Now().Add(time.Hour)})
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("CreateAgentRun(same id) = %v", err)
	}
	if _, err := s.AgentSnapshot(ctx, r.ID, uuid.NewString()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("AgentSnapshot(missing) = %v", err)
	}
}

// testAgentStepGuards: a step is recorded once, in order, and only while
// the run is processing.
func testAgentStepGuards(t *testing.T, s AgentUnderTest) {
	ctx := t.Context()
	team := mustTeam(t, s, "agents")
	r := newAgentRun(t, s, team, "", time.Time{})
	if ok, err := s.RecordAgentStep(ctx, r.ID, store.AgentStep{Step: 2, State: []byte(`{}`)}); err != nil || ok {
		t.Fatalf("step 2 before 1 = %v, %v", ok, err)
	}
	if ok, err := s.RecordAgentStep(ctx, r.ID, store.AgentStep{Step: 1, State: []byte(`{"n":1}`)}); err != nil || !ok {
		t.Fatalf("step 1 = %v, %v", ok, err)
	}
	if ok, err := s.RecordAgentStep(ctx, r.ID, store.AgentStep{Step: 1, State: []byte(`{"n":"again"}`),
		Events: [][]byte{[]byte(`{}`)}}); err != nil || ok {
		t.Fatalf("step 1 again = %v, %v", ok, err)
	}
	if ok, err := s.AppendAgentEvents(ctx, r.ID, [][]byte{[]byte(`{"e":1}`)}); err != nil || !ok {
		t.Fatalf("AppendAgentEvents = %v, %v", ok, err)
	}
	if ok, err := s.FinishAgentRun(ctx, r.ID, []string{store.AgentProcessing}, store.AgentFinish{Status: store.AgentCancelled,
		Error: "cancelled"}); err != nil || !ok {
		t.Fatalf("cancel = %v, %v", ok, err)
	}
	if ok, err := s.RecordAgentStep(ctx, r.ID, store.AgentStep{Step: 2, State: []byte(`{}`)}); err != nil || ok {
		t.Fatalf("step after cancel = %v, %v", ok, err)
	}
	if ok, err := s.AppendAgentEvents(ctx, r.ID, [][]byte{[]byte(`{"late":1}`)}); err != nil || ok {
		t.Fatalf("AppendAgentEvents after cancel = %v, %v", ok, err)
	}
	got, err := s.AgentRun(ctx, r.ID)
	if err != nil || got.Step != 1 || string(got.State) != `{"n":1}` || got.Status != store.AgentCancelled || got.Error != "cancelled" {
		t.Fatalf("run = %+v, %v", got, err)
	}
	if evs := eventSeqs(t, s, r.ID); len(evs) != 1 || evs[0] != `1:{"e":1}` {
		t.Fatalf("events = %v", evs)
	}
	if _, err := s.FinishAgentRun(ctx, r.ID, nil, store.AgentFinish{Status: store.AgentProcessing}); err == nil {
		t.Fatal("FinishAgentRun to processing succeeded")
	}
}

// testAgentFinishOnce: of concurrent finishes (a cancel racing the worker's
// completion) exactly one wins and only its events are recorded.
func testAgentFinishOnce(t *testing.T, s AgentUnderTest) {
	team := mustTeam(t, s, "agents")
	r := newAgentRun(t, s, team, "", time.Time{})
	const n = 8
	var wg sync.WaitGroup
	wins := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wins[i], errs[i] = s.FinishAgentRun(t.Context(), r.ID, []string{store.AgentProcessing},
				store.AgentFinish{Status: store.AgentFailed, Error: fmt.Sprint(i), Events: [][]byte{[]byte(fmt.Sprintf(`{"by":%d}`, i))}})
		}()
	}
	wg.Wait()
	winner := -1
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("finish %d: %v", i, errs[i])
		}
		if wins[i] {
			if winner >= 0 {
				t.Fatalf("finishes %d and %d both won", winner, i)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatal("no finish won")
	}
	if evs := eventSeqs(t, s, r.ID); len(evs) != 1 || evs[0] != fmt.Sprintf(`1:{"by":%d}`, winner) {
		t.Fatalf("events = %v, winner %d", evs, winner)
	}
}

// testAgentEventsConcurrent: concurrent appends get distinct sequence
// numbers from 1 without gaps.
func testAgentEventsConcurrent(t *testing.T, s AgentUnderTest) {
	team := mustTeam(t, s, "agents")
	r := newAgentRun(t, s, team, "", time.Time{})
	const n = 10
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.AppendAgentEvents(t.Context(), r.ID, [][]byte{[]byte(`{"x":1}`), []byte(`{"x":2}`)}); err != nil {
				t.Errorf("append %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	evs, err := s.AgentEvents(t.Context(), r.ID, 0, 1000)
	if err != nil || len(evs) != 2*n {
		t.Fatalf("events = %d, %v", len(evs), err)
	}
	for i, e := range evs {
		if e.Seq != i+1 {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
		// A batch's two events stay adjacent and in order.
		if want := fmt.Sprintf(`{"x":%d}`, i%2+1); string(e.Body) != want {
			t.Fatalf("event %d = %s, want %s", e.Seq, e.Body, want)
		}
	}
}

func testAgentRunsList(t *testing.T, s AgentUnderTest) {
	ctx := t.Context()
	team := mustTeam(t, s, "agents")
	other := mustTeam(t, s, "others")
	base := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	var ids []string
	for i := range 5 {
		ids = append(ids, newAgentRun(t, s, team, "", base.Add(time.Duration(i)*time.Second)).ID)
	}
	newAgentRun(t, s, other, "", base)
	child := newAgentRun(t, s, team, ids[0], base.Add(10*time.Second))
	got, err := s.AgentRuns(ctx, team.ID, store.AgentCursor{CreatedAt: time.Now().Add(time.Minute)}, 3)
	if err != nil || len(got) != 3 || got[0].ID != ids[4] || got[1].ID != ids[3] || got[2].ID != ids[2] {
		t.Fatalf("first page = %+v, %v", got, err)
	}
	got, err = s.AgentRuns(ctx, team.ID, store.AgentCursor{CreatedAt: got[2].CreatedAt}, 3)
	if err != nil || len(got) != 2 || got[0].ID != ids[1] || got[1].ID != ids[0] {
		t.Fatalf("second page = %+v, %v", got, err)
	}
	kids, err := s.ChildAgentRuns(ctx, ids[0])
	if err != nil || len(kids) != 1 || kids[0].ID != child.ID || kids[0].ParentID != ids[0] {
		t.Fatalf("children = %+v, %v", kids, err)
	}
}

// testAgentRunsSameInstant: runs created in the same microsecond page by
// (created_at, id): paging from the last run of each page sees every run
// exactly once, in order, wherever the page boundaries fall.
func testAgentRunsSameInstant(t *testing.T, s AgentUnderTest) {
	ctx := t.Context()
	team := mustTeam(t, s, "agents")
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
	want := map[string]bool{}
	for i := range 7 {
		created := at
		switch i {
		case 0:
			created = at.Add(time.Millisecond) // newer: first
		case 6:
			created = at.Add(-time.Microsecond) // older: last
		}
		want[newAgentRun(t, s, team, "", created).ID] = true
	}
	seen := map[string]int{}
	var order []store.AgentRun
	cursor := store.AgentCursor{CreatedAt: time.Now().Add(time.Minute)}
	for pages := 0; ; pages++ {
		if pages > 7 {
			t.Fatalf("paging did not end: %d runs seen", len(order))
		}
		got, err := s.AgentRuns(ctx, team.ID, cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			seen[r.ID]++
			order = append(order, r)
		}
		if len(got) < 2 {
			break
		}
		last := got[len(got)-1]
		cursor = store.AgentCursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	if len(seen) != len(want) {
		t.Errorf("saw %d distinct runs of %d", len(seen), len(want))
	}
	for id, n := range seen {
		if n != 1 || !want[id] {
			t.Errorf("run %s seen %d times (one of the team's: %v)", id, n, want[id])
		}
	}
	for i := 1; i < len(order); i++ {
		a, b := order[i-1], order[i]
		if b.CreatedAt.After(a.CreatedAt) || (b.CreatedAt.Equal(a.CreatedAt) && b.ID >= a.ID) {
			t.Errorf("run %d (%s %s) not after run %d (%s %s)", i, b.CreatedAt, b.ID, i-1, a.CreatedAt, a.ID)
		}
	}
}

func testAgentSnapshots(t *testing.T, s AgentUnderTest) {
	ctx := t.Context()
	team := mustTeam(t, s, "agents")
	r := newAgentRun(t, s, team, "", time.Time{})
	r2 := newAgentRun(t, s, team, "", time.Time{})
	sid := uuid.NewString()
	ok, err := s.RecordAgentStep(ctx, r.ID, store.AgentStep{Step: 1, State: []byte(`{}`),
		Snapshots: []store.AgentSnapshot{{ID: sid, Content: "interim ✓"}}})
	if err != nil || !ok {
		t.Fatalf("RecordAgentStep = %v, %v", ok, err)
	}
	sn, err := s.AgentSnapshot(ctx, r.ID, sid)
	if err != nil || sn.Content != "interim ✓" || sn.RunID != r.ID || sn.ID != sid || sn.CreatedAt.IsZero() {
		t.Fatalf("snapshot = %+v, %v", sn, err)
	}
	if _, err := s.AgentSnapshot(ctx, r2.ID, sid); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another run's snapshot = %v", err)
	}
	fid := uuid.NewString()
	if ok, err := s.FinishAgentRun(ctx, r.ID, []string{store.AgentProcessing}, store.AgentFinish{Status: store.AgentCompleted,
		Data: []byte(`{}`), Snapshots: []store.AgentSnapshot{{ID: fid, Content: "final"}}}); err != nil || !ok {
		t.Fatalf("finish = %v, %v", ok, err)
	}
	if sn, err := s.AgentSnapshot(ctx, r.ID, fid); err != nil || sn.Content != "final" {
		t.Fatalf("final snapshot = %+v, %v", sn, err)
	}
}

func testAgentStaleAndExpired(t *testing.T, s AgentUnderTest) {
	ctx := t.Context()
	team := mustTeam(t, s, "agents")
	r := newAgentRun(t, s, team, "", time.Time{})
	done := newAgentRun(t, s, team, "", time.Time{})
	if _, err := s.FinishAgentRun(ctx, done.ID, []string{store.AgentProcessing}, store.AgentFinish{Status: store.AgentFailed}); err != nil {
		t.Fatal(err)
	}
	stale, err := s.StaleAgentRuns(ctx, time.Now().Add(time.Minute))
	if err != nil || len(stale) != 1 || stale[0] != r.ID {
		t.Fatalf("stale = %v, %v", stale, err)
	}
	stale, err = s.StaleAgentRuns(ctx, time.Now().Add(-time.Minute))
	if err != nil || len(stale) != 0 {
		t.Fatalf("stale a minute ago = %v, %v", stale, err)
	}
	if _, err := s.AppendAgentEvents(ctx, r.ID, [][]byte{[]byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	n, err := s.DeleteExpiredAgentRuns(ctx, time.Now())
	if err != nil || n != 0 {
		t.Fatalf("nothing expired: %d, %v", n, err)
	}
	n, err = s.DeleteExpiredAgentRuns(ctx, time.Now().Add(2*time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("expired = %d, %v", n, err)
	}
	if _, err := s.AgentRun(ctx, r.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("purged run = %v", err)
	}
	if evs, err := s.AgentEvents(ctx, r.ID, 0, 10); err != nil || len(evs) != 0 {
		t.Fatalf("purged events = %v, %v", evs, err)
	}
}
