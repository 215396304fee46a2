// Package mcp serves the Model Context Protocol at /mcp: tools named and
// shaped as firecrawl-mcp's, each carried out as a call of the v2 API in
// process under the caller's key (so its team, limits and credits).
//
// The transport is MCP's streamable HTTP in its stateless form: every POST
// is a JSON-RPC message answered on its own (as server-sent events), no
// session is kept between requests, so any replica can serve any request.
// The handler expects its requests authenticated already (httpapi mounts it
// behind the API's key check); the tools send the request's Authorization
// header on to the API, which checks it again like any other request.
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of Options.
const (
	// DefaultMaxWait is how long a tool that starts a job (crawl, batch
	// scrape, extract) waits for it before answering with its status: below
	// the 60 s an MCP client waits for an answer by default.
	DefaultMaxWait = 30 * time.Second
	// DefaultPollInterval is how often a waiting tool reads the job.
	DefaultPollInterval = time.Second
	// maxResponseBytes bounds what one API answer may hold in memory here:
	// above the largest body the API writes (a scrape's rawHtml is capped
	// by FETCH_MAX_BYTES, 10 MB by default, and a batch page by its own).
	maxResponseBytes = 64 << 20
)

// Options configure the server.
type Options struct {
	// API is the v2 API: every tool call is a request to it.
	API http.Handler
	// Version is reported to clients in the initialize answer.
	Version string
	// MaxWait bounds how long a job-starting tool waits for the job;
	// 0 = DefaultMaxWait.
	MaxWait time.Duration
	// PollInterval is how often a waiting tool reads its job; 0 =
	// DefaultPollInterval.
	PollInterval time.Duration
	Log          *slog.Logger
}

// Server is the /mcp handler. Create it with New.
type Server struct {
	api     http.Handler
	maxWait time.Duration
	poll    time.Duration
	log     *slog.Logger
	handler http.Handler
}

// instructions are what the initialize answer tells the model.
const instructions = `Tools of a self-hosted web data server. firecrawl_scrape reads one page (markdown by default; ` +
	`html, links, screenshot, json with a schema, ...). firecrawl_search searches the web, firecrawl_map lists a site's URLs, ` +
	`firecrawl_crawl and firecrawl_batch_scrape collect many pages (their status tools read the job later), ` +
	`firecrawl_extract and firecrawl_agent gather structured data with a language model when the server has one. ` +
	`Every call is made with your API key: it spends your team's credits and counts against its limits.`

// New builds the server.
func New(o Options) *Server {
	s := &Server{api: o.API, maxWait: o.MaxWait, poll: o.PollInterval, log: o.Log}
	if s.maxWait <= 0 {
		s.maxWait = DefaultMaxWait
	}
	if s.poll <= 0 {
		s.poll = DefaultPollInterval
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	version := o.Version
	if version == "" {
		version = "dev"
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "firegate", Title: "firegate", Version: version},
		&sdk.ServerOptions{Instructions: instructions, Logger: s.log})
	for _, t := range s.tools() {
		srv.AddTool(t.tool, s.wrap(t))
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{
		Stateless: true,
		Logger:    s.log,
		// The protection refuses requests reaching a loopback address with
		// another Host, which is every request through a reverse proxy on
		// the same machine. It guards servers that trust whoever can reach
		// them; this one needs an API key on every request, which a page
		// of another site cannot send here (the API sets no CORS headers,
		// so a browser refuses to send the Authorization header).
		DisableLocalhostProtection: true,
	})
	s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, callerOf(r))))
	})
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// caller is what a tool's API requests carry over from the /mcp request:
// the key, and where the client is for the API's per-client bookkeeping.
type caller struct {
	authorization string
	remoteAddr    string
	forwardedFor  string
	userAgent     string
}

type callerKey struct{}

func callerOf(r *http.Request) caller {
	return caller{authorization: r.Header.Get("Authorization"), remoteAddr: r.RemoteAddr,
		forwardedFor: r.Header.Get("X-Forwarded-For"), userAgent: r.Header.Get("User-Agent")}
}

// callerFrom is the caller of a tool call: from the request context, else
// from the headers the SDK passes along (the key only).
func callerFrom(ctx context.Context, req *sdk.CallToolRequest) caller {
	if c, ok := ctx.Value(callerKey{}).(caller); ok {
		return c
	}
	var c caller
	if req != nil && req.Extra != nil && req.Extra.Header != nil {
		c.authorization = req.Extra.Header.Get("Authorization")
	}
	return c
}

