package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/store"
)

// chargers is the number of goroutines of the concurrent-charge tests.
const chargers = 200

// mustBalance returns the team's balance or fails the test.
func mustBalance(t *testing.T, s store.Store, teamID string) store.Balance {
	t.Helper()
	b, err := s.CreditBalance(t.Context(), teamID)
	if err != nil {
		t.Fatalf("CreditBalance: %v", err)
	}
	return b
}

// checkBalance fails unless the team's balance is want.
func checkBalance(t *testing.T, s store.Store, teamID string, want store.Balance) {
	t.Helper()
	if diff := cmp.Diff(want, mustBalance(t, s, teamID)); diff != "" {
		t.Errorf("CreditBalance mismatch (-want +got):\n%s", diff)
	}
}

// usedThisMonth sums the team's recorded usage of the current month.
func usedThisMonth(t *testing.T, s store.Store, teamID string) int64 {
	t.Helper()
	from := store.MonthStart(time.Now())
	periods, err := s.CreditUsageByPeriod(t.Context(), teamID, from, from.AddDate(0, 1, 0), false)
	if err != nil {
		t.Fatalf("CreditUsageByPeriod: %v", err)
	}
	var sum int64
	for _, p := range periods {
		sum += p.Credits
	}
	return sum
}

func testCreditsDefaultUnlimited(t *testing.T, s store.Store) {
	ctx := t.Context()
	team := mustTeam(t, s, "free")
	checkBalance(t, s, team.ID, store.Balance{Unlimited: true})
	res, err := s.ChargeCredits(ctx, store.Charge{TeamID: team.ID, Credits: 1_000_000, Kind: "scrape"})
	if err != nil {
		t.Fatalf("ChargeCredits on an unlimited team: %v", err)
	}
	if !res.Balance.Unlimited || res.Usage.Credits != 1_000_000 || res.Duplicate {
		t.Errorf("ChargeCredits = %+v, want unlimited balance and 1000000 credits recorded", res)
	}
	checkBalance(t, s, team.ID, store.Balance{Unlimited: true})
	if got := usedThisMonth(t, s, team.ID); got != 1_000_000 {
		t.Errorf("usage of an unlimited team = %d, want 1000000", got)
	}
}

func testSetAndAddCredits(t *testing.T, s store.Store) {
	ctx := t.Context()
	team := mustTeam(t, s, "paying")
	steps := []struct {
		name string
		call func() (store.Balance, error)
		want store.Balance
	}{
		{"add to unlimited stays unlimited", func() (store.Balance, error) { return s.AddCredits(ctx, team.ID, 5) }, store.Balance{Unlimited: true}},
		{"set", func() (store.Balance, error) { return s.SetCredits(ctx, team.ID, 100) }, store.Balance{Remaining: 100, Plan: 100}},
		{"add", func() (store.Balance, error) { return s.AddCredits(ctx, team.ID, 50) }, store.Balance{Remaining: 150, Plan: 150}},
		{"add zero", func() (store.Balance, error) { return s.AddCredits(ctx, team.ID, 0) }, store.Balance{Remaining: 150, Plan: 150}},
		{"set again resets", func() (store.Balance, error) { return s.SetCredits(ctx, team.ID, 10) }, store.Balance{Remaining: 10, Plan: 10}},
		{"set zero", func() (store.Balance, error) { return s.SetCredits(ctx, team.ID, 0) }, store.Balance{}},
		{"unlimited", func() (store.Balance, error) {
			if err := s.SetUnlimited(ctx, team.ID); err != nil {
				return store.Balance{}, err
			}
			return s.CreditBalance(ctx, team.ID)
		}, store.Balance{Unlimited: true}},
		{"unlimited twice", func() (store.Balance, error) {
			if err := s.SetUnlimited(ctx, team.ID); err != nil {
				return store.Balance{}, err
			}
			return s.CreditBalance(ctx, team.ID)
		}, store.Balance{Unlimited: true}},
	}
	for _, step := range steps {
		got, err := step.call()
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if diff := cmp.Diff(step.want, got); diff != "" {
			t.Errorf("%s: balance mismatch (-want +got):\n%s", step.name, diff)
		}
		checkBalance(t, s, team.ID, step.want)
	}
}

