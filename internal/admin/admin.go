// Package admin makes the operator's changes to teams (creating teams and
// keys, revoking keys, credits, limits) and reads them back; the server's
// sub-commands and its /admin routes both go through it, and every change
// is recorded in the team's activity.
package admin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/apikey"
	"github.com/firegate/firegate/internal/store"
)

// Endpoint is the activity endpoint of the operator's changes.
const Endpoint = "admin"

// MaxTeamName is the longest team name, in bytes.
const MaxTeamName = 200

// ErrBadName is returned for an empty or overlong team name.
var ErrBadName = errors.New("admin: a team name is 1 to 200 bytes of text")

// Options configures an Admin.
type Options struct {
	Store store.Store
	// Activity records each change in the team's activity; nil records
	// none.
	Activity store.ActivityStore
	// By names who makes the changes in the activity records (its
	// auditMetadata.username): "operator (cli)", "operator (admin api)".
	By  string
	Log *slog.Logger
}

// Admin makes the operator's changes. It is safe for concurrent use.
type Admin struct {
	st       store.Store
	activity store.ActivityStore
	by       string
	log      *slog.Logger
	now      func() time.Time
}

// New returns an Admin over o.Store.
func New(o Options) *Admin {
	return &Admin{st: o.Store, activity: o.Activity, by: o.By, log: o.Log, now: time.Now}
}

// record notes a change of team in its activity; a failure is logged, not
// the change's.
func (a *Admin) record(ctx context.Context, teamID, what string) {
	if a.activity == nil {
		return
	}
	id, err := uuid.NewV7()
	if err == nil {
		err = a.activity.RecordActivity(ctx, store.Activity{ID: id.String(), TeamID: teamID, Endpoint: Endpoint,
			APIVersion: Endpoint, Target: what, Username: a.by, CreatedAt: a.now()})
	}
	if err != nil && a.log != nil {
		a.log.WarnContext(ctx, "admin change not recorded in the activity", "team_id", teamID, "change", what, "err", err)
	}
}

// CheckName reports whether name can name a team.
func CheckName(name string) error {
	if name == "" || len(name) > MaxTeamName {
		return ErrBadName
	}
	return nil
}

// CreateTeam creates a team; store.ErrConflict if the name is taken.
func (a *Admin) CreateTeam(ctx context.Context, name string) (store.Team, error) {
	if err := CheckName(name); err != nil {
		return store.Team{}, err
	}
	t, err := a.st.CreateTeam(ctx, name)
	if err != nil {
		return store.Team{}, fmt.Errorf("create team %q: %w", name, err)
	}
	a.record(ctx, t.ID, "team created: "+name)
	return t, nil
}

// EnsureTeam returns the team of that name, creating it when new.
func (a *Admin) EnsureTeam(ctx context.Context, name string) (store.Team, error) {
	t, err := a.st.TeamByName(ctx, name)
	if err == nil {
		return t, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return store.Team{}, fmt.Errorf("find team %q: %w", name, err)
	}
	t, err = a.CreateTeam(ctx, name)
	if errors.Is(err, store.ErrConflict) { // created meanwhile
		return a.st.TeamByName(ctx, name)
	}
	return t, err
}

// CreateKey makes a new key for the team and returns it: the only time
// the key itself is seen (the store keeps its hash).
func (a *Admin) CreateKey(ctx context.Context, teamID string) (string, store.APIKey, error) {
	key, err := apikey.Generate()
	if err != nil {
		return "", store.APIKey{}, err
	}
	k, err := a.st.CreateAPIKey(ctx, teamID, apikey.Hash(key), apikey.Prefix(key))
	if err != nil {
		return "", store.APIKey{}, fmt.Errorf("create key: %w", err)
	}
	a.record(ctx, teamID, "key created: "+k.Prefix+"…")
	return key, k, nil
}

// RevokeKey revokes the key keyID of the team; store.ErrNotFound when the
// team has no such key. With teamID "" the key's team is looked up.
func (a *Admin) RevokeKey(ctx context.Context, teamID, keyID string) error {
	k, err := a.findKey(ctx, teamID, keyID)
	if err != nil {
		return err
	}
	if err := a.st.RevokeAPIKey(ctx, keyID); err != nil {
		return fmt.Errorf("revoke %s: %w", keyID, err)
	}
	a.record(ctx, k.TeamID, "key revoked: "+k.Prefix+"…")
	return nil
}

