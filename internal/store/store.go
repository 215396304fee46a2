// Package store owns the durable tables (teams, API keys, ...) and all SQL.
// Two implementations satisfy Store: Postgres (package store/postgres) and the
// embedded SQLite file (package store/sqlite); both pass storetest.Run.
package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrNotFound is returned when a looked-up row does not exist.
var ErrNotFound = errors.New("store: not found")

// ErrConflict is returned when a unique constraint would be violated.
var ErrConflict = errors.New("store: conflict")

// ErrInsufficientCredits is returned by ChargeCredits when a limited team's
// remaining balance is below the charge (and the charge may not be clamped).
var ErrInsufficientCredits = errors.New("store: insufficient credits")

// Team owns API keys; every operation is scoped to one team.
type Team struct {
	ID        string // UUID
	Name      string // unique
	CreatedAt time.Time
}

// APIKey is a stored key. The key itself is never stored, only its hash.
type APIKey struct {
	ID        string // UUID
	TeamID    string
	Hash      []byte // SHA-256 of the key
	Prefix    string // first characters of the key, for display
	CreatedAt time.Time
	RevokedAt *time.Time
}

// Store is the durable store. Implementations are safe for concurrent use.
type Store interface {
	// CreateTeam creates a team; ErrConflict if the name exists.
	CreateTeam(ctx context.Context, name string) (Team, error)
	// EnsureTeam creates the team of that id and name unless a team of
	// that id exists (nothing else about it is changed); ErrConflict if
	// another team has the name.
	EnsureTeam(ctx context.Context, id, name string) error
	// TeamByName returns the team of that name or ErrNotFound.
	TeamByName(ctx context.Context, name string) (Team, error)
	// TeamByID returns the team or ErrNotFound.
	TeamByID(ctx context.Context, id string) (Team, error)
	// ListTeams returns every team, by name.
	ListTeams(ctx context.Context) ([]Team, error)
	// CreateAPIKey stores a key hash for a team; ErrConflict if the hash exists
	// (even revoked), ErrNotFound if the team does not exist.
	CreateAPIKey(ctx context.Context, teamID string, hash []byte, prefix string) (APIKey, error)
	// APIKeyByHash returns the active (not revoked) key with that hash and its
	// team, or ErrNotFound.
	APIKeyByHash(ctx context.Context, hash []byte) (APIKey, Team, error)
	// RevokeAPIKey marks a key revoked; ErrNotFound if unknown. Revoking a
	// revoked key succeeds and keeps the first revocation time.
	RevokeAPIKey(ctx context.Context, id string) error
	// ListAPIKeys lists a team's keys, revoked ones included, newest first;
	// ErrNotFound if the team does not exist.
	ListAPIKeys(ctx context.Context, teamID string) ([]APIKey, error)
	// CountAPIKeys counts active keys of all teams.
	CountAPIKeys(ctx context.Context) (int, error)

	// CreditBalance returns a team's balance; ErrNotFound if the team does
	// not exist. A team is unlimited until SetCredits is called for it.
	CreditBalance(ctx context.Context, teamID string) (Balance, error)
	// SetCredits makes the team limited with exactly credits remaining and
	// plan credits; ErrNotFound if the team does not exist.
	SetCredits(ctx context.Context, teamID string, credits int64) (Balance, error)
	// AddCredits adds credits (>= 0) to a limited team's remaining and plan
	// credits; an unlimited team stays unlimited. ErrNotFound if the team
	// does not exist.
	AddCredits(ctx context.Context, teamID string, credits int64) (Balance, error)
	// SetUnlimited removes a team's limit; ErrNotFound if the team does not
	// exist.
	SetUnlimited(ctx context.Context, teamID string) error
	// ChargeCredits atomically checks and decrements a limited team's
	// balance (never below zero) and records the usage in the same
	// transaction; concurrent charges never lose an update. Unlimited teams
	// are charged nothing but their usage is recorded. When the balance is
	// short it returns ErrInsufficientCredits and changes nothing, unless
	// c.Clamp is set, in which case it takes what remains. A charge whose
	// IdempotencyKey the team already used changes nothing and returns the
	// first usage with Duplicate set. ErrNotFound if the team does not exist.
	ChargeCredits(ctx context.Context, c Charge) (ChargeResult, error)
	// CreditUsageByPeriod sums a team's recorded usage per calendar month
	// (UTC) whose start lies in [from, to), ascending; with byAPIKey the sums
	// are also split by API key (ascending key id, "" first). Months without
	// usage are omitted. ErrNotFound if the team does not exist.
	CreditUsageByPeriod(ctx context.Context, teamID string, from, to time.Time, byAPIKey bool) ([]UsagePeriod, error)
	// CreditUsageByDay sums a team's recorded usage per calendar day (UTC)
	// whose start lies in [from, to), ascending; days without usage are
	// omitted. ErrNotFound if the team does not exist.
	CreditUsageByDay(ctx context.Context, teamID string, from, to time.Time) ([]UsagePeriod, error)

	// TeamLimits returns a team's limit overrides (the zero value when none
	// were set); ErrNotFound if the team does not exist.
	TeamLimits(ctx context.Context, teamID string) (TeamLimits, error)
	// SetTeamLimits replaces a team's limit overrides; ErrNotFound if the
	// team does not exist.
	SetTeamLimits(ctx context.Context, teamID string, l TeamLimits) error

	// ProfileState returns the saved state of a team's browser profile, or
	// ErrNotFound.
	ProfileState(ctx context.Context, teamID, name string) ([]byte, error)
	// SaveProfileState creates or replaces a team's browser profile state;
	// ErrNotFound if the team does not exist. The name must pass
	// CheckProfileName.
	SaveProfileState(ctx context.Context, teamID, name string, state []byte) error

	// PreviousScrape returns the last saved scrape of a URL for a team
	// and change-tracking tag ("" for none), or ErrNotFound.
	PreviousScrape(ctx context.Context, teamID, url, tag string) (ScrapeSnapshot, error)
	// SaveScrape creates or replaces the saved scrape of its team, URL and
	// tag; ErrNotFound if the team does not exist.
	SaveScrape(ctx context.Context, s ScrapeSnapshot) error
	// Ping checks the store is reachable.
	Ping(ctx context.Context) error
	// Close releases the store's resources.
	Close() error
}

