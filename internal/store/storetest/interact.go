package storetest

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/store"
)

// InteractUnderTest is a store with teams and interact sessions.
type InteractUnderTest interface {
	store.Store
	store.InteractStore
}

// RunInteract runs the contract suite of store.InteractStore. newStore
// must return a new, empty store that no other test uses, and must release
// it with t.Cleanup. Subtests run in parallel, each with its own store.
func RunInteract(t *testing.T, newStore func(t *testing.T) InteractUnderTest) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s InteractUnderTest)
	}{
		{"InteractRoundTrip", testInteractRoundTrip},
		{"InteractTeams", testInteractTeams},
		{"InteractScrapeOnce", testInteractScrapeOnce},
		{"InteractEndOnce", testInteractEndOnce},
		{"InteractExpired", testInteractExpired},
		{"InteractList", testInteractList},
		{"InteractRecording", testInteractRecording},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newStore(t))
		})
	}
}

// base is a fixed time with sub-microsecond digits, which stores drop.
var interactBase = time.Date(2026, 5, 6, 7, 8, 9, 123456789, time.FixedZone("x", 7200))

func newSession(teamID string, at time.Time) store.InteractSession {
	return store.InteractSession{
		ID: uuid.NewString(), TeamID: teamID, TTL: 600 * time.Second, ActivityTTL: 300 * time.Second,
		StreamWebView: true, CreatedAt: at, LastActivity: at, ExpiresAt: at.Add(600 * time.Second), IdleAt: at.Add(300 * time.Second),
	}
}

func mustCreateSession(t *testing.T, s InteractUnderTest, is store.InteractSession) {
	t.Helper()
	if err := s.CreateInteractSession(t.Context(), is); err != nil {
		t.Fatalf("CreateInteractSession: %v", err)
	}
}

func testInteractRoundTrip(t *testing.T, s InteractUnderTest) {
	ctx := t.Context()
	a := mustTeam(t, s, "a")
	is := newSession(a.ID, interactBase)
	is.ProfileName, is.SaveChanges, is.ScrapeID = "shop", true, uuid.NewString()
	mustCreateSession(t, s, is)
	got, err := s.InteractSession(ctx, a.ID, is.ID)
	if err != nil {
		t.Fatalf("InteractSession: %v", err)
	}
	want := is
	want.Status = store.InteractActive
	us := func(tm time.Time) time.Time { return tm.UTC().Truncate(time.Microsecond) }
	want.CreatedAt, want.LastActivity, want.ExpiresAt, want.IdleAt = us(is.CreatedAt), us(is.LastActivity), us(is.ExpiresAt), us(is.IdleAt)
	if got != want {
		t.Fatalf("InteractSession =\n%+v\nwant\n%+v", got, want)
	}
	if got.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt in %v, want UTC", got.CreatedAt.Location())
	}
	bs, err := s.InteractSessionForScrape(ctx, a.ID, is.ScrapeID)
	if err != nil || bs.ID != is.ID {
		t.Errorf("InteractSessionForScrape = %v, %v; want %s", bs.ID, err, is.ID)
	}

	later := interactBase.Add(time.Minute)
	if err := s.TouchInteractSession(ctx, is.ID, later, later.Add(5*time.Minute)); err != nil {
		t.Fatalf("TouchInteractSession: %v", err)
	}
	got, _ = s.InteractSession(ctx, a.ID, is.ID)
	if !got.LastActivity.Equal(us(later)) || !got.IdleAt.Equal(us(later.Add(5*time.Minute))) {
		t.Errorf("after touch: lastActivity %v idleAt %v", got.LastActivity, got.IdleAt)
	}

	end := store.InteractEnd{At: later.Add(time.Second), Reason: "deleted", DurationMS: 61000, CreditsBilled: 3}
	ok, err := s.EndInteractSession(ctx, is.ID, end)
	if err != nil || !ok {
		t.Fatalf("EndInteractSession = %v, %v; want true", ok, err)
	}
	got, _ = s.InteractSession(ctx, a.ID, is.ID)
	if got.Status != store.InteractDestroyed || got.EndReason != "deleted" || got.DurationMS != 61000 || got.CreditsBilled != 3 || !got.DestroyedAt.Equal(us(end.At)) {
		t.Errorf("after end: %+v", got)
	}
	err = s.TouchInteractSession(ctx, is.ID, later, later)
	checkErr(t, "TouchInteractSession after end", err, store.ErrNotFound)

	// A team without a row (auth off) may own sessions.
	if err := s.CreateInteractSession(ctx, newSession("00000000-0000-0000-0000-000000000000", interactBase)); err != nil {
		t.Errorf("CreateInteractSession for the self-hosted team: %v", err)
	}
	dup := newSession(a.ID, interactBase)
	dup.ID = is.ID
	checkErr(t, "CreateInteractSession with a taken id", s.CreateInteractSession(ctx, dup), store.ErrConflict)
	_, err = s.InteractSession(ctx, a.ID, "not-a-uuid")
	checkErr(t, "InteractSession of a malformed id", err, store.ErrNotFound)
}

