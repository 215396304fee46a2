package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// origin is the bookkeeping origin of the API requests the tools make.
const origin = "mcp"

// tool is one tool and what it does with its arguments.
type tool struct {
	tool *sdk.Tool
	run  func(ctx context.Context, c *call, args map[string]any) *sdk.CallToolResult
}

// call is one tool call in progress.
type call struct {
	s    *Server
	who  caller
	req  *sdk.CallToolRequest
	name string
}

// api sends one request and returns the tool result of a failure, or nil
// and the answer.
func (c *call) api(ctx context.Context, ac apiCall) (apiAnswer, *sdk.CallToolResult) {
	a, err := c.s.do(ctx, c.who, ac)
	if err != nil {
		return apiAnswer{}, errorResult(err.Error(), nil)
	}
	if !a.ok() {
		return a, apiError(a)
	}
	return a, nil
}

// simple sends one request and returns the unwrapped answer.
func (c *call) simple(ctx context.Context, ac apiCall) *sdk.CallToolResult {
	a, fail := c.api(ctx, ac)
	if fail != nil {
		return fail
	}
	return result(unwrap(a))
}

// progress tells the client (when it asked, with a progress token) how a
// waiting tool's job is going.
func (c *call) progress(ctx context.Context, done, total float64, msg string) {
	if c.req == nil || c.req.Session == nil || c.req.Params == nil {
		return
	}
	token := c.req.Params.GetProgressToken()
	if token == nil {
		return
	}
	_ = c.req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: done, Total: total, Message: msg})
}

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

func annotations(title string, readOnly bool, destructive, openWorld *bool) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{Title: title, ReadOnlyHint: readOnly, DestructiveHint: destructive, OpenWorldHint: openWorld}
}

