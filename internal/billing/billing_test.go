package billing

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/teststore"
	"github.com/firegate/firegate/internal/testenv"
)

// fullStore is what the tests need of a store: the ledger's part and teams.
type fullStore interface {
	Store
	CreateTeam(ctx context.Context, name string) (store.Team, error)
	SetCredits(ctx context.Context, teamID string, credits int64) (store.Balance, error)
}

// forEachStore runs fn on a fresh SQLite and a fresh Postgres store.
func forEachStore(t *testing.T, fn func(t *testing.T, st fullStore)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, teststore.SQLite(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		fn(t, teststore.Postgres(t))
	})
}

func newTeam(t *testing.T, st fullStore, credits int64) string {
	t.Helper()
	team, err := st.CreateTeam(t.Context(), "team-"+uuid.NewString())
	if err != nil {
		t.Fatal(err)
	}
	if credits >= 0 {
		if _, err := st.SetCredits(t.Context(), team.ID, credits); err != nil {
			t.Fatal(err)
		}
	}
	return team.ID
}

func TestCheck(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, st fullStore) {
		ctx := t.Context()
		l := NewLedger(st, testenv.Logger(t))
		unlimited, five, empty := newTeam(t, st, -1), newTeam(t, st, 5), newTeam(t, st, 0)
		tests := []struct {
			name    string
			team    string
			minimum int64
			want    error
		}{
			{"unlimited", unlimited, 1_000_000, nil},
			{"enough", five, 5, nil},
			{"short", five, 6, ErrInsufficientCredits},
			{"agent minimum", five, MinAgent, ErrInsufficientCredits},
			{"empty", empty, MinScrape, ErrInsufficientCredits},
			{"empty, nothing needed", empty, 0, nil},
			{"unknown team", uuid.NewString(), 1, store.ErrNotFound},
		}
		for _, tt := range tests {
			err := l.Check(ctx, tt.team, tt.minimum)
			if (tt.want == nil) != (err == nil) || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Errorf("%s: Check = %v, want %v", tt.name, err, tt.want)
			}
		}
	})
}

func TestCharge(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, st fullStore) {
		ctx := t.Context()
		l := NewLedger(st, testenv.Logger(t))
		team := newTeam(t, st, 10)
		res, err := l.Charge(ctx, store.Charge{TeamID: team, Credits: ScrapeCost(ScrapeCostInput{JSON: true}), Kind: "scrape"})
		if err != nil {
			t.Fatalf("Charge: %v", err)
		}
		if res.Balance.Remaining != 5 || res.Usage.Credits != 5 {
			t.Errorf("Charge = %+v, want 5 taken, 5 left", res)
		}
		_, err = l.Charge(ctx, store.Charge{TeamID: team, Credits: 6, Kind: "scrape"})
		if !errors.Is(err, ErrInsufficientCredits) || !errors.Is(err, store.ErrInsufficientCredits) {
			t.Errorf("Charge over the balance: %v, want ErrInsufficientCredits", err)
		}
		res, err = l.Charge(ctx, store.Charge{TeamID: team, Credits: 6, Kind: "scrape", Clamp: true})
		if err != nil || res.Usage.Credits != 5 || res.Balance.Remaining != 0 {
			t.Errorf("clamped Charge = %+v, %v; want 5 taken, 0 left", res, err)
		}
		if err := l.Check(ctx, team, MinScrape); !errors.Is(err, ErrInsufficientCredits) {
			t.Errorf("Check after using every credit: %v, want ErrInsufficientCredits", err)
		}
		if _, err := l.Charge(ctx, store.Charge{TeamID: uuid.NewString(), Credits: 1, Kind: "scrape"}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Charge of an unknown team: %v, want ErrNotFound", err)
		}
	})
}