// apiCall is one request to the API.
type apiCall struct {
	method, path string
	body         any               // JSON-encoded when not nil
	header       map[string]string // extra request headers
}

// apiAnswer is the API's answer to one call.
type apiAnswer struct {
	status int
	body   []byte
}

// ok reports a 2xx answer.
func (a apiAnswer) ok() bool { return a.status >= 200 && a.status < 300 }

// object decodes the answer's JSON object; nil when it is not one.
func (a apiAnswer) object() map[string]any {
	var m map[string]any
	if err := json.Unmarshal(a.body, &m); err != nil {
		return nil
	}
	return m
}

// do sends c to the API as the caller of ctx and returns its answer.
func (s *Server) do(ctx context.Context, who caller, c apiCall) (apiAnswer, error) {
	var body io.Reader = http.NoBody
	if c.body != nil {
		b, err := json.Marshal(c.body)
		if err != nil {
			return apiAnswer{}, fmt.Errorf("mcp: encode %s %s: %w", c.method, c.path, err)
		}
		body = bytes.NewReader(b)
	}
	r, err := http.NewRequestWithContext(ctx, c.method, c.path, body)
	if err != nil {
		return apiAnswer{}, fmt.Errorf("mcp: request %s %s: %w", c.method, c.path, err)
	}
	r.RemoteAddr = who.remoteAddr
	r.Header.Set("Authorization", who.authorization)
	if who.forwardedFor != "" {
		r.Header.Set("X-Forwarded-For", who.forwardedFor)
	}
	ua := "firegate-mcp"
	if who.userAgent != "" {
		ua = who.userAgent + " " + ua
	}
	r.Header.Set("User-Agent", ua)
	if c.body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.header {
		r.Header.Set(k, v)
	}
	rec := &recorder{header: http.Header{}}
	s.api.ServeHTTP(rec, r)
	if rec.overflow {
		return apiAnswer{}, fmt.Errorf("mcp: %s %s answered more than %d bytes", c.method, c.path, maxResponseBytes)
	}
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return apiAnswer{status: rec.status, body: rec.buf.Bytes()}, nil
}

// recorder is the http.ResponseWriter of an in-process API call.
type recorder struct {
	header   http.Header
	status   int
	buf      bytes.Buffer
	overflow bool
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.buf.Len()+len(b) > maxResponseBytes {
		r.overflow = true
		return 0, fmt.Errorf("mcp: answer over %d bytes", maxResponseBytes)
	}
	return r.buf.Write(b)
}

// result is a tool's answer: v as JSON text and as structured content.
func result(v any) *sdk.CallToolResult {
	b, err := json.Marshal(v)
	if err != nil {
		return errorResult(fmt.Sprintf("the answer could not be encoded: %v", err), nil)
	}
	res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}
	if m, ok := v.(map[string]any); ok {
		res.StructuredContent = m
	}
	return res
}

// errorResult is a failed tool call as the model sees it: the message, and
// the API's error envelope when there is one.
func errorResult(msg string, envelope map[string]any) *sdk.CallToolResult {
	text := msg
	if envelope != nil {
		if b, err := json.Marshal(envelope); err == nil {
			text = string(b)
		}
	}
	res := &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: text}}}
	if envelope != nil {
		res.StructuredContent = envelope
	}
	return res
}

// apiError is the tool result of a non-2xx answer: its envelope (success,
// error, code, details) with the HTTP status added.
func apiError(a apiAnswer) *sdk.CallToolResult {
	env := a.object()
	if env == nil {
		return errorResult(fmt.Sprintf("HTTP %d: %s", a.status, strings.TrimSpace(string(a.body))), nil)
	}
	env["status"] = a.status
	msg, _ := env["error"].(string)
	return errorResult(msg, env)
}

// unwrap is the part of a successful answer a tool returns: without
// success; a data object with the other top-level members (id, warning,
// creditsUsed, ...) added to it; anything else whole.
func unwrap(a apiAnswer) map[string]any {
	m := a.object()
	if m == nil {
		return map[string]any{}
	}
	delete(m, "success")
	data, ok := m["data"].(map[string]any)
	if !ok {
		return m
	}
	for k, v := range m {
		if _, taken := data[k]; !taken && k != "data" {
			data[k] = v
		}
	}
	return data
}
