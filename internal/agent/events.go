package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/firegate/firegate/internal/queue"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/webhook"
)

// Trace error codes (the seed's).
const (
	codeCancelled      = "cancelled"
	codeCreditLimit    = "credit_limit_reached"
	codeParentFinished = "parent_finished"
	codeRefused        = "refused"
	codeInternal       = "internal"
)

// outcome is how a run ends.
type outcome struct {
	status    string // store.Agent*
	code      string // trace error code; "" for success
	msg       string // the run's error message
	retryable bool
	data      []byte // completed runs
	credits   int64  // completed runs
}

// traceError is the structured error of trace events.
type traceError struct {
	Code      string `json:"code"`
	Source    string `json:"source"`
	Retryable bool   `json:"retryable"`
	Message   string `json:"message"`
}

func newTraceError(code, msg string, retryable bool) *traceError {
	src := "system"
	switch code {
	case codeCreditLimit:
		src = "billing"
	case codeRefused:
		src = "agent"
	case codeCancelled:
		src = "agent"
	}
	return &traceError{Code: code, Source: src, Retryable: retryable, Message: msg}
}

// event builds a trace event of run: the common fields (schemaVersion,
// eventId, runId, occurredAt, agent) and fields. producerSequence is the
// event's place in the store, added when the trace is read.
func (r *Runner) event(run store.AgentRun, typ string, fields map[string]any) []byte {
	return r.eventBy(run, run, typ, fields)
}

// eventBy is event in run's trace on behalf of agent who (run itself or
// one of its subagents).
func (r *Runner) eventBy(run, who store.AgentRun, typ string, fields map[string]any) []byte {
	ev := map[string]any{}
	for k, v := range fields {
		ev[k] = v
	}
	role, name := "orchestrator", "orchestrator"
	agentID := map[string]any{"id": who.ID, "role": role, "name": name}
	if who.ParentID != "" {
		agentID["role"], agentID["name"], agentID["parentId"] = "subagent", "subagent", who.ParentID
	}
	ev["schemaVersion"] = 1
	ev["eventId"] = uuid.NewString()
	ev["runId"] = run.ID
	ev["occurredAt"] = r.now().UTC().Format(time.RFC3339Nano)
	ev["type"] = typ
	ev["agent"] = agentID
	b, err := json.Marshal(ev)
	if err != nil {
		// Only values this package builds go in; a failure is a bug.
		panic("agent: encode event: " + err.Error())
	}
	return b
}

// finishEvents are the terminal events of an outcome.
func (r *Runner) finishEvents(run store.AgentRun, o outcome) [][]byte {
	var out [][]byte
	name := "succeeded"
	var te *traceError
	switch o.code {
	case "":
	case codeCancelled:
		out = append(out, r.event(run, "run.cancel_requested", map[string]any{"reason": "user"}))
		name = "cancelled"
	case codeParentFinished:
		name = "cancelled"
	case codeCreditLimit:
		name = "credit_limit_reached"
	case codeRefused:
		name = "refused"
	default:
		name = "failed"
	}
	if o.code != "" {
		te = newTraceError(o.code, o.msg, o.retryable)
	}
	if run.ParentID != "" {
		out = append(out, r.event(run, "agent.finished", map[string]any{"outcome": name,
			"durationMs": r.now().Sub(run.CreatedAt).Milliseconds(), "error": te}))
	}
	return append(out, r.event(run, "run.finished", map[string]any{"outcome": name, "error": te}))
}