// tools lists the server's tools.
func (s *Server) tools() []tool {
	return []tool{
		{&sdk.Tool{Name: "firecrawl_scrape", InputSchema: scrapeSchema(),
			Annotations: annotations("Scrape a page", false, no(), yes()),
			Description: "Read one web page and return its content: markdown by default, or html, rawHtml, links, a screenshot, a summary, " +
				"JSON matching a schema (formats [\"json\"] with jsonOptions), branding or change tracking. The answer's metadata has the page's " +
				"status code and a scrapeId for firecrawl_interact and firecrawl_feedback. With alexandria instead of url it calls tools of the server's catalog."},
			s.scrape},
		{&sdk.Tool{Name: "firecrawl_map", InputSchema: mapSchema(),
			Annotations: annotations("Map a site", true, no(), yes()),
			Description: "List the URLs of a website (from its sitemaps and links) without reading the pages; search orders them by relevance. " +
				"Use it to find the page to scrape, or to choose what to crawl."},
			s.post("/v2/map")},
		{&sdk.Tool{Name: "firecrawl_search", InputSchema: searchSchema(),
			Annotations: annotations("Search the web", true, no(), yes()),
			Description: "Search the web (and news or images with sources) and return titles, URLs and descriptions; with scrapeOptions each " +
				"result's page is scraped too. Teams with catalog access also get the catalog's tools that match the query, in tools."},
			s.search},
		{&sdk.Tool{Name: "firecrawl_find_tools", InputSchema: findToolsSchema(),
			Annotations: annotations("Find catalog tools", true, no(), no()),
			Description: "Browse the server's tool catalog (teams with catalog access): categories, providers and tools; query matches names, " +
				"descriptions and categories, urls matches the tools of those sites' domains. Run a tool with firecrawl_scrape and alexandria."},
			s.findTools},
		{&sdk.Tool{Name: "firecrawl_crawl", InputSchema: crawlSchema(),
			Annotations: annotations("Crawl a site", false, no(), yes()),
			Description: "Crawl a website from a URL and scrape its pages (bounded by limit, paths and depth). Waits a while for the crawl: a finished " +
				"crawl answers its pages; a longer one answers its id and progress, to read later with firecrawl_check_crawl_status."},
			s.startJob("/v2/crawl", "/v2/crawl/")},
		{&sdk.Tool{Name: "firecrawl_check_crawl_status", InputSchema: idSchema("The crawl's id."),
			Annotations: annotations("Crawl status", true, no(), no()),
			Description: "Read a crawl's status, progress and the pages scraped so far."},
			s.getByID("/v2/crawl/")},
		{&sdk.Tool{Name: "firecrawl_batch_scrape", InputSchema: batchSchema(),
			Annotations: annotations("Scrape many pages", false, no(), yes()),
			Description: "Scrape a list of URLs with the same options. Waits a while for the batch: a finished one answers its pages; a longer one " +
				"answers its id and progress, to read later with firecrawl_check_batch_status."},
			s.batch},
		{&sdk.Tool{Name: "firecrawl_check_batch_status", InputSchema: idSchema("The batch's id."),
			Annotations: annotations("Batch status", true, no(), no()),
			Description: "Read a batch scrape's status, progress and the pages scraped so far."},
			s.getByID("/v2/batch/scrape/")},
		{&sdk.Tool{Name: "firecrawl_extract", InputSchema: extractSchema(),
			Annotations: annotations("Extract structured data", true, no(), yes()),
			Description: "Extract structured data from pages with the server's language model: a prompt and/or a JSON Schema, and the URLs. Waits a " +
				"while for the answer; a longer extraction answers its id, to read later with firecrawl_check_extract_status."},
			s.startJob("/v2/extract", "/v2/extract/")},
		{&sdk.Tool{Name: "firecrawl_check_extract_status", InputSchema: idSchema("The extraction's id."),
			Annotations: annotations("Extract status", true, no(), no()),
			Description: "Read an extraction's status and, once completed, its data."},
			s.getByID("/v2/extract/")},
		{&sdk.Tool{Name: "firecrawl_agent", InputSchema: agentSchema(),
			Annotations: annotations("Research agent", false, no(), yes()),
			Description: "Start a research agent that searches, reads pages and answers the prompt (as JSON when a schema is given), with the server's " +
				"language model. Answers the run's id at once: read the result with firecrawl_agent_status until it is completed or failed."},
			s.post("/v2/agent")},
		{&sdk.Tool{Name: "firecrawl_agent_status", InputSchema: idSchema("The agent run's id."),
			Annotations: annotations("Agent status", true, no(), no()),
			Description: "Read an agent run's status and, once completed, its answer."},
			s.getByID("/v2/agent/")},
		{&sdk.Tool{Name: "firecrawl_interact", InputSchema: interactSchema(),
			Annotations: annotations("Interact with a page", false, no(), yes()),
			Description: "Act on a scraped page in a live browser: click, type, navigate, in words (prompt) or as code. Give the scrapeId of an earlier " +
				"scrape, or a url to scrape first. The session stays open for further calls until firecrawl_interact_stop or its time runs out."},
			s.interact},
		{&sdk.Tool{Name: "firecrawl_interact_stop", InputSchema: strict(schema{"scrapeId": str()}, "scrapeId"),
			Annotations: annotations("Stop an interact session", false, yes(), no()),
			Description: "End the live browser session of a scrape."},
			s.interactStop},
		{&sdk.Tool{Name: "firecrawl_monitor_create", InputSchema: monitorCreateSchema(),
			Annotations: annotations("Create a monitor", false, no(), yes()),
			Description: "Create a monitor that checks pages (page, pages) or searches (queries) on a schedule and reports what changed, judged " +
				"against goal; or give a full monitor body."},
			s.monitorCreate},
		{&sdk.Tool{Name: "firecrawl_monitor_list", InputSchema: pageSchema(schema{}),
			Annotations: annotations("List monitors", true, no(), no()),
			Description: "List the team's monitors."},
			s.monitorList},
		{&sdk.Tool{Name: "firecrawl_monitor_get", InputSchema: idSchema("The monitor's id."),
			Annotations: annotations("Get a monitor", true, no(), no()),
			Description: "Read one monitor: its settings, schedule and last check."},
			s.monitorRoute(http.MethodGet, "")},
		{&sdk.Tool{Name: "firecrawl_monitor_update", InputSchema: strict(schema{"id": str(), "body": anyObject()}, "id", "body"),
			Annotations: annotations("Update a monitor", false, yes(), yes()),
			Description: "Change a monitor: body holds the members to change (name, status, schedule, targets, goal, webhook, ...)."},
			s.monitorUpdate},
		{&sdk.Tool{Name: "firecrawl_monitor_delete", InputSchema: idSchema("The monitor's id."),
			Annotations: annotations("Delete a monitor", false, yes(), yes()),
			Description: "Delete a monitor and its schedule."},
			s.monitorRoute(http.MethodDelete, "")},
		{&sdk.Tool{Name: "firecrawl_monitor_run", InputSchema: idSchema("The monitor's id."),
			Annotations: annotations("Run a monitor now", false, no(), yes()),
			Description: "Start a check of a monitor now, outside its schedule."},
			s.monitorRoute(http.MethodPost, "/run")},
		{&sdk.Tool{Name: "firecrawl_monitor_checks",
			InputSchema: pageSchema(schema{"id": str(), "status": enum("queued", "running", "completed", "failed", "partial", "skipped_overlap")}, "id"),
			Annotations: annotations("List a monitor's checks", true, no(), no()),
			Description: "List a monitor's checks, newest first."},
			s.monitorRoute(http.MethodGet, "/checks", "limit", "offset", "status")},
		{&sdk.Tool{Name: "firecrawl_monitor_check",
			InputSchema: strict(schema{"id": str(), "checkId": str(), "limit": schema{"type": "integer", "exclusiveMinimum": 0},
				"skip": integer(0, 0), "pageStatus": enum("same", "new", "changed", "removed", "error")}, "id", "checkId"),
			Annotations: annotations("Get a monitor check", true, no(), no()),
			Description: "Read one check of a monitor with its pages and what changed on them."},
			s.monitorCheck},
		{&sdk.Tool{Name: "firecrawl_credit_usage", InputSchema: creditUsageSchema(),
			Annotations: annotations("Credit usage", true, no(), no()),
			Description: "The team's credits: what is left now (view current, the default), or what was used per period (view historical; byApiKey splits it per key)."},
			s.creditUsage},
		{&sdk.Tool{Name: "firecrawl_feedback", InputSchema: feedbackSchema(),
			Annotations: annotations("Give feedback", false, no(), no()),
			Description: "Rate the result of an earlier scrape, search, map or job of your team (good, partial or bad) with a note; the operator reads it."},
			s.post("/v2/feedback")},
		{&sdk.Tool{Name: "firecrawl_search_feedback", InputSchema: searchFeedbackSchema(),
			Annotations: annotations("Give search feedback", false, no(), no()),
			Description: "Rate the results of an earlier firecrawl_search by its id: good, partial or bad, with the useful sources and what was missing."},
			s.searchFeedback},
	}
}