// TestConcurrentCharges charges one team from 200 goroutines through the
// ledger: the balance ends exact, never negative.
func TestConcurrentCharges(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, st fullStore) {
		ctx := t.Context()
		l := NewLedger(st, testenv.Logger(t))
		const n, credits = 200, 450 // 150 charges of 3 fit
		team := newTeam(t, st, credits)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := time.Now()
		for i := range n {
			wg.Go(func() {
				_, errs[i] = l.Charge(ctx, store.Charge{TeamID: team, Credits: 3, Kind: "scrape"})
			})
		}
		wg.Wait()
		t.Logf("%d concurrent charges in %v", n, time.Since(start))
		ok := 0
		for i, err := range errs {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, ErrInsufficientCredits):
				t.Errorf("charge %d: %v", i, err)
			}
		}
		if ok != credits/3 {
			t.Errorf("%d charges succeeded, want %d", ok, credits/3)
		}
		b, err := l.Balance(ctx, team)
		if err != nil || b.Remaining != 0 {
			t.Errorf("Balance = %+v, %v; want 0 remaining", b, err)
		}
		cur, err := l.Current(ctx, team)
		if err != nil {
			t.Fatal(err)
		}
		if cur.Used != credits {
			t.Errorf("Current used = %d, want %d", cur.Used, credits)
		}
	})
}

func TestCurrentAndHistory(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, st fullStore) {
		ctx := t.Context()
		l := NewLedger(st, testenv.Logger(t))
		team := newTeam(t, st, 100)
		for _, c := range []int64{1, 2, 3} {
			if _, err := l.Charge(ctx, store.Charge{TeamID: team, Credits: c, Kind: "scrape"}); err != nil {
				t.Fatal(err)
			}
		}
		start, end := Period(time.Now())
		cur, err := l.Current(ctx, team)
		if err != nil {
			t.Fatal(err)
		}
		want := CurrentUsage{Balance: store.Balance{Remaining: 94, Plan: 100}, PeriodStart: start, PeriodEnd: end, Used: 6}
		if diff := cmp.Diff(want, cur); diff != "" {
			t.Errorf("Current mismatch (-want +got):\n%s", diff)
		}
		hist, err := l.History(ctx, team, false)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]store.UsagePeriod{{Start: start, End: end, Credits: 6}}, hist); diff != "" {
			t.Errorf("History mismatch (-want +got):\n%s", diff)
		}
		if _, err := l.Current(ctx, uuid.NewString()); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Current of unknown team: %v, want ErrNotFound", err)
		}
	})
}

// TestDaily: the ledger's per-day usage covers the last N days up to today,
// and leaves out what is older.
func TestDaily(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, st fullStore) {
		ctx := t.Context()
		l := NewLedger(st, testenv.Logger(t))
		team := newTeam(t, st, 100)
		if _, err := l.Charge(ctx, store.Charge{TeamID: team, Credits: 5, Kind: "scrape"}); err != nil {
			t.Fatal(err)
		}
		today := time.Now().UTC().Truncate(24 * time.Hour)
		got, err := l.Daily(ctx, team, 30)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]store.UsagePeriod{{Start: today, End: today.AddDate(0, 0, 1), Credits: 5}}, got); diff != "" {
			t.Errorf("Daily mismatch (-want +got):\n%s", diff)
		}
		// Seen from 40 days later, today's usage is outside a 30-day window.
		l.now = func() time.Time { return today.AddDate(0, 0, 40) }
		if got, err := l.Daily(ctx, team, 30); err != nil || len(got) != 0 {
			t.Errorf("Daily 40 days later = %+v, %v; want none", got, err)
		}
		if got, err := l.Daily(ctx, team, 41); err != nil || len(got) != 1 {
			t.Errorf("Daily(41) 40 days later = %+v, %v; want today's", got, err)
		}
	})
}

func TestPeriod(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in         time.Time
		start, end time.Time
	}{
		{time.Date(2026, 2, 14, 10, 0, 0, 0, time.UTC), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(2026, 3, 1, 2, 0, 0, 0, time.FixedZone("UTC+5", 5*3600)), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		start, end := Period(tt.in)
		if !start.Equal(tt.start) || !end.Equal(tt.end) {
			t.Errorf("Period(%v) = %v, %v; want %v, %v", tt.in, start, end, tt.start, tt.end)
		}
	}
}

// failingStore fails every call with a driver-like error.
type failingStore struct{}

var errDriver = errors.New("connection reset")

func (failingStore) CreditBalance(context.Context, string) (store.Balance, error) {
	return store.Balance{}, errDriver
}

func (failingStore) ChargeCredits(context.Context, store.Charge) (store.ChargeResult, error) {
	return store.ChargeResult{}, errDriver
}

func (failingStore) CreditUsageByPeriod(context.Context, string, time.Time, time.Time, bool) ([]store.UsagePeriod, error) {
	return nil, errDriver
}