// finish ends a processing run with o, appending its terminal events (after
// extra) and snapshots; won reports whether this call ended it. The winner
// charges a completed run, sends the webhook and stops the run's
// subagents with parent_finished.
func (r *Runner) finish(ctx context.Context, run store.AgentRun, opts *Options, o outcome, extra [][]byte, snaps ...store.AgentSnapshot) (bool, error) {
	ctx = context.WithoutCancel(ctx)
	f := store.AgentFinish{Status: o.status, Error: o.msg, Events: append(extra, r.finishEvents(run, o)...), Snapshots: snaps}
	if o.status == store.AgentCompleted {
		f.Data, f.CreditsUsed = o.data, o.credits
	}
	won, err := r.cfg.Runs.FinishAgentRun(ctx, run.ID, []string{store.AgentProcessing}, f)
	if errors.Is(err, store.ErrNotFound) {
		return false, ErrNotFound
	}
	if err != nil || !won {
		return false, err
	}
	r.cfg.Log.InfoContext(ctx, "agent run "+o.status, "run_id", run.ID, "team_id", run.TeamID, "code", o.code,
		"credits", o.credits, "duration_ms", r.now().Sub(run.CreatedAt).Milliseconds())
	if o.status == store.AgentCompleted && r.cfg.Ledger != nil && o.credits > 0 && run.ParentID == "" {
		_, err := r.cfg.Ledger.Charge(ctx, store.Charge{TeamID: run.TeamID, APIKeyID: run.APIKeyID, Credits: o.credits,
			Kind: "agent", IdempotencyKey: "agent:" + run.ID, Clamp: true})
		if err != nil {
			r.cfg.Log.ErrorContext(ctx, "agent: charge failed", "run_id", run.ID, "team_id", run.TeamID, "err", err)
		}
	}
	if opts != nil && run.ParentID == "" {
		switch o.status {
		case store.AgentCompleted:
			r.notify(ctx, run.ID, opts.Webhook, webhook.Event{Type: "agent.completed", JobID: run.ID, Success: true,
				Data: []any{map[string]any{"creditsUsed": o.credits, "data": json.RawMessage(o.data)}}})
		case store.AgentCancelled:
			r.notify(ctx, run.ID, opts.Webhook, webhook.Event{Type: "agent.cancelled", JobID: run.ID,
				Data: []any{map[string]any{"creditsUsed": 0}}})
		default:
			r.notify(ctx, run.ID, opts.Webhook, webhook.Event{Type: "agent.failed", JobID: run.ID, Error: o.msg,
				Data: []any{map[string]any{"creditsUsed": 0}}})
		}
	}
	r.stopChildren(ctx, run.ID)
	return true, nil
}

// stopChildren ends a finished run's processing subagents with
// parent_finished.
func (r *Runner) stopChildren(ctx context.Context, id string) {
	kids, err := r.cfg.Runs.ChildAgentRuns(ctx, id)
	if err != nil {
		r.cfg.Log.ErrorContext(ctx, "agent: list subagents", "run_id", id, "err", err)
		return
	}
	for _, k := range kids {
		if k.Status != store.AgentProcessing {
			continue
		}
		if _, err := r.finish(ctx, k, nil, outcome{status: store.AgentFailed, code: codeParentFinished,
			msg: "The parent agent finished before this subagent."}, nil); err != nil {
			r.cfg.Log.ErrorContext(ctx, "agent: stop subagent", "run_id", k.ID, "err", err)
		}
	}
}

// maxTraceEvents bounds the events one trace read returns.
const maxTraceEvents = 10000

// Trace returns a run's events in order, each with its producerSequence.
func (r *Runner) Trace(ctx context.Context, teamID, id string) (store.AgentRun, []json.RawMessage, error) {
	run, err := r.Run(ctx, teamID, id)
	if err != nil {
		return run, nil, err
	}
	evs, err := r.cfg.Runs.AgentEvents(ctx, id, 0, maxTraceEvents)
	if err != nil {
		return run, nil, err
	}
	out := make([]json.RawMessage, 0, len(evs))
	for _, e := range evs {
		b := bytes.TrimSpace(e.Body)
		if len(b) < 2 || b[0] != '{' {
			continue
		}
		withSeq := strconv.AppendInt([]byte(`{"producerSequence":`), int64(e.Seq), 10)
		if len(b) > 2 {
			withSeq = append(withSeq, ',')
		}
		out = append(out, append(withSeq, b[1:]...))
	}
	return run, out, nil
}