func testInteractTeams(t *testing.T, s InteractUnderTest) {
	ctx := t.Context()
	a, b := mustTeam(t, s, "a"), mustTeam(t, s, "b")
	is := newSession(a.ID, interactBase)
	is.ScrapeID = uuid.NewString()
	mustCreateSession(t, s, is)
	_, err := s.InteractSession(ctx, b.ID, is.ID)
	checkErr(t, "InteractSession of another team", err, store.ErrNotFound)
	_, err = s.InteractSessionForScrape(ctx, b.ID, is.ScrapeID)
	checkErr(t, "InteractSessionForScrape of another team", err, store.ErrNotFound)
	if n, err := s.CountActiveInteractSessions(ctx, b.ID); err != nil || n != 0 {
		t.Errorf("CountActiveInteractSessions(b) = %d, %v; want 0", n, err)
	}
	if n, err := s.CountActiveInteractSessions(ctx, a.ID); err != nil || n != 1 {
		t.Errorf("CountActiveInteractSessions(a) = %d, %v; want 1", n, err)
	}
	if l, err := s.ListInteractSessions(ctx, b.ID, "", 10); err != nil || len(l) != 0 {
		t.Errorf("ListInteractSessions(b) = %v, %v; want none", l, err)
	}
}

// testInteractScrapeOnce: a scrape gets one session, even when two are
// created at once.
func testInteractScrapeOnce(t *testing.T, s InteractUnderTest) {
	a := mustTeam(t, s, "a")
	scrape := uuid.NewString()
	var ok, conflict atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			is := newSession(a.ID, interactBase)
			is.ScrapeID = scrape
			switch err := s.CreateInteractSession(t.Context(), is); {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, store.ErrConflict):
				conflict.Add(1)
			default:
				t.Errorf("CreateInteractSession: %v", err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 1 || conflict.Load() != 7 {
		t.Errorf("%d created, %d conflicts; want 1 and 7", ok.Load(), conflict.Load())
	}
	// Another team's scrape of the same id is its own.
	b := mustTeam(t, s, "b")
	is := newSession(b.ID, interactBase)
	is.ScrapeID = scrape
	mustCreateSession(t, s, is)
}

// testInteractEndOnce: of concurrent enders one alone ends the session.
func testInteractEndOnce(t *testing.T, s InteractUnderTest) {
	a := mustTeam(t, s, "a")
	is := newSession(a.ID, interactBase)
	mustCreateSession(t, s, is)
	var ended atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			ok, err := s.EndInteractSession(t.Context(), is.ID, store.InteractEnd{At: interactBase, Reason: "ttl"})
			if err != nil {
				t.Errorf("EndInteractSession: %v", err)
			}
			if ok {
				ended.Add(1)
			}
		})
	}
	wg.Wait()
	if ended.Load() != 1 {
		t.Errorf("%d enders succeeded, want 1", ended.Load())
	}
	if ok, err := s.EndInteractSession(t.Context(), uuid.NewString(), store.InteractEnd{At: interactBase}); ok || err != nil {
		t.Errorf("EndInteractSession(unknown) = %v, %v; want false, nil", ok, err)
	}
}