// wrap adapts a tool to the SDK: it decodes the arguments (an object),
// runs the tool, and logs the call.
func (s *Server) wrap(t tool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (res *sdk.CallToolResult, err error) {
		start := time.Now()
		c := &call{s: s, who: callerFrom(ctx, req), req: req, name: t.tool.Name}
		defer func() {
			if v := recover(); v != nil {
				s.log.ErrorContext(ctx, "mcp tool panicked", "tool", t.tool.Name, "panic", fmt.Sprint(v))
				res, err = errorResult("internal error", nil), nil
			}
			s.log.InfoContext(ctx, "mcp tool call", "tool", t.tool.Name, "error", res != nil && res.IsError,
				"duration_ms", float64(time.Since(start).Microseconds())/1000)
		}()
		args := map[string]any{}
		if req.Params != nil && len(req.Params.Arguments) > 0 && string(req.Params.Arguments) != "null" {
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil || args == nil {
				return errorResult("the arguments must be a JSON object", nil), nil
			}
		}
		return t.run(ctx, c, args), nil
	}
}

// post sends the arguments as the body of path (with origin) and returns
// the unwrapped answer.
func (s *Server) post(path string) func(context.Context, *call, map[string]any) *sdk.CallToolResult {
	return func(ctx context.Context, c *call, args map[string]any) *sdk.CallToolResult {
		body := cleaned(args)
		body["origin"] = origin
		return c.simple(ctx, apiCall{method: http.MethodPost, path: path, body: body})
	}
}

