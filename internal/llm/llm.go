// Package llm is the one client of an OpenAI-compatible chat completions
// endpoint (OpenAI, vLLM, Ollama's /v1, llama.cpp server, LM Studio,
// LiteLLM, OpenRouter): structured JSON answers validated against a JSON
// schema, plain text answers, retries, a per-process concurrency limit and
// token accounting. It knows nothing of scraping or HTTP handlers.
package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Structured output modes (Options.StructuredOutput).
const (
	// ModeJSONSchema sends response_format {type:"json_schema"} with the
	// caller's schema (the default).
	ModeJSONSchema = "json_schema"
	// ModeJSONObject sends response_format {type:"json_object"} and puts the
	// schema in the instructions.
	ModeJSONObject = "json_object"
	// ModePrompt sends no response_format: the schema is in the
	// instructions, for endpoints without structured output.
	ModePrompt = "prompt"
)

// Errors returned by the client; callers test them with errors.Is.
var (
	// ErrUnavailable: the endpoint could not be reached or kept failing
	// (connection errors, 429, 5xx) after the retries.
	ErrUnavailable = errors.New("llm: endpoint unavailable")
	// ErrRejected: the endpoint refused the request (a 4xx other than 429),
	// for example an unknown model or a context overflow.
	ErrRejected = errors.New("llm: request rejected")
	// ErrTimeout: the caller's deadline passed before an answer came.
	ErrTimeout = errors.New("llm: timed out")
	// ErrInvalidOutput: the answer was not JSON matching the schema, even
	// after one retry that told the model what was wrong.
	ErrInvalidOutput = errors.New("llm: answer does not match the schema")
	// ErrBadSchema: the caller's schema does not compile.
	ErrBadSchema = errors.New("llm: invalid JSON schema")
)

// Options configure a Client.
type Options struct {
	// BaseURL is the endpoint's base, up to and including /v1
	// (http://localhost:11434/v1); /chat/completions is appended.
	BaseURL string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// Model is sent as the model of every request.
	Model string
	// StructuredOutput is ModeJSONSchema (default), ModeJSONObject or
	// ModePrompt.
	StructuredOutput string
	// MaxConcurrency bounds the calls in flight in this process; default 4.
	MaxConcurrency int
	// MaxRetries is how many times a call failing with 429, 5xx or a
	// connection error is retried; default 2, negative = none.
	MaxRetries int
	// RetryBase is the first backoff delay, doubled per retry with jitter;
	// default 500ms.
	RetryBase time.Duration
	// CallTimeout caps one HTTP call when the caller's deadline is further
	// away (or absent); default 120s.
	CallTimeout time.Duration
	// HTTPClient sends the requests; default a client with dial and
	// response-header timeouts. The endpoint is chosen by the operator, so
	// no target policy applies.
	HTTPClient *http.Client
	Log        *slog.Logger
	// Observer, optional, is told of every call and invalid answer (the
	// metrics).
	Observer Observer
}

// Observer receives what the client measures; *metrics.Metrics implements
// it. Its methods must be safe for concurrent use.
type Observer interface {
	// ObserveLLMCall reports one completion (retries included): its
	// purpose, its outcome (OutcomeOf), how long it took and its tokens.
	ObserveLLMCall(purpose, outcome string, d time.Duration, promptTokens, completionTokens int64)
	// ObserveLLMInvalidAnswer reports an answer that was not JSON valid
	// against the schema (each one, the retried one included).
	ObserveLLMInvalidAnswer(purpose string)
}

// observe reports a finished call to the Observer, if any.
func (c *Client) observe(purpose string, err error, took time.Duration, u Usage) {
	if c.obs != nil {
		c.obs.ObserveLLMCall(purpose, OutcomeOf(err), took, u.PromptTokens, u.CompletionTokens)
	}
}