func testInteractExpired(t *testing.T, s InteractUnderTest) {
	ctx := t.Context()
	a, b := mustTeam(t, s, "a"), mustTeam(t, s, "b")
	byTTL := newSession(a.ID, interactBase)
	byTTL.ExpiresAt, byTTL.IdleAt = interactBase.Add(time.Minute), interactBase.Add(time.Hour)
	byIdle := newSession(b.ID, interactBase)
	byIdle.ExpiresAt, byIdle.IdleAt = interactBase.Add(time.Hour), interactBase.Add(2*time.Minute)
	live := newSession(a.ID, interactBase)
	live.ExpiresAt, live.IdleAt = interactBase.Add(time.Hour), interactBase.Add(time.Hour)
	gone := newSession(a.ID, interactBase)
	gone.ExpiresAt, gone.IdleAt = interactBase, interactBase
	for _, is := range []store.InteractSession{byTTL, byIdle, live, gone} {
		mustCreateSession(t, s, is)
	}
	if _, err := s.EndInteractSession(ctx, gone.ID, store.InteractEnd{At: interactBase, Reason: "deleted"}); err != nil {
		t.Fatal(err)
	}
	ids := func(at time.Time) []string {
		l, err := s.ExpiredInteractSessions(ctx, at, 10)
		if err != nil {
			t.Fatalf("ExpiredInteractSessions: %v", err)
		}
		var out []string
		for _, is := range l {
			out = append(out, is.ID)
		}
		return out
	}
	if got := ids(interactBase.Add(30 * time.Second)); len(got) != 0 {
		t.Errorf("expired at +30s = %v, want none", got)
	}
	if got := ids(interactBase.Add(time.Minute)); len(got) != 1 || got[0] != byTTL.ID {
		t.Errorf("expired at +1m = %v, want [%s] (ttl reached exactly)", got, byTTL.ID)
	}
	if got := ids(interactBase.Add(3 * time.Minute)); len(got) != 2 || got[0] != byTTL.ID || got[1] != byIdle.ID {
		t.Errorf("expired at +3m = %v, want [%s %s]", got, byTTL.ID, byIdle.ID)
	}
	// Activity moves the idle deadline.
	if err := s.TouchInteractSession(ctx, byIdle.ID, interactBase.Add(time.Minute), interactBase.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := ids(interactBase.Add(3 * time.Minute)); len(got) != 1 || got[0] != byTTL.ID {
		t.Errorf("expired at +3m after touch = %v, want [%s]", got, byTTL.ID)
	}
	if l, _ := s.ExpiredInteractSessions(ctx, interactBase.Add(2*time.Hour), 2); len(l) != 2 {
		t.Errorf("limit 2 returned %d", len(l))
	}
}

func testInteractList(t *testing.T, s InteractUnderTest) {
	ctx := t.Context()
	a := mustTeam(t, s, "a")
	var all []store.InteractSession
	for i := range 4 {
		is := newSession(a.ID, interactBase.Add(time.Duration(i)*time.Second))
		mustCreateSession(t, s, is)
		all = append(all, is)
	}
	if _, err := s.EndInteractSession(ctx, all[1].ID, store.InteractEnd{At: interactBase, Reason: "deleted"}); err != nil {
		t.Fatal(err)
	}
	check := func(status string, limit int, want ...int) {
		t.Helper()
		l, err := s.ListInteractSessions(ctx, a.ID, status, limit)
		if err != nil {
			t.Fatalf("ListInteractSessions(%q): %v", status, err)
		}
		if len(l) != len(want) {
			t.Fatalf("ListInteractSessions(%q, %d) returned %d, want %d", status, limit, len(l), len(want))
		}
		for i, w := range want {
			if l[i].ID != all[w].ID {
				t.Errorf("ListInteractSessions(%q)[%d] = %s, want session %d", status, i, l[i].ID, w)
			}
		}
	}
	check("", 10, 3, 2, 1, 0)
	check(store.InteractActive, 10, 3, 2, 0)
	check(store.InteractDestroyed, 10, 1)
	check("", 2, 3, 2)
	if n, _ := s.CountActiveInteractSessions(ctx, a.ID); n != 3 {
		t.Errorf("CountActiveInteractSessions = %d, want 3", n)
	}
}

func testInteractRecording(t *testing.T, s InteractUnderTest) {
	ctx := t.Context()
	a := mustTeam(t, s, "a")
	is := newSession(a.ID, interactBase)
	mustCreateSession(t, s, is)
	other := newSession(a.ID, interactBase)
	mustCreateSession(t, s, other)
	us := func(tm time.Time) time.Time { return tm.UTC().Truncate(time.Microsecond) }

	if pages, err := s.InteractPages(ctx, is.ID); err != nil || len(pages) != 0 {
		t.Fatalf("InteractPages of an unrecorded session = %v, %v", pages, err)
	}
	p1 := store.InteractPage{SessionID: is.ID, No: 1, URL: "https://a.example/", Title: "A", StartedAt: interactBase}
	p2 := store.InteractPage{SessionID: is.ID, No: 2, URL: "https://a.example/next", StartedAt: interactBase.Add(time.Second)}
	for _, p := range []store.InteractPage{p2, p1} {
		if err := s.AddInteractPage(ctx, p); err != nil {
			t.Fatalf("AddInteractPage %d: %v", p.No, err)
		}
	}
	checkErr(t, "AddInteractPage twice", s.AddInteractPage(ctx, p1), store.ErrConflict)
	checkErr(t, "AddInteractPage of an unknown session", s.AddInteractPage(ctx, store.InteractPage{SessionID: uuid.NewString(), No: 1, URL: "x", StartedAt: interactBase}), store.ErrNotFound)
	jpeg := []byte{0xff, 0xd8, 0xff, 0x00, 0x01, 0xd9}
	for seq := 1; seq <= 2; seq++ {
		if err := s.AddInteractFrame(ctx, store.InteractFrame{SessionID: is.ID, PageNo: 1, Seq: seq, At: interactBase.Add(time.Duration(seq) * time.Millisecond), JPEG: append(jpeg, byte(seq))}); err != nil {
			t.Fatalf("AddInteractFrame %d: %v", seq, err)
		}
	}
	checkErr(t, "AddInteractFrame twice", s.AddInteractFrame(ctx, store.InteractFrame{SessionID: is.ID, PageNo: 1, Seq: 1, At: interactBase, JPEG: jpeg}), store.ErrConflict)
	checkErr(t, "AddInteractFrame of an unknown page", s.AddInteractFrame(ctx, store.InteractFrame{SessionID: is.ID, PageNo: 9, Seq: 1, At: interactBase, JPEG: jpeg}), store.ErrNotFound)

	pages, err := s.InteractPages(ctx, is.ID)
	if err != nil || len(pages) != 2 {
		t.Fatalf("InteractPages = %+v, %v", pages, err)
	}
	want1, want2 := p1, p2
	want1.StartedAt, want1.Frames = us(p1.StartedAt), 2
	want2.StartedAt = us(p2.StartedAt)
	if pages[0] != want1 || pages[1] != want2 {
		t.Errorf("InteractPages =\n%+v\nwant\n%+v", pages, []store.InteractPage{want1, want2})
	}
	frames, err := s.InteractFrames(ctx, is.ID, 1)
	if err != nil || len(frames) != 2 || frames[0].Seq != 1 || frames[1].Seq != 2 || string(frames[1].JPEG) != string(append(jpeg, 2)) || !frames[0].At.Equal(us(interactBase.Add(time.Millisecond))) {
		t.Errorf("InteractFrames = %+v, %v", frames, err)
	}
	if frames, err := s.InteractFrames(ctx, is.ID, 2); err != nil || len(frames) != 0 {
		t.Errorf("InteractFrames of a page without frames = %+v, %v", frames, err)
	}
	if pages, err := s.InteractPages(ctx, other.ID); err != nil || len(pages) != 0 {
		t.Errorf("another session's pages = %+v, %v", pages, err)
	}

	// Purged once the session has been destroyed long enough; an active
	// session's recording stays.
	if err := s.AddInteractPage(ctx, store.InteractPage{SessionID: other.ID, No: 1, URL: "https://b.example/", StartedAt: interactBase}); err != nil {
		t.Fatal(err)
	}
	ended := interactBase.Add(time.Minute)
	if ok, err := s.EndInteractSession(ctx, is.ID, store.InteractEnd{At: ended, Reason: "deleted"}); !ok || err != nil {
		t.Fatalf("EndInteractSession = %v, %v", ok, err)
	}
	if n, err := s.PurgeInteractRecordings(ctx, ended, 10); err != nil || n != 0 {
		t.Errorf("PurgeInteractRecordings at the end = %d, %v; want 0", n, err)
	}
	if n, err := s.PurgeInteractRecordings(ctx, ended.Add(time.Second), 10); err != nil || n != 2 {
		t.Errorf("PurgeInteractRecordings after the end = %d, %v; want 2 pages", n, err)
	}
	if pages, err := s.InteractPages(ctx, is.ID); err != nil || len(pages) != 0 {
		t.Errorf("pages after the purge = %+v, %v", pages, err)
	}
	if frames, err := s.InteractFrames(ctx, is.ID, 1); err != nil || len(frames) != 0 {
		t.Errorf("frames after the purge = %+v, %v", frames, err)
	}
	if pages, err := s.InteractPages(ctx, other.ID); err != nil || len(pages) != 1 {
		t.Errorf("the active session's pages after the purge = %+v, %v", pages, err)
	}
	if n, err := s.PurgeInteractRecordings(ctx, ended.Add(time.Hour), 10); err != nil || n != 0 {
		t.Errorf("PurgeInteractRecordings again = %d, %v; want 0", n, err)
	}
}
