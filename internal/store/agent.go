package store

import (
	"context"
	"time"
)

// Agent run statuses, as stored. The API reports AgentCancelled as failed
// (with a cancellation message).
const (
	AgentProcessing = "processing"
	AgentCompleted  = "completed"
	AgentFailed     = "failed"
	AgentCancelled  = "cancelled"
)

// AgentRun is one agent run: its request, its durable progress (the
// conversation state after the last recorded step) and, once finished, its
// outcome.
type AgentRun struct {
	ID       string // UUID minted by the caller (UUIDv7)
	TeamID   string
	APIKeyID string // "" when none
	// ParentID is the run that started this one as a subagent; "" for a
	// run started through the API.
	ParentID string
	Status   string // one of the Agent* statuses; CreateAgentRun stores AgentProcessing
	Model    string
	// Options is the opaque JSON of the request (prompt, urls, schema,
	// webhook, ...); the store does not look inside.
	Options    []byte
	MaxCredits int64
	// State is the opaque JSON of the run's progress after step Step (the
	// conversation so far); nil before the first step.
	State []byte
	Step  int
	// CreditsUsed is what the run has consumed so far (what it is charged
	// when it completes).
	CreditsUsed int64
	Data        []byte // the result, when completed
	Error       string // why the run failed
	CreatedAt   time.Time
	UpdatedAt   time.Time // last recorded step or status change
	ExpiresAt   time.Time // when the run, its trace and snapshots are purged
	FinishedAt  *time.Time
}

// AgentEvent is one trace event of a run. Seq orders a run's events from
// 1 without gaps; Body is the event's JSON object.
type AgentEvent struct {
	Seq       int
	Body      []byte
	CreatedAt time.Time
}

// AgentSnapshot is the intermediate result of a run at one step.
type AgentSnapshot struct {
	ID        string // UUID
	RunID     string
	Content   string
	CreatedAt time.Time
}

// AgentStep is what one step of a run records, all in one transaction.
type AgentStep struct {
	// Step is the step number recorded (the run's Step before plus one).
	Step        int
	State       []byte
	CreditsUsed int64
	// Events get the next sequence numbers, in order; their Seq is ignored.
	Events    [][]byte
	Snapshots []AgentSnapshot
}

// AgentFinish is how a run ends.
type AgentFinish struct {
	Status      string // AgentCompleted, AgentFailed or AgentCancelled
	Data        []byte // for AgentCompleted
	Error       string
	CreditsUsed int64
	// Events are appended after the run's other events, in order.
	Events    [][]byte
	Snapshots []AgentSnapshot
}

// AgentStore keeps agent runs, their trace events and snapshots durably.
// Implementations are safe for concurrent use by many processes.
type AgentStore interface {
	// CreateAgentRun stores a new run in status AgentProcessing;
	// ErrConflict if the id exists, ErrNotFound if the team (or parent)
	// does not exist.
	CreateAgentRun(ctx context.Context, r AgentRun) (AgentRun, error)
	// AgentRun returns a run, or ErrNotFound.
	AgentRun(ctx context.Context, id string) (AgentRun, error)
	// AgentRuns returns up to limit of the team's runs started through the
	// API (no subagents) that come after before in the list's order: newest
	// first, by creation time then id (both descending), so that runs
	// created in the same instant page without a gap or a repeat.
	AgentRuns(ctx context.Context, teamID string, before AgentCursor, limit int) ([]AgentRun, error)
	// ChildAgentRuns returns the subagents of a run, oldest first.
	ChildAgentRuns(ctx context.Context, parentID string) ([]AgentRun, error)
	// RecordAgentStep records step s of a processing run whose Step is
	// s.Step-1, with its events and snapshots; it returns false, changing
	// nothing, when the run is no longer processing or the step was already
	// recorded. ErrNotFound if the run does not exist.
	RecordAgentStep(ctx context.Context, id string, s AgentStep) (bool, error)
	// AppendAgentEvents appends events to a processing run (false, nothing
	// changed, when it is not processing).
	AppendAgentEvents(ctx context.Context, id string, events [][]byte) (bool, error)
	// FinishAgentRun moves a run from one of the from statuses to
	// f.Status, recording its outcome and appending f's events and
	// snapshots; it returns false, changing nothing, when the run is in
	// none of the from statuses. ErrNotFound if it does not exist.
	FinishAgentRun(ctx context.Context, id string, from []string, f AgentFinish) (bool, error)
	// AgentEvents returns up to limit events of a run with Seq > after, in
	// order.
	AgentEvents(ctx context.Context, id string, after, limit int) ([]AgentEvent, error)
	// AgentSnapshot returns a snapshot of a run, or ErrNotFound.
	AgentSnapshot(ctx context.Context, runID, snapshotID string) (AgentSnapshot, error)
	// StaleAgentRuns returns the ids of processing runs whose UpdatedAt is
	// before t, oldest first.
	StaleAgentRuns(ctx context.Context, t time.Time) ([]string, error)
	// DeleteExpiredAgentRuns deletes runs (with their events and
	// snapshots) whose ExpiresAt is before now, returning how many.
	DeleteExpiredAgentRuns(ctx context.Context, now time.Time) (int, error)
}

// AgentTerminal reports whether an agent status is final.
func AgentTerminal(status string) bool {
	return status == AgentCompleted || status == AgentFailed || status == AgentCancelled
}

// AgentCursor is a position in a team's list of agent runs: the runs
// before it were created before CreatedAt, or at CreatedAt (to the
// microsecond, as stored) with an id ordered before ID. An empty ID places
// it before every run created at CreatedAt.
type AgentCursor struct {
	CreatedAt time.Time
	ID        string
}
