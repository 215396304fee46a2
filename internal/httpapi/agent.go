package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/agent"
	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/webhook"
)

// Agents starts, reads and cancels agent runs; *agent.Runner implements it.
type Agents interface {
	Start(ctx context.Context, req agent.StartRequest) error
	Run(ctx context.Context, teamID, id string) (store.AgentRun, error)
	Cancel(ctx context.Context, teamID, id string) error
	List(ctx context.Context, teamID string, before store.AgentCursor, limit int) ([]store.AgentRun, error)
	Trace(ctx context.Context, teamID, id string) (store.AgentRun, []json.RawMessage, error)
	Snapshot(ctx context.Context, teamID, id, snapshotID string) (store.AgentSnapshot, error)
}

// Agent limits and messages (the seed's texts word for word).
const (
	agentMinCredits    = 20 // the credit pre-check of POST /v2/agent
	agentPageSize      = 20
	maxAgentURLs       = 100
	maxAgentMaxCredits = 1_000_000
	agentExpiry        = 24 * time.Hour // expiresAt = creation + 24 h

	msgAgentNotFound    = "Agent job not found"
	msgSnapshotNotFound = "Snapshot not found"
	msgInvalidSnapshot  = "Invalid snapshot ID"
	msgAgentFinished    = "Agent already finished"
	msgAgentCancelled   = "Agent is already cancelled"
	msgAgentPassthrough = "Failed to passthrough agent request."
	msgAgentNoModel     = "Agent runs need a language model, and this server has none configured (OPENAI_BASE_URL, MODEL_NAME)."
)

var (
	errAgentNotFound    = &Error{Status: http.StatusNotFound, Code: "NOT_FOUND", Message: msgAgentNotFound}
	errSnapshotNotFound = &Error{Status: http.StatusNotFound, Code: "NOT_FOUND", Message: msgSnapshotNotFound}
	errInvalidSnapshot  = &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: msgInvalidSnapshot}
	errAgentFinished    = &Error{Status: http.StatusConflict, Code: "CONFLICT", Message: msgAgentFinished}
	errAgentCancelled   = &Error{Status: http.StatusConflict, Code: "CONFLICT", Message: msgAgentCancelled}
	errAgentPassthrough = &Error{Status: http.StatusInternalServerError, Code: "UNKNOWN_ERROR", Message: msgAgentPassthrough}
)

// agentRoutes serves the agent operations.
func (s *Server) agentRoutes(r chi.Router) {
	r.Post("/agent", s.handle(s.handleAgentStart))
	r.Get("/agent", s.handle(s.handleAgentList))
	r.Get("/agent/{id}", s.handle(s.handleAgentStatus))
	r.Delete("/agent/{id}", s.handle(s.handleAgentCancel))
	r.Get("/agent/{id}/trace", s.handle(s.handleAgentTrace))
	r.Get("/agent/{id}/snapshots/{snapshotId}", s.handle(s.handleAgentSnapshot))
}

func isAgentKey(k string) bool {
	switch k {
	case "prompt", "urls", "schema", "maxCredits", "strictConstrainToURLs", "model", "effort", "webhook", "origin",
		"integration", "threatProtection", "auditMetadata", "threadId", "mode", "exchange":
		return true
	}
	return false
}

// agentRequest is a decoded, validated POST /v2/agent body.
type agentRequest struct {
	Model      string
	MaxCredits int64
	Options    agent.Options
}

