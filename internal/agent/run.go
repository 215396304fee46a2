package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/llm"
	"github.com/firegate/firegate/internal/queue"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/webhook"
)

// stepArgs run step Step of a run. Unique by arguments: a step queued
// twice (a retried step queueing its successor again, Reconcile) runs once.
type stepArgs struct {
	Run  string `json:"run"`
	Step int    `json:"step"`
}

func (stepArgs) Kind() string { return "agent_step" }
func (stepArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queue.Pages, MaxAttempts: 4, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

type stepWorker struct {
	river.WorkerDefaults[stepArgs]
	r *Runner
}

// state is a run's progress after a step, kept in store.AgentRun.State.
type state struct {
	Messages []llm.ChatMessage `json:"messages"`
	// Tokens is the model tokens used so far; ToolCredits the credits of
	// the tools (and finished subagents) so far.
	Tokens      int64 `json:"tokens"`
	ToolCredits int64 `json:"toolCredits"`
	// Sources are the URLs scraped so far, in order.
	Sources []string `json:"sources,omitempty"`
	// FinishRejected counts finish calls whose data failed the schema;
	// Idle counts model turns without a tool call.
	FinishRejected int `json:"finishRejected,omitempty"`
	Idle           int `json:"idle,omitempty"`
	// Awaiting is the call id of an await_subagents call whose answer
	// waits for the subagents to end.
	Awaiting string `json:"awaiting,omitempty"`
	// Delivered are the subagents whose results were given to the model.
	Delivered []string `json:"delivered,omitempty"`
}

// credits is what the run has consumed: its tools plus its model tokens
// (15 tokens a credit, rounded up).
func (s *state) credits() int64 {
	return s.ToolCredits + (s.Tokens+14)/15
}

// Limits of one run's conversation.
const (
	maxFinishRejected = 3
	maxIdleTurns      = 3
	maxCallsPerTurn   = 8
)

// Timeout bounds one step: its model call and tools.
func (w *stepWorker) Timeout(*river.Job[stepArgs]) time.Duration { return 5 * time.Minute }

// Work runs one step of a run.
func (w *stepWorker) Work(ctx context.Context, job *river.Job[stepArgs]) error {
	r, a := w.r, job.Args
	run, err := r.cfg.Runs.AgentRun(ctx, a.Run)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if run.Status != store.AgentProcessing {
		return nil
	}
	opts, err := decodeOptions(run.Options)
	if err != nil {
		r.finish(ctx, run, nil, internalFailure("The agent run's options could not be read."), nil)
		return nil
	}
	switch {
	case a.Step <= run.Step:
		// Recorded before (this is a retry after the step's record, or a
		// duplicate): make sure its successor is queued.
		return r.q.Insert(ctx, stepArgs{Run: run.ID, Step: run.Step + 1}, nil)
	case a.Step > run.Step+1:
		return nil
	}
	if job.Attempt >= job.MaxAttempts && queue.LastAttemptDied(job.JobRow) {
		_, err := r.finish(ctx, run, &opts, internalFailure(fmt.Sprintf(
			"The worker running this agent died on %d of its attempts at step %d; the run was given up.",
			queue.DiedAttempts(job.JobRow), a.Step)), nil)
		return err
	}
	if run.Step >= r.cfg.MaxSteps || r.now().Sub(run.CreatedAt) > r.cfg.MaxRunTime {
		_, err := r.finish(ctx, run, &opts, internalFailure("The agent run did not finish within its step or time limit."), nil)
		return err
	}
	st, err := r.loadState(run, &opts)
	if err != nil {
		_, err := r.finish(ctx, run, &opts, internalFailure("The agent run's state could not be read."), nil)
		return err
	}

	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go r.watchCancel(sctx, stop, run.ID)

	s := &step{r: r, run: run, opts: &opts, st: st, n: a.Step}
	res := s.execute(sctx)
	if ctx.Err() == nil && sctx.Err() != nil {
		// Cancelled (or finished) meanwhile: whoever ended it recorded it.
		return nil
	}
	switch {
	case res.wait:
		return river.JobSnooze(500 * time.Millisecond)
	case res.end != nil:
		_, err := r.finish(ctx, run, &opts, *res.end, s.events, s.snaps...)
		return err
	case res.retry != nil:
		if job.Attempt < job.MaxAttempts && ctx.Err() == nil {
			_, _ = r.cfg.Runs.AppendAgentEvents(ctx, run.ID, [][]byte{r.event(run, "error.occurred",
				map[string]any{"error": newTraceError(codeInternal, r.shownModelError(ctx, run.ID, res.retry), true)})})
			return res.retry
		}
		if ctx.Err() != nil {
			return ctx.Err() // shutting down or timed out: retried
		}
		_, err := r.finish(ctx, run, &opts, internalFailure("The language model kept failing: "+r.shownModelError(ctx, run.ID, res.retry)), s.events)
		return err
	}
	compact(s.st.Messages, maxConversationChars)
	stateJSON, err := json.Marshal(s.st)
	if err != nil {
		return err
	}
	ok, err := r.cfg.Runs.RecordAgentStep(context.WithoutCancel(ctx), run.ID, store.AgentStep{Step: a.Step, State: stateJSON,
		CreditsUsed: s.st.credits(), Events: s.events, Snapshots: s.snaps})
	if err != nil {
		return err
	}
	if !ok {
		return nil
	}
	for _, ev := range s.actions {
		r.notify(ctx, run.ID, opts.Webhook, ev)
	}
	return r.q.Insert(context.WithoutCancel(ctx), stepArgs{Run: run.ID, Step: a.Step + 1}, nil)
}

// watchCancel ends the step's context as soon as the run is no longer
// processing (cancelled, or its parent finished).
func (r *Runner) watchCancel(ctx context.Context, stop context.CancelFunc, id string) {
	t := time.NewTicker(r.cfg.CancelPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		run, err := r.cfg.Runs.AgentRun(pctx, id)
		cancel()
		if errors.Is(err, store.ErrNotFound) || (err == nil && run.Status != store.AgentProcessing) {
			stop()
			return
		}
	}
}

// shownModelError is what a client is shown (a run's error, its trace) of
// err, an error of a step: the language model's, or the store's. A model
// that timed out or whose provider rate limits this server (docs/errors.md's
// known cases) is said so; any other error (which may name the model
// endpoint's address, or the store's) is shown as errcode.Describe shows
// it, an unknown one by the generic message naming an error id under which err
// is logged here.
func (r *Runner) shownModelError(ctx context.Context, runID string, err error) string {
	var status *llm.StatusError
	switch {
	case errors.Is(err, llm.ErrTimeout):
		return "it did not answer in time."
	case errors.As(err, &status) && status.Code == http.StatusTooManyRequests:
		return "its provider is rate limiting this server (HTTP 429 Too Many Requests); retry later."
	}
	return r.shown(ctx, runID, err)
}

// shown is what a client is shown of err as errcode.Describe gives it: a
// known error by its message, any other by the generic message naming an
// error id, under which err is logged here with its full text.
func (r *Runner) shown(ctx context.Context, runID string, err error) string {
	_, msg, id := errcode.Describe(err)
	if id != "" {
		r.cfg.Log.ErrorContext(ctx, "agent: unexpected error", "error_id", id, "run_id", runID, "err", err)
	}
	return msg
}

func internalFailure(msg string) outcome {
	return outcome{status: store.AgentFailed, code: codeInternal, msg: msg}
}

// loadState decodes a run's state, or builds the first one.
func (r *Runner) loadState(run store.AgentRun, opts *Options) (*state, error) {
	if len(run.State) > 0 {
		var st state
		if err := json.Unmarshal(run.State, &st); err != nil {
			return nil, err
		}
		return &st, nil
	}
	return &state{Messages: []llm.ChatMessage{
		{Role: "system", Content: systemPrompt(run, opts)},
		{Role: "user", Content: userPrompt(opts)},
	}}, nil
}

// step is one step in progress.
type step struct {
	r       *Runner
	run     store.AgentRun
	opts    *Options
	st      *state
	n       int
	events  [][]byte
	snaps   []store.AgentSnapshot
	actions []webhook.Event
}

// stepResult says how a step ended: recorded and continued (zero value),
// waiting for subagents, ending the run, or failing in a way a retry may
// fix.
type stepResult struct {
	wait  bool
	end   *outcome
	retry error
}

func (s *step) emit(typ string, fields map[string]any) {
	s.events = append(s.events, s.r.event(s.run, typ, fields))
}

// execute asks the model and runs the tools it calls.
func (s *step) execute(ctx context.Context) stepResult {
	if s.st.Awaiting != "" {
		done, err := s.deliverSubagents(ctx, true)
		if err != nil {
			return stepResult{retry: err}
		}
		if !done {
			return stepResult{wait: true}
		}
	} else if _, err := s.deliverSubagents(ctx, false); err != nil {
		return stepResult{retry: err}
	}
	if s.st.credits() >= s.run.MaxCredits {
		return s.creditLimit()
	}
	resp, err := s.r.cfg.Model.CompleteTools(ctx, llm.ToolRequest{Messages: s.st.Messages, Tools: toolDefs(s.opts, s.run),
		RequireTool: true, Purpose: "agent"})
	if resp != nil {
		s.st.Tokens += resp.Usage.TotalTokens
	}
	switch {
	case errors.Is(err, llm.ErrRefused):
		reason := "The model refused the task."
		if resp != nil && resp.Refusal != "" {
			reason = "The model refused the task: " + truncate(resp.Refusal, 500)
		}
		return stepResult{end: &outcome{status: store.AgentFailed, code: codeRefused, msg: reason}}
	case errors.Is(err, llm.ErrUnavailable), errors.Is(err, llm.ErrTimeout):
		return stepResult{retry: err}
	case err != nil:
		if ctx.Err() != nil {
			return stepResult{retry: ctx.Err()}
		}
		return stepResult{end: ptr(internalFailure("The language model rejected the request: " + s.r.shownModelError(ctx, s.run.ID, err)))}
	}
	if strings.TrimSpace(resp.Content) != "" {
		s.emit("reasoning.summary", map[string]any{"text": truncate(resp.Content, 2000)})
	}
	calls := resp.ToolCalls
	s.st.Messages = append(s.st.Messages, llm.ChatMessage{Role: "assistant", Content: resp.Content, ToolCalls: calls})
	if len(calls) == 0 {
		s.st.Idle++
		if s.st.Idle > maxIdleTurns {
			return stepResult{end: ptr(internalFailure("The model stopped calling tools without giving an answer."))}
		}
		s.st.Messages = append(s.st.Messages, llm.ChatMessage{Role: "user",
			Content: "Continue with the tools. When you have the answer, call finish with it."})
		return s.afterTools()
	}
	for i, c := range calls {
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d_%d", s.n, i)
			calls[i] = c
		}
		if i >= maxCallsPerTurn {
			s.answer(c, "Not run: at most 8 tool calls are run per turn.")
			continue
		}
		if ctx.Err() != nil {
			return stepResult{retry: ctx.Err()}
		}
		if res, done := s.call(ctx, c); done {
			return res
		}
		if s.st.credits() >= s.run.MaxCredits {
			return s.creditLimit()
		}
	}
	return s.afterTools()
}