// Balance is a team's credit balance.
type Balance struct {
	Unlimited bool  // no limit: Remaining and Plan are 0 and meaningless
	Remaining int64 // credits left, never negative
	Plan      int64 // credits granted: the last SetCredits plus later AddCredits
}

// Charge is one debit of a team's credits.
type Charge struct {
	TeamID  string
	Credits int64 // >= 0; 0 records nothing
	// Kind says what was charged for: "scrape", "crawl", "map", ...
	Kind string
	// APIKeyID, optional, is the key the work was done with, for usage
	// reports by key.
	APIKeyID string
	// IdempotencyKey, optional, makes a repeated charge a no-op: a team's
	// second charge with the same key charges nothing.
	IdempotencyKey string
	// Clamp takes whatever remains when the balance is short, instead of
	// failing: for charging after the work was already done.
	Clamp bool
}

// ChargeResult is the outcome of ChargeCredits.
type ChargeResult struct {
	// Usage is the recorded usage row; on a Duplicate the first charge's.
	// Its Credits is what was actually taken (less than asked when clamped).
	// Zero when nothing was recorded (a charge of 0 credits).
	Usage Usage
	// Balance is the team's balance after the charge.
	Balance Balance
	// Duplicate reports that the idempotency key was already used.
	Duplicate bool
}

// Usage is one recorded charge.
type Usage struct {
	ID             string // UUID
	TeamID         string
	APIKeyID       string // "" when none
	Credits        int64
	Kind           string
	IdempotencyKey string // "" when none
	CreatedAt      time.Time
}

// UsagePeriod is the credits used in one period [Start, End): a billing
// period (a calendar month in UTC), or a day (UTC) for CreditUsageByDay.
type UsagePeriod struct {
	Start, End time.Time
	APIKeyID   string // only when grouped by key; "" for usage without one
	Credits    int64
}

// MonthStart returns the start of the calendar month (UTC) holding t: the
// billing period start.
func MonthStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// TeamLimits are a team's overrides of the server's default limits.
type TeamLimits struct {
	// ConcurrencyLimit is the team's number of concurrent scrapes; nil
	// uses the server default, 0 means unlimited.
	ConcurrencyLimit *int
	// RateMultiplier multiplies the base per-minute rate limits; nil uses
	// the server default, 0 means unlimited.
	RateMultiplier *int
	// ZeroDataRetention allows the team to request zero data retention.
	ZeroDataRetention bool
	// ZeroDataRetentionForced runs every request of the team with zero
	// data retention, asked for or not (it implies ZeroDataRetention).
	ZeroDataRetentionForced bool
	// Catalog enables catalog calls and domainTools for the team.
	Catalog bool
	// ThirdPartyTerms records that the team accepted the third-party data
	// terms, which calls to operator tools of the catalog need.
	ThirdPartyTerms bool
}

// MaxProfileNameLen is the longest browser profile name, in characters.
const MaxProfileNameLen = 128

// CheckProfileName reports whether name can name a browser profile: valid
// UTF-8 without NUL bytes, 1 to MaxProfileNameLen characters.
func CheckProfileName(name string) error {
	switch n := utf8.RuneCountInString(name); {
	case n == 0:
		return errors.New("empty profile name")
	case n > MaxProfileNameLen:
		return fmt.Errorf("profile name longer than %d characters", MaxProfileNameLen)
	case !utf8.ValidString(name) || strings.ContainsRune(name, 0):
		return errors.New("profile name is not valid UTF-8 text")
	}
	return nil
}

// ScrapeSnapshot is what change tracking keeps of a team's last scrape of
// a URL under a tag: its markdown and, for the json mode, its extracted
// object.
type ScrapeSnapshot struct {
	TeamID    string
	URL       string // normalized by the caller
	Tag       string // "" when the request had none
	Markdown  string
	JSON      []byte // nil when none was extracted
	ScrapedAt time.Time
}