// idArg is the string argument name of args, or a tool error.
func idArg(args map[string]any, name string) (string, *sdk.CallToolResult) {
	id, ok := args[name].(string)
	if !ok || strings.TrimSpace(id) == "" {
		return "", errorResult(name+": required, a string", nil)
	}
	return id, nil
}

// getByID reads prefix+id.
func (s *Server) getByID(prefix string) func(context.Context, *call, map[string]any) *sdk.CallToolResult {
	return func(ctx context.Context, c *call, args map[string]any) *sdk.CallToolResult {
		id, fail := idArg(args, "id")
		if fail != nil {
			return fail
		}
		return c.simple(ctx, apiCall{method: http.MethodGet, path: prefix + url.PathEscape(id)})
	}
}

// scrape is firecrawl_scrape: a URL scrape, or catalog calls with
// alexandria.
func (s *Server) scrape(ctx context.Context, c *call, args map[string]any) *sdk.CallToolResult {
	if _, ok := args["alexandria"]; ok {
		return s.catalog(ctx, c, args)
	}
	body, fail := scrapeBody(args)
	if fail != nil {
		return fail
	}
	body["origin"] = origin
	return c.simple(ctx, apiCall{method: http.MethodPost, path: "/v2/scrape", body: body})
}

// catalog runs alexandria calls: the body holds them (and timeout); the
// requestId is their idempotency key (made when not given).
func (s *Server) catalog(ctx context.Context, c *call, args map[string]any) *sdk.CallToolResult {
	body := cleaned(args)
	requestID, _ := body["requestId"].(string)
	if requestID == "" {
		requestID = uuid.NewString()
	}
	for _, k := range []string{"requestId", "toolDetail", "domainTools"} {
		delete(body, k) // URL-mode members firecrawl-mcp ignores here
	}
	body["origin"] = origin
	a, fail := c.api(ctx, apiCall{method: http.MethodPost, path: "/v2/scrape", body: body,
		header: map[string]string{"X-Request-Id": requestID}})
	if fail != nil {
		return fail
	}
	out := unwrap(a)
	out["requestId"] = requestID
	return result(out)
}

// search is firecrawl_search: by default web results plus the catalog's
// matching tools, as firecrawl-mcp asks.
func (s *Server) search(ctx context.Context, c *call, args map[string]any) *sdk.CallToolResult {
	body := cleaned(args)
	if _, ok := body["sources"]; !ok {
		body["sources"] = []any{"web", "alexandria"}
	}
	if src, ok := body["sources"].([]any); ok {
		for i, v := range src {
			switch t := v.(type) {
			case string:
				if t == "exchange" {
					src[i] = "alexandria"
				}
			case map[string]any:
				if t["type"] == "exchange" {
					t["type"] = "alexandria"
				}
			}
		}
		if _, ok := body["domainTools"]; !ok && hasCatalogAndWeb(src) {
			body["domainTools"] = true
		}
	}
	if _, ok := body["toolDetail"]; !ok {
		body["toolDetail"] = "compact"
	}
	if so, ok := body["scrapeOptions"].(map[string]any); ok {
		t, fail := scrapeOptions(so, "scrapeOptions.")
		if fail != nil {
			return fail
		}
		body["scrapeOptions"] = t
	}
	body["origin"] = origin
	return c.simple(ctx, apiCall{method: http.MethodPost, path: "/v2/search", body: body})
}

// hasCatalogAndWeb reports sources holding alexandria and a web, news or
// images source: firecrawl-mcp's case for domainTools by default.
func hasCatalogAndWeb(src []any) bool {
	var catalog, other bool
	for _, v := range src {
		t, _ := v.(string)
		if m, ok := v.(map[string]any); ok {
			t, _ = m["type"].(string)
		}
		switch t {
		case "alexandria":
			catalog = true
		case "web", "news", "images":
			other = true
		}
	}
	return catalog && other
}

