package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/llm"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/search"
	"github.com/firegate/firegate/internal/store"
)

// Bounds of what the tools give the model.
const (
	maxPageChars      = 15000
	defaultSearchHits = 5
	maxSearchHits     = 10
	defaultMapLinks   = 50
	maxMapLinks       = 100
	maxSubagents      = 3
)

// toolDefs are the tools offered to the model: subagents cannot delegate.
func toolDefs(opts *Options, run store.AgentRun) []llm.Tool {
	finishParams := `{"type":"object","properties":{"data":{"description":"The final answer."}},"required":["data"]}`
	if len(opts.Schema) > 0 {
		finishParams = `{"type":"object","properties":{"data":` + string(opts.Schema) + `},"required":["data"]}`
	}
	tools := []llm.Tool{
		{Name: "search", Description: "Search the web. Returns result URLs, titles and descriptions.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer","minimum":1,"maximum":10}},"required":["query"]}`)},
		{Name: "map", Description: "List the URLs of a website, optionally those matching a search term first.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"},"search":{"type":"string"},"limit":{"type":"integer","minimum":1,"maximum":100}},"required":["url"]}`)},
		{Name: "scrape", Description: "Read one web page as markdown.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}`)},
		{Name: "finish", Description: "Give the final answer and end the task. data must follow the required format.",
			Parameters: json.RawMessage(finishParams)},
	}
	if run.ParentID == "" {
		tools = append(tools,
			llm.Tool{Name: "delegate", Description: "Start up to 3 subagents that work in parallel on independent parts of the task. Call await_subagents to get their results.",
				Parameters: json.RawMessage(`{"type":"object","properties":{"tasks":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"object","properties":{"prompt":{"type":"string"},"urls":{"type":"array","items":{"type":"string"}}},"required":["prompt"]}}},"required":["tasks"]}`)},
			llm.Tool{Name: "await_subagents", Description: "Wait until every subagent has finished and get their results.",
				Parameters: json.RawMessage(`{"type":"object","properties":{}}`)})
	}
	return tools
}

func systemPrompt(run store.AgentRun, opts *Options) string {
	var b strings.Builder
	if run.ParentID != "" {
		b.WriteString("You are a subagent doing one part of a larger research task on the web. ")
	} else {
		b.WriteString("You are a research agent that answers a task by gathering information from the web. ")
	}
	b.WriteString("Use the tools: search finds pages, map lists a site's pages, scrape reads a page. " +
		"Read the sources you need, then call finish with the answer in its data argument. Do not invent facts that no page supports.")
	if len(opts.Schema) > 0 {
		b.WriteString("\n\nThe data you give to finish must be valid against this JSON schema:\n")
		b.Write(opts.Schema)
	}
	if len(opts.URLs) > 0 {
		b.WriteString("\n\nStart from these URLs:\n")
		for _, u := range opts.URLs {
			b.WriteString("- " + u + "\n")
		}
		if opts.StrictConstrainToURLs {
			b.WriteString("Stay within these URLs: pages outside them cannot be read.")
		}
	}
	return b.String()
}

func userPrompt(opts *Options) string {
	return "Task:\n" + opts.Prompt
}

// toolOut is the outcome of one tool call.
type toolOut struct {
	content  string // the tool message for the model
	summary  any    // the result as the trace shows it
	failed   bool   // the tool failed (error.occurred)
	artifact bool   // the intermediate result changed (snapshot)
	pending  bool   // no answer yet (await_subagents)
	end      *stepResult
}

func failedTool(msg string) toolOut {
	return toolOut{content: "Error: " + msg, summary: map[string]any{"error": msg}, failed: true}
}