// maxConversationChars bounds the text of a run's conversation (kept in
// its state and sent to the model each turn): about 60,000 tokens.
const maxConversationChars = 240_000

// elided replaces the content of an old tool result dropped by compact.
const elided = "[older tool result elided to keep the conversation short]"

// compact elides the oldest tool results until the conversation's text is
// within budget (the task and the latest results are kept).
func compact(msgs []llm.ChatMessage, budget int) {
	total := 0
	for _, m := range msgs {
		total += len(m.Content)
	}
	for i := range msgs {
		if total <= budget {
			return
		}
		if msgs[i].Role != "tool" || msgs[i].Content == elided || i >= len(msgs)-2 {
			continue
		}
		total -= len(msgs[i].Content) - len(elided)
		msgs[i].Content = elided
	}
}

// afterTools checks the ceiling once more after the step's work.
func (s *step) afterTools() stepResult {
	if s.st.credits() >= s.run.MaxCredits {
		return s.creditLimit()
	}
	return stepResult{}
}

func (s *step) creditLimit() stepResult {
	return stepResult{end: &outcome{status: store.AgentFailed, code: codeCreditLimit, msg: MsgCreditLimit}}
}

// answer adds the tool message answering call c.
func (s *step) answer(c llm.ToolCall, content string) {
	s.st.Messages = append(s.st.Messages, llm.ChatMessage{Role: "tool", ToolCallID: c.ID, Content: content})
}