func testCreditsNotFound(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustTeam(t, s, "exists")
	for _, id := range []string{uuid.NewString(), "not-a-uuid", ""} {
		calls := []struct {
			name string
			call func() error
		}{
			{"CreditBalance", func() error { _, err := s.CreditBalance(ctx, id); return err }},
			{"SetCredits", func() error { _, err := s.SetCredits(ctx, id, 1); return err }},
			{"AddCredits", func() error { _, err := s.AddCredits(ctx, id, 1); return err }},
			{"SetUnlimited", func() error { return s.SetUnlimited(ctx, id) }},
			{"ChargeCredits", func() error {
				_, err := s.ChargeCredits(ctx, store.Charge{TeamID: id, Credits: 1, Kind: "scrape"})
				return err
			}},
			{"ChargeCredits zero", func() error {
				_, err := s.ChargeCredits(ctx, store.Charge{TeamID: id, Kind: "scrape"})
				return err
			}},
			{"CreditUsageByPeriod", func() error {
				_, err := s.CreditUsageByPeriod(ctx, id, time.Time{}, time.Now(), false)
				return err
			}},
			{"CreditUsageByDay", func() error {
				_, err := s.CreditUsageByDay(ctx, id, time.Time{}, time.Now())
				return err
			}},
		}
		for _, c := range calls {
			checkErr(t, fmt.Sprintf("%s(%q)", c.name, id), c.call(), store.ErrNotFound)
		}
	}
}