// OutcomeOf names a call's result for metrics: success, timeout,
// unavailable, rejected, refused (a tool turn the model refused), canceled
// or error.
func OutcomeOf(err error) string {
	switch {
	case err == nil:
		return "success"
	case errors.Is(err, ErrTimeout):
		return "timeout"
	case errors.Is(err, ErrUnavailable):
		return "unavailable"
	case errors.Is(err, ErrRefused): // before ErrRejected, which it wraps
		return "refused"
	case errors.Is(err, ErrRejected):
		return "rejected"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "error"
}

// Client calls one endpoint. It is safe for concurrent use.
type Client struct {
	url, key, model, mode string
	retries               int
	retryBase, callMax    time.Duration
	sem                   chan struct{}
	hc                    *http.Client
	log                   *slog.Logger
	obs                   Observer
}

// New returns a client, or an error naming a bad option.
func New(o Options) (*Client, error) {
	if o.BaseURL == "" {
		return nil, errors.New("llm: base URL is required")
	}
	if o.Model == "" {
		return nil, errors.New("llm: model is required")
	}
	switch o.StructuredOutput {
	case "":
		o.StructuredOutput = ModeJSONSchema
	case ModeJSONSchema, ModeJSONObject, ModePrompt:
	default:
		return nil, fmt.Errorf("llm: structured output %q is not json_schema, json_object or prompt", o.StructuredOutput)
	}
	if o.MaxConcurrency <= 0 {
		o.MaxConcurrency = 4
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = 2
	}
	if o.RetryBase <= 0 {
		o.RetryBase = 500 * time.Millisecond
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 120 * time.Second
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			MaxIdleConnsPerHost:   o.MaxConcurrency,
			IdleConnTimeout:       90 * time.Second,
			ResponseHeaderTimeout: o.CallTimeout,
		}}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Client{
		url: strings.TrimRight(o.BaseURL, "/") + "/chat/completions", key: o.APIKey, model: o.Model,
		mode: o.StructuredOutput, retries: max(o.MaxRetries, 0), retryBase: o.RetryBase, callMax: o.CallTimeout,
		sem: make(chan struct{}, o.MaxConcurrency), hc: o.HTTPClient, log: o.Log, obs: o.Observer,
	}, nil
}

// Model is the configured model name.
func (c *Client) Model() string { return c.model }

// Message is one chat message.
type Message struct {
	Role    string `json:"role"` // system, user, assistant
	Content string `json:"content"`
}

// Usage counts the tokens of a call (summed over retries).
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
	// Estimated is set when the endpoint reported no usage and the counts
	// were estimated from the text (4 characters a token).
	Estimated bool `json:"-"`
}

func (u *Usage) add(v Usage) {
	u.PromptTokens += v.PromptTokens
	u.CompletionTokens += v.CompletionTokens
	u.TotalTokens += v.TotalTokens
	u.Estimated = u.Estimated || v.Estimated
}

// Request is one completion.
type Request struct {
	Messages []Message
	// MaxTokens caps the answer; 0 leaves it to the endpoint.
	MaxTokens int
	// Purpose labels the call in the log (json, summary, ...).
	Purpose string
}

// Response is the model's answer.
type Response struct {
	Content string
	Usage   Usage
}

// EstimateTokens is a rough token count of s (4 bytes a token), used when
// an endpoint reports no usage and to size page chunks.
func EstimateTokens(s string) int64 {
	return int64(len(s)+3) / 4
}

// Complete asks for a text answer.
func (c *Client) Complete(ctx context.Context, req Request) (*Response, error) {
	return c.call(ctx, req, nil)
}

// JSONRequest is a completion whose answer must be JSON, matching Schema
// when it is set.
type JSONRequest struct {
	Request
	// Schema is the JSON schema of the answer; nil asks for any JSON object.
	Schema *Schema
	// SchemaName names it in response_format (letters, digits, _ and -);
	// default "extraction".
	SchemaName string
}

// JSONResponse is a validated JSON answer.
type JSONResponse struct {
	JSON  json.RawMessage
	Usage Usage
	// Retried is set when the first answer was invalid.
	Retried bool
}