// findTools is firecrawl_find_tools: the catalog's find-tools capability.
func (s *Server) findTools(ctx context.Context, c *call, args map[string]any) *sdk.CallToolResult {
	opts := cleaned(args)
	if _, ok := opts["limit"]; !ok {
		opts["limit"] = 20
	}
	return s.catalog(ctx, c, map[string]any{"alexandria": map[string]any{"provider": "firecrawl", "capability": "find-tools", "options": opts}})
}

// batch is firecrawl_batch_scrape: urls and the options of every page.
func (s *Server) batch(ctx context.Context, c *call, args map[string]any) *sdk.CallToolResult {
	body := map[string]any{}
	if o, ok := args["options"]; ok {
		m, isObj := o.(map[string]any)
		if !isObj {
			return errorResult("options: expected an object", nil)
		}
		t, fail := scrapeOptions(m, "options.")
		if fail != nil {
			return fail
		}
		body = t
	}
	for k, v := range args {
		if k != "options" {
			body[k] = v
		}
	}
	return s.startJob("/v2/batch/scrape", "/v2/batch/scrape/")(ctx, c, body)
}

// terminal reports a job status that no longer changes.
func terminal(status string) bool {
	switch status {
	case "completed", "failed", "cancelled":
		return true
	}
	return false
}

// startJob starts a job at path and waits for it (at most MaxWait): the
// job's final status, or its id and status so far with a note on how to
// read it later.
func (s *Server) startJob(path, statusPrefix string) func(context.Context, *call, map[string]any) *sdk.CallToolResult {
	return func(ctx context.Context, c *call, args map[string]any) *sdk.CallToolResult {
		body := cleaned(args)
		if so, ok := body["scrapeOptions"].(map[string]any); ok {
			t, fail := scrapeOptions(so, "scrapeOptions.")
			if fail != nil {
				return fail
			}
			body["scrapeOptions"] = t
		}
		if h, ok := body["webhookHeaders"].(map[string]any); ok {
			if w, isStr := body["webhook"].(string); isStr {
				body["webhook"] = map[string]any{"url": w, "headers": h}
			}
		}
		delete(body, "webhookHeaders")
		body["origin"] = origin
		a, fail := c.api(ctx, apiCall{method: http.MethodPost, path: path, body: body})
		if fail != nil {
			return fail
		}
		started := unwrap(a)
		id, _ := started["id"].(string)
		if id == "" {
			return result(started)
		}
		wctx, cancel := context.WithTimeout(ctx, s.maxWait)
		defer cancel()
		tick := time.NewTicker(s.poll)
		defer tick.Stop()
		last := started
		for {
			select {
			case <-wctx.Done():
				if ctx.Err() != nil {
					return errorResult("cancelled", nil)
				}
				last["id"] = id
				last["note"] = fmt.Sprintf("Still running after %s: read it later with %s and id %q.", s.maxWait, statusTool(statusPrefix), id)
				return result(last)
			case <-tick.C:
			}
			a, fail := c.api(wctx, apiCall{method: http.MethodGet, path: statusPrefix + url.PathEscape(id)})
			if fail != nil {
				if wctx.Err() != nil && ctx.Err() == nil {
					continue // the wait ran out during the read: answer the last status
				}
				return fail
			}
			last = unwrap(a)
			status, _ := last["status"].(string)
			done, _ := last["completed"].(float64)
			total, _ := last["total"].(float64)
			c.progress(ctx, done, total, status)
			if terminal(status) {
				last["id"] = id
				return result(last)
			}
		}
	}
}

// statusTool names the tool that reads a job of statusPrefix.
func statusTool(statusPrefix string) string {
	switch statusPrefix {
	case "/v2/crawl/":
		return "firecrawl_check_crawl_status"
	case "/v2/batch/scrape/":
		return "firecrawl_check_batch_status"
	}
	return "firecrawl_check_extract_status"
}