// runTool runs one call.
func (s *step) runTool(ctx context.Context, c llm.ToolCall) toolOut {
	var args map[string]json.RawMessage
	if err := json.Unmarshal([]byte(strings.TrimSpace(orEmpty(c.Arguments))), &args); err != nil {
		return failedTool("the arguments are not a JSON object: " + err.Error())
	}
	tctx, cancel := context.WithTimeout(ctx, s.r.cfg.ToolTimeout)
	defer cancel()
	switch c.Name {
	case "search":
		return s.search(tctx, args)
	case "map":
		return s.mapSite(tctx, args)
	case "scrape":
		return s.scrape(tctx, args)
	case "finish":
		return s.finishTool(ctx, c, args)
	case "delegate":
		if s.run.ParentID == "" {
			return s.delegate(ctx, args)
		}
	case "await_subagents":
		if s.run.ParentID == "" {
			return s.await(ctx, c)
		}
	}
	return failedTool(fmt.Sprintf("unknown tool %q", c.Name))
}

func orEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "{}"
	}
	return s
}

// argString is the string argument key, trimmed; "" when the model left
// it out or gave something else, which each tool refuses as a missing or
// bad argument.
func argString(args map[string]json.RawMessage, key string) string {
	var s string
	if err := json.Unmarshal(args[key], &s); err != nil {
		return ""
	}
	return strings.TrimSpace(s)
}

func argInt(args map[string]json.RawMessage, key string, def, lo, hi int) int {
	var n float64
	if err := json.Unmarshal(args[key], &n); err != nil || n < float64(lo) {
		return def
	}
	return min(int(n), hi)
}

// allowed checks a URL a tool is asked to fetch: absolute http(s) and,
// under strictConstrainToURLs, within the run's URLs.
func (s *step) allowed(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an absolute http or https URL", raw)
	}
	if s.opts.StrictConstrainToURLs && !within(u, s.opts.URLs) {
		return "", fmt.Errorf("%s is outside the URLs this task is constrained to", raw)
	}
	if err := s.threatHop(u); err != nil {
		return "", fmt.Errorf("%s is blocked by threat protection: %w", raw, err)
	}
	return u.String(), nil
}

// threatHop is the run's threat check of one URL: the operator's
// blocklist and the run's threatProtection.
func (s *step) threatHop(u *url.URL) error {
	return s.r.cfg.Threat.Check(u.Hostname(), s.opts.ThreatProtection)
}

// within reports whether u is on the host of one of the seeds and under
// its directory.
func within(u *url.URL, seeds []string) bool {
	host := strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
	for _, raw := range seeds {
		sd, err := url.Parse(raw)
		if err != nil || strings.TrimPrefix(strings.ToLower(sd.Hostname()), "www.") != host {
			continue
		}
		dir := sd.Path
		if i := strings.LastIndexByte(dir, '/'); i >= 0 {
			dir = dir[:i+1]
		} else {
			dir = "/"
		}
		p := u.Path
		if p == "" {
			p = "/"
		}
		if strings.HasPrefix(p, dir) || p+"/" == dir {
			return true
		}
	}
	return false
}

func seedHosts(seeds []string) []string {
	var out []string
	for _, raw := range seeds {
		if u, err := url.Parse(raw); err == nil && u.Hostname() != "" && !slices.Contains(out, u.Hostname()) {
			out = append(out, u.Hostname())
		}
	}
	return out
}

func (s *step) search(ctx context.Context, args map[string]json.RawMessage) toolOut {
	q := argString(args, "query")
	if q == "" {
		return failedTool("query is required")
	}
	if s.r.cfg.Searcher == nil {
		return failedTool("web search is not available on this server; use map and scrape on known URLs")
	}
	query := search.Query{Text: q, Source: search.SourceWeb, Limit: argInt(args, "limit", defaultSearchHits, 1, maxSearchHits)}
	if s.opts.StrictConstrainToURLs {
		query.IncludeDomains = seedHosts(s.opts.URLs)
	}
	res, err := s.r.cfg.Searcher.Search(ctx, query)
	if err != nil {
		return failedTool("search failed: " + s.r.shown(ctx, s.run.ID, err))
	}
	type hit struct {
		URL         string `json:"url"`
		Title       string `json:"title,omitempty"`
		Description string `json:"description,omitempty"`
	}
	hits := []hit{}
	for _, r := range res {
		if _, err := s.allowed(r.URL); err != nil {
			continue
		}
		hits = append(hits, hit{URL: r.URL, Title: r.Title, Description: truncate(r.Description, 300)})
	}
	// 2 credits per 10 results, as a search request is charged.
	s.st.ToolCredits += int64((len(res) + 9) / 10 * 2)
	b, _ := json.Marshal(hits) // cannot fail: structs of strings
	return toolOut{content: string(b), summary: map[string]any{"results": len(hits)}}
}

