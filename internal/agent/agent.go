// Package agent runs agent jobs: a tool-using loop on the configured
// language model (tools search, map, scrape, delegate, await_subagents and
// finish) whose every step is one durable queue job. A step loads the
// run's conversation from the store, asks the model, runs the tools it
// called and records the new conversation, the credits consumed and its
// trace events in one transaction before queueing the next step; a worker
// that dies mid-step leaves the last recorded step, which the step's retry
// starts from. Runs end completed (with data valid against the schema),
// failed (credit ceiling, refusal, internal error) or cancelled (reported
// as failed); only completed runs are charged.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/llm"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/search"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/threat"
	"github.com/firegate/firegate/internal/webhook"
)

// Model is the language model; *llm.Client implements it.
type Model interface {
	CompleteTools(ctx context.Context, req llm.ToolRequest) (*llm.ToolResponse, error)
}

// Scraper scrapes one page; *scrape.Engine implements it.
type Scraper interface {
	Scrape(ctx context.Context, opts scrape.Options) (*scrape.Document, error)
}

// Mapper lists a site's URLs; *crawl.Mapper implements it.
type Mapper interface {
	Map(ctx context.Context, o crawl.MapOptions) (crawl.MapResult, error)
}

// Searcher searches the web; *search.Searcher implements it.
type Searcher interface {
	Search(ctx context.Context, q search.Query) ([]search.Result, error)
}

// Charger charges credits; *billing.Ledger implements it.
type Charger interface {
	Charge(ctx context.Context, c store.Charge) (store.ChargeResult, error)
}

// Enqueuer inserts queue jobs; *queue.Queue implements it.
type Enqueuer interface {
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error
}

// WebhookSender delivers one webhook body; *webhook.Sender implements it.
type WebhookSender interface {
	Send(ctx context.Context, spec webhook.Spec, body []byte) error
}

// Config are the collaborators and settings of a Runner.
type Config struct {
	Runs store.AgentStore
	// Model runs the loop; nil: Start answers ErrNoModel.
	Model    Model
	Scraper  Scraper
	Mapper   Mapper   // nil: the map tool answers that it is unavailable
	Searcher Searcher // nil: the search tool answers that it is unavailable
	// Ledger charges completed runs; nil charges nothing.
	Ledger Charger
	// Webhooks, nil: no webhooks are delivered.
	Webhooks WebhookSender
	// TTL is how long a run, its trace and snapshots are kept; default 24h.
	TTL time.Duration
	// MaxSteps bounds the model turns of one run; default 40.
	MaxSteps int
	// MaxRunTime bounds a run from its creation; default 30 minutes.
	MaxRunTime time.Duration
	// CancelPoll is how often a running step checks for a cancel; default
	// 200ms.
	CancelPoll time.Duration
	// ToolTimeout bounds one tool call; default 90s.
	ToolTimeout time.Duration
	// Threat is the operator's threat blocklist; with a run's
	// threatProtection it is asked about every URL the tools visit: the
	// URLs given to scrape and map, each fetch and redirect hop of a map
	// (blocked links dropped) and the search results (blocked ones
	// dropped). Nil: only the run's own lists.
	Threat *threat.Checker
	Log    *slog.Logger
}

// Runner starts, runs and cancels agent runs on the queue.
type Runner struct {
	cfg Config
	q   Enqueuer
	now func() time.Time
}

// New returns a Runner; Bind must be called before use.
func New(cfg Config) *Runner {
	if cfg.TTL <= 0 {
		cfg.TTL = 24 * time.Hour
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = 40
	}
	if cfg.MaxRunTime <= 0 {
		cfg.MaxRunTime = 30 * time.Minute
	}
	if cfg.CancelPoll <= 0 {
		cfg.CancelPoll = 200 * time.Millisecond
	}
	if cfg.ToolTimeout <= 0 {
		cfg.ToolTimeout = 90 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Runner{cfg: cfg, now: time.Now}
}

// Bind gives the Runner its queue (built after the workers were registered).
func (r *Runner) Bind(q Enqueuer) { r.q = q }

// Register adds the Runner's workers to w.
func (r *Runner) Register(w *river.Workers) {
	river.AddWorker(w, &stepWorker{r: r})
	river.AddWorker(w, webhook.NewWorker[webhookArgs](r.cfg.Webhooks, r.cfg.Log, "agent webhook delivery failed"))
	river.AddWorker(w, &purgeWorker{r: r})
}

// PeriodicJobs are the Runner's scheduled jobs: the purge of expired runs
// and the repair of runs a crash left without a queued step.
func (r *Runner) PeriodicJobs() []*river.PeriodicJob {
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(time.Minute),
		func() (river.JobArgs, *river.InsertOpts) { return purgeArgs{}, nil },
		&river.PeriodicJobOpts{RunOnStart: true})}
}

// Errors of the API operations.
var (
	ErrNotFound         = errors.New("agent: run not found")
	ErrFinished         = errors.New("agent: run already finished")
	ErrAlreadyCancelled = errors.New("agent: run already cancelled")
	ErrNoModel          = errors.New("agent: no language model is configured")
	ErrSubmit           = errors.New("agent: the run could not be queued")
)

// Public model names; every one runs on the configured model.
const (
	ModelSpark1Pro  = "spark-1-pro"
	ModelSpark1Mini = "spark-1-mini"
	ModelSpark2     = "spark-2"
)