func testNegativeCredits(t *testing.T, s store.Store) {
	ctx := t.Context()
	team := mustTeam(t, s, "t")
	if _, err := s.SetCredits(ctx, team.ID, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetCredits(ctx, team.ID, -1); err == nil {
		t.Error("SetCredits(-1) succeeded")
	}
	if _, err := s.AddCredits(ctx, team.ID, -1); err == nil {
		t.Error("AddCredits(-1) succeeded")
	}
	if _, err := s.ChargeCredits(ctx, store.Charge{TeamID: team.ID, Credits: -1, Kind: "scrape"}); err == nil {
		t.Error("ChargeCredits(-1) succeeded")
	}
	checkBalance(t, s, team.ID, store.Balance{Remaining: 10, Plan: 10})
}

func testChargeCredits(t *testing.T, s store.Store) {
	ctx := t.Context()
	team := mustTeam(t, s, "t")
	if _, err := s.SetCredits(ctx, team.ID, 10); err != nil {
		t.Fatal(err)
	}
	res, err := s.ChargeCredits(ctx, store.Charge{TeamID: team.ID, Credits: 3, Kind: "scrape"})
	if err != nil {
		t.Fatalf("ChargeCredits: %v", err)
	}
	if _, err := uuid.Parse(res.Usage.ID); err != nil {
		t.Errorf("usage ID %q is not a UUID", res.Usage.ID)
	}
	checkRecent(t, "usage CreatedAt", res.Usage.CreatedAt)
	want := store.ChargeResult{
		Usage:   store.Usage{ID: res.Usage.ID, TeamID: team.ID, Credits: 3, Kind: "scrape", CreatedAt: res.Usage.CreatedAt},
		Balance: store.Balance{Remaining: 7, Plan: 10},
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("ChargeCredits mismatch (-want +got):\n%s", diff)
	}

	_, err = s.ChargeCredits(ctx, store.Charge{TeamID: team.ID, Credits: 8, Kind: "scrape"})
	checkErr(t, "ChargeCredits over the balance", err, store.ErrInsufficientCredits)
	checkBalance(t, s, team.ID, store.Balance{Remaining: 7, Plan: 10})

	zero, err := s.ChargeCredits(ctx, store.Charge{TeamID: team.ID, Credits: 0, Kind: "scrape"})
	if err != nil {
		t.Fatalf("ChargeCredits(0): %v", err)
	}
	if diff := cmp.Diff(store.ChargeResult{Balance: store.Balance{Remaining: 7, Plan: 10}}, zero); diff != "" {
		t.Errorf("ChargeCredits(0) mismatch (-want +got):\n%s", diff)
	}

	if _, err := s.ChargeCredits(ctx, store.Charge{TeamID: team.ID, Credits: 7, Kind: "crawl"}); err != nil {
		t.Fatalf("ChargeCredits of the whole balance: %v", err)
	}
	checkBalance(t, s, team.ID, store.Balance{Remaining: 0, Plan: 10})
	_, err = s.ChargeCredits(ctx, store.Charge{TeamID: team.ID, Credits: 1, Kind: "scrape"})
	checkErr(t, "ChargeCredits at zero", err, store.ErrInsufficientCredits)
	if got := usedThisMonth(t, s, team.ID); got != 10 {
		t.Errorf("recorded usage = %d, want 10 (failed charges record nothing)", got)
	}
}

func testChargeCreditsClamp(t *testing.T, s store.Store) {
	ctx := t.Context()
	team := mustTeam(t, s, "t")
	if _, err := s.SetCredits(ctx, team.ID, 2); err != nil {
		t.Fatal(err)
	}
	res, err := s.ChargeCredits(ctx, store.Charge{TeamID: team.ID, Credits: 5, Kind: "scrape", Clamp: true})
	if err != nil {
		t.Fatalf("clamped ChargeCredits: %v", err)
	}
	if res.Usage.Credits != 2 || res.Balance != (store.Balance{Remaining: 0, Plan: 2}) {
		t.Errorf("clamped ChargeCredits = %+v, want 2 credits taken and 0 remaining", res)
	}
	res, err = s.ChargeCredits(ctx, store.Charge{TeamID: team.ID, Credits: 5, Kind: "scrape", Clamp: true})
	if err != nil {
		t.Fatalf("clamped ChargeCredits at zero: %v", err)
	}
	if res.Usage.Credits != 0 || res.Balance.Remaining != 0 {
		t.Errorf("clamped ChargeCredits at zero = %+v, want 0 credits taken", res)
	}
	if got := usedThisMonth(t, s, team.ID); got != 2 {
		t.Errorf("recorded usage = %d, want 2", got)
	}
}

func testChargeCreditsIdempotent(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, b := mustTeam(t, s, "a"), mustTeam(t, s, "b")
	for _, team := range []store.Team{a, b} {
		if _, err := s.SetCredits(ctx, team.ID, 10); err != nil {
			t.Fatal(err)
		}
	}
	first, err := s.ChargeCredits(ctx, store.Charge{TeamID: a.ID, Credits: 4, Kind: "scrape", IdempotencyKey: "job-1"})
	if err != nil {
		t.Fatalf("ChargeCredits: %v", err)
	}
	if first.Duplicate || first.Usage.IdempotencyKey != "job-1" {
		t.Errorf("first charge = %+v, want not duplicate, key recorded", first)
	}
	again, err := s.ChargeCredits(ctx, store.Charge{TeamID: a.ID, Credits: 4, Kind: "scrape", IdempotencyKey: "job-1"})
	if err != nil {
		t.Fatalf("repeated ChargeCredits: %v", err)
	}
	want := store.ChargeResult{Usage: first.Usage, Balance: store.Balance{Remaining: 6, Plan: 10}, Duplicate: true}
	if diff := cmp.Diff(want, again); diff != "" {
		t.Errorf("repeated ChargeCredits mismatch (-want +got):\n%s", diff)
	}
	// A duplicate is reported even when the balance could not pay again.
	if _, err := s.ChargeCredits(ctx, store.Charge{TeamID: a.ID, Credits: 6, Kind: "scrape"}); err != nil {
		t.Fatal(err)
	}
	if res, err := s.ChargeCredits(ctx, store.Charge{TeamID: a.ID, Credits: 4, Kind: "scrape", IdempotencyKey: "job-1"}); err != nil || !res.Duplicate {
		t.Errorf("repeated ChargeCredits at zero balance = %+v, %v; want duplicate", res, err)
	}
	// Keys are per team.
	other, err := s.ChargeCredits(ctx, store.Charge{TeamID: b.ID, Credits: 4, Kind: "scrape", IdempotencyKey: "job-1"})
	if err != nil || other.Duplicate {
		t.Errorf("same key on another team = %+v, %v; want a new charge", other, err)
	}
	checkBalance(t, s, b.ID, store.Balance{Remaining: 6, Plan: 10})
}

func testChargeCreditsAPIKey(t *testing.T, s store.Store) {
	ctx := t.Context()
	team := mustTeam(t, s, "t")
	key := mustKey(t, s, team.ID)
	res, err := s.ChargeCredits(ctx, store.Charge{TeamID: team.ID, Credits: 1, Kind: "scrape", APIKeyID: key.ID})
	if err != nil {
		t.Fatalf("ChargeCredits with key: %v", err)
	}
	if res.Usage.APIKeyID != key.ID {
		t.Errorf("usage APIKeyID = %q, want %q", res.Usage.APIKeyID, key.ID)
	}
	for _, id := range []string{uuid.NewString(), "not-a-uuid"} {
		_, err := s.ChargeCredits(ctx, store.Charge{TeamID: team.ID, Credits: 1, Kind: "scrape", APIKeyID: id})
		checkErr(t, fmt.Sprintf("ChargeCredits with key %q", id), err, store.ErrNotFound)
	}
	if got := usedThisMonth(t, s, team.ID); got != 1 {
		t.Errorf("recorded usage = %d, want 1", got)
	}
}

// chargeConcurrently runs n charges of credits each at once and returns how
// many succeeded; errors other than ErrInsufficientCredits fail the test.
func chargeConcurrently(t *testing.T, s store.Store, teamID string, n int, credits int64) int {
	t.Helper()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = s.ChargeCredits(t.Context(), store.Charge{TeamID: teamID, Credits: credits, Kind: "scrape"})
		})
	}
	wg.Wait()
	ok := 0
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, store.ErrInsufficientCredits):
			t.Errorf("charge %d: %v", i, err)
		}
	}
	return ok
}