func (s *step) mapSite(ctx context.Context, args map[string]json.RawMessage) toolOut {
	if s.r.cfg.Mapper == nil {
		return failedTool("map is not available on this server")
	}
	u, err := s.allowed(argString(args, "url"))
	if err != nil {
		return failedTool(err.Error())
	}
	o := crawl.MapOptions{URL: u, Search: argString(args, "search"), Limit: argInt(args, "limit", defaultMapLinks, 1, maxMapLinks),
		Timeout: s.r.cfg.ToolTimeout, CheckHop: s.threatHop}
	if s.opts.StrictConstrainToURLs {
		o.Accept = func(l *url.URL) bool { return within(l, s.opts.URLs) }
	}
	res, err := s.r.cfg.Mapper.Map(ctx, o)
	s.st.ToolCredits++ // 1 credit a map, as a map request is charged
	if err != nil {
		return failedTool("map failed: " + s.r.shown(ctx, s.run.ID, err))
	}
	links := make([]string, 0, len(res.Links))
	for _, l := range res.Links {
		if _, err := s.allowed(l.URL); err == nil {
			links = append(links, l.URL)
		}
	}
	b, _ := json.Marshal(links) // cannot fail: strings
	return toolOut{content: string(b), summary: map[string]any{"links": len(links)}}
}

func (s *step) scrape(ctx context.Context, args map[string]json.RawMessage) toolOut {
	u, err := s.allowed(argString(args, "url"))
	if err != nil {
		return failedTool(err.Error())
	}
	opts := scrape.Options{URL: u, TeamID: s.run.TeamID, Formats: []scrape.Format{{Type: scrape.FormatMarkdown}},
		OnlyMainContent: true, RemoveBase64Images: true, BlockAds: true, Proxy: "auto", StoreInCache: true,
		MaxAge: 2 * 24 * time.Hour, Timeout: min(s.r.cfg.ToolTimeout, 60*time.Second),
		Parsers:  []scrape.Parser{{Type: "pdf", Mode: "auto"}},
		Location: scrape.Location{Country: "US"}, ThreatProtection: s.opts.ThreatProtection, AuditMetadata: s.opts.AuditMetadata,
		Origin: s.opts.Origin, Integration: s.opts.Integration}
	doc, err := s.r.cfg.Scraper.Scrape(ctx, opts)
	if err != nil {
		return failedTool("scrape failed: " + s.r.shown(ctx, s.run.ID, err))
	}
	s.st.ToolCredits += int64(max(doc.Metadata.CreditsUsed, 1))
	if !slices.Contains(s.st.Sources, u) {
		s.st.Sources = append(s.st.Sources, u)
	}
	md := ""
	if doc.Markdown != nil {
		md = *doc.Markdown
	}
	content := fmt.Sprintf("URL: %s\nHTTP status: %d\n\n%s", u, doc.Metadata.StatusCode, truncate(md, maxPageChars))
	return toolOut{content: content, summary: map[string]any{"url": u, "statusCode": doc.Metadata.StatusCode, "chars": len(md)},
		artifact: true}
}