// interact is firecrawl_interact: on a scrape given by scrapeId, or on a
// url scraped first (with scrapeOptions).
func (s *Server) interact(ctx context.Context, c *call, args map[string]any) *sdk.CallToolResult {
	scrapeID, _ := args["scrapeId"].(string)
	pageURL, _ := args["url"].(string)
	if (scrapeID == "") == (pageURL == "") {
		return errorResult("give either url (to scrape the page first) or scrapeId (of an earlier scrape), not both", nil)
	}
	if args["prompt"] == nil && args["code"] == nil {
		return errorResult("give prompt or code", nil)
	}
	opened := scrapeID == ""
	if opened {
		body := map[string]any{}
		if so, ok := args["scrapeOptions"].(map[string]any); ok {
			t, fail := scrapeOptions(so, "scrapeOptions.")
			if fail != nil {
				return fail
			}
			body = t
		}
		body["url"] = pageURL
		body["origin"] = origin
		a, fail := c.api(ctx, apiCall{method: http.MethodPost, path: "/v2/scrape", body: body})
		if fail != nil {
			return fail
		}
		doc := unwrap(a)
		meta, _ := doc["metadata"].(map[string]any)
		scrapeID, _ = meta["scrapeId"].(string)
		if scrapeID == "" {
			return errorResult("the scrape answered no scrapeId to interact with (zero data retention keeps none)", nil)
		}
	} else if args["scrapeOptions"] != nil {
		return errorResult("scrapeOptions go with url only", nil)
	}
	body := map[string]any{}
	for _, k := range []string{"prompt", "code", "language", "timeout"} {
		if v, ok := args[k]; ok && v != nil {
			body[k] = v
		}
	}
	a, fail := c.api(ctx, apiCall{method: http.MethodPost, path: "/v2/scrape/" + url.PathEscape(scrapeID) + "/interact", body: body})
	if fail != nil {
		return fail
	}
	out := unwrap(a)
	if opened {
		out["scrapeId"] = scrapeID
	}
	return result(out)
}

func (s *Server) interactStop(ctx context.Context, c *call, args map[string]any) *sdk.CallToolResult {
	id, fail := idArg(args, "scrapeId")
	if fail != nil {
		return fail
	}
	return c.simple(ctx, apiCall{method: http.MethodDelete, path: "/v2/scrape/" + url.PathEscape(id) + "/interact"})
}

// monitorCreate is firecrawl_monitor_create: a full body, or the simple
// form made into one (pages or queries, a goal, a schedule).
func (s *Server) monitorCreate(ctx context.Context, c *call, args map[string]any) *sdk.CallToolResult {
	if b, ok := args["body"]; ok {
		m, isObj := b.(map[string]any)
		if !isObj {
			return errorResult("body: expected an object", nil)
		}
		return c.simple(ctx, apiCall{method: http.MethodPost, path: "/v2/monitor", body: m})
	}
	body, fail := monitorBody(args)
	if fail != nil {
		return fail
	}
	return c.simple(ctx, apiCall{method: http.MethodPost, path: "/v2/monitor", body: body})
}

// monitorBody makes the simple form of monitor_create a monitor body.
func monitorBody(args map[string]any) (map[string]any, *sdk.CallToolResult) {
	strs := func(k string) []string {
		var out []string
		switch v := args[k].(type) {
		case string:
			if strings.TrimSpace(v) != "" {
				out = append(out, strings.TrimSpace(v))
			}
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok && strings.TrimSpace(s) != "" {
					out = append(out, strings.TrimSpace(s))
				}
			}
		}
		return out
	}
	text := func(k, def string) string {
		if v, ok := args[k].(string); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
		return def
	}
	queries := strs("queries")
	pages := append(strs("page"), strs("pages")...)
	goal := text("goal", "")
	if goal == "" {
		return nil, errorResult("goal: required with page, pages or queries (or give a full body)", nil)
	}
	var target map[string]any
	var first string
	switch {
	case len(queries) > 0:
		target = map[string]any{"type": "search", "queries": queries}
		for _, k := range []string{"searchWindow", "maxResults"} {
			if v, ok := args[k]; ok {
				target[k] = v
			}
		}
		for _, k := range []string{"includeDomains", "excludeDomains"} {
			if v := strs(k); len(v) > 0 {
				target[k] = v
			}
		}
		first = queries[0]
	case len(pages) > 0:
		target = map[string]any{"type": "scrape", "urls": pages}
		first = pages[0]
	default:
		return nil, errorResult("give page, pages or queries (or a full body)", nil)
	}
	body := map[string]any{
		"name":     text("name", "Monitor "+first),
		"schedule": map[string]any{"text": text("scheduleText", "every 30 minutes"), "timezone": text("timezone", "UTC")},
		"goal":     goal,
		"targets":  []any{target},
	}
	if e := text("email", ""); e != "" {
		diffs, _ := args["includeDiffs"].(bool)
		body["notification"] = map[string]any{"email": map[string]any{"enabled": true, "recipients": []string{e}, "includeDiffs": diffs}}
	}
	if w := text("webhookUrl", ""); w != "" {
		body["webhook"] = map[string]any{"url": w, "events": []string{"monitor.page", "monitor.check.completed"}}
	}
	return body, nil
}