func (failingStore) CreditUsageByDay(context.Context, string, time.Time, time.Time) ([]store.UsagePeriod, error) {
	return nil, errDriver
}

func TestStoreFailureIsUnavailable(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := NewLedger(failingStore{}, testenv.Logger(t))
	if err := l.Check(ctx, "t", 1); !errors.Is(err, ErrUnavailable) || !errors.Is(err, errDriver) {
		t.Errorf("Check: %v, want ErrUnavailable wrapping the cause", err)
	}
	if _, err := l.Charge(ctx, store.Charge{TeamID: "t", Credits: 1}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Charge: %v, want ErrUnavailable", err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if err := l.Check(canceled, "t", 1); !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable) {
		t.Errorf("Check with canceled ctx: %v, want context.Canceled, not ErrUnavailable", err)
	}
}

func TestBatchedUsageOfUnlimitedTeams(t *testing.T) {
	t.Parallel()
	st := teststore.SQLite(t)
	ctx := context.Background()
	unl, _ := st.CreateTeam(ctx, "unlimited")
	lim, _ := st.CreateTeam(ctx, "limited")
	st.SetCredits(ctx, lim.ID, 100)
	l := NewLedger(st, testenv.Logger(t))
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { l.Run(rctx, time.Hour); close(done) }()
	waitBatching(t, l)
	for _, team := range []string{unl.ID, lim.ID} {
		if err := l.Check(ctx, team, 1); err != nil {
			t.Fatal(err)
		}
		for range 10 {
			if _, err := l.Charge(ctx, store.Charge{TeamID: team, Credits: 2, Kind: "scrape", Clamp: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The limited team is debited at once; the unlimited one's usage waits.
	if b, _ := st.CreditBalance(ctx, lim.ID); b.Remaining != 80 {
		t.Errorf("limited balance %d, want 80", b.Remaining)
	}
	if h, _ := l.History(ctx, unl.ID, false); len(h) != 0 {
		t.Errorf("usage written before the flush: %+v", h)
	}
	cancel()
	<-done // Run flushes on the way out
	h, err := l.History(ctx, unl.ID, false)
	if err != nil || len(h) != 1 || h[0].Credits != 20 {
		t.Errorf("usage after flush: %+v %v", h, err)
	}
}

// TestObserveCharges checks the observer sees what was taken: clamped
// amounts, deferred charges of unlimited teams, no failures, no duplicates.
func TestObserveCharges(t *testing.T) {
	t.Parallel()
	st := teststore.SQLite(t)
	ctx := t.Context()
	l := NewLedger(st, testenv.Logger(t))
	var mu sync.Mutex
	got := map[string]int64{}
	l.ObserveCharges(func(kind string, credits int64) {
		mu.Lock()
		defer mu.Unlock()
		got[kind] += credits
	})
	lim := newTeam(t, st, 3)
	unl := newTeam(t, st, -1)
	charges := []store.Charge{
		{TeamID: lim, Credits: 1, Kind: "scrape"},
		{TeamID: lim, Credits: 1, Kind: "map", IdempotencyKey: "k"},
		{TeamID: lim, Credits: 1, Kind: "map", IdempotencyKey: "k"}, // duplicate
		{TeamID: lim, Credits: 5, Kind: "scrape"},                   // insufficient
		{TeamID: lim, Credits: 5, Kind: "scrape", Clamp: true},      // takes the 1 left
		{TeamID: unl, Credits: 4, Kind: "crawl"},
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { l.Run(rctx, time.Hour); close(done) }()
	defer func() { cancel(); <-done }()
	waitBatching(t, l)
	if err := l.Check(ctx, unl, 1); err != nil { // known unlimited: deferred
		t.Fatal(err)
	}
	for _, c := range charges {
		l.Charge(ctx, c)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff(map[string]int64{"scrape": 2, "map": 1, "crawl": 4}, got); diff != "" {
		t.Errorf("observed (-want +got)\n%s", diff)
	}
}

// waitBatching waits until Run, started in a goroutine, has turned batching
// on: charges made before that are written at once.
func waitBatching(t *testing.T, l *Ledger) {
	t.Helper()
	testenv.Eventually(t, 5*time.Second, func() bool {
		l.b.mu.Lock()
		defer l.b.mu.Unlock()
		return l.b.on
	}, "Run did not turn batching on")
}