func testConcurrentCharges(t *testing.T, s store.Store) {
	team := mustTeam(t, s, "busy")
	if _, err := s.SetCredits(t.Context(), team.ID, 1000); err != nil {
		t.Fatal(err)
	}
	if ok := chargeConcurrently(t, s, team.ID, chargers, 3); ok != chargers {
		t.Errorf("%d of %d charges succeeded, want all", ok, chargers)
	}
	checkBalance(t, s, team.ID, store.Balance{Remaining: 1000 - 3*chargers, Plan: 1000})
	if got := usedThisMonth(t, s, team.ID); got != 3*chargers {
		t.Errorf("recorded usage = %d, want %d", got, 3*chargers)
	}
}

func testConcurrentChargesRunOut(t *testing.T, s store.Store) {
	team := mustTeam(t, s, "short")
	const credits = chargers / 2
	if _, err := s.SetCredits(t.Context(), team.ID, credits); err != nil {
		t.Fatal(err)
	}
	if ok := chargeConcurrently(t, s, team.ID, chargers, 1); ok != credits {
		t.Errorf("%d of %d charges succeeded with %d credits, want %d", ok, chargers, credits, credits)
	}
	checkBalance(t, s, team.ID, store.Balance{Remaining: 0, Plan: credits})
	if got := usedThisMonth(t, s, team.ID); got != credits {
		t.Errorf("recorded usage = %d, want %d", got, credits)
	}
}

func testConcurrentIdempotentCharges(t *testing.T, s store.Store) {
	ctx := t.Context()
	team := mustTeam(t, s, "dup")
	if _, err := s.SetCredits(ctx, team.ID, 100); err != nil {
		t.Fatal(err)
	}
	results := make([]store.ChargeResult, concurrency)
	errs := make([]error, concurrency)
	var wg sync.WaitGroup
	for i := range concurrency {
		wg.Go(func() {
			results[i], errs[i] = s.ChargeCredits(ctx, store.Charge{TeamID: team.ID, Credits: 5, Kind: "scrape", IdempotencyKey: "same"})
		})
	}
	wg.Wait()
	fresh := 0
	for i, err := range errs {
		if err != nil {
			t.Errorf("charge %d: %v", i, err)
			continue
		}
		if !results[i].Duplicate {
			fresh++
		}
		if results[i].Usage.ID != results[0].Usage.ID {
			t.Errorf("charge %d recorded usage %s, charge 0 %s; want one usage", i, results[i].Usage.ID, results[0].Usage.ID)
		}
	}
	if fresh != 1 {
		t.Errorf("%d charges with one idempotency key were not duplicates, want 1", fresh)
	}
	checkBalance(t, s, team.ID, store.Balance{Remaining: 95, Plan: 100})
}