// CompleteJSON asks for a JSON answer and validates it against the schema.
// An invalid first answer is retried once with the validation errors
// appended to the conversation; a second invalid answer returns an error
// wrapping ErrInvalidOutput (with the usage spent so far in the response).
func (c *Client) CompleteJSON(ctx context.Context, req JSONRequest) (*JSONResponse, error) {
	msgs := append([]Message(nil), req.Messages...)
	if c.mode != ModeJSONSchema || req.Schema == nil {
		msgs = withJSONInstructions(msgs, req.Schema)
	}
	out := &JSONResponse{}
	for attempt := 0; attempt < 2; attempt++ {
		r := req.Request
		r.Messages = msgs
		resp, err := c.call(ctx, r, &req)
		if resp != nil {
			out.Usage.add(resp.Usage)
		}
		if err != nil {
			return out, err
		}
		raw, verr := parseJSONAnswer(resp.Content, req.Schema)
		if verr == nil {
			out.JSON = raw
			return out, nil
		}
		if c.obs != nil {
			c.obs.ObserveLLMInvalidAnswer(req.Purpose)
		}
		if attempt == 1 {
			return out, fmt.Errorf("%w: %v", ErrInvalidOutput, verr)
		}
		out.Retried = true
		c.log.InfoContext(ctx, "llm answer invalid, retrying", "model", c.model, "purpose", req.Purpose, "reason", truncate(verr.Error(), 300))
		msgs = append(msgs, Message{Role: "assistant", Content: resp.Content}, Message{Role: "user", Content: "Your answer was rejected: " +
			verr.Error() + "\nAnswer again with only the corrected JSON value, nothing else."})
	}
	return out, nil
}

// withJSONInstructions adds the schema (or the plain JSON requirement) to
// the system message, for modes where the endpoint does not enforce it.
func withJSONInstructions(msgs []Message, s *Schema) []Message {
	var b strings.Builder
	b.WriteString("Answer with a single JSON value and nothing else: no prose, no code fences.")
	if s != nil {
		b.WriteString(" The value must be valid against this JSON schema:\n")
		b.Write(s.raw)
	} else {
		b.WriteString(" The value must be a JSON object.")
	}
	if len(msgs) > 0 && msgs[0].Role == "system" {
		msgs[0].Content += "\n\n" + b.String()
		return msgs
	}
	return append([]Message{{Role: "system", Content: b.String()}}, msgs...)
}