// decodeAgentRequest reads and validates a POST /v2/agent body.
func decodeAgentRequest(r *http.Request) (agentRequest, error) {
	m, apiErr := readJSONObject(r.Body)
	if apiErr != nil {
		return agentRequest{}, apiErr
	}
	var v validator
	v.checkKeys(nil, m, isAgentKey)
	req := agentRequest{Model: agent.ModelSpark1Pro, MaxCredits: agent.DefaultMaxCredits}
	o := &req.Options
	o.Prompt, _ = v.reqString(nil, m, "prompt", 1, maxPromptChars)
	if p := []any{"urls"}; present(m, "urls") {
		if list, ok := v.stringList(p, m.get("urls"), maxAgentURLs); ok {
			for i, s := range list {
				u, ok := normalizeURL(s)
				if !ok {
					v.addCustom(at(p, i), codeInvalidString, msgInvalidURL)
					continue
				}
				if !slices.Contains(o.URLs, u) {
					o.URLs = append(o.URLs, u)
				}
			}
		}
	}
	o.Schema = v.schema(nil, m)
	if n, ok := v.optInt(nil, m, "maxCredits", 1, maxAgentMaxCredits); ok {
		req.MaxCredits = n
	}
	o.StrictConstrainToURLs = v.optBool(nil, m, "strictConstrainToURLs", false)
	req.Model = v.optEnum(nil, m, "model", agent.ModelSpark1Pro, agent.ModelSpark1Pro, agent.ModelSpark1Mini, agent.ModelSpark2)
	o.Effort = v.optEnum(nil, m, "effort", "", "low", "medium", "high")
	o.Origin, o.Integration = v.bookkeeping(nil, m)
	o.Webhook = v.agentWebhook(m)
	if present(m, "threatProtection") {
		o.ThreatProtection = v.threatProtection([]any{"threatProtection"}, m.get("threatProtection"))
	}
	if present(m, "auditMetadata") {
		o.AuditMetadata = v.auditMetadata([]any{"auditMetadata"}, m.get("auditMetadata"))
	}
	mode := v.optEnum(nil, m, "mode", "extract", "extract", "chat")
	if err := v.err(); err != nil {
		return req, err
	}
	switch {
	case present(m, "threadId"):
		return req, agentUnsupported("threadId", "Agent threads are not supported by this server; start a new run without threadId")
	case present(m, "exchange"):
		return req, agentUnsupported("exchange", "Agent exchange toolkits are not supported by this server")
	case mode == "chat":
		return req, agentUnsupported("mode", "The chat mode is not supported by this server; use mode extract")
	case o.StrictConstrainToURLs && len(o.URLs) == 0:
		return req, &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: "strictConstrainToURLs needs urls",
			Details: []FieldError{{Path: []any{"urls"}, Message: "strictConstrainToURLs needs urls", Code: codeCustom}}}
	}
	if len(o.Schema) > 0 {
		if err := scrape.CheckSchema(o.Schema); err != nil {
			var f *errcode.Failure
			msg := err.Error()
			if errors.As(err, &f) {
				msg = f.Msg
			}
			return req, &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: msg,
				Details: []FieldError{{Path: []any{"schema"}, Message: msg, Code: codeCustom}}}
		}
	}
	return req, nil
}

func agentUnsupported(field, msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "AGENT_OPTION_NOT_SUPPORTED", Message: msg,
		Details: []FieldError{{Path: []any{field}, Message: msg, Code: "not_supported"}}}
}

// agentEvents are the webhook events of an agent run.
var agentEvents = []string{"started", "action", "completed", "failed", "cancelled"}