// finishTool checks the final answer against the schema: a valid one ends
// the run completed, an invalid one is sent back with the errors (at most
// maxFinishRejected times).
func (s *step) finishTool(ctx context.Context, c llm.ToolCall, args map[string]json.RawMessage) toolOut {
	data, ok := args["data"]
	if !ok {
		b, _ := json.Marshal(args) // cannot fail: raw values decoded from the call's arguments
		data = b
	}
	verr := validateData(s.opts.Schema, data)
	if verr != nil {
		s.st.FinishRejected++
		if s.st.FinishRejected > maxFinishRejected {
			return toolOut{end: &stepResult{end: ptr(internalFailure(
				"The agent could not produce data matching the schema: " + truncate(verr.Error(), 300)))}}
		}
		return toolOut{content: "Rejected: the data is not valid against the schema: " + verr.Error() +
			"\nCall finish again with corrected data.", summary: map[string]any{"rejected": verr.Error()}, failed: true}
	}
	if s.run.ParentID == "" {
		// Subagents that completed but were never awaited still count.
		if _, err := s.deliverSubagents(ctx, false); err != nil {
			return toolOut{end: &stepResult{retry: err}}
		}
	}
	if s.st.credits() >= s.run.MaxCredits {
		return toolOut{end: ptr(s.creditLimit())}
	}
	s.emit("tool_call.finished", map[string]any{"toolCallId": c.ID, "toolName": c.Name, "result": map[string]any{"accepted": true}})
	s.addSnapshot(string(data), "json", "update", c.ID, 0)
	return toolOut{end: &stepResult{end: &outcome{status: store.AgentCompleted, data: data, credits: s.st.credits()}}}
}

// validateData checks data against schema (any JSON when there is none).
func validateData(schema, data json.RawMessage) error {
	if !json.Valid(data) {
		return fmt.Errorf("data is not valid JSON")
	}
	if len(schema) == 0 {
		return nil
	}
	sc, err := llm.CompileSchema(schema)
	if err != nil {
		return err
	}
	return sc.Validate(data)
}

// delegate starts subagents on parts of the task.
func (s *step) delegate(ctx context.Context, args map[string]json.RawMessage) toolOut {
	var tasks []struct {
		Prompt string   `json:"prompt"`
		URLs   []string `json:"urls"`
	}
	if err := json.Unmarshal(args["tasks"], &tasks); err != nil || len(tasks) == 0 {
		return failedTool("tasks must be an array of {prompt, urls?} objects")
	}
	if len(tasks) > maxSubagents {
		return failedTool(fmt.Sprintf("at most %d subagents at a time", maxSubagents))
	}
	budget := (s.run.MaxCredits - s.st.credits()) / int64(len(tasks))
	if budget < 1 {
		return failedTool("no credits left for subagents")
	}
	var ids []string
	for _, t := range tasks {
		if strings.TrimSpace(t.Prompt) == "" {
			return failedTool("every task needs a prompt")
		}
		urls := t.URLs
		if s.opts.StrictConstrainToURLs {
			urls = slices.DeleteFunc(slices.Clone(urls), func(raw string) bool { _, err := s.allowed(raw); return err != nil })
			if len(urls) == 0 {
				urls = s.opts.URLs
			}
		}
		id := NewID()
		child := StartRequest{ID: id, TeamID: s.run.TeamID, APIKeyID: s.run.APIKeyID, Model: s.run.Model, MaxCredits: budget,
			Options: Options{Prompt: truncate(t.Prompt, 10000), URLs: urls, StrictConstrainToURLs: s.opts.StrictConstrainToURLs,
				ThreatProtection: s.opts.ThreatProtection, AuditMetadata: s.opts.AuditMetadata}}
		if err := s.r.create(context.WithoutCancel(ctx), child, s.run.ID); err != nil {
			return failedTool("could not start a subagent: " + s.r.shown(ctx, s.run.ID, err))
		}
		ids = append(ids, id)
		s.emit("agent.started", map[string]any{"subagentId": id})
	}
	b, _ := json.Marshal(map[string]any{"subagents": ids, // cannot fail: strings
		"note": "They run in parallel. Call await_subagents to get their results."})
	return toolOut{content: string(b), summary: map[string]any{"subagents": ids}}
}

// await answers when every subagent has ended (see deliverSubagents).
func (s *step) await(ctx context.Context, c llm.ToolCall) toolOut {
	s.st.Awaiting = c.ID
	if _, err := s.deliverSubagents(ctx, true); err != nil {
		s.st.Awaiting = ""
		return failedTool("could not read the subagents: " + s.r.shown(ctx, s.run.ID, err))
	}
	// Answered by deliverSubagents, now or in a later step.
	return toolOut{pending: true, summary: map[string]any{"waiting": s.st.Awaiting != ""}}
}