// call runs one tool call; done ends the step with res.
func (s *step) call(ctx context.Context, c llm.ToolCall) (res stepResult, done bool) {
	var input any
	if json.Valid([]byte(c.Arguments)) {
		input = json.RawMessage(c.Arguments)
	} else {
		input = c.Arguments
	}
	s.emit("tool_call.started", map[string]any{"toolCallId": c.ID, "toolName": c.Name, "parameters": input})
	before := s.st.credits()
	out := s.runTool(ctx, c)
	if out.end != nil {
		return *out.end, true
	}
	if !out.pending {
		s.answer(c, out.content)
	}
	s.emit("tool_call.finished", map[string]any{"toolCallId": c.ID, "toolName": c.Name, "result": out.summary})
	if out.failed {
		s.emit("error.occurred", map[string]any{"error": &traceError{Code: codeInternal, Source: "tool", Retryable: true,
			Message: truncate(out.content, 500)}})
	}
	if out.artifact {
		s.snapshot(c.ID, "update")
	}
	s.actions = append(s.actions, webhook.Event{Type: "agent.action", JobID: s.run.ID, Success: true,
		Data: []any{map[string]any{"creditsUsed": s.st.credits() - before, "action": c.Name, "input": input}}})
	return stepResult{}, false
}

// snapshot records the run's intermediate result (the sources read so far
// and the model's latest notes) and its artifact.updated event.
func (s *step) snapshot(callID, change string) {
	notes := ""
	for i := len(s.st.Messages) - 1; i >= 0; i-- {
		if m := s.st.Messages[i]; m.Role == "assistant" && strings.TrimSpace(m.Content) != "" {
			notes = m.Content
			break
		}
	}
	// Cannot fail: an int, strings and a string slice.
	b, _ := json.Marshal(map[string]any{"step": s.n, "sources": nonNil(s.st.Sources), "notes": notes})
	s.addSnapshot(string(b), "json", change, callID, len(s.st.Sources))
}

func (s *step) addSnapshot(content, kind, change, callID string, items int) string {
	id := uuid.NewString()
	s.snaps = append(s.snaps, store.AgentSnapshot{ID: id, RunID: s.run.ID, Content: content})
	art := map[string]any{"kind": kind, "artifactId": "result", "snapshotId": id, "change": change, "itemCount": items}
	if callID != "" {
		art["sourceToolCallId"] = callID
	}
	s.emit("artifact.updated", map[string]any{"artifact": art})
	return id
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func ptr[T any](v T) *T { return &v }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