// agentWebhook reads the optional webhook: a URL string or {url, headers?,
// metadata?, events?} with the agent's events (short or agent.-prefixed).
func (v *validator) agentWebhook(m jsonObject) *webhook.Spec {
	if !present(m, "webhook") {
		return nil
	}
	raw := m.get("webhook")
	var events []string
	if kindOf(raw) == kindObject {
		obj, _ := splitObject(raw)
		if present(obj, "events") {
			p := []any{"webhook", "events"}
			list, ok := v.stringList(p, obj.get("events"), len(agentEvents)*2)
			if !ok {
				return nil
			}
			for i, e := range list {
				short := strings.TrimPrefix(e, "agent.")
				if !slices.Contains(agentEvents, short) {
					v.addCustom(at(p, i), codeCustom, fmt.Sprintf("webhook.events[%d]: unknown event %q: want started, action, completed, failed or cancelled, optionally prefixed with agent.", i, e))
					return nil
				}
				if !slices.Contains(events, e) {
					events = append(events, e)
				}
			}
			var rest bytes.Buffer
			rest.WriteByte('{')
			n := 0
			for _, mem := range obj {
				if mem.key == "events" {
					continue
				}
				if n > 0 {
					rest.WriteByte(',')
				}
				k, _ := json.Marshal(mem.key) // cannot fail: a string
				rest.Write(k)
				rest.WriteByte(':')
				rest.Write(mem.raw)
				n++
			}
			rest.WriteByte('}')
			raw = rest.Bytes()
		}
	}
	spec, err := webhook.ParseSpec(raw)
	if err != nil {
		v.addCustom([]any{"webhook"}, codeCustom, err.Error())
		return nil
	}
	spec.Events = events
	return &spec
}

// agentStartResponse is the body of a started run.
type agentStartResponse struct {
	Success bool   `json:"success"`
	ID      string `json:"id"`
}

