package store

import (
	"context"
	"errors"
	"time"
)

// Monitor statuses.
const (
	MonitorActive  = "active"
	MonitorPaused  = "paused"
	MonitorDeleted = "deleted"
)

// Check statuses.
const (
	CheckQueued         = "queued"
	CheckRunning        = "running"
	CheckCompleted      = "completed"
	CheckPartial        = "partial"
	CheckFailed         = "failed"
	CheckSkippedOverlap = "skipped_overlap"
	CheckSkippedCredits = "skipped_no_credits"
)

// Check triggers.
const (
	TriggerScheduled = "scheduled"
	TriggerManual    = "manual"
)

// ErrMonitorPaused is returned by StartCheck when the monitor is not
// active.
var ErrMonitorPaused = errors.New("store: monitor is not active")

// CheckRunningError is returned by StartCheck for a manual check while
// another check of the monitor is queued or running.
type CheckRunningError struct{ CheckID string }

func (e *CheckRunningError) Error() string {
	return "store: monitor check " + e.CheckID + " is still running"
}

// Monitor is a team's scheduled change check. Config is the opaque JSON
// the monitor package needs (targets, webhook, notification, goal); the
// store does not look inside.
type Monitor struct {
	ID            string // UUID minted by the caller
	TeamID        string
	Name          string
	Status        string // MonitorActive, MonitorPaused or MonitorDeleted
	Cron          string // 5-field cron, normalized
	Timezone      string // IANA name
	Config        []byte
	RetentionDays int
	// EstimatedCreditsPerMonth is the caller's estimate, stored as given.
	EstimatedCreditsPerMonth int64
	// NextRunAt is when the next scheduled check is due; nil while paused
	// or deleted.
	NextRunAt      *time.Time
	LastRunAt      *time.Time
	CurrentCheckID string // "" when no check is queued or running
	// LastCheckSummary is the summary JSON of the last finished check; nil
	// before the first.
	LastCheckSummary []byte
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// MonitorCheck is one run of a monitor. Summary and TargetResults are
// opaque JSON.
type MonitorCheck struct {
	ID               string // UUID minted by the caller
	MonitorID        string
	TeamID           string
	Status           string // one of the Check* statuses
	Trigger          string // TriggerScheduled or TriggerManual
	ScheduledFor     *time.Time
	StartedAt        *time.Time
	FinishedAt       *time.Time
	EstimatedCredits int64
	ReservedCredits  *int64
	ActualCredits    *int64
	BillingStatus    string
	Summary          []byte // nil: none yet
	TargetResults    []byte // nil: none yet
	Error            string
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// MonitorPage is the outcome of one URL in one check. Data is opaque JSON
// (metadata, judgment, diff, snapshot).
type MonitorPage struct {
	ID               string // UUID minted by the caller
	CheckID          string
	MonitorID        string
	TargetID         string
	URL              string
	Status           string // same, new, changed, removed or error
	PreviousScrapeID string
	CurrentScrapeID  string
	StatusCode       int // 0: none
	Error            string
	Data             []byte
	CreatedAt        time.Time
}

// CheckStart asks StartCheck for a new check of a monitor.
type CheckStart struct {
	TeamID    string
	MonitorID string
	// Check carries the new check's ID, Trigger, ScheduledFor,
	// EstimatedCredits and CreatedAt (the time of the start).
	Check MonitorCheck
	// DueAt, for a scheduled check, must equal the monitor's NextRunAt:
	// it is the claim that makes one scheduler of many start the check.
	// NextRunAt then replaces the monitor's. Both nil for a manual check.
	DueAt     *time.Time
	NextRunAt *time.Time
}

// MonitorStore keeps monitors, their checks and the checks' pages. All
// methods are safe for concurrent use by many processes.
type MonitorStore interface {
	// CreateMonitor stores m (UpdatedAt = CreatedAt); ErrNotFound if the
	// team does not exist, ErrConflict if the id exists.
	CreateMonitor(ctx context.Context, m Monitor) (Monitor, error)
	// Monitor returns a team's monitor that is not deleted, or ErrNotFound.
	Monitor(ctx context.Context, teamID, id string) (Monitor, error)
	// ListMonitors returns a team's monitors that are not deleted, newest
	// first, skipping offset.
	ListMonitors(ctx context.Context, teamID string, limit, offset int) ([]Monitor, error)
	// UpdateMonitor replaces the name, status, cron, timezone, config,
	// retention, estimate, NextRunAt and UpdatedAt of a team's monitor that
	// is not deleted; ErrNotFound otherwise.
	UpdateMonitor(ctx context.Context, m Monitor) (Monitor, error)
	// DeleteMonitor marks a team's monitor deleted (it is never due
	// again); ErrNotFound if it does not exist or is already deleted.
	DeleteMonitor(ctx context.Context, teamID, id string, now time.Time) error
	// DueMonitors returns up to limit active monitors whose NextRunAt is
	// at or before now, the longest due first.
	DueMonitors(ctx context.Context, now time.Time, limit int) ([]Monitor, error)
	// StartCheck records a new check atomically with the monitor's state.
	// A scheduled start whose DueAt is not the monitor's NextRunAt (another
	// scheduler took the slot) returns ErrConflict and changes nothing. A
	// monitor that is not active gives ErrMonitorPaused. While another
	// check is queued or running a manual start gives *CheckRunningError
	// and a scheduled one records the check as skipped_overlap (finished).
	// Otherwise the check is queued and becomes the monitor's current one.
	StartCheck(ctx context.Context, s CheckStart) (MonitorCheck, error)
	// ClaimCheck moves a queued (or, after a crash, running) check to
	// running and returns it; ok is false, changing nothing, for a check
	// in any other status. ErrNotFound if it does not exist.
	ClaimCheck(ctx context.Context, id string, now time.Time) (c MonitorCheck, ok bool, err error)
	// SaveCheckPage creates or replaces the page of its check, target and
	// URL.
	SaveCheckPage(ctx context.Context, p MonitorPage) error
	// LastPage returns the newest page of a monitor's target and URL from
	// a check other than exceptCheck that has a CurrentScrapeID, or
	// ErrNotFound.
	LastPage(ctx context.Context, monitorID, targetID, url, exceptCheck string) (MonitorPage, error)
	// SetCheckTargetResults replaces a running check's target results (a
	// check records the crawl jobs it started before waiting on them);
	// false when the check is not running.
	SetCheckTargetResults(ctx context.Context, id string, results []byte) (bool, error)
	// FinishCheck records a running check's end: Status, FinishedAt,
	// Summary, TargetResults, ReservedCredits, ActualCredits,
	// BillingStatus and Error of c. The monitor forgets it as its current
	// check and keeps its summary as the last one. false when the check
	// was not running.
	FinishCheck(ctx context.Context, c MonitorCheck) (bool, error)
	// MonitorChecks returns a monitor's checks, newest first, optionally
	// of one status, skipping offset.
	MonitorChecks(ctx context.Context, teamID, monitorID, status string, limit, offset int) ([]MonitorCheck, error)
	// MonitorCheck returns one check of a team's monitor, or ErrNotFound.
	MonitorCheck(ctx context.Context, teamID, monitorID, checkID string) (MonitorCheck, error)
	// CheckPages returns a check's pages in creation order, optionally of
	// one status, skipping skip.
	CheckPages(ctx context.Context, checkID, status string, skip, limit int) ([]MonitorPage, error)
	// QueuedChecks returns the ids of up to limit checks still queued
	// that were created before before, oldest first.
	QueuedChecks(ctx context.Context, before time.Time, limit int) ([]string, error)
	// StaleRunningChecks returns the ids of up to limit running checks not
	// claimed (nor updated) since before, the oldest update first: checks
	// no worker holds, left running by a crash.
	StaleRunningChecks(ctx context.Context, before time.Time, limit int) ([]string, error)
	// DeleteExpiredChecks deletes the finished checks (and pages) older
	// than their monitor's retention, returning how many.
	DeleteExpiredChecks(ctx context.Context, now time.Time) (int, error)
	// PurgeDeletedMonitors removes the monitors marked deleted that have
	// no check queued or running, or were deleted before staleBefore (a
	// check that never finished), with their checks, pages, email
	// recipients and the snapshots their checks compared against (tags
	// "monitor:<id>:..."), returning how many monitors.
	PurgeDeletedMonitors(ctx context.Context, staleBefore time.Time) (int, error)

	// SyncRecipients makes emails (normalized addresses) the recipients
	// of a monitor's email: a new address is added pending; pending and
	// confirmed recipients no longer listed are removed; unsubscribed ones
	// are kept, listed or not, and never asked again. It returns the
	// pending listed recipients whose confirmation was never asked or
	// last asked before askBefore, marked asked at now.
	SyncRecipients(ctx context.Context, monitorID string, emails []string, now, askBefore time.Time) ([]string, error)
	// EarlierConfirmations counts the recipients with this address, across
	// all monitors, whose confirmation was last asked at or after since and
	// before that of the monitor's recipient (0 when it has none).
	EarlierConfirmations(ctx context.Context, monitorID, email string, since time.Time) (int, error)
	// RecipientStatus returns the status of a monitor's recipient, or
	// ErrNotFound.
	RecipientStatus(ctx context.Context, monitorID, email string) (string, error)
	// SetRecipientStatus moves a recipient to RecipientConfirmed or
	// RecipientUnsubscribed; ErrNotFound when the monitor does not list it
	// (or was purged).
	SetRecipientStatus(ctx context.Context, monitorID, email, status string, now time.Time) error
	// ClaimSummary records that the summary of checkID is sent to a
	// recipient at now. It is false, changing nothing, when the recipient
	// is not confirmed, or was sent the summary of another check after
	// notBefore; true again for the same check (a retried send).
	ClaimSummary(ctx context.Context, monitorID, email, checkID string, now, notBefore time.Time) (bool, error)
}

// Email recipient statuses.
const (
	RecipientPending      = "pending"
	RecipientConfirmed    = "confirmed"
	RecipientUnsubscribed = "unsubscribed"
)