// parseJSONAnswer reads the model's text as JSON (tolerating a code fence
// around it) and validates it.
func parseJSONAnswer(content string, s *Schema) (json.RawMessage, error) {
	t := strings.TrimSpace(content)
	if strings.HasPrefix(t, "```") {
		t = strings.TrimPrefix(t, "```json")
		t = strings.TrimPrefix(t, "```")
		t = strings.TrimSuffix(strings.TrimSpace(t), "```")
		t = strings.TrimSpace(t)
	}
	if !json.Valid([]byte(t)) {
		return nil, errors.New("the answer is not valid JSON")
	}
	if s == nil {
		if !strings.HasPrefix(t, "{") {
			return nil, errors.New("the answer is not a JSON object")
		}
	} else if err := s.Validate([]byte(t)); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(t)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// wire types of the chat completions API.
type chatRequest struct {
	Model          string          `json:"model"`
	Messages       []Message       `json:"messages"`
	MaxTokens      int             `json:"max_tokens,omitempty"`
	Temperature    float64         `json:"temperature"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
}

type responseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *jsonSchema `json:"json_schema,omitempty"`
}

type jsonSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage `json:"usage"`
}

// call runs one completion with retries, holding a concurrency slot, and
// logs it once.
func (c *Client) call(ctx context.Context, req Request, jr *JSONRequest) (*Response, error) {
	start := time.Now()
	body := chatRequest{Model: c.model, Messages: req.Messages, MaxTokens: req.MaxTokens}
	if jr != nil {
		switch {
		case c.mode == ModeJSONSchema && jr.Schema != nil:
			name := jr.SchemaName
			if name == "" {
				name = "extraction"
			}
			// strict stays false: OpenAI's strict mode demands every property
			// required and additionalProperties false, which callers' schemas
			// rarely are; the answer is validated here instead.
			body.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: &jsonSchema{Name: name, Schema: jr.Schema.raw}}
		case c.mode != ModePrompt:
			body.ResponseFormat = &responseFormat{Type: "json_object"}
		}
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("llm: encode request: %w", err)
	}

	var resp *Response
	attempts, err := c.send(ctx, req.Purpose, start, payload, func(b []byte) error {
		var perr error
		resp, perr = parseChatAnswer(b)
		return perr
	})
	if attempts == 0 {
		return nil, err
	}
	if err != nil {
		resp = nil
	}
	if resp != nil && resp.Usage.TotalTokens == 0 && resp.Usage.PromptTokens == 0 {
		resp.Usage = estimateUsage(req.Messages, resp.Content)
	}
	var (
		used  Usage
		attrs []any
	)
	if resp != nil {
		used = resp.Usage
		attrs = []any{"prompt_tokens", resp.Usage.PromptTokens, "completion_tokens", resp.Usage.CompletionTokens,
			"tokens_estimated", resp.Usage.Estimated}
	}
	if err := c.finish(ctx, req.Purpose, start, attempts, err, used, attrs...); err != nil {
		return nil, err
	}
	return resp, nil
}

// send posts payload to the endpoint holding one of the client's
// concurrency slots, and retries a failure wrapping ErrUnavailable (after
// the backoff, while the context leaves time for it) up to the client's
// retries. read gets the body of each 200 answer; an ErrUnavailable it
// returns is retried like a failed request. attempts is 0 when no slot
// came free before ctx ended: that failure is already observed for the
// metrics and is not to be logged or observed again.
func (c *Client) send(ctx context.Context, purpose string, start time.Time, payload []byte, read func(body []byte) error) (attempts int, err error) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		// No slot came free in time: a call that failed, for the metrics.
		err = c.ctxErr(ctx, nil)
		c.observe(purpose, err, time.Since(start), Usage{})
		return 0, err
	}
	defer func() { <-c.sem }()

	for {
		attempts++
		var (
			wait time.Duration
			body []byte
		)
		body, wait, err = c.post(ctx, payload)
		if err == nil {
			err = read(body)
		}
		if err == nil || !errors.Is(err, ErrUnavailable) || attempts > c.retries {
			return attempts, err
		}
		delay := c.backoff(attempts, wait)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < delay {
			return attempts, err // no time left to wait and try again
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			err = c.ctxErr(ctx, err)
		}
		if ctx.Err() != nil {
			return attempts, err
		}
	}
}

// finish observes a finished call (used: the tokens it counts) for the
// metrics and logs it once, with attrs after the common ones. It returns
// err.
func (c *Client) finish(ctx context.Context, purpose string, start time.Time, attempts int, err error, used Usage, attrs ...any) error {
	took := time.Since(start)
	c.observe(purpose, err, took, used)
	attrs = append([]any{"model", c.model, "purpose", purpose, "attempts", attempts, "ms", took.Milliseconds()}, attrs...)
	if err != nil {
		c.log.WarnContext(ctx, "llm call failed", append(attrs, "err", err)...)
		return err
	}
	c.log.InfoContext(ctx, "llm call", attrs...)
	return nil
}

// post sends one request and returns the body of a 200 answer. A
// retryable failure wraps ErrUnavailable and may carry the server's
// Retry-After.
func (c *Client) post(ctx context.Context, payload []byte) ([]byte, time.Duration, error) {
	cctx, cancel := context.WithTimeout(ctx, c.callMax)
	defer cancel()
	hreq, err := http.NewRequestWithContext(cctx, http.MethodPost, c.url, bytes.NewReader(payload))
	if err != nil {
		return nil, 0, fmt.Errorf("llm: build request: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if c.key != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.key)
	}
	hresp, err := c.hc.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, c.ctxErr(ctx, err)
		}
		return nil, 0, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer hresp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(hresp.Body, 8<<20))
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, c.ctxErr(ctx, err)
		}
		return nil, 0, fmt.Errorf("%w: read answer: %v", ErrUnavailable, err)
	}
	switch {
	case hresp.StatusCode == http.StatusTooManyRequests || hresp.StatusCode >= 500:
		return nil, retryAfter(hresp.Header.Get("Retry-After")), fmt.Errorf("%w: %w", ErrUnavailable, &StatusError{Code: hresp.StatusCode, Body: truncate(string(b), 200)})
	case hresp.StatusCode != http.StatusOK:
		return nil, 0, fmt.Errorf("%w: %w", ErrRejected, &StatusError{Code: hresp.StatusCode, Body: truncate(string(b), 500)})
	}
	return b, 0, nil
}

// StatusError is an endpoint's answer other than 200, wrapped in
// ErrUnavailable (429, 5xx) or ErrRejected (other codes); callers read
// the code with errors.As.
type StatusError struct {
	Code int    // the HTTP status
	Body string // the start of the answer's body
}

func (e *StatusError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Code, e.Body) }

// parseChatAnswer reads a chat completion's text answer.
func parseChatAnswer(b []byte) (*Response, error) {
	var cr chatResponse
	if err := json.Unmarshal(b, &cr); err != nil {
		return nil, fmt.Errorf("%w: answer is not a chat completion: %v", ErrUnavailable, err)
	}
	if len(cr.Choices) == 0 {
		return nil, fmt.Errorf("%w: answer has no choices", ErrUnavailable)
	}
	ch := cr.Choices[0]
	out := &Response{}
	switch {
	case ch.Message.Content != nil:
		out.Content = *ch.Message.Content
	case ch.Message.Refusal != nil:
		return nil, fmt.Errorf("%w: the model refused: %s", ErrRejected, truncate(*ch.Message.Refusal, 300))
	}
	out.Usage = reportedUsage(cr.Usage)
	return out, nil
}

// reportedUsage is the usage the endpoint reported (zero when it sent
// none), with the total filled in when it left it out.
func reportedUsage(u *Usage) Usage {
	if u == nil {
		return Usage{}
	}
	out := *u
	if out.TotalTokens == 0 {
		out.TotalTokens = out.PromptTokens + out.CompletionTokens
	}
	return out
}

// ctxErr turns a finished caller context into ErrTimeout (deadline) or the
// cancellation itself.
func (c *Client) ctxErr(ctx context.Context, cause error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", ErrTimeout, context.DeadlineExceeded)
	}
	if cause != nil {
		return fmt.Errorf("llm: %w (%v)", ctx.Err(), cause)
	}
	return fmt.Errorf("llm: %w", ctx.Err())
}

// backoff is the wait before retry n (1-based): RetryBase * 2^(n-1) with
// +-25% jitter, at least the server's Retry-After, at most 30s.
func (c *Client) backoff(n int, retryAfter time.Duration) time.Duration {
	d := c.retryBase << (n - 1)
	d += time.Duration((rand.Float64() - 0.5) * 0.5 * float64(d))
	d = max(d, retryAfter)
	return min(d, 30*time.Second)
}

// retryAfter parses a Retry-After header in seconds (dates are ignored).
func retryAfter(v string) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0
	}
	return time.Duration(min(n, 30)) * time.Second
}

// estimateUsage counts tokens from the text when the endpoint reported none.
func estimateUsage(msgs []Message, answer string) Usage {
	var p int64
	for _, m := range msgs {
		p += EstimateTokens(m.Content) + 4
	}
	cpl := EstimateTokens(answer)
	return Usage{PromptTokens: p, CompletionTokens: cpl, TotalTokens: p + cpl, Estimated: true}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