// findKey finds the key keyID among the team's keys (any team's when
// teamID is ""); store.ErrNotFound if none has it.
func (a *Admin) findKey(ctx context.Context, teamID, keyID string) (store.APIKey, error) {
	teams := []string{teamID}
	if teamID == "" {
		all, err := a.st.ListTeams(ctx)
		if err != nil {
			return store.APIKey{}, err
		}
		teams = teams[:0]
		for _, t := range all {
			teams = append(teams, t.ID)
		}
	}
	for _, id := range teams {
		keys, err := a.st.ListAPIKeys(ctx, id)
		if err != nil {
			return store.APIKey{}, err
		}
		for _, k := range keys {
			if k.ID == keyID {
				return k, nil
			}
		}
	}
	return store.APIKey{}, fmt.Errorf("key %s: %w", keyID, store.ErrNotFound)
}

// AddCredits adds credits (>= 0) to a limited team's balance.
func (a *Admin) AddCredits(ctx context.Context, teamID string, credits int64) (store.Balance, error) {
	b, err := a.st.AddCredits(ctx, teamID, credits)
	if err != nil {
		return b, err
	}
	a.record(ctx, teamID, "credits added: "+strconv.FormatInt(credits, 10))
	return b, nil
}

// SetCredits makes the team limited with exactly credits remaining.
func (a *Admin) SetCredits(ctx context.Context, teamID string, credits int64) (store.Balance, error) {
	b, err := a.st.SetCredits(ctx, teamID, credits)
	if err != nil {
		return b, err
	}
	a.record(ctx, teamID, "credits set: "+strconv.FormatInt(credits, 10))
	return b, nil
}

// SetUnlimited removes the team's credit limit.
func (a *Admin) SetUnlimited(ctx context.Context, teamID string) error {
	if err := a.st.SetUnlimited(ctx, teamID); err != nil {
		return err
	}
	a.record(ctx, teamID, "credits unlimited")
	return nil
}

// SetLimits replaces the team's limit overrides; forcing zero data
// retention allows it too.
func (a *Admin) SetLimits(ctx context.Context, teamID string, l store.TeamLimits) error {
	l.ZeroDataRetention = l.ZeroDataRetention || l.ZeroDataRetentionForced
	if err := a.st.SetTeamLimits(ctx, teamID, l); err != nil {
		return err
	}
	a.record(ctx, teamID, "limits set: "+describeLimits(l))
	return nil
}

// describeLimits says what l sets, for the activity record.
func describeLimits(l store.TeamLimits) string {
	opt := func(p *int) string {
		if p == nil {
			return "default"
		}
		return strconv.Itoa(*p)
	}
	s := "concurrency " + opt(l.ConcurrencyLimit) + ", rate multiplier " + opt(l.RateMultiplier)
	for _, f := range []struct {
		on   bool
		name string
	}{{l.ZeroDataRetentionForced, "zdr forced"}, {l.ZeroDataRetention && !l.ZeroDataRetentionForced, "zdr"},
		{l.Catalog, "catalog"}, {l.ThirdPartyTerms, "third-party terms"}} {
		if f.on {
			s += ", " + f.name
		}
	}
	return s
}

// TeamInfo is a team with its balance, usage, limits and keys.
type TeamInfo struct {
	Team    store.Team
	Balance store.Balance
	// UsedThisPeriod is the credits used in the current billing period
	// (the calendar month, UTC).
	UsedThisPeriod int64
	Limits         store.TeamLimits
	Keys           []store.APIKey // newest first, revoked ones included
}

// Team returns one team's information; store.ErrNotFound if it does not
// exist.
func (a *Admin) Team(ctx context.Context, teamID string) (TeamInfo, error) {
	t, err := a.st.TeamByID(ctx, teamID)
	if err != nil {
		return TeamInfo{}, err
	}
	return a.info(ctx, t)
}

// Teams returns every team's information, by name.
func (a *Admin) Teams(ctx context.Context) ([]TeamInfo, error) {
	teams, err := a.st.ListTeams(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]TeamInfo, 0, len(teams))
	for _, t := range teams {
		info, err := a.info(ctx, t)
		if errors.Is(err, store.ErrNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}

func (a *Admin) info(ctx context.Context, t store.Team) (TeamInfo, error) {
	info := TeamInfo{Team: t}
	var err error
	if info.Balance, err = a.st.CreditBalance(ctx, t.ID); err != nil {
		return info, err
	}
	if info.Limits, err = a.st.TeamLimits(ctx, t.ID); err != nil {
		return info, err
	}
	if info.Keys, err = a.st.ListAPIKeys(ctx, t.ID); err != nil {
		return info, err
	}
	start := store.MonthStart(a.now())
	periods, err := a.st.CreditUsageByPeriod(ctx, t.ID, start, start.AddDate(0, 1, 0), false)
	if err != nil {
		return info, err
	}
	for _, p := range periods {
		info.UsedThisPeriod += p.Credits
	}
	return info, nil
}