func testCreditUsageByPeriod(t *testing.T, s store.Store) {
	ctx := t.Context()
	team, other := mustTeam(t, s, "t"), mustTeam(t, s, "other")
	k1, k2 := mustKey(t, s, team.ID), mustKey(t, s, team.ID)
	charges := []store.Charge{
		{TeamID: team.ID, Credits: 1, Kind: "scrape"},
		{TeamID: team.ID, Credits: 2, Kind: "scrape", APIKeyID: k1.ID},
		{TeamID: team.ID, Credits: 4, Kind: "crawl", APIKeyID: k1.ID},
		{TeamID: team.ID, Credits: 8, Kind: "scrape", APIKeyID: k2.ID},
		{TeamID: other.ID, Credits: 100, Kind: "scrape"},
	}
	for _, c := range charges {
		if _, err := s.ChargeCredits(ctx, c); err != nil {
			t.Fatalf("ChargeCredits(%+v): %v", c, err)
		}
	}
	start := store.MonthStart(time.Now())
	end := start.AddDate(0, 1, 0)
	byKey := []store.UsagePeriod{
		{Start: start, End: end, APIKeyID: "", Credits: 1},
		{Start: start, End: end, APIKeyID: k1.ID, Credits: 6},
		{Start: start, End: end, APIKeyID: k2.ID, Credits: 8},
	}
	if k2.ID < k1.ID {
		byKey[1], byKey[2] = byKey[2], byKey[1]
	}
	tests := []struct {
		name     string
		from, to time.Time
		byAPIKey bool
		want     []store.UsagePeriod
	}{
		{"this month", start, end, false, []store.UsagePeriod{{Start: start, End: end, Credits: 15}}},
		{"by key", start, end, true, byKey},
		{"all time", time.Time{}, time.Now().Add(time.Hour), false, []store.UsagePeriod{{Start: start, End: end, Credits: 15}}},
		{"before", start.AddDate(-1, 0, 0), start, false, nil},
		{"after", end, end.AddDate(1, 0, 0), false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.CreditUsageByPeriod(ctx, team.ID, tt.from, tt.to, tt.byAPIKey)
			if err != nil {
				t.Fatalf("CreditUsageByPeriod: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("CreditUsageByPeriod mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func testCreditUsageByDay(t *testing.T, s store.Store) {
	ctx := t.Context()
	team, other := mustTeam(t, s, "t"), mustTeam(t, s, "other")
	key := mustKey(t, s, team.ID)
	before := time.Now().UTC().Truncate(24 * time.Hour)
	for _, c := range []store.Charge{
		{TeamID: team.ID, Credits: 1, Kind: "scrape"},
		{TeamID: team.ID, Credits: 2, Kind: "scrape", APIKeyID: key.ID},
		{TeamID: team.ID, Credits: 4, Kind: "crawl"},
		{TeamID: other.ID, Credits: 100, Kind: "scrape"},
	} {
		if _, err := s.ChargeCredits(ctx, c); err != nil {
			t.Fatalf("ChargeCredits(%+v): %v", c, err)
		}
	}
	after := time.Now().UTC().Truncate(24 * time.Hour)
	got, err := s.CreditUsageByDay(ctx, team.ID, before.AddDate(0, 0, -30), after.AddDate(0, 0, 1))
	if err != nil {
		t.Fatalf("CreditUsageByDay: %v", err)
	}
	if before.Equal(after) {
		want := []store.UsagePeriod{{Start: before, End: before.AddDate(0, 0, 1), Credits: 7}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("CreditUsageByDay mismatch (-want +got):\n%s", diff)
		}
	} else { // the charges straddled midnight: two days, 7 credits in all
		var sum int64
		for _, p := range got {
			sum += p.Credits
			if !p.End.Equal(p.Start.AddDate(0, 0, 1)) || !p.Start.Equal(p.Start.Truncate(24*time.Hour)) {
				t.Errorf("period %v..%v is not one UTC day", p.Start, p.End)
			}
		}
		if sum != 7 {
			t.Errorf("CreditUsageByDay sums to %d credits, want 7: %+v", sum, got)
		}
	}
	for _, w := range []struct {
		name     string
		from, to time.Time
	}{
		{"before", before.AddDate(0, 0, -30), before},
		{"after", after.AddDate(0, 0, 1), after.AddDate(0, 0, 30)},
	} {
		got, err := s.CreditUsageByDay(ctx, team.ID, w.from, w.to)
		if err != nil || len(got) != 0 {
			t.Errorf("%s: CreditUsageByDay = %+v, %v; want none", w.name, got, err)
		}
	}
}