// Snapshot returns a snapshot of a run of team teamID.
func (r *Runner) Snapshot(ctx context.Context, teamID, id, snapshotID string) (store.AgentSnapshot, error) {
	if _, err := r.Run(ctx, teamID, id); err != nil {
		return store.AgentSnapshot{}, err
	}
	return r.cfg.Runs.AgentSnapshot(ctx, id, snapshotID)
}

// List returns up to limit of a team's runs after the cursor before,
// newest first (see store.AgentCursor).
func (r *Runner) List(ctx context.Context, teamID string, before store.AgentCursor, limit int) ([]store.AgentRun, error) {
	return r.cfg.Runs.AgentRuns(ctx, teamID, before, limit)
}

// webhookOwner names the deliveries of agent runs.
type webhookOwner struct{}

func (webhookOwner) Kind() string  { return "agent_webhook" }
func (webhookOwner) IDKey() string { return "run_id" }

// webhookArgs deliver one agent webhook body.
type webhookArgs = webhook.Args[webhookOwner]

// notify queues the delivery of ev when the run has a webhook that wants
// it.
func (r *Runner) notify(ctx context.Context, runID string, spec *webhook.Spec, ev webhook.Event) {
	if r.cfg.Webhooks == nil || r.q == nil {
		return
	}
	err := webhook.Enqueue(ctx, r.q, spec, ev, uuid.NewString(), nil, func(body []byte) webhook.Delivery {
		return webhookArgs{ID: runID, Event: ev.Type, Spec: *spec, Body: body}
	})
	if err != nil {
		r.cfg.Log.ErrorContext(ctx, "agent: queue webhook", "run_id", runID, "event", ev.Type, "err", err)
	}
}

// purgeArgs delete expired runs and repair stranded ones.
type purgeArgs struct{}

func (purgeArgs) Kind() string { return "agent_purge" }
func (purgeArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queue.Control, UniqueOpts: river.UniqueOpts{ByPeriod: 30 * time.Second}}
}

type purgeWorker struct {
	river.WorkerDefaults[purgeArgs]
	r *Runner
}

// Work deletes expired runs and repairs stranded ones.
func (w *purgeWorker) Work(ctx context.Context, _ *river.Job[purgeArgs]) error {
	n, err := w.r.cfg.Runs.DeleteExpiredAgentRuns(ctx, w.r.now())
	if err != nil {
		return err
	}
	if n > 0 {
		w.r.cfg.Log.InfoContext(ctx, "expired agent runs purged", "runs", n)
	}
	return w.r.Reconcile(ctx)
}

// staleAfter is how long a processing run may go without a recorded step
// before Reconcile looks at it.
const staleAfter = 2 * time.Minute

// Reconcile repairs processing runs no step has touched for a while: one
// past its run time fails; another gets its next step queued again (unique
// by its arguments, so a step still queued or running is not doubled).
func (r *Runner) Reconcile(ctx context.Context) error {
	ids, err := r.cfg.Runs.StaleAgentRuns(ctx, r.now().Add(-staleAfter))
	if err != nil {
		return err
	}
	for _, id := range ids {
		run, err := r.cfg.Runs.AgentRun(ctx, id)
		if err != nil || run.Status != store.AgentProcessing {
			continue
		}
		if r.now().Sub(run.CreatedAt) > r.cfg.MaxRunTime+staleAfter {
			opts, _ := decodeOptions(run.Options)
			if _, err := r.finish(ctx, run, &opts, outcome{status: store.AgentFailed, code: codeInternal,
				msg: "The agent run did not finish within its time limit."}, nil); err != nil {
				return err
			}
			continue
		}
		if err := r.q.Insert(ctx, stepArgs{Run: id, Step: run.Step + 1}, nil); err != nil {
			return err
		}
	}
	return nil
}