// handleAgentStart serves POST /v2/agent.
func (s *Server) handleAgentStart(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeAgentRequest(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	team := teamFrom(ctx)
	if team.Limits.ZeroDataRetentionForced {
		return errZDRNotSupported
	}
	if err := s.checkTargets(req.Options.ThreatProtection, req.Options.URLs...); err != nil {
		return err
	}
	if err := s.rateLimited(ctx, team, limits.ClassAgent); err != nil {
		return err
	}
	target := batchTarget(req.Options.URLs)
	if target == "" {
		target = req.Options.Prompt
	}
	s.recordActivity(r, team, "agent", target, req.Options.AuditMetadata, false)
	if err := s.checkCredits(ctx, team, agentMinCredits); err != nil {
		return err
	}
	id := agent.NewID()
	err = s.agents.Start(ctx, agent.StartRequest{ID: id, TeamID: team.ID, APIKeyID: team.APIKeyID, Model: req.Model,
		MaxCredits: req.MaxCredits, Options: req.Options})
	switch {
	case errors.Is(err, agent.ErrNoModel):
		return &Error{Status: http.StatusBadRequest, Code: "AGENT_LLM_NOT_CONFIGURED", Message: msgAgentNoModel}
	case err != nil:
		s.log.ErrorContext(ctx, "agent start failed", "request_id", requestIDFrom(ctx), "team_id", team.ID, "err", err)
		return errAgentPassthrough
	}
	s.log.InfoContext(ctx, "agent queued", "request_id", requestIDFrom(ctx), "team_id", team.ID, "run_id", id,
		"max_credits", req.MaxCredits, "urls", len(req.Options.URLs))
	writeJSON(w, http.StatusOK, agentStartResponse{Success: true, ID: id})
	return nil
}

// agentRun reads the run named by the path for the caller's team.
func (s *Server) agentRun(r *http.Request) (store.AgentRun, error) {
	ctx := r.Context()
	id := chi.URLParam(r, "id")
	if _, err := uuid.Parse(id); err != nil {
		return store.AgentRun{}, errInvalidJobID
	}
	team := teamFrom(ctx)
	if err := s.rateLimited(ctx, team, limits.ClassStatus); err != nil {
		return store.AgentRun{}, err
	}
	run, err := s.agents.Run(ctx, team.ID, id)
	if errors.Is(err, agent.ErrNotFound) {
		return store.AgentRun{}, errAgentNotFound
	}
	return run, err
}

// agentStatusResponse is GET /v2/agent/{id}.
type agentStatusResponse struct {
	Success     bool            `json:"success"`
	Status      string          `json:"status"`
	Data        json.RawMessage `json:"data,omitempty"`
	Error       string          `json:"error,omitempty"`
	Model       string          `json:"model"`
	Effort      string          `json:"effort,omitempty"`
	ExpiresAt   string          `json:"expiresAt"`
	CreditsUsed int64           `json:"creditsUsed"`
}

// handleAgentStatus serves GET /v2/agent/{id}.
func (s *Server) handleAgentStatus(w http.ResponseWriter, r *http.Request) error {
	run, err := s.agentRun(r)
	if err != nil {
		return err
	}
	opts, _ := agent.RunOptions(run)
	resp := agentStatusResponse{Success: true, Status: agent.ReportedStatus(run.Status), Model: run.Model, Effort: opts.Effort,
		ExpiresAt: run.CreatedAt.Add(agentExpiry).UTC().Format(time.RFC3339Nano), CreditsUsed: run.CreditsUsed}
	switch run.Status {
	case store.AgentCompleted:
		resp.Data = run.Data
	case store.AgentFailed, store.AgentCancelled:
		resp.Error, resp.CreditsUsed = run.Error, 0
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// handleAgentCancel serves DELETE /v2/agent/{id}.
func (s *Server) handleAgentCancel(w http.ResponseWriter, r *http.Request) error {
	run, err := s.agentRun(r)
	if err != nil {
		return err
	}
	switch err := s.agents.Cancel(r.Context(), run.TeamID, run.ID); {
	case errors.Is(err, agent.ErrNotFound):
		return errAgentNotFound
	case errors.Is(err, agent.ErrAlreadyCancelled):
		return errAgentCancelled
	case errors.Is(err, agent.ErrFinished):
		return errAgentFinished
	case err != nil:
		return err
	}
	s.log.InfoContext(r.Context(), "agent cancelled", "request_id", requestIDFrom(r.Context()), "run_id", run.ID)
	writeJSON(w, http.StatusOK, map[string]any{"success": true})
	return nil
}

// handleAgentTrace serves GET /v2/agent/{id}/trace.
func (s *Server) handleAgentTrace(w http.ResponseWriter, r *http.Request) error {
	run, err := s.agentRun(r)
	if err != nil {
		return err
	}
	run, events, err := s.agents.Trace(r.Context(), run.TeamID, run.ID)
	if errors.Is(err, agent.ErrNotFound) {
		return errAgentNotFound
	}
	if err != nil {
		return err
	}
	credits := run.CreditsUsed
	if run.Status == store.AgentFailed || run.Status == store.AgentCancelled {
		credits = 0
	}
	resp := map[string]any{"success": true, "id": run.ID, "events": events, "creditsUsed": credits}
	if r.URL.Query().Get("liveView") == "true" {
		// Runs read pages in process: there is never a browser session to
		// watch.
		resp["activeBrowserSessions"] = []any{}
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// handleAgentSnapshot serves GET /v2/agent/{id}/snapshots/{snapshotId}.
func (s *Server) handleAgentSnapshot(w http.ResponseWriter, r *http.Request) error {
	sid := chi.URLParam(r, "snapshotId")
	if _, err := uuid.Parse(chi.URLParam(r, "id")); err != nil {
		return errInvalidJobID
	}
	if _, err := uuid.Parse(sid); err != nil {
		return errInvalidSnapshot
	}
	run, err := s.agentRun(r)
	if err != nil {
		return err
	}
	sn, err := s.agents.Snapshot(r.Context(), run.TeamID, run.ID, sid)
	switch {
	case errors.Is(err, agent.ErrNotFound):
		return errAgentNotFound
	case errors.Is(err, store.ErrNotFound):
		return errSnapshotNotFound
	case err != nil:
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "id": run.ID, "snapshotId": sn.ID, "snapshot": sn.Content})
	return nil
}

// agentListItem is one run of GET /v2/agent.
type agentListItem struct {
	ID          string           `json:"id"`
	CreatedAt   string           `json:"createdAt"`
	TargetHint  string           `json:"targetHint"`
	Origin      string           `json:"origin"`
	Integration string           `json:"integration,omitempty"`
	Settings    agentSettings    `json:"settings"`
	Status      string           `json:"status"`
	Options     agentListOptions `json:"options"`
}

type agentSettings struct {
	Hidden  bool `json:"hidden"`
	Starred bool `json:"starred"`
}

type agentListOptions struct {
	URLs   []string        `json:"urls,omitempty"`
	Prompt string          `json:"prompt"`
	Schema json.RawMessage `json:"schema,omitempty"`
	Model  string          `json:"model"`
	Effort string          `json:"effort,omitempty"`
}

// parseAgentCursor reads a next link's cursor: unix microseconds, a dot,
// a run id.
func parseAgentCursor(c string) (store.AgentCursor, bool) {
	us, id, ok := strings.Cut(c, ".")
	if !ok {
		return store.AgentCursor{}, false
	}
	n, err := strconv.ParseInt(us, 10, 64)
	if err != nil || n <= 0 {
		return store.AgentCursor{}, false
	}
	u, err := uuid.Parse(id)
	if err != nil || u.String() != id {
		return store.AgentCursor{}, false
	}
	return store.AgentCursor{CreatedAt: time.UnixMicro(n), ID: id}, true
}

// handleAgentList serves GET /v2/agent: the team's runs, newest first, 20
// a page. cursor (what next carries: the last run's creation time in unix
// microseconds and its id) pages on from that run, so runs created in the
// same instant are neither skipped nor repeated; before (unix
// milliseconds) starts the list at a time instead.
func (s *Server) handleAgentList(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	team := teamFrom(ctx)
	if err := s.rateLimited(ctx, team, limits.ClassStatus); err != nil {
		return err
	}
	q := r.URL.Query()
	before := store.AgentCursor{CreatedAt: time.Now().Add(time.Minute)}
	if b := q.Get("before"); b != "" {
		ms, err := strconv.ParseInt(b, 10, 64)
		if err != nil || ms <= 0 || ms > math.MaxInt64/int64(time.Millisecond) {
			return &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: "before must be a unix timestamp in milliseconds",
				Details: []FieldError{{Path: []any{"before"}, Message: "before must be a unix timestamp in milliseconds", Code: codeInvalidType}}}
		}
		before = store.AgentCursor{CreatedAt: time.UnixMilli(ms)}
	}
	if c := q.Get("cursor"); c != "" {
		cur, ok := parseAgentCursor(c)
		if !ok || q.Has("before") {
			msg := "cursor must be the cursor of a next link (and comes without before)"
			return &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: msg,
				Details: []FieldError{{Path: []any{"cursor"}, Message: msg, Code: codeInvalidString}}}
		}
		before = cur
	}
	runs, err := s.agents.List(ctx, team.ID, before, agentPageSize+1)
	if err != nil {
		return err
	}
	more := len(runs) > agentPageSize
	if more {
		runs = runs[:agentPageSize]
	}
	items := make([]agentListItem, 0, len(runs))
	for _, run := range runs {
		opts, _ := agent.RunOptions(run)
		hint := ""
		if len(opts.URLs) > 0 {
			hint = opts.URLs[0]
		}
		origin := opts.Origin
		if origin == "" {
			origin = "api"
		}
		items = append(items, agentListItem{ID: run.ID, CreatedAt: run.CreatedAt.UTC().Format(time.RFC3339Nano), TargetHint: hint,
			Origin: origin, Integration: opts.Integration, Status: agent.ReportedStatus(run.Status),
			Options: agentListOptions{URLs: opts.URLs, Prompt: opts.Prompt, Schema: opts.Schema, Model: run.Model, Effort: opts.Effort}})
	}
	resp := map[string]any{"success": true, "agents": items}
	if more {
		last := runs[len(runs)-1]
		resp["next"] = s.baseURL(r) + "/v2/agent?cursor=" + strconv.FormatInt(last.CreatedAt.UnixMicro(), 10) + "." + last.ID
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}