// subagentResult is what the model gets of an ended subagent.
type subagentResult struct {
	ID     string          `json:"id"`
	Status string          `json:"status"`
	Data   json.RawMessage `json:"data,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// deliverSubagents gives the model the results of the subagents that ended
// since the last delivery and adds the credits of the completed ones.
// Awaiting, it answers the pending await_subagents call once every
// subagent has ended (done false while some still run); otherwise new
// results come as a user message.
func (s *step) deliverSubagents(ctx context.Context, awaiting bool) (done bool, err error) {
	kids, err := s.r.cfg.Runs.ChildAgentRuns(ctx, s.run.ID)
	if err != nil {
		return false, err
	}
	var (
		fresh   []subagentResult
		ended   []store.AgentRun
		credits int64
	)
	running := 0
	for _, k := range kids {
		if k.Status == store.AgentProcessing {
			running++
			continue
		}
		if slices.Contains(s.st.Delivered, k.ID) {
			continue
		}
		res := subagentResult{ID: k.ID, Status: ReportedStatus(k.Status), Error: k.Error}
		ended = append(ended, k)
		if k.Status == store.AgentCompleted {
			res.Data = k.Data
			credits += k.CreditsUsed
			if len(k.Data) > 0 && !json.Valid(k.Data) {
				// A stored row that is not JSON (the runner stores only
				// schema-checked data): tell the model, rather than let the
				// marshal below fail and answer it with nothing.
				s.r.cfg.Log.ErrorContext(ctx, "agent: subagent data is not JSON", "run_id", s.run.ID, "subagent_id", k.ID)
				res.Data, res.Error = nil, "The subagent's data could not be read."
			}
		}
		fresh = append(fresh, res)
	}
	if awaiting && running > 0 {
		return false, nil
	}
	if !awaiting && len(fresh) == 0 {
		return true, nil
	}
	// Only now does the state change: a delivery that waits changes
	// nothing.
	s.st.ToolCredits += credits
	for _, f := range fresh {
		s.st.Delivered = append(s.st.Delivered, f.ID)
	}
	for _, k := range ended {
		s.events = append(s.events, s.r.eventBy(s.run, k, "agent.finished", s.r.subagentEnd(ctx, k)))
	}
	if fresh == nil {
		fresh = []subagentResult{}
	}
	// Cannot fail: strings, and data checked to be JSON above.
	b, _ := json.Marshal(map[string]any{"subagents": fresh})
	if awaiting {
		s.st.Messages = append(s.st.Messages, llm.ChatMessage{Role: "tool", ToolCallID: s.st.Awaiting, Content: string(b)})
		s.st.Awaiting = ""
	} else {
		s.st.Messages = append(s.st.Messages, llm.ChatMessage{Role: "user", Content: "Subagent results: " + string(b)})
	}
	return true, nil
}

// subagentEnd is the outcome, duration and error of an ended subagent, as
// its own run.finished event says.
func (r *Runner) subagentEnd(ctx context.Context, k store.AgentRun) map[string]any {
	out := map[string]any{"outcome": "failed", "error": nil, "durationMs": int64(0)}
	if k.FinishedAt != nil {
		out["durationMs"] = k.FinishedAt.Sub(k.CreatedAt).Milliseconds()
	}
	evs, err := r.cfg.Runs.AgentEvents(ctx, k.ID, 0, maxTraceEvents)
	if err != nil {
		return out
	}
	for i := len(evs) - 1; i >= 0; i-- {
		var fin struct {
			Type    string          `json:"type"`
			Outcome string          `json:"outcome"`
			Error   json.RawMessage `json:"error"`
		}
		if json.Unmarshal(evs[i].Body, &fin) == nil && fin.Type == "run.finished" {
			out["outcome"] = fin.Outcome
			if len(fin.Error) > 0 && string(fin.Error) != "null" {
				out["error"] = fin.Error
			}
			break
		}
	}
	return out
}