// monitorList is firecrawl_monitor_list.
func (s *Server) monitorList(ctx context.Context, c *call, args map[string]any) *sdk.CallToolResult {
	return c.simple(ctx, apiCall{method: http.MethodGet, path: "/v2/monitor" + queryOf(args, "limit", "offset")})
}

// monitorRoute calls /v2/monitor/{id}+suffix with the named arguments as
// the query.
func (s *Server) monitorRoute(method, suffix string, query ...string) func(context.Context, *call, map[string]any) *sdk.CallToolResult {
	return func(ctx context.Context, c *call, args map[string]any) *sdk.CallToolResult {
		id, fail := idArg(args, "id")
		if fail != nil {
			return fail
		}
		path := "/v2/monitor/" + url.PathEscape(id) + suffix
		return c.simple(ctx, apiCall{method: method, path: path + queryOf(args, query...)})
	}
}

func (s *Server) monitorUpdate(ctx context.Context, c *call, args map[string]any) *sdk.CallToolResult {
	id, fail := idArg(args, "id")
	if fail != nil {
		return fail
	}
	body, ok := args["body"].(map[string]any)
	if !ok {
		return errorResult("body: required, an object", nil)
	}
	return c.simple(ctx, apiCall{method: http.MethodPatch, path: "/v2/monitor/" + url.PathEscape(id), body: body})
}

func (s *Server) monitorCheck(ctx context.Context, c *call, args map[string]any) *sdk.CallToolResult {
	id, fail := idArg(args, "id")
	if fail != nil {
		return fail
	}
	check, fail := idArg(args, "checkId")
	if fail != nil {
		return fail
	}
	return c.simple(ctx, apiCall{method: http.MethodGet,
		path: "/v2/monitor/" + url.PathEscape(id) + "/checks/" + url.PathEscape(check) + queryOf(args, "limit", "skip", "pageStatus")})
}

// queryOf is the query string of the named arguments present in args.
func queryOf(args map[string]any, names ...string) string {
	q := url.Values{}
	for _, n := range names {
		switch v := args[n].(type) {
		case string:
			q.Set(n, v)
		case float64:
			q.Set(n, strconv.FormatFloat(v, 'f', -1, 64))
		case bool:
			q.Set(n, strconv.FormatBool(v))
		}
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// creditUsage is firecrawl_credit_usage.
func (s *Server) creditUsage(ctx context.Context, c *call, args map[string]any) *sdk.CallToolResult {
	view, _ := args["view"].(string)
	byKey, _ := args["byApiKey"].(bool)
	if view == "current" && byKey {
		return errorResult(`byApiKey goes with view "historical" (or no view)`, nil)
	}
	if view == "historical" || byKey {
		path := "/v2/team/credit-usage/historical"
		if byKey {
			path += "?byApiKey=true"
		}
		return c.simple(ctx, apiCall{method: http.MethodGet, path: path})
	}
	return c.simple(ctx, apiCall{method: http.MethodGet, path: "/v2/team/credit-usage"})
}

// searchFeedback is firecrawl_search_feedback: feedback on a search.
func (s *Server) searchFeedback(ctx context.Context, c *call, args map[string]any) *sdk.CallToolResult {
	id, fail := idArg(args, "searchId")
	if fail != nil {
		return fail
	}
	body := cleaned(args)
	delete(body, "searchId")
	body["origin"] = origin
	return c.simple(ctx, apiCall{method: http.MethodPost, path: "/v2/search/" + url.PathEscape(id) + "/feedback", body: body})
}