// DefaultMaxCredits is the credit ceiling of a run that sets none.
const DefaultMaxCredits = 2500

// Options is a run's request, kept in store.AgentRun.Options.
type Options struct {
	Prompt                string                   `json:"prompt"`
	URLs                  []string                 `json:"urls,omitempty"`
	Schema                json.RawMessage          `json:"schema,omitempty"`
	StrictConstrainToURLs bool                     `json:"strictConstrainToURLs,omitempty"`
	Effort                string                   `json:"effort,omitempty"`
	Origin                string                   `json:"origin,omitempty"`
	Integration           string                   `json:"integration,omitempty"`
	Webhook               *webhook.Spec            `json:"webhook,omitempty"`
	ThreatProtection      *scrape.ThreatProtection `json:"threatProtection,omitempty"`
	AuditMetadata         *scrape.AuditMetadata    `json:"auditMetadata,omitempty"`
}

// StartRequest is a run to start.
type StartRequest struct {
	ID         string // minted by the caller (NewID)
	TeamID     string
	APIKeyID   string
	Model      string // the public model name
	MaxCredits int64
	Options    Options
}

// NewID mints a run id (UUIDv7).
func NewID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}

// Start stores a run, records its run.started event, sends its started
// webhook and queues its first step. ErrNoModel without a model; ErrSubmit
// (the run then failed) when the queue refused it.
func (r *Runner) Start(ctx context.Context, req StartRequest) error {
	if r.cfg.Model == nil {
		return ErrNoModel
	}
	return r.create(ctx, req, "")
}

func (r *Runner) create(ctx context.Context, req StartRequest, parent string) error {
	opts, err := json.Marshal(req.Options)
	if err != nil {
		return fmt.Errorf("agent: encode options: %w", err)
	}
	now := r.now().UTC()
	run, err := r.cfg.Runs.CreateAgentRun(ctx, store.AgentRun{ID: req.ID, TeamID: req.TeamID, APIKeyID: req.APIKeyID,
		ParentID: parent, Model: req.Model, Options: opts, MaxCredits: req.MaxCredits, CreatedAt: now, ExpiresAt: now.Add(r.cfg.TTL)})
	if err != nil {
		return fmt.Errorf("agent: create run: %w", err)
	}
	if _, err := r.cfg.Runs.AppendAgentEvents(ctx, run.ID, [][]byte{r.event(run, "run.started", nil)}); err != nil {
		r.cfg.Log.ErrorContext(ctx, "agent: record run.started", "run_id", run.ID, "err", err)
	}
	r.notify(ctx, run.ID, req.Options.Webhook, webhook.Event{Type: "agent.started", JobID: run.ID, Success: true})
	if err := r.q.Insert(ctx, stepArgs{Run: run.ID, Step: 1}, nil); err != nil {
		r.cfg.Log.ErrorContext(ctx, "agent: queue first step", "run_id", run.ID, "err", err)
		r.finish(context.WithoutCancel(ctx), run, &req.Options, outcome{status: store.AgentFailed, code: codeInternal,
			msg: "The agent run could not be queued."}, nil)
		return ErrSubmit
	}
	r.cfg.Log.InfoContext(ctx, "agent run started", "run_id", run.ID, "team_id", run.TeamID, "parent_id", parent,
		"max_credits", run.MaxCredits, "model", run.Model)
	return nil
}

// Run returns a run of team teamID; ErrNotFound if there is none.
func (r *Runner) Run(ctx context.Context, teamID, id string) (store.AgentRun, error) {
	run, err := r.cfg.Runs.AgentRun(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (run.TeamID != teamID || run.ParentID != "")) {
		return store.AgentRun{}, ErrNotFound
	}
	return run, err
}

// Cancel cancels a processing run of team teamID: ErrNotFound,
// ErrAlreadyCancelled or ErrFinished otherwise. The run reports failed
// with a cancellation message at once; a step in flight stops within
// CancelPoll.
func (r *Runner) Cancel(ctx context.Context, teamID, id string) error {
	run, err := r.Run(ctx, teamID, id)
	if err != nil {
		return err
	}
	opts, _ := decodeOptions(run.Options)
	won, err := r.finish(ctx, run, &opts, outcome{status: store.AgentCancelled, code: codeCancelled, msg: MsgCancelled}, nil)
	if err != nil {
		return err
	}
	if won {
		return nil
	}
	run, err = r.Run(ctx, teamID, id)
	if err != nil {
		return err
	}
	if run.Status == store.AgentCancelled {
		return ErrAlreadyCancelled
	}
	return ErrFinished
}

// Messages of failed runs, as GET /v2/agent/{id} reports them.
const (
	MsgCancelled   = "Agent run was cancelled."
	MsgCreditLimit = "Agent run stopped: it reached its credit limit (maxCredits) before finishing."
)

// decodeOptions reads a run's options.
func decodeOptions(b []byte) (Options, error) {
	var o Options
	if len(b) == 0 {
		return o, nil
	}
	err := json.Unmarshal(b, &o)
	return o, err
}

// ReportedStatus is the status the API shows: cancelled runs report failed.
func ReportedStatus(status string) string {
	if status == store.AgentCancelled {
		return store.AgentFailed
	}
	return status
}

// RunOptions decodes a run's options.
func RunOptions(run store.AgentRun) (Options, error) { return decodeOptions(run.Options) }
